// 6. Cost model: monthly cost of a 5-minute drift check on Lambda + SQS (driftless) against an always-on
// provider pod of 1 GB (upjet's sizing guide), from the measured per-invocation time and sweep time and
// the published unit prices in bench/prices.ts. Cloud reads of the managed resources themselves are the
// same on both sides at the same poll interval, so they are left out of both.

import type { Row } from "../lib/report.ts";
import {
  DRIFT_DEFAULTS,
  HOURS_PER_MONTH,
  M6G_LARGE_GIB,
  PRICES_CHECKED,
  prices,
  UPJET_SIZING,
} from "../prices.ts";

export const CHECK_INTERVAL_MIN = 5;
const MONTH_MIN = 30 * 24 * 60;
/** serverless.yml (dev stage): reconcile 512 MB arm64, SQS batch size 10; sweep 256 MB every minute. */
export const ASSUMPTIONS = {
  reconcileMemoryGb: 0.5,
  recordsPerInvocation: 10,
  sweepMemoryGb: 0.25,
  sweepsPerMonth: MONTH_MIN, // rate(1 minute)
  // Lambda's SQS event source long-polls with 5 pollers at 20 s while the queue is idle.
  idleReceivesPerMonth: 5 * ((MONTH_MIN * 60) / 20),
  forwarderMemoryGib: 0.125, // forwarder.yaml: limits.memory 128Mi
  providerMemoryGib: 1, // upjet sizing guide: provider-aws averages 1.1 GB
};

export interface CostInputs {
  /** Measured: one invocation of 10 in-sync records (Lambda handler core), ms. */
  invocationMs: number;
  /** Measured sweep durations (list all, encode every message) at two sizes, for a linear fit. */
  sweepPoints: Array<{ resources: number; ms: number }>;
  /** Measured extra time per message of sending into SQS (moto, shallow queue), ms. */
  sqsSendMsPerMessage: number;
}

const nodeGibHour = prices.m6gLargeHour.usd / M6G_LARGE_GIB;

function sweepMsAt(points: CostInputs["sweepPoints"], r: number): number {
  const [a, b] = [...points].sort((x, y) => x.resources - y.resources);
  if (!a) return 0;
  if (!b || b.resources === a.resources) return (a.ms / a.resources) * r;
  const slope = (b.ms - a.ms) / (b.resources - a.resources);
  return Math.max(0, a.ms + slope * (r - a.resources));
}

export function monthlyCost(inputs: CostInputs, resources: number) {
  const A = ASSUMPTIONS;
  const checks = resources * (MONTH_MIN / CHECK_INTERVAL_MIN);
  const invocations = checks / A.recordsPerInvocation;
  const lambdaRequests = invocations * prices.lambdaRequest.usd;
  const lambdaCompute =
    invocations * (inputs.invocationMs / 1000) * A.reconcileMemoryGb * prices.lambdaArmGbSecond.usd;
  // Each sweep lists all R and sends the R × schedule/interval that are due.
  const duePerSweep = resources * (1 / CHECK_INTERVAL_MIN);
  const sweepMs = sweepMsAt(inputs.sweepPoints, resources) + duePerSweep * inputs.sqsSendMsPerMessage;
  const sweep =
    A.sweepsPerMonth *
    (prices.lambdaRequest.usd + (sweepMs / 1000) * A.sweepMemoryGb * prices.lambdaArmGbSecond.usd);
  // Send (SendMessageBatch of 10), receive and delete (10 per call), plus idle long polls.
  const sqsRequests = checks / 10 + (2 * checks) / A.recordsPerInvocation + A.idleReceivesPerMonth;
  const sqs = sqsRequests * prices.sqsRequest.usd;
  const forwarder = A.forwarderMemoryGib * nodeGibHour * HOURS_PER_MONTH;
  const driftless = lambdaRequests + lambdaCompute + sweep + sqs + forwarder;
  const provider = A.providerMemoryGib * nodeGibHour * HOURS_PER_MONTH;
  const fargateProvider =
    (0.25 * prices.fargateVcpuHour.usd + 1 * prices.fargateGbHour.usd) * HOURS_PER_MONTH;
  const fargateForwarder =
    (0.25 * prices.fargateVcpuHour.usd + 0.5 * prices.fargateGbHour.usd) * HOURS_PER_MONTH;
  return {
    resources,
    checksPerMonth: checks,
    invocations,
    sweepMs,
    sqsRequests,
    usd: { lambdaRequests, lambdaCompute, sweep, sqs, forwarder, driftless, provider },
    fargateUsd: {
      driftless: driftless - forwarder + fargateForwarder,
      provider: fargateProvider,
    },
  };
}

export const FORMULA = [
  `checks C = R × ${MONTH_MIN / CHECK_INTERVAL_MIN} per month (R resources, one drift check every ${CHECK_INTERVAL_MIN} min)`,
  `Lambda reconcile = C/b × $0.20/M + C/b × d × ${ASSUMPTIONS.reconcileMemoryGb} GB × $${prices.lambdaArmGbSecond.usd}/GB-s   (b = ${ASSUMPTIONS.recordsPerInvocation} records per invocation, d = measured invocation time)`,
  `Lambda sweep     = ${ASSUMPTIONS.sweepsPerMonth} × ($0.20/M + t_sweep(R) × ${ASSUMPTIONS.sweepMemoryGb} GB × $${prices.lambdaArmGbSecond.usd}/GB-s)   (t_sweep = measured list time, linear in R, + R/${CHECK_INTERVAL_MIN} due messages × measured SQS send time)`,
  `SQS              = (C/10 send + C/b receive + C/b delete + ${ASSUMPTIONS.idleReceivesPerMonth} idle long polls) × $0.40/M`,
  `forwarder pod    = ${ASSUMPTIONS.forwarderMemoryGib} GiB × $${prices.m6gLargeHour.usd}/h ÷ ${M6G_LARGE_GIB} GiB (m6g.large share by memory) × ${HOURS_PER_MONTH} h`,
  `provider pod     = ${ASSUMPTIONS.providerMemoryGib} GiB × $${prices.m6gLargeHour.usd}/h ÷ ${M6G_LARGE_GIB} GiB × ${HOURS_PER_MONTH} h   (always on, whatever R)`,
];

export function costModel(inputs: CostInputs) {
  const at = [1000, 10_000].map((r) => monthlyCost(inputs, r));
  // Both sides are linear in R: driftless = fixed + R × slope; the pod is flat.
  const c1 = monthlyCost(inputs, 1000).usd.driftless;
  const c2 = monthlyCost(inputs, 2000).usd.driftless;
  const slope = (c2 - c1) / 1000;
  const fixed = c1 - slope * 1000;
  const provider = at[0]?.usd.provider ?? 0;
  const breakEven = slope > 0 ? Math.max(0, (provider - fixed) / slope) : Number.POSITIVE_INFINITY;
  const $ = (x: number) => `$${x.toFixed(2)}`;
  const rows: Row[] = at.map((c) => ({
    section: "6 cost",
    metric: `monthly, ${c.resources / 1000}k resources, 5-min drift check: Lambda+SQS (+forwarder) vs 1 GB provider pod`,
    value: `${$(c.usd.driftless)} vs ${$(c.usd.provider)}`,
    target: "—",
    pass: undefined,
    range: `Lambda ${$(c.usd.lambdaRequests + c.usd.lambdaCompute)}, sweep ${$(c.usd.sweep)}, SQS ${$(c.usd.sqs)}, forwarder ${$(c.usd.forwarder)}`,
  }));
  const byCpu = (UPJET_SIZING.providerAwsAvgCores / 2) * prices.m6gLargeHour.usd * HOURS_PER_MONTH;
  rows.push({
    section: "6 cost",
    metric: `the provider pod priced by its CPU instead (upjet: ${UPJET_SIZING.providerAwsAvgCores} cores avg = ${UPJET_SIZING.providerAwsAvgCores / 2} m6g.large)`,
    value: $(byCpu),
    target: "—",
    pass: undefined,
    range: "memory share is the generous case for the pod",
  });
  rows.push({
    section: "6 cost",
    metric: "break-even: resources at which Lambda+SQS costs as much as the 1 GB pod",
    value: `${Math.round(breakEven).toLocaleString("en-US")}`,
    target: "—",
    pass: undefined,
    range: `prices of ${PRICES_CHECKED}`,
  });
  return {
    rows,
    result: {
      pricesChecked: PRICES_CHECKED,
      prices,
      upjetSizing: UPJET_SIZING,
      assumptions: ASSUMPTIONS,
      inputs,
      formula: FORMULA,
      at,
      breakEvenResources: breakEven,
      providerPodByCpuUsd: byCpu,
    },
  };
}

// --- Batched drift checks (section 7) -------------------------------------------------------------------

/** What the batched model takes from section 7's measurements, per kind. */
export interface BatchedInputs {
  kind: string;
  /**
   * Worker wall time per checked resource, the page LIST excluded (ms), against a cloud answering at the
   * central latency (drift-batch.ts CENTRAL_LATENCY_MS) — Lambda bills wall time, waiting included.
   */
  checkMsPerResource: number;
  /** The same per cloud latency median (ms → ms per resource), and against moto alone (key 0). */
  checkMsPerResourceAt: Record<number, number>;
  /** Worker CPU per checked resource (ms): what the function really computes. */
  cpuMsPerResource: number;
  /** One LIST of a 1,000-object page (ms): every batch message reads its page once. */
  pageListMs: number;
}

/**
 * Lambda bills the INIT phase of every cold start since 2025-08-01 (AWS Compute Blog, "AWS Lambda
 * standardizes billing for INIT phase"), at the function's memory. How many cold starts a month has is
 * not published (idle containers are reclaimed at AWS's discretion): bounded here between one per
 * function per hour and every invocation cold.
 */
export function initCostUsd(initMs: number, memoryGb: number, coldStarts: number): number {
  return coldStarts * (initMs / 1000) * memoryGb * prices.lambdaArmGbSecond.usd;
}

/** Sweep pages of 1,000; at a 1-minute schedule and 5-minute interval a fifth of each page is due. */
const PAGE = 1000;

/**
 * Monthly cost of the batched path. A batch message carries the due keys of one page (PAGE × schedule ÷
 * interval in steady state, stretched by adaptive polling's longer intervals); its invocation reads the
 * page and checks those keys. `intervalMin` 20: adaptive polling's steady state.
 */
export function batchedMonthlyCost(
  inputs: CostInputs,
  b: BatchedInputs,
  resources: number,
  intervalMin: number = CHECK_INTERVAL_MIN,
  /** The sweep's schedule (min) and whether a forwarder pod runs (no: the doorbell brings changes). */
  deployment: { sweepMin: number; forwarder: boolean } = { sweepMin: 1, forwarder: true },
) {
  const A = ASSUMPTIONS;
  const sweepsPerMonth = MONTH_MIN / deployment.sweepMin;
  const checks = resources * (MONTH_MIN / intervalMin);
  // The due share of a page per sweep.
  const keysPerMessage =
    (Math.min(resources, PAGE) * Math.min(deployment.sweepMin, intervalMin)) / intervalMin;
  const messages = checks / Math.max(1, keysPerMessage);
  const wallMsPerMessage = b.pageListMs + keysPerMessage * b.checkMsPerResource;
  const lambdaRequests = messages * prices.lambdaRequest.usd;
  const lambdaCompute =
    messages * (wallMsPerMessage / 1000) * A.reconcileMemoryGb * prices.lambdaArmGbSecond.usd;
  // The sweep still lists everything on every run; it sends few messages now.
  const sweepMs =
    sweepMsAt(inputs.sweepPoints, resources) + (messages / sweepsPerMonth) * inputs.sqsSendMsPerMessage;
  const sweep =
    sweepsPerMonth *
    (prices.lambdaRequest.usd + (sweepMs / 1000) * A.sweepMemoryGb * prices.lambdaArmGbSecond.usd);
  const sqsRequests = messages / 10 + 2 * messages + A.idleReceivesPerMonth;
  const sqs = sqsRequests * prices.sqsRequest.usd;
  const forwarder = deployment.forwarder ? A.forwarderMemoryGib * nodeGibHour * HOURS_PER_MONTH : 0;
  const driftless = lambdaRequests + lambdaCompute + sweep + sqs + forwarder;
  const provider = A.providerMemoryGib * nodeGibHour * HOURS_PER_MONTH;
  return {
    resources,
    intervalMin,
    checksPerMonth: checks,
    keysPerMessage,
    messages,
    wallMsPerMessage,
    usd: { lambdaRequests, lambdaCompute, sweep, sqs, forwarder, driftless, provider },
  };
}

export const FORMULA_BATCHED = [
  `batched: k = min(R, ${PAGE}) ÷ interval(min) keys per message (the due share of a ${PAGE}-object page per 1-minute sweep), messages M = C ÷ k`,
  "Lambda = M × $0.20/M + M × (t_page + k × t_check) × 0.5 GB × price   (t_page = one page LIST, t_check = measured worker time per resource without it)",
  "SQS = (M/10 send + M receive + M delete + idle long polls) × $0.40/M; sweep and forwarder as per-key",
];

export function batchedCostRows(inputs: CostInputs, kinds: readonly BatchedInputs[]) {
  const $ = (x: number) => `$${x.toFixed(2)}`;
  const rows: Row[] = [];
  const at: Array<ReturnType<typeof batchedMonthlyCost>> = [];
  const byCpu = (UPJET_SIZING.providerAwsAvgCores / 2) * prices.m6gLargeHour.usd * HOURS_PER_MONTH;
  for (const b of kinds) {
    for (const r of [1000, 10_000, 100_000]) {
      const c = batchedMonthlyCost(inputs, b, r);
      const perKey = monthlyCost(inputs, r);
      at.push(c);
      const target = r === 10_000 ? "≤ $1.50" : r === 100_000 ? `< 1 GB pod (${$(c.usd.provider)})` : "—";
      const pass =
        r === 10_000 ? c.usd.driftless <= 1.5 : r === 100_000 ? c.usd.driftless < c.usd.provider : undefined;
      rows.push({
        section: "6 cost",
        metric: `batched, ${b.kind}, ${r / 1000}k resources, 5-min checks: per-key → batched (pod: ${$(c.usd.provider)} by memory, ${$(byCpu)} by CPU)`,
        value: `${$(perKey.usd.driftless)} → ${$(c.usd.driftless)}`,
        target,
        pass,
        range: `Lambda ${$(c.usd.lambdaRequests + c.usd.lambdaCompute)}, sweep ${$(c.usd.sweep)}, SQS ${$(c.usd.sqs)} (idle polls ${$(ASSUMPTIONS.idleReceivesPerMonth * prices.sqsRequest.usd)}), forwarder ${$(c.usd.forwarder)}`,
      });
    }
    const at10k = (ms: number) =>
      batchedMonthlyCost(inputs, { ...b, checkMsPerResource: ms }, 10_000).usd.driftless;
    const medians = Object.keys(b.checkMsPerResourceAt)
      .map(Number)
      .filter((m) => m > 0)
      .sort((x, y) => x - y);
    rows.push({
      section: "6 cost",
      metric: `batched, ${b.kind}, 10k resources, 5-min checks, by cloud latency median ${medians.join(" / ")} ms (moto alone)`,
      value: medians.map((m) => $(at10k(b.checkMsPerResourceAt[m] ?? 0))).join(" / "),
      target: "≤ $1.50",
      pass: at10k(b.checkMsPerResource) <= 1.5,
      range: `moto alone ${$(at10k(b.checkMsPerResourceAt[0] ?? 0))}; worker CPU ${b.cpuMsPerResource.toFixed(2)} ms vs wall ${b.checkMsPerResource.toFixed(2)} ms per resource: Lambda bills wall`,
    });
    const steady = batchedMonthlyCost(inputs, b, 10_000, 20);
    at.push(steady);
    rows.push({
      section: "6 cost",
      metric: `batched, ${b.kind}, 10k resources, adaptive polling's steady state (unchanged > 20 min: every 20 min)`,
      value: $(steady.usd.driftless),
      target: "—",
      pass: undefined,
      range: `Lambda ${$(steady.usd.lambdaRequests + steady.usd.lambdaCompute)}, sweep ${$(steady.usd.sweep)}, SQS ${$(steady.usd.sqs)}, forwarder ${$(steady.usd.forwarder)}`,
    });
  }
  return { rows, result: { formula: FORMULA_BATCHED, inputs: kinds, at } };
}

/**
 * INIT billing (see initCostUsd) at 10k resources, 5-minute batched checks: the cold import measured in
 * section 5 taken as the INIT time, bounded by one cold start per function per hour (reconcile and sweep)
 * and every batched invocation cold.
 */
export function initCostRows(initMs: number, inputs: CostInputs, b: BatchedInputs | undefined): Row[] {
  if (!b) return [];
  const $ = (x: number) => `$${x.toFixed(2)}`;
  const lower = initCostUsd(initMs, ASSUMPTIONS.reconcileMemoryGb, 2 * HOURS_PER_MONTH);
  const upper = initCostUsd(
    initMs,
    ASSUMPTIONS.reconcileMemoryGb,
    batchedMonthlyCost(inputs, b, 10_000).messages + ASSUMPTIONS.sweepsPerMonth,
  );
  return [
    {
      section: "6 cost",
      metric: `INIT billing (since 2025-08-01), ${b.kind} 10k batched: cold import ${Math.round(initMs)} ms as INIT, one cold start per function-hour … every invocation cold`,
      value: `${$(lower)} … ${$(upper)}`,
      target: "—",
      pass: undefined,
      range: "added to the figures above; cold-start frequency is not published",
    },
  ];
}

// --- Memory size (issue 33: right-sized functions) --------------------------------------------------------

/** Lambda gives a function one vCPU's worth of CPU at 1,769 MB, and CPU in proportion below (AWS Lambda docs, "Configuring function memory"). */
export const LAMBDA_MB_PER_VCPU = 1769;
/** The memory sizes the model compares (MB). */
export const MEMORY_SIZES_MB = [256, 384, 512, 768, 1024, 1769] as const;

export interface MemoryInputs {
  /** Worker CPU per checked resource (ms of one full CPU). */
  cpuMsPerResource: number;
  /** Worker wall per checked resource against the modelled cloud (ms), at full CPU: CPU + waiting. */
  wallMsPerResource: number;
  /** The reconcile container's resident memory after many reconciles (MB): the floor of the size. */
  rssMb: number;
}

/**
 * Billed ms of one run measured at full CPU (`wall`, `cpu`) in a function of `memoryMb`: below 1,769 MB
 * Lambda gives a share of one vCPU, so the CPU part stretches by 1,769 ÷ memory; the waiting part does not.
 */
export function billedMs(wallMs: number, cpuMs: number, memoryMb: number): number {
  return Math.max(0, wallMs - cpuMs) + cpuMs * Math.max(1, LAMBDA_MB_PER_VCPU / memoryMb);
}

/**
 * Billed GB-seconds per checked resource at `memoryMb` (billedMs). Sizes under the container's RSS (plus a
 * quarter of headroom) are refused (undefined): the function would run out of memory.
 */
export function gbSecondsPerResource(m: MemoryInputs, memoryMb: number): number | undefined {
  if (memoryMb < m.rssMb * 1.25) return undefined;
  return (billedMs(m.wallMsPerResource, m.cpuMsPerResource, memoryMb) / 1000) * (memoryMb / 1024);
}

/** The memory size with the least billed GB-seconds per resource, and the figure at every size. */
export function cheapestMemory(m: MemoryInputs) {
  const at: Array<{ mb: number; gbs: number | undefined }> = MEMORY_SIZES_MB.map((mb) => ({
    mb,
    gbs: gbSecondsPerResource(m, mb),
  }));
  let best: { mb: number; gbs: number } | undefined;
  for (const { mb, gbs } of at)
    if (gbs !== undefined && (best === undefined || gbs < best.gbs)) best = { mb, gbs };
  return { at, best };
}

export function memoryRows(kind: string, m: MemoryInputs): Row[] {
  const { at, best } = cheapestMemory(m);
  const usdPer10kMonth = (gbs: number) =>
    gbs * 10_000 * ((30 * 24 * 60) / CHECK_INTERVAL_MIN) * prices.lambdaArmGbSecond.usd;
  return [
    {
      section: "6 cost",
      metric: `${kind} batched check, Lambda compute per month at 10k / 5 min by memory size (${at.map((x) => x.mb).join(" / ")} MB)`,
      value: at.map((x) => (x.gbs === undefined ? "—" : `$${usdPer10kMonth(x.gbs).toFixed(2)}`)).join(" / "),
      target: "—",
      pass: undefined,
      range: `cheapest: ${best ? `${best.mb} MB` : "none fits"} (CPU ${m.cpuMsPerResource.toFixed(2)} ms, wall ${m.wallMsPerResource.toFixed(2)} ms per resource, RSS ${Math.round(m.rssMb)} MB; — : below RSS × 1.25)`,
    },
  ];
}

// --- The leading table (issue 33): default production configuration and 5-minute checks ----------------

/** serverless.yml's prod stage: doorbell + cloud events, the poll only a safety net every hour, sweep every 5 min. */
export const PRODUCTION = { intervalMin: 60, sweepMin: 5, forwarder: false } as const;

/** Cloud API calls per resource per hour at each controller's default drift interval (list kinds: ÷ list size). */
export function callsPerHour(intervalSeconds: number): number {
  return 3600 / intervalSeconds;
}

/**
 * The leading table's second half: cloud API reads per resource per hour at each controller's default
 * drift interval. Its cost rows come from section 17 (e2eCostRows' `leading`).
 */
export function peerReadRows(): Row[] {
  const rows: Row[] = [];
  const peers = [
    { who: "driftless, production (1 h safety poll)", seconds: PRODUCTION.intervalMin * 60 },
    ...DRIFT_DEFAULTS.map((d) => ({ who: d.who, seconds: d.seconds })),
  ];
  rows.push({
    section: "0 summary",
    metric:
      "cloud API reads per resource per hour at each default drift interval (list kinds: ÷ resources per list call)",
    value: peers.map((p) => `${p.who}: ${callsPerHour(p.seconds).toFixed(2)}`).join("; "),
    target: "—",
    pass: undefined,
    range: "driftless also reads once per cloud event and per change (doorbell), not counted here",
  });
  return rows;
}

// --- End to end, counted (issue 33: the leading table re-modelled from section 17) ---------------------------

/** serverless.yml: each stage's reconcile memory (MB) and maximumConcurrency; the sweep's memory. */
export const STAGES = {
  "5-min checks": { reconcileMemoryMb: 512, maximumConcurrency: 5 }, // dev stage
  production: { reconcileMemoryMb: 1024, maximumConcurrency: 20 }, // prod stage
} as const;
export const SWEEP_MEMORY_MB = 256;

/** What section 17 counted and timed over one poll interval of one configuration (bench/sections/e2e.ts). */
export interface MeasuredInterval {
  kind: string;
  cadence: keyof typeof STAGES;
  path: "warm" | "stateless";
  resources: number;
  scheduleMs: number;
  pollMs: number;
  windows: number;
  invocations: number;
  messages: number;
  queueRequests: number;
  sweepWallMs: number[];
  sweepCpuMs: number[];
  firstRun: { wallMs: number; cpuMs: number };
  invocationWallMs: number[];
  invocationCpuMs: number[];
}

/** The function's INIT as measured: a fresh process importing the bundle (section 5's method). */
export interface InitInputs {
  wallMs: number;
  cpuMs: number;
}

const gbS = (ms: number, memoryMb: number) => (ms / 1000) * (memoryMb / 1024);

/**
 * Monthly cost of one measured configuration, by line. Cold starts are not published: bounded between one
 * per function per hour (`low`) and every window's invocations cold (`high`: the sweep and
 * min(messages per window, maximumConcurrency) reconcile containers); each bills its INIT (cold import CPU,
 * stretched like any CPU) and, for the sweep, a full list (the run's first, cold run) instead of a warm run.
 */
export function e2eMonthly(m: MeasuredInterval, init: InitInputs, reconcileMemoryMb: number) {
  const stage = STAGES[m.cadence];
  const intervals = (MONTH_MIN * 60_000) / m.pollMs;
  const windowsPerMonth = intervals * m.windows;
  const p = prices;
  const invocationBilled = m.invocationWallMs.reduce(
    (s, w, i) => s + gbS(billedMs(w, m.invocationCpuMs[i] ?? 0, reconcileMemoryMb), reconcileMemoryMb),
    0,
  );
  const reconcile =
    intervals * (m.invocations * p.lambdaRequest.usd + invocationBilled * p.lambdaArmGbSecond.usd);
  const warmSweeps = m.sweepWallMs.map((w, i) =>
    gbS(billedMs(w, m.sweepCpuMs[i] ?? 0, SWEEP_MEMORY_MB), SWEEP_MEMORY_MB),
  );
  const sweep =
    intervals *
    (m.windows * p.lambdaRequest.usd + warmSweeps.reduce((a, b) => a + b, 0) * p.lambdaArmGbSecond.usd);
  const sqs = (intervals * m.queueRequests + ASSUMPTIONS.idleReceivesPerMonth) * p.sqsRequest.usd;
  const meanWarm = warmSweeps.reduce((a, b) => a + b, 0) / Math.max(1, warmSweeps.length);
  const coldSweepExtra =
    Math.max(
      0,
      gbS(billedMs(m.firstRun.wallMs, m.firstRun.cpuMs, SWEEP_MEMORY_MB), SWEEP_MEMORY_MB) - meanWarm,
    ) * p.lambdaArmGbSecond.usd;
  const initAt = (mb: number) => gbS(billedMs(init.cpuMs, init.cpuMs, mb), mb) * p.lambdaArmGbSecond.usd;
  const perColdStart = {
    reconcile: initAt(reconcileMemoryMb),
    sweep: initAt(SWEEP_MEMORY_MB) + coldSweepExtra,
  };
  const messagesPerWindow = m.messages / Math.max(1, m.windows);
  const cold = (reconcileStarts: number, sweepStarts: number) =>
    reconcileStarts * perColdStart.reconcile + sweepStarts * perColdStart.sweep;
  const coldLow = cold(HOURS_PER_MONTH, HOURS_PER_MONTH);
  const coldHigh = cold(
    windowsPerMonth * Math.min(stage.maximumConcurrency, Math.max(1, Math.ceil(messagesPerWindow))),
    windowsPerMonth,
  );
  const steady = reconcile + sweep + sqs;
  return {
    resources: m.resources,
    reconcileMemoryMb,
    usd: { reconcile, sweep, sqs, coldLow, coldHigh, low: steady + coldLow, high: steady + coldHigh },
    perColdStart,
  };
}

/** The reconcile memory size with the least monthly cost for this configuration (sizes ≥ RSS × 1.25). */
export function cheapestReconcileMemory(m: MeasuredInterval, init: InitInputs, rssMb: number) {
  const at = MEMORY_SIZES_MB.filter((mb) => mb >= rssMb * 1.25).map((mb) => ({
    mb,
    usd: e2eMonthly(m, init, mb).usd.low,
  }));
  return at.reduce((best, x) => (x.usd < best.usd ? x : best), at[0] ?? { mb: 1024, usd: Number.NaN });
}

/**
 * One measured interval taken to `resources`: what follows the objects checked — invocations, messages,
 * queue requests, the reconcile function's time, the sweep's CPU (a pass over its index) and its cold full
 * list — in proportion; what does not — the windows, the warm sweep's waiting (one watch round trip and the
 * quiet cut) — as measured.
 */
export function scaleInterval(m: MeasuredInterval, resources: number): MeasuredInterval {
  const k = resources / Math.max(1, m.resources);
  return {
    ...m,
    resources,
    invocations: m.invocations * k,
    messages: m.messages * k,
    queueRequests: m.queueRequests * k,
    invocationWallMs: m.invocationWallMs.map((x) => x * k),
    invocationCpuMs: m.invocationCpuMs.map((x) => x * k),
    sweepWallMs: m.sweepWallMs.map(
      (w, i) => Math.max(0, w - (m.sweepCpuMs[i] ?? 0)) + (m.sweepCpuMs[i] ?? 0) * k,
    ),
    sweepCpuMs: m.sweepCpuMs.map((x) => x * k),
    firstRun: { wallMs: m.firstRun.wallMs * k, cpuMs: m.firstRun.cpuMs * k },
  };
}

/**
 * Monthly cost at `resources` from the measured configurations of one kind, cadence and path: measured
 * where a run had that size, else the nearest measured size taken there by scaleInterval.
 */
export function e2eMonthlyAt(
  runs: readonly MeasuredInterval[],
  resources: number,
  f: (m: MeasuredInterval) => number,
): { usd: number; measured: boolean } {
  const exact = runs.find((r) => r.resources === resources);
  if (exact) return { usd: f(exact), measured: true };
  const nearest = [...runs].sort(
    (a, b) => Math.abs(Math.log(a.resources / resources)) - Math.abs(Math.log(b.resources / resources)),
  )[0];
  if (!nearest) return { usd: Number.NaN, measured: false };
  return { usd: f(scaleInterval(nearest, resources)), measured: false };
}

export const FORMULA_E2E = [
  "per poll interval, counted in section 17: I invocations (one per batch message), Q queue requests (FORMULA_BATCH), W sweep runs",
  `reconcile = I × $0.20/M + Σ billed(wall, cpu, mem) × mem × $${prices.lambdaArmGbSecond.usd}/GB-s; billed = wall − cpu + cpu × max(1, ${LAMBDA_MB_PER_VCPU} MB ÷ mem)`,
  `sweep = W × $0.20/M + Σ billed(warm run) × ${SWEEP_MEMORY_MB} MB; SQS = (Q + ${ASSUMPTIONS.idleReceivesPerMonth} idle long polls a month) × $0.40/M`,
  "cold starts (not published): one per function-hour … every window's invocations cold; each bills INIT = cold-import CPU stretched at the function's memory, and the sweep's a full list",
  "× intervals a month (43,200 min ÷ poll interval); no forwarder (the doorbell brings changes); cloud events' and the doorbell's own invocations follow changes, not resources: left out",
];

export function e2eCostRows(
  runs: readonly MeasuredInterval[],
  init: InitInputs,
  rssMb: number,
): { rows: Row[]; leading: Row[]; result: unknown } {
  const $ = (x: number) => `$${x.toFixed(2)}`;
  const rows: Row[] = [];
  const pod = ASSUMPTIONS.providerMemoryGib * nodeGibHour * HOURS_PER_MONTH;
  const byCpu = (UPJET_SIZING.providerAwsAvgCores / 2) * prices.m6gLargeHour.usd * HOURS_PER_MONTH;
  const sizes = [1000, 10_000, 100_000];
  const table: Array<Record<string, unknown>> = [];
  const pick = (kind: string, cadence: string, path: string) =>
    runs.filter((r) => r.kind === kind && r.cadence === cadence && r.path === path);
  const cell = (kind: string, cadence: keyof typeof STAGES, path: string, r: number) => {
    const set = pick(kind, cadence, path);
    if (set.length === 0) return undefined;
    const mem = (m: MeasuredInterval) => cheapestReconcileMemory(m, init, rssMb).mb;
    const low = e2eMonthlyAt(set, r, (m) => e2eMonthly(m, init, mem(m)).usd.low);
    const high = e2eMonthlyAt(set, r, (m) => e2eMonthly(m, init, mem(m)).usd.high);
    const atDefault = e2eMonthlyAt(
      set,
      r,
      (m) => e2eMonthly(m, init, STAGES[cadence].reconcileMemoryMb).usd.low,
    );
    const sweep = e2eMonthlyAt(set, r, (m) => e2eMonthly(m, init, mem(m)).usd.sweep);
    return { low, high, atDefault, sweep, memoryMb: mem(set[set.length - 1] as MeasuredInterval) };
  };
  for (const cadence of Object.keys(STAGES) as Array<keyof typeof STAGES>)
    for (const kind of ["Queue", "VPC"])
      for (const r of sizes) {
        const warm = cell(kind, cadence, "warm", r);
        const stateless = cell(kind, cadence, "stateless", r);
        if (!warm) continue;
        table.push({ cadence, kind, resources: r, warm, stateless });
        const target =
          cadence === "production"
            ? r === 10_000
              ? 0.5
              : undefined
            : r === 10_000
              ? 1.5
              : r === 100_000
                ? pod
                : undefined;
        rows.push({
          section: "6 cost",
          metric: `${cadence}, ${kind}, ${r.toLocaleString("en-US")} resources${warm.low.measured ? " (measured)" : " (scaled)"}: stateless sweep → warm sweep, cold starts 1/function-hour … every window`,
          value: `${stateless ? `${$(stateless.low.usd)}…${$(stateless.high.usd)} → ` : ""}${$(warm.low.usd)}…${$(warm.high.usd)}`,
          target: target === undefined ? "—" : `≤ ${$(target)}`,
          pass: target === undefined ? undefined : warm.high.usd <= target,
          range: `reconcile at ${warm.memoryMb} MB (the stage's default: ${$(warm.atDefault.usd)}); warm sweep ${$(warm.sweep.usd)}${stateless ? ` (stateless ${$(stateless.sweep.usd)})` : ""}; sweep target ≤ $1 at 100k`,
        });
      }
  const leading: Row[] = sizes.map((r) => {
    const fig = (cadence: keyof typeof STAGES) =>
      ["VPC", "Queue"]
        .map((kind) => {
          const c = cell(kind, cadence, "warm", r);
          return c ? `${kind} ${$(c.low.usd)}–${$(c.high.usd)}${c.low.measured ? "" : "*"}` : `${kind} —`;
        })
        .join(", ");
    return {
      section: "0 summary",
      metric: `${r.toLocaleString("en-US")} resources a month: default production | 5-min checks | one provider pod (memory / CPU)`,
      value: `${fig("production")} | ${fig("5-min checks")} | ${$(pod)} / ${$(byCpu)}`,
      target: r === 10_000 ? "production ≤ $0.50, 5-min ≤ $1.50" : r === 100_000 ? `5-min < ${$(pod)}` : "—",
      pass: undefined,
      range:
        "warm sweep, cheapest reconcile memory; cold starts 1/function-hour – every window; * scaled from the measured sizes",
    };
  });
  return {
    rows,
    leading,
    result: { formula: FORMULA_E2E, init, rssMb, stages: STAGES, table },
  };
}
