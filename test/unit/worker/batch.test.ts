import { describe, expect, it } from "vitest";
import type { ReconcileFn, ReconcileResult, ResourceKey } from "../../../shared/reconciler/contract.ts";
import { outcomeOf, reconcileBatch } from "../../../shared/worker/core.ts";

const key = (name: string): ResourceKey => ({
  apiVersion: "test.driftless.dev/v1alpha1",
  kind: "Widget",
  name,
});

/** A stand-in for the engine: answers per name, counts calls, tracks how many run at once. */
function fakeReconcile(answer: (k: ResourceKey) => ReconcileResult) {
  const calls: string[] = [];
  let running = 0;
  let maxRunning = 0;
  const reconcile: ReconcileFn = async (k) => {
    calls.push(k.name);
    running++;
    maxRunning = Math.max(maxRunning, running);
    try {
      await new Promise((res) => setImmediate(res));
      return answer(k);
    } finally {
      running--;
    }
  };
  return { reconcile, calls, maxRunning: () => maxRunning };
}

describe("outcomeOf", () => {
  it("retries a failed reconcile after its backoff, carrying the error", () => {
    const error = new Error("cloud down");
    expect(outcomeOf({ outcome: "error", error, requeueAfterMs: 4000 })).toEqual({
      kind: "retry",
      afterMs: 4000,
      error,
    });
  });

  it("retries a failed reconcile without backoff or error after a second, with a generic error", () => {
    const out = outcomeOf({ outcome: "error" });
    expect(out).toMatchObject({ kind: "retry", afterMs: 1000 });
    expect(out.kind === "retry" && out.error.message).toBe("reconcile failed");
  });

  it.each<ReconcileResult>([
    { outcome: "creating", requeueAfterMs: 2000 },
    { outcome: "deleting", requeueAfterMs: 1500 },
    { outcome: "conflict", requeueAfterMs: 250 },
    { outcome: "blocked", requeueAfterMs: 300_000 },
    { outcome: "updated", requeueAfterMs: 0 },
  ])("requeues $outcome as a fresh delayed message", (result) => {
    expect(outcomeOf(result)).toEqual({ kind: "requeue", afterMs: result.requeueAfterMs });
  });

  it.each<ReconcileResult>([
    { outcome: "in-sync", pollAfterMs: 300_000 },
    { outcome: "gone" },
    { outcome: "paused" },
    { outcome: "deleted" },
    { outcome: "orphaned" },
  ])("is done with $outcome (the drift sweep looks again)", (result) => {
    expect(outcomeOf(result)).toEqual({ kind: "done" });
  });
});

describe("reconcileBatch", () => {
  it("reconciles each key independently: one failure never fails its neighbours", async () => {
    const { reconcile } = fakeReconcile((k) =>
      k.name === "err"
        ? { outcome: "error", error: new Error("boom"), requeueAfterMs: 10 }
        : { outcome: "in-sync" },
    );
    const items = [
      { id: "1", key: key("ok") },
      { id: "2", key: key("err") },
      { id: "3", key: key("ok2") },
    ];

    const results = await reconcileBatch(reconcile, items);

    expect(results.map((r) => [r.id, r.outcome.kind])).toEqual([
      ["1", "done"],
      ["2", "retry"],
      ["3", "done"],
    ]);
  });

  it("reconciles a key that appears twice in one batch once, answering both messages", async () => {
    const { reconcile, calls } = fakeReconcile(() => ({ outcome: "in-sync" }));

    const results = await reconcileBatch(reconcile, [
      { id: "a", key: key("dup") },
      { id: "b", key: key("other") },
      { id: "c", key: key("dup") },
    ]);

    expect(calls.sort()).toEqual(["dup", "other"]);
    expect(results.map((r) => r.id)).toEqual(["a", "b", "c"]);
    expect(results[2]?.result).toBe(results[0]?.result);
  });

  it("never runs more reconciles at once than its concurrency", async () => {
    const { reconcile, calls, maxRunning } = fakeReconcile(() => ({ outcome: "in-sync" }));
    const items = Array.from({ length: 25 }, (_, i) => ({ id: String(i), key: key(`k${i}`) }));

    await reconcileBatch(reconcile, items, { concurrency: 3 });

    expect(calls).toHaveLength(25);
    expect(maxRunning()).toBe(3);
  });
});
