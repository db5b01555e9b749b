// A deployment-wide cloud-call limit (shared/reconciler/rate-limit.ts): each of the deployment's processes
// takes limit ÷ instances, so together they never pass it; a ProviderConfig's own spec.rateLimit wins.
import { describe, expect, it } from "vitest";
import { rateLimitOf as configRateLimit, readConfig } from "../../../functions/config.ts";
import { RateLimiters, rateLimitOf, shareOf } from "../../../shared/reconciler/rate-limit.ts";

describe("the rate limit's share per process", () => {
  it("divides rate and burst by the instances, keeping a burst of at least one", () => {
    expect(shareOf({ perSecond: 20, burst: 40 }, 4)).toEqual({ perSecond: 5, burst: 10 });
    expect(shareOf({ perSecond: 5, burst: 2 }, 20)).toEqual({ perSecond: 0.25, burst: 1 });
    expect(() => shareOf({ perSecond: 5, burst: 2 }, 0)).toThrow(RangeError);
  });

  it("takes the ProviderConfig's own limit when it sets one, and a new bucket when it changes", () => {
    const limiters = new RateLimiters({ perSecond: 20, burst: 40 }, 2);
    const own = rateLimitOf({ rateLimit: { perSecond: 5 } });
    expect(own).toEqual({ perSecond: 5, burst: 10 });
    expect(rateLimitOf({ rateLimit: { perSecond: 0 } })).toBeUndefined();
    expect(rateLimitOf({})).toBeUndefined();
    const a = limiters.for("pc", own);
    expect(limiters.for("pc", own)).toBe(a);
    expect(limiters.for("pc", { perSecond: 6, burst: 12 })).not.toBe(a);
  });

  it("reads the deployment's limit and instances from the environment", () => {
    const cfg = readConfig({ DRIFTLESS_RATE_LIMIT: "10", DRIFTLESS_MAX_INSTANCES: "5" });
    expect(configRateLimit(cfg)).toEqual({ rateLimit: { perSecond: 10, burst: 20 }, rateLimitInstances: 5 });
    expect(configRateLimit(readConfig({}))).toEqual({
      rateLimit: { perSecond: 20, burst: 40 },
      rateLimitInstances: 1,
    });
    expect(() => readConfig({ DRIFTLESS_MAX_INSTANCES: "0" })).toThrow(/DRIFTLESS_MAX_INSTANCES/);
  });
});
