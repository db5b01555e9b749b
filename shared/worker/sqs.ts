// The SQS adapter of the Lambda reconcile function (SQS event source with ReportBatchItemFailures), testable
// without Lambda: records in, `batchItemFailures` out.
//
// Per record:
// - malformed body → copied to the DLQ (when its URL is configured) and reported as success; without a
//   DLQ URL (or when the copy fails) it is listed in batchItemFailures and the queue's redrive policy
//   dead-letters it after maxReceiveCount receives. Logged once, by messageId, never with its body.
// - valid → reconciled with its neighbours by the worker core (core.ts reconcileBatch:
//   independent, in the message's context, nothing started after the deadline, duplicates of a key
//   reconciled once). Only the first message of a key carries the outcome; its duplicates are reported
//   as success.
// - done → success (Lambda deletes the message).
// - requeue → requeueSqsMessage: `visibility` (ChangeMessageVisibility to the requeue delay; the message
//   must then be listed, or Lambda would delete it) or `resend` (a fresh copy was sent because one more
//   receive would dead-letter the original; reported as success).
// - retry → ChangeMessageVisibility to the engine's backoff, then listed: the queue redelivers it then,
//   and dead-letters it after maxReceiveCount failed receives.
import { GetQueueUrlCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { CloudEventResolver } from "../cloud-events/resolve.ts";
import { makeMessage, messageKey, type ReconcileMessage } from "../queue/message.ts";
import type { QueueProducer } from "../queue/port.ts";
import {
  decodeSqsRecord,
  moveToSqsDeadLetter,
  requeueSqsMessage,
  retrySqsMessage,
  SqsProducer,
  type SqsRequeueInput,
  sqsDelaySeconds,
} from "../queue/sqs.ts";
import type { ReconcileFn, ReconcileLogger, ResourceKey } from "../reconciler/contract.ts";
import type { BatchCheckFn } from "./batch.ts";
import {
  type CloudBody,
  cloudBodyOfSqs,
  cloudEventItems,
  cloudEventOutcome,
  keyOfResource,
  resolveCloudBody,
} from "./cloud-events.ts";
import { DEFAULT_FUNCTION_CONCURRENCY } from "./constants.ts";
import { type BatchItem, type MessageOutcome, reconcileBatch, type WorkOptions } from "./core.ts";
import type { DeadLetterNote } from "./dead-letter.ts";
import { keyOfMessage, workOf } from "./message.ts";

/** One record of the event Lambda's SQS poller sends (the fields driftless reads, as AWS names them). */
export interface SqsEventRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: {
    ApproximateReceiveCount?: string;
    SentTimestamp?: string;
    ApproximateFirstReceiveTimestamp?: string;
    SenderId?: string;
    MessageGroupId?: string;
    MessageDeduplicationId?: string;
    SequenceNumber?: string;
  };
  messageAttributes?: Record<string, unknown>;
  md5OfBody?: string;
  eventSource?: string;
  /** `arn:aws:sqs:<region>:<account>:<queue>` */
  eventSourceARN: string;
  awsRegion?: string;
}

export interface SqsEvent {
  Records: SqsEventRecord[];
}

/** What a handler with `functionResponseType: ReportBatchItemFailures` returns. */
export interface SqsBatchResponse {
  batchItemFailures: Array<{ itemIdentifier: string }>;
}

export interface SqsBatchDeps {
  sqs: SQSClient;
  reconcile: ReconcileFn;
  logger: ReconcileLogger;
  /** The queue's URL; default looked up once per container from each record's eventSourceARN. */
  queueUrl?: string | undefined;
  /** Where malformed messages are copied at once; without it the redrive policy takes them. */
  deadLetterQueueUrl?: string | undefined;
  /** The queue's redrive limit: a requeue at the limit sends a fresh copy instead of dead-lettering. */
  maxReceiveCount?: number | undefined;
  concurrency?: number;
  /** Epoch ms after which no reconcile starts (Lambda's deadline minus a margin). */
  deadlineMs?: number | undefined;
  /** With maxReceiveCount: a failed reconcile on the last receive (the redrive policy dead-letters it). */
  noteDeadLetter?: DeadLetterNote | undefined;
  /** Queue age of each reconciled message (now − message.at); the reconciles report themselves. */
  metrics?: Pick<WorkOptions, "metrics">["metrics"];
  /** The batched drift check (Worker.checkBatch), given a producer on the records' own queue. */
  checkBatch?: ((producer: QueueProducer) => BatchCheckFn) | undefined;
  /** Worker.storedVersion: doorbell messages wait until the write they report is stored. */
  storedVersion?: ((key: ResourceKey) => Promise<string | undefined>) | undefined;
  /**
   * Worker.cloudEvents: CloudTrail events (EventBridge) on the queue become reconciles of the resources
   * they name. Without it such a body is malformed.
   */
  cloudEvents?: Pick<CloudEventResolver, "cloudTrail" | "auditLog"> | undefined;
}

/** Per-batch counts, logged as one line and returned for tests. */
export interface SqsBatchSummary {
  records: number;
  done: number;
  duplicates: number;
  requeued: number;
  resent: number;
  retried: number;
  malformed: number;
  /** CloudTrail events among the records (their keys are reconciled with the rest). */
  cloudEvents: number;
  durationMs: number;
}

/** `arn:aws:sqs:eu-west-1:123456789012:name` → its parts. */
export function parseQueueArn(arn: string): {
  partition: string;
  region: string;
  account: string;
  name: string;
} {
  const parts = arn.split(":");
  const [, partition, service, region, account, name] = parts;
  if (parts.length !== 6 || service !== "sqs" || !partition || !region || !account || !name)
    throw new Error(`not an SQS queue ARN: ${arn}`);
  return { partition, region, account, name };
}

const queueUrls = new Map<string, Promise<string>>();

/**
 * The URL of the queue an event came from, asked of SQS once per container (GetQueueUrl by name and
 * owner). Not derived from the ARN: the SDK sends a request to the host of the QueueUrl it is given,
 * so a guessed `sqs.<region>.amazonaws.com` URL would bypass a VPC endpoint or a local emulator.
 */
export function queueUrlForArn(sqs: SQSClient, arn: string): Promise<string> {
  let url = queueUrls.get(arn);
  if (!url) {
    const { account, name } = parseQueueArn(arn);
    url = sqs
      .send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }))
      .then((out) => {
        if (!out.QueueUrl) throw new Error(`GetQueueUrl returned no URL for ${arn}`);
        return out.QueueUrl;
      });
    url.catch(() => queueUrls.delete(arn));
    queueUrls.set(arn, url);
  }
  return url;
}

interface Valid {
  record: SqsEventRecord;
  message: ReconcileMessage;
  receiveCount: number;
  queueUrl: () => Promise<string>;
}

export async function handleSqsBatch(
  deps: SqsBatchDeps,
  event: SqsEvent,
): Promise<SqsBatchResponse & { summary: SqsBatchSummary }> {
  const started = Date.now();
  const failures: string[] = [];
  const summary: SqsBatchSummary = {
    records: event.Records.length,
    done: 0,
    duplicates: 0,
    requeued: 0,
    resent: 0,
    retried: 0,
    malformed: 0,
    cloudEvents: 0,
    durationMs: 0,
  };
  // Looked up only when a message needs it (requeue, retry): a batch of done messages makes no call.
  const queueUrlOf = (record: SqsEventRecord) => () =>
    deps.queueUrl ? Promise.resolve(deps.queueUrl) : queueUrlForArn(deps.sqs, record.eventSourceARN);

  const valid: Valid[] = [];
  const malformed: Promise<void>[] = [];
  const cloudRecords: CloudRecord[] = [];
  for (const record of event.Records) {
    const decoded = decodeSqsRecord(record);
    if (decoded.ok) {
      valid.push({
        record,
        message: decoded.received.message,
        receiveCount: decoded.received.receiveCount,
        queueUrl: queueUrlOf(record),
      });
      continue;
    }
    const cloud: CloudBody = deps.cloudEvents ? cloudBodyOfSqs(record.body) : { kind: "none" };
    if (cloud.kind === "cloudtrail" || cloud.kind === "audit-log") {
      cloudRecords.push({ record, body: cloud, receiveCount: decoded.receiveCount });
      continue;
    }
    summary.malformed++;
    const error = cloud.kind === "malformed" ? cloud.error : decoded.error;
    malformed.push(
      deadLetterMalformed(deps, record, error, decoded.receiveCount).then((listed) => {
        if (listed) failures.push(record.messageId);
      }),
    );
  }

  // Only the first message of a key carries the outcome: one requeue or retry per key, not one per copy.
  const first = new Map<string, Valid>();
  const items: BatchItem[] = [];
  for (const v of valid) {
    const key = messageKey(v.message);
    if (first.has(key)) {
      summary.duplicates++;
      continue;
    }
    first.set(key, v);
    const received = { message: v.message, id: v.record.messageId, receiveCount: v.receiveCount };
    items.push({ id: v.record.messageId, ...workOf(received) });
  }
  const fromCloud = await cloudEventWork(deps, cloudRecords, new Set(first.keys()), summary);
  items.push(...fromCloud.items);
  failures.push(...fromCloud.failed);
  // Batch messages send their follow-ups to the queue they came from.
  const batchFrom = valid.find((v) => v.message.batch);
  let checkBatch: BatchCheckFn | undefined;
  if (batchFrom && deps.checkBatch) {
    try {
      checkBatch = deps.checkBatch(
        new SqsProducer({ client: deps.sqs, queueUrl: await batchFrom.queueUrl() }),
      );
    } catch (err) {
      // Without the queue's URL no follow-up can be sent: the batch's keys are reconciled one by one.
      deps.logger.warn(
        { error: describe(err) },
        "cannot look up the queue URL; batch messages take the per-key path",
      );
    }
  }
  const results = await reconcileBatch(deps.reconcile, items, {
    concurrency: deps.concurrency ?? DEFAULT_FUNCTION_CONCURRENCY,
    deadlineMs: deps.deadlineMs,
    metrics: deps.metrics,
    checkBatch,
    storedVersion: deps.storedVersion,
  });
  const byId = new Map(valid.map((v) => [v.record.messageId, v]));
  const settled = results.map(async (r) => {
    const v = byId.get(r.id);
    if (!v) return;
    const listed = await settle(deps, v, r.outcome, summary);
    if (listed) failures.push(r.id);
  });
  const cloudSettled = fromCloud.settle(results, queueUrlOf).then((listed) => {
    failures.push(...listed);
  });
  await Promise.all([...malformed, ...settled, cloudSettled]);

  summary.durationMs = Date.now() - started;
  deps.logger.info({ ...summary, failures: failures.length }, "SQS batch handled");
  // Report in the order Lambda gave the records (FIFO queues care).
  const order = new Map(event.Records.map((r, i) => [r.messageId, i]));
  failures.sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
  return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })), summary };
}

interface CloudRecord {
  record: SqsEventRecord;
  body: Extract<CloudBody, { kind: "cloudtrail" | "audit-log" }>;
  receiveCount: number;
}

/**
 * The work items of the batch's cloud events (keys already in the batch are reconciled once) and how to
 * settle those events afterwards. A failed LIST lists the record at once (retried, resolved again); a
 * failed reconcile lists it with the engine's backoff; keys that asked to be looked at again are sent
 * as fresh messages (the event itself is done). Returns the records to list in batchItemFailures.
 */
async function cloudEventWork(
  deps: SqsBatchDeps,
  records: readonly CloudRecord[],
  seen: Set<string>,
  summary: SqsBatchSummary,
) {
  const items: BatchItem[] = [];
  const failed: string[] = [];
  const owner = new Map<string, CloudRecord>();
  const resolver = deps.cloudEvents;
  await Promise.all(
    records.map(async (c) => {
      summary.cloudEvents++;
      if (!resolver) return;
      const { messageId } = c.record;
      try {
        const { keys } = await resolveCloudBody(resolver, c.body);
        const fresh = keys.filter((k) => {
          const key = keyOfResource(k);
          if (seen.has(key)) return false;
          seen.add(key);
          return true;
        });
        const mine = cloudEventItems(fresh, {
          correlationId: messageId,
          receiveCount: c.receiveCount,
          itemId: (n) => `${messageId}#${n}`,
        });
        for (const item of mine) owner.set(item.id, c);
        items.push(...mine);
      } catch (err) {
        deps.logger.warn(
          { messageId, receiveCount: c.receiveCount, error: describe(err) },
          "cannot resolve a cloud event; the queue redelivers it",
        );
        failed.push(messageId);
      }
    }),
  );
  const settle = async (
    results: ReadonlyArray<{ id: string; key: ResourceKey; outcome: MessageOutcome }>,
    queueUrlOf: (record: SqsEventRecord) => () => Promise<string>,
  ): Promise<string[]> => {
    const byRecord = new Map<CloudRecord, Array<{ key: ResourceKey; outcome: MessageOutcome }>>();
    for (const r of results) {
      const c = owner.get(r.id);
      if (c) byRecord.set(c, [...(byRecord.get(c) ?? []), { key: r.key, outcome: r.outcome }]);
    }
    const listed: string[] = [];
    await Promise.all(
      [...byRecord].map(async ([c, outcomes]) => {
        const { messageId, receiptHandle } = c.record;
        const o = cloudEventOutcome(outcomes);
        try {
          if (o.kind === "retry") {
            listed.push(messageId);
            await retrySqsMessage(deps.sqs, {
              queueUrl: await queueUrlOf(c.record)(),
              receiptHandle,
              afterMs: o.afterMs,
            });
            return;
          }
          if (o.requeue.length === 0) return;
          const producer = new SqsProducer({ client: deps.sqs, queueUrl: await queueUrlOf(c.record)() });
          for (const { key, afterMs } of o.requeue) {
            const sent = await producer.send([makeMessage(key, "requeue", { id: messageId })], {
              delayMs: afterMs,
            });
            if (sent.sent !== 1) throw sent.failed[0]?.error ?? new Error("cannot send a follow-up");
          }
        } catch (err) {
          // The event comes back after the visibility timeout and is resolved again.
          if (!listed.includes(messageId)) listed.push(messageId);
          deps.logger.warn(
            { messageId, error: describe(err) },
            "cannot settle a cloud event; the queue redelivers it",
          );
        }
      }),
    );
    return listed;
  };
  return { items, failed, settle };
}

/** Settles one reconciled message; true when it must be listed in batchItemFailures. */
async function settle(
  deps: SqsBatchDeps,
  v: Valid,
  outcome: MessageOutcome,
  summary: SqsBatchSummary,
): Promise<boolean> {
  const { record } = v;
  const log = { messageId: record.messageId, key: messageKey(v.message), receiveCount: v.receiveCount };
  if (outcome.kind === "done") {
    summary.done++;
    return false;
  }
  if (outcome.kind === "requeue") {
    try {
      const input: SqsRequeueInput = {
        queueUrl: await v.queueUrl(),
        receiptHandle: record.receiptHandle,
        message: v.message,
        receiveCount: v.receiveCount,
        afterMs: outcome.afterMs,
      };
      if (deps.maxReceiveCount !== undefined) input.maxReceiveCount = deps.maxReceiveCount;
      const { via } = await requeueSqsMessage(deps.sqs, input);
      if (via === "resend") {
        summary.resent++;
        deps.logger.info({ ...log, afterMs: outcome.afterMs }, "requeued as a fresh message");
        return false;
      }
      summary.requeued++;
      deps.logger.debug({ ...log, afterMs: outcome.afterMs }, "requeued");
      return true;
    } catch (err) {
      // Listed: it comes back after the queue's visibility timeout instead of the requeue delay.
      summary.requeued++;
      deps.logger.warn({ ...log, error: describe(err) }, "cannot requeue; the queue redelivers it later");
      return true;
    }
  }
  summary.retried++;
  if (deps.maxReceiveCount !== undefined && v.receiveCount >= deps.maxReceiveCount) {
    deps.logger.error(
      { ...log, error: outcome.error.message },
      "reconcile failed on the last receive; the redrive policy dead-letters the message",
    );
    await deps.noteDeadLetter?.(keyOfMessage(v.message), v.receiveCount, outcome.error);
  }
  const seconds = sqsDelaySeconds(outcome.afterMs);
  deps.logger.warn(
    { ...log, retryInS: seconds, error: outcome.error.message },
    "reconcile failed; the queue redelivers it",
  );
  try {
    await retrySqsMessage(deps.sqs, {
      queueUrl: await v.queueUrl(),
      receiptHandle: record.receiptHandle,
      afterMs: outcome.afterMs,
    });
  } catch (err) {
    deps.logger.warn(
      { ...log, error: describe(err) },
      "cannot set the retry delay; the queue's visibility timeout applies",
    );
  }
  return true;
}

/** Handles a malformed record; true when it must be listed in batchItemFailures (redrive policy path). */
async function deadLetterMalformed(
  deps: SqsBatchDeps,
  record: SqsEventRecord,
  error: string,
  receiveCount: number,
): Promise<boolean> {
  const log = { messageId: record.messageId, receiveCount, error };
  if (deps.deadLetterQueueUrl) {
    try {
      // Not deleted here: reporting success makes Lambda delete it.
      await moveToSqsDeadLetter(deps.sqs, {
        deadLetterQueueUrl: deps.deadLetterQueueUrl,
        messageId: record.messageId,
        body: record.body,
        error,
      });
      deps.logger.error(log, "malformed message moved to the dead-letter queue");
      return false;
    } catch (err) {
      deps.logger.error(
        { ...log, moveError: describe(err) },
        "malformed message; cannot copy it to the dead-letter queue, left for the redrive policy",
      );
      return true;
    }
  }
  // Logged once: later receives of the same message (until the redrive policy takes it) only at debug.
  if (receiveCount <= 1) deps.logger.error(log, "malformed message; left for the redrive policy");
  else deps.logger.debug(log, "malformed message received again");
  return true;
}

function describe(err: unknown): string {
  const e = err instanceof Error ? err : new Error(String(err));
  return e.cause instanceof Error ? `${e.message}: ${e.cause.message}` : e.message;
}
