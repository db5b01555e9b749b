// The Pub/Sub push adapter of the Cloud Functions (gen2) reconcile function: one Pub/Sub message per invocation, pushed
// by Eventarc as a CloudEvent. A 2xx answer (the handler returns) acks the message; a non-2xx answer
// (the handler throws) makes Pub/Sub redeliver it under the subscription's retry policy (exponential
// backoff, 10–600 s) and move it to the dead-letter topic after maxDeliveryAttempts.
//
// - done → return (ack).
// - retry → throw ReconcileFailedError (redelivered with backoff; dead-lettered after the limit).
// - malformed → copied to the dead-letter topic when one is configured, then acked; otherwise throw
//   MalformedMessageError so the subscription's dead-letter policy takes it. Logged once, by id.
// - requeue → throw RequeueError: the retry policy's backoff is the delay. Pub/Sub has no delayed
//   delivery, and the alternative — ack and re-publish a copy carrying `notBefore`, then throw at
//   receive while it is not yet due — costs an extra invocation per requeue and turns into a hot loop
//   wherever the first redelivery is immediate (a subscription without a retry policy, the emulator).
//   A requeue counts as a delivery attempt, so at the last attempt (when the push envelope carries
//   `deliveryAttempt`, i.e. the subscription has a dead-letter policy) a fresh copy is published and the
//   original acked instead: a resource that merely waits is never dead-lettered (the rule SQS's resend
//   follows). Without `deliveryAttempt`, the drift sweep still enqueues every unready resource on each
//   tick, so nothing waits forever. See docs/deploy-gcp.md for sizing maxDeliveryAttempts.
import type { CloudEventResolver } from "../cloud-events/resolve.ts";
import { makeMessage, messageKey, type ReconcileMessage } from "../queue/message.ts";
import type { QueueProducer } from "../queue/port.ts";
import { decodePubSubPushEvent, moveToPubSubDeadLetter, rawPubSubPushMessage } from "../queue/pubsub.ts";
import type { PubSubPublisher } from "../queue/pubsub-rest.ts";
import type { ReconcileFn, ReconcileLogger, ResourceKey } from "../reconciler/contract.ts";
import type { BatchCheckFn } from "./batch.ts";
import {
  type CloudBody,
  cloudBodyOfPubSub,
  cloudEventItems,
  cloudEventOutcome,
  resolveCloudBody,
} from "./cloud-events.ts";
import { outcomeOf, reconcileBatch, reconcileMessage } from "./core.ts";
import { MalformedMessageError, ReconcileFailedError, RequeueError } from "./errors.ts";
import { workOf } from "./message.ts";

export interface PubSubPushDeps {
  reconcile: ReconcileFn;
  logger: ReconcileLogger;
  /** The dead-letter topic malformed messages are copied to; without it they are nacked. */
  deadLetterTopic?: PubSubPublisher | undefined;
  /** Publishes a fresh copy of a requeued message at its last delivery attempt (the work topic). */
  producer?: Pick<QueueProducer, "send"> | undefined;
  /** The subscription's maxDeliveryAttempts (5–100); enables the fresh copy at the last attempt. */
  maxDeliveryAttempts?: number | undefined;
  /** Epoch ms after which no reconcile starts (the function's timeout minus a margin). */
  deadlineMs?: number | undefined;
  /** Queue age of each reconciled message (now − message.at); the reconciles report themselves. */
  metrics?: { queueAge?(ms: number): void } | undefined;
  /** The batched drift check (Worker.checkBatch over the work topic's producer). */
  checkBatch?: BatchCheckFn | undefined;
  /** Worker.storedVersion: doorbell messages wait until the write they report is stored. */
  storedVersion?: ((key: ResourceKey) => Promise<string | undefined>) | undefined;
  /**
   * Worker.cloudEvents: Cloud Audit Logs entries (a log sink on the work topic) become reconciles of the
   * resources they name. Without it such data is malformed.
   */
  cloudEvents?: Pick<CloudEventResolver, "cloudTrail" | "auditLog"> | undefined;
}

export type PubSubPushResult =
  | { outcome: "done"; key: string }
  | { outcome: "requeued-fresh"; key: string }
  | { outcome: "dead-lettered"; messageId: string | undefined }
  | { outcome: "cloud-event"; keys: number };

/** Handles one pushed message. Returns to ack; throws (errors.ts) to have it redelivered. */
export async function handlePubSubPush(deps: PubSubPushDeps, event: unknown): Promise<PubSubPushResult> {
  const decoded = decodePubSubPushEvent(event);
  if (!decoded.ok) {
    const { messageId, receiveCount } = decoded;
    const cloud: CloudBody = deps.cloudEvents
      ? cloudBodyOfPubSub(rawPubSubPushMessage(event).data)
      : { kind: "none" };
    if (deps.cloudEvents && (cloud.kind === "audit-log" || cloud.kind === "cloudtrail"))
      return handleCloudEvent(deps, deps.cloudEvents, cloud, messageId, receiveCount);
    const error = cloud.kind === "malformed" ? cloud.error : decoded.error;
    const log = { messageId, receiveCount, error };
    if (deps.deadLetterTopic) {
      try {
        await moveToPubSubDeadLetter(deps.deadLetterTopic, {
          ...rawPubSubPushMessage(event),
          messageId,
          error,
        });
        deps.logger.error(log, "malformed message moved to the dead-letter topic");
        return { outcome: "dead-lettered", messageId };
      } catch (err) {
        deps.logger.error(
          { ...log, moveError: (err as Error).message },
          "malformed message; cannot copy it to the dead-letter topic, nacked",
        );
        throw new MalformedMessageError(`malformed message ${messageId ?? ""}: ${error}`, { cause: err });
      }
    }
    if (receiveCount <= 1) deps.logger.error(log, "malformed message; nacked for the dead-letter policy");
    else deps.logger.debug(log, "malformed message received again");
    throw new MalformedMessageError(`malformed message ${messageId ?? ""}: ${error}`);
  }

  const { message, id, receiveCount } = decoded.received;
  const key = messageKey(message);
  const log = { messageId: id, key, receiveCount };
  // A follow-up a batch check sent with a delay (notBefore): not due yet, so nacked — the subscription's
  // retry policy (10 s minimum as deployed) brings it back later, without running the reconcile now.
  const waitMs = decoded.notBefore ? decoded.notBefore.getTime() - Date.now() : 0;
  if (waitMs > 0) {
    deps.logger.debug({ ...log, waitMs }, "not due yet; nacked");
    throw new RequeueError(`${key} is not due for ${waitMs} ms`, waitMs);
  }
  // The worker core: in the message's context, not after the deadline, never throwing.
  const outcome = outcomeOf(
    await reconcileMessage(deps.reconcile, workOf(decoded.received), {
      deadlineMs: deps.deadlineMs,
      metrics: deps.metrics,
      checkBatch: deps.checkBatch,
      storedVersion: deps.storedVersion,
    }),
  );
  if (outcome.kind === "done") return { outcome: "done", key };
  if (outcome.kind === "retry") {
    deps.logger.warn(
      { ...log, error: outcome.error.message },
      "reconcile failed; the subscription redelivers it",
    );
    throw new ReconcileFailedError(`reconcile of ${key} failed: ${outcome.error.message}`, {
      cause: outcome.error,
    });
  }
  const lastAttempt = deps.maxDeliveryAttempts !== undefined && receiveCount >= deps.maxDeliveryAttempts;
  if (lastAttempt && deps.producer) {
    const fresh: ReconcileMessage = { ...message, reason: "requeue", at: new Date().toISOString() };
    const sent = await deps.producer.send([fresh]).catch((err: unknown) => ({
      sent: 0,
      failed: [{ error: err instanceof Error ? err : new Error(String(err)) }],
    }));
    if (sent.sent === 1) {
      deps.logger.info({ ...log, afterMs: outcome.afterMs }, "requeued as a fresh message");
      return { outcome: "requeued-fresh", key };
    }
    deps.logger.warn(
      { ...log, error: sent.failed[0]?.error.message },
      "cannot publish a fresh copy; this delivery is nacked and may be dead-lettered",
    );
  }
  deps.logger.debug({ ...log, afterMs: outcome.afterMs }, "requeued: the retry policy's backoff delays it");
  throw new RequeueError(`requeue ${key} (wanted after ${outcome.afterMs} ms)`, outcome.afterMs);
}

/**
 * A Cloud Audit Logs entry: its keys reconciled now, like any message's. A failed LIST or reconcile
 * throws (nack: redelivered and resolved again); keys that asked to be looked at again go back to the
 * work topic as fresh messages (without a producer, the entry itself is nacked for the retry policy).
 */
async function handleCloudEvent(
  deps: PubSubPushDeps,
  resolver: NonNullable<PubSubPushDeps["cloudEvents"]>,
  body: Extract<CloudBody, { kind: "audit-log" | "cloudtrail" }>,
  messageId: string | undefined,
  receiveCount: number,
): Promise<PubSubPushResult> {
  const log = { messageId, receiveCount };
  let keys: ResourceKey[];
  try {
    keys = (await resolveCloudBody(resolver, body)).keys;
  } catch (err) {
    deps.logger.warn({ ...log, error: (err as Error).message }, "cannot resolve a cloud event; nacked");
    throw new ReconcileFailedError(`cannot resolve cloud event ${messageId ?? ""}`, { cause: err });
  }
  const items = cloudEventItems(keys, {
    correlationId: messageId ?? "cloud-event",
    receiveCount,
    itemId: (n) => `${messageId ?? "cloud-event"}#${n}`,
  });
  const results = await reconcileBatch(deps.reconcile, items, {
    deadlineMs: deps.deadlineMs,
    metrics: deps.metrics,
  });
  const o = cloudEventOutcome(results);
  if (o.kind === "retry") {
    throw new ReconcileFailedError(
      `a reconcile of cloud event ${messageId ?? ""} failed: ${o.error.message}`,
      {
        cause: o.error,
      },
    );
  }
  if (o.requeue.length > 0) {
    const afterMs = Math.max(...o.requeue.map((r) => r.afterMs));
    if (!deps.producer)
      throw new RequeueError(`cloud event ${messageId ?? ""}: keys to look at again`, afterMs);
    const fresh = o.requeue.map((r) => makeMessage(r.key, "requeue", messageId ? { id: messageId } : {}));
    const sent = await deps.producer.send(fresh, { delayMs: afterMs }).catch((err: unknown) => ({
      sent: 0,
      failed: [{ error: err instanceof Error ? err : new Error(String(err)) }],
    }));
    if (sent.sent !== fresh.length) {
      deps.logger.warn({ ...log, error: sent.failed[0]?.error.message }, "cannot send follow-ups; nacked");
      throw new RequeueError(`cloud event ${messageId ?? ""}: follow-ups not sent`, afterMs);
    }
  }
  return { outcome: "cloud-event", keys: keys.length };
}
