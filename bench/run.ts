// driftless benchmarks — on demand, never part of the test suite (no timing assertions anywhere).
//
//   npm run bench             full: 1,000 in-sync queues, 200 changes per latency path, 1k and 10k resources
//   npm run bench -- --quick  quick: 100 in-sync queues, 50 changes, 200 and 1k resources (< 3 minutes)
//   --keep                    leave the benchmark's objects in the cluster and moto (for a look afterwards)
//
// Runs against the local stack (started if it is not up, and stopped again then). Prints one table row
// per metric, writes bench/results/latest.json and two SVG charts. Every object it creates carries the
// label driftless.dev/bench=<run id> and is deleted at the end, also after a failure or Ctrl-C.
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { GetQueueUrlCommand, SQSClient } from "@aws-sdk/client-sqs";
import { awsKinds } from "../functions/aws/kinds.ts";
import { BUNDLES, buildBundle } from "../infra/build/build.ts";
import { down, up } from "../infra/local/stack.ts";
import { Queue } from "../shared/api/aws/sqs.ts";
import { providerConfigs } from "../shared/api/provider-config.ts";
import { allCrds } from "../shared/crds.ts";
import { Kube, type KubeObject } from "../shared/kube/client.ts";
import { applyCrds } from "../shared/kube/crds.ts";
import { sweep } from "../shared/pipeline/sweep.ts";
import { KindRegistry } from "../shared/reconciler/registry.ts";
import { inParallel, kubeConfig } from "../test/support/env.ts";
import { ensureSqsQueue } from "../test/support/queues.ts";
import { Reconciler } from "../test/support/routed.ts";
import { cloneAdopted } from "./lib/adopt.ts";
import { HEAP_PROBE } from "./lib/children.ts";
import { type BenchContext, FULL, QUICK } from "./lib/context.ts";
import {
  countObjects,
  createCloudQueues,
  createObjects,
  createProviderConfig,
  deleteProviderConfig,
  queueObject,
  reconcileUntil,
  selectorOf,
  WRITE_CONCURRENCY,
} from "./lib/fixtures.ts";
import { formatTable, machineFacts, markdownTable, type Row, uptime } from "./lib/report.ts";
import { sleep } from "./lib/stats.ts";
import { latencyChart, rssChart } from "./lib/svg.ts";
import { WireProxy } from "./lib/wire.ts";
import { UPJET_SIZING } from "./prices.ts";
import { measureActivation, SYNTHETIC } from "./sections/activation.ts";
import { AWSCC_KINDS, AWSCC_KINDS_FULL_RUN, measureAwscc } from "./sections/awscc.ts";
import { measureAwsccBatch } from "./sections/awscc-batch.ts";
import { measureAzure } from "./sections/azure.ts";
import { measureCloudEvents } from "./sections/cloud-events.ts";
import { buildAll, measureColdStart } from "./sections/coldstart.ts";
import {
  batchedCostRows,
  costModel,
  FORMULA,
  initCostRows,
  memoryRows,
  peerReadRows,
} from "./sections/cost.ts";
import { measureDoorbell } from "./sections/doorbell.ts";
import { CENTRAL_LATENCY_MS, measureDriftBatch, notInSync } from "./sections/drift-batch.ts";
import { measureEndToEnd } from "./sections/e2e.ts";
import { measureGcp } from "./sections/gcp.ts";
import { deleteQueues, measureLatency } from "./sections/latency.ts";
import { measureOverhead } from "./sections/overhead.ts";
import {
  forwarderNodeArgs,
  forwarderNodeOptions,
  measureForwarderBaseline,
  measureForwarderPoint,
  measureScalePoint,
  measureSqsSend,
  type ScalePoint,
} from "./sections/scale.ts";
import { measureWarmSweep } from "./sections/warm-sweep.ts";
import { measureWork } from "./sections/work.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const RESULTS = path.join(ROOT, "bench/results");

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    // --only batch: setup and section 7 alone (results in bench/results/batch-only.json).
    // --only forwarder: the forwarder's RSS alone, watching nothing and after its initial sync of the two
    // scale points (results in bench/results/forwarder-only.json).
    only: { type: "string" },
    // --only e2e --size N: N in-sync resources per kind end to end (default 10,000; --quick 1,000).
    size: { type: "string" },
    // --only e2e --paths warm: the warm sweep alone (the stateless path lists every object every window).
    paths: { type: "string", default: "warm,stateless" },
    // --only e2e --kinds Queue --cadences production: a part of the matrix (a re-run after a change).
    kinds: { type: "string", default: "Queue,VPC" },
    cadences: { type: "string", default: "5-min checks,production" },
    // --only e2e --tag T: results in bench/results/e2e-only-T.json (keeps another run's file).
    tag: { type: "string" },
    // --only e2e --profile DIR: where the reconcile function's CPU goes, per kind/cadence/path (DIR/*.json).
    profile: { type: "string" },
  },
});
const quick = values.quick ?? false;
// --only cloud-events: section 9 alone, cloud event → drift corrected (bench/results/cloud-events-only.json).
// --only doorbell: setup and section 10 alone, the admission doorbell (bench/results/doorbell-only.json).
// --only activation: section 11 alone, API-server memory per CRD, without the stack (activation-only.json).
// --only awscc: section 12 alone, generated AWS kinds — generation, CRDs on fresh API servers, bundle size
// (awscc-only.json).
// --only awscc-batch: setup and section 15 alone, generated kinds' batched drift check (awscc-batch-only.json).
// --only warm-sweep: section 13 alone, the warm sweep's index at 1k (quick) or 10k objects (warm-sweep-only.json).
// --only azure: section 14 alone, the Azure reconcile bundle and its cold import with 0 and 50 generated
// kinds activated at run time (azure-only.json).
// --only e2e: section 17 alone, N in-sync Queues and VPCs end to end — sweep function (Lease, index) and
// reconcile function over one poll interval at both cadences, counted (e2e-only.json).
// --only gcp: section 16 alone, the gcp-reconcile bundle and its cold import with 0 and 50 generated Google
// kinds activated at run time, beside an empty module's (gcp-only.json).
const ONLY = [
  "batch",
  "awscc-batch",
  "forwarder",
  "cloud-events",
  "doorbell",
  "activation",
  "awscc",
  "warm-sweep",
  "azure",
  "gcp",
  "e2e",
];
if (values.only !== undefined && !ONLY.includes(values.only))
  throw new Error(`unknown --only ${values.only}; known: ${ONLY.join(", ")}`);
const forwarderOnly = values.only === "forwarder";
const e2eOnly = values.only === "e2e";
const e2eSize = Number(values.size ?? (quick ? 1_000 : 10_000));
if (!Number.isInteger(e2eSize) || e2eSize < 1) throw new Error(`--size must be a positive integer`);
const e2ePaths = (values.paths ?? "").split(",").filter((p) => p === "warm" || p === "stateless");
const e2eMatrix = {
  kinds: (values.kinds ?? "").split(","),
  cadences: (values.cadences ?? "").split(","),
  ...(values.profile ? { profileDir: path.resolve(values.profile) } : {}),
};
if (values.tag !== undefined && !/^[a-z0-9-]+$/.test(values.tag))
  throw new Error("--tag: lower-case letters, digits and dashes");
const sizes = e2eOnly ? { ...(quick ? QUICK : FULL), insync: e2eSize } : quick ? QUICK : FULL;
const t0 = Date.now();
const log = (msg: string) =>
  process.stderr.write(`[bench +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}\n`);

/** The two kinds the benchmark uses must be served; the CRDs are applied only when they are not. */
async function ensureCrds(kube: Kube, kc: ReturnType<typeof kubeConfig>) {
  const served = () =>
    Promise.all([kube.list(Queue, { limit: 1 }), kube.list(providerConfigs.aws.type, { limit: 1 })]).then(
      () => true,
      () => false,
    );
  if (await served()) return;
  await applyCrds(kc, allCrds());
  if (!(await served()))
    throw new Error("the Queue and ProviderConfig kinds are not served after applying the CRDs");
}

async function main() {
  const machine = machineFacts();
  if (values.only === "activation") {
    // Its API servers are stopped by PID on exit; Ctrl-C must exit (not kill) for that to run.
    process.once("SIGINT", () => process.exit(130));
    const act = await measureActivation({ log }, quick ? [] : SYNTHETIC);
    process.stdout.write(`\n${formatTable(act.rows)}\n`);
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(
      path.join(RESULTS, "activation-only.json"),
      `${JSON.stringify({ date: new Date().toISOString(), machine, ...act.result }, null, 2)}\n`,
    );
    return;
  }
  if (values.only === "azure") {
    process.once("SIGINT", () => process.exit(130));
    const azure = await measureAzure({ log, distDir: path.join(ROOT, "dist/bench") });
    process.stdout.write(`\n${formatTable(azure.rows)}\n`);
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(
      path.join(RESULTS, "azure-only.json"),
      `${JSON.stringify({ date: new Date().toISOString(), machine, ...azure.result }, null, 2)}\n`,
    );
    return;
  }
  if (values.only === "gcp") {
    process.once("SIGINT", () => process.exit(130));
    const gcp = await measureGcp({ log, distDir: path.join(ROOT, "dist/bench") });
    process.stdout.write(`\n${formatTable(gcp.rows)}\n`);
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(
      path.join(RESULTS, "gcp-only.json"),
      `${JSON.stringify({ date: new Date().toISOString(), machine, ...gcp.result }, null, 2)}\n`,
    );
    return;
  }
  if (values.only === "awscc") {
    process.once("SIGINT", () => process.exit(130));
    const awscc = await measureAwscc({ log, distDir: path.join(ROOT, "dist/bench") }, AWSCC_KINDS);
    process.stdout.write(`\n${formatTable(awscc.rows)}\n`);
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(
      path.join(RESULTS, "awscc-only.json"),
      `${JSON.stringify({ date: new Date().toISOString(), machine, ...awscc.result }, null, 2)}\n`,
    );
    return;
  }
  const { env, started } = await up();
  Object.assign(process.env, env);
  const kc = kubeConfig();
  const kube = new Kube(kc);
  await ensureCrds(kube, kc);
  const run = `bench-${randomBytes(3).toString("hex")}`;
  // --only e2e measures the reconcile function's CPU: the proxy serves from a thread of its own there.
  const proxy = await (e2eOnly ? WireProxy.startThreaded : WireProxy.start)(env.AWS_ENDPOINT_URL ?? "");
  const distDir = path.join(ROOT, "dist/bench");
  mkdirSync(distDir, { recursive: true });
  mkdirSync(RESULTS, { recursive: true });
  const ctx: BenchContext = {
    quick,
    sizes,
    run,
    env,
    kc,
    kube,
    proxy,
    providerConfig: run,
    insync: Array.from({ length: forwarderOnly ? 0 : sizes.insync }, (_, i) => `${run}-q${i}`),
    distDir,
    log,
  };
  const sqs = new SQSClient({
    region: "us-east-1",
    endpoint: env.AWS_ENDPOINT_URL,
    credentials: { accessKeyId: "testing", secretAccessKey: "testing-secret-value" },
  });
  const [n1, n2] = sizes.scale;
  const scaleNames = Array.from({ length: n2 }, (_, i) => `${run}-s${i}`);
  // Full mode: the sweep/LIST part at 100k objects in the API server (objects only, no cloud resources).
  const sweepOnlyTotal = quick || forwarderOnly ? 0 : 100_000;
  const extraNames = Array.from({ length: Math.max(0, sweepOnlyTotal - n2) }, (_, i) => `${run}-s${n2 + i}`);
  const extraQueues: string[] = [];
  log(`run ${run}: ${quick ? "quick" : "full"} mode, ${machine.nproc} CPUs, node ${machine.node}`);

  let interrupted = false;
  const cleanup = async () => {
    if (values.keep) {
      log(`--keep: objects labelled ${selectorOf(run)} and their queues are left in place`);
      return;
    }
    log("cleanup: deleting the benchmark's objects …");
    // The in-sync queues' SQS queues are deleted directly and their finalizer dropped: no reconcile
    // per object needed. Then every object by name, WRITE_CONCURRENCY at a time (a delete-collection
    // call runs one delete after another on the server and times out long before 10,000).
    const urls = await inParallel(ctx.insync, 8, (QueueName) =>
      sqs.send(new GetQueueUrlCommand({ QueueName })).then(
        (o) => o.QueueUrl,
        () => undefined,
      ),
    );
    await deleteQueues(sqs, [...extraQueues, ...urls.filter((u): u is string => u !== undefined)]);
    await inParallel(ctx.insync, WRITE_CONCURRENCY, (name) =>
      kube.patch(Queue, name, { metadata: { finalizers: null } }).catch(() => undefined),
    );
    for (let attempt = 0; attempt < 3; attempt++) {
      await inParallel([...ctx.insync, ...scaleNames, ...extraNames], WRITE_CONCURRENCY, (name) =>
        kube.delete(Queue, name).catch(() => undefined),
      );
      const left = await countObjects(kube, Queue, selectorOf(run)).catch(() => -1);
      if (left === 0) break;
      log(`cleanup: ${left} objects left, deleting again`);
      await sleep(2_000);
    }
    await deleteProviderConfig(kube, run).catch((e: Error) => log(`cleanup: ${e.message}`));
    log("cleanup: done");
  };
  process.once("SIGINT", () => {
    interrupted = true;
    log("interrupted: cleaning up (Ctrl-C again to abandon) …");
    void cleanup().finally(() => process.exit(130));
  });

  const sections: Partial<
    Record<
      | "summary"
      | "e2e"
      | "work"
      | "batch"
      | "overhead"
      | "latency"
      | "doorbell"
      | "cloudEvents"
      | "activation"
      | "awscc"
      | "scale"
      | "coldStart"
      | "cost",
      Row[]
    >
  > = {};
  const results: Record<string, unknown> = {};
  try {
    if (forwarderOnly) {
      const only = await measureForwarderOnly(ctx, sqs, scaleNames, extraQueues);
      process.stdout.write(`\n${formatTable(only.rows)}\n`);
      writeFileSync(
        path.join(RESULTS, "forwarder-only.json"),
        `${JSON.stringify({ date: new Date().toISOString(), machine, sizes, ...only }, null, 2)}\n`,
      );
      return;
    }
    if (values.only === "awscc-batch") {
      const ab = await measureAwsccBatch(ctx);
      process.stdout.write(`\n${formatTable(ab.rows)}\n`);
      writeFileSync(
        path.join(RESULTS, "awscc-batch-only.json"),
        `${JSON.stringify({ date: new Date().toISOString(), machine, sizes, ...ab.result }, null, 2)}\n`,
      );
      return;
    }
    if (values.only === "warm-sweep") {
      const warm = await measureWarmSweep(ctx, quick ? 1_000 : 10_000);
      process.stdout.write(`\n${formatTable(warm.rows)}\n`);
      writeFileSync(
        path.join(RESULTS, "warm-sweep-only.json"),
        `${JSON.stringify({ date: new Date().toISOString(), machine, ...warm.result }, null, 2)}\n`,
      );
      return;
    }
    if (values.only === "cloud-events") {
      await createProviderConfig(kube, run, proxy.url);
      const ce = await measureCloudEvents(ctx);
      process.stdout.write(`\n${formatTable(ce.rows)}\n`);
      writeFileSync(
        path.join(RESULTS, "cloud-events-only.json"),
        `${JSON.stringify({ date: new Date().toISOString(), machine, sizes, ...ce.result }, null, 2)}\n`,
      );
      return;
    }
    if (values.only === undefined) {
      // First, while the machine is quiet: fresh API servers of its own, apart from the stack.
      const act = await measureActivation(ctx, []);
      sections.activation = act.rows;
      results.activation = act.result;
      const awscc = await measureAwscc(ctx, AWSCC_KINDS_FULL_RUN);
      sections.awscc = awscc.rows;
      results.awscc = awscc.result;
    }
    // Setup, overlapped: bundles build while the in-sync set and the first scale objects are created.
    const building = e2eOnly ? undefined : buildAll(ctx);
    await createProviderConfig(kube, run, proxy.url);
    // The in-sync set is adopted (queues made in moto first): far fewer setup writes than creating them.
    await createCloudQueues(sqs, ctx.insync);
    log(
      `setup: ${ctx.insync.length} SQS queues in moto, ${((Date.now() - t0) / 1000).toFixed(0)} s since start`,
    );
    const setup = new Reconciler(kube, new KindRegistry(awsKinds), { rateLimit: false });
    const fastSetup = e2eOnly && ctx.insync.length > 1;
    if (fastSetup) {
      // End to end at 10k: the reconciler adopts the first queue, the others are written in the state it
      // left (bench/lib/adopt.ts), then the product's batched check says which are not in sync and the
      // reconciler takes those — the measured windows start from a real adoption's state at two writes each.
      const [first, ...rest] = ctx.insync as [string, ...string[]];
      await createObjects(kube, [queueObject(first, run, "insync", run, { adopt: true })]);
      await reconcileUntil(setup, [first], (o) => o === "in-sync");
      await reconcileUntil(setup, [first], (o) => o === "in-sync");
      const template = await kube.get<KubeObject>(Queue, first);
      if (!template) throw new Error(`setup: ${first} is gone`);
      await cloneAdopted(kube, Queue, template, rest);
      log(
        `setup: ${rest.length} queues written in ${first}'s adopted state, ${((Date.now() - t0) / 1000).toFixed(0)} s since start`,
      );
      for (let round = 0; ; round++) {
        const off = await notInSync(ctx, Queue, selectorOf(run, "insync"));
        log(`setup: the batched check found ${off.names.length} of ${off.checked} queues not in sync`);
        if (off.checked < ctx.insync.length)
          throw new Error(`setup: only ${off.checked} of ${ctx.insync.length} checked`);
        if (off.names.length === 0) break;
        if (round >= 2) throw new Error(`setup: ${off.names.length} queues still not in sync`);
        await reconcileUntil(setup, off.names, (o) => o === "in-sync", { concurrency: 16 });
      }
    } else
      await createObjects(
        kube,
        ctx.insync.map((name) => queueObject(name, run, "insync", run, { adopt: true })),
      );
    const creatingScale = createObjects(
      kube,
      scaleNames
        .slice(0, e2eOnly ? 0 : n1)
        .map((name) => queueObject(name, run, "scale", "bench-no-such-providerconfig")),
    );
    const settled = fastSetup
      ? { passes: 0 }
      : await reconcileUntil(setup, ctx.insync, (o) => o === "in-sync", { concurrency: 16 });
    // One more pass: the first in-sync pass may still write Ready=True; from here on nothing changes.
    if (!fastSetup) await reconcileUntil(setup, ctx.insync, (o) => o === "in-sync", { concurrency: 16 });
    log(
      `setup: ${ctx.insync.length} in-sync queues after ${settled.passes} passes, ${((Date.now() - t0) / 1000).toFixed(0)} s since start (load ${loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")})`,
    );
    if (values.only === "doorbell") {
      const bell = await measureDoorbell(ctx);
      process.stdout.write(`\n${formatTable(bell.rows)}\n`);
      writeFileSync(
        path.join(RESULTS, "doorbell-only.json"),
        `${JSON.stringify({ date: new Date().toISOString(), machine, sizes, ...bell.result }, null, 2)}\n`,
      );
      await Promise.allSettled([building, creatingScale]);
      return;
    }
    if (e2eOnly) {
      await creatingScale;
      const e2e = await measureEndToEnd(ctx, e2eSize, e2ePaths, e2eMatrix);
      process.stdout.write(`\n${formatTable(e2e.rows)}\n`);
      writeFileSync(
        path.join(RESULTS, `e2e-only${values.tag ? `-${values.tag}` : ""}.json`),
        `${JSON.stringify({ date: new Date().toISOString(), machine, uptimeAtEnd: uptime(), sizes, ...e2e.result }, null, 2)}\n`,
      );
      return;
    }
    const [built] = await Promise.all([building ?? buildAll(ctx), creatingScale]);
    log(`setup: bundles built, ${n1} scale objects created`);
    // Section 17 first, on a quiet API server: the sections below write the same Queues (latency, doorbell,
    // cloud events), and their churn can push a counted window's watch out of the watch cache (410 Gone,
    // one relist of the whole kind) — requests the production path does not make.
    const e2e = values.only === "batch" ? undefined : await measureEndToEnd(ctx, ctx.insync.length);

    const batch = await measureDriftBatch(ctx);
    const awsccBatch = await measureAwsccBatch(ctx);
    sections.batch = [...batch.rows, ...awsccBatch.rows];
    results.batch = batch.result;
    results.awsccBatch = awsccBatch.result;
    if (values.only === "batch") {
      const table = formatTable(batch.rows);
      process.stdout.write(`\n${table}\n`);
      writeFileSync(path.join(RESULTS, "batch-only.json"), `${JSON.stringify(batch.result, null, 2)}\n`);
      return;
    }

    const cold = measureColdStart(ctx, built);
    sections.coldStart = cold.rows;
    results.coldStart = cold.result;

    const work = await measureWork(ctx);
    sections.work = work.rows;
    results.work = work.result;

    const overhead = await measureOverhead(ctx);
    sections.overhead = overhead.rows;
    results.overhead = overhead.result;

    const latency = await measureLatency(ctx);
    sections.latency = latency.rows;
    results.latency = latency.result;

    const bell = await measureDoorbell(ctx);
    sections.doorbell = bell.rows;
    results.doorbell = bell.result;

    const cloudEvents = await measureCloudEvents(ctx);
    sections.cloudEvents = cloudEvents.rows;
    results.cloudEvents = cloudEvents.result;

    const sweepQueue = await ensureSqsQueue(sqs, { name: `${run}-sweep` });
    const fwdQueue = await ensureSqsQueue(sqs, { name: `${run}-fwd` });
    extraQueues.push(sweepQueue.queueUrl, sweepQueue.dlqUrl, fwdQueue.queueUrl, fwdQueue.dlqUrl);
    const bundle = (name: string) => built.bundles.find((b) => b.name === name)?.file ?? "";
    const probe = path.join(distDir, "heap-probe.mjs");
    writeFileSync(probe, HEAP_PROBE);
    const queues = { sweepUrl: sweepQueue.queueUrl, forwarderUrl: fwdQueue.queueUrl };
    const baseline = await measureForwarderBaseline(ctx, {
      sqs,
      queues,
      forwarderBundle: bundle("forwarder"),
      probe,
    });
    const point = (resources: number) =>
      measureScalePoint(ctx, {
        resources,
        sqs,
        queues,
        forwarderBundle: bundle("forwarder"),
        workerBundle: built.worker.file,
        probe,
        // moto's SendMessageBatch slows down as the queue fills: larger sweeps into it would time moto.
        sqsSweep: resources <= 200,
      });
    const points: ScalePoint[] = [await point(n1)];
    log(`scale: creating ${n2 - n1} more objects (${n2} in all) …`);
    await createObjects(
      kube,
      scaleNames.slice(n1).map((name) => queueObject(name, run, "scale", "bench-no-such-providerconfig")),
    );
    points.push(await point(n2));
    sections.scale = scaleTable(points, baseline);
    let sweep100k:
      | { resources: number; createMs: number; sweepMs: number[]; pages: number; listed: number }
      | undefined;
    if (extraNames.length > 0) {
      log(
        `scale: creating ${extraNames.length} more objects (${sweepOnlyTotal} in all) for the sweep alone …`,
      );
      const t = performance.now();
      await createObjects(
        kube,
        extraNames.map((name) => queueObject(name, run, "scale", "bench-no-such-providerconfig")),
      );
      const createMs = performance.now() - t;
      const sweepMs: number[] = [];
      let pages = 0;
      let listed = 0;
      for (let rep = 0; rep < 2; rep++) {
        const started = performance.now();
        const r = await sweep({
          kube: new Kube(ctx.kc),
          types: [Queue],
          sink: { send: async (m) => ({ sent: m.length, failed: [] }) },
          scheduleMs: 60_000,
          defaultPollMs: 5 * 60_000,
          batch: true,
          labelSelector: selectorOf(run, "scale"),
        });
        sweepMs.push(performance.now() - started);
        pages = r.pages;
        listed = r.listed;
      }
      sweep100k = { resources: sweepOnlyTotal, createMs, sweepMs, pages, listed };
      log(`scale ${sweepOnlyTotal}: sweep ${sweepMs.map((x) => x.toFixed(0)).join(", ")} ms, ${pages} pages`);
      sections.scale.push({
        section: "4 scale",
        metric: `sweep alone: list ${sweepOnlyTotal / 1000}k objects (${pages} pages of 1,000) and decide each (batch mode)`,
        value: `${(Math.min(...sweepMs) / 1000).toFixed(2)} s, ${pages} LIST requests`,
        target: "< 60 s",
        pass: Math.max(...sweepMs) < 60_000 && listed === sweepOnlyTotal,
        range: `created in ${(createMs / 1000).toFixed(0)} s; ${sweepMs.map((x) => `${(x / 1000).toFixed(2)} s`).join(", ")}`,
      });
    }
    results.scale = {
      forwarderNodeOptions: forwarderNodeOptions(),
      forwarderNodeArgs: forwarderNodeArgs(),
      forwarderBaseline: baseline,
      points,
      slopes: slopes(points),
      upjet: UPJET_SIZING,
      sweep100k,
    };

    const sqsSend = await measureSqsSend(ctx, sqs, sweepQueue.queueUrl);
    results.scale = { ...(results.scale as object), sqsSend };
    const workerInvocation = points.at(-1)?.worker.invocationMs.median;
    const cost = costModel({
      invocationMs: workerInvocation ?? overhead.result.invocationMs.median,
      sweepPoints: points.map((p) => ({ resources: p.resources, ms: p.sweep.durationMs.median })),
      sqsSendMsPerMessage: sqsSend.msPerMessage.median,
    });
    // The batched model from section 7: worker time per resource without the page LIST, and the LIST.
    const batchedInputs = batch.result.paths
      .filter((p) => p.path === "batched")
      .map((p) => {
        const perResource = (wallMs: number) =>
          Math.max(0, wallMs - p.messages * p.pageListMs) / Math.max(1, p.resources);
        const at: Record<number, number> = { 0: perResource(p.workerWallMs) };
        for (const x of p.atLatency) at[x.medianMs] = perResource(x.workerWallMs);
        return {
          kind: p.kind,
          pageListMs: p.pageListMs,
          checkMsPerResource: at[CENTRAL_LATENCY_MS] ?? at[0] ?? 0,
          checkMsPerResourceAt: at,
          cpuMsPerResource: p.workerCpuMs / Math.max(1, p.resources),
        };
      });
    const batchedCost = batchedCostRows(
      {
        invocationMs: workerInvocation ?? overhead.result.invocationMs.median,
        sweepPoints: points.map((p) => ({ resources: p.resources, ms: p.sweep.durationMs.median })),
        sqsSendMsPerMessage: sqsSend.msPerMessage.median,
      },
      batchedInputs,
    );
    const initMs = cold.result.find((b) => b.name === "aws-reconcile")?.importMs?.median;
    const initRows =
      initMs === undefined
        ? []
        : initCostRows(
            initMs,
            {
              invocationMs: workerInvocation ?? overhead.result.invocationMs.median,
              sweepPoints: points.map((p) => ({ resources: p.resources, ms: p.sweep.durationMs.median })),
              sqsSendMsPerMessage: sqsSend.msPerMessage.median,
            },
            batchedInputs.find((b) => b.kind === "VPC"),
          );
    // Which memory size bills least for a batched check: the list kind's CPU and wall from section 7, the
    // worker's RSS from section 4.
    const rssMb = points.at(-1)?.worker.peakMb.median;
    const vpc = batchedInputs.find((b) => b.kind === "VPC");
    const sizing =
      vpc && rssMb !== undefined
        ? memoryRows("VPC", {
            cpuMsPerResource: vpc.cpuMsPerResource,
            wallMsPerResource: vpc.checkMsPerResource,
            rssMb,
          })
        : [];
    sections.cost = [...cost.rows, ...batchedCost.rows, ...initRows, ...sizing];
    // The leading table: section 17 (measured first, above), then the peers' read rates.
    if (!e2e) throw new Error("bench: section 17 was not measured");
    sections.summary = [...e2e.rows.filter((r) => r.section === "0 summary"), ...peerReadRows()];
    sections.e2e = e2e.rows.filter((r) => r.section !== "0 summary");
    results.e2e = e2e.result;
    results.cost = { ...cost.result, batched: batchedCost.result };

    const order = [
      "summary",
      "e2e",
      "work",
      "batch",
      "overhead",
      "latency",
      "doorbell",
      "cloudEvents",
      "activation",
      "awscc",
      "scale",
      "coldStart",
      "cost",
    ] as const;
    const rows = order.flatMap((k) => sections[k] ?? []);
    writeOutputs({ rows, results, machine, run, latency: latency.result, points, baseline });
  } finally {
    if (!interrupted) await cleanup();
    await proxy.stop();
    sqs.destroy();
    if (started) await down();
  }
}

/** `--only forwarder`: the forwarder bundle's RSS watching nothing, then at both scale points. */
async function measureForwarderOnly(
  ctx: BenchContext,
  sqs: SQSClient,
  scaleNames: readonly string[],
  extraQueues: string[],
) {
  const [n1, n2] = ctx.sizes.scale;
  const spec = BUNDLES.find((b) => b.name === "forwarder");
  if (!spec) throw new Error("no forwarder bundle in infra/build/build.ts");
  const [built] = await Promise.all([
    buildBundle(spec, path.join(ctx.distDir, "forwarder.mjs")),
    createObjects(
      ctx.kube,
      scaleNames
        .slice(0, n1)
        .map((name) => queueObject(name, ctx.run, "scale", "bench-no-such-providerconfig")),
    ),
  ]);
  const fwdQueue = await ensureSqsQueue(sqs, { name: `${ctx.run}-fwd` });
  extraQueues.push(fwdQueue.queueUrl, fwdQueue.dlqUrl);
  const probe = path.join(ctx.distDir, "heap-probe.mjs");
  writeFileSync(probe, HEAP_PROBE);
  const queues = { sweepUrl: fwdQueue.queueUrl, forwarderUrl: fwdQueue.queueUrl };
  const common = { sqs, queues, forwarderBundle: built.file, probe, selector: selectorOf(ctx.run, "scale") };
  const baseline = await measureForwarderBaseline(ctx, common);
  const points = [
    { resources: n1, forwarder: await measureForwarderPoint(ctx, { ...common, resources: n1 }) },
  ];
  ctx.log(`scale: creating ${n2 - n1} more objects (${n2} in all) …`);
  await createObjects(
    ctx.kube,
    scaleNames.slice(n1).map((name) => queueObject(name, ctx.run, "scale", "bench-no-such-providerconfig")),
  );
  points.push({ resources: n2, forwarder: await measureForwarderPoint(ctx, { ...common, resources: n2 }) });
  return {
    forwarderNodeOptions: forwarderNodeOptions(),
    forwarderNodeArgs: forwarderNodeArgs(),
    baseline,
    points,
    rows: forwarderRows(points, baseline),
  };
}

/** Growth per 1k resources between the two scale points of `value`. */
function per1k<P extends { resources: number }>(points: readonly P[], value: (p: P) => number): number {
  const [a, b] = points;
  if (!a || !b) return Number.NaN;
  return (value(b) - value(a)) / ((b.resources - a.resources) / 1000);
}

function slopes(points: ScalePoint[]) {
  if (points.length < 2) return {};
  return {
    forwarderMbPer1k: per1k(points, (p) => p.forwarder.rssMb.median),
    forwarderLiveMbPer1k: per1k(points, (p) => p.forwarder.liveHeapMb.median),
    workerMbPer1kReconciles: per1k(points, (p) => p.worker.rssMb.median),
    workerLiveMbPer1k: per1k(points, (p) => p.worker.liveHeapMb.median),
    sweepMsPer1k: per1k(points, (p) => p.sweep.durationMs.median),
  };
}

type Baseline = Awaited<ReturnType<typeof measureForwarderBaseline>>;

function scaleTable(points: ScalePoint[], baseline: Baseline): Row[] {
  const s = slopes(points);
  const rows: Row[] = [];
  const k = (n: number) => (n >= 1000 ? `${n / 1000}k` : `${n}`);
  const sec = (x: number) => `${(x / 1000).toFixed(2)} s`;
  for (const p of points) {
    rows.push({
      section: "4 scale",
      metric: `sweep: list all ${k(p.resources)} (${p.sweep.pages} pages, 8 kinds) and enqueue every one`,
      value: `${sec(p.sweep.durationMs.median)} (${p.sweep.enqueued} messages)`,
      target: "< 30 s",
      pass: p.sweep.durationMs.median < 30_000 && p.sweep.enqueued === p.resources,
      range: `${sec(p.sweep.durationMs.min)}–${sec(p.sweep.durationMs.max)}`,
    });
    if (p.sqsSweep) {
      rows.push({
        section: "4 scale",
        metric: `… the same into SQS on moto, ${k(p.resources)} (SendMessageBatch of 10)`,
        value: `${sec(p.sqsSweep.durationMs.median)} (${p.sqsSweep.enqueued} sent)`,
        target: "< 30 s",
        pass: p.sqsSweep.durationMs.median < 30_000 && p.sqsSweep.enqueued === p.resources,
        range: `${sec(p.sqsSweep.durationMs.min)}–${sec(p.sqsSweep.durationMs.max)}`,
      });
    }
  }
  rows.push(...forwarderRows(points, baseline));
  for (const p of points) {
    rows.push({
      section: "4 scale",
      metric: `worker (Lambda container) RSS after ${k(p.worker.reconciles)} reconciles (live heap ${p.worker.liveHeapMb.median.toFixed(1)} MB)`,
      value: `${p.worker.rssMb.median.toFixed(1)} MB`,
      target: "—",
      pass: undefined,
      range: `${p.worker.rssMb.min.toFixed(1)}–${p.worker.rssMb.max.toFixed(1)} MB`,
    });
  }
  rows.push({
    section: "4 scale",
    metric: "worker slope per 1k reconciles: RSS (live heap)",
    value: `${(s.workerMbPer1kReconciles ?? Number.NaN).toFixed(2)} MB (${(s.workerLiveMbPer1k ?? Number.NaN).toFixed(2)} MB)`,
    target: "—",
    pass: undefined,
    range: "—",
  });
  return rows;
}

/** The forwarder's rows: RSS watching nothing, after the initial sync at each point, and the slope. */
function forwarderRows(
  points: ReadonlyArray<Pick<ScalePoint, "resources" | "forwarder">>,
  baseline: Baseline,
): Row[] {
  const rows: Row[] = [];
  const k = (n: number) => (n >= 1000 ? `${n / 1000}k` : `${n}`);
  const s = {
    forwarderMbPer1k: per1k(points, (p) => p.forwarder.rssMb.median),
    forwarderLiveMbPer1k: per1k(points, (p) => p.forwarder.liveHeapMb.median),
  };
  rows.push({
    section: "4 scale",
    metric: "forwarder RSS watching nothing (runtime + loaded code)",
    value: `${baseline.rssMb.median.toFixed(1)} MB`,
    target: "—",
    pass: undefined,
    range: `${baseline.rssMb.min.toFixed(1)}–${baseline.rssMb.max.toFixed(1)} MB; live heap ${baseline.liveHeapMb.median.toFixed(1)} MB`,
  });
  for (const p of points) {
    rows.push({
      section: "4 scale",
      metric: `forwarder RSS after initial sync, ${k(p.resources)} resources (live heap ${p.forwarder.liveHeapMb.median.toFixed(1)} MB)`,
      value:
        p.forwarder.errors.length > 0
          ? `${p.forwarder.rssMb.median.toFixed(1)} MB; ${p.forwarder.errors.length} of ${p.forwarder.errors.length + p.forwarder.rssMb.n} runs failed`
          : `${p.forwarder.rssMb.median.toFixed(1)} MB`,
      target: "< 100 MB",
      pass: p.forwarder.errors.length === 0 && p.forwarder.rssMb.median < 100,
      range: `${p.forwarder.rssMb.min.toFixed(1)}–${p.forwarder.rssMb.max.toFixed(1)} MB`,
    });
  }
  rows.push({
    section: "4 scale",
    metric: "forwarder slope per 1k resources: RSS (live heap)",
    value: `${(s.forwarderMbPer1k ?? Number.NaN).toFixed(2)} MB (${(s.forwarderLiveMbPer1k ?? Number.NaN).toFixed(2)} MB)`,
    target: "—",
    pass: undefined,
    range: `upjet provider-aws: ${UPJET_SIZING.providerAwsAvgGb} GB avg (sizing guide)`,
  });
  return rows;
}

function writeOutputs(o: {
  rows: Row[];
  results: Record<string, unknown>;
  machine: ReturnType<typeof machineFacts>;
  run: string;
  latency: Awaited<ReturnType<typeof measureLatency>>["result"];
  points: ScalePoint[];
  baseline: Baseline;
}) {
  const table = formatTable(o.rows);
  process.stdout.write(
    `\n${table}\n\ncost model (${FORMULA.length} lines):\n${FORMULA.map((l) => `  ${l}`).join("\n")}\n`,
  );
  const failed = o.rows.filter((r) => r.pass === false).length;
  process.stdout.write(
    `\n${o.rows.filter((r) => r.pass !== undefined).length - failed} targets met, ${failed} missed\n`,
  );
  const json = {
    date: new Date().toISOString(),
    mode: quick ? "quick" : "full",
    run: o.run,
    machine: o.machine,
    uptimeAtEnd: uptime(),
    durationS: Math.round((Date.now() - t0) / 1000),
    sizes,
    rows: o.rows,
    markdown: markdownTable(o.rows),
    results: o.results,
  };
  writeFileSync(path.join(RESULTS, "latest.json"), `${JSON.stringify(json, null, 2)}\n`);
  const lp = (p: Record<string, number>) => ({ p50: p.p50 ?? 0, p95: p.p95 ?? 0, p99: p.p99 ?? 0 });
  writeFileSync(
    path.join(RESULTS, "latency.svg"),
    latencyChart(
      [
        { name: "memory queue (driftless run)", values: lp(o.latency.memory.percentiles), targetMs: 1000 },
        { name: "SQS + Lambda handler", values: lp(o.latency.sqs.percentiles), targetMs: 2000 },
      ],
      `${o.latency.memory.samplesMs.length} + ${o.latency.sqs.samplesMs.length} changes · ${o.machine.nproc} CPUs · ${json.date.slice(0, 10)} · ${json.mode}`,
    ),
  );
  writeFileSync(
    path.join(RESULTS, "rss.svg"),
    rssChart(
      [
        {
          name: "forwarder RSS",
          color: "#2563eb",
          points: [
            {
              resources: 0,
              mb: o.baseline.rssMb.median,
              min: o.baseline.rssMb.min,
              max: o.baseline.rssMb.max,
            },
            ...o.points.map((p) => ({
              resources: p.resources,
              mb: p.forwarder.rssMb.median,
              min: p.forwarder.rssMb.min,
              max: p.forwarder.rssMb.max,
            })),
          ],
        },
        {
          name: "forwarder live heap",
          color: "#2563eb",
          dashed: true,
          points: [
            { resources: 0, mb: o.baseline.liveHeapMb.median },
            ...o.points.map((p) => ({ resources: p.resources, mb: p.forwarder.liveHeapMb.median })),
          ],
        },
        {
          name: "worker RSS",
          color: "#f59e0b",
          labelSide: "left",
          points: o.points.map((p) => ({
            resources: p.worker.reconciles,
            mb: p.worker.rssMb.median,
            min: p.worker.rssMb.min,
            max: p.worker.rssMb.max,
          })),
        },
        {
          name: "worker live heap",
          color: "#f59e0b",
          labelSide: "left",
          dashed: true,
          points: o.points.map((p) => ({ resources: p.worker.reconciles, mb: p.worker.liveHeapMb.median })),
        },
      ],
      100,
      `upjet provider-aws averages ${UPJET_SIZING.providerAwsAvgGb} GB (off this chart) · ${json.mode} · ${json.date.slice(0, 10)}`,
    ),
  );
  log(`wrote ${path.relative(ROOT, path.join(RESULTS, "latest.json"))}, latency.svg, rss.svg`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
