// The memory queue's adapter (`driftless run`, the export agent): one received message → the worker core
// → what the queue should do with it. The memory queue settles and dead-letters by itself.
import type { HandlerOutcome, MessageHandler } from "../queue/index.ts";
import type { ReconcileFn, ReconcileMetrics, ResourceKey } from "../reconciler/contract.ts";
import type { BatchCheckFn } from "./batch.ts";
import { outcomeOf, reconcileMessage } from "./core.ts";
import type { DeadLetterNote } from "./dead-letter.ts";
import { keyOfMessage, workOf } from "./message.ts";

export interface HandlerDeps {
  /** The router's reconcile (Worker.reconcile). */
  reconcile: ReconcileFn;
  /** The batched drift check (Worker.checkBatch); without it batch messages are reconciled key by key. */
  checkBatch?: BatchCheckFn | undefined;
  /** Worker.storedVersion: doorbell messages wait for the write they report (admission.ts). */
  storedVersion?: ((key: ResourceKey) => Promise<string | undefined>) | undefined;
  /** Queue age of each message (the router reports the reconciles; the rest of the hook is not read here). */
  metrics?: (Partial<ReconcileMetrics> & { queueAge?(ageMs: number): void }) | undefined;
  /**
   * For queues whose redrive policy dead-letters a message after `maxReceiveCount` receives (SQS): a
   * failed reconcile on the last receive is noted on the resource. The memory queue reports its dead
   * letters itself (run.ts).
   */
  deadLetter?: { maxReceiveCount: number; note: DeadLetterNote } | undefined;
}

/** The queue-consumer side of a worker: one message → the worker core → what the queue should do. */
export function reconcileHandler(w: HandlerDeps): MessageHandler {
  const opts = {
    ...(w.metrics ? { metrics: w.metrics } : {}),
    ...(w.checkBatch ? { checkBatch: w.checkBatch } : {}),
    ...(w.storedVersion ? { storedVersion: w.storedVersion } : {}),
  };
  return async (received): Promise<HandlerOutcome> => {
    const outcome = outcomeOf(await reconcileMessage(w.reconcile, workOf(received), opts));
    if (outcome.kind === "retry" && w.deadLetter && received.receiveCount >= w.deadLetter.maxReceiveCount)
      await w.deadLetter.note(keyOfMessage(received.message), received.receiveCount, outcome.error);
    return outcome;
  };
}
