// The Pub/Sub adapter: an ordered producer, one REST publish per batch (pubsub-rest.ts; `send(…, { delayMs })`
// sets a `notBefore` attribute, epoch ms) and the decoders the Cloud Functions entry point (push, CloudEvent) uses; Eventarc does the
// delivery, and the subscription's retry and dead-letter policies the redelivery.
import type { Message } from "@google-cloud/pubsub";
import { SendFailedError } from "./errors.ts";
import { decodeMessage, encodeMessage, messageKey, type ReconcileMessage } from "./message.ts";
import type { QueueEventSink, QueueProducer, ReceivedMessage, SendOptions, SendResult } from "./port.ts";
import type { PubSubOutgoing, PubSubPublisher } from "./pubsub-rest.ts";

/** Attribute carrying the earliest delivery time (epoch ms) of a delayed message. */
export const PUBSUB_NOT_BEFORE_ATTRIBUTE = "notBefore";
/** Attributes set on a malformed message republished to the dead-letter topic. */
export const PUBSUB_DLQ_ERROR_ATTRIBUTE = "driftless-error";
export const PUBSUB_DLQ_SOURCE_ID_ATTRIBUTE = "driftless-source-message-id";

export interface PubSubProducerOptions {
  /** The work topic (pubsub-rest.ts). */
  topic: PubSubPublisher;
  /** Publish with ordering key = messageKey (needs a subscription with message ordering). Default true. */
  ordering?: boolean;
  onEvent?: QueueEventSink;
}

export class PubSubProducer implements QueueProducer {
  readonly #topic: PubSubPublisher;
  readonly #ordering: boolean;
  readonly #onEvent: QueueEventSink | undefined;

  constructor(options: PubSubProducerOptions) {
    this.#ordering = options.ordering ?? true;
    this.#onEvent = options.onEvent;
    this.#topic = options.topic;
  }

  async send(messages: readonly ReconcileMessage[], opts: SendOptions = {}): Promise<SendResult> {
    const result: SendResult = { sent: 0, failed: [] };
    const delayMs = Math.max(0, opts.delayMs ?? 0);
    const attributes: Record<string, string> =
      delayMs > 0 ? { [PUBSUB_NOT_BEFORE_ATTRIBUTE]: String(Date.now() + delayMs) } : {};
    const batch: Array<{ index: number; message: ReconcileMessage; out: PubSubOutgoing }> = [];
    messages.forEach((message, index) => {
      try {
        const data = Buffer.from(encodeMessage(message), "utf8");
        const out = { data, attributes, ...(this.#ordering ? { orderingKey: messageKey(message) } : {}) };
        batch.push({ index, message, out });
      } catch (error) {
        result.failed.push({ index, message, error: asError(error) });
      }
    });
    // One request per batch: the batch's messages are published, or fail, together.
    try {
      await this.#topic.publish(batch.map((b) => b.out));
      result.sent = batch.length;
    } catch (cause) {
      const error =
        cause instanceof SendFailedError
          ? cause
          : new SendFailedError("cannot publish message to Pub/Sub", { cause });
      for (const { index, message } of batch) result.failed.push({ index, message, error });
    }
    result.failed.sort((a, b) => a.index - b.index);
    if (result.failed.length > 0) {
      this.#onEvent?.({
        level: "warn",
        msg: "some messages were not published",
        failed: result.failed.length,
      });
    }
    return result;
  }
}

export type PubSubDecodeResult =
  | { ok: true; received: ReceivedMessage; notBefore?: Date }
  | { ok: false; messageId: string | undefined; receiveCount: number; error: string };

interface MessageParts {
  messageId: string | undefined;
  data: Buffer;
  attributes: Record<string, string> | undefined;
  deliveryAttempt: number | undefined;
  publishTime: Date | undefined;
}

function decodeParts(parts: MessageParts): PubSubDecodeResult {
  const receiveCount =
    parts.deliveryAttempt !== undefined && parts.deliveryAttempt > 0 ? parts.deliveryAttempt : 1;
  const decoded = decodeMessage(parts.data.toString("utf8"));
  if (!decoded.ok) return { ok: false, messageId: parts.messageId, receiveCount, error: decoded.error };
  if (parts.messageId === undefined)
    return { ok: false, messageId: undefined, receiveCount, error: "no message id" };
  const received: ReceivedMessage = { message: decoded.message, id: parts.messageId, receiveCount };
  if (parts.publishTime !== undefined && !Number.isNaN(parts.publishTime.getTime()))
    received.enqueuedAt = parts.publishTime;
  const notBefore = Number(parts.attributes?.[PUBSUB_NOT_BEFORE_ATTRIBUTE]);
  return Number.isFinite(notBefore) && notBefore > 0
    ? { ok: true, received, notBefore: new Date(notBefore) }
    : { ok: true, received };
}

/** Decodes a message from the streaming client. Never throws. */
export function decodePubSubMessage(message: Message): PubSubDecodeResult {
  return decodeParts({
    messageId: message.id,
    data: message.data,
    attributes: message.attributes,
    deliveryAttempt: message.deliveryAttempt,
    publishTime: message.publishTime === undefined ? undefined : new Date(message.publishTime.getTime()),
  });
}

/**
 * Decodes the CloudEvent a Cloud Functions gen2 Pub/Sub trigger receives: `event.data` is
 * `{ message: { data: base64, messageId, attributes, orderingKey, publishTime }, subscription,
 * deliveryAttempt? }` (snake_case ids accepted too). `notBefore` is returned for the caller to honour
 * or ignore (processing early is harmless). Never throws.
 */
export function decodePubSubPushEvent(event: unknown): PubSubDecodeResult {
  let data: unknown = (event as { data?: unknown } | null | undefined)?.data;
  try {
    if (typeof data === "string") data = JSON.parse(data);
    else if (data instanceof Uint8Array) data = JSON.parse(Buffer.from(data).toString("utf8"));
  } catch {
    return { ok: false, messageId: undefined, receiveCount: 1, error: "event data is not JSON" };
  }
  const envelope = isRecord(data) ? data : {};
  const message = isRecord(envelope["message"]) ? envelope["message"] : undefined;
  const messageId = stringField(message, "messageId") ?? stringField(message, "message_id");
  const attempt = Number(envelope["deliveryAttempt"] ?? message?.["deliveryAttempt"]);
  const deliveryAttempt = Number.isFinite(attempt) ? attempt : undefined;
  if (message === undefined) {
    return {
      ok: false,
      messageId: undefined,
      receiveCount: deliveryAttempt ?? 1,
      error: "event has no Pub/Sub message",
    };
  }
  const rawAttributes = message["attributes"];
  const attributes: Record<string, string> = {};
  if (isRecord(rawAttributes)) {
    for (const [k, v] of Object.entries(rawAttributes)) if (typeof v === "string") attributes[k] = v;
  }
  const publishTime = stringField(message, "publishTime") ?? stringField(message, "publish_time");
  return decodeParts({
    messageId,
    data: Buffer.from(stringField(message, "data") ?? "", "base64"),
    attributes,
    deliveryAttempt,
    publishTime: publishTime === undefined ? undefined : new Date(publishTime),
  });
}

/**
 * The raw bytes and attributes of a pushed message (see decodePubSubPushEvent), for copying a malformed
 * one verbatim to the dead-letter topic. Whatever cannot be read as an envelope is kept whole.
 */
export function rawPubSubPushMessage(event: unknown): { data: Buffer; attributes: Record<string, string> } {
  let data: unknown = (event as { data?: unknown } | null | undefined)?.data;
  try {
    if (typeof data === "string") data = JSON.parse(data);
    else if (data instanceof Uint8Array) data = JSON.parse(Buffer.from(data).toString("utf8"));
  } catch {
    // Not even JSON: keep the whole payload.
    return { data: Buffer.from(String(data ?? ""), "utf8"), attributes: {} };
  }
  const message = isRecord(data) ? data["message"] : undefined;
  if (!isRecord(message)) {
    return { data: Buffer.from(JSON.stringify(data ?? null), "utf8"), attributes: {} };
  }
  const attributes: Record<string, string> = {};
  const rawAttributes = message["attributes"];
  if (isRecord(rawAttributes)) {
    for (const [k, v] of Object.entries(rawAttributes)) if (typeof v === "string") attributes[k] = v;
  }
  const body = message["data"];
  return { data: Buffer.from(typeof body === "string" ? body : "", "base64"), attributes };
}

export interface PubSubDeadLetterInput {
  data: Buffer;
  attributes: Record<string, string>;
  /** The original's id, else "unknown". */
  messageId: string | undefined;
  error: string;
}

/** Copies a message that must not be retried (malformed) to the dead-letter topic, with why and whence. */
export async function moveToPubSubDeadLetter(
  topic: PubSubPublisher,
  input: PubSubDeadLetterInput,
): Promise<void> {
  await topic.publish([
    {
      data: input.data,
      attributes: {
        ...input.attributes,
        [PUBSUB_DLQ_ERROR_ATTRIBUTE]: input.error.slice(0, 1024),
        [PUBSUB_DLQ_SOURCE_ID_ATTRIBUTE]: input.messageId ?? "unknown",
      },
    },
  ]);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringField(record: Record<string, unknown> | undefined, field: string): string | undefined {
  const value = record?.[field];
  return typeof value === "string" ? value : undefined;
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
