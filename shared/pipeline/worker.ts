import type { HandlerOutcome, MessageHandler, ReconcileMessage } from "../queue/index.ts";
import { outcomeOf } from "../reconciler/batch.ts";
import type { ProviderConfigReconciler } from "../reconciler/provider-config.ts";
import type { ReconcileResult, Reconciler, ResourceKey } from "../reconciler/reconciler.ts";

export const keyOfMessage = (m: ReconcileMessage): ResourceKey => ({
  apiVersion: m.apiVersion,
  kind: m.kind,
  name: m.name,
  ...(m.namespace ? { namespace: m.namespace } : {}),
});

export interface Workers {
  reconciler: Reconciler;
  providerConfigs?: ProviderConfigReconciler;
}

/** Routes a key to the reconciler for its kind: ProviderConfigs have their own, everything else is managed. */
export async function reconcileKey(w: Workers, key: ResourceKey): Promise<ReconcileResult> {
  if (w.providerConfigs?.handles(key.apiVersion, key.kind)) {
    try {
      const r = await w.providerConfigs.reconcile(key.apiVersion, key.name);
      return {
        outcome: r.outcome === "unready" ? "blocked" : "in-sync",
        ...(r.requeueAfterMs ? { requeueAfterMs: r.requeueAfterMs } : {}),
      };
    } catch (err) {
      return { outcome: "error", error: err as Error, requeueAfterMs: 5_000 };
    }
  }
  return w.reconciler.reconcile(key);
}

/** The queue-consumer side of a worker: one message → one reconcile → what the queue should do. */
export function reconcileHandler(w: Workers): MessageHandler {
  return async (received): Promise<HandlerOutcome> => {
    const outcome = outcomeOf(await reconcileKey(w, keyOfMessage(received.message)));
    if (outcome.kind === "retry") return { kind: "retry", error: outcome.error };
    return outcome;
  };
}
