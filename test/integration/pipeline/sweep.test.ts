import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { Annotations, type ResourceType } from "../../../shared/api/meta.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import { pollDue, pollPhase, sweep, sweepWindowEnd } from "../../../shared/pipeline/sweep.ts";
import { ensureCrds } from "../../support/aws.ts";
import { inParallel, newKube, uniqueName } from "../../support/env.ts";
import { cleanup, queueObject, RecordingSink, readyStatus, TEST_LABEL } from "./helpers.ts";

const kube = newKube();
const label = uniqueName("sweep");
const M = 60_000;
const SCHEDULE = M;
const DEFAULT_POLL = 10 * M;
const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);
const HOLD = "test.driftless.dev/hold";

// 120 objects: 100 ready with the default interval, 5 ready polling every 30 s, 10 paused (some of them
// unready), 4 not Ready, 1 being deleted (held by a finalizer).
const groups = {
  normal: Array.from({ length: 100 }, () => uniqueName("q-sw-normal")),
  fast: Array.from({ length: 5 }, () => uniqueName("q-sw-fast")),
  paused: Array.from({ length: 10 }, () => uniqueName("q-sw-paused")),
  unready: Array.from({ length: 4 }, () => uniqueName("q-sw-unready")),
  deleting: [uniqueName("q-sw-deleting")],
};
const all = Object.values(groups).flat();
const uids = new Map<string, string>();

beforeAll(async () => {
  await ensureCrds();
  await inParallel(all, 16, async (name) => {
    const extra: Parameters<typeof queueObject>[2] = groups.fast.includes(name)
      ? { annotations: { [Annotations.pollInterval]: "30s" } }
      : groups.paused.includes(name)
        ? { annotations: { [Annotations.paused]: "true" } }
        : groups.deleting.includes(name)
          ? { finalizers: [HOLD] }
          : {};
    const created = await kube.create<KubeObject>(Queue, queueObject(name, label, extra));
    uids.set(name, created.metadata.uid ?? "");
    const unready = groups.unready.includes(name) || groups.paused.indexOf(name) % 2 === 1;
    await kube.patchStatus(Queue, name, readyStatus(!unready));
  });
  await kube.delete(Queue, groups.deleting[0]!);
}, 120_000);

afterAll(async () => {
  await cleanup(kube, all);
});

const sweepAt = (now: Date, sink: RecordingSink, types: ResourceType[] = [Queue]) =>
  sweep({
    kube,
    types,
    sink,
    now,
    scheduleMs: SCHEDULE,
    defaultPollMs: DEFAULT_POLL,
    pageSize: 50,
    labelSelector: `${TEST_LABEL}=${label}`,
  });

describe("drift sweep against the real API server", () => {
  it("enqueues exactly the due objects page by page, skips paused ones, always includes unready and deleting ones", async () => {
    const sink = new RecordingSink();
    const now = new Date(T0 + 17_000); // a sweep that started 17 s late covers the window ending at T0

    const result = await sweepAt(now, sink);

    const windowEnd = sweepWindowEnd(now.getTime(), SCHEDULE);
    const dueNormal = groups.normal.filter((n) =>
      pollDue(pollPhase(uids.get(n)!, DEFAULT_POLL), DEFAULT_POLL, windowEnd, SCHEDULE),
    );
    const expected = [...dueNormal, ...groups.fast, ...groups.unready, ...groups.deleting];
    expect(new Set(sink.names())).toEqual(new Set(expected));
    expect(sink.messages).toHaveLength(expected.length);
    expect(result).toMatchObject({
      listed: 120,
      enqueued: expected.length,
      paused: 10,
      attention: groups.unready.length + groups.deleting.length,
      sendFailures: 0,
      missingKinds: [],
    });
    expect(result.pages).toBeGreaterThanOrEqual(3);
    const first = sink.for(groups.unready[0]!)[0];
    expect(first).toEqual({
      v: 1,
      apiVersion: Queue.apiVersion,
      kind: "Queue",
      name: groups.unready[0],
      uid: uids.get(groups.unready[0]!),
      reason: "drift",
      at: now.toISOString(),
    });
  });

  it("enqueues every ready object exactly once over one poll interval of consecutive sweeps", async () => {
    const counts = new Map<string, number>();
    for (let k = 1; k <= DEFAULT_POLL / SCHEDULE; k++) {
      const sink = new RecordingSink();
      await sweepAt(new Date(T0 + k * SCHEDULE + 3_000), sink);
      for (const name of sink.names()) counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    const sweeps = DEFAULT_POLL / SCHEDULE;
    for (const n of groups.normal) expect(counts.get(n), n).toBe(1);
    for (const n of [...groups.fast, ...groups.unready, ...groups.deleting])
      expect(counts.get(n), n).toBe(sweeps);
    for (const n of groups.paused) expect(counts.get(n), n).toBeUndefined();
  });

  it("skips a kind whose CRD is not installed and sweeps the others", async () => {
    const sink = new RecordingSink();
    const missing: ResourceType = {
      group: "nope.aws.driftless.dev",
      version: "v1alpha1",
      kind: "Nope",
      plural: "nopes",
      namespaced: false,
    };
    const result = await sweepAt(new Date(T0), sink, [missing, Queue]);
    expect(result.missingKinds).toEqual(["Nope"]);
    expect(result.listed).toBe(120);
  });
});
