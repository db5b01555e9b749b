// A Lambda reconcile container, bundled by the benchmark like the real one (esbuild, minified) and run
// in its own process so its memory is its own: the Lambda handler core (handleSqsBatch) over the AWS
// kinds, fed K in-sync keys in batches of 10 (one invocation at a time, as Lambda does). The engine's
// per-ProviderConfig rate limit is off here (the real bundle keeps it: 20 calls/s per container), so
// the run measures memory and per-invocation time rather than the limiter. Prints one JSON line.
import { readFileSync } from "node:fs";
import { SQSClient } from "@aws-sdk/client-sqs";
import { awsKinds } from "../../functions/aws/kinds.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import { Kube } from "../../shared/kube/client.ts";
import { defaultEndpoint } from "../../shared/kube/kubeconfig.ts";
import { noopLogger } from "../../shared/pipeline/common.ts";
import { encodeMessage, makeMessage } from "../../shared/queue/message.ts";
import { KindRegistry } from "../../shared/reconciler/registry.ts";
import { handleSqsBatch, type SqsEventRecord } from "../../shared/worker/sqs.ts";
import { Reconciler } from "../../test/support/routed.ts";

function statusKb(field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync("/proc/self/status", "utf8"));
  return Number(m?.[1] ?? Number.NaN);
}

const names = readFileSync(process.env.BENCH_NAMES_FILE ?? "", "utf8")
  .split("\n")
  .filter(Boolean);
const total = Number(process.env.BENCH_RECONCILES ?? names.length);
const arn = "arn:aws:sqs:us-east-1:123456789012:bench-worker";
// Cluster access as the deployed function loads it (its own kubeconfig loader, no client-node).
const kube = new Kube(defaultEndpoint().endpoint);
const reconciler = new Reconciler(kube, new KindRegistry(awsKinds), { rateLimit: false });
const reconcile = (key: Parameters<typeof reconciler.reconcile>[0]) => reconciler.reconcile(key);
const sqs = new SQSClient({ region: "us-east-1" });

const durations: number[] = [];
const outcomes: Record<string, number> = {};
const started = Date.now();
for (let i = 0; i < total; i += 10) {
  const records: SqsEventRecord[] = [];
  for (let j = i; j < Math.min(total, i + 10); j++) {
    const name = names[j % names.length] ?? "";
    records.push({
      messageId: `m-${j}`,
      receiptHandle: `r-${j}`,
      body: encodeMessage(makeMessage({ apiVersion: Queue.apiVersion, kind: Queue.kind, name }, "drift")),
      attributes: { ApproximateReceiveCount: "1" },
      eventSourceARN: arn,
    });
  }
  const t = performance.now();
  const res = await handleSqsBatch(
    { sqs, reconcile, logger: noopLogger, queueUrl: "http://127.0.0.1/unused", concurrency: 8 },
    { Records: records },
  );
  durations.push(performance.now() - t);
  outcomes.done = (outcomes.done ?? 0) + res.summary.done;
  outcomes.failed = (outcomes.failed ?? 0) + res.batchItemFailures.length;
}
const rssKb = statusKb("VmRSS");
const peakRssKb = statusKb("VmHWM");
const heapUsedBytes = process.memoryUsage().heapUsed;
(globalThis as { gc?: () => void }).gc?.();
process.stdout.write(
  `${JSON.stringify({
    reconciles: total,
    wallMs: Date.now() - started,
    invocationMs: durations,
    outcomes,
    rssKb,
    peakRssKb,
    heapUsedBytes,
    liveHeapBytes: process.memoryUsage().heapUsed,
    externalCalls: reconciler.externalCalls,
    kube: { gets: kube.stats.gets, lists: kube.stats.lists, writes: kube.stats.writes },
  })}\n`,
);
process.exit(0);
