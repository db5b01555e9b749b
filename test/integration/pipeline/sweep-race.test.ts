// Two sweep containers at once (an overlapping invocation, a platform retry of a tick, concurrency above 1)
// against the real kube-apiserver: each warm container keeps its own index, and over one poll interval every
// due object must be enqueued exactly once per due slot — whether the two race on the same tick or take
// turns, each then with an index that missed the other's runs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import { claimedSweep, runScheduledSweep } from "../../../shared/pipeline/functions.ts";
import { SweepIndex } from "../../../shared/pipeline/sweep-index.ts";
import { LEASE, readSweepLease } from "../../../shared/pipeline/sweep-lease.ts";
import { ensureCrds } from "../../support/aws.ts";
import { inParallel, newKube, uniqueName } from "../../support/env.ts";
import { cleanup, queueObject, RecordingSink, readyStatus, TEST_LABEL } from "./helpers.ts";

const kube = newKube();
const label = uniqueName("sweep-race");
const M = 60_000;
const SCHEDULE = M;
const POLL = 5 * M;
const T0 = Date.UTC(2031, 0, 1, 12, 0, 0);
const names = Array.from({ length: 40 }, () => uniqueName("q-race"));
const ctx = { scheduleMs: SCHEDULE, defaultPollMs: POLL };
const noLog = { debug() {}, info() {}, warn() {}, error() {} };

beforeAll(async () => {
  await ensureCrds();
  await inParallel(names, 16, async (name) => {
    await kube.create<KubeObject>(Queue, queueObject(name, label));
    await kube.patchStatus(Queue, name, readyStatus(true));
  });
}, 120_000);

afterAll(async () => {
  await cleanup(kube, names);
  await kube.delete(LEASE, `${label}-a`, "default");
  await kube.delete(LEASE, `${label}-b`, "default");
  await kube.delete(LEASE, `${label}-c`, "default");
});

/** One container: its own index, its own holder name, one shared queue. */
function container(holder: string, leaseName: string, sink: RecordingSink) {
  const index = new SweepIndex(ctx);
  // Made once per container, as the functions do: the container's last write is kept per lease.
  const lease = { namespace: "default", name: leaseName, holder };
  return (at: number) =>
    claimedSweep(
      kube,
      {
        lease,
        scheduleMs: SCHEDULE,
        scheduledAt: new Date(at),
        logger: noLog,
      },
      (handledUpTo) =>
        runScheduledSweep({
          kube,
          types: [Queue],
          producer: sink,
          ...ctx,
          logger: noLog,
          scheduledAt: new Date(at),
          labelSelector: `${TEST_LABEL}=${label}`,
          index,
          handledUpTo,
        }),
    );
}

const counts = (sink: RecordingSink) => {
  const n = new Map<string, number>();
  for (const name of sink.names()) n.set(name, (n.get(name) ?? 0) + 1);
  return names.map((name) => n.get(name) ?? 0);
};

describe("two sweep containers against the real API server", () => {
  it("racing on every tick: over one interval each object is enqueued exactly once", async () => {
    const sink = new RecordingSink();
    const a = container("a", `${label}-a`, sink);
    const b = container("b", `${label}-a`, sink);
    const skipped: number[] = [];
    for (let i = 0; i < POLL / SCHEDULE; i++) {
      const at = T0 + i * SCHEDULE + 1_000;
      const results = await Promise.all([a(at), b(at)]);
      skipped.push(results.filter((r) => r.skipped !== undefined).length);
    }
    expect(counts(sink)).toEqual(names.map(() => 1));
    // Of each tick's two sweeps exactly one went ahead.
    expect(skipped).toEqual(Array.from({ length: POLL / SCHEDULE }, () => 1));
    const lease = await readSweepLease(kube, { namespace: "default", name: `${label}-a` });
    expect(lease?.doneUpTo).toBe(T0 + (POLL / SCHEDULE - 1) * SCHEDULE);
  });

  it("taking turns: a container whose index missed the other's runs sends none of their slots again", async () => {
    const sink = new RecordingSink();
    const a = container("a", `${label}-b`, sink);
    const b = container("b", `${label}-b`, sink);
    const start = T0 + 10 * POLL;
    // b alone at the first tick, then a alone for three ticks, then b again: b's index last ran four
    // windows ago and must not send the slots a sent meanwhile; then a race, and turns again.
    const order = [["b"], ["a"], ["a"], ["a"], ["b"], ["a", "b"], ["a"], ["b"], ["b"], ["a"]];
    for (let i = 0; i < order.length; i++) {
      const at = start + i * SCHEDULE + 1_000;
      await Promise.all((order[i] as string[]).map((who) => (who === "a" ? a(at) : b(at))));
    }
    // Ten windows are two poll intervals: each object exactly twice.
    expect(counts(sink)).toEqual(names.map(() => 2));
  });

  it("one warm container alone: two Lease requests per sweep (claim and done), no read", async () => {
    const a = container("a", `${label}-c`, new RecordingSink());
    const start = T0 + 20 * POLL;
    await a(start + 1_000);
    kube.resetStats();
    for (let i = 1; i <= 3; i++) await a(start + i * SCHEDULE + 1_000);
    const ops = kube.stats.byOperation;
    expect([ops["get Lease"] ?? 0, ops["patch Lease"] ?? 0, ops["create Lease"] ?? 0]).toEqual([0, 6, 0]);
  });
});
