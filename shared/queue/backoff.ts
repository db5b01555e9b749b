// Exponential backoff with jitter, shared by the memory queue and the SQS retry path.

export interface BackoffPolicy {
  /** Delay before the second delivery (ms). */
  baseMs: number;
  /** Ceiling for any one delay (ms). */
  maxMs: number;
}

/**
 * Delay after the `attempt`-th failed delivery (1-based): base·2^(attempt-1), capped, then "equal
 * jitter" — uniformly in [d/2, d] — so a burst of failures spreads out but never retries at once.
 */
export function backoffMs(
  attempt: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 30);
  const capped = Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
  return Math.round(capped / 2 + (random() * capped) / 2);
}

/** Resolves after `ms`, or at once when `signal` aborts. Never rejects; the timer does not hold the process. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    timer.unref();
    signal?.addEventListener("abort", done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}
