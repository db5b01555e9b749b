// In-process dispatch for the polling consumers (SQS, Pub/Sub): at most `workers` handlers at once and
// never two for one key, because a standard queue (or the Pub/Sub emulator) may hand us both at once.

export class KeyedDispatcher {
  readonly #workers: number;
  #active = 0;
  #accepted = 0;
  readonly #slotWaiters: Array<() => void> = [];
  readonly #tails = new Map<string, Promise<void>>();
  #changeWaiters: Array<() => void> = [];

  constructor(workers: number) {
    if (!Number.isInteger(workers) || workers < 1)
      throw new RangeError(`workers must be a positive integer, got ${workers}`);
    this.#workers = workers;
  }

  /** Tasks accepted and not yet finished (running or waiting for their key or a worker). */
  get size(): number {
    return this.#accepted;
  }

  /** Tasks running now. */
  get active(): number {
    return this.#active;
  }

  /** Runs `task` after every earlier task of the same key, within the worker limit. `task` should not reject. */
  run(key: string, task: () => Promise<void>): void {
    this.#accepted++;
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const current: Promise<void> = previous
      .then(() => this.#withWorker(task))
      // Callers settle their own errors; this only keeps one key's chain alive if a task slips.
      .catch(() => undefined)
      .then(() => {
        if (this.#tails.get(key) === current) this.#tails.delete(key);
        this.#accepted--;
        this.#notify();
      });
    this.#tails.set(key, current);
  }

  /** Resolves once fewer than `limit` tasks are accepted. */
  async whenBelow(limit: number): Promise<void> {
    while (this.#accepted >= limit) await new Promise<void>((resolve) => this.#changeWaiters.push(resolve));
  }

  /** Resolves once every accepted task has finished. */
  drain(): Promise<void> {
    return this.whenBelow(1);
  }

  async #withWorker(task: () => Promise<void>): Promise<void> {
    if (this.#active >= this.#workers) await new Promise<void>((resolve) => this.#slotWaiters.push(resolve));
    else this.#active++;
    try {
      await task();
    } finally {
      // Hand the worker straight to the next waiter, so the count never dips and over-admits.
      const next = this.#slotWaiters.shift();
      if (next) next();
      else this.#active--;
    }
  }

  #notify(): void {
    const waiters = this.#changeWaiters;
    this.#changeWaiters = [];
    for (const wake of waiters) wake();
  }
}
