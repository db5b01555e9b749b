// 7. Batched drift checks, side by side in one run: one drift check of every in-sync resource through the
// per-key path (the sweep sends one message per key; the worker GETs each object and observes it) and the
// batched path (the sweep sends batch messages; the worker reads the sweep's page once and checks with the
// kind's list call, or one observe each for kinds without one). Two kinds: SQS Queue (no list call returns
// a queue's attributes: per resource) and EC2 VPC (DescribeVpcs by id filter, 200 per call). Cloud calls
// are counted on the wire (the recording proxy), API-server requests by Kube's counters (the sweep's and the
// worker's), CPU by process.cpuUsage() around the worker part. Queue requests and invocations follow from
// the message counts with the Lambda/SQS rules stated in FORMULA_BATCH.
import { CreateVpcCommand, DeleteVpcCommand, EC2Client } from "@aws-sdk/client-ec2";
import { awsKinds, awsProviderConfigKinds } from "../../functions/aws/kinds.ts";
import { VPC } from "../../shared/api/aws/ec2.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import { Annotations, type ResourceType } from "../../shared/api/meta.ts";
import { Kube, type KubeObject } from "../../shared/kube/client.ts";
import { sweep } from "../../shared/pipeline/sweep.ts";
import type { ReconcileMessage } from "../../shared/queue/message.ts";
import type { SendResult } from "../../shared/queue/port.ts";
import { noopLogger } from "../../shared/reconciler/contract.ts";
import { KindRegistry } from "../../shared/reconciler/registry.ts";
import { type BatchItem, reconcileBatch } from "../../shared/worker/core.ts";
import { createWorker } from "../../shared/worker/worker.ts";
import { inParallel } from "../../test/support/env.ts";
import { Reconciler } from "../../test/support/routed.ts";
import type { BenchContext } from "../lib/context.ts";
import { BENCH_LABEL, SET_LABEL, WRITE_CONCURRENCY } from "../lib/fixtures.ts";
import type { Row } from "../lib/report.ts";
import { logNormalLatency } from "../lib/wire.ts";

/** Lambda's SQS event source hands a function at most this many records per invocation (serverless.yml). */
const RECORDS_PER_INVOCATION = 10;

export interface PathResult {
  path: "per-key" | "batched";
  kind: string;
  resources: number;
  messages: number;
  keysPerMessage: number;
  cloudCalls: Record<string, number>;
  api: { gets: number; lists: number; writes: number };
  /** SQS requests: sends in batches of 10, and (conservatively) one receive and one delete per message
   * for batch messages, per 10 for single-key ones (Lambda receives up to 10 when the queue is busy). */
  queueRequests: number;
  invocations: number;
  followUps: number;
  workerCpuMs: number;
  workerWallMs: number;
  sweepMs: number;
  /** One LIST of a page of up to 1,000 of these objects (median of 3), ms: what a batch message re-reads. */
  pageListMs: number;
  allSettled: boolean;
  /** The same check again with the cloud's answers held to a log-normal latency (wire.ts), per median. */
  atLatency: Array<{ medianMs: number; workerWallMs: number; workerCpuMs: number }>;
}

/** Cloud answer-time medians of the sensitivity runs (ms): the figures are assumptions, hence three. */
export const LATENCY_MEDIANS_MS = [10, 30, 100] as const;
/** The median the cost model takes as its central case. */
export const CENTRAL_LATENCY_MS = 30;

export const FORMULA_BATCH = [
  "per-key: one message per due key; SQS = ⌈M/10⌉ SendMessageBatch + ⌈M/10⌉ receives + ⌈M/10⌉ DeleteMessageBatch; invocations = ⌈M/10⌉",
  "batched: SQS = ⌈M/10⌉ sends + M receives + M deletes (one batch message per invocation: a sweep sends few, far apart); invocations = M",
  "per resource = that ÷ the resources checked; follow-ups (single-key messages a batch hands back) are counted as messages too",
];

function queueRequests(path: PathResult["path"], messages: number): number {
  const sends = Math.ceil(messages / 10);
  return path === "per-key" ? 3 * sends : sends + 2 * messages;
}

/** Creates `n` VPCs in moto (straight, not through the proxy) and adopts them as in-sync VPC objects. */
export async function setupVpcs(ctx: BenchContext, n: number) {
  const ec2 = new EC2Client({
    region: "us-east-1",
    endpoint: ctx.env.AWS_ENDPOINT_URL,
    credentials: { accessKeyId: "testing", secretAccessKey: "testing-secret-value" },
  });
  const names = Array.from({ length: n }, (_, i) => `${ctx.run}-v${i}`);
  const ids = new Map<string, string>();
  await inParallel(names, WRITE_CONCURRENCY, async (name) => {
    const i = names.indexOf(name);
    const cidrBlock = `10.${Math.floor(i / 250) % 250}.${i % 250}.0/24`;
    const out = await ec2.send(new CreateVpcCommand({ CidrBlock: cidrBlock }));
    const id = out.Vpc?.VpcId ?? "";
    ids.set(name, id);
    await ctx.kube.create<KubeObject>(VPC, {
      apiVersion: VPC.apiVersion,
      kind: VPC.kind,
      metadata: {
        name,
        labels: { [BENCH_LABEL]: ctx.run, [SET_LABEL]: "vpc" },
        annotations: { [Annotations.externalName]: id },
      },
      spec: {
        forProvider: { region: "us-east-1", cidrBlock },
        providerConfigRef: { name: ctx.providerConfig },
      },
    });
  });
  const setup = new Reconciler(ctx.kube, new KindRegistry(awsKinds), { rateLimit: false });
  // Two passes: adopt (late-initialise, Ready), then a pass that finds everything in sync.
  for (let pass = 0; pass < 3; pass++) {
    await inParallel(names, 16, (name) =>
      setup.reconcile({ apiVersion: VPC.apiVersion, kind: VPC.kind, name }),
    );
  }
  const cleanup = async () => {
    await inParallel(names, WRITE_CONCURRENCY, async (name) => {
      await ctx.kube.patch(VPC, name, { metadata: { finalizers: null } }).catch(() => undefined);
      await ctx.kube.delete(VPC, name).catch(() => undefined);
    });
    await inParallel([...ids.values()], 16, (VpcId) =>
      ec2.send(new DeleteVpcCommand({ VpcId })).catch(() => undefined),
    );
  };
  return { names, cleanup };
}

/**
 * A sweep's and a reconcile function's clients, each with its own request counters, the worker as the
 * reconcile function makes it (rate limit off: the bench measures work, not the limiter), and a producer
 * that collects the follow-up messages a batch hands back.
 */
export function benchFunctions(ctx: BenchContext) {
  const sweepKube = new Kube(ctx.kc);
  const workerKube = new Kube(ctx.kc);
  const worker = createWorker({
    kube: workerKube,
    kinds: awsKinds,
    providerConfigKinds: awsProviderConfigKinds,
    logger: noopLogger,
    rateLimit: false,
  });
  const followUps: ReconcileMessage[] = [];
  const producer = {
    async send(messages: readonly ReconcileMessage[]): Promise<SendResult> {
      followUps.push(...messages);
      return { sent: messages.length, failed: [] };
    },
  };
  return { sweepKube, workerKube, worker, followUps, producer };
}

/** A stateless sweep of every object matching `selector`, its messages collected. */
async function sweepEverything(
  kube: Kube,
  type: ResourceType & { apiVersion: string },
  selector: string,
  batch: boolean,
) {
  const messages: ReconcileMessage[] = [];
  const swept = await sweep({
    kube,
    types: [type],
    sink: {
      async send(m) {
        messages.push(...m);
        return { sent: m.length, failed: [] };
      },
    },
    // A poll interval no longer than the schedule makes every object due: the whole set is checked.
    scheduleMs: 60_000,
    defaultPollMs: 60_000,
    batch,
    labelSelector: selector,
  });
  return { messages, swept };
}

/**
 * The product's own verdict on a set before a measurement: one batched drift check of every object matching
 * `selector` (a stateless sweep with every object due, each message through the reconcile function's batch
 * path). Returns the names it did not find in sync: handed back as follow-ups, or sent alone (attention).
 */
export async function notInSync(
  ctx: BenchContext,
  type: ResourceType & { apiVersion: string },
  selector: string,
): Promise<{ checked: number; names: string[] }> {
  const { sweepKube, worker, followUps, producer } = benchFunctions(ctx);
  const { messages } = await sweepEverything(sweepKube, type, selector, true);
  const names = new Set<string>();
  let checked = 0;
  await inParallel(messages, 4, async (m) => {
    checked += m.batch ? m.batch.items.length : 1;
    if (!m.batch) names.add(m.name);
    await reconcileBatch(
      worker.reconcile,
      [
        {
          id: "0",
          key: { apiVersion: m.apiVersion, kind: m.kind, name: m.name },
          ...(m.batch ? { batch: { apiVersion: m.apiVersion, kind: m.kind, batch: m.batch } } : {}),
        },
      ],
      { concurrency: ctx.sizes.concurrency, checkBatch: worker.checkBatch(producer) },
    );
  });
  for (const f of followUps) names.add(f.name);
  return { checked, names: [...names] };
}

/** One drift check of every object matching `selector`, through one path, as Lambda would run it. */
async function checkOnce(
  ctx: BenchContext,
  type: ResourceType & { apiVersion: string },
  selector: string,
  path: PathResult["path"],
): Promise<PathResult> {
  const { sweepKube, workerKube, worker, followUps, producer } = benchFunctions(ctx);
  const run = async (count: boolean) => {
    sweepKube.resetStats();
    workerKube.resetStats();
    const sweepStarted = performance.now();
    const { messages, swept } = await sweepEverything(sweepKube, type, selector, path === "batched");
    const sweepMs = performance.now() - sweepStarted;
    const mark = ctx.proxy.mark();
    const cpu = process.cpuUsage();
    const started = performance.now();
    let settled = true;
    for (let at = 0; at < messages.length; at += RECORDS_PER_INVOCATION) {
      const items: BatchItem[] = messages.slice(at, at + RECORDS_PER_INVOCATION).map((m, i) => ({
        id: String(at + i),
        key: { apiVersion: m.apiVersion, kind: m.kind, name: m.name },
        ...(m.batch ? { batch: { apiVersion: m.apiVersion, kind: m.kind, batch: m.batch } } : {}),
      }));
      const results = await reconcileBatch(worker.reconcile, items, {
        concurrency: ctx.sizes.concurrency,
        checkBatch: worker.checkBatch(producer),
      });
      if (results.some((r) => r.outcome.kind !== "done")) settled = false;
    }
    const workerWallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    if (!count) return undefined;
    const n = swept.listed;
    const all = messages.length + followUps.length;
    const api = {
      gets: sweepKube.stats.gets + workerKube.stats.gets,
      lists: sweepKube.stats.lists + workerKube.stats.lists,
      writes: sweepKube.stats.writes + workerKube.stats.writes,
    };
    const cloudCalls = ctx.proxy.countSince(mark);
    // Timed apart from the counts above: what one batch message's page read costs.
    const listTimes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      await sweepKube.list(type, { limit: 1000, labelSelector: selector });
      listTimes.push(performance.now() - t);
    }
    const pageListMs = listTimes.sort((a, b) => a - b)[1] ?? 0;
    return {
      path,
      kind: type.kind,
      resources: n,
      messages: messages.length,
      keysPerMessage: n / Math.max(1, messages.length),
      cloudCalls,
      api,
      queueRequests: queueRequests(path, messages.length) + queueRequests("per-key", followUps.length),
      invocations:
        path === "per-key" ? Math.ceil(all / RECORDS_PER_INVOCATION) : messages.length + followUps.length,
      followUps: followUps.length,
      workerCpuMs: (used.user + used.system) / 1000,
      workerWallMs,
      sweepMs,
      pageListMs,
      allSettled: settled && followUps.length === 0 && swept.batched === (path === "batched" ? n : 0),
      atLatency: [],
    } satisfies PathResult;
  };
  // The first run warms the container (ProviderConfig and credentials cached, clients made): not counted.
  await run(false);
  followUps.length = 0;
  const result = (await run(true)) as PathResult;
  // The same check against a cloud that answers concurrently after a latency (counts as above, wall time
  // as deployed): moto alone serves one request at a time, which a real cloud does not.
  try {
    for (const medianMs of LATENCY_MEDIANS_MS) {
      ctx.proxy.latency = logNormalLatency(medianMs);
      followUps.length = 0;
      const r = await run(true);
      if (r) result.atLatency.push({ medianMs, workerWallMs: r.workerWallMs, workerCpuMs: r.workerCpuMs });
    }
  } finally {
    ctx.proxy.latency = undefined;
  }
  return result;
}

export async function measureDriftBatch(ctx: BenchContext) {
  const vpcs = await setupVpcs(ctx, ctx.sizes.insync);
  ctx.log(`drift batch: ${vpcs.names.length} in-sync VPCs adopted`);
  const results: PathResult[] = [];
  try {
    const sets = [
      { type: Queue, selector: `${BENCH_LABEL}=${ctx.run},${SET_LABEL}=insync` },
      { type: VPC, selector: `${BENCH_LABEL}=${ctx.run},${SET_LABEL}=vpc` },
    ];
    for (const set of sets) {
      for (const path of ["per-key", "batched"] as const) {
        const r = await checkOnce(ctx, set.type, set.selector, path);
        results.push(r);
        ctx.log(
          `drift batch: ${r.kind} ${path}: ${r.resources} checked, ${r.messages} messages, cloud ${JSON.stringify(r.cloudCalls)}, api ${JSON.stringify(r.api)}, cpu ${r.workerCpuMs.toFixed(0)} ms, wall ${r.workerWallMs.toFixed(0)} ms`,
        );
      }
    }
  } finally {
    await vpcs.cleanup();
  }
  return { rows: rowsOf(results), result: { formula: FORMULA_BATCH, paths: results } };
}

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

function rowsOf(results: readonly PathResult[]): Row[] {
  const rows: Row[] = [];
  const f = (x: number, d = 3) => x.toFixed(d);
  for (const kind of ["Queue", "VPC"]) {
    const listKind = kind === "VPC";
    const perKey = results.find((r) => r.kind === kind && r.path === "per-key");
    const batched = results.find((r) => r.kind === kind && r.path === "batched");
    if (!perKey || !batched) continue;
    const per = (r: PathResult, x: number) => x / Math.max(1, r.resources);
    const side = (g: (r: PathResult) => number, d = 3) => `${f(g(perKey), d)} → ${f(g(batched), d)}`;
    const n = batched.resources;
    const label = `${kind} ×${n.toLocaleString("en-US")}, per-key → batched`;
    rows.push(
      {
        section: "7 batch",
        metric: `${label}: cloud calls per in-sync resource (on the wire)`,
        value: `${side((r) => per(r, sum(r.cloudCalls)))} (${Object.entries(batched.cloudCalls)
          .map(([a, c]) => `${c} ${a.split(".").at(-1)}`)
          .join(", ")})`,
        target: listKind ? "≤ 0.05 batched" : "= 1 batched",
        pass: listKind
          ? per(batched, sum(batched.cloudCalls)) <= 0.05
          : per(batched, sum(batched.cloudCalls)) <= 1.0001,
        range: "—",
      },
      {
        section: "7 batch",
        metric: `${label}: API-server requests (GET + LIST) per resource, sweep included`,
        value: side((r) => per(r, r.api.gets + r.api.lists), 4),
        target: "≤ 0.01 batched",
        pass: per(batched, batched.api.gets + batched.api.lists) <= 0.01,
        range: `batched: ${batched.api.lists} LIST, ${batched.api.gets} GET for ${n}`,
      },
      {
        section: "7 batch",
        metric: `${label}: API-server writes per resource`,
        value: side((r) => per(r, r.api.writes), 2),
        target: "0",
        pass: batched.api.writes === 0 && perKey.api.writes === 0 && batched.allSettled,
        range: "—",
      },
      {
        section: "7 batch",
        metric: `${label}: queue requests per resource (${batched.messages} batch messages, ${f(batched.keysPerMessage, 0)} keys each)`,
        value: side((r) => per(r, r.queueRequests), 4),
        target: "≤ 0.02 batched",
        pass: per(batched, batched.queueRequests) <= 0.02,
        range: "modelled from message counts (FORMULA_BATCH)",
      },
      {
        section: "7 batch",
        metric: `${label}: function invocations per resource`,
        value: side((r) => per(r, r.invocations), 4),
        target: "—",
        pass: undefined,
        range: "—",
      },
      {
        section: "7 batch",
        metric: `${label}: worker CPU-ms (wall ms) per resource`,
        value: `${f(per(perKey, perKey.workerCpuMs), 2)} (${f(per(perKey, perKey.workerWallMs), 2)}) → ${f(per(batched, batched.workerCpuMs), 2)} (${f(per(batched, batched.workerWallMs), 2)})`,
        target: "—",
        pass: undefined,
        range: `sweep ${perKey.sweepMs.toFixed(0)} → ${batched.sweepMs.toFixed(0)} ms`,
      },
      {
        section: "7 batch",
        metric: `${label}: worker wall ms per resource against a cloud answering in ${LATENCY_MEDIANS_MS.join(" / ")} ms (median, log-normal σ 0.5)`,
        value: `${perKey.atLatency.map((x) => f(per(perKey, x.workerWallMs), 2)).join(" / ")} → ${batched.atLatency.map((x) => f(per(batched, x.workerWallMs), 2)).join(" / ")}`,
        target: "—",
        pass: undefined,
        range: `moto alone: ${f(per(perKey, perKey.workerWallMs), 2)} → ${f(per(batched, batched.workerWallMs), 2)}`,
      },
    );
  }
  return rows;
}
