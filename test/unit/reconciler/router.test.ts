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
import { contextLogger, DeadlineError, Router, reconcileMessage } from "../../../shared/reconciler/router.ts";
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
      new Router([engine.r]).reconcileFn,
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
      router.reconcileFn,
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
