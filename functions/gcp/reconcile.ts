// Cloud Functions (gen2) entry point: a CloudEvent function triggered by the work topic through Eventarc.
// Thin adapter: config and clients once per instance, then shared/worker/pubsub.ts. Return =
// 2xx (ack); throw = non-2xx (redelivered under the subscription's retry policy, then dead-lettered).
import { type CloudEvent, cloudEvent } from "@google-cloud/functions-framework";
import { FIELD_MANAGER, Kube } from "../../shared/kube/client.ts";
import { KubeEventRecorder } from "../../shared/kube/events.ts";
import { createLogger } from "../../shared/log.ts";
import { cloudFunctionsIdentity, registerProviderQuietly } from "../../shared/ops/provider.ts";
import { ServedKinds, servedReconcile } from "../../shared/ops/served-kinds.ts";
import { logQueueEvents, perContainer } from "../../shared/pipeline/functions.ts";
import { setOwnQueues } from "../../shared/providers/own-queues.ts";
import { PubSubProducer } from "../../shared/queue/pubsub.ts";
import { PubSubRestTopic } from "../../shared/queue/pubsub-rest.ts";
import { handlePubSubPush } from "../../shared/worker/pubsub.ts";
import { createWorker } from "../../shared/worker/worker.ts";
import { ownQueuesOf, workerSettingsOf } from "../config.ts";
import { gcpClusterAccess } from "./cluster.ts";
import { readGcpConfig } from "./config.ts";
import { gcpProviderConfigKinds, servedGcpKinds } from "./kinds.ts";

/** A key of a generated kind this instance does not serve reads the activation policies again at most this often. */
const NOT_ACTIVATED_RECHECK_MS = 10_000;

const cfg = readGcpConfig();
setOwnQueues(ownQueuesOf(cfg));
const logger = createLogger({ level: cfg.LOG_LEVEL, name: "driftless-reconcile" });
const topic = (name: string) => new PubSubRestTopic({ topic: name, projectId: cfg.GCP_PROJECT_ID });
const deadLetterTopic = cfg.DRIFTLESS_PUBSUB_DLQ_TOPIC ? topic(cfg.DRIFTLESS_PUBSUB_DLQ_TOPIC) : undefined;
const producer = cfg.DRIFTLESS_PUBSUB_TOPIC
  ? new PubSubProducer({ topic: topic(cfg.DRIFTLESS_PUBSUB_TOPIC), onEvent: logQueueEvents(logger) })
  : undefined;
/**
 * The worker over what is served: the hand-written kinds and the generated kinds the activation policies
 * name, read at cold start and again each sweep interval (shared/ops/served-kinds.ts); a changed set of
 * generated kinds makes a new worker, so a kind activated later is served without a rebuild.
 */
const servingFn = perContainer(async () => {
  const access = await gcpClusterAccess(cfg);
  logger.info({ source: access.source, replacedUsers: access.replacedUsers }, "cluster access loaded");
  const kube = new Kube(access.endpoint, { fieldManager: FIELD_MANAGER });
  const events = new KubeEventRecorder(kube);
  const served = new ServedKinds(
    () => servedGcpKinds(kube, cfg.DRIFTLESS_ACTIVATE),
    ({ kinds, generated }) => {
      logger.info({ kinds: kinds.length, generated }, "serving the activated kinds");
      return createWorker({
        kube,
        kinds,
        providerConfigKinds: gcpProviderConfigKinds,
        logger,
        ...workerSettingsOf(cfg),
        events,
      });
    },
    { refreshMs: cfg.DRIFTLESS_SWEEP_INTERVAL },
  );
  await served.current();
  const reconcile = servedReconcile({ served, kube, events, logger, recheckMs: NOT_ACTIVATED_RECHECK_MS });
  // The Provider object shows this function revision (one GET; a write only for a new revision).
  await registerProviderQuietly(
    kube,
    {
      cloud: "gcp",
      identity: cloudFunctionsIdentity(process.env),
      labelSelector: cfg.DRIFTLESS_LABEL_SELECTOR,
    },
    logger,
  );
  return { served, reconcile };
});
await servingFn().catch((err: unknown) => {
  logger.error({ error: (err as Error).message }, "cannot reach the cluster yet; retrying on invocation");
});

export async function reconcile(event: CloudEvent<unknown>): Promise<void> {
  const serving = await servingFn();
  const { value: worker } = await serving.served.current();
  await handlePubSubPush(
    {
      reconcile: serving.reconcile,
      // Without the work topic the batch's follow-ups have nowhere to go: its keys are reconciled one by one.
      checkBatch: producer ? worker.checkBatch(producer) : undefined,
      cloudEvents: worker.cloudEvents,
      storedVersion: worker.storedVersion,
      logger,
      deadLetterTopic,
      producer,
      maxDeliveryAttempts: cfg.DRIFTLESS_PUBSUB_MAX_DELIVERY_ATTEMPTS,
    },
    event,
  );
}

cloudEvent("reconcile", reconcile);
