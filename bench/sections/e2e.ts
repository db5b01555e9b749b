// 17. End to end at N in-sync resources, counted, not scaled (issue 33 item 4): the sweep function as it runs
// (its window claimed in the Lease, `claimedSweep`; then `runScheduledSweep` with batches), each message it
// sends checked by the reconcile function's batch path (`reconcileBatch` + `checkBatch`) against moto behind
// the recording proxy holding every answer to a cloud latency (wire.ts, log-normal, median 30 ms), over
// every window of one poll interval in virtual time — so each object is checked exactly once. Two kinds:
// SQS Queue (per resource: one GetQueueAttributes each) and EC2 VPC (a list kind: DescribeVpcs by 200 ids).
// Two cadences: 5-minute checks (sweep every minute, serverless.yml's dev stage) and the default production
// configuration (sweep every 5 minutes, 1 h safety poll: the prod stage). Two sweep paths side by side: the
// warm sweep (an index kept between runs: one watch per kind, due slots) and the stateless sweep (lists
// every object every run; batch messages name a page the worker re-reads).
//
// Counted: cloud calls on the wire, API-server requests by operation (sweep, Lease, worker), messages and
// the keys they carry. Timed (load-dependent): each sweep run's wall and CPU, each invocation's wall and
// CPU. Queue requests follow from the counted messages by FORMULA_BATCH's rules (drift-batch.ts): the
// messages go to a sink, not to moto's SQS, whose SendMessageBatch slows as a queue fills.
import { loadavg } from "node:os";
import path from "node:path";
import { BUNDLES, buildBundle, coldImport } from "../../infra/build/build.ts";
import { VPC } from "../../shared/api/aws/ec2.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import type { ResourceType } from "../../shared/api/meta.ts";
import { Kube, type KubeStats } from "../../shared/kube/client.ts";
import { claimedSweep, runScheduledSweep } from "../../shared/pipeline/functions.ts";
import type { SweepResult } from "../../shared/pipeline/sweep.ts";
import { SweepIndex } from "../../shared/pipeline/sweep-index.ts";
import { LEASE } from "../../shared/pipeline/sweep-lease.ts";
import { encodeMessage, type ReconcileMessage } from "../../shared/queue/message.ts";
import type { SendResult } from "../../shared/queue/port.ts";
import { noopLogger } from "../../shared/reconciler/contract.ts";
import { type BatchItem, reconcileBatch } from "../../shared/worker/core.ts";
import type { BenchContext } from "../lib/context.ts";
import { BENCH_LABEL, SET_LABEL } from "../lib/fixtures.ts";
import { InvocationProfiler } from "../lib/profile.ts";
import { ms, type Row } from "../lib/report.ts";
import { summarize } from "../lib/stats.ts";
import { logNormalLatency } from "../lib/wire.ts";
import { e2eCostRows, type MeasuredInterval } from "./cost.ts";
import { benchFunctions, CENTRAL_LATENCY_MS, setupVpcs } from "./drift-batch.ts";

/**
 * The reconcile container's RSS after 10k reconciles (MB), the floor of its memory size: section 4 of the
 * full run of 2026-11-23 (bench/results/latest.json, scale.points[1].worker.peakMb) — not re-measured here.
 */
export const RECONCILE_RSS_MB = 140.4;
/** Fresh processes importing aws-reconcile: its INIT. */
const INIT_SAMPLES = 5;

const M = 60_000;
const RECORDS_PER_INVOCATION = 10;

/** serverless.yml: dev stage (rate(1 minute), 5m poll) and prod stage (rate(5 minutes), 1h poll). */
export const CADENCES = [
  { name: "5-min checks", scheduleMs: M, pollMs: 5 * M },
  { name: "production", scheduleMs: 5 * M, pollMs: 60 * M },
] as const;
export type CadenceName = (typeof CADENCES)[number]["name"];

export interface E2eRun extends MeasuredInterval {
  kind: string;
  cadence: CadenceName;
  path: "warm" | "stateless";
  resources: number;
  scheduleMs: number;
  pollMs: number;
  /** Windows counted: one poll interval. */
  windows: number;
  /** Objects checked over the counted windows (batched keys + single-key messages). */
  checked: number;
  messages: number;
  followUps: number;
  invocations: number;
  cloudCalls: Record<string, number>;
  /** API-server requests over the counted windows, by operation (sweep, Lease and worker together). */
  api: Record<string, number>;
  apiTotal: number;
  /** The same requests per counted window, by operation: where each window's requests go. */
  apiByWindow: Record<string, number>[];
  /**
   * Relists after 410 Gone per counted window: writes of other Queues (another section, another bench on
   * the same API server) pushed the sweep's resume point out of the watch cache. The production path makes
   * these only under such churn; a window with one is reported as disturbed, not clean.
   */
  relistsByWindow: number[];
  leaseRequests: number;
  queueRequests: number;
  /** Each counted window's sweep: wall and CPU (ms). */
  sweepWallMs: number[];
  sweepCpuMs: number[];
  /** The uncounted first run: the cold start (index built by a full list) or the stateless warm-up. */
  firstRun: { wallMs: number; cpuMs: number; lists: number; listed: number };
  /** Each invocation's wall and CPU (ms), and the keys it checked. */
  invocationWallMs: number[];
  invocationCpuMs: number[];
  /**
   * The recording proxy's CPU during each invocation, ms, already taken out of invocationCpuMs: with the
   * proxy in its own thread (WireProxy.startThreaded, `--only e2e`); all 0 when it shares the thread (the
   * full run), where invocationCpuMs still holds the proxy's work on every cloud call.
   */
  invocationProxyCpuMs: number[];
  invocationKeys: number[];
  allSettled: boolean;
  loadAtStart: number[];
  loadAtEnd: number[];
}

const sumOf = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
const load = () => loadavg().map((x) => Math.round(x * 100) / 100);

function addStats(into: Record<string, number>, s: KubeStats) {
  for (const [op, n] of Object.entries(s.byOperation)) into[op] = (into[op] ?? 0) + n;
}

/** SQS requests for the messages of one window (FORMULA_BATCH): sends by 10; a batch message is its own
 * receive and delete, single-key messages (follow-ups) ride 10 to a receive and a delete. */
function queueRequestsOf(batchMessages: number, singles: number): number {
  return Math.ceil(batchMessages / 10) + 2 * batchMessages + 3 * Math.ceil(singles / RECORDS_PER_INVOCATION);
}

async function runCadence(
  ctx: BenchContext,
  type: ResourceType & { apiVersion: string },
  selector: string,
  cadence: (typeof CADENCES)[number],
  path: E2eRun["path"],
  profileDir?: string,
): Promise<E2eRun> {
  const loadAtStart = load();
  // --profile: the sampler runs around each counted invocation only (its cost lands in that run's CPU).
  const profiler = profileDir ? new InvocationProfiler() : undefined;
  await profiler?.open();
  // The sweep container stays warm from window to window (its index, its Lease state).
  const sweepKube = new Kube(ctx.kc);
  const lease = {
    namespace: "default",
    name: `${ctx.run}-${type.kind.toLowerCase()}-${cadence.scheduleMs / M}m-${path}`,
    holder: `${ctx.run}-e2e`,
  };
  const index =
    path === "warm"
      ? new SweepIndex({ scheduleMs: cadence.scheduleMs, defaultPollMs: cadence.pollMs })
      : undefined;
  const windows = cadence.pollMs / cadence.scheduleMs;
  // Virtual time: a window boundary well after now, one tick per window (1 s into it, as EventBridge fires).
  const t0 = (Math.floor(Date.now() / cadence.pollMs) + 1) * cadence.pollMs;
  const r: E2eRun = {
    kind: type.kind,
    cadence: cadence.name,
    path,
    resources: 0,
    scheduleMs: cadence.scheduleMs,
    pollMs: cadence.pollMs,
    windows,
    checked: 0,
    messages: 0,
    followUps: 0,
    invocations: 0,
    cloudCalls: {},
    api: {},
    apiTotal: 0,
    apiByWindow: [],
    relistsByWindow: [],
    leaseRequests: 0,
    queueRequests: 0,
    sweepWallMs: [],
    sweepCpuMs: [],
    firstRun: { wallMs: 0, cpuMs: 0, lists: 0, listed: 0 },
    invocationWallMs: [],
    invocationCpuMs: [],
    invocationProxyCpuMs: [],
    invocationKeys: [],
    allSettled: true,
    loadAtStart,
    loadAtEnd: [],
  };
  const tick = async (w: number, count: boolean) => {
    const at = t0 + w * cadence.scheduleMs + 1_000;
    const messages: ReconcileMessage[] = [];
    const sink = {
      async send(m: readonly ReconcileMessage[]): Promise<SendResult> {
        for (const x of m) encodeMessage(x);
        messages.push(...m);
        return { sent: m.length, failed: [] };
      },
    };
    sweepKube.resetStats();
    // The reconcile function's caches (ProviderConfig and Secret: 30 s) do not outlive the minutes between
    // two windows: a fresh worker per window, so each window pays its reads (one container's worth).
    const { workerKube, worker, followUps, producer } = benchFunctions(ctx);
    const cpu = process.cpuUsage();
    const started = performance.now();
    const swept: SweepResult = await claimedSweep(
      sweepKube,
      { lease, scheduleMs: cadence.scheduleMs, scheduledAt: new Date(at), logger: noopLogger },
      (handledUpTo) =>
        runScheduledSweep({
          kube: sweepKube,
          types: [type],
          producer: sink,
          scheduleMs: cadence.scheduleMs,
          defaultPollMs: cadence.pollMs,
          batch: true,
          logger: noopLogger,
          scheduledAt: new Date(at),
          labelSelector: selector,
          index,
          handledUpTo,
        }),
    );
    const sweepWall = performance.now() - started;
    const sweepCpu = process.cpuUsage(cpu);
    if (swept.skipped) throw new Error(`e2e: the sweep of window ${w} was skipped (${swept.skipped})`);
    if (!count) {
      r.firstRun = {
        wallMs: sweepWall,
        cpuMs: (sweepCpu.user + sweepCpu.system) / 1000,
        lists: sweepKube.stats.lists,
        listed: swept.listed,
      };
    } else {
      r.sweepWallMs.push(sweepWall);
      r.sweepCpuMs.push((sweepCpu.user + sweepCpu.system) / 1000);
    }
    // The reconcile function: a batch message is one invocation; single-key messages 10 to an invocation.
    await ctx.proxy.settled();
    const mark = ctx.proxy.mark();
    const batches = messages.filter((m) => m.batch);
    const singles = messages.filter((m) => !m.batch);
    const invocations: ReconcileMessage[][] = batches.map((m) => [m]);
    for (let i = 0; i < singles.length; i += RECORDS_PER_INVOCATION)
      invocations.push(singles.slice(i, i + RECORDS_PER_INVOCATION));
    let checked = 0;
    for (const inv of invocations) {
      const items: BatchItem[] = inv.map((m, i) => ({
        id: String(i),
        key: { apiVersion: m.apiVersion, kind: m.kind, name: m.name },
        ...(m.batch ? { batch: { apiVersion: m.apiVersion, kind: m.kind, batch: m.batch } } : {}),
      }));
      if (count) await profiler?.start();
      const proxyBefore = await ctx.proxy.cpuMs();
      const c = process.cpuUsage();
      const t = performance.now();
      const results = await reconcileBatch(worker.reconcile, items, {
        concurrency: ctx.sizes.concurrency,
        checkBatch: worker.checkBatch(producer),
      });
      const wall = performance.now() - t;
      const used = process.cpuUsage(c);
      // The proxy's thread (moto's stand-in for the cloud) is not the function's: its CPU is taken out.
      const proxyCpu = (await ctx.proxy.cpuMs()) - proxyBefore;
      if (count) await profiler?.stop();
      const keys = inv.reduce((n, m) => n + (m.batch ? m.batch.items.length : 1), 0);
      checked += keys;
      if (results.some((x) => x.outcome.kind !== "done")) r.allSettled = false;
      if (count) {
        r.invocationWallMs.push(wall);
        r.invocationCpuMs.push((used.user + used.system) / 1000 - proxyCpu);
        r.invocationProxyCpuMs.push(proxyCpu);
        r.invocationKeys.push(keys);
      }
    }
    if (!count) return;
    await ctx.proxy.settled();
    if (followUps.length > 0) r.allSettled = false;
    r.checked += checked;
    r.messages += messages.length;
    r.followUps += followUps.length;
    r.invocations += invocations.length + Math.ceil(followUps.length / RECORDS_PER_INVOCATION);
    r.queueRequests += queueRequestsOf(batches.length, singles.length + followUps.length);
    for (const [a, n] of Object.entries(ctx.proxy.countSince(mark)))
      r.cloudCalls[a] = (r.cloudCalls[a] ?? 0) + n;
    const inWindow: Record<string, number> = {};
    addStats(inWindow, sweepKube.stats);
    addStats(inWindow, workerKube.stats);
    r.apiByWindow.push(inWindow);
    r.relistsByWindow.push(swept.relists);
    addStats(r.api, sweepKube.stats);
    addStats(r.api, workerKube.stats);
  };
  ctx.proxy.latency = logNormalLatency(CENTRAL_LATENCY_MS);
  try {
    // Window 0 uncounted: the warm path's cold start (a full list into the index), the stateless path's
    // warm-up (ProviderConfig and credentials cached). Then one poll interval, counted.
    await tick(0, false);
    for (let w = 1; w <= windows; w++) await tick(w, true);
  } finally {
    ctx.proxy.latency = undefined;
    profiler?.close();
    await sweepKube.delete(LEASE, lease.name, lease.namespace).catch(() => undefined);
  }
  r.resources = r.checked;
  if (profiler && profileDir) {
    const name = `${type.kind}-${cadence.scheduleMs / M}m-${path}`;
    const s = profiler.write(profileDir, name, r.checked);
    ctx.log(
      `e2e: profile ${name}: ${s.sampledMs} ms sampled over ${s.checked} checked; ${s.byPart
        .slice(0, 8)
        .map((p) => `${p.name} ${p.usPerResource} µs`)
        .join(", ")}`,
    );
  }
  r.apiTotal = sumOf(r.api);
  r.leaseRequests = Object.entries(r.api)
    .filter(([op]) => op.endsWith(" Lease"))
    .reduce((n, [, c]) => n + c, 0);
  r.loadAtEnd = load();
  return r;
}

export async function measureEndToEnd(
  ctx: BenchContext,
  n: number,
  paths: ReadonlyArray<E2eRun["path"]> = ["warm", "stateless"],
  only: { kinds?: readonly string[]; cadences?: readonly string[]; profileDir?: string } = {},
) {
  const kinds = only.kinds ?? ["Queue", "VPC"];
  const cadences = CADENCES.filter((c) => (only.cadences ?? [c.name]).includes(c.name));
  for (const k of kinds)
    if (k !== "Queue" && k !== "VPC") throw new Error(`e2e: unknown kind ${k} (Queue, VPC)`);
  if (cadences.length === 0)
    throw new Error(`e2e: no cadence among ${CADENCES.map((c) => c.name).join(", ")}`);
  // INIT first, while the stack is idle: aws-reconcile built as deployed, imported in fresh processes.
  const spec = BUNDLES.find((b) => b.name === "aws-reconcile");
  if (!spec) throw new Error("no aws-reconcile bundle in infra/build/build.ts");
  const bundle = await buildBundle(spec, path.join(ctx.distDir, "aws-reconcile.mjs"));
  const samples = Array.from({ length: INIT_SAMPLES }, () => coldImport(bundle.file, 1));
  const med = (xs: number[]) => summarize(xs).median;
  const init = { wallMs: med(samples.map((x) => x.wallMs)), cpuMs: med(samples.map((x) => x.cpuMs)) };
  ctx.log(
    `e2e: aws-reconcile cold import ${init.wallMs.toFixed(0)} ms wall, ${init.cpuMs.toFixed(0)} ms CPU (load ${load().join(" ")})`,
  );
  const started = performance.now();
  const vpcs = await setupVpcs(ctx, kinds.includes("VPC") ? n : 0);
  ctx.log(
    `e2e: ${vpcs.names.length} in-sync VPCs adopted in ${((performance.now() - started) / 1000).toFixed(0)} s (load ${load().join(" ")})`,
  );
  const runs: E2eRun[] = [];
  try {
    const sets = [
      { type: Queue, selector: `${BENCH_LABEL}=${ctx.run},${SET_LABEL}=insync` },
      { type: VPC, selector: `${BENCH_LABEL}=${ctx.run},${SET_LABEL}=vpc` },
    ].filter((s) => kinds.includes(s.type.kind));
    for (const set of sets)
      for (const cadence of cadences)
        for (const path of paths) {
          const r = await runCadence(ctx, set.type, set.selector, cadence, path, only.profileDir);
          runs.push(r);
          ctx.log(
            `e2e: ${r.kind} ${r.cadence} ${r.path}: ${r.checked} checked in ${r.windows} windows, ${r.messages} messages, cloud ${JSON.stringify(r.cloudCalls)}, api ${JSON.stringify(r.api)}, sweep ${r.sweepWallMs.map((x) => x.toFixed(0)).join(",")} ms, first ${r.firstRun.wallMs.toFixed(0)} ms, load ${r.loadAtEnd.join(" ")}`,
          );
        }
  } finally {
    await vpcs.cleanup();
  }
  const cost = e2eCostRows(runs, init, RECONCILE_RSS_MB);
  return {
    rows: [...cost.leading, ...e2eRows(runs, n), ...cost.rows],
    result: { n, latencyMedianMs: CENTRAL_LATENCY_MS, init, initSamples: samples, runs, cost: cost.result },
  };
}

const per = (r: E2eRun, x: number) => x / Math.max(1, r.checked);

/** Each operation's requests per counted window: median (max when it differs), e.g. "patch Lease 2, list Queue 1 (2)". */
function windowTable(r: E2eRun): string {
  const ops = [...new Set(r.apiByWindow.flatMap((w) => Object.keys(w)))];
  const perWindow = (op: string) => r.apiByWindow.map((w) => w[op] ?? 0);
  const total = r.apiByWindow.map(sumOf);
  const cell = (xs: number[]) => {
    const med = summarize(xs).median;
    const max = Math.max(...xs);
    return max === med ? `${med}` : `${med} (${max})`;
  };
  return [...ops.map((op) => `${op} ${cell(perWindow(op))}`), `total ${cell(total)}`].join(", ");
}

export function e2eRows(runs: readonly E2eRun[], n: number): Row[] {
  const rows: Row[] = [];
  const f = (x: number, d = 4) => x.toFixed(d);
  for (const kind of ["Queue", "VPC"])
    for (const cadence of CADENCES) {
      const warm = runs.find((r) => r.kind === kind && r.cadence === cadence.name && r.path === "warm");
      if (!warm) continue;
      // Without a stateless run (--paths warm) its side shows the warm figure alone.
      const measured = runs.find(
        (r) => r.kind === kind && r.cadence === cadence.name && r.path === "stateless",
      );
      const stateless = measured ?? warm;
      const label = `${kind} ×${n.toLocaleString("en-US")}, ${cadence.name} (sweep ${cadence.scheduleMs / M} min, poll ${cadence.pollMs / M} min), ${measured ? "stateless → warm" : "warm"}`;
      const side = (g: (r: E2eRun) => number, d = 4) =>
        measured ? `${f(g(stateless), d)} → ${f(g(warm), d)}` : f(g(warm), d);
      const wallPerKey = (r: E2eRun) =>
        r.invocationWallMs.reduce((a, b) => a + b, 0) / Math.max(1, r.checked);
      const cpuPerKey = (r: E2eRun) => r.invocationCpuMs.reduce((a, b) => a + b, 0) / Math.max(1, r.checked);
      rows.push(
        {
          section: "17 e2e",
          metric: `${label}: checked over one interval (each object once), cloud calls per resource`,
          value: `${warm.checked} / ${stateless.checked}; ${side((r) => per(r, sumOf(r.cloudCalls)))}`,
          target: kind === "VPC" ? "≤ 0.05" : "= 1",
          pass:
            warm.checked === n &&
            stateless.checked === n &&
            warm.allSettled &&
            stateless.allSettled &&
            per(warm, sumOf(warm.cloudCalls)) <= (kind === "VPC" ? 0.05 : 1.0001),
          range: Object.entries(warm.cloudCalls)
            .map(([a, c]) => `${c} ${a.split(".").at(-1)}`)
            .join(", "),
        },
        {
          section: "17 e2e",
          metric: `${label}: API-server requests per checked resource (sweep + Lease + worker)`,
          value: side((r) => per(r, r.apiTotal)),
          target: cadence.name === "production" ? "≤ 0.01" : "—",
          pass: cadence.name === "production" ? per(warm, warm.apiTotal) <= 0.01 : undefined,
          range: `warm: ${Object.entries(warm.api)
            .map(([op, c]) => `${c} ${op}`)
            .join(", ")}; Lease ${f(per(warm, warm.leaseRequests))}`,
        },
        {
          section: "17 e2e",
          metric: `${label}: API-server requests per window (warm; median, max), by operation`,
          value: windowTable(warm),
          target: "—",
          pass: undefined,
          range: `${warm.relistsByWindow.filter((x) => x > 0).length} of ${warm.windows} windows disturbed (410 relist); ${f(warm.checked / warm.windows, 0)} checked per window`,
        },
        {
          section: "17 e2e",
          metric: `${label}: queue requests / invocations per checked resource`,
          value: `${side((r) => per(r, r.queueRequests))} / ${side((r) => per(r, r.invocations))}`,
          target: "—",
          pass: undefined,
          range: `${warm.messages} messages (${warm.followUps} follow-ups); FORMULA_BATCH`,
        },
        {
          section: "17 e2e",
          metric: `${label}: sweep run wall (CPU) median; first run (cold start: full list)`,
          value: `${measured ? `${ms(summarize(stateless.sweepWallMs).median)} (${ms(summarize(stateless.sweepCpuMs).median)}) → ` : ""}${ms(summarize(warm.sweepWallMs).median)} (${ms(summarize(warm.sweepCpuMs).median)})`,
          target: "—",
          pass: undefined,
          range: `cold start ${ms(warm.firstRun.wallMs)}, ${warm.firstRun.lists} LISTs; load ${warm.loadAtStart.join(" ")} → ${warm.loadAtEnd.join(" ")}`,
        },
        {
          section: "17 e2e",
          metric: `${label}: reconcile function wall (CPU) ms per checked resource, cloud ${CENTRAL_LATENCY_MS} ms median`,
          value: `${measured ? `${f(wallPerKey(stateless), 2)} (${f(cpuPerKey(stateless), 2)}) → ` : ""}${f(wallPerKey(warm), 2)} (${f(cpuPerKey(warm), 2)})`,
          target: "—",
          pass: undefined,
          range: `${warm.invocations} invocations, ${Math.round(summarize(warm.invocationWallMs).median)} ms median`,
        },
      );
    }
  return rows;
}
