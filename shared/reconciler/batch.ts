import type { ReconcileResult, ResourceKey } from "./reconciler.ts";

/** Reconciles one key: the managed reconciler, or a router over it and the ProviderConfig reconciler. */
export type ReconcileFn = (key: ResourceKey) => Promise<ReconcileResult>;

/** What a queue adapter does with a message after its reconcile (same shape as the queue port's outcome). */
export type MessageOutcome =
  | { kind: "done" }
  | { kind: "requeue"; afterMs: number }
  | { kind: "retry"; afterMs: number; error: Error };

export interface BatchItem {
  id: string;
  key: ResourceKey;
}

export interface BatchItemResult {
  id: string;
  key: ResourceKey;
  result: ReconcileResult;
  outcome: MessageOutcome;
}

/**
 * A failed reconcile is retried by the queue (counts toward its dead-letter limit); a reconcile that
 * asks to look again later (creating, deleting, conflict) is a fresh, delayed message.
 */
export function outcomeOf(result: ReconcileResult): MessageOutcome {
  if (result.outcome === "error") {
    return {
      kind: "retry",
      afterMs: result.requeueAfterMs ?? 1000,
      error: result.error ?? new Error("reconcile failed"),
    };
  }
  if (result.requeueAfterMs !== undefined) return { kind: "requeue", afterMs: result.requeueAfterMs };
  return { kind: "done" };
}

/**
 * Reconciles a batch of keys, each independently: one resource's failure never fails its neighbours.
 * Duplicate keys in one batch are reconciled once (level-triggered: the second would see the same state).
 */
export async function reconcileBatch(
  reconcile: ReconcileFn,
  items: BatchItem[],
  opts: { concurrency?: number } = {},
): Promise<BatchItemResult[]> {
  const concurrency = Math.max(1, opts.concurrency ?? 8);
  const byKey = new Map<string, Promise<ReconcileResult>>();
  const keyOf = (k: ResourceKey) => `${k.apiVersion}/${k.kind}/${k.namespace ?? ""}/${k.name}`;
  let running = 0;
  const waiters: Array<() => void> = [];
  const slot = async () => {
    while (running >= concurrency) await new Promise<void>((r) => waiters.push(r));
    running++;
  };
  const release = () => {
    running--;
    waiters.shift()?.();
  };
  const run = (key: ResourceKey) => {
    const k = keyOf(key);
    let p = byKey.get(k);
    if (!p) {
      p = (async () => {
        await slot();
        try {
          return await reconcile(key);
        } finally {
          release();
        }
      })();
      byKey.set(k, p);
    }
    return p;
  };
  return Promise.all(
    items.map(async (item) => {
      const result = await run(item.key);
      return { id: item.id, key: item.key, result, outcome: outcomeOf(result) };
    }),
  );
}
