// 10. The doorbell: the API server calls driftless (a ValidatingWebhookConfiguration pointing at the
// doorbell's HTTPS endpoint, the same handler the Lambda Function URL runs), no forwarder, no watch.
//   (a) spec change → cloud update call, doorbell → memory queue → workers (`driftless run --doorbell`);
//   (b) spec change → cloud update call, doorbell → SQS on moto → Lambda's event source (emulated) →
//       the Lambda handler core;
//   (c) what the webhook adds to a user's write: PATCH and CREATE round trips with and without the
//       webhook configuration, the same objects, the same concurrency (a burst of creates);
// and how often a doorbell message arrived before the write it reports was stored (the worker's
// resourceVersion check requeued it).
import { readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { awsKinds, awsProviderConfigKinds } from "../../functions/aws/kinds.ts";
import { ensureTls } from "../../infra/local/tls.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import { Annotations } from "../../shared/api/meta.ts";
import { doorbellPath } from "../../shared/doorbell/http.ts";
import { createDoorbell } from "../../shared/doorbell/index.ts";
import { startDoorbellServer } from "../../shared/doorbell/server.ts";
import {
  applyWebhookConfiguration,
  deleteWebhookConfiguration,
  doorbellWebhookConfiguration,
} from "../../shared/doorbell/webhook.ts";
import { Kube } from "../../shared/kube/client.ts";
import { createLogger } from "../../shared/log.ts";
import type { MetricsSink } from "../../shared/metrics.ts";
import { noopLogger } from "../../shared/pipeline/common.ts";
import { startRun } from "../../shared/pipeline/run.ts";
import { SqsProducer } from "../../shared/queue/sqs.ts";
import { typesOf } from "../../shared/worker/worker.ts";
import { inParallel } from "../../test/support/env.ts";
import type { BenchContext } from "../lib/context.ts";
import { BENCH_LABEL, SET_LABEL } from "../lib/fixtures.ts";
import { benchWorkQueue, LambdaEventSource, lambdaContainers } from "../lib/lambda.ts";
import type { Row } from "../lib/report.ts";
import { percentiles, sleep } from "../lib/stats.ts";
import { deleteQueues } from "./latency.ts";

const noopMetrics: MetricsSink = { reconciled() {}, externalCall() {}, queueAge() {} };

const UPDATE_TIMEOUT_MS = 15_000;
const SECRET_BYTES = 24;

interface ChangeResult {
  samplesMs: number[];
  patchMs: number[];
  timeouts: number;
}

async function changeAll(ctx: BenchContext, kube: Kube, names: readonly string[], base: number) {
  const out: ChangeResult = { samplesMs: [], patchMs: [], timeouts: 0 };
  for (const [i, name] of names.entries()) {
    const mark = ctx.proxy.mark();
    const t0 = Date.now();
    await kube.patch(Queue, name, { spec: { forProvider: { visibilityTimeoutSeconds: base + i } } });
    out.patchMs.push(Date.now() - t0);
    const call = await ctx.proxy.waitFor(
      (c) => c.action === "SQS.SetQueueAttributes" && (c.resource?.endsWith(`/${name}`) ?? false),
      mark,
      UPDATE_TIMEOUT_MS,
    );
    if (call) out.samplesMs.push(call.at - t0);
    else out.timeouts++;
    await sleep(20 + Math.random() * 60);
  }
  return out;
}

/** Label-only PATCHes (nothing for the reconciler to do): the round trip a user's write sees. */
async function touchAll(kube: Kube, names: readonly string[], tag: string): Promise<number[]> {
  const ms: number[] = [];
  for (const name of names) {
    const t0 = Date.now();
    await kube.patch(Queue, name, { metadata: { labels: { "bench.driftless.dev/touch": tag } } });
    ms.push(Date.now() - t0);
  }
  return ms;
}

/** A burst of creates of paused objects (the reconcile only reads them), `concurrency` at a time. */
async function burst(ctx: BenchContext, kube: Kube, names: readonly string[], concurrency: number) {
  const ms: number[] = [];
  await inParallel(names, concurrency, async (name) => {
    const t0 = Date.now();
    await kube.create(Queue, {
      apiVersion: Queue.apiVersion,
      kind: Queue.kind,
      metadata: {
        name,
        labels: { [BENCH_LABEL]: ctx.run, [SET_LABEL]: "doorbell" },
        annotations: { [Annotations.paused]: "true" },
      },
      spec: { forProvider: {}, providerConfigRef: { name: ctx.providerConfig } },
    });
    ms.push(Date.now() - t0);
  });
  return ms;
}

async function deleteAll(kube: Kube, names: readonly string[]) {
  await inParallel(names, 20, (n) => kube.delete(Queue, n).catch(() => undefined));
}

const pct = (s: readonly number[]) => percentiles([...s]);
const fmt = (s: readonly number[]) => {
  const p = pct(s);
  return `${Math.round(p.p50 ?? 0)} / ${Math.round(p.p95 ?? 0)} / ${Math.round(p.p99 ?? 0)} ms`;
};

export async function measureDoorbell(ctx: BenchContext) {
  const k = ctx.sizes.latencyChanges;
  const burstSize = ctx.quick ? 200 : 1_000;
  const names = ctx.insync.slice(0, k);
  const sqsNames = ctx.insync.slice(k, 2 * k);
  if (sqsNames.length < k)
    throw new Error(`doorbell needs ${2 * k} in-sync queues, have ${ctx.insync.length}`);
  const kube = new Kube(ctx.kc);
  const tls = await ensureTls(dirname(ctx.env.DRIFTLESS_CA_FILE ?? ""), { name: "doorbell" });
  const [cert, key, caPem] = await Promise.all([
    readFile(tls.serverCert),
    readFile(tls.serverKey),
    readFile(tls.caCert, "utf8"),
  ]);
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(SECRET_BYTES))).toString("hex");
  const types = typesOf(awsKinds, awsProviderConfigKinds, { claims: true });
  const webhookName = `driftless-bench-${ctx.run}`;

  // (c, baseline) The writes without any webhook.
  const touchNames = names.slice(0, Math.min(k, 100));
  await touchAll(kube, touchNames.slice(0, 10), "warm");
  const touchWithout = await touchAll(kube, touchNames, "without");
  const burstWithoutNames = Array.from({ length: burstSize }, (_, i) => `${ctx.run}-bw-${i}`);
  const burstWithout = await burst(ctx, kube, burstWithoutNames, 20);
  await deleteAll(kube, burstWithoutNames);

  // (a) + (c): driftless run --doorbell, its webhook selecting the in-sync set and the burst set.
  ctx.log("doorbell (memory queue): starting driftless run --doorbell …");
  type Waits = Record<"stored" | "waited" | "requeued", number>;
  const memoryWaits: Waits = { stored: 0, waited: 0, requeued: 0 };
  const sqsWaits: Waits = { stored: 0, waited: 0, requeued: 0 };
  let counting = false;
  const running = await startRun({
    metrics: {
      ...noopMetrics,
      admissionWait: (r) => {
        if (counting) memoryWaits[r]++;
      },
    },
    kubeConfig: ctx.kc,
    logger: createLogger({ level: "silent" }),
    kinds: awsKinds,
    providerConfigKinds: awsProviderConfigKinds,
    workers: ctx.sizes.concurrency,
    sweepIntervalMs: 10 * 60_000,
    labelSelector: `${BENCH_LABEL}=${ctx.run}`,
    doorbell: { secret, cert, key, webhook: { caBundlePem: caPem, name: webhookName } },
  });
  let memory: ChangeResult;
  let touchWith: number[];
  let burstWith: number[];
  let burstRang: number;
  try {
    await running.sweepNow();
    await running.queue.idle();
    // The API server picks a new webhook configuration up asynchronously: wait until it rings.
    const before = () => Object.values(running.doorbell?.stats() ?? {}).reduce((a, b) => a + b, 0);
    for (let i = 0; before() === 0 && i < 100; i++) {
      await touchAll(kube, touchNames.slice(0, 1), `probe-${i}`);
      await sleep(200);
    }
    await running.queue.idle();
    await sleep(2_500);
    counting = true;
    memory = await changeAll(ctx, kube, names, 2_000);
    await running.queue.idle();
    counting = false;
    touchWith = await touchAll(kube, touchNames, "with");
    const answered0 = running.doorbell?.stats()[200] ?? 0;
    const burstWithNames = Array.from({ length: burstSize }, (_, i) => `${ctx.run}-bd-${i}`);
    burstWith = await burst(ctx, kube, burstWithNames, 20);
    burstRang = (running.doorbell?.stats()[200] ?? 0) - answered0;
    await deleteAll(kube, burstWithNames);
    await running.queue.idle();
  } finally {
    await running.stop();
  }
  ctx.log(`doorbell (memory queue): ${fmt(memory.samplesMs)}, ${memory.timeouts} timeouts`);

  // (b) doorbell → SQS on moto → the Lambda handler core (two emulated containers).
  ctx.log("doorbell (SQS + Lambda handler): starting the endpoint and event source …");
  const { sqs, work } = await benchWorkQueue(ctx.env, `${ctx.run}-doorbell`);
  // The doorbell's own work per request (parse, decide, SendMessage to SQS, answer), timed inside the
  // endpoint: what the webhook adds beyond the API server's call and the TLS round trip.
  const handlerMs: number[] = [];
  const sendMs: number[] = [];
  const sqsProducer = new SqsProducer({ client: sqs, queueUrl: work.queueUrl });
  const inner = createDoorbell({
    secret,
    // Its SendMessage timed apart: the queue's answer, not the doorbell's own work.
    producer: {
      send: async (...args: Parameters<SqsProducer["send"]>) => {
        const t = performance.now();
        const sent = await sqsProducer.send(...args);
        if (timing) sendMs.push(performance.now() - t);
        return sent;
      },
    },
    types,
    logger: noopLogger,
  });
  let timing = false;
  const timed = Object.assign(
    async (req: Parameters<typeof inner>[0]) => {
      const t = performance.now();
      const out = await inner(req);
      if (timing) handlerMs.push(performance.now() - t);
      return out;
    },
    { verdicts: inner.verdicts, bodyLimit: inner.bodyLimit },
  );
  const server = await startDoorbellServer({ cert, key, handle: timed });
  const source = new LambdaEventSource({ sqs, queueUrl: work.queueUrl, queueArn: work.queueArn });
  const { handlers: containers } = lambdaContainers({
    kc: ctx.kc,
    sqs,
    queueUrl: work.queueUrl,
    admissionWait: (r) => {
      if (counting) sqsWaits[r]++;
    },
  });
  let sqsPath: ChangeResult;
  let burstSqs: number[];
  let burstSqsRang: number;
  let burstAfter: number[];
  try {
    await applyWebhookConfiguration(
      kube,
      doorbellWebhookConfiguration({
        url: `${server.baseUrl}${doorbellPath(secret, "admit")}`,
        types,
        caBundlePem: caPem,
        name: webhookName,
        // The in-sync set and the burst's objects.
        labelSelector: `${BENCH_LABEL}=${ctx.run}`,
      }),
    );
    for (let i = 0; (server.stats()[200] ?? 0) === 0 && i < 100; i++) {
      await touchAll(kube, sqsNames.slice(0, 1), `probe-sqs-${i}`);
      await sleep(200);
    }
    // The burst as deployed (Function URL → SQS), before any consumer runs: the API server, the webhook
    // call and the doorbell's own work alone, no reconciles of the burst competing for the API server.
    await sleep(1_000);
    const answered0 = server.stats()[200] ?? 0;
    const burstSqsNames = Array.from({ length: burstSize }, (_, i) => `${ctx.run}-bs-${i}`);
    timing = true;
    burstSqs = await burst(ctx, kube, burstSqsNames, 20);
    timing = false;
    burstSqsRang = (server.stats()[200] ?? 0) - answered0;
    await deleteAll(kube, burstSqsNames);
    source.start(containers);
    await source.drained(3_000, 60_000);
    await sleep(2_500);
    counting = true;
    sqsPath = await changeAll(ctx, kube, sqsNames, 2_600);
    await source.drained(3_000, 60_000);
    counting = false;
  } finally {
    await deleteWebhookConfiguration(kube, webhookName).catch(() => undefined);
    await source.stop();
    await server.close();
    await deleteQueues(sqs, [work.queueUrl, work.dlqUrl]);
    sqs.destroy();
  }
  // "Without" once more, after: the first ran right after the setup; the two bracket the runs with.
  {
    const names = Array.from({ length: burstSize }, (_, i) => `${ctx.run}-ba-${i}`);
    burstAfter = await burst(ctx, kube, names, 20);
    await deleteAll(kube, names);
  }
  ctx.log(`doorbell (SQS + Lambda handler): ${fmt(sqsPath.samplesMs)}, ${sqsPath.timeouts} timeouts`);

  const added = (withMs: readonly number[], withoutMs: readonly number[], p: "p50" | "p99") =>
    Math.round((pct(withMs)[p] ?? 0) - (pct(withoutMs)[p] ?? 0));
  const addedPatchP99 = added(touchWith, touchWithout, "p99");
  const addedCreateP99 = added(burstWith, burstWithout, "p99");
  const p99 = (s: readonly number[]) => pct(s).p99 ?? Number.POSITIVE_INFINITY;
  const range = (s: readonly number[]) => (s.length > 0 ? `${Math.min(...s)}–${Math.max(...s)} ms` : "—");
  const rows: Row[] = [
    {
      section: "10 doorbell",
      metric: "long-running processes in doorbell mode (no forwarder; watches held: 0)",
      value: running.forwarder ? "1 (forwarder)" : "0",
      target: "0",
      pass: !running.forwarder,
      range: "the API server calls the endpoint",
    },
    {
      section: "10 doorbell",
      metric: `spec change → update call, doorbell → memory queue (p50/p95/p99, ${memory.samplesMs.length} changes)`,
      value: fmt(memory.samplesMs),
      target: "p99 < 1 s",
      pass: memory.timeouts === 0 && p99(memory.samplesMs) < 1000,
      range: range(memory.samplesMs),
    },
    {
      section: "10 doorbell",
      metric: `spec change → update call, doorbell → SQS + Lambda core (p50/p95/p99, ${sqsPath.samplesMs.length} changes)`,
      value: fmt(sqsPath.samplesMs),
      target: "p99 < 1 s",
      pass: sqsPath.timeouts === 0 && p99(sqsPath.samplesMs) < 1000,
      range: range(sqsPath.samplesMs),
    },
    {
      section: "10 doorbell",
      metric: `PATCH round trip without / with the webhook (p50/p95/p99, ${touchNames.length} each)`,
      value: `${fmt(touchWithout)} → ${fmt(touchWith)}`,
      target: "added p99 < 50 ms (warm)",
      pass: addedPatchP99 < 50,
      range: `added p50 ${added(touchWith, touchWithout, "p50")} ms, p99 ${addedPatchP99} ms`,
    },
    {
      section: "10 doorbell",
      metric: `burst of ${burstSize} creates, 20 at a time, without (after) / with the doorbell → SQS, no consumer running (p50/p95/p99)`,
      value: `${fmt(burstAfter)} → ${fmt(burstSqs)}`,
      target: "added p99 < 50 ms (warm)",
      pass: added(burstSqs, burstAfter, "p99") < 50 && burstSqsRang >= burstSize,
      range: `added p99 ${added(burstSqs, burstAfter, "p99")} ms against the later "without", ${added(burstSqs, burstWithout, "p99")} ms against the first; in the endpoint (parse, decide, SendMessage, answer) p50/p95/p99 ${fmt(handlerMs)}, of which SendMessage on moto ${fmt(sendMs)}; ${burstSqsRang} of ${burstSize} creates rang`,
    },
    {
      section: "10 doorbell",
      metric: `burst of ${burstSize} creates, 20 at a time, without / with the webhook (p50/p95/p99)`,
      value: `${fmt(burstWithout)} → ${fmt(burstWith)}`,
      target: "added p99 < 50 ms (warm)",
      pass: addedCreateP99 < 50 && burstRang >= burstSize,
      range: `added p99 ${addedCreateP99} ms; ${burstRang} of ${burstSize} creates rang`,
    },
    ...(
      [
        ["memory queue", memoryWaits],
        ["SQS + Lambda core", sqsWaits],
      ] as const
    ).map(
      ([path, w]): Row => ({
        section: "10 doorbell",
        metric: `the admitted write when the worker read it, ${path}: stored / stored within the in-worker wait / requeued`,
        value: `${w.stored} / ${w.waited} / ${w.requeued}`,
        target: "—",
        pass: undefined,
        range: `${w.stored + w.waited + w.requeued} doorbell messages read`,
      }),
    ),
  ];
  return {
    rows,
    result: {
      changes: k,
      burstSize,
      memory: { ...memory, percentiles: pct(memory.samplesMs) },
      sqs: { ...sqsPath, percentiles: pct(sqsPath.samplesMs) },
      patch: { without: pct(touchWithout), with: pct(touchWith), addedP99: addedPatchP99 },
      burst: { without: pct(burstWithout), with: pct(burstWith), addedP99: addedCreateP99, rang: burstRang },
      burstSqs: {
        withoutAfter: pct(burstAfter),
        with: pct(burstSqs),
        addedP99: added(burstSqs, burstAfter, "p99"),
        addedP99AgainstFirst: added(burstSqs, burstWithout, "p99"),
        rang: burstSqsRang,
        endpointMs: pct(handlerMs),
        sendMessageMs: pct(sendMs),
      },
      admissionWaits: { memory: memoryWaits, sqs: sqsWaits },
    },
  };
}
