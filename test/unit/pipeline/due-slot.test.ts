// The warm sweep's due slots against the stateless rule: filing an object under its next due window
// (nextDueWindow) and taking slots window by window must enqueue exactly what the stateless sweep
// (decide / sweepDecision) finds due in each window — no check lost, none doubled.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { Annotations, type Condition } from "../../../shared/api/meta.ts";
import {
  type DueContext,
  type DueFacts,
  decide,
  dueFacts,
  nextDueWindow,
  type SweepObject,
} from "../../../shared/pipeline/due.ts";
import { KindIndex } from "../../../shared/pipeline/sweep-index.ts";

const S = 1_000;
const M = 60 * S;
const T0 = Date.UTC(2030, 0, 1);

const ctxArb: fc.Arbitrary<DueContext> = fc
  .record({
    scheduleMs: fc.constantFrom(30 * S, M, 5 * M),
    defaultPollMs: fc.constantFrom(M, 5 * M, 7 * M, 60 * M),
    maxFactor: fc.constantFrom(1, 2, 4, 16),
    minPollMs: fc.constantFrom(undefined, 30 * S, 2 * M),
  })
  .map(({ scheduleMs, defaultPollMs, maxFactor, minPollMs }) => ({
    scheduleMs,
    defaultPollMs,
    maxPollMs: maxFactor === 1 ? undefined : defaultPollMs * maxFactor,
    minPollMs,
  }));

const factsArb: fc.Arbitrary<DueFacts> = fc.record({
  paused: fc.constant(false),
  attention: fc.constant(false),
  askedPollMs: fc.option(
    fc.integer({ min: 1, max: 3 * 3_600 }).map((s) => s * S),
    { nil: undefined },
  ),
  lastChangeMs: fc.integer({ min: -300, max: 300 }).map((m) => T0 + m * M + 17 * S),
  phase: fc.integer({ min: 0, max: 2 ** 48 - 1 }),
});

/** Longest interval an object can have under ctx: a bound for brute-force scans. */
const longest = (f: DueFacts, ctx: DueContext) =>
  Math.max(f.askedPollMs ?? 0, ctx.maxPollMs ?? 0, ctx.defaultPollMs, ctx.minPollMs ?? 30 * S);

describe("due slots", () => {
  it("nextDueWindow is the first later window the stateless rule finds due", () => {
    fc.assert(
      fc.property(factsArb, ctxArb, fc.integer({ min: -100, max: 400 }), (f, ctx, w) => {
        const after = T0 + w * ctx.scheduleMs;
        const next = nextDueWindow(f, after, ctx) as number;
        // Nothing due strictly between, due at next.
        for (let W = after + ctx.scheduleMs; W < next; W += ctx.scheduleMs)
          if (decide(f, W, ctx) === "due") return false;
        return decide(f, next, ctx) === "due" && next - after <= longest(f, ctx) + ctx.scheduleMs;
      }),
      { numRuns: 3_000 },
    );
  });

  it("a kind index taken window by window enqueues each object exactly when the stateless sweep would", () => {
    fc.assert(
      fc.property(
        ctxArb,
        fc.array(factsArb, { minLength: 1, maxLength: 20 }),
        fc.array(fc.boolean(), { minLength: 10, maxLength: 60 }), // whether a window's sweep runs
        (ctx, facts, runs) => {
          const index = new KindIndex(Queue, ctx);
          const objects = facts.map((f, i) => objectWith(`q${i}`, f));
          const first = T0;
          for (const o of objects) index.upsert(o, first - ctx.scheduleMs);
          let processed = first - ctx.scheduleMs;
          for (const [k, run] of runs.entries()) {
            const W = first + k * ctx.scheduleMs;
            if (!run) continue; // a skipped sweep: the next one catches its window up
            const taken = new Set(index.due(W).due.map((e) => e.name));
            index.settle(W);
            // Stateless: every object due in some window of (processed, W], each once.
            const expected = new Set<string>();
            for (const [i, o] of objects.entries())
              for (let w = processed + ctx.scheduleMs; w <= W; w += ctx.scheduleMs)
                if (decide(dueFacts(o), w, ctx) === "due") expected.add(`q${i}`);
            if (!sameSet(taken, expected)) return false;
            processed = W;
          }
          return true;
        },
      ),
      { numRuns: 500 },
    );
  });

  it("a change refiles the object from the last handled window; an unsettled run leaves its objects due", () => {
    const ctx: DueContext = { scheduleMs: M, defaultPollMs: 10 * M };
    const index = new KindIndex(Queue, ctx);
    const f: DueFacts = {
      paused: false,
      attention: false,
      askedPollMs: undefined,
      lastChangeMs: T0,
      phase: 0,
    };
    index.upsert(objectWith("a", f, "1"), T0);
    const s1 = slotOf(index, "a", T0) as number;
    expect(s1).toBe(nextDueWindow(dueFacts(objectWith("a", f)), T0, ctx));
    expect(s1 - T0).toBeLessThanOrEqual(10 * M);
    expect(index.due(s1 - M).due).toHaveLength(0);
    expect(index.due(s1).due.map((e) => e.name)).toEqual(["a"]);
    // The send failed: no settle, still due at the next run.
    expect(index.due(s1 + M).due.map((e) => e.name)).toEqual(["a"]);
    index.settle(s1 + M);
    expect(slotOf(index, "a", s1 + M)).toBe(s1 + 10 * M);
    // The same resourceVersion again (a relist): the slot stays.
    index.upsert(objectWith("a", f, "1"), s1 + M);
    expect(slotOf(index, "a", s1 + M)).toBe(s1 + 10 * M);
    // A changed object (now polled every 30 s) is filed from the last handled window.
    index.upsert(objectWith("a", { ...f, askedPollMs: 30 * S }, "2"), s1 + M);
    expect(slotOf(index, "a", s1 + M)).toBe(s1 + 2 * M);
  });
});

describe("index entries (table)", () => {
  const ready: Condition[] = [
    { type: "Ready", status: "True", reason: "Available", lastTransitionTime: "2030-01-01T00:00:00Z" },
    {
      type: "Synced",
      status: "True",
      reason: "ReconcileSuccess",
      lastTransitionTime: "2030-01-01T00:00:00Z",
    },
  ];
  const unready: Condition[] = [
    { type: "Ready", status: "False", reason: "Creating", lastTransitionTime: "2030-01-01T00:00:00Z" },
    ready[1] as Condition,
  ];
  const ctx: DueContext = { scheduleMs: M, defaultPollMs: 5 * M };
  const rows: Array<{ name: string; o: SweepObject; filed: "slot" | "attention" | "nowhere" }> = [
    { name: "in sync", o: obj({ conditions: ready }), filed: "slot" },
    {
      name: "paused",
      o: obj({ conditions: ready, annotations: { [Annotations.paused]: "true" } }),
      filed: "nowhere",
    },
    {
      name: "paused and failing",
      o: obj({ conditions: unready, annotations: { [Annotations.paused]: "true" } }),
      filed: "nowhere",
    },
    { name: "empty management policies", o: obj({ conditions: ready, policies: [] }), filed: "nowhere" },
    { name: "not ready", o: obj({ conditions: unready }), filed: "attention" },
    { name: "never reconciled", o: obj({}), filed: "attention" },
    { name: "being deleted", o: obj({ conditions: ready, deleting: true }), filed: "attention" },
    {
      name: "spec change unseen",
      o: obj({ conditions: ready.map((c) => ({ ...c, observedGeneration: 1 })), generation: 2 }),
      filed: "attention",
    },
    {
      name: "reconcile requested",
      o: obj({
        conditions: ready,
        annotations: { [Annotations.reconcileRequestedAt]: "2030-01-01T00:00:05Z" },
      }),
      filed: "attention",
    },
  ];
  for (const row of rows) {
    it(`${row.name}: ${row.filed}`, () => {
      const index = new KindIndex(Queue, ctx);
      index.upsert(row.o, T0);
      const { attention } = index.due(T0 + 10 * 60 * M);
      const due = index.due(T0 + 10 * 60 * M).due;
      expect(attention.length === 1).toBe(row.filed === "attention");
      expect(due.length === 1).toBe(row.filed === "slot");
      expect(decide(dueFacts(row.o), T0 + M, ctx) === "paused").toBe(row.filed === "nowhere");
    });
  }
});

/** The first window end after `after` whose due slots hold `name` (scanning window by window). */
function slotOf(index: KindIndex, name: string, after: number): number | undefined {
  for (let w = after + M; w <= after + 24 * 60 * M; w += M)
    if (index.due(w).due.some((e) => e.name === name)) return w;
  return undefined;
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>) {
  return a.size === b.size && [...a].every((x) => b.has(x));
}

/** An object whose dueFacts are `f` as near as an object can carry them (the phase is set directly). */
function objectWith(name: string, f: DueFacts, rv = "1"): SweepObject {
  const o: SweepObject = {
    metadata: {
      name,
      uid: `uid-${name}`,
      resourceVersion: rv,
      ...(f.askedPollMs !== undefined
        ? { annotations: { [Annotations.pollInterval]: `${f.askedPollMs}ms` } }
        : {}),
      creationTimestamp: new Date(f.lastChangeMs).toISOString(),
    },
    status: {
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "Available",
          lastTransitionTime: new Date(f.lastChangeMs).toISOString(),
        },
        {
          type: "Synced",
          status: "True",
          reason: "ReconcileSuccess",
          lastTransitionTime: new Date(f.lastChangeMs).toISOString(),
        },
      ],
    },
  };
  return o;
}

function obj(o: {
  conditions?: Condition[];
  annotations?: Record<string, string>;
  deleting?: boolean;
  generation?: number;
  policies?: unknown[];
}): SweepObject {
  return {
    metadata: {
      name: "q",
      uid: "uid-q",
      resourceVersion: "1",
      ...(o.generation ? { generation: o.generation } : {}),
      ...(o.annotations ? { annotations: o.annotations } : {}),
      ...(o.deleting ? { deletionTimestamp: "2030-01-01T00:00:00Z" } : {}),
    },
    spec: { forProvider: {}, ...(o.policies ? { managementPolicies: o.policies } : {}) },
    ...(o.conditions ? { status: { conditions: o.conditions } } : {}),
  };
}
