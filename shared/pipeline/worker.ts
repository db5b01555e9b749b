import { AsyncLocalStorage } from "node:async_hooks";
import type { ManagedResource } from "../api/managed.ts";
import { apiVersionOf, type ResourceType } from "../api/meta.ts";
import type { ClaimReconciler } from "../claims/reconciler.ts";
import type { Kube } from "../kube/client.ts";
import { ConflictError } from "../kube/client.ts";
import type { HandlerOutcome, MessageHandler, ReceivedMessage, ReconcileMessage } from "../queue/index.ts";
import { outcomeOf } from "../reconciler/batch.ts";
import type { ProviderConfigReconciler } from "../reconciler/provider-config.ts";
import type {
  EventRecorder,
  ReconcileLogger,
  ReconcileMetrics,
  ReconcileResult,
  Reconciler,
  ResourceKey,
} from "../reconciler/reconciler.ts";

export const keyOfMessage = (m: ReconcileMessage): ResourceKey => ({
  apiVersion: m.apiVersion,
  kind: m.kind,
  name: m.name,
  ...(m.namespace ? { namespace: m.namespace } : {}),
});

export interface Workers {
  reconciler: Reconciler;
  providerConfigs?: ProviderConfigReconciler;
  /** Reports ProviderConfig reconciles (the managed reconciler reports its own) and queue age. */
  metrics?: ReconcileMetrics & { queueAge?(ageMs: number): void };
  /** Claims and classes (claims.driftless.dev, classes.driftless.dev); absent: not served. */
  claims?: ClaimReconciler;
  /**
   * For queues whose redrive policy dead-letters a message after `maxReceiveCount` receives (SQS): a
   * failed reconcile on the last receive is noted on the resource. The memory queue reports its dead
   * letters itself (run.ts).
   */
  deadLetter?: { maxReceiveCount: number; note: DeadLetterNote };
}

/** Routes a key to the reconciler for its kind: ProviderConfigs and claims have their own, the rest is managed. */
export async function reconcileKey(w: Workers, key: ResourceKey): Promise<ReconcileResult> {
  if (w.claims?.handles(key.apiVersion, key.kind)) {
    const started = Date.now();
    const result = await w.claims.reconcile(key);
    w.metrics?.reconciled(key.kind, result.outcome, Date.now() - started);
    return result;
  }
  if (w.providerConfigs?.handles(key.apiVersion, key.kind)) {
    const started = Date.now();
    let result: ReconcileResult;
    try {
      const r = await w.providerConfigs.reconcile(key.apiVersion, key.name);
      result = {
        outcome: r.outcome === "unready" ? "blocked" : "in-sync",
        ...(r.requeueAfterMs ? { requeueAfterMs: r.requeueAfterMs } : {}),
      };
    } catch (err) {
      // A 409 means another writer moved the ProviderConfig on: look again soon, it is no failure.
      result =
        err instanceof ConflictError
          ? { outcome: "conflict", requeueAfterMs: 250 }
          : { outcome: "error", error: err as Error, requeueAfterMs: 5_000 };
    }
    w.metrics?.reconciled(key.kind, result.outcome, Date.now() - started);
    return result;
  }
  return w.reconciler.reconcile(key);
}

/** What every log line written during one message's reconcile carries: why, and which message chain. */
export interface ReconcileContext {
  /** The message's reason: watch, drift, requeue or manual. */
  reason: string;
  /** The message's correlation id (`message.id`), else the queue's id for the message. */
  correlationId: string;
  receiveCount?: number;
}

const reconcileContext = new AsyncLocalStorage<ReconcileContext>();

/** The context of the reconcile running in this async call chain, if any. */
export const currentReconcileContext = (): ReconcileContext | undefined => reconcileContext.getStore();

/** Runs `fn` with `ctx` attached to every log line a contextLogger writes inside it. */
export function withReconcileContext<T>(ctx: ReconcileContext, fn: () => Promise<T>): Promise<T> {
  return reconcileContext.run(ctx, fn);
}

/** The context of a received message: its reason and correlation id (message.id, else the queue's id). */
export const contextOf = (received: Pick<ReceivedMessage, "message" | "id" | "receiveCount">) => ({
  reason: received.message.reason,
  correlationId: received.message.id ?? received.id,
  receiveCount: received.receiveCount,
});

/**
 * Wraps a logger so each line carries the current reconcile's reason and correlationId: the reconciler's
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

/** now − message.at in ms; undefined when `at` cannot be read. */
export function queueAgeMs(message: Pick<ReconcileMessage, "at">, now = Date.now()): number | undefined {
  const at = Date.parse(message.at);
  return Number.isNaN(at) ? undefined : Math.max(0, now - at);
}

/** The queue-consumer side of a worker: one message → one reconcile → what the queue should do. */
export function reconcileHandler(w: Workers): MessageHandler {
  return async (received): Promise<HandlerOutcome> => {
    const age = queueAgeMs(received.message);
    if (age !== undefined) w.metrics?.queueAge?.(age);
    const result = await withReconcileContext(contextOf(received), () =>
      reconcileKey(w, keyOfMessage(received.message)),
    );
    const outcome = outcomeOf(result);
    if (outcome.kind === "retry") {
      if (w.deadLetter && received.receiveCount >= w.deadLetter.maxReceiveCount)
        await w.deadLetter.note(keyOfMessage(received.message), received.receiveCount, outcome.error);
      return { kind: "retry", error: outcome.error, afterMs: outcome.afterMs };
    }
    return outcome;
  };
}

export const DEAD_LETTER_EVENT_REASON = "MessageDeadLettered";

/** Notes on a resource that its message was dead-lettered. Never throws. */
export type DeadLetterNote = (key: ResourceKey, attempts: number, error: Error) => Promise<void>;

/** The operator-facing text of a dead-letter note (Warning Event on the resource). */
export const deadLetterText = (attempts: number, error: Error) =>
  `message dead-lettered after ${attempts} attempts; the drift sweep retries within the poll interval. Last error: ${error.message}`;

/**
 * A dead-lettered message is otherwise visible only in the queue's logs and metrics: tell whoever looks
 * at the resource (kubectl describe) with a Warning Event. The queue adapters log the dead letter itself.
 */
export function deadLetterNote(deps: {
  kube: Kube;
  /** Every kind the worker serves (managed kinds, ProviderConfigs, claims). */
  types: readonly ResourceType[];
  events: EventRecorder;
  logger: ReconcileLogger;
}): DeadLetterNote {
  return async (key, attempts, error) => {
    const log = {
      key: `${key.kind}/${key.name}`,
      apiVersion: key.apiVersion,
      attempts,
      error: error.message,
    };
    const type = deps.types.find((t) => apiVersionOf(t) === key.apiVersion && t.kind === key.kind);
    if (!type) return;
    try {
      const obj = await deps.kube.get<ManagedResource & { [k: string]: unknown }>(
        type,
        key.name,
        key.namespace,
      );
      if (!obj) return;
      await deps.events.record(obj, "Warning", DEAD_LETTER_EVENT_REASON, deadLetterText(attempts, error));
      deps.logger.debug(log, "dead letter noted on the resource");
    } catch (err) {
      deps.logger.warn(
        { ...log, noteError: (err as Error).message },
        "cannot note the dead letter on the resource",
      );
    }
  };
}
