// The queue port: the only queue surface the forwarder, the drift sweep and the workers see.
// Adapters: memory.ts (one process), sqs.ts (AWS), pubsub.ts (GCP). Function entry points that are
// *pushed* messages (Lambda, Cloud Functions) use the adapters' decode helpers instead of a consumer.
import type { ReconcileMessage } from "./message.ts";

/** Structured event for the caller's logger (pino plugs in here). Carries keys and ids, never bodies. */
export type QueueEvent = { level: "info" | "warn" | "error"; msg: string; [field: string]: unknown };
export type QueueEventSink = (event: QueueEvent) => void;

export interface SendOptions {
  /**
   * Deliver no earlier than this many ms from now. SQS standard: DelaySeconds (rounded up, at most
   * 900 s); SQS FIFO has no per-message delay (sent at once, warned); Pub/Sub: a `notBefore` attribute
   * that the streaming consumer honours; memory: a timer.
   */
  delayMs?: number;
}

export interface SendFailure {
  /** Position of the message in the array given to `send`. */
  index: number;
  message: ReconcileMessage;
  error: Error;
}

/** Partial failure is data, not an exception: the neighbours of a refused message were still sent. */
export interface SendResult {
  sent: number;
  failed: SendFailure[];
}

export interface QueueProducer {
  /** Sends messages, batched underneath. Rejects only when the whole call cannot proceed. */
  send(messages: readonly ReconcileMessage[], opts?: SendOptions): Promise<SendResult>;
}

export interface ReceivedMessage {
  message: ReconcileMessage;
  /** The queue's id for this message (SQS MessageId, Pub/Sub message id, memory sequence). */
  id: string;
  /** 1 on first delivery; counts toward the dead-letter limit. */
  receiveCount: number;
  enqueuedAt?: Date;
}

/**
 * - `done`: handled (successfully or for good); the message is removed.
 * - `requeue`: deliver this key again after `afterMs` (waiting for a cloud resource, create grace…).
 *   Meant for short waits; poll-interval rechecks are the drift sweep's job.
 * - `retry`: failed; the queue redelivers with backoff and dead-letters after its maximum receives.
 */
export type HandlerOutcome =
  | { kind: "done" }
  | { kind: "requeue"; afterMs: number }
  | {
      kind: "retry";
      error: Error;
      /**
       * The handler's own earliest retry time (the engine backs off longer when the cloud throttles):
       * the queue waits at least this long, and at least its own backoff.
       */
      afterMs?: number;
    };

/** A handler that throws counts as `{ kind: "retry" }` with the thrown error. */
export type MessageHandler = (received: ReceivedMessage) => Promise<HandlerOutcome>;

export interface QueueConsumer {
  /**
   * Starts delivering messages to `handler`. Never two handlers for one key at once in this process.
   * Malformed bodies never reach the handler: they take the dead-letter path and are logged once.
   */
  start(handler: MessageHandler): void;
  /** Stops taking new messages and resolves when every in-flight handler has finished and been settled. */
  stop(): Promise<void>;
}

export const DONE: HandlerOutcome = Object.freeze({ kind: "done" });
export function requeueAfter(afterMs: number): HandlerOutcome {
  return { kind: "requeue", afterMs };
}
export function retryWith(error: Error): HandlerOutcome {
  return { kind: "retry", error };
}
