// A received message as the worker's work item: its key, its log context, its enqueue time and, for the
// sweep's batch messages and the doorbell's, what they carry besides the key.
import type { ReceivedMessage, ReconcileMessage } from "../queue/index.ts";
import type { ResourceKey } from "../reconciler/contract.ts";
import type { BatchMessage } from "./batch.ts";
import type { ReconcileContext } from "./context.ts";

/** One message's work: its key, and (when it came from a queue) its context and enqueue time. */
export interface WorkItem {
  key: ResourceKey;
  /** A batch message of the sweep (its key is the batch's first object). */
  batch?: BatchMessage;
  context?: ReconcileContext;
  /** The message's `at` (RFC 3339), for the queue-age metric. */
  at?: string;
  /**
   * From the admission doorbell: the resourceVersion before the admitted write ("" = did not exist) and
   * when it was admitted (kept across requeues, unlike `at`).
   */
  admitted?: { before: string; at: string };
}

export const keyOfMessage = (m: ReconcileMessage): ResourceKey => ({
  apiVersion: m.apiVersion,
  kind: m.kind,
  name: m.name,
  ...(m.namespace ? { namespace: m.namespace } : {}),
});

/** The context of a received message: its reason and correlation id (message.id, else the queue's id). */
export const contextOf = (
  received: Pick<ReceivedMessage, "message" | "id" | "receiveCount">,
): ReconcileContext => ({
  reason: received.message.reason,
  correlationId: received.message.id ?? received.id,
  receiveCount: received.receiveCount,
});

/** A received message as the worker core's work item: its key, context and enqueue time. */
export const workOf = (received: Pick<ReceivedMessage, "message" | "id" | "receiveCount">): WorkItem => {
  const m = received.message;
  return {
    key: keyOfMessage(m),
    ...(m.batch
      ? { batch: { apiVersion: m.apiVersion, kind: m.kind, ...(m.id ? { id: m.id } : {}), batch: m.batch } }
      : {}),
    context: contextOf(received),
    at: m.at,
    ...(m.admitted ? { admitted: m.admitted } : {}),
  };
};

/** now − at in ms; undefined when `at` cannot be read. */
export function queueAgeMs(message: { at: string }, now = Date.now()): number | undefined {
  const at = Date.parse(message.at);
  return Number.isNaN(at) ? undefined : Math.max(0, now - at);
}
