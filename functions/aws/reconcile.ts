// Lambda entry point: SQS event source with `functionResponseType: ReportBatchItemFailures`.
// Thin adapter: config and clients once per container (the worker: shared/worker/worker.ts), then
// shared/worker/sqs.ts per SQS event. The admission doorbell is its own function (doorbell.ts): an
// unauthenticated request never cold-starts this one (Secrets Manager, the API server).
import { SQSClient } from "@aws-sdk/client-sqs";
import { FIELD_MANAGER, Kube } from "../../shared/kube/client.ts";
import { KubeEventRecorder } from "../../shared/kube/events.ts";
import { createLogger } from "../../shared/log.ts";
import { EmfMetrics } from "../../shared/metrics-emf.ts";
import { lambdaIdentity, registerProviderQuietly } from "../../shared/ops/provider.ts";
import { ServedKinds, servedReconcile } from "../../shared/ops/served-kinds.ts";
import { perContainer } from "../../shared/pipeline/functions.ts";
import { setOwnQueues } from "../../shared/providers/own-queues.ts";
import { DEFAULT_DEADLINE_MARGIN_MS } from "../../shared/worker/constants.ts";
import { type DeadLetterNote, deadLetterNote } from "../../shared/worker/dead-letter.ts";
import { handleSqsBatch, type SqsBatchResponse, type SqsEvent } from "../../shared/worker/sqs.ts";
import { createWorker } from "../../shared/worker/worker.ts";
import { ownQueuesOf, workerSettingsOf } from "../config.ts";
import { awsClusterAccess } from "./cluster.ts";
import { readAwsConfig } from "./config.ts";
import { awsProviderConfigKinds, servedAwsKinds } from "./kinds.ts";

/** A key of a generated kind this container does not serve reads the activation policies again at most this often. */
const NOT_ACTIVATED_RECHECK_MS = 10_000;

/** The part of Lambda's context object this handler reads. */
export interface LambdaContext {
  getRemainingTimeInMillis(): number;
}

const cfg = readAwsConfig();
setOwnQueues(ownQueuesOf(cfg));
const logger = createLogger({ level: cfg.LOG_LEVEL, name: "driftless-reconcile" });
const sqs = new SQSClient({});
// CloudWatch EMF: aggregated per batch, written to stdout after it (Lambda ships stdout to CloudWatch Logs).
const metrics = new EmfMetrics({ namespace: "driftless", serviceName: "driftless-reconcile" });
// Set with the reconcile function: a failed last receive is noted on the resource (Warning Event).
let noteDeadLetter: DeadLetterNote | undefined;
/**
 * The worker over what is served: the hand-written kinds and the generated kinds the activation policies
 * name, read at cold start and again each sweep interval (shared/ops/served-kinds.ts); a changed set of
 * generated kinds makes a new worker, so a kind activated later is served without a rebuild.
 */
const servingFn = perContainer(async () => {
  const access = await awsClusterAccess(cfg, sqs.config.credentials);
  logger.info({ source: access.source, replacedUsers: access.replacedUsers }, "cluster access loaded");
  const kube = new Kube(access.endpoint, { fieldManager: FIELD_MANAGER });
  const events = new KubeEventRecorder(kube);
  const served = new ServedKinds(
    () => servedAwsKinds(kube, cfg.DRIFTLESS_ACTIVATE),
    ({ kinds, generated }) => {
      logger.info({ kinds: kinds.length, generated }, "serving the activated kinds");
      const worker = createWorker({
        kube,
        kinds,
        providerConfigKinds: awsProviderConfigKinds,
        logger,
        ...workerSettingsOf(cfg),
        metrics,
        events,
      });
      noteDeadLetter = deadLetterNote({ kube, types: worker.types, events, logger });
      return worker;
    },
    { refreshMs: cfg.DRIFTLESS_SWEEP_INTERVAL },
  );
  await served.current();
  const reconcile = servedReconcile({
    served,
    kube,
    events,
    logger,
    recheckMs: NOT_ACTIVATED_RECHECK_MS,
  });
  // The Provider object shows this function version (one GET; a write only for a new revision).
  await registerProviderQuietly(
    kube,
    { cloud: "aws", identity: lambdaIdentity(process.env), labelSelector: cfg.DRIFTLESS_LABEL_SELECTOR },
    logger,
  );
  return { served, reconcile };
});
// Finish during the init phase (Lambda would freeze work left pending); a failure is retried on invoke.
await servingFn().catch((err: unknown) => {
  logger.error({ error: (err as Error).message }, "cannot reach the cluster yet; retrying on invocation");
});

export async function handler(event: SqsEvent, context?: LambdaContext): Promise<SqsBatchResponse> {
  // Nothing to reconcile: no reason to reach the cluster (Lambda never sends an empty batch; tests do).
  if (event.Records.length === 0) return { batchItemFailures: [] };
  try {
    const serving = await servingFn();
    const { value: worker } = await serving.served.current();
    const { batchItemFailures } = await handleSqsBatch(
      {
        sqs,
        reconcile: serving.reconcile,
        checkBatch: worker.checkBatch,
        cloudEvents: worker.cloudEvents,
        storedVersion: worker.storedVersion,
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
