// What the forwarder keeps per managed resource, counted: one Map entry (the key and a numeric
// fingerprint) per object that exists, none for objects that are gone, no object cache, and lists read in
// pages of at most DEFAULT_LIST_PAGE_SIZE. The byte count is the heap a full GC leaves, so it fails if
// the watcher ever keeps objects (each here carries 2 kB of spec) or more than a few dozen bytes per key.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import type { ResourceType } from "../../../shared/api/meta.ts";
import type { Kube, KubeObject } from "../../../shared/kube/client.ts";
import { noopLogger } from "../../../shared/pipeline/common.ts";
import {
  ApiServerHealth,
  DEFAULT_LIST_PAGE_SIZE,
  KindWatcher,
  newWatchCounters,
} from "../../../shared/pipeline/kind-watcher.ts";

const Queue: ResourceType = {
  group: "sqs.aws.driftless.dev",
  version: "v1alpha1",
  kind: "Queue",
  plural: "queues",
  namespaced: false,
};
const SPEC = { forProvider: { policy: "x".repeat(2048) } };
// Measured: ~100 bytes (the key's string, a heap number, the Map's slots). One cached object would be
// more than 2,000.
const BYTES_PER_KEY = 150;

/**
 * A cluster whose Queue list is the objects `queue-<i>` for `indices()` (fresh strings, as a parsed
 * answer has them; served in pages as asked) and whose watches stay silent — or answer 410 Gone once
 * `expire()` was called.
 */
function fakeKube(indices: () => readonly number[]) {
  const limits: number[] = [];
  let expired = false;
  const kube = {
    async list(_t: ResourceType, opts: { limit?: number; continue?: string }) {
      const all = indices();
      const limit = opts.limit ?? all.length;
      limits.push(limit);
      const from = Number(opts.continue ?? 0);
      const items: KubeObject[] = all.slice(from, from + limit).map((i) => ({
        apiVersion: "sqs.aws.driftless.dev/v1alpha1",
        kind: "Queue",
        metadata: {
          name: `queue-${i}`,
          uid: `uid-${i}`,
          resourceVersion: String(i + 1),
          generation: 1,
          labels: { team: "a" },
        },
        spec: structuredClone(SPEC),
      }));
      const next = from + limit;
      return { items, resourceVersion: "1", ...(next < all.length ? { continue: String(next) } : {}) };
    },
    async watch(
      _t: ResourceType,
      _o: unknown,
      onEvent: (type: string, o: unknown) => void,
      signal?: AbortSignal,
    ) {
      const ended = new Promise<void>((resolve) => signal?.addEventListener("abort", () => resolve()));
      if (expired) {
        expired = false;
        queueMicrotask(() => onEvent("ERROR", { code: 410, message: "too old resource version" }));
      }
      return { ended };
    },
  };
  return {
    kube: kube as unknown as Kube,
    limits,
    expire: () => {
      expired = true;
    },
  };
}

function watcherOf(kube: Kube, changed: string[]) {
  return new KindWatcher({
    kube,
    type: Queue,
    logger: noopLogger,
    counters: newWatchCounters(),
    health: new ApiServerHealth(noopLogger),
    random: () => 0,
    watchTimeoutSeconds: 1,
    changed: (meta) => changed.push(meta.name ?? ""),
  });
}

/** Runs the watcher until its first list is done; the returned stop ends its watch loop. */
async function listed(w: KindWatcher): Promise<() => Promise<void>> {
  const stop = new AbortController();
  let done = () => {};
  const first = new Promise<void>((r) => {
    done = r;
  });
  const loop = w.run(stop.signal, done);
  await first;
  return async () => {
    stop.abort();
    w.interrupt();
    await loop;
  };
}

function liveHeap(): number {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});

describe("KindWatcher memory", () => {
  it("keeps one entry per existing object, forgets deleted ones, and lists in small pages", async () => {
    let indices = Array.from({ length: 1_050 }, (_, i) => i);
    const { kube, limits, expire } = fakeKube(() => indices);
    const changed: string[] = [];
    const w = watcherOf(kube, changed);
    stops.push(await listed(w));
    expect(w.stats().keys).toBe(1_050);
    expect(changed).toHaveLength(1_050);
    expect(DEFAULT_LIST_PAGE_SIZE).toBeLessThanOrEqual(100);
    expect(limits).toHaveLength(Math.ceil(1_050 / DEFAULT_LIST_PAGE_SIZE));
    expect(new Set(limits)).toEqual(new Set([DEFAULT_LIST_PAGE_SIZE]));

    // Half of them are deleted while the watch was away; 410 Gone makes it relist: the deleted keys are
    // forgotten and reported once each, the others (unchanged) not at all.
    indices = indices.filter((i) => i % 2 === 0);
    changed.length = 0;
    expire();
    w.interrupt();
    for (let i = 0; i < 200 && w.stats().keys !== 525; i++) await new Promise((r) => setTimeout(r, 10));
    expect(w.stats().keys).toBe(525);
    expect(changed).toHaveLength(525);
    expect(changed.every((name) => Number(name.slice("queue-".length)) % 2 === 1)).toBe(true);
  });

  it(`retains less than ${BYTES_PER_KEY} bytes of heap per key (no object cache)`, async () => {
    const n = 20_000;
    const indices = Array.from({ length: n }, (_, i) => i);
    const { kube } = fakeKube(() => indices);
    const changed: string[] = [];
    const before = liveHeap();
    const w = watcherOf(kube, changed);
    stops.push(await listed(w));
    changed.length = 0;
    const perKey = (liveHeap() - before) / n;
    expect(w.stats().keys).toBe(n);
    expect(perKey).toBeLessThan(BYTES_PER_KEY);
  });
});
