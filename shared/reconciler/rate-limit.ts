// Per-ProviderConfig rate limits for cloud calls: one token bucket per ProviderConfig, so a burst of
// reconciles (a sweep enqueueing hundreds of keys, a relist after 410 Gone) never turns into a burst of
// cloud API calls that the account's quota answers with throttling. The limit is per process: N
// concurrent function instances may call up to N × the limit.

/** Sustained calls per second and the burst allowed on top after a quiet period. */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

/** Well below the AWS API defaults (EC2 describe ~100/s, SQS/S3 higher), yet 1,200 calls a minute. */
export const DEFAULT_RATE_LIMIT: RateLimit = { perSecond: 20, burst: 40 };

function checkRateLimit(limit: RateLimit) {
  if (!(limit.perSecond > 0) || !(limit.burst >= 1))
    throw new RangeError(`rate limit needs perSecond > 0 and burst >= 1, got ${JSON.stringify(limit)}`);
}

/**
 * A token bucket: `acquire` resolves at once while tokens are left, else waits its turn (first come,
 * first served) until the next token arrives. One timer at most; no polling.
 */
export class TokenBucket {
  readonly #perMs: number;
  readonly #burst: number;
  readonly #now: () => number;
  #tokens: number;
  #at: number;
  readonly #waiters: Array<() => void> = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(limit: RateLimit, now: () => number = () => performance.now()) {
    checkRateLimit(limit);
    this.#perMs = limit.perSecond / 1000;
    this.#burst = limit.burst;
    this.#now = now;
    this.#tokens = limit.burst;
    this.#at = now();
  }

  /** Takes one token, waiting for it if need be. A stable function: safe to pass around and compare. */
  readonly acquire = (): Promise<void> => {
    this.#refill();
    if (this.#waiters.length === 0 && this.#tokens >= 1) {
      this.#tokens -= 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.#waiters.push(resolve);
      this.#arm();
    });
  };

  /** Callers waiting for a token now. */
  get waiting(): number {
    return this.#waiters.length;
  }

  #refill() {
    const now = this.#now();
    this.#tokens = Math.min(this.#burst, this.#tokens + (now - this.#at) * this.#perMs);
    this.#at = now;
  }

  #arm() {
    if (this.#timer !== undefined) return;
    const waitMs = Math.max(1, Math.ceil((1 - this.#tokens) / this.#perMs));
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#refill();
      while (this.#waiters.length > 0 && this.#tokens >= 1) {
        this.#tokens -= 1;
        this.#waiters.shift()?.();
      }
      if (this.#waiters.length > 0) this.#arm();
    }, waitMs);
  }
}

/** One bucket per key (the ProviderConfig), made on first use. */
export class RateLimiters {
  readonly #limit: RateLimit;
  readonly #buckets = new Map<string, TokenBucket>();

  constructor(limit: RateLimit) {
    checkRateLimit(limit);
    this.#limit = limit;
  }

  for(key: string): TokenBucket {
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      bucket = new TokenBucket(this.#limit);
      this.#buckets.set(key, bucket);
    }
    return bucket;
  }
}
