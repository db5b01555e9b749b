import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Annotations, type Condition } from "../../../shared/api/meta.ts";
import { pollDue, pollPhase, sweepDecision, sweepWindowEnd } from "../../../shared/pipeline/sweep.ts";

const S = 1_000;
const M = 60 * S;
const T0 = Date.UTC(2030, 0, 1); // a multiple of every schedule below

const ready: Condition[] = [
  { type: "Ready", status: "True", reason: "Available", lastTransitionTime: "2030-01-01T00:00:00Z" },
  {
    type: "Synced",
    status: "True",
    reason: "ReconcileSuccess",
    lastTransitionTime: "2030-01-01T00:00:00Z",
  },
];

function object(
  opts: {
    uid?: string;
    annotations?: Record<string, string>;
    conditions?: Condition[];
    deleting?: boolean;
  } = {},
) {
  return {
    metadata: {
      name: "q",
      uid: opts.uid ?? randomUUID(),
      ...(opts.annotations ? { annotations: opts.annotations } : {}),
      ...(opts.deleting ? { deletionTimestamp: "2030-01-01T00:00:00Z" } : {}),
    },
    spec: {},
    status: { conditions: opts.conditions ?? ready },
  };
}

/** How many of `sweeps` consecutive sweeps (at T0 + k·schedule + late) find the object due. */
function dueCount(
  o: ReturnType<typeof object>,
  scheduleMs: number,
  defaultPollMs: number,
  sweeps: number,
  lateMs = 0,
) {
  let n = 0;
  for (let k = 1; k <= sweeps; k++) {
    const windowEndMs = sweepWindowEnd(T0 + k * scheduleMs + lateMs, scheduleMs);
    if (sweepDecision(o, { windowEndMs, scheduleMs, defaultPollMs }) === "due") n++;
  }
  return n;
}

describe("drift sweep due window", () => {
  it("puts every tick of an interval in exactly one of the consecutive sweep windows", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 * 3_600 }).map((s) => s * S), // interval
        fc.constantFrom(15 * S, 30 * S, M, 5 * M), // schedule
        fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), // phase fraction
        fc.integer({ min: 0, max: 10_000 }), // first window
        (interval, schedule, fraction, first) => {
          const phase = Math.floor(fraction * interval);
          const windows = Math.ceil((4 * interval) / schedule);
          const start = T0 + first * schedule;
          let due = 0;
          for (let k = 1; k <= windows; k++)
            if (pollDue(phase, interval, start + k * schedule, schedule)) due++;
          if (interval <= schedule) return due === windows;
          // Ticks phase + j·interval in (start, start + windows·schedule]: each in exactly one window.
          const end = start + windows * schedule;
          const ticks = Math.floor((end - phase) / interval) - Math.floor((start - phase) / interval);
          return due === ticks;
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it.each([
    { interval: "10m", schedule: M, sweeps: 10, times: 1 },
    { interval: "7m", schedule: M, sweeps: 7, times: 1 },
    { interval: "1h", schedule: 5 * M, sweeps: 12, times: 1 },
    { interval: "90s", schedule: M, sweeps: 3, times: 2 },
    { interval: "5m", schedule: 30 * S, sweeps: 20, times: 2 },
  ])(
    "enqueues each object $times× over $sweeps sweeps for poll-interval $interval",
    ({ interval, schedule, sweeps, times }) => {
      for (let i = 0; i < 300; i++) {
        const o = object({ annotations: { [Annotations.pollInterval]: interval } });
        expect(dueCount(o, schedule, 5 * M, sweeps)).toBe(times);
      }
    },
  );

  it("uses the default interval when the annotation is absent or malformed", () => {
    for (let i = 0; i < 200; i++) {
      expect(dueCount(object(), M, 10 * M, 10)).toBe(1);
      expect(dueCount(object({ annotations: { [Annotations.pollInterval]: "soon" } }), M, 10 * M, 10)).toBe(
        1,
      );
    }
  });

  it("makes intervals not longer than the schedule due on every sweep", () => {
    for (const interval of ["30s", "1m", "250ms"]) {
      expect(dueCount(object({ annotations: { [Annotations.pollInterval]: interval } }), M, 10 * M, 12)).toBe(
        12,
      );
    }
  });

  it("keeps the same windows when every sweep starts late by less than the schedule", () => {
    for (let i = 0; i < 200; i++) {
      const o = object();
      const late = Math.floor(Math.random() * M);
      expect(dueCount(o, M, 10 * M, 10, late)).toBe(1);
      expect(dueCount(o, M, 10 * M, 10, late)).toBe(dueCount(o, M, 10 * M, 10, 0));
    }
  });

  it("spreads objects evenly across the interval (stable jitter by uid)", () => {
    const perSweep = new Array<number>(10).fill(0);
    for (let i = 0; i < 10_000; i++) {
      const o = object();
      for (let k = 1; k <= 10; k++) {
        const windowEndMs = sweepWindowEnd(T0 + k * M, M);
        if (sweepDecision(o, { windowEndMs, scheduleMs: M, defaultPollMs: 10 * M }) === "due")
          perSweep[k - 1]! += 1;
      }
    }
    for (const n of perSweep) expect(n).toBeGreaterThan(850);
    for (const n of perSweep) expect(n).toBeLessThan(1_150);
    expect(pollPhase("same-uid", 10 * M)).toBe(pollPhase("same-uid", 10 * M));
  });
});

describe("drift sweep decision", () => {
  const ctx = { windowEndMs: T0, scheduleMs: M, defaultPollMs: 10 * M };

  it("skips paused objects, whatever their state", () => {
    const paused = { [Annotations.paused]: "true" };
    expect(sweepDecision(object({ annotations: paused }), ctx)).toBe("paused");
    expect(sweepDecision(object({ annotations: paused, conditions: [] }), ctx)).toBe("paused");
    expect(sweepDecision(object({ annotations: paused, deleting: true }), ctx)).toBe("paused");
    expect(sweepDecision({ ...object(), spec: { managementPolicies: [] } }, ctx)).toBe("paused");
    expect(sweepDecision(object({ annotations: { [Annotations.paused]: "false" } }), ctx)).not.toBe("paused");
  });

  it("always enqueues objects that are not Ready and Synced, or are being deleted", () => {
    const unready = [{ ...ready[0]!, status: "False" as const, reason: "Creating" }, ready[1]!];
    const unsynced = [ready[0]!, { ...ready[1]!, status: "False" as const, reason: "ReconcileError" }];
    expect(sweepDecision(object({ conditions: unready }), ctx)).toBe("attention");
    expect(sweepDecision(object({ conditions: unsynced }), ctx)).toBe("attention");
    expect(sweepDecision(object({ conditions: [] }), ctx)).toBe("attention");
    expect(sweepDecision({ metadata: { name: "new", uid: "u" } }, ctx)).toBe("attention");
    expect(sweepDecision(object({ deleting: true }), ctx)).toBe("attention");
  });

  it("polls an import whose resource does not exist at its interval, not every sweep", () => {
    const missing = [
      { ...ready[0]!, status: "False" as const, reason: "Unavailable" },
      { ...ready[1]!, status: "False" as const, reason: "ReconcileError" },
    ];
    const imported = { ...object({ conditions: missing }), spec: { managementPolicies: ["Observe"] } };
    expect(sweepDecision(imported, ctx)).not.toBe("attention");
    const managed = { ...object({ conditions: missing }), spec: { managementPolicies: ["*"] } };
    expect(sweepDecision(managed, ctx)).toBe("attention");
  });
});
