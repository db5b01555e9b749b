// 3. Latency from a spec change to the cloud update call, timestamped where the update crosses the wire
// (the recording proxy): (a) one-process mode (`startRun`: forwarder → memory queue → workers) and
// (b) forwarder → SQS on moto → Lambda's event source (emulated) → the Lambda handler core.
// Each change edits one object's spec.forProvider.visibilityTimeoutSeconds; t0 is just before the PATCH.
import { DeleteQueueCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { awsKinds, awsProviderConfigKinds } from "../../functions/aws/kinds.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import { Kube } from "../../shared/kube/client.ts";
import { createLogger } from "../../shared/log.ts";
import { noopLogger } from "../../shared/pipeline/common.ts";
import { Forwarder } from "../../shared/pipeline/forwarder.ts";
import { startRun } from "../../shared/pipeline/run.ts";
import { SqsProducer } from "../../shared/queue/sqs.ts";
import { DEFAULT_POLL_INTERVAL_MS } from "../../shared/reconciler/reconciler.ts";
import { handleSqsBatch } from "../../shared/worker/sqs.ts";
import { createWorker, typesOf } from "../../shared/worker/worker.ts";
import { inParallel } from "../../test/support/env.ts";
import type { BenchContext } from "../lib/context.ts";
import { selectorOf } from "../lib/fixtures.ts";
import { benchWorkQueue, LambdaEventSource } from "../lib/lambda.ts";
import type { Row } from "../lib/report.ts";
import { percentiles, sleep } from "../lib/stats.ts";
import { DRIFT_DEFAULTS } from "../prices.ts";

const UPDATE_TIMEOUT_MS = 15_000;

interface PathResult {
  samplesMs: number[];
  /** PATCH round trip (the API server accepting the change), for the breakdown. */
  patchMs: number[];
  timeouts: number;
  percentiles: Record<string, number>;
}

/** Changes `names` one after another and waits for each update to reach the wire. */
async function changeAll(
  ctx: BenchContext,
  kube: Kube,
  names: readonly string[],
  base: number,
): Promise<PathResult> {
  const samplesMs: number[] = [];
  const patchMs: number[] = [];
  let timeouts = 0;
  for (const [i, name] of names.entries()) {
    const value = base + i;
    const mark = ctx.proxy.mark();
    const t0 = Date.now();
    await kube.patch(Queue, name, { spec: { forProvider: { visibilityTimeoutSeconds: value } } });
    patchMs.push(Date.now() - t0);
    const call = await ctx.proxy.waitFor(
      (c) => c.action === "SQS.SetQueueAttributes" && (c.resource?.endsWith(`/${name}`) ?? false),
      mark,
      UPDATE_TIMEOUT_MS,
    );
    if (call) samplesMs.push(call.at - t0);
    else timeouts++;
    // Changes arrive one at a time, 20–80 ms apart: latency, not throughput.
    await sleep(20 + Math.random() * 60);
  }
  return { samplesMs, patchMs, timeouts, percentiles: percentiles(samplesMs) };
}

export async function measureLatency(ctx: BenchContext) {
  const k = ctx.sizes.latencyChanges;
  const selector = selectorOf(ctx.run, "insync");
  const kube = new Kube(ctx.kc);
  const memoryNames = ctx.insync.slice(0, k);
  const sqsNames = ctx.insync.slice(k, 2 * k);
  if (sqsNames.length < k)
    throw new Error(`latency needs ${2 * k} in-sync queues, have ${ctx.insync.length}`);

  // (a) one-process mode: what `driftless run` is, with the AWS kinds.
  ctx.log("latency (memory queue): starting driftless run …");
  const running = await startRun({
    kubeConfig: ctx.kc,
    logger: createLogger({ level: "silent" }),
    kinds: awsKinds,
    providerConfigKinds: awsProviderConfigKinds,
    workers: ctx.sizes.concurrency,
    sweepIntervalMs: 10 * 60_000,
    labelSelector: selector,
  });
  let memory: PathResult;
  try {
    // The first sweep and the forwarder's initial list reconcile every key once; measure after that,
    // once the engine's rate limit (20 calls/s per ProviderConfig, burst 40) has refilled.
    await running.sweepNow();
    await running.queue.idle();
    await sleep(2_500);
    memory = await changeAll(ctx, kube, memoryNames, 100);
  } finally {
    await running.stop();
  }
  ctx.log(`latency (memory queue): ${JSON.stringify(memory.percentiles)} ms, ${memory.timeouts} timeouts`);

  // (b) SQS on moto + the Lambda handler core, two emulated containers (Lambda starts with several pollers).
  ctx.log("latency (SQS + Lambda handler): starting forwarder and event source …");
  const { sqs, work } = await benchWorkQueue(ctx.env, `${ctx.run}-work`);
  const types = typesOf(awsKinds, awsProviderConfigKinds);
  const forwarder = new Forwarder({
    kube: new Kube(ctx.kc),
    types,
    sink: new SqsProducer({ client: sqs, queueUrl: work.queueUrl }),
    labelSelector: selector,
  });
  const source = new LambdaEventSource({ sqs, queueUrl: work.queueUrl, queueArn: work.queueArn });
  const containers = [0, 1].map(() => {
    const reconcile = createWorker({
      kube: new Kube(ctx.kc),
      kinds: awsKinds,
      providerConfigKinds: awsProviderConfigKinds,
      logger: noopLogger,
    }).reconcile;
    return (event: Parameters<typeof handleSqsBatch>[1]) =>
      handleSqsBatch(
        { sqs, reconcile, logger: noopLogger, queueUrl: work.queueUrl, maxReceiveCount: 5, concurrency: 8 },
        event,
      );
  });
  let sqsPath: PathResult;
  try {
    source.start(containers);
    await forwarder.start();
    // The initial list forwards every key once; wait until the containers have worked through them.
    await source.drained(3_000, 10 * 60_000);
    await sleep(2_500);
    sqsPath = await changeAll(ctx, kube, sqsNames, 600);
  } finally {
    await forwarder.stop();
    await source.stop();
    await deleteQueues(sqs, [work.queueUrl, work.dlqUrl]);
    sqs.destroy();
  }
  ctx.log(
    `latency (SQS + Lambda handler): ${JSON.stringify(sqsPath.percentiles)} ms, ${sqsPath.timeouts} timeouts`,
  );
  const invocations = source.invocations;

  const p = (r: PathResult) =>
    `${Math.round(r.percentiles.p50 ?? 0)} / ${Math.round(r.percentiles.p95 ?? 0)} / ${Math.round(r.percentiles.p99 ?? 0)} ms`;
  const minMax = (r: PathResult) =>
    r.samplesMs.length > 0 ? `${Math.min(...r.samplesMs)}–${Math.max(...r.samplesMs)} ms` : "—";
  const sweepMs = 60_000;
  const rows: Row[] = [
    {
      section: "3 latency",
      metric: `spec change → update call, memory queue (p50/p95/p99, ${memory.samplesMs.length} changes)`,
      value: p(memory),
      target: "p99 < 1 s",
      pass: memory.timeouts === 0 && (memory.percentiles.p99 ?? Number.POSITIVE_INFINITY) < 1000,
      range: minMax(memory),
    },
    {
      section: "3 latency",
      metric: `spec change → update call, SQS + Lambda core (p50/p95/p99, ${sqsPath.samplesMs.length} changes)`,
      value: p(sqsPath),
      target: "p99 < 2 s",
      pass: sqsPath.timeouts === 0 && (sqsPath.percentiles.p99 ?? Number.POSITIVE_INFINITY) < 2000,
      range: minMax(sqsPath),
    },
    {
      section: "3 latency",
      metric: "drift without an event: driftless (poll interval + sweep schedule)",
      value: `≤ ${DEFAULT_POLL_INTERVAL_MS / 60_000} m + ${sweepMs / 60_000} m`,
      target: "—",
      pass: undefined,
      range: "defaults; per resource: crossplane.io/poll-interval",
    },
    ...DRIFT_DEFAULTS.map(
      (d): Row => ({
        section: "3 latency",
        metric: `drift without an event: ${d.who}`,
        value: d.seconds >= 3600 ? `${d.seconds / 3600} h` : `${d.seconds / 60} m`,
        target: "—",
        pass: undefined,
        range: d.note,
      }),
    ),
  ];
  return {
    rows,
    result: {
      changesPerPath: k,
      memory,
      sqs: sqsPath,
      sqsInvocations: {
        count: invocations.length,
        records: invocations.reduce((a, b) => a + b.records, 0),
      },
      drift: {
        driftless: { pollIntervalMs: DEFAULT_POLL_INTERVAL_MS, sweepScheduleMs: sweepMs },
        others: DRIFT_DEFAULTS,
      },
    },
  };
}

export async function deleteQueues(sqs: SQSClient, urls: string[]) {
  await inParallel(urls, 8, (QueueUrl) =>
    sqs.send(new DeleteQueueCommand({ QueueUrl })).catch(() => undefined),
  );
}
