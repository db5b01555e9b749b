// crossplane.io/reconcile-requested-at (Crossplane v2.3): a request to reconcile now, answered by echoing
// its value in status.lastHandledReconcileAt; the legacy driftless.dev/ annotation is honoured too. And
// crossplane.io/poll-interval cannot go below the configured minimum.
import { describe, expect, it } from "vitest";
import { Annotations, LEGACY_RECONCILE_REQUESTED_AT } from "../../../shared/api/meta.ts";
import { type SweepObject, sweepDecision } from "../../../shared/pipeline/sweep.ts";
import { engine } from "../../support/engine.ts";

const statusWrites = (e: ReturnType<typeof engine>) =>
  e.api.writes().filter((r) => r.method === "PATCH" && r.subresource === "status");

/** Sets one annotation behind the engine's back, as `kubectl annotate` would. */
const annotate = (e: ReturnType<typeof engine>, name: string, key: string, value: string) =>
  e.api.mutate(e.def, name, (o) => {
    o.metadata.annotations = {
      ...(o.metadata.annotations as Record<string, string> | undefined),
      [key]: value,
    };
  });

/** Ready and Synced True since `at`: what the sweep reads as in sync. */
const inSyncConditions = (at: number) =>
  ["Ready", "Synced"].map((type) => ({
    type,
    status: "True" as const,
    reason: "x",
    lastTransitionTime: new Date(at).toISOString(),
  }));

describe("reconcile requests", () => {
  it.each([
    ["crossplane.io/reconcile-requested-at", Annotations.reconcileRequestedAt],
    ["the legacy driftless.dev/reconcile-requested-at", LEGACY_RECONCILE_REQUESTED_AT],
  ])("%s is echoed in status.lastHandledReconcileAt once, then nothing is written", async (_, annotation) => {
    const e = engine();
    e.apply("r1", { size: 1 });
    await e.settle("r1");
    e.advance(60_000);
    await e.reconcile("r1");
    const before = statusWrites(e).length;
    annotate(e, "r1", annotation, "2026-11-23T18:00:00Z");
    await e.reconcile("r1");
    expect(e.get("r1")?.status?.lastHandledReconcileAt).toBe("2026-11-23T18:00:00Z");
    expect(statusWrites(e).length - before).toBe(1);
    await e.reconcile("r1");
    expect(statusWrites(e).length - before).toBe(1);
    // A new request is a new value: handled again.
    annotate(e, "r1", annotation, "second");
    await e.reconcile("r1");
    expect(e.get("r1")?.status?.lastHandledReconcileAt).toBe("second");
  });

  it("the batched check never settles an unhandled request: it takes the full reconcile", async () => {
    const e = engine({ observeManyMaxItems: 10 });
    e.apply("r2", { size: 1 });
    await e.settle("r2");
    e.advance(60_000);
    await e.reconcile("r2");
    annotate(e, "r2", Annotations.reconcileRequestedAt, "now");
    const listed = e.get("r2");
    if (!listed) throw new Error("r2 is missing");
    expect(await e.reconciler.checkMany([listed], { connectionSecret: () => undefined })).toEqual([
      { inSync: false, why: "a reconcile was requested" },
    ]);
    await e.reconcile("r2");
    const handled = e.get("r2");
    if (!handled) throw new Error("r2 is missing");
    expect(await e.reconciler.checkMany([handled], { connectionSecret: () => undefined })).toEqual([
      { inSync: true },
    ]);
  });

  it("the sweep enqueues an unhandled request on its next run, whatever the poll interval", () => {
    const at = Date.parse("2026-11-23T00:00:00Z");
    const o: SweepObject = {
      metadata: {
        name: "q",
        uid: "u",
        creationTimestamp: new Date(at).toISOString(),
        annotations: { [Annotations.reconcileRequestedAt]: "t1" },
      },
      status: { conditions: inSyncConditions(at) },
    };
    const ctx = { windowEndMs: at + 7 * 60_000, scheduleMs: 60_000, defaultPollMs: 3_600_000 };
    expect(sweepDecision(o, ctx)).toBe("attention");
    o.status = { ...o.status, lastHandledReconcileAt: "t1" };
    expect(sweepDecision(o, ctx)).toBe("later");
  });
});

describe("crossplane.io/poll-interval minimum", () => {
  it("the engine polls no sooner than the minimum (30 s by default, configurable)", async () => {
    for (const [min, expected] of [
      [undefined, 30_000],
      [5_000, 5_000],
    ] as const) {
      const e = engine({ reconciler: min === undefined ? {} : { minPollIntervalMs: min } });
      e.apply("p1", { size: 1 }, { annotations: { [Annotations.pollInterval]: "1s" } });
      const results = await e.settle("p1");
      expect(results.at(-1)?.pollAfterMs).toBe(expected);
    }
  });

  it("the sweep treats a shorter annotation as the minimum", () => {
    const at = Date.parse("2026-11-23T00:00:00Z");
    const o: SweepObject = {
      metadata: { name: "q", uid: "u", annotations: { [Annotations.pollInterval]: "1s" } },
      status: { conditions: inSyncConditions(at) },
    };
    // With a 10 s schedule a 1 s interval would be due on every sweep; the 30 s minimum makes it one in three.
    let due = 0;
    for (let i = 1; i <= 30; i++) {
      if (
        sweepDecision(o, { windowEndMs: at + i * 10_000, scheduleMs: 10_000, defaultPollMs: 300_000 }) ===
        "due"
      )
        due++;
    }
    expect(due).toBe(10);
  });
});
