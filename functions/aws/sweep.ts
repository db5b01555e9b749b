// Lambda entry point: the drift sweep, on an EventBridge schedule. Thin adapter over runScheduledSweep,
// over the kinds served now (the activation policies are read each invocation: functions/aws/kinds.ts).
import { SQSClient } from "@aws-sdk/client-sqs";
import { Kube } from "../../shared/kube/client.ts";
import { createLogger } from "../../shared/log.ts";
import { type ProviderHealthSetup, sweepWithProviderHealth } from "../../shared/ops/provider-health.ts";
import {
  containerSweepIndex,
  functionSweep,
  logQueueEvents,
  perContainer,
} from "../../shared/pipeline/functions.ts";
import type { SweepResult } from "../../shared/pipeline/sweep.ts";
import { sweepLeaseOf } from "../../shared/pipeline/sweep-lease.ts";
import { SqsProducer } from "../../shared/queue/sqs.ts";
import { sqsQueueDepth } from "../../shared/queue/sqs-depth.ts";
import { typesOf } from "../../shared/worker/worker.ts";
import { awsClusterAccess } from "./cluster.ts";
import { readAwsConfig } from "./config.ts";
import { awsProviderConfigKinds, servedAwsKinds } from "./kinds.ts";

/** The fields of EventBridge's scheduled event this handler reads. */
export interface ScheduledEvent {
  /** When the schedule fired (RFC 3339). */
  time?: string;
}

const cfg = readAwsConfig();
const logger = createLogger({ level: cfg.LOG_LEVEL, name: "driftless-sweep" });
const sqs = new SQSClient({});
const producer = cfg.DRIFTLESS_SQS_QUEUE_URL
  ? new SqsProducer({ client: sqs, queueUrl: cfg.DRIFTLESS_SQS_QUEUE_URL, onEvent: logQueueEvents(logger) })
  : undefined;
// The Provider's health rides on the sweep's own pages; the DLQ depth is one GetQueueAttributes call.
const dlqUrl = cfg.DRIFTLESS_SQS_DLQ_URL;
const health: Omit<ProviderHealthSetup, "kinds"> = {
  providerConfigKinds: awsProviderConfigKinds,
  labelSelector: cfg.DRIFTLESS_LABEL_SELECTOR,
  logger,
  ...(dlqUrl ? { deadLetters: () => sqsQueueDepth(sqs, dlqUrl) } : {}),
};
// Kept while the container is warm: a run then reads what changed and what is due (sweep-index.ts).
const index = containerSweepIndex(cfg);
// One sweep per window however many containers run (sweep-lease.ts).
const lease = sweepLeaseOf(cfg.DRIFTLESS_LABEL_SELECTOR);
const kube = perContainer(async () => {
  const access = await awsClusterAccess(cfg, sqs.config.credentials);
  logger.info({ source: access.source, replacedUsers: access.replacedUsers }, "cluster access loaded");
  return new Kube(access.endpoint);
});
await kube().catch((err: unknown) => {
  logger.error({ error: (err as Error).message }, "cannot reach the cluster yet; retrying on invocation");
});

export async function handler(event: ScheduledEvent = {}): Promise<SweepResult> {
  if (!producer) throw new Error("DRIFTLESS_SQS_QUEUE_URL is not set");
  const scheduledAt = event.time ? new Date(event.time) : undefined;
  // What is served, read every sweep: a kind an activation policy names now is swept now (no rebuild).
  const { kinds } = await servedAwsKinds(await kube(), cfg.DRIFTLESS_ACTIVATE);
  const types = typesOf(kinds, awsProviderConfigKinds, { claims: cfg.DRIFTLESS_CLAIMS });
  const at = scheduledAt && !Number.isNaN(scheduledAt.getTime()) ? scheduledAt : undefined;
  const k0 = await kube();
  return functionSweep(k0, cfg, { types, producer, logger, index, lease, scheduledAt: at }, (run) =>
    sweepWithProviderHealth(k0, { ...health, kinds }, (k, tally) =>
      run(k, (t, items) => tally.observe(t, items, true)),
    ),
  );
}
