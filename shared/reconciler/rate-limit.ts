// Per-ProviderConfig rate limits for cloud calls: one token bucket per ProviderConfig, so a burst of
// reconciles (a sweep enqueueing hundreds of keys, a relist after 410 Gone) never turns into a burst of
// cloud API calls that the account's quota answers with throttling.
//
// The limit holds for the deployment as a whole, with nothing always on and nothing shared at run time:
// a deployment runs at most `instances` processes at once (the queue trigger's maximum concurrency, the
// Cloud Function's maximum instances; 1 for `driftless run`), and each process takes its share, the limit
// ÷ instances. The sum can then never pass the limit, whatever the load — at the price of a process
// running alone using only its share (see docs/operations.md, "Cloud API rate limits").

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

  /** Takes one token if there is one now; never waits (for intakes that refuse rather than queue). */
  tryAcquire(): boolean {
    this.#refill();
    if (this.#waiters.length > 0 || this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

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

/** One process's share of a deployment-wide limit: the rate ÷ instances, the burst likewise (at least 1). */
export function shareOf(limit: RateLimit, instances: number): RateLimit {
  if (!(Number.isInteger(instances) && instances >= 1))
    throw new RangeError(`instances must be a whole number of at least 1, got ${instances}`);
  return { perSecond: limit.perSecond / instances, burst: Math.max(1, Math.floor(limit.burst / instances)) };
}

/**
 * One bucket per key (the ProviderConfig), made on first use, holding this process's share of the limit:
 * the ProviderConfig's own `spec.rateLimit` when it sets one, else the deployment's.
 */
export class RateLimiters {
  readonly #limit: RateLimit;
  readonly #instances: number;
  readonly #buckets = new Map<string, { limit: RateLimit; bucket: TokenBucket }>();

  constructor(limit: RateLimit, instances = 1) {
    checkRateLimit(limit);
    shareOf(limit, instances);
    this.#limit = limit;
    this.#instances = instances;
  }

  for(key: string, own?: RateLimit): TokenBucket {
    const limit = own ?? this.#limit;
    const held = this.#buckets.get(key);
    if (held && held.limit.perSecond === limit.perSecond && held.limit.burst === limit.burst)
      return held.bucket;
    const bucket = new TokenBucket(shareOf(limit, this.#instances));
    this.#buckets.set(key, { limit, bucket });
    return bucket;
  }
}

/** A ProviderConfig's own limit (`spec.rateLimit`, burst defaulting to twice the rate), if it sets one. */
export function rateLimitOf(spec: unknown): RateLimit | undefined {
  const r = (spec as { rateLimit?: { perSecond?: unknown; burst?: unknown } } | undefined)?.rateLimit;
  if (typeof r?.perSecond !== "number" || !(r.perSecond > 0)) return undefined;
  const burst =
    typeof r.burst === "number" && r.burst >= 1 ? r.burst : Math.max(1, Math.ceil(2 * r.perSecond));
  return { perSecond: r.perSecond, burst };
}
