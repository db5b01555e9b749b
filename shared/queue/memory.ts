// The memory queue: producer and consumer in one, for one-process mode (`driftless run`) and tests.
//
// Semantics, per key (see messageKey):
// - serialised: never two handlers for one key at once; a message for a key in flight waits behind it;
// - coalesced: a key that is already waiting is not queued twice; the earliest due time (and its
//   message) wins, so a burst of watch events becomes one reconcile;
// - delayed: `send(…, { delayMs })` and `requeue` outcomes wait on one unref'd timer;
// - retried: `retry` outcomes come back after exponential backoff with jitter, and after
//   `maxReceiveCount` deliveries go to the dead-letter list and `onDeadLetter`;
// - bounded: at most `maxPending` waiting keys; `send` reports further keys as QueueFullError and
//   the drift sweep catches them up later. Requeues and retries of a key in flight are never refused.
import { type BackoffPolicy, backoffMs } from "./backoff.ts";
import { ConsumerStateError, InvalidMessageError, QueueFullError } from "./errors.ts";
import { messageKey, type ReconcileMessage, validateMessage } from "./message.ts";
import type {
  HandlerOutcome,
  MessageHandler,
  QueueConsumer,
  QueueEventSink,
  QueueProducer,
  SendOptions,
  SendResult,
} from "./port.ts";

export const DEFAULT_MEMORY_WORKERS = 4;
export const DEFAULT_MAX_PENDING = 100_000;
export const DEFAULT_MAX_RECEIVE_COUNT = 5;
export const DEFAULT_RETRY_BACKOFF: BackoffPolicy = { baseMs: 1_000, maxMs: 60_000 };
export const DEFAULT_IDLE_HORIZON_MS = 1_000;
const DEAD_LETTER_HISTORY = 1_000;

export interface DeadLetter {
  key: string;
  id: string;
  message: ReconcileMessage;
  receiveCount: number;
  error: Error;
  at: Date;
}

export interface MemoryQueueStats {
  /** Keys waiting (due now or delayed), including those parked behind a handler of the same key. */
  pending: number;
  /** Of `pending`, keys whose due time is in the future. */
  delayed: number;
  inFlight: number;
  /** Messages dead-lettered since the queue was created. */
  deadLettered: number;
  /** `requeue` outcomes since the queue was created (waits: creating, a write not stored yet…). */
  requeued: number;
  /** When the last handler finished (epoch ms); when the queue was created, before any did. */
  lastSettledAt: number;
}

export interface MemoryQueueOptions {
  /** Handlers running at once. */
  workers?: number;
  /** Waiting keys beyond which `send` refuses new keys. */
  maxPending?: number;
  /** Deliveries of one message before a `retry` outcome dead-letters it. */
  maxReceiveCount?: number;
  retryBackoff?: BackoffPolicy;
  onDeadLetter?: (deadLetter: DeadLetter) => void;
  onEvent?: QueueEventSink;
  /** Injected for deterministic tests. */
  random?: () => number;
}

interface Entry {
  key: string;
  id: string;
  message: ReconcileMessage;
  dueAt: number;
  /** Deliveries so far. */
  receiveCount: number;
  enqueuedAt: Date;
  /** Sequence of this entry's live heap item; -1 while parked behind its key's handler. */
  seq: number;
}

interface HeapItem {
  dueAt: number;
  seq: number;
  key: string;
}

export class MemoryQueue implements QueueProducer, QueueConsumer {
  readonly #workers: number;
  readonly #maxPending: number;
  readonly #maxReceiveCount: number;
  readonly #retryBackoff: BackoffPolicy;
  readonly #onDeadLetter: ((deadLetter: DeadLetter) => void) | undefined;
  readonly #onEvent: QueueEventSink | undefined;
  readonly #random: () => number;

  readonly #waiting = new Map<string, Entry>();
  readonly #inFlight = new Map<string, Entry>();
  readonly #heap: HeapItem[] = [];
  #seq = 0;
  #ids = 0;
  #timer: NodeJS.Timeout | undefined;
  #timerDue = Number.POSITIVE_INFINITY;
  #handler: MessageHandler | undefined;
  #stopping = false;
  #deadLettered = 0;
  #requeued = 0;
  #lastSettledAt = Date.now();
  readonly #deadLetters: DeadLetter[] = [];
  readonly #watchers = new Set<{ ready: () => boolean; resolve: () => void }>();

  constructor(options: MemoryQueueOptions = {}) {
    this.#workers = positiveInt("workers", options.workers ?? DEFAULT_MEMORY_WORKERS);
    this.#maxPending = positiveInt("maxPending", options.maxPending ?? DEFAULT_MAX_PENDING);
    this.#maxReceiveCount = positiveInt(
      "maxReceiveCount",
      options.maxReceiveCount ?? DEFAULT_MAX_RECEIVE_COUNT,
    );
    this.#retryBackoff = options.retryBackoff ?? DEFAULT_RETRY_BACKOFF;
    this.#onDeadLetter = options.onDeadLetter;
    this.#onEvent = options.onEvent;
    this.#random = options.random ?? Math.random;
  }

  async send(messages: readonly ReconcileMessage[], opts: SendOptions = {}): Promise<SendResult> {
    const dueAt = Date.now() + Math.max(0, opts.delayMs ?? 0);
    const result: SendResult = { sent: 0, failed: [] };
    messages.forEach((message, index) => {
      const problem = validateMessage(message);
      if (problem !== undefined) {
        result.failed.push({
          index,
          message,
          error: new InvalidMessageError(`invalid reconcile message: ${problem}`),
        });
        return;
      }
      const key = messageKey(message);
      if (!this.#waiting.has(key) && this.#waiting.size >= this.#maxPending) {
        result.failed.push({
          index,
          message,
          error: new QueueFullError(`memory queue holds ${this.#maxPending} keys`),
        });
        return;
      }
      this.#schedule(key, message, dueAt, 0);
      result.sent++;
    });
    this.#pump();
    return result;
  }

  start(handler: MessageHandler): void {
    if (this.#handler !== undefined || this.#stopping)
      throw new ConsumerStateError("memory queue already started");
    this.#handler = handler;
    this.#pump();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#clearTimer();
    await this.#until(() => this.#inFlight.size === 0);
  }

  /**
   * Resolves when nothing is in flight and no waiting key is due within `horizonMs` from the moment
   * of checking (default 1 s): a test can await the effects of its sends, including short requeues
   * and retries, without waiting for far-off timers. Never resolves while due work awaits `start`.
   */
  idle(horizonMs: number = DEFAULT_IDLE_HORIZON_MS): Promise<void> {
    return this.#until(() => {
      if (this.#inFlight.size > 0) return false;
      const horizon = Date.now() + horizonMs;
      for (const entry of this.#waiting.values()) if (entry.dueAt <= horizon) return false;
      return true;
    });
  }

  stats(): MemoryQueueStats {
    const now = Date.now();
    let delayed = 0;
    for (const entry of this.#waiting.values()) if (entry.dueAt > now) delayed++;
    return {
      pending: this.#waiting.size,
      delayed,
      inFlight: this.#inFlight.size,
      deadLettered: this.#deadLettered,
      requeued: this.#requeued,
      lastSettledAt: this.#lastSettledAt,
    };
  }

  /** The most recent dead letters (up to 1,000), oldest first. */
  deadLetters(): readonly DeadLetter[] {
    return this.#deadLetters;
  }

  /**
   * Adds or coalesces the waiting entry of `key`; the earliest due time and its message win.
   * `again` is the entry just delivered, when it comes back (requeue, retry): it keeps its id.
   */
  #schedule(
    key: string,
    message: ReconcileMessage,
    dueAt: number,
    receiveCount: number,
    again?: Entry,
  ): void {
    const existing = this.#waiting.get(key);
    if (existing !== undefined) {
      existing.receiveCount = Math.max(existing.receiveCount, receiveCount);
      // A doorbell message waits for the write it reports (worker/admission.ts): the merged entry waits for the
      // latest write, which is stored after every earlier one.
      if (message.admitted) existing.message = { ...existing.message, admitted: message.admitted };
      if (dueAt >= existing.dueAt) return;
      if (existing.message.admitted && !message.admitted)
        message = { ...message, admitted: existing.message.admitted };
      existing.dueAt = dueAt;
      existing.message = message;
      if (existing.seq !== -1) this.#push(existing);
      return;
    }
    const entry: Entry = {
      key,
      id: again?.id ?? `mem-${++this.#ids}`,
      message,
      dueAt,
      receiveCount,
      enqueuedAt: again?.enqueuedAt ?? new Date(),
      seq: -1,
    };
    this.#waiting.set(key, entry);
    if (!this.#inFlight.has(key)) this.#push(entry);
  }

  #pump(): void {
    const handler = this.#handler;
    if (handler !== undefined && !this.#stopping) {
      const now = Date.now();
      while (this.#inFlight.size < this.#workers) {
        const top = this.#heap[0];
        if (top === undefined) break;
        const entry = this.#waiting.get(top.key);
        if (entry === undefined || entry.seq !== top.seq) {
          this.#pop(); // stale: the entry was coalesced to an earlier time, or already delivered
          continue;
        }
        if (top.dueAt > now) break;
        this.#pop();
        this.#waiting.delete(entry.key);
        this.#inFlight.set(entry.key, entry);
        void this.#deliver(entry, handler);
      }
      this.#armTimer();
    }
    this.#wakeWatchers();
  }

  async #deliver(entry: Entry, handler: MessageHandler): Promise<void> {
    entry.receiveCount++;
    let outcome: HandlerOutcome;
    try {
      outcome = await handler({
        message: entry.message,
        id: entry.id,
        receiveCount: entry.receiveCount,
        enqueuedAt: entry.enqueuedAt,
      });
    } catch (error) {
      outcome = { kind: "retry", error: asError(error) };
    }
    this.#lastSettledAt = Date.now();
    this.#settle(entry, outcome);
    this.#inFlight.delete(entry.key);
    const parked = this.#waiting.get(entry.key);
    if (parked !== undefined) this.#push(parked);
    this.#pump();
  }

  #settle(entry: Entry, outcome: HandlerOutcome): void {
    const now = Date.now();
    // A JavaScript handler may resolve to nothing; treat that as a failure, not a crash.
    const settled = outcome as HandlerOutcome | undefined;
    if (settled?.kind === "done") return;
    if (settled?.kind === "requeue") {
      this.#requeued++;
      const afterMs = Number.isFinite(settled.afterMs) ? Math.max(0, settled.afterMs) : 0;
      const message: ReconcileMessage = {
        ...entry.message,
        reason: "requeue",
        at: new Date(now).toISOString(),
      };
      // Requeues are healthy waits: unlike failures they do not count toward dead-lettering.
      this.#schedule(entry.key, message, now + afterMs, 0, entry);
      return;
    }
    const error = settled?.kind === "retry" ? settled.error : new Error("handler returned no outcome");
    if (entry.receiveCount >= this.#maxReceiveCount) {
      this.#deadLetter(entry, error, now);
      return;
    }
    const wanted = settled?.kind === "retry" && Number.isFinite(settled.afterMs) ? (settled.afterMs ?? 0) : 0;
    const delay = Math.max(backoffMs(entry.receiveCount, this.#retryBackoff, this.#random), wanted);
    this.#onEvent?.({
      level: "warn",
      msg: "reconcile failed; will retry",
      key: entry.key,
      id: entry.id,
      receiveCount: entry.receiveCount,
      retryInMs: delay,
      err: error.message,
    });
    this.#schedule(entry.key, entry.message, now + delay, entry.receiveCount, entry);
  }

  #deadLetter(entry: Entry, error: Error, now: number): void {
    const deadLetter: DeadLetter = {
      key: entry.key,
      id: entry.id,
      message: entry.message,
      receiveCount: entry.receiveCount,
      error,
      at: new Date(now),
    };
    this.#deadLettered++;
    this.#deadLetters.push(deadLetter);
    if (this.#deadLetters.length > DEAD_LETTER_HISTORY) this.#deadLetters.shift();
    this.#onEvent?.({
      level: "error",
      msg: "message dead-lettered",
      key: entry.key,
      id: entry.id,
      receiveCount: entry.receiveCount,
      err: error.message,
    });
    try {
      this.#onDeadLetter?.(deadLetter);
    } catch (callbackError) {
      this.#onEvent?.({
        level: "error",
        msg: "onDeadLetter callback threw",
        key: entry.key,
        err: String(callbackError),
      });
    }
  }

  #armTimer(): void {
    let next = Number.POSITIVE_INFINITY;
    // The heap top may be stale; skipping it costs a spurious wake-up at worst, never a missed one.
    const top = this.#heap[0];
    if (top !== undefined && this.#inFlight.size < this.#workers) next = top.dueAt;
    if (next === this.#timerDue) return;
    this.#clearTimer();
    if (next === Number.POSITIVE_INFINITY) return;
    this.#timerDue = next;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#timerDue = Number.POSITIVE_INFINITY;
        this.#pump();
      },
      Math.max(0, next - Date.now()),
    );
    this.#timer.unref();
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
  }

  #until(ready: () => boolean): Promise<void> {
    if (ready()) return Promise.resolve();
    // Re-checked after every state change; time alone never makes `idle` or `stop` true.
    return new Promise<void>((resolve) => this.#watchers.add({ ready, resolve }));
  }

  #wakeWatchers(): void {
    for (const watcher of this.#watchers) {
      if (!watcher.ready()) continue;
      this.#watchers.delete(watcher);
      watcher.resolve();
    }
  }

  #push(entry: Entry): void {
    entry.seq = ++this.#seq;
    const heap = this.#heap;
    heap.push({ dueAt: entry.dueAt, seq: entry.seq, key: entry.key });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop();
    if (last === undefined || heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === i) return;
      [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
      i = smallest;
    }
  }
}

function before(a: HeapItem, b: HeapItem): boolean {
  return a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.seq < b.seq);
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
