import type { HandlerOutcome, MessageHandler, ReconcileMessage } from "../queue/index.ts";
import { outcomeOf } from "../reconciler/batch.ts";
import type { Reconciler, ResourceKey } from "../reconciler/reconciler.ts";

export const keyOfMessage = (m: ReconcileMessage): ResourceKey => ({
  apiVersion: m.apiVersion,
  kind: m.kind,
  name: m.name,
  ...(m.namespace ? { namespace: m.namespace } : {}),
});

/** The queue-consumer side of a worker: one message → one reconcile → what the queue should do. */
export function reconcileHandler(reconciler: Reconciler): MessageHandler {
  return async (received): Promise<HandlerOutcome> => {
    const outcome = outcomeOf(await reconciler.reconcile(keyOfMessage(received.message)));
    if (outcome.kind === "retry") return { kind: "retry", error: outcome.error };
    return outcome;
  };
}
