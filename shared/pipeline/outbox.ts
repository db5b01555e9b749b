// The forwarder's coalescing outbox: keys wait here until they are quiet, then go to the queue in batches.
//
// A key is sent once it has been quiet for `coalesceMs` (or, if it keeps changing, `maxCoalesceMs` after
// its first event), and at most once per `minIntervalMs` — so a burst of writes, or our own reconciler's
// annotation and finalizer writes right after a create, costs one or two reconciles rather than one
// each. Failed sends are retried with backoff, up to MAX_SEND_ATTEMPTS; then the drift sweep catches up.
import { type BackoffPolicy, backoffMs } from "../queue/backoff.ts";
import { InvalidMessageError, SendFailedError } from "../queue/errors.ts";
import { messageKey, type ReconcileMessage } from "../queue/message.ts";
import { errorMessage, type Logger, type MessageSink } from "./common.ts";

export const DEFAULT_COALESCE_MS = 50;
export const DEFAULT_MAX_COALESCE_MS = 1_000;
export const DEFAULT_MIN_INTERVAL_MS = 1_000;
export const DEFAULT_FORWARD_BATCH_SIZE = 100;
export const DEFAULT_SEND_BACKOFF: BackoffPolicy = { baseMs: 200, maxMs: 10_000 };
/** Sends of one message before it is dropped; the drift sweep catches a dropped key up. */
export const MAX_SEND_ATTEMPTS = 5;

export interface OutboxOptions {
  sink: MessageSink;
  logger: Logger;
  /** A key is sent once no event for it arrived for this long. */
  coalesceMs?: number | undefined;
  /** …or this long after its first event, if it keeps changing. */
  maxCoalesceMs?: number | undefined;
  /** A key is sent at most once per this interval (later events wait and merge). */
  minIntervalMs?: number | undefined;
  /** Messages per `sink.send` call. */
  batchSize?: number | undefined;
  /** Backoff of failed sends. */
  sendBackoff?: BackoffPolicy | undefined;
  random?: () => number;
}

export interface OutboxStats {
  /** Messages the sink accepted. */
  forwarded: number;
  /** Events merged into a message already waiting for the same key. */
  coalesced: number;
  /** Failed sink sends (whole calls or single messages). */
  sendFailures: number;
  /** Messages given up after MAX_SEND_ATTEMPTS or refused as invalid. */
  dropped: number;
  /** Keys waiting to be sent. */
  pending: number;
}

interface Pending {
  message: ReconcileMessage;
  firstAt: number;
  lastAt: number;
  attempts: number;
  retryAt: number;
}

export class Outbox {
  readonly #sink: MessageSink;
  readonly #logger: Logger;
  readonly #coalesceMs: number;
  readonly #maxCoalesceMs: number;
  readonly #minIntervalMs: number;
  readonly #batchSize: number;
  readonly #sendBackoff: BackoffPolicy;
  readonly #random: () => number;
  readonly #pending = new Map<string, Pending>();
  /** key → when it was last sent, for minIntervalMs; in send order, pruned from the front. */
  readonly #recentlySent = new Map<string, number>();
  readonly #stats = { forwarded: 0, coalesced: 0, sendFailures: 0, dropped: 0 };
  #running = false;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #flushing: Promise<void> | undefined;
  #sendProblem: string | undefined;

  constructor(opts: OutboxOptions) {
    this.#sink = opts.sink;
    this.#logger = opts.logger;
    this.#coalesceMs = opts.coalesceMs ?? DEFAULT_COALESCE_MS;
    this.#maxCoalesceMs = Math.max(this.#coalesceMs, opts.maxCoalesceMs ?? DEFAULT_MAX_COALESCE_MS);
    this.#minIntervalMs = opts.minIntervalMs ?? DEFAULT_MIN_INTERVAL_MS;
    this.#batchSize = opts.batchSize ?? DEFAULT_FORWARD_BATCH_SIZE;
    this.#sendBackoff = opts.sendBackoff ?? DEFAULT_SEND_BACKOFF;
    this.#random = opts.random ?? Math.random;
  }

  /** Sends due keys on timers from now on. */
  start(): void {
    this.#running = true;
  }

  /** No more timed sends; keys still arriving wait for `drain()`. */
  pause(): void {
    this.#running = false;
  }

  /** Sends everything still waiting (once, no retries) and leaves no timer behind. */
  async drain(): Promise<void> {
    this.#running = false;
    await this.#flushing;
    this.#clearTimer();
    await this.#flush(true);
    this.#recentlySent.clear();
  }

  stats(): OutboxStats {
    return { ...this.#stats, pending: this.#pending.size };
  }

  /** Queues a message; one already waiting for the same key is replaced (coalesced). */
  add(message: ReconcileMessage): void {
    const key = messageKey(message);
    const now = Date.now();
    let waiting = this.#pending.get(key);
    if (waiting) {
      this.#stats.coalesced++;
      waiting.message = message;
      waiting.lastAt = now;
      waiting.attempts = 0;
      waiting.retryAt = 0;
    } else {
      waiting = { message, firstAt: now, lastAt: now, attempts: 0, retryAt: 0 };
      this.#pending.set(key, waiting);
    }
    this.#schedule(this.#dueAt(key, waiting));
  }

  #dueAt(key: string, p: Pending): number {
    const debounced = Math.min(p.lastAt + this.#coalesceMs, p.firstAt + this.#maxCoalesceMs);
    return Math.max(p.retryAt, debounced, (this.#recentlySent.get(key) ?? 0) + this.#minIntervalMs);
  }

  #schedule(at: number): void {
    if (!this.#running || this.#flushing || at >= this.#timerAt) return;
    this.#clearTimer();
    this.#timerAt = at;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#timerAt = Number.POSITIVE_INFINITY;
        this.#flushing = this.#flush(false).finally(() => {
          this.#flushing = undefined;
          this.#rescheduleAfterFlush();
        });
      },
      Math.max(0, at - Date.now()),
    );
  }

  #rescheduleAfterFlush(): void {
    let next = Number.POSITIVE_INFINITY;
    for (const [key, p] of this.#pending) next = Math.min(next, this.#dueAt(key, p));
    // With nothing pending, one more (empty) flush later prunes the send times.
    const [oldestSent] = this.#recentlySent.values();
    if (oldestSent !== undefined) next = Math.min(next, oldestSent + this.#minIntervalMs);
    if (next < Number.POSITIVE_INFINITY) this.#schedule(next);
  }

  #clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
  }

  /** Sends the keys that are due (all of them when `final`), in batches; failed ones are retried later. */
  async #flush(final: boolean): Promise<void> {
    const now = Date.now();
    for (const [key, at] of this.#recentlySent) {
      if (at > now - this.#minIntervalMs) break;
      this.#recentlySent.delete(key);
    }
    const due: Pending[] = [];
    for (const [key, p] of this.#pending) {
      if (!final && this.#dueAt(key, p) > now) continue;
      due.push(p);
      this.#pending.delete(key);
    }
    const dropped: Array<{ key: string; error: string }> = [];
    for (let i = 0; i < due.length; i += this.#batchSize) {
      const batch = due.slice(i, i + this.#batchSize);
      let failed: Array<{ p: Pending; error: unknown }>;
      try {
        const res = await this.#sink.send(batch.map((p) => p.message));
        this.#stats.forwarded += res.sent;
        failed = res.failed.flatMap((f) => {
          const p = batch[f.index];
          return p ? [{ p, error: f.error }] : [];
        });
        const refused = new Set(failed.map((f) => f.p));
        const sentAt = Date.now();
        for (const p of batch) {
          if (refused.has(p)) continue;
          const key = messageKey(p.message);
          // Delete first: re-inserting keeps the map in send order.
          this.#recentlySent.delete(key);
          this.#recentlySent.set(key, sentAt);
        }
      } catch (err) {
        failed = batch.map((p) => ({ p, error: err }));
      }
      for (const { p, error } of failed) {
        if (!this.#retryLater(p, error, final))
          dropped.push({ key: messageKey(p.message), error: errorMessage(error) });
      }
      if (failed.length === 0 && this.#sendProblem !== undefined) {
        this.#logger.info({}, "queue accepts messages again");
        this.#sendProblem = undefined;
      }
    }
    if (dropped.length > 0) {
      this.#stats.dropped += dropped.length;
      this.#logger.warn(
        { dropped: dropped.length, key: dropped[0]?.key, error: dropped[0]?.error },
        "cannot forward keys; dropped (the drift sweep catches them up)",
      );
    }
  }

  /** Puts a message whose send failed back in line with backoff; false when it is given up. */
  #retryLater(p: Pending, err: unknown, final: boolean): boolean {
    this.#stats.sendFailures++;
    const permanent =
      err instanceof InvalidMessageError || (err instanceof SendFailedError && err.senderFault);
    p.attempts++;
    if (permanent || final || p.attempts >= MAX_SEND_ATTEMPTS) return false;
    const problem = errorMessage(err);
    if (this.#sendProblem !== problem) {
      this.#sendProblem = problem;
      this.#logger.warn({ error: problem }, "queue refused messages; retrying with backoff");
    }
    const key = messageKey(p.message);
    // A newer event for the key supersedes this attempt.
    if (this.#pending.has(key)) return true;
    p.retryAt = Date.now() + backoffMs(p.attempts, this.#sendBackoff, this.#random);
    this.#pending.set(key, p);
    return true;
  }
}
