// The end-to-end cost model (bench/sections/cost.ts e2eMonthly, e2eMonthlyAt): what one counted poll
// interval costs a month. Asserted on counts and prices only: requests bill per count, the cold-start bounds
// are ordered, a measured size is taken as measured and other sizes lie on the line through two measured ones.
import { describe, expect, it } from "vitest";
import { prices } from "../../../bench/prices.ts";
import {
  e2eMonthly,
  e2eMonthlyAt,
  type MeasuredInterval,
  scaleInterval,
} from "../../../bench/sections/cost.ts";

const interval = (over: Partial<MeasuredInterval> = {}): MeasuredInterval => ({
  kind: "VPC",
  cadence: "production",
  path: "warm",
  resources: 1000,
  scheduleMs: 5 * 60_000,
  pollMs: 60 * 60_000,
  windows: 12,
  invocations: 12,
  messages: 12,
  queueRequests: 36,
  sweepWallMs: Array(12).fill(0),
  sweepCpuMs: Array(12).fill(0),
  firstRun: { wallMs: 0, cpuMs: 0 },
  invocationWallMs: Array(12).fill(0),
  invocationCpuMs: Array(12).fill(0),
  ...over,
});
const init = { wallMs: 0, cpuMs: 0 };

describe("the end-to-end cost model", () => {
  it("bills every counted invocation, sweep run and queue request once per interval of the month", () => {
    const m = e2eMonthly(interval(), init, 1024);
    const intervals = 720; // 30 days of 1 h intervals
    expect(m.usd.reconcile).toBeCloseTo(intervals * 12 * prices.lambdaRequest.usd, 12);
    expect(m.usd.sweep).toBeCloseTo(intervals * 12 * prices.lambdaRequest.usd, 12);
    const idle = e2eMonthly(interval({ queueRequests: 0 }), init, 1024).usd.sqs;
    expect(m.usd.sqs - idle).toBeCloseTo(intervals * 36 * prices.sqsRequest.usd, 12);
  });

  it("bills waiting at any memory size and stretches CPU below one vCPU", () => {
    const waiting = interval({ invocationWallMs: [1000], invocationCpuMs: [0], invocations: 1 });
    const cpuBound = interval({ invocationWallMs: [1000], invocationCpuMs: [1000], invocations: 1 });
    // The compute part: the invocation's request price is the same at every size.
    const requests = 720 * prices.lambdaRequest.usd;
    const w = (mb: number) => e2eMonthly(waiting, init, mb).usd.reconcile - requests;
    const c = (mb: number) => e2eMonthly(cpuBound, init, mb).usd.reconcile - requests;
    expect(w(512)).toBeCloseTo(w(1024) / 2, 12);
    expect(c(512)).toBeCloseTo(c(1024), 12);
  });

  it("orders the cold-start bounds: one per function-hour at most as dear as every window cold", () => {
    const m = e2eMonthly(
      interval({ firstRun: { wallMs: 5000, cpuMs: 2000 } }),
      { wallMs: 300, cpuMs: 250 },
      1024,
    );
    expect(m.usd.coldLow).toBeGreaterThan(0);
    expect(m.usd.coldHigh).toBeGreaterThanOrEqual(m.usd.coldLow);
    expect(m.usd.high).toBeGreaterThanOrEqual(m.usd.low);
  });

  it("takes a measured size as measured, and another in proportion except the warm sweep's waiting", () => {
    const a = interval({ resources: 1000, invocations: 10 });
    const b = interval({ resources: 10_000, invocations: 100 });
    const f = (m: MeasuredInterval) => m.invocations;
    expect(e2eMonthlyAt([a, b], 10_000, f)).toEqual({ usd: 100, measured: true });
    expect(e2eMonthlyAt([a, b], 100_000, f)).toEqual({ usd: 1000, measured: false });
    const swept = scaleInterval(interval({ sweepWallMs: [500], sweepCpuMs: [20] }), 10_000);
    expect(swept.sweepWallMs).toEqual([480 + 200]);
    expect(swept.windows).toBe(12);
  });
});
