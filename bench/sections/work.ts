// 1. Work per in-sync reconcile. The physical limit of a level-triggered reconcile of a resource that has
// not drifted is one cloud read; the rest is the API-server GET that reads the object fresh, the list
// pages the drift sweep reads, and no writes. One drift cycle here is exactly what production does:
// the sweep lists the kind page by page and enqueues every due key, the workers reconcile them.
// Cloud calls are counted on the wire (the recording proxy), API-server requests by Kube's counters.

import { awsKinds } from "../../functions/aws/kinds.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import { Kube } from "../../shared/kube/client.ts";
import { sweep } from "../../shared/pipeline/sweep.ts";
import { MemoryQueue } from "../../shared/queue/memory.ts";
import type { Outcome } from "../../shared/reconciler/reconciler.ts";
import { KindRegistry } from "../../shared/reconciler/registry.ts";
import { reconcileHandler } from "../../shared/worker/memory.ts";
import { Reconciler } from "../../test/support/routed.ts";
import type { BenchContext } from "../lib/context.ts";
import { selectorOf } from "../lib/fixtures.ts";
import type { Row } from "../lib/report.ts";
import { summarize } from "../lib/stats.ts";

export interface WorkCycle {
  keys: number;
  durationMs: number;
  outcomes: Record<string, number>;
  cloudCalls: Record<string, number>;
  gets: Record<string, number>;
  lists: number;
  writes: number;
  listPages: number;
  reconcileMs: number[];
}

export async function measureWork(ctx: BenchContext) {
  const kube = new Kube(ctx.kc);
  const durations: number[] = [];
  const outcomes: Record<string, number> = {};
  const reconciler = new Reconciler(kube, new KindRegistry(awsKinds), {
    rateLimit: false,
    metrics: {
      reconciled(_kind: string, outcome: Outcome, durationMs: number) {
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        durations.push(durationMs);
      },
      externalCall() {},
    },
  });
  const handler = reconcileHandler({ reconcile: (key) => reconciler.reconcile(key) });
  const cycles: WorkCycle[] = [];
  // Cycle 0 warms the container (ProviderConfig and credentials cached) and is not counted.
  for (let cycle = 0; cycle <= ctx.sizes.workCycles; cycle++) {
    kube.resetStats();
    for (const k of Object.keys(outcomes)) delete outcomes[k];
    durations.length = 0;
    const mark = ctx.proxy.mark();
    const queue = new MemoryQueue({ workers: ctx.sizes.concurrency });
    queue.start(handler);
    const started = Date.now();
    const res = await sweep({
      kube,
      types: [Queue],
      sink: queue,
      // A poll interval no longer than the schedule makes every object due: the whole set is checked.
      scheduleMs: 60_000,
      defaultPollMs: 60_000,
      labelSelector: selectorOf(ctx.run, "insync"),
    });
    await queue.idle();
    await queue.stop();
    const durationMs = Date.now() - started;
    const gets = { ...kube.stats.byOperation };
    for (const k of Object.keys(gets)) if (!k.startsWith("get ")) delete gets[k];
    const c: WorkCycle = {
      keys: res.enqueued,
      durationMs,
      outcomes: { ...outcomes },
      cloudCalls: ctx.proxy.countSince(mark),
      gets,
      lists: kube.stats.lists,
      writes: kube.stats.writes,
      listPages: res.pages,
      reconcileMs: [...durations],
    };
    if (cycle > 0) cycles.push(c);
    ctx.log(
      `work cycle ${cycle}${cycle === 0 ? " (warm-up)" : ""}: ${c.keys} keys in ${durationMs} ms, cloud ${JSON.stringify(c.cloudCalls)}, kube gets ${JSON.stringify(gets)} lists ${c.lists} writes ${c.writes}`,
    );
  }

  const n = ctx.sizes.insync;
  const per = (f: (c: WorkCycle) => number) => summarize(cycles.map((c) => f(c) / Math.max(1, c.keys)));
  const total = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
  const cloud = per((c) => total(c.cloudCalls));
  const reads = per((c) => c.cloudCalls["SQS.GetQueueAttributes"] ?? 0);
  const objectGets = per((c) => c.gets["get Queue"] ?? 0);
  const allGets = per((c) => total(c.gets));
  const writes = per((c) => c.writes);
  const pages = summarize(cycles.map((c) => c.listPages));
  const inSync = cycles.every((c) => (c.outcomes["in-sync"] ?? 0) === c.keys && c.keys === n);
  // ProviderConfig and its Secret are cached per container for 30 s: amortised, not per key.
  const otherGets = summarize(cycles.map((c) => total(c.gets) - (c.gets["get Queue"] ?? 0)));
  const otherAllowed = Math.max(...cycles.map((c) => 2 * Math.ceil(c.durationMs / 30_000)));
  const f2 = (x: number) => x.toFixed(2);
  const rows: Row[] = [
    {
      section: "1 work",
      metric: `cloud API calls per in-sync reconcile (N=${n}, on the wire)`,
      value: `${f2(cloud.median)} (${f2(reads.median)} GetQueueAttributes)`,
      target: "= 1 read",
      pass: cycles.every(
        (c) => total(c.cloudCalls) === c.keys && (c.cloudCalls["SQS.GetQueueAttributes"] ?? 0) === c.keys,
      ),
      range: `${f2(cloud.min)}–${f2(cloud.max)}`,
    },
    {
      section: "1 work",
      metric: "API-server GETs per key (object) + amortised ProviderConfig/Secret",
      value: `${f2(objectGets.median)} + ${otherGets.median} per cycle`,
      target: "≤ 1 per key",
      pass: cycles.every(
        (c) =>
          (c.gets["get Queue"] ?? 0) <= c.keys && total(c.gets) - (c.gets["get Queue"] ?? 0) <= otherAllowed,
      ),
      range: `${f2(allGets.min)}–${f2(allGets.max)} all GETs/key`,
    },
    {
      section: "1 work",
      metric: "API-server LIST pages per drift cycle (1,000 per page)",
      value: `${pages.median}`,
      // With a label selector the server cannot tell that a full page was the last one: it sends a
      // continue token, and one more (empty) page follows when N is a multiple of the page size.
      target: `≤ ⌊N/1000⌋+1 = ${Math.floor(n / 1000) + 1}`,
      pass: cycles.every((c) => c.listPages <= Math.floor(n / 1000) + 1),
      range: `${pages.min}–${pages.max}`,
    },
    {
      section: "1 work",
      metric: "API-server writes per in-sync reconcile",
      value: f2(writes.median),
      target: "0",
      pass: cycles.every((c) => c.writes === 0) && inSync,
      range: `${f2(writes.min)}–${f2(writes.max)}`,
    },
  ];
  return {
    rows,
    result: {
      n,
      cycles: cycles.map(({ reconcileMs: _ms, ...c }) => c),
      perReconcile: { cloud, reads, objectGets, allGets, writes },
      listPages: pages,
      reconcileMs: summarize(cycles.flatMap((c) => c.reconcileMs)),
    },
  };
}
