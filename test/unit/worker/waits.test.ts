// A wait is not a failure: `driftless run`'s path (memory queue → worker handler → the real engine on the
// in-memory API server and the fake cloud) delivers a resource that waits — for a reference to become Ready,
// or for something the cloud says is not there yet — as often as it takes and never dead-letters it, while
// a real failure still goes to the dead-letter list after the queue's maximum receives. A claim waiting for
// its class is a wait too.
import { afterEach, describe, expect, it } from "vitest";
import { PostgreSQLInstance } from "../../../shared/api/claims/claims.ts";
import { DependencyNotReadyError } from "../../../shared/api/external.ts";
import { MemoryQueue } from "../../../shared/queue/memory.ts";
import type { ReconcileMessage } from "../../../shared/queue/message.ts";
import type { ReconcileFn } from "../../../shared/reconciler/contract.ts";
import { outcomeOf } from "../../../shared/worker/core.ts";
import { reconcileHandler } from "../../../shared/worker/memory.ts";
import { type Engine, engine } from "../../support/engine.ts";
import { parentType } from "../../support/fake-cloud.ts";
import { MemoryApiServer } from "../../support/memory-apiserver.ts";
import { ClaimReconciler } from "../../support/routed.ts";

const MAX_RECEIVES = 5;
/** More deliveries than the dead-letter limit allows failures. */
const WAITS = MAX_RECEIVES * 2;

const queues: MemoryQueue[] = [];
afterEach(async () => {
  await Promise.all(queues.splice(0).map((q) => q.stop()));
});

/**
 * The memory queue as `driftless run` builds it (5 receives before a failure is dead-lettered), driving the
 * engine of `e`. The engine's own delays (a wait's 1–30 s backoff) are cut to a millisecond: the test counts
 * deliveries, not seconds. `until(check)` resolves once `check()` holds after a reconcile, or once the
 * message is dead-lettered (nothing delivers it again then).
 */
function runQueue(e: Engine) {
  let deliveries = 0;
  const waiters = new Set<{ check: () => boolean; resolve: () => void }>();
  const wake = (all = false) => {
    for (const w of waiters)
      if (all || w.check()) {
        waiters.delete(w);
        w.resolve();
      }
  };
  const reconcile: ReconcileFn = async (key) => {
    const result = await e.reconciler.reconcile(key);
    deliveries++;
    e.advance(result.requeueAfterMs ?? 0);
    wake();
    return result.requeueAfterMs === undefined ? result : { ...result, requeueAfterMs: 1 };
  };
  const queue = new MemoryQueue({
    maxReceiveCount: MAX_RECEIVES,
    retryBackoff: { baseMs: 1, maxMs: 1 },
    onDeadLetter: () => wake(true),
  });
  queues.push(queue);
  queue.start(reconcileHandler({ reconcile }));
  const message: ReconcileMessage = {
    v: 1,
    apiVersion: e.def.apiVersion,
    kind: e.def.kind,
    name: "w",
    reason: "watch",
    at: new Date().toISOString(),
  };
  return {
    queue,
    deliveries: () => deliveries,
    until: (check: () => boolean) =>
      new Promise<void>((resolve) => {
        if (check() || queue.stats().deadLettered > 0) resolve();
        else waiters.add({ check, resolve });
      }),
    send: () => queue.send([message]),
  };
}

describe("waits never dead-letter; failures do", () => {
  it("a reference that is not Ready yet: delivered past the dead-letter limit, then created once it is Ready", async () => {
    // Prepare
    const e = engine();
    e.parent("p", "parent-1", { ready: false });
    e.apply("w", { parentRef: { name: "p" } });
    const run = runQueue(e);

    // Act
    await run.send();
    await run.until(() => run.deliveries() >= WAITS);
    const waited = { deadLettered: run.queue.stats().deadLettered, creates: e.cloud.calls.create };
    const synced = e.condition("w", "Synced")?.message;
    e.api.mutate(parentType(), "p", (o) => {
      o.status = {
        conditions: [{ type: "Ready", status: "True", reason: "Available", lastTransitionTime: "" }],
      };
    });
    await run.until(() => e.condition("w", "Ready")?.status === "True");

    // Assess
    expect(waited).toEqual({ deadLettered: 0, creates: 0 });
    expect(synced).toContain('referenced Parent "p" is not Ready');
    expect(e.cloud.calls.create).toBe(1);
    expect(run.queue.stats().deadLettered).toBe(0);
  });

  it("the cloud says something it needs is not there yet (DependencyNotReadyError on create): a wait", async () => {
    // Prepare
    const e = engine();
    e.cloud.failNext(
      "create",
      () => new DependencyNotReadyError("the network has no private services connection yet"),
      WAITS + 1,
    );
    e.apply("w", { size: 1 });
    const run = runQueue(e);

    // Act
    await run.send();
    await run.until(() => run.deliveries() >= WAITS);
    const synced = e.condition("w", "Synced")?.message;
    await run.until(() => e.condition("w", "Ready")?.status === "True");

    // Assess
    expect(synced).toContain("no private services connection yet");
    expect(e.cloud.calls.create).toBe(WAITS + 2);
    expect(e.cloud.resources.size).toBe(1);
    expect(run.queue.stats().deadLettered).toBe(0);
  });

  it("a real failure (the cloud refuses the create) is dead-lettered after the maximum receives", async () => {
    // Prepare
    const e = engine();
    e.cloud.failNext("create", () => new Error("quota exceeded"), WAITS + 1);
    e.apply("w", { size: 1 });
    const run = runQueue(e);

    // Act
    await run.send();
    await run.until(() => run.deliveries() >= WAITS);

    // Assess
    expect(run.queue.stats().deadLettered).toBe(1);
    expect(run.queue.deadLetters()[0]?.receiveCount).toBe(MAX_RECEIVES);
    expect(run.deliveries()).toBe(MAX_RECEIVES);
  });
});

describe("a claim waiting for its class", () => {
  it("is a wait the queue requeues (ClassNotFound: the class is usually being applied right now)", async () => {
    // Prepare
    const server = new MemoryApiServer();
    server.seed(PostgreSQLInstance, {
      apiVersion: PostgreSQLInstance.apiVersion,
      kind: PostgreSQLInstance.kind,
      metadata: { name: "db", namespace: "team-a" },
      spec: { size: "small", storageGB: 20 },
    });
    const claims = new ClaimReconciler(server.kube(), { random: () => 0.5 });

    // Act
    const result = await claims.reconcile({
      apiVersion: PostgreSQLInstance.apiVersion,
      kind: PostgreSQLInstance.kind,
      namespace: "team-a",
      name: "db",
    });

    // Assess
    // Reported as blocked (the claim reconciler's outcome for a condition a person or a class resolves).
    expect(result.outcome).toBe("blocked");
    expect(outcomeOf(result).kind).toBe("requeue");
    const claim = server.get(PostgreSQLInstance, "db", "team-a") as {
      status?: { conditions?: Array<{ type: string; reason: string }> };
    };
    expect(claim.status?.conditions?.find((c) => c.type === "Synced")?.reason).toBe("ClassNotFound");
  });
});
