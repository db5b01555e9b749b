// Cloud Functions (gen2) entry point: the drift sweep. Cloud Scheduler publishes a tick to a topic; this
// CloudEvent function sweeps and publishes due keys to the work topic. Thin adapter over runScheduledSweep.
import { type CloudEvent, cloudEvent } from "@google-cloud/functions-framework";
import { Kube } from "../../shared/kube/client.ts";
import { createLogger } from "../../shared/log.ts";
import { type ProviderHealthSetup, sweepWithProviderHealth } from "../../shared/ops/provider-health.ts";
import {
  containerSweepIndex,
  functionSweep,
  logQueueEvents,
  perContainer,
} from "../../shared/pipeline/functions.ts";
import { sweepLeaseOf } from "../../shared/pipeline/sweep-lease.ts";
import { PubSubProducer } from "../../shared/queue/pubsub.ts";
import { PubSubRestTopic } from "../../shared/queue/pubsub-rest.ts";
import { typesOf } from "../../shared/worker/worker.ts";
import { gcpClusterAccess } from "./cluster.ts";
import { readGcpConfig } from "./config.ts";
import { gcpProviderConfigKinds, servedGcpKinds } from "./kinds.ts";

const cfg = readGcpConfig();
const logger = createLogger({ level: cfg.LOG_LEVEL, name: "driftless-sweep" });
const producer = cfg.DRIFTLESS_PUBSUB_TOPIC
  ? new PubSubProducer({
      topic: new PubSubRestTopic({ topic: cfg.DRIFTLESS_PUBSUB_TOPIC, projectId: cfg.GCP_PROJECT_ID }),
      onEvent: logQueueEvents(logger),
    })
  : undefined;
// The Provider's health rides on the sweep's own pages. Pub/Sub cannot tell a dead-letter count cheaply:
// the health leaves it out.
const health: Omit<ProviderHealthSetup, "kinds"> = {
  providerConfigKinds: gcpProviderConfigKinds,
  labelSelector: cfg.DRIFTLESS_LABEL_SELECTOR,
  logger,
};
// Kept while the container is warm: a run then reads what changed and what is due (sweep-index.ts).
const index = containerSweepIndex(cfg);
// One sweep per window however many containers run (sweep-lease.ts).
const lease = sweepLeaseOf(cfg.DRIFTLESS_LABEL_SELECTOR);
const kube = perContainer(async () => {
  const access = await gcpClusterAccess(cfg);
  logger.info({ source: access.source, replacedUsers: access.replacedUsers }, "cluster access loaded");
  return new Kube(access.endpoint);
});
await kube().catch((err: unknown) => {
  logger.error({ error: (err as Error).message }, "cannot reach the cluster yet; retrying on invocation");
});

export async function sweep(event: CloudEvent<unknown>): Promise<void> {
  if (!producer) throw new Error("DRIFTLESS_PUBSUB_TOPIC is not set");
  const scheduledAt = event.time ? new Date(event.time) : undefined;
  const at = scheduledAt && !Number.isNaN(scheduledAt.getTime()) ? scheduledAt : undefined;
  const k0 = await kube();
  // What is served, read every sweep: a kind an activation policy names now is swept now (no rebuild).
  const { kinds } = await servedGcpKinds(k0, cfg.DRIFTLESS_ACTIVATE);
  const types = typesOf(kinds, gcpProviderConfigKinds, { claims: cfg.DRIFTLESS_CLAIMS });
  await functionSweep(k0, cfg, { types, producer, logger, index, lease, scheduledAt: at }, (run) =>
    sweepWithProviderHealth(k0, { ...health, kinds }, (k, tally) =>
      run(k, (t, items) => tally.observe(t, items, true)),
    ),
  );
}

cloudEvent("sweep", sweep);
