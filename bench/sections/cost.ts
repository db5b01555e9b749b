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
 * Billed GB-seconds per checked resource at `memoryMb`: below one vCPU the CPU part stretches by
 * 1,769 ÷ memory, the waiting part does not. Sizes under the container's RSS (plus a quarter of headroom)
 * are refused (undefined): the function would run out of memory.
 */
export function gbSecondsPerResource(m: MemoryInputs, memoryMb: number): number | undefined {
  if (memoryMb < m.rssMb * 1.25) return undefined;
  const waitMs = Math.max(0, m.wallMsPerResource - m.cpuMsPerResource);
  const cpuMs = m.cpuMsPerResource * Math.max(1, LAMBDA_MB_PER_VCPU / memoryMb);
  return ((cpuMs + waitMs) / 1000) * (memoryMb / 1024);
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
 * One table a platform team can read: monthly cost at 1k / 10k / 100k for driftless in its default
 * production configuration and at 5-minute checks (batched, the list kind and the per-resource kind), against
 * one provider pod priced by memory and by CPU. Cloud events' own cost (one message per cloud change) is
 * left out: it follows the rate of changes, not of resources.
 */
export function leadingRows(inputs: CostInputs, kinds: readonly BatchedInputs[]): Row[] {
  const $ = (x: number) => `$${x.toFixed(2)}`;
  const byCpu = (UPJET_SIZING.providerAwsAvgCores / 2) * prices.m6gLargeHour.usd * HOURS_PER_MONTH;
  const pod = ASSUMPTIONS.providerMemoryGib * nodeGibHour * HOURS_PER_MONTH;
  const rows: Row[] = [];
  for (const r of [1000, 10_000, 100_000]) {
    const prod = kinds.map(
      (b) =>
        `${b.kind} ${$(batchedMonthlyCost(inputs, b, r, PRODUCTION.intervalMin, PRODUCTION).usd.driftless)}`,
    );
    const fiveMin = kinds.map((b) => `${b.kind} ${$(batchedMonthlyCost(inputs, b, r).usd.driftless)}`);
    const prod10k = r === 10_000;
    const worst = Math.max(
      ...kinds.map((b) => batchedMonthlyCost(inputs, b, r, PRODUCTION.intervalMin, PRODUCTION).usd.driftless),
    );
    rows.push({
      section: "0 summary",
      metric: `${r.toLocaleString("en-US")} resources a month: default production (doorbell + cloud events + 1 h safety poll) | 5-min checks | one provider pod (memory / CPU)`,
      value: `${prod.join(", ")} | ${fiveMin.join(", ")} | ${$(pod)} / ${$(byCpu)}`,
      target: prod10k ? "production ≤ $0.50" : "—",
      pass: prod10k ? worst <= 0.5 : undefined,
      range: "cloud events' own messages left out (they follow changes, not resources)",
    });
  }
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
