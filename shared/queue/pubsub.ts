// The Pub/Sub adapter: a batching, ordered producer; a streaming-pull consumer with flow control; the
// topology helper; and the decoder the Cloud Functions (push, CloudEvent) entry point reuses.
//
// Outcome mapping (streaming consumer):
// - done    → ack.
// - retry   → nack: redelivered under the subscription's retry policy (exponential, 10–600 s) and
//             dead-lettered after maxDeliveryAttempts.
// - requeue → the consumer *holds* the message (the client library keeps extending its lease) and hands
//             it to the handler again after `afterMs` (capped at `maxHoldMs`). Pub/Sub has no delayed
//             delivery, `nack` would count toward the dead-letter limit and use the retry policy's delay
//             instead of ours, and `Message.modAck` is marked private and fights the lease manager.
//             Held messages count against flow control (`maxLeased`); requeue is for short waits.
// - `send(…, { delayMs })` sets a `notBefore` attribute (epoch ms) that the consumer honours the same way.
// - malformed body → never reaches the handler. With `deadLetterTopic` it is republished there (raw
//             data, error in an attribute), acked, and logged once; without it, it is nacked and left
//             to the subscription's dead-letter policy.
import { Duration, type Message, type PubSub, type Subscription, type Topic } from "@google-cloud/pubsub";
import { type BackoffPolicy, backoffMs } from "./backoff.ts";
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

/** Attribute carrying the earliest delivery time (epoch ms) of a delayed message. */
export const PUBSUB_NOT_BEFORE_ATTRIBUTE = "notBefore";
/** Attributes set on a malformed message republished to the dead-letter topic. */
export const PUBSUB_DLQ_ERROR_ATTRIBUTE = "driftless-error";
export const PUBSUB_DLQ_SOURCE_ID_ATTRIBUTE = "driftless-source-message-id";
export const DEFAULT_PUBSUB_WORKERS = 4;
export const DEFAULT_MAX_LEASED = 1_000;
export const DEFAULT_MAX_HOLD_MS = 10 * 60_000;
export const DEFAULT_MAX_DELIVERY_ATTEMPTS = 5;
export const DEFAULT_ACK_DEADLINE_SECONDS = 60;
const REOPEN_BACKOFF: BackoffPolicy = { baseMs: 1_000, maxMs: 30_000 };
const GRPC_ALREADY_EXISTS = 6;

export interface PubSubProducerOptions {
  pubsub: PubSub;
  /** Topic name or full resource name. */
  topic: string;
  /** Publish with ordering key = messageKey (needs a subscription with message ordering). Default true. */
  ordering?: boolean;
  batching?: { maxMessages?: number; maxMilliseconds?: number };
  onEvent?: QueueEventSink;
}

export class PubSubProducer implements QueueProducer {
  readonly #topic: Topic;
  readonly #ordering: boolean;
  readonly #onEvent: QueueEventSink | undefined;

  constructor(options: PubSubProducerOptions) {
    this.#ordering = options.ordering ?? true;
    this.#onEvent = options.onEvent;
    this.#topic = options.pubsub.topic(options.topic, {
      messageOrdering: this.#ordering,
      batching: { maxMessages: 100, maxMilliseconds: 10, ...options.batching },
    });
  }

  async send(messages: readonly ReconcileMessage[], opts: SendOptions = {}): Promise<SendResult> {
    const result: SendResult = { sent: 0, failed: [] };
    const delayMs = Math.max(0, opts.delayMs ?? 0);
    const attributes: Record<string, string> =
      delayMs > 0 ? { [PUBSUB_NOT_BEFORE_ATTRIBUTE]: String(Date.now() + delayMs) } : {};
    // publishMessage batches underneath; awaiting them together sends one request per batch.
    await Promise.all(
      messages.map(async (message, index) => {
        let data: Buffer;
        try {
          data = Buffer.from(encodeMessage(message), "utf8");
        } catch (error) {
          result.failed.push({ index, message, error: asError(error) });
          return;
        }
        const key = messageKey(message);
        try {
          await this.#topic.publishMessage({
            data,
            attributes,
            ...(this.#ordering ? { orderingKey: key } : {}),
          });
          result.sent++;
        } catch (cause) {
          // A failed ordered publish pauses its key until resumed; the caller decides about this message.
          if (this.#ordering) this.#topic.resumePublishing(key);
          result.failed.push({
            index,
            message,
            error: new SendFailedError("cannot publish message to Pub/Sub", { cause }),
          });
        }
      }),
    );
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

  /** Publishes whatever is still batched (call before the process exits). */
  async flush(): Promise<void> {
    await this.#topic.flush();
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
  topic: Pick<Topic, "publishMessage">,
  input: PubSubDeadLetterInput,
): Promise<void> {
  await topic.publishMessage({
    data: input.data,
    attributes: {
      ...input.attributes,
      [PUBSUB_DLQ_ERROR_ATTRIBUTE]: input.error.slice(0, 1024),
      [PUBSUB_DLQ_SOURCE_ID_ATTRIBUTE]: input.messageId ?? "unknown",
    },
  });
}

export interface PubSubConsumerOptions {
  pubsub: PubSub;
  /** Subscription name or full resource name. */
  subscription: string;
  /** Handlers running at once. */
  workers?: number;
  /** Messages leased at once (flow control), held ones included. */
  maxLeased?: number;
  /** Longest a requeued or delayed message is held before it is handed over anyway. */
  maxHoldMs?: number;
  /** Topic that malformed messages are republished to; without it they are nacked. */
  deadLetterTopic?: string;
  onEvent?: QueueEventSink;
}

export class PubSubConsumer implements QueueConsumer {
  readonly #pubsub: PubSub;
  readonly #subscriptionName: string;
  readonly #maxLeased: number;
  readonly #maxHoldMs: number;
  readonly #deadLetterTopic: Topic | undefined;
  readonly #onEvent: QueueEventSink | undefined;
  readonly #dispatcher: KeyedDispatcher;
  #state: "new" | "running" | "stopped" = "new";
  #subscription: Subscription | undefined;
  #reopenAttempts = 0;
  #reopenTimer: NodeJS.Timeout | undefined;
  readonly #held = new Map<Message, NodeJS.Timeout>();
  readonly #settling = new Set<Promise<void>>();

  constructor(options: PubSubConsumerOptions) {
    this.#pubsub = options.pubsub;
    this.#subscriptionName = options.subscription;
    this.#maxLeased = options.maxLeased ?? DEFAULT_MAX_LEASED;
    this.#maxHoldMs = options.maxHoldMs ?? DEFAULT_MAX_HOLD_MS;
    this.#deadLetterTopic =
      options.deadLetterTopic === undefined ? undefined : options.pubsub.topic(options.deadLetterTopic);
    this.#onEvent = options.onEvent;
    this.#dispatcher = new KeyedDispatcher(options.workers ?? DEFAULT_PUBSUB_WORKERS);
  }

  start(handler: MessageHandler): void {
    if (this.#state !== "new")
      throw new ConsumerStateError(`Pub/Sub consumer cannot start: it is ${this.#state}`);
    this.#state = "running";
    const subscription = this.#pubsub.subscription(this.#subscriptionName, {
      flowControl: { maxMessages: this.#maxLeased, allowExcessMessages: false },
      // Leases must outlive the longest hold, or held messages would be redelivered under us.
      maxExtensionTime: Duration.from({ milliseconds: this.#maxHoldMs + 5 * 60_000 }),
    });
    subscription.on("message", (message: Message) => this.#accept(message, handler));
    subscription.on("error", (error: Error) => {
      this.#onEvent?.({ level: "error", msg: "Pub/Sub subscriber error", err: error.message });
    });
    subscription.on("close", () => this.#reopenLater(subscription));
    this.#subscription = subscription;
  }

  /** Stops pulling, releases held messages (nack: they come back at once), waits for in-flight handlers. */
  async stop(): Promise<void> {
    if (this.#state === "stopped") return;
    const wasRunning = this.#state === "running";
    this.#state = "stopped";
    if (this.#reopenTimer !== undefined) clearTimeout(this.#reopenTimer);
    for (const [message, timer] of this.#held) {
      clearTimeout(timer);
      message.nack();
    }
    this.#held.clear();
    await this.#dispatcher.drain();
    while (this.#settling.size > 0) await Promise.all(this.#settling);
    if (wasRunning && this.#subscription !== undefined) await this.#subscription.close();
  }

  #reopenLater(subscription: Subscription): void {
    if (this.#state !== "running") return;
    // The stream died for good (e.g. the server answered UNKNOWN): reopen with backoff, never give up.
    const delay = backoffMs(++this.#reopenAttempts, REOPEN_BACKOFF);
    this.#onEvent?.({ level: "warn", msg: "Pub/Sub subscription closed; reopening", retryInMs: delay });
    this.#reopenTimer = setTimeout(() => {
      this.#reopenTimer = undefined;
      if (this.#state === "running") subscription.open();
    }, delay);
    this.#reopenTimer.unref();
  }

  #accept(message: Message, handler: MessageHandler): void {
    this.#reopenAttempts = 0;
    if (this.#state !== "running") {
      message.nack();
      return;
    }
    const decoded = decodePubSubMessage(message);
    if (!decoded.ok) {
      this.#track(this.#malformed(message, decoded.error, decoded.receiveCount));
      return;
    }
    const wait = decoded.notBefore === undefined ? 0 : decoded.notBefore.getTime() - Date.now();
    if (wait > 0) this.#hold(message, wait, () => this.#dispatch(message, decoded.received, handler));
    else this.#dispatch(message, decoded.received, handler);
  }

  #dispatch(message: Message, received: ReceivedMessage, handler: MessageHandler): void {
    const key = messageKey(received.message);
    this.#dispatcher.run(key, async () => {
      if (this.#state !== "running") {
        message.nack();
        return;
      }
      const started = Date.now();
      let outcome: HandlerOutcome;
      try {
        outcome = await handler(received);
      } catch (error) {
        outcome = { kind: "retry", error: asError(error) };
      }
      const settled = outcome as HandlerOutcome | undefined;
      if (settled?.kind === "done") {
        message.ack();
        return;
      }
      if (settled?.kind === "requeue" && this.#state === "running") {
        const again: ReceivedMessage = {
          ...received,
          message: { ...received.message, reason: "requeue", at: new Date().toISOString() },
        };
        this.#hold(message, Math.max(0, settled.afterMs), () => this.#dispatch(message, again, handler));
        return;
      }
      if (settled?.kind === "requeue") {
        message.nack(); // stopping: let another consumer pick it up
        return;
      }
      const error = settled?.kind === "retry" ? settled.error : new Error("handler returned no outcome");
      this.#onEvent?.({
        level: "warn",
        msg: "reconcile failed; the subscription will redeliver",
        key,
        id: received.id,
        receiveCount: received.receiveCount,
        durationMs: Date.now() - started,
        err: error.message,
      });
      message.nack();
    });
  }

  #hold(message: Message, ms: number, then: () => void): void {
    const timer = setTimeout(
      () => {
        this.#held.delete(message);
        then();
      },
      Math.min(ms, this.#maxHoldMs),
    );
    timer.unref();
    this.#held.set(message, timer);
  }

  async #malformed(message: Message, error: string, receiveCount: number): Promise<void> {
    if (this.#deadLetterTopic === undefined) {
      this.#onEvent?.({
        level: "error",
        msg: "malformed message; nacked for the dead-letter policy",
        id: message.id,
        receiveCount,
        err: error,
      });
      message.nack();
      return;
    }
    try {
      await moveToPubSubDeadLetter(this.#deadLetterTopic, {
        data: message.data,
        attributes: message.attributes,
        messageId: message.id,
        error,
      });
      message.ack();
      this.#onEvent?.({
        level: "error",
        msg: "malformed message moved to the dead-letter topic",
        id: message.id,
        err: error,
      });
    } catch (publishError) {
      message.nack();
      this.#onEvent?.({
        level: "error",
        msg: "malformed message; cannot republish it to the dead-letter topic, nacked",
        id: message.id,
        err: error,
        moveErr: asError(publishError).message,
      });
    }
  }

  #track(work: Promise<void>): void {
    this.#settling.add(work);
    void work.finally(() => this.#settling.delete(work));
  }
}

export interface PubSubTopologyInput {
  topic: string;
  subscription: string;
  /** Default `<topic>-dlq`. */
  deadLetterTopic?: string;
  /** A subscription on the dead-letter topic, so dead letters are kept (default `<deadLetterTopic>-sub`). */
  deadLetterSubscription?: string;
  /** 5–100. */
  maxDeliveryAttempts?: number;
  /** Message ordering on the subscription (cannot be changed once created). Default true. */
  ordering?: boolean;
  ackDeadlineSeconds?: number;
  minimumBackoffSeconds?: number;
  maximumBackoffSeconds?: number;
}

export interface PubSubTopology {
  topic: string;
  subscription: string;
  deadLetterTopic: string;
  deadLetterSubscription: string;
}

/**
 * Creates (or converges) topic, dead-letter topic, a subscription on it, and the work subscription with
 * dead-letter and retry policies. Idempotent. On Google Cloud the Pub/Sub service agent also needs
 * publisher on the dead-letter topic and subscriber on the subscription (IAM, not done here).
 */
export async function ensurePubSubTopology(
  pubsub: PubSub,
  input: PubSubTopologyInput,
): Promise<PubSubTopology> {
  const deadLetterTopicName = input.deadLetterTopic ?? `${shortName(input.topic)}-dlq`;
  const topic = await ensureTopic(pubsub, input.topic);
  const deadLetterTopic = await ensureTopic(pubsub, deadLetterTopicName);
  const deadLetterSubscription = await ensureSubscription(
    deadLetterTopic,
    input.deadLetterSubscription ?? `${shortName(deadLetterTopicName)}-sub`,
    {},
  );
  const maxDeliveryAttempts = input.maxDeliveryAttempts ?? DEFAULT_MAX_DELIVERY_ATTEMPTS;
  if (maxDeliveryAttempts < 5 || maxDeliveryAttempts > 100) {
    throw new RangeError(`maxDeliveryAttempts must be 5–100, got ${maxDeliveryAttempts}`);
  }
  const subscription = await ensureSubscription(
    topic,
    input.subscription,
    {
      ackDeadlineSeconds: input.ackDeadlineSeconds ?? DEFAULT_ACK_DEADLINE_SECONDS,
      deadLetterPolicy: { deadLetterTopic: deadLetterTopic.name, maxDeliveryAttempts },
      retryPolicy: {
        minimumBackoff: { seconds: input.minimumBackoffSeconds ?? 10 },
        maximumBackoff: { seconds: input.maximumBackoffSeconds ?? 600 },
      },
    },
    input.ordering ?? true,
  );
  return {
    topic: topic.name,
    subscription,
    deadLetterTopic: deadLetterTopic.name,
    deadLetterSubscription,
  };
}

async function ensureTopic(pubsub: PubSub, name: string): Promise<Topic> {
  try {
    const [topic] = await pubsub.topic(name).get({ autoCreate: true });
    return topic;
  } catch (error) {
    throw new Error(`cannot create Pub/Sub topic ${name}`, { cause: error });
  }
}

interface MutableSubscriptionSettings {
  ackDeadlineSeconds?: number;
  deadLetterPolicy?: { deadLetterTopic: string; maxDeliveryAttempts: number };
  retryPolicy?: { minimumBackoff: { seconds: number }; maximumBackoff: { seconds: number } };
}

async function ensureSubscription(
  topic: Topic,
  name: string,
  settings: MutableSubscriptionSettings,
  ordering = false,
): Promise<string> {
  try {
    const [subscription] = await topic.createSubscription(name, {
      ...settings,
      enableMessageOrdering: ordering,
    });
    return subscription.name;
  } catch (error) {
    if ((error as { code?: unknown }).code !== GRPC_ALREADY_EXISTS) {
      throw new Error(`cannot create Pub/Sub subscription ${name}`, { cause: error });
    }
  }
  const subscription = topic.pubsub.subscription(name);
  try {
    const [metadata] = await subscription.getMetadata();
    if (metadata.topic !== topic.name) {
      throw new Error(`subscription ${name} exists on another topic (${metadata.topic})`);
    }
    if (Boolean(metadata.enableMessageOrdering) !== ordering) {
      throw new Error(`subscription ${name} exists with message ordering ${!ordering}; it cannot be changed`);
    }
    if (Object.keys(settings).length > 0) await subscription.setMetadata(settings);
    return subscription.name;
  } catch (error) {
    throw new Error(`cannot update Pub/Sub subscription ${name}`, { cause: error });
  }
}

function shortName(name: string): string {
  return name.slice(name.lastIndexOf("/") + 1);
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
