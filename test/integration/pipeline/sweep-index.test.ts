// The warm sweep against the real kube-apiserver (1.20), counting its requests: a cold run lists the kind
// page by page; a warm run with no change makes no LIST and one watch; a change arrives through that
// watch; an expired resourceVersion (410) costs one relist; a warm batch selects exactly its objects.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { EXTERNAL_KEY_LABEL, externalKeyOf } from "../../../shared/api/cloud-events.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import { indexedMessages, type SweepResult, sweep, sweepWindowEnd } from "../../../shared/pipeline/sweep.ts";
import { type IndexEntry, SweepIndex } from "../../../shared/pipeline/sweep-index.ts";
import { ensureCrds } from "../../support/aws.ts";
import { inParallel, newKube, uniqueName } from "../../support/env.ts";
import { cleanup, queueObject, RecordingSink, readyStatus, TEST_LABEL } from "./helpers.ts";

const kube = newKube();
const label = uniqueName("sweep-index");
const M = 60_000;
const SCHEDULE = M;
const POLL = 10 * M;
const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);
const names = Array.from({ length: 60 }, () => uniqueName("q-swi"));
const ctx = { scheduleMs: SCHEDULE, defaultPollMs: POLL };

beforeAll(async () => {
  await ensureCrds();
  await inParallel(names, 16, async (name) => {
    const o = queueObject(name, label, { annotations: { [Annotations.externalName]: name } });
    (o.metadata as { labels: Record<string, string> }).labels[EXTERNAL_KEY_LABEL] = externalKeyOf(
      Queue,
      name,
    );
    await kube.create<KubeObject>(Queue, o);
    await kube.patchStatus(Queue, name, readyStatus(true));
  });
}, 120_000);

afterAll(async () => {
  await cleanup(kube, names);
});

const index = new SweepIndex(ctx);
const watches = () => kube.stats.byOperation[`watch ${Queue.kind}`] ?? 0;

async function run(at: number, sink = new RecordingSink(), batch = false) {
  kube.resetStats();
  const observed: Array<{ name: string; synced: string | undefined }> = [];
  const result: SweepResult = await sweep({
    kube,
    types: [Queue],
    sink,
    now: new Date(at),
    ...ctx,
    pageSize: 25,
    labelSelector: `${TEST_LABEL}=${label}`,
    index,
    batch,
    // What the Provider's health counts, without a LIST: every indexed object with its conditions.
    observe: (_t, items) => {
      for (const o of items) {
        const conditions = (o.status as { conditions?: Array<{ type: string; status: string }> }).conditions;
        observed.push({
          name: o.metadata.name,
          synced: conditions?.find((c) => c.type === "Synced")?.status,
        });
      }
    },
  });
  return { result, sink, lists: kube.stats.lists, watches: watches(), observed };
}

describe("warm sweep index against the real API server", () => {
  it("cold: lists the kind page by page and enqueues what is due in this window", async () => {
    const { result, lists, watches: w } = await run(T0);
    expect(lists).toBe(3); // 60 objects, pages of 25
    expect(w).toBe(0);
    expect(result).toMatchObject({ pages: 3, listed: 60, indexed: 60, watches: 0, relists: 0 });
  });

  it("warm, nothing changed: no LIST, one watch, and over one interval every object exactly once", async () => {
    const seen = new Map<string, number>();
    for (let k = 1; k <= POLL / SCHEDULE; k++) {
      const { result, sink, lists, watches: w, observed } = await run(T0 + k * SCHEDULE);
      expect(lists).toBe(0);
      expect(observed).toHaveLength(60);
      expect(observed.every((o) => o.synced === "True")).toBe(true);
      expect(w).toBe(1);
      expect(result).toMatchObject({ pages: 0, listed: 0, events: 0, watches: 1, indexed: 60 });
      for (const n of sink.names()) seen.set(n, (seen.get(n) ?? 0) + 1);
    }
    expect(seen.size).toBe(60);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  });

  it("a change arrives through the watch: no LIST, the object is enqueued at once", async () => {
    const changed = names[0] as string;
    const gone = names[1] as string;
    await kube.patchStatus(Queue, changed, readyStatus(false));
    await kube.delete(Queue, gone);
    const at = T0 + (POLL / SCHEDULE + 1) * SCHEDULE;
    const { result, sink, lists, watches: w } = await run(at);
    expect(lists).toBe(0);
    expect(w).toBe(1);
    expect(result.events).toBeGreaterThanOrEqual(2);
    expect(result.indexed).toBe(59);
    expect(sink.names()).toContain(changed);
    expect(result.attention).toBe(1);
    await kube.patchStatus(Queue, changed, readyStatus(true));
  });

  it("an expired resourceVersion (410 Gone) costs one relist, then the kind is warm again", async () => {
    index.kind(Queue).resourceVersion = "1"; // older than anything the watch cache holds
    const at = T0 + (POLL / SCHEDULE + 2) * SCHEDULE;
    const first = await run(at);
    expect(first.result.relists).toBe(1);
    expect(first.watches).toBe(1);
    expect(first.lists).toBe(3);
    expect(first.result.indexed).toBe(59);
    const second = await run(at + SCHEDULE);
    expect(second.lists).toBe(0);
    expect(second.result.relists).toBe(0);
  });

  it("a warm batch selects exactly its objects with one LIST from the watch cache", async () => {
    // A fresh index at a window where every object is due (a schedule longer than the interval).
    const all = new SweepIndex({ scheduleMs: POLL, defaultPollMs: POLL });
    const sink = new RecordingSink();
    await sweep({
      kube,
      types: [Queue],
      sink,
      now: new Date(T0),
      scheduleMs: POLL,
      defaultPollMs: POLL,
      labelSelector: `${TEST_LABEL}=${label}`,
      index: all,
      batch: true,
    });
    const batches = sink.messages.filter((m) => m.batch);
    expect(batches).toHaveLength(1);
    const page = batches[0]?.batch?.page;
    expect(page?.resourceVersionMatch).toBe("NotOlderThan");
    kube.resetStats();
    const read = await kube.list<KubeObject>(Queue, {
      resourceVersion: page?.resourceVersion ?? "0",
      resourceVersionMatch: "NotOlderThan",
      ...(page?.labelSelector ? { labelSelector: page.labelSelector } : {}),
    });
    expect(kube.stats.lists).toBe(1);
    expect(new Set(read.items.map((o) => o.metadata.name))).toEqual(
      new Set(batches[0]?.batch?.items.map((i) => i.name)),
    );
    expect(read.items).toHaveLength(59);
    expect(sweepWindowEnd(T0, POLL)).toBeLessThanOrEqual(T0);
  });

  it("a selection filled to the message's bound (≈ 650 keys, selector and items in 60 KiB) is one LIST the API server answers", async () => {
    // The 60 objects and as many keys of objects that do not exist as fit: one selection, not two of 390.
    const entries = [...names, ...Array.from({ length: 1_000 }, (_, i) => `absent-${label}-${i}`)].map(
      (name, i): IndexEntry => ({
        name,
        namespace: undefined,
        uid: undefined,
        rv: String(i + 1),
        generation: 1,
        facts: { paused: false, attention: false, askedPollMs: undefined, lastChangeMs: 0, phase: 0 },
        batchKey: externalKeyOf(Queue, name),
        providerConfig: "default",
        conditions: [],
        slot: 0,
      }),
    );
    const { messages } = indexedMessages(Queue, entries, {
      batch: true,
      labelSelector: `${TEST_LABEL}=${label}`,
      at: new Date(T0),
    });
    const first = messages[0]?.batch?.page;
    const selected = messages[0]?.batch?.items.length ?? 0;
    expect(selected).toBeGreaterThan(600);
    expect(Buffer.byteLength(first?.labelSelector ?? "")).toBeGreaterThan(25 * 1024);
    // What is there now (a test above deleted one), by the run's own selector.
    const there = await kube.list<KubeObject>(Queue, { labelSelector: `${TEST_LABEL}=${label}` });
    kube.resetStats();
    const read = await kube.list<KubeObject>(Queue, {
      resourceVersion: "0",
      resourceVersionMatch: "NotOlderThan",
      labelSelector: first?.labelSelector ?? "",
    });
    expect(kube.stats.lists).toBe(1);
    expect(there.items.length).toBeGreaterThan(50);
    expect(new Set(read.items.map((o) => o.metadata.name))).toEqual(
      new Set(there.items.map((o) => o.metadata.name)),
    );
  });
});
