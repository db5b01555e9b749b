// 4. Scale: many managed resources in the real API server. The drift sweep's time to list and enqueue
// all of them (into an encoding sink; into SQS on moto too at the small size — moto's SendMessageBatch
// gets slower the deeper the queue, which would measure moto), the forwarder's RSS after its initial
// sync (the deployed bundle in its own process, with the node flags and NODE_OPTIONS of
// infra/k8s/forwarder.yaml), and a Lambda reconcile container's RSS after handling as many reconciles.
// Each RSS number comes from a fresh child process.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PurgeQueueCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { parseAllDocuments } from "yaml";
import { awsKinds, awsProviderConfigKinds } from "../../functions/aws/kinds.ts";
import { Kube } from "../../shared/kube/client.ts";
import type { MessageSink } from "../../shared/pipeline/common.ts";
import { sweep } from "../../shared/pipeline/sweep.ts";
import { encodeMessage, makeMessage } from "../../shared/queue/message.ts";
import { SqsProducer } from "../../shared/queue/sqs.ts";
import { typesOf } from "../../shared/worker/worker.ts";
import { measureForwarder, runWorker } from "../lib/children.ts";
import type { BenchContext } from "../lib/context.ts";
import { BENCH_LABEL, selectorOf } from "../lib/fixtures.ts";
import { type Summary, summarize } from "../lib/stats.ts";

export interface ScalePoint {
  resources: number;
  /** The sweep into an in-process sink that encodes every message as a producer would. */
  sweep: { durationMs: Summary; enqueued: number; pages: number; listed: number };
  /** The same sweep into SQS on moto (the small point only: moto's SendMessageBatch slows with depth). */
  sqsSweep?: { durationMs: Summary; enqueued: number };
  forwarder: { rssMb: Summary; peakMb: Summary; liveHeapMb: Summary; syncMs: Summary; errors: string[] };
  worker: {
    reconciles: number;
    rssMb: Summary;
    peakMb: Summary;
    liveHeapMb: Summary;
    invocationMs: Summary;
    reconcilesPerSecond: Summary;
  };
}

export interface ScaleQueues {
  sweepUrl: string;
  forwarderUrl: string;
}

/** What a forwarder measurement needs: the queue it sends to, the bundle, the heap probe. */
interface ForwarderInputs {
  sqs: SQSClient;
  queues: ScaleQueues;
  forwarderBundle: string;
  probe: string;
}

const childEnv = (ctx: BenchContext): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "/tmp",
  KUBECONFIG: ctx.env.KUBECONFIG ?? "",
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "testing",
  AWS_SECRET_ACCESS_KEY: "testing-secret-value",
  AWS_ENDPOINT_URL: ctx.env.AWS_ENDPOINT_URL ?? "",
});

async function purge(sqs: SQSClient, url: string) {
  await sqs.send(new PurgeQueueCommand({ QueueUrl: url })).catch(() => undefined);
}

/** Takes messages as a queue producer would (each one validated and encoded), and counts them. */
const encodingSink = (): MessageSink => ({
  async send(messages) {
    let bytes = 0;
    for (const m of messages) bytes += encodeMessage(m).length;
    return { sent: bytes > 0 ? messages.length : 0, failed: [] };
  },
});

/** The forwarder Deployment's container in infra/k8s/forwarder.yaml: measure what is deployed. */
function forwarderContainer(): { command: string[]; env: Array<{ name: string; value?: string }> } {
  const file = path.resolve(import.meta.dirname, "../../infra/k8s/forwarder.yaml");
  for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
    const o = doc.toJS() as {
      kind?: string;
      spec?: {
        template?: {
          spec?: {
            containers?: Array<{ command?: string[]; env?: Array<{ name: string; value?: string }> }>;
          };
        };
      };
    };
    if (o?.kind !== "Deployment") continue;
    const c = o.spec?.template?.spec?.containers?.[0];
    return { command: c?.command ?? [], env: c?.env ?? [] };
  }
  return { command: [], env: [] };
}

/** NODE_OPTIONS of the forwarder's container. */
export function forwarderNodeOptions(): string {
  return forwarderContainer().env.find((e) => e.name === "NODE_OPTIONS")?.value ?? "";
}

/** The node flags of the forwarder's command (`node <flags> dist/forwarder.mjs`): those NODE_OPTIONS refuses. */
export function forwarderNodeArgs(): string[] {
  const [, ...rest] = forwarderContainer().command;
  return rest.filter((a) => a.startsWith("--"));
}

/** The forwarder bundle as deployed: env of forwarder.yaml, its heap limit, our label selector. */
function forwarderRun(
  ctx: BenchContext,
  o: { bundle: string; probe: string; queueUrl: string; selector: string },
) {
  return {
    bundle: o.bundle,
    probe: o.probe,
    nodeArgs: forwarderNodeArgs(),
    env: {
      ...childEnv(ctx),
      NODE_OPTIONS: forwarderNodeOptions(),
      LOG_LEVEL: "info",
      DRIFTLESS_QUEUE: "sqs",
      DRIFTLESS_CLOUDS: "aws",
      DRIFTLESS_SQS_QUEUE_URL: o.queueUrl,
      DRIFTLESS_LABEL_SELECTOR: o.selector,
    },
    settleMs: 3_000,
    timeoutMs: 180_000,
  };
}

/** The forwarder watching no object at all: the runtime and the code it loads. */
export async function measureForwarderBaseline(ctx: BenchContext, o: ForwarderInputs) {
  const runs = [];
  for (let r = 0; r < (ctx.quick ? 1 : ctx.sizes.rssReps); r++) {
    runs.push(
      await measureForwarder({
        ...forwarderRun(ctx, {
          bundle: o.forwarderBundle,
          probe: o.probe,
          queueUrl: o.queues.forwarderUrl,
          selector: `${BENCH_LABEL}=${ctx.run}-matches-nothing`,
        }),
        expectKeys: 0,
      }),
    );
  }
  const res = {
    rssMb: summarize(runs.map((f) => f.rssMb)),
    liveHeapMb: summarize(runs.map((f) => f.liveHeapMb)),
  };
  ctx.log(
    `scale 0: forwarder RSS ${res.rssMb.median.toFixed(1)} MB, live heap ${res.liveHeapMb.median.toFixed(1)} MB`,
  );
  return res;
}

export async function measureScalePoint(
  ctx: BenchContext,
  o: ForwarderInputs & {
    resources: number;
    workerBundle: string;
    /** Also sweep into SQS on moto (keep to small sizes). */
    sqsSweep: boolean;
  },
): Promise<ScalePoint> {
  const n = o.resources;
  const selector = selectorOf(ctx.run, "scale");
  const types = typesOf(awsKinds, awsProviderConfigKinds);
  // The sweep function's work: every kind of the AWS deployment, page by page. The objects have no
  // status yet, so every one of them is due ("attention"): the sweep enqueues all N.
  const sweepInto = (sink: MessageSink) =>
    sweep({
      kube: new Kube(ctx.kc),
      types,
      sink,
      scheduleMs: 60_000,
      defaultPollMs: 5 * 60_000,
      labelSelector: selector,
    });

  const sweeps: Array<{ durationMs: number; enqueued: number; pages: number; listed: number }> = [];
  for (let r = 0; r < ctx.sizes.sweepReps; r++) {
    const res = await sweepInto(encodingSink());
    sweeps.push(res);
    ctx.log(
      `scale ${n}: sweep ${r + 1} listed ${res.listed}, enqueued ${res.enqueued} in ${res.durationMs} ms`,
    );
  }
  const sqsSweeps: Array<{ durationMs: number; enqueued: number }> = [];
  if (o.sqsSweep) {
    for (let r = 0; r < ctx.sizes.sweepReps; r++) {
      const res = await sweepInto(new SqsProducer({ client: o.sqs, queueUrl: o.queues.sweepUrl }));
      sqsSweeps.push(res);
      await purge(o.sqs, o.queues.sweepUrl);
      ctx.log(`scale ${n}: sweep into SQS ${r + 1}: enqueued ${res.enqueued} in ${res.durationMs} ms`);
    }
  }

  const forwarder = await measureForwarderPoint(ctx, { ...o, selector });

  // A Lambda container handling as many reconciles as there are resources (of the in-sync queues,
  // cycled): its memory must not grow with the work it has done.
  const namesFile = path.join(ctx.distDir, "insync-names.txt");
  writeFileSync(namesFile, `${ctx.insync.join("\n")}\n`);
  const workers = [];
  // Ten thousand reconciles take minutes here: one child for the big point, two for the small one.
  const workerReps = ctx.quick || n >= 10_000 ? 1 : 2;
  for (let r = 0; r < workerReps; r++) {
    const w = await runWorker({
      bundle: o.workerBundle,
      env: childEnv(ctx),
      namesFile,
      reconciles: n,
      timeoutMs: 20 * 60_000,
    });
    if ((w.outcomes.done ?? 0) !== n) throw new Error(`worker child: ${JSON.stringify(w.outcomes)} of ${n}`);
    workers.push(w);
    ctx.log(
      `scale ${n}: worker RSS ${(w.rssKb / 1024).toFixed(1)} MB (live heap ${(w.liveHeapBytes / 1048576).toFixed(1)}) after ${w.reconciles} reconciles (${((w.reconciles / w.wallMs) * 1000).toFixed(0)}/s)`,
    );
  }

  const mbOf = (bytes: number) => bytes / 1024 / 1024;
  return {
    resources: n,
    sweep: {
      durationMs: summarize(sweeps.map((s) => s.durationMs)),
      enqueued: sweeps[0]?.enqueued ?? 0,
      pages: sweeps[0]?.pages ?? 0,
      listed: sweeps[0]?.listed ?? 0,
    },
    ...(sqsSweeps.length > 0
      ? {
          sqsSweep: {
            durationMs: summarize(sqsSweeps.map((s) => s.durationMs)),
            enqueued: sqsSweeps[0]?.enqueued ?? 0,
          },
        }
      : {}),
    forwarder,
    worker: {
      reconciles: n,
      rssMb: summarize(workers.map((w) => w.rssKb / 1024)),
      peakMb: summarize(workers.map((w) => w.peakRssKb / 1024)),
      liveHeapMb: summarize(workers.map((w) => mbOf(w.liveHeapBytes))),
      invocationMs: summarize(workers.flatMap((w) => w.invocationMs)),
      reconcilesPerSecond: summarize(workers.map((w) => (w.reconciles / w.wallMs) * 1000)),
    },
  };
}

/**
 * The forwarder bundle after its initial sync of `resources` objects (those matching `selector`), one
 * fresh process per repetition: RSS, peak, live heap and sync time.
 */
export async function measureForwarderPoint(
  ctx: BenchContext,
  o: ForwarderInputs & { resources: number; selector: string },
): Promise<ScalePoint["forwarder"]> {
  const n = o.resources;
  const selector = o.selector;
  const forwarders = [];
  const errors: string[] = [];
  for (let r = 0; r < ctx.sizes.rssReps; r++) {
    let f: Awaited<ReturnType<typeof measureForwarder>>;
    try {
      f = await measureForwarder({
        ...forwarderRun(ctx, {
          bundle: o.forwarderBundle,
          probe: o.probe,
          queueUrl: o.queues.forwarderUrl,
          selector,
        }),
        expectKeys: n,
      });
    } catch (err) {
      // A forwarder that dies (out of memory under its 96 MB heap limit, say) is a result, not a crash.
      const msg = (err as Error).message;
      errors.push(msg.slice(0, 2000));
      ctx.log(`scale ${n}: forwarder failed: ${msg.split("\n")[0]}`);
      await purge(o.sqs, o.queues.forwarderUrl);
      continue;
    }
    forwarders.push(f);
    await purge(o.sqs, o.queues.forwarderUrl);
    ctx.log(
      `scale ${n}: forwarder RSS ${f.rssMb.toFixed(1)} MB (peak ${f.peakMb.toFixed(1)}, live heap ${f.liveHeapMb.toFixed(1)}), synced in ${f.syncMs} ms`,
    );
  }

  return {
    rssMb: summarize(forwarders.map((f) => f.rssMb)),
    peakMb: summarize(forwarders.map((f) => f.peakMb)),
    liveHeapMb: summarize(forwarders.map((f) => f.liveHeapMb)),
    syncMs: summarize(forwarders.map((f) => f.syncMs)),
    errors,
  };
}

/**
 * What sending costs per message on top of listing: the sweep's producer sending 200 messages (one
 * page's due share at 1k resources) into a shallow SQS queue on moto, purged in between.
 */
export async function measureSqsSend(ctx: BenchContext, sqs: SQSClient, queueUrl: string) {
  const producer = new SqsProducer({ client: sqs, queueUrl });
  const messages = Array.from({ length: 200 }, (_, i) =>
    makeMessage(
      { apiVersion: "sqs.aws.driftless.dev/v1alpha1", kind: "Queue", name: `${ctx.run}-s${i}` },
      "drift",
    ),
  );
  const samples: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t = performance.now();
    const res = await producer.send(messages);
    samples.push((performance.now() - t) / Math.max(1, res.sent));
    await purge(sqs, queueUrl);
  }
  ctx.log(`SQS send on moto: ${samples.map((x) => x.toFixed(2)).join(", ")} ms per message`);
  return { messages: messages.length, msPerMessage: summarize(samples) };
}
