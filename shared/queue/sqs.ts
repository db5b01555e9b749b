// The SQS adapter: a batching producer and the helpers the Lambda entry point uses to settle a record
// (decode it, requeue it with ChangeMessageVisibility or a fresh copy near maxReceiveCount, move it to the
// DLQ). Lambda's event source mapping does the polling; the queue pair itself comes from serverless.yml.
import { createHash } from "node:crypto";
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { SendFailedError } from "./errors.ts";
import { decodeMessage, encodeMessage, messageKey, type ReconcileMessage } from "./message.ts";
import type { QueueEventSink, QueueProducer, ReceivedMessage, SendOptions, SendResult } from "./port.ts";

export const SQS_MAX_BATCH = 10;
export const SQS_MAX_DELAY_SECONDS = 900;
export const SQS_MAX_VISIBILITY_SECONDS = 43_200;
/** Message attributes set on a malformed message copied to the DLQ. */
export const SQS_DLQ_ERROR_ATTRIBUTE = "driftless-error";
export const SQS_DLQ_SOURCE_ID_ATTRIBUTE = "driftless-source-message-id";

export interface SqsQueueRef {
  client: SQSClient;
  queueUrl: string;
  /** Defaults to whether the URL ends in `.fifo`. */
  fifo?: boolean;
  onEvent?: QueueEventSink;
}

/** FIFO deduplication id: same key and same `at` is the same message within SQS's 5-minute window. */
export function sqsDeduplicationId(m: ReconcileMessage): string {
  return createHash("sha256")
    .update(`${messageKey(m)}\n${m.at}`)
    .digest("hex");
}

export class SqsProducer implements QueueProducer {
  readonly #client: SQSClient;
  readonly #queueUrl: string;
  readonly #fifo: boolean;
  readonly #onEvent: QueueEventSink | undefined;

  constructor(ref: SqsQueueRef) {
    this.#client = ref.client;
    this.#queueUrl = ref.queueUrl;
    this.#fifo = ref.fifo ?? ref.queueUrl.endsWith(".fifo");
    this.#onEvent = ref.onEvent;
  }

  async send(messages: readonly ReconcileMessage[], opts: SendOptions = {}): Promise<SendResult> {
    const result: SendResult = { sent: 0, failed: [] };
    const delaySeconds = clamp(Math.ceil((opts.delayMs ?? 0) / 1000), 0, SQS_MAX_DELAY_SECONDS);
    if (this.#fifo && delaySeconds > 0) {
      // FIFO queues only have a queue-wide delay; sending early is harmless (reconciles are level-triggered).
      this.#onEvent?.({ level: "warn", msg: "FIFO queue ignores per-message delay", delayMs: opts.delayMs });
    }
    const entries: Array<{ index: number; message: ReconcileMessage; entry: SendMessageBatchRequestEntry }> =
      [];
    messages.forEach((message, index) => {
      let body: string;
      try {
        body = encodeMessage(message);
      } catch (error) {
        result.failed.push({ index, message, error: asError(error) });
        return;
      }
      const entry: SendMessageBatchRequestEntry = { Id: String(index), MessageBody: body };
      if (this.#fifo) {
        entry.MessageGroupId = messageKey(message);
        entry.MessageDeduplicationId = sqsDeduplicationId(message);
      } else if (delaySeconds > 0) {
        entry.DelaySeconds = delaySeconds;
      }
      entries.push({ index, message, entry });
    });

    const batches: Array<typeof entries> = [];
    for (let i = 0; i < entries.length; i += SQS_MAX_BATCH) batches.push(entries.slice(i, i + SQS_MAX_BATCH));
    const sendBatch = async (batch: typeof entries): Promise<void> => {
      try {
        const out = await this.#client.send(
          new SendMessageBatchCommand({ QueueUrl: this.#queueUrl, Entries: batch.map((b) => b.entry) }),
        );
        const failedIds = new Map((out.Failed ?? []).map((f) => [f.Id, f]));
        for (const { index, message } of batch) {
          const failure = failedIds.get(String(index));
          if (failure === undefined) {
            result.sent++;
            continue;
          }
          const error = new SendFailedError(`SQS refused message: ${failure.Message ?? failure.Code}`, {
            ...(failure.Code === undefined ? {} : { code: failure.Code }),
            senderFault: failure.SenderFault ?? false,
          });
          result.failed.push({ index, message, error });
        }
      } catch (cause) {
        const error = new SendFailedError("cannot send message batch to SQS", { cause });
        for (const { index, message } of batch) result.failed.push({ index, message, error });
      }
    };
    // FIFO order is the order SQS receives messages in: batches go one after another there.
    if (this.#fifo) for (const batch of batches) await sendBatch(batch);
    else await Promise.all(batches.map(sendBatch));
    result.failed.sort((a, b) => a.index - b.index);
    if (result.failed.length > 0) {
      this.#onEvent?.({ level: "warn", msg: "some messages were not sent", failed: result.failed.length });
    }
    return result;
  }
}

/** The parts of an SQS message the decoder reads: a Lambda event record or a ReceiveMessage result. */
export interface SqsRecordLike {
  messageId: string;
  body: string;
  attributes?: { ApproximateReceiveCount?: string; SentTimestamp?: string };
}

export type SqsDecodeResult =
  | { ok: true; received: ReceivedMessage }
  | { ok: false; messageId: string; receiveCount: number; error: string };

/** Decodes one SQS message (Lambda record or polled). Never throws. */
export function decodeSqsRecord(record: SqsRecordLike): SqsDecodeResult {
  const receiveCount = Number.parseInt(record.attributes?.ApproximateReceiveCount ?? "1", 10) || 1;
  const decoded = decodeMessage(record.body);
  if (!decoded.ok) return { ok: false, messageId: record.messageId, receiveCount, error: decoded.error };
  const received: ReceivedMessage = { message: decoded.message, id: record.messageId, receiveCount };
  const sent = Number.parseInt(record.attributes?.SentTimestamp ?? "", 10);
  if (Number.isFinite(sent)) received.enqueuedAt = new Date(sent);
  return { ok: true, received };
}

export interface SqsRequeueInput {
  queueUrl: string;
  fifo?: boolean;
  receiptHandle: string;
  message: ReconcileMessage;
  receiveCount: number;
  afterMs: number;
  /** The queue's redrive limit; when given, a requeue at the limit sends a fresh copy instead. */
  maxReceiveCount?: number;
}

/**
 * Makes a received message come back after `afterMs`. Returns how:
 * - `visibility`: ChangeMessageVisibility on the original (a Lambda handler must then report it in
 *   batchItemFailures, or Lambda deletes it);
 * - `resend`: a fresh copy (reason `requeue`, DelaySeconds on standard queues) was sent and the
 *   original deleted, because one more receive would dead-letter it (a Lambda handler reports success).
 */
export async function requeueSqsMessage(
  client: SQSClient,
  input: SqsRequeueInput,
): Promise<{ via: "visibility" | "resend" }> {
  const seconds = clamp(Math.ceil(Math.max(0, input.afterMs) / 1000), 0, SQS_MAX_VISIBILITY_SECONDS);
  if (input.maxReceiveCount === undefined || input.receiveCount < input.maxReceiveCount) {
    try {
      await client.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: input.queueUrl,
          ReceiptHandle: input.receiptHandle,
          VisibilityTimeout: seconds,
        }),
      );
    } catch (cause) {
      throw new Error("cannot change message visibility for requeue", { cause });
    }
    return { via: "visibility" };
  }
  const fifo = input.fifo ?? input.queueUrl.endsWith(".fifo");
  const fresh: ReconcileMessage = { ...input.message, reason: "requeue", at: new Date().toISOString() };
  try {
    await client.send(
      new SendMessageCommand({
        QueueUrl: input.queueUrl,
        MessageBody: encodeMessage(fresh),
        ...(fifo
          ? { MessageGroupId: messageKey(fresh), MessageDeduplicationId: sqsDeduplicationId(fresh) }
          : { DelaySeconds: Math.min(seconds, SQS_MAX_DELAY_SECONDS) }),
      }),
    );
    await client.send(
      new DeleteMessageCommand({ QueueUrl: input.queueUrl, ReceiptHandle: input.receiptHandle }),
    );
  } catch (cause) {
    throw new Error("cannot resend message for requeue", { cause });
  }
  return { via: "resend" };
}

export interface SqsRetryInput {
  queueUrl: string;
  receiptHandle: string;
  /** When the message should come back (ms, clamped to 0–43,200 s). */
  afterMs: number;
}

/**
 * Makes a failed message come back after `afterMs` (ChangeMessageVisibility on the original); the
 * receive counts toward the redrive limit. A Lambda handler must also report it in batchItemFailures.
 */
export async function retrySqsMessage(client: SQSClient, input: SqsRetryInput): Promise<void> {
  await client.send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: input.queueUrl,
      ReceiptHandle: input.receiptHandle,
      VisibilityTimeout: sqsDelaySeconds(input.afterMs),
    }),
  );
}

/** A delay in ms as an SQS visibility timeout: whole seconds, rounded up, within 0–43,200. */
export const sqsDelaySeconds = (ms: number): number =>
  clamp(Math.ceil(Math.max(0, ms) / 1000), 0, SQS_MAX_VISIBILITY_SECONDS);

export interface SqsDeadLetterInput {
  deadLetterQueueUrl: string;
  messageId: string;
  body: string;
  error: string;
  /** When both are given, the original is deleted once the copy is in the DLQ. */
  queueUrl?: string;
  receiptHandle?: string;
}

/** Copies a message that must not be retried (malformed) to the DLQ, then deletes the original. */
export async function moveToSqsDeadLetter(client: SQSClient, input: SqsDeadLetterInput): Promise<void> {
  const fifo = input.deadLetterQueueUrl.endsWith(".fifo");
  try {
    await client.send(
      new SendMessageCommand({
        QueueUrl: input.deadLetterQueueUrl,
        MessageBody: input.body.length > 0 ? input.body : "(empty body)",
        MessageAttributes: {
          [SQS_DLQ_ERROR_ATTRIBUTE]: {
            DataType: "String",
            StringValue: input.error.slice(0, 1024) || "malformed",
          },
          [SQS_DLQ_SOURCE_ID_ATTRIBUTE]: { DataType: "String", StringValue: input.messageId },
        },
        ...(fifo ? { MessageGroupId: "malformed", MessageDeduplicationId: input.messageId } : {}),
      }),
    );
    if (input.queueUrl !== undefined && input.receiptHandle !== undefined) {
      await client.send(
        new DeleteMessageCommand({ QueueUrl: input.queueUrl, ReceiptHandle: input.receiptHandle }),
      );
    }
  } catch (cause) {
    throw new Error("cannot move message to the dead-letter queue", { cause });
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
