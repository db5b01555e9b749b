// Lambda entry point: SQS event source with `functionResponseType: ReportBatchItemFailures`.
// Thin adapter: config and clients once per container (the worker: shared/pipeline/worker.ts), then
// shared/pipeline/functions-sqs.ts per event.
import { SQSClient } from "@aws-sdk/client-sqs";
import { Kube } from "../../shared/kube/client.ts";
import { KubeEventRecorder } from "../../shared/kube/events.ts";
import { createLogger } from "../../shared/log.ts";
import { EmfMetrics } from "../../shared/metrics-emf.ts";
import { DEFAULT_DEADLINE_MARGIN_MS, perContainer } from "../../shared/pipeline/functions.ts";
import { handleSqsBatch, type SqsBatchResponse, type SqsEvent } from "../../shared/pipeline/functions-sqs.ts";
import { createWorker, type DeadLetterNote, deadLetterNote } from "../../shared/pipeline/worker.ts";
import { awsClusterAccess } from "./cluster.ts";
import { readAwsConfig } from "./config.ts";
import { awsKinds, awsProviderConfigKinds } from "./kinds.ts";

/** The part of Lambda's context object this handler reads. */
export interface LambdaContext {
  getRemainingTimeInMillis(): number;
}

const cfg = readAwsConfig();
const logger = createLogger({ level: cfg.LOG_LEVEL, name: "driftless-reconcile" });
const sqs = new SQSClient({});
// CloudWatch EMF: aggregated per batch, written to stdout after it (Lambda ships stdout to CloudWatch Logs).
const metrics = new EmfMetrics({ namespace: "driftless", serviceName: "driftless-reconcile" });
// Set with the reconcile function: a failed last receive is noted on the resource (Warning Event).
let noteDeadLetter: DeadLetterNote | undefined;
const workerFn = perContainer(async () => {
  const access = await awsClusterAccess(cfg, sqs.config.credentials);
  logger.info({ source: access.source, replacedUsers: access.replacedUsers }, "cluster access loaded");
  const kube = new Kube(access.endpoint);
  const events = new KubeEventRecorder(kube);
  const worker = createWorker({
    kube,
    kinds: awsKinds,
    providerConfigKinds: awsProviderConfigKinds,
    logger,
    pollIntervalMs: cfg.DRIFTLESS_POLL_INTERVAL,
    secretRefNamespaces: cfg.DRIFTLESS_SECRET_REF_NAMESPACES,
    claims: cfg.DRIFTLESS_CLAIMS,
    metrics,
    events,
  });
  noteDeadLetter = deadLetterNote({ kube, types: worker.types, events, logger });
  return worker;
});
// Finish during the init phase (Lambda would freeze work left pending); a failure is retried on invoke.
await workerFn().catch((err: unknown) => {
  logger.error({ error: (err as Error).message }, "cannot reach the cluster yet; retrying on invocation");
});

export async function handler(event: SqsEvent, context?: LambdaContext): Promise<SqsBatchResponse> {
  try {
    const worker = await workerFn();
    const { batchItemFailures } = await handleSqsBatch(
      {
        sqs,
        reconcile: worker.reconcile,
        checkBatch: worker.checkBatch,
        logger,
        queueUrl: cfg.DRIFTLESS_SQS_QUEUE_URL,
        deadLetterQueueUrl: cfg.DRIFTLESS_SQS_DLQ_URL,
        maxReceiveCount: cfg.DRIFTLESS_SQS_MAX_RECEIVE_COUNT,
        noteDeadLetter,
        concurrency: cfg.DRIFTLESS_WORKERS,
        deadlineMs: context
          ? Date.now() + context.getRemainingTimeInMillis() - DEFAULT_DEADLINE_MARGIN_MS
          : undefined,
        metrics,
      },
      event,
    );
    return { batchItemFailures };
  } finally {
    metrics.publish();
  }
}
