// The bench's realistic cloud (bench/lib/wire.ts): answers held to a modelled latency, overlapping as a
// cloud's do even when the server behind answers one at a time; log-normal answer times with the stated median.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logNormalLatency, WireProxy } from "../../../bench/lib/wire.ts";

let backend: Server;
let proxy: WireProxy;
beforeAll(async () => {
  backend = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "text/xml" }).end("<ok/>"));
  });
  await new Promise<void>((r) => backend.listen(0, "127.0.0.1", r));
  proxy = await WireProxy.start(`http://127.0.0.1:${(backend.address() as AddressInfo).port}`);
});
afterAll(async () => {
  await proxy.stop();
  await new Promise((r) => backend.close(r));
});

/** A seeded PRNG (mulberry32): the same samples every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("the bench's realistic cloud", () => {
  it("holds every answer at least the modelled latency, and the answers overlap", async () => {
    proxy.latency = () => 1_000;
    const mark = proxy.mark();
    try {
      await Promise.all(
        Array.from({ length: 10 }, () =>
          fetch(proxy.url, { method: "POST", body: "Action=GetQueueAttributes" }).then((r) => r.text()),
        ),
      );
    } finally {
      proxy.latency = undefined;
    }
    const calls = proxy.calls.slice(mark);
    expect(calls).toHaveLength(10);
    for (const c of calls) expect(c.ms).toBeGreaterThanOrEqual(999);
    // In flight at once: a server answering one at a time would have 1; the held answers overlap.
    const edges = calls.flatMap((c) => [
      { t: c.at, d: 1 },
      { t: c.at + c.ms, d: -1 },
    ]);
    edges.sort((a, b) => a.t - b.t || a.d - b.d);
    let inFlight = 0;
    let peak = 0;
    for (const e of edges) {
      inFlight += e.d;
      peak = Math.max(peak, inFlight);
    }
    expect(peak).toBeGreaterThanOrEqual(5);
  });

  it("draws log-normal answer times around the stated median", () => {
    const draw = logNormalLatency(30, 0.5, seeded(7));
    const samples = Array.from({ length: 10_001 }, () => draw("x")).sort((a, b) => a - b);
    expect(samples[5000]).toBeGreaterThan(28.5);
    expect(samples[5000]).toBeLessThan(31.5);
    // p99 = median × e^(2.326 σ) ≈ 3.2 × median.
    expect(samples[9900]).toBeGreaterThan(85);
    expect(samples[9900]).toBeLessThan(110);
  });

  it("serves from a thread of its own: every call recorded here, its CPU its own", async () => {
    const threaded = await WireProxy.startThreaded(
      `http://127.0.0.1:${(backend.address() as AddressInfo).port}`,
    );
    try {
      // Only a described distribution crosses to the thread.
      expect(() => {
        threaded.latency = () => 1;
      }).toThrow(/logNormalLatency/);
      threaded.latency = logNormalLatency(200, 0.01);
      const mark = threaded.mark();
      const before = await threaded.cpuMs();
      await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(threaded.url, { method: "POST", body: "Action=GetQueueAttributes" }).then((r) => r.text()),
        ),
      );
      await threaded.settled();
      expect(threaded.countSince(mark)).toEqual({ GetQueueAttributes: 20 });
      for (const c of threaded.calls.slice(mark)) expect(c.ms).toBeGreaterThanOrEqual(190);
      expect(await threaded.cpuMs()).toBeGreaterThan(before);
    } finally {
      await threaded.stop();
    }
    // In-process, the proxy's CPU is the caller's: nothing to take out.
    expect(await proxy.cpuMs()).toBe(0);
  });
});
