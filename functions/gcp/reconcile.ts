// Cloud Functions (gen2) entry point: a CloudEvent function triggered by the work topic through Eventarc.
// Thin adapter: config and clients once per instance, then shared/pipeline/functions-pubsub.ts. Return =
// 2xx (ack); throw = non-2xx (redelivered under the subscription's retry policy, then dead-lettered).
import { type CloudEvent, cloudEvent } from "@google-cloud/functions-framework";
import { PubSub } from "@google-cloud/pubsub";
import { Kube } from "../../shared/kube/client.ts";
import { createLogger } from "../../shared/log.ts";
import { logQueueEvents, perContainer } from "../../shared/pipeline/functions.ts";
import { handlePubSubPush } from "../../shared/pipeline/functions-pubsub.ts";
import { createWorker } from "../../shared/pipeline/worker.ts";
import { PubSubProducer } from "../../shared/queue/pubsub.ts";
import { gcpClusterAccess } from "./cluster.ts";
import { readGcpConfig } from "./config.ts";
import { gcpKinds, gcpProviderConfigKinds } from "./kinds.ts";

const cfg = readGcpConfig();
const logger = createLogger({ level: cfg.LOG_LEVEL, name: "driftless-reconcile" });
const pubsub = new PubSub(cfg.GCP_PROJECT_ID ? { projectId: cfg.GCP_PROJECT_ID } : {});
const deadLetterTopic = cfg.DRIFTLESS_PUBSUB_DLQ_TOPIC
  ? pubsub.topic(cfg.DRIFTLESS_PUBSUB_DLQ_TOPIC)
  : undefined;
const producer = cfg.DRIFTLESS_PUBSUB_TOPIC
  ? new PubSubProducer({ pubsub, topic: cfg.DRIFTLESS_PUBSUB_TOPIC, onEvent: logQueueEvents(logger) })
  : undefined;
const workerFn = perContainer(async () => {
  const access = await gcpClusterAccess(cfg);
  logger.info({ source: access.source, replacedUsers: access.replacedUsers }, "cluster access loaded");
  return createWorker({
    kube: new Kube(access.endpoint),
    kinds: gcpKinds,
    providerConfigKinds: gcpProviderConfigKinds,
    logger,
    pollIntervalMs: cfg.DRIFTLESS_POLL_INTERVAL,
    secretRefNamespaces: cfg.DRIFTLESS_SECRET_REF_NAMESPACES,
    claims: cfg.DRIFTLESS_CLAIMS,
  });
});
await workerFn().catch((err: unknown) => {
  logger.error({ error: (err as Error).message }, "cannot reach the cluster yet; retrying on invocation");
});

export async function reconcile(event: CloudEvent<unknown>): Promise<void> {
  const worker = await workerFn();
  await handlePubSubPush(
    {
      reconcile: worker.reconcile,
      // Without the work topic the batch's follow-ups have nowhere to go: its keys are reconciled one by one.
      checkBatch: producer ? worker.checkBatch(producer) : undefined,
      logger,
      deadLetterTopic,
      producer,
      maxDeliveryAttempts: cfg.DRIFTLESS_PUBSUB_MAX_DELIVERY_ATTEMPTS,
    },
    event,
  );
}

cloudEvent("reconcile", reconcile);
