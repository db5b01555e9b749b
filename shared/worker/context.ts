// The log context of one message's reconcile: every line written while it runs carries the message's
// reason and correlation id (AsyncLocalStorage, so nothing has to hand it down).
import { AsyncLocalStorage } from "node:async_hooks";
import type { ReconcileLogger } from "../reconciler/contract.ts";

/** What every log line written during one message's reconcile carries: why, and which message chain. */
export interface ReconcileContext {
  /** The message's reason: watch, drift, requeue or manual. */
  reason: string;
  /** The message's correlation id (`message.id`), else the queue's id for the message. */
  correlationId: string;
  receiveCount?: number;
}

/** The store itself: the worker core runs a message in it directly (no closure through this file). */
export const reconcileContext = new AsyncLocalStorage<ReconcileContext>();

/** The context of the reconcile running in this async call chain, if any. */
export const currentReconcileContext = (): ReconcileContext | undefined => reconcileContext.getStore();

/**
 * Wraps a logger so each line carries the current reconcile's reason and correlationId: the router's
 * one "reconciled" line per reconcile then has key, reason, outcome, durationMs and correlationId.
 */
export function contextLogger(logger: ReconcileLogger): ReconcileLogger {
  const withCtx = (obj: Record<string, unknown>) => {
    const ctx = reconcileContext.getStore();
    return ctx ? { reason: ctx.reason, correlationId: ctx.correlationId, ...obj } : obj;
  };
  return {
    info: (obj, msg) => logger.info(withCtx(obj), msg),
    warn: (obj, msg) => logger.warn(withCtx(obj), msg),
    error: (obj, msg) => logger.error(withCtx(obj), msg),
    debug: (obj, msg) => logger.debug(withCtx(obj), msg),
  };
}
