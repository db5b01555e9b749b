// One message per key per interval, per container: what bounds a forged or runaway doorbell caller to
// "one extra level-triggered reconcile per key per interval", while a person's quick edits still all
// arrive — a second write of a key within the interval is sent delayed to the interval's end (it then
// reads the latest state), and further writes before that delayed message is due are already covered
// by it and dropped. A global budget per second caps what one container sends at all.

export interface KeyRateLimiterOptions {
  /** Least time between two messages of one key; default 1 s. */
  intervalMs?: number;
  /** Messages per second one container sends at most (all keys); default 200. */
  perSecond?: number;
  /** Keys remembered at most (oldest forgotten first); default 10,000. */
  maxKeys?: number;
  now?: () => number;
}

/** Send now, send delayed by `delayMs`, or drop (a message already due later covers this write). */
export type Slot = { kind: "send"; delayMs: number } | { kind: "drop"; why: "covered" | "budget" };

/**
 * A write admitted this close to a delayed message's due time is not counted as covered by it: it
 * may be stored after that message is read, so it gets a message of its own.
 */
const COVER_MARGIN_MS = 250;

export class KeyRateLimiter {
  readonly #intervalMs: number;
  readonly #perSecond: number;
  readonly #maxKeys: number;
  readonly #now: () => number;
  /** key → when its last message is (or was) due. */
  readonly #due = new Map<string, number>();
  #window = 0;
  #inWindow = 0;

  constructor(opts: KeyRateLimiterOptions = {}) {
    this.#intervalMs = opts.intervalMs ?? 1_000;
    this.#perSecond = opts.perSecond ?? 200;
    this.#maxKeys = opts.maxKeys ?? 10_000;
    this.#now = opts.now ?? Date.now;
  }

  take(key: string): Slot {
    const now = this.#now();
    const window = Math.floor(now / 1000);
    if (window !== this.#window) {
      this.#window = window;
      this.#inWindow = 0;
    }
    const lastDue = this.#due.get(key);
    let dueAt = now;
    if (lastDue !== undefined) {
      if (lastDue > now && now < lastDue - COVER_MARGIN_MS) return { kind: "drop", why: "covered" };
      dueAt = Math.max(now, lastDue + this.#intervalMs);
    }
    if (this.#inWindow >= this.#perSecond) return { kind: "drop", why: "budget" };
    this.#inWindow++;
    this.#remember(key, dueAt);
    return { kind: "send", delayMs: dueAt - now };
  }

  /** A message that could not be sent: the key's next write is not held back by it. */
  forget(key: string): void {
    this.#due.delete(key);
  }

  get size(): number {
    return this.#due.size;
  }

  #remember(key: string, dueAt: number): void {
    this.#due.delete(key);
    this.#due.set(key, dueAt);
    if (this.#due.size > this.#maxKeys) {
      // Insertion order: the first entry is the least recently sent key.
      const oldest = this.#due.keys().next().value;
      if (oldest !== undefined) this.#due.delete(oldest);
    }
  }
}
