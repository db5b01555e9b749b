// The SQS adapter: a batching producer, a long-polling consumer, and the helpers the Lambda entry
// point reuses without polling (decode a record, requeue, move to the DLQ, create the queue pair).
//
// Outcome mapping:
// - done    → DeleteMessageBatch (buffered, ten at a time).
// - requeue → ChangeMessageVisibility(afterMs, clamped to 0–43,200 s): the message itself comes back.
//             SQS counts that redelivery as a receive, so once a message has been received
//             `maxReceiveCount` times a requeue sends a fresh copy instead (and deletes the original),
//             otherwise a resource that merely waits long would be dead-lettered. See requeueSqsMessage.
// - retry   → left alone (or its visibility set from `retryBackoff`): the queue redelivers it after the
//             visibility timeout and its redrive policy moves it to the DLQ after maxReceiveCount.
// - malformed body → never reaches the handler. With `deadLetterQueueUrl` it is copied to the DLQ
//             (raw body, error as a message attribute), deleted, and logged once. Without it, it is
//             left to the redrive policy (logged on each of its receives).
import { createHash } from "node:crypto";
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type Message,
  QueueNameExists,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { type BackoffPolicy, backoffMs, sleep } from "./backoff.ts";
import { KeyedDispatcher } from "./dispatch.ts";
import { ConsumerStateError, SendFailedError } from "./errors.ts";
import { decodeMessage, encodeMessage, messageKey, type ReconcileMessage } from "./message.ts";
import type {
  HandlerOutcome,
  MessageHandler,
  QueueConsumer,
  QueueEventSink,
  QueueProducer,
  ReceivedMessage,
  SendOptions,
  SendResult,
} from "./port.ts";

export const SQS_MAX_BATCH = 10;
export const SQS_MAX_DELAY_SECONDS = 900;
export const SQS_MAX_VISIBILITY_SECONDS = 43_200;
export const DEFAULT_SQS_WORKERS = 4;
export const DEFAULT_WAIT_TIME_SECONDS = 20;
export const DEFAULT_SQS_MAX_RECEIVE_COUNT = 5;
export const DEFAULT_SQS_VISIBILITY_TIMEOUT_SECONDS = 60;
const DLQ_RETENTION_SECONDS = 1_209_600; // 14 days, the SQS maximum: time to look at what failed
const RECEIVE_FAILURE_BACKOFF: BackoffPolicy = { baseMs: 500, maxMs: 30_000 };
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

export interface SqsConsumerOptions extends SqsQueueRef {
  /** Handlers running at once (and the most messages held at once). */
  workers?: number;
  /** Long-poll wait, 0–20 s. */
  waitTimeSeconds?: number;
  /** Overrides the queue's visibility timeout for received messages. */
  visibilityTimeoutSeconds?: number;
  /** The queue's redrive limit (as given to ensureSqsQueue); enables requeues that never dead-letter. */
  maxReceiveCount?: number;
  /** Where malformed messages go at once; without it they take the redrive path. */
  deadLetterQueueUrl?: string;
  /** When set, `retry` sets the message's visibility to this backoff instead of the queue's timeout. */
  retryBackoff?: BackoffPolicy;
}

interface PendingDelete {
  id: string;
  receiptHandle: string;
}

export class SqsConsumer implements QueueConsumer {
  readonly #client: SQSClient;
  readonly #queueUrl: string;
  readonly #fifo: boolean;
  readonly #onEvent: QueueEventSink | undefined;
  readonly #workers: number;
  readonly #waitTimeSeconds: number;
  readonly #visibilityTimeoutSeconds: number | undefined;
  readonly #maxReceiveCount: number | undefined;
  readonly #deadLetterQueueUrl: string | undefined;
  readonly #retryBackoff: BackoffPolicy | undefined;
  readonly #dispatcher: KeyedDispatcher;
  // Cuts short the backoff sleep after a failed receive; the long poll itself is never aborted.
  readonly #abort = new AbortController();
  #state: "new" | "running" | "stopped" = "new";
  #loop: Promise<void> | undefined;
  #deletes: PendingDelete[] = [];
  #deleteTimer: NodeJS.Immediate | undefined;
  readonly #settling = new Set<Promise<void>>();

  constructor(options: SqsConsumerOptions) {
    this.#client = options.client;
    this.#queueUrl = options.queueUrl;
    this.#fifo = options.fifo ?? options.queueUrl.endsWith(".fifo");
    this.#onEvent = options.onEvent;
    this.#workers = options.workers ?? DEFAULT_SQS_WORKERS;
    this.#waitTimeSeconds = clamp(options.waitTimeSeconds ?? DEFAULT_WAIT_TIME_SECONDS, 0, 20);
    this.#visibilityTimeoutSeconds = options.visibilityTimeoutSeconds;
    this.#maxReceiveCount = options.maxReceiveCount;
    this.#deadLetterQueueUrl = options.deadLetterQueueUrl;
    this.#retryBackoff = options.retryBackoff;
    this.#dispatcher = new KeyedDispatcher(this.#workers);
  }

  start(handler: MessageHandler): void {
    if (this.#state !== "new")
      throw new ConsumerStateError(`SQS consumer cannot start: it is ${this.#state}`);
    this.#state = "running";
    this.#loop = this.#poll(handler);
  }

  /**
   * Lets the current long poll finish (at most `waitTimeSeconds`) and releases what it returns, then
   * waits for in-flight handlers and flushes their deletes. The poll is not aborted: SQS would still
   * hand messages to the abandoned request, hiding them for a whole visibility timeout.
   */
  async stop(): Promise<void> {
    if (this.#state === "stopped") return;
    this.#state = "stopped";
    this.#abort.abort();
    await this.#loop;
    await this.#dispatcher.drain();
    while (this.#settling.size > 0) await Promise.all(this.#settling);
    await this.#flushDeletes();
  }

  async #poll(handler: MessageHandler): Promise<void> {
    let failures = 0;
    while (this.#state === "running") {
      await this.#dispatcher.whenBelow(this.#workers);
      if (this.#state !== "running") break;
      let messages: Message[];
      try {
        const out = await this.#client.send(
          new ReceiveMessageCommand({
            QueueUrl: this.#queueUrl,
            MaxNumberOfMessages: clamp(this.#workers - this.#dispatcher.size, 1, SQS_MAX_BATCH),
            WaitTimeSeconds: this.#waitTimeSeconds,
            MessageSystemAttributeNames: ["ApproximateReceiveCount", "SentTimestamp"],
            ...(this.#visibilityTimeoutSeconds === undefined
              ? {}
              : { VisibilityTimeout: this.#visibilityTimeoutSeconds }),
          }),
        );
        messages = out.Messages ?? [];
        failures = 0;
      } catch (error) {
        if (this.#state !== "running") break;
        failures++;
        const delay = backoffMs(failures, RECEIVE_FAILURE_BACKOFF);
        this.#onEvent?.({
          level: "error",
          msg: "SQS receive failed",
          err: asError(error).message,
          retryInMs: delay,
        });
        await sleep(delay, this.#abort.signal);
        continue;
      }
      if (this.#state !== "running") {
        await this.#release(messages);
        break;
      }
      for (const raw of messages) this.#accept(raw, handler);
    }
  }

  /** Makes messages received during stop visible again at once, for the next consumer. */
  async #release(messages: Message[]): Promise<void> {
    if (messages.length === 0) return;
    try {
      await this.#client.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: this.#queueUrl,
          Entries: messages.map((m, i) => ({
            Id: String(i),
            ReceiptHandle: m.ReceiptHandle,
            VisibilityTimeout: 0,
          })),
        }),
      );
    } catch (error) {
      this.#onEvent?.({
        level: "warn",
        msg: "cannot release messages received while stopping; they return after their visibility timeout",
        ids: messages.map((m) => m.MessageId),
        err: describe(error),
      });
    }
  }

  #accept(raw: Message, handler: MessageHandler): void {
    const messageId = raw.MessageId ?? "";
    const receiptHandle = raw.ReceiptHandle ?? "";
    const decoded = decodeSqsRecord({ messageId, body: raw.Body ?? "", attributes: raw.Attributes ?? {} });
    if (!decoded.ok) {
      this.#track(this.#malformed(decoded, raw.Body ?? "", receiptHandle));
      return;
    }
    const { received } = decoded;
    const key = messageKey(received.message);
    this.#dispatcher.run(key, async () => {
      const started = Date.now();
      let outcome: HandlerOutcome;
      try {
        outcome = await handler(received);
      } catch (error) {
        outcome = { kind: "retry", error: asError(error) };
      }
      await this.#settle(received, key, receiptHandle, outcome, Date.now() - started);
    });
  }

  async #settle(
    received: ReceivedMessage,
    key: string,
    receiptHandle: string,
    outcome: HandlerOutcome,
    durationMs: number,
  ): Promise<void> {
    const settled = outcome as HandlerOutcome | undefined;
    try {
      if (settled?.kind === "done") {
        this.#queueDelete({ id: received.id, receiptHandle });
        return;
      }
      if (settled?.kind === "requeue") {
        const input: SqsRequeueInput = {
          queueUrl: this.#queueUrl,
          fifo: this.#fifo,
          receiptHandle,
          message: received.message,
          receiveCount: received.receiveCount,
          afterMs: settled.afterMs,
        };
        if (this.#maxReceiveCount !== undefined) input.maxReceiveCount = this.#maxReceiveCount;
        await requeueSqsMessage(this.#client, input);
        return;
      }
      const error = settled?.kind === "retry" ? settled.error : new Error("handler returned no outcome");
      this.#onEvent?.({
        level: "warn",
        msg: "reconcile failed; the queue will redeliver",
        key,
        id: received.id,
        receiveCount: received.receiveCount,
        durationMs,
        err: error.message,
      });
      const wanted =
        settled?.kind === "retry" && Number.isFinite(settled.afterMs) ? (settled.afterMs ?? 0) : 0;
      if (this.#retryBackoff !== undefined) {
        // Never sooner than the handler asked (the engine backs off longer when the cloud throttles).
        const own = backoffMs(received.receiveCount, this.#retryBackoff);
        await retrySqsMessage(this.#client, {
          queueUrl: this.#queueUrl,
          receiptHandle,
          afterMs: Math.max(own, wanted),
        });
      }
    } catch (error) {
      // The message stays on the queue and comes back after its visibility timeout: nothing is lost.
      this.#onEvent?.({
        level: "error",
        msg: "cannot settle SQS message",
        key,
        id: received.id,
        outcome: settled?.kind,
        err: describe(error),
      });
    }
  }

  async #malformed(
    decoded: Extract<SqsDecodeResult, { ok: false }>,
    body: string,
    receiptHandle: string,
  ): Promise<void> {
    const { messageId, receiveCount, error } = decoded;
    if (this.#deadLetterQueueUrl === undefined) {
      this.#onEvent?.({
        level: "error",
        msg: "malformed message; left for the redrive policy",
        id: messageId,
        receiveCount,
        err: error,
      });
      return;
    }
    try {
      await moveToSqsDeadLetter(this.#client, {
        deadLetterQueueUrl: this.#deadLetterQueueUrl,
        messageId,
        body,
        error,
        queueUrl: this.#queueUrl,
        receiptHandle,
      });
      this.#onEvent?.({
        level: "error",
        msg: "malformed message moved to the dead-letter queue",
        id: messageId,
        err: error,
      });
    } catch (moveError) {
      this.#onEvent?.({
        level: "error",
        msg: "malformed message; cannot move it to the dead-letter queue, left for the redrive policy",
        id: messageId,
        err: error,
        moveErr: describe(moveError),
      });
    }
  }

  #queueDelete(entry: PendingDelete): void {
    this.#deletes.push(entry);
    if (this.#deletes.length >= SQS_MAX_BATCH) this.#track(this.#flushDeletes());
    else this.#deleteTimer ??= setImmediate(() => this.#track(this.#flushDeletes()));
  }

  async #flushDeletes(): Promise<void> {
    if (this.#deleteTimer !== undefined) clearImmediate(this.#deleteTimer);
    this.#deleteTimer = undefined;
    while (this.#deletes.length > 0) {
      const batch = this.#deletes.splice(0, SQS_MAX_BATCH);
      try {
        const out = await this.#client.send(
          new DeleteMessageBatchCommand({
            QueueUrl: this.#queueUrl,
            Entries: batch.map((d, i) => ({ Id: String(i), ReceiptHandle: d.receiptHandle })),
          }),
        );
        for (const failure of out.Failed ?? []) {
          const id = batch[Number(failure.Id)]?.id;
          this.#onEvent?.({
            level: "warn",
            msg: "cannot delete SQS message; it will be redelivered",
            id,
            err: failure.Code,
          });
        }
      } catch (error) {
        this.#onEvent?.({
          level: "warn",
          msg: "cannot delete SQS messages; they will be redelivered",
          ids: batch.map((d) => d.id),
          err: describe(error),
        });
      }
    }
  }

  #track(work: Promise<void>): void {
    this.#settling.add(work);
    void work.finally(() => this.#settling.delete(work));
  }
}

export interface EnsureSqsQueueInput {
  /** Queue name; for FIFO the `.fifo` suffix is added when missing. The DLQ is `<name>-dlq`. */
  name: string;
  fifo?: boolean;
  visibilityTimeoutSeconds?: number;
  maxReceiveCount?: number;
}

export interface SqsQueuePair {
  queueUrl: string;
  queueArn: string;
  dlqUrl: string;
  dlqArn: string;
}

/** Creates (or converges) a queue and its dead-letter queue with a RedrivePolicy. Idempotent. */
export async function ensureSqsQueue(client: SQSClient, input: EnsureSqsQueueInput): Promise<SqsQueuePair> {
  const fifo = input.fifo ?? input.name.endsWith(".fifo");
  const base = input.name.replace(/\.fifo$/, "");
  const suffix = fifo ? ".fifo" : "";
  const fifoAttributes: Record<string, string> = fifo
    ? { FifoQueue: "true", ContentBasedDeduplication: "false" }
    : {};

  const dlqUrl = await createOrUpdateQueue(client, `${base}-dlq${suffix}`, fifoAttributes, {
    MessageRetentionPeriod: String(DLQ_RETENTION_SECONDS),
  });
  const dlqArn = await queueArn(client, dlqUrl);
  const queueUrl = await createOrUpdateQueue(client, `${base}${suffix}`, fifoAttributes, {
    VisibilityTimeout: String(input.visibilityTimeoutSeconds ?? DEFAULT_SQS_VISIBILITY_TIMEOUT_SECONDS),
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: dlqArn,
      maxReceiveCount: input.maxReceiveCount ?? DEFAULT_SQS_MAX_RECEIVE_COUNT,
    }),
  });
  return { queueUrl, queueArn: await queueArn(client, queueUrl), dlqUrl, dlqArn };
}

async function createOrUpdateQueue(
  client: SQSClient,
  name: string,
  immutable: Record<string, string>,
  mutable: Record<string, string>,
): Promise<string> {
  try {
    const out = await client.send(
      new CreateQueueCommand({ QueueName: name, Attributes: { ...immutable, ...mutable } }),
    );
    if (out.QueueUrl === undefined) throw new Error(`CreateQueue returned no URL for ${name}`);
    return out.QueueUrl;
  } catch (error) {
    // Same name, different attributes: converge the ones SQS lets us change.
    if (!(error instanceof QueueNameExists) && (error as { name?: string }).name !== "QueueAlreadyExists") {
      throw new Error(`cannot create SQS queue ${name}`, { cause: error });
    }
  }
  try {
    const { QueueUrl } = await client.send(new GetQueueUrlCommand({ QueueName: name }));
    if (QueueUrl === undefined) throw new Error(`GetQueueUrl returned no URL for ${name}`);
    await client.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: mutable }));
    return QueueUrl;
  } catch (error) {
    throw new Error(`cannot update SQS queue ${name}`, { cause: error });
  }
}

async function queueArn(client: SQSClient, queueUrl: string): Promise<string> {
  const out = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["QueueArn"] }),
  );
  const arn = out.Attributes?.QueueArn;
  if (arn === undefined) throw new Error(`cannot read the ARN of ${queueUrl}`);
  return arn;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

function describe(error: unknown): string {
  const e = asError(error);
  return e.cause instanceof Error ? `${e.message}: ${e.cause.message}` : e.message;
}
