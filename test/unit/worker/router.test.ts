// The one router and the worker core, without servers: which reconciler a key reaches, how a throw is
// settled, the one "reconciled" line and metric per reconcile, the deadline and the message's context.
import { describe, expect, it } from "vitest";
import { ConflictError } from "../../../shared/kube/client.ts";
import type {
  Outcome,
  ReconcileResult,
  Reconciles,
  ResourceKey,
} from "../../../shared/reconciler/contract.ts";
import { ADMISSION_RECHECK_MS, ADMISSION_WAIT_MS } from "../../../shared/worker/constants.ts";
import { contextLogger } from "../../../shared/worker/context.ts";
import { Router, reconcileMessage } from "../../../shared/worker/core.ts";
import { DeadlineError } from "../../../shared/worker/errors.ts";
import { recordingLogger } from "../../support/reconcile.ts";

const key = (kind: string, name = "a"): ResourceKey => ({ apiVersion: "x.driftless.dev/v1", kind, name });

/** A reconciler for the kinds given: answers, or throws, as the row says; records what it saw. */
function fake(kinds: string[], answer: () => Promise<ReconcileResult>) {
  const seen: string[] = [];
  const r: Reconciles = {
    handles: (_apiVersion, kind) => kinds.includes(kind),
    reconcile: async (k) => {
      seen.push(k.kind);
      return answer();
    },
  };
  return { r, seen };
}

const recording = recordingLogger;

const ok = async (): Promise<ReconcileResult> => ({ outcome: "in-sync" });

describe("Router", () => {
  it.each([
    { name: "the first reconciler that handles the kind", kind: "Claim", want: ["claims"] },
    { name: "the ProviderConfig reconciler for ProviderConfigs", kind: "ProviderConfig", want: ["pcs"] },
    { name: "the last one (the engine) for a kind nobody claims", kind: "Nope", want: ["engine"] },
    { name: "the engine for its own kinds", kind: "Queue", want: ["engine"] },
  ])("routes to $name", async ({ kind, want }) => {
    // Prepare
    const pcs = fake(["ProviderConfig"], ok);
    const claims = fake(["Claim"], ok);
    const engine = fake(["Queue"], ok);
    const router = new Router([pcs.r, claims.r, engine.r]);
    // Act
    await router.reconcile(key(kind));
    // Assess
    const got = [
      ...pcs.seen.map(() => "pcs"),
      ...claims.seen.map(() => "claims"),
      ...engine.seen.map(() => "engine"),
    ];
    expect(got).toEqual(want);
  });

  it.each<{
    name: string;
    answer: () => Promise<ReconcileResult>;
    outcome: Outcome;
    requeueAfterMs: number;
    level: string;
  }>([
    {
      name: "a 409 is a conflict, requeued soon (jittered)",
      answer: () => Promise.reject(new ConflictError("conflict", 409)),
      outcome: "conflict",
      requeueAfterMs: 250,
      level: "info",
    },
    {
      name: "any other throw is an error the queue retries",
      answer: () => Promise.reject(new Error("boom")),
      outcome: "error",
      requeueAfterMs: 2_000,
      level: "error",
    },
    {
      name: "a result is passed through as it is",
      answer: async () => ({ outcome: "creating", requeueAfterMs: 1_234 }),
      outcome: "creating",
      requeueAfterMs: 1_234,
      level: "info",
    },
  ])("settles: $name, with one line and one metric", async ({ answer, outcome, requeueAfterMs, level }) => {
    // Prepare
    const { lines, logger } = recording();
    const metrics: Array<[string, Outcome]> = [];
    const router = new Router([fake(["Queue"], answer).r], {
      logger,
      metrics: { reconciled: (kind, o) => metrics.push([kind, o]) },
      random: () => 0.5,
    });
    // Act
    const result = await router.reconcile(key("Queue"));
    // Assess
    expect(result).toMatchObject({ outcome, requeueAfterMs });
    expect(metrics).toEqual([["Queue", outcome]]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level, msg: "reconciled", key: "Queue/a", outcome, requeueAfterMs });
  });

  it("names namespaced objects with their namespace in the line", async () => {
    const { lines, logger } = recording();
    await new Router([fake(["Claim"], ok).r], { logger }).reconcile({ ...key("Claim"), namespace: "team" });
    expect(lines[0]).toMatchObject({ key: "Claim/team/a" });
  });
});

describe("reconcileMessage (the worker core)", () => {
  it("starts nothing after the deadline: an error with no delay, the reconcile never called", async () => {
    const engine = fake(["Queue"], ok);
    const result = await reconcileMessage(
      new Router([engine.r]).reconcile,
      { key: key("Queue") },
      {
        deadlineMs: 1_000,
        now: () => 2_000,
      },
    );
    expect(result.outcome).toBe("error");
    expect(result.error).toBeInstanceOf(DeadlineError);
    expect(result.requeueAfterMs).toBe(0);
    expect(engine.seen).toEqual([]);
  });

  it("turns a throwing reconcile function into an error result", async () => {
    const result = await reconcileMessage(() => Promise.reject(new Error("down")), { key: key("Queue") });
    expect(result).toMatchObject({ outcome: "error", error: { message: "down" } });
  });

  it("runs in the message's context and reports its queue age", async () => {
    // Prepare
    const { lines, logger } = recording();
    const router = new Router([fake(["Queue"], ok).r], { logger: contextLogger(logger) });
    const ages: number[] = [];
    // Act
    await reconcileMessage(
      router.reconcile,
      {
        key: key("Queue"),
        context: { reason: "watch", correlationId: "m-1" },
        at: new Date(1_000).toISOString(),
      },
      { metrics: { queueAge: (ms) => ages.push(ms) }, now: () => 3_500 },
    );
    // Assess
    expect(ages).toEqual([2_500]);
    expect(lines[0]).toMatchObject({ reason: "watch", correlationId: "m-1", msg: "reconciled" });
  });
});

describe("reconcileMessage: a doorbell message waits for the write it reports", () => {
  const at = new Date(10_000).toISOString();
  const run = async (before: string, stored: string | undefined, nowMs: number) => {
    const engine = fake(["Queue"], ok);
    const reads: string[] = [];
    const result = await reconcileMessage(
      new Router([engine.r]).reconcile,
      { key: key("Queue"), admitted: { before, at } },
      {
        now: () => nowMs,
        storedVersion: async (k) => {
          reads.push(k.name);
          return stored;
        },
      },
    );
    return { result, reconciled: engine.seen.length, reads: reads.length };
  };

  it.each([
    ["an update not stored yet (same resourceVersion)", "7", "7", 10_500, "waiting"],
    ["an update stored (new resourceVersion)", "7", "8", 10_500, "reconciled"],
    ["a create not stored yet (no object)", "", undefined, 10_500, "waiting"],
    ["a create stored", "", "1", 10_500, "reconciled"],
    ["a delete stored (object gone)", "9", undefined, 10_500, "reconciled"],
    [
      "a write that never landed, past the wait (reconciled anyway: level-triggered)",
      "7",
      "7",
      10_000 + ADMISSION_WAIT_MS,
      "reconciled",
    ],
  ])("%s", async (_, before, stored, nowMs, expected) => {
    const { result, reconciled } = await run(before, stored, nowMs);
    if (expected === "waiting") {
      expect(result).toEqual({ outcome: "waiting", requeueAfterMs: ADMISSION_RECHECK_MS });
      expect(reconciled).toBe(0);
    } else {
      expect(reconciled).toBe(1);
    }
  });

  it("looks again after as long as it has waited: a write that never comes costs a handful of reads", async () => {
    const delays: number[] = [];
    let nowMs = 10_000;
    for (;;) {
      const engine = fake(["Queue"], ok);
      const result = await reconcileMessage(
        new Router([engine.r]).reconcile,
        { key: key("Queue"), at: new Date(nowMs).toISOString(), admitted: { before: "", at } },
        { now: () => nowMs, storedVersion: async () => undefined },
      );
      if (result.outcome !== "waiting") break;
      delays.push(result.requeueAfterMs ?? 0);
      nowMs += result.requeueAfterMs ?? 0;
    }
    expect(delays).toEqual([1_000, 1_000, 2_000, 4_000, 8_000, 16_000]);
  });

  it("a fresh message whose write lands a moment later is reconciled in the same call, not requeued", async () => {
    const engine = fake(["Queue"], ok);
    const stored = ["7", "7", "8"];
    let reads = 0;
    const result = await reconcileMessage(
      new Router([engine.r]).reconcile,
      { key: key("Queue"), admitted: { before: "7", at } },
      { now: () => 10_010, storedVersion: async () => stored[Math.min(reads++, stored.length - 1)] },
    );
    expect(result.outcome).not.toBe("waiting");
    expect(reads).toBe(3);
    expect(engine.seen).toHaveLength(1);
  });

  it("reports what it found to a metrics sink that is a class (called as a method, not detached)", async () => {
    class Sink {
      readonly #seen: string[] = [];
      admissionWait(result: string) {
        this.#seen.push(result);
      }
      get seen() {
        return this.#seen;
      }
    }
    const sink = new Sink();
    const engine = fake(["Queue"], ok);
    await reconcileMessage(
      new Router([engine.r]).reconcile,
      { key: key("Queue"), admitted: { before: "7", at } },
      { now: () => 10_010, storedVersion: async () => "8", metrics: sink },
    );
    expect(sink.seen).toEqual(["stored"]);
    expect(engine.seen).toHaveLength(1);
  });

  it("messages without `admitted` (watch, sweep, requeue) read nothing extra", async () => {
    const engine = fake(["Queue"], ok);
    let reads = 0;
    await reconcileMessage(
      new Router([engine.r]).reconcile,
      { key: key("Queue"), at },
      {
        storedVersion: async () => {
          reads++;
          return "1";
        },
      },
    );
    expect(reads).toBe(0);
    expect(engine.seen).toHaveLength(1);
  });
});
