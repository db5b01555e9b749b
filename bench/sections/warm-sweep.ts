// 13. The warm sweep (issue 33 item 2): N in-sync managed resources in the real API server (Ready and
// Synced, an external name and the external-key label, as the engine leaves them), swept as the sweep
// function does every minute at a 5-minute poll with batches: today's stateless sweep (list everything),
// then the index's cold start, warm runs with nothing changed, and a warm run after `changes` objects
// changed. Counted: LIST requests, watches, objects read, messages; timed: each run (median of reps).
// The 100k row is the model (the measured per-object list time × 100k; the warm run's watch does not
// grow with the fleet), not a run. Objects only: no cloud resource behind them (the sweep never calls one).
import { loadavg } from "node:os";
import { Queue } from "../../shared/api/aws/sqs.ts";
import { EXTERNAL_KEY_LABEL, externalKeyOf } from "../../shared/api/cloud-events.ts";
import { Annotations } from "../../shared/api/meta.ts";
import { Kube } from "../../shared/kube/client.ts";
import type { MessageSink } from "../../shared/pipeline/common.ts";
import { type SweepResult, sweep } from "../../shared/pipeline/sweep.ts";
import { SweepIndex } from "../../shared/pipeline/sweep-index.ts";
import { encodeMessage } from "../../shared/queue/message.ts";
import { inParallel } from "../../test/support/env.ts";
import type { BenchContext } from "../lib/context.ts";
import { BENCH_LABEL, createObjects, queueObject, WRITE_CONCURRENCY } from "../lib/fixtures.ts";
import { ms, type Row, range } from "../lib/report.ts";
import { summarize } from "../lib/stats.ts";

const M = 60_000;
const SCHEDULE = M;
const POLL = 5 * M;
const PAGE = 1000;

/** Encodes every message as a producer would, and counts them. */
const encodingSink = (): MessageSink & { sent: number } => {
  const sink = {
    sent: 0,
    send: async (messages: readonly Parameters<typeof encodeMessage>[0][]) => {
      for (const m of messages) encodeMessage(m);
      sink.sent += messages.length;
      return { sent: messages.length, failed: [] };
    },
  };
  return sink;
};

interface RunFigures {
  ms: number;
  lists: number;
  watches: number;
  listed: number;
  events: number;
  enqueued: number;
  batches: number;
}

export async function measureWarmSweep(ctx: BenchContext, n: number, changes = 100) {
  const kube = new Kube(ctx.kc);
  const set = `${ctx.run}-warm`;
  const names = Array.from({ length: n }, (_, i) => `${ctx.run}-w${i}`);
  const selector = `${BENCH_LABEL}=${ctx.run},driftless.dev/bench-warm=${set}`;
  const load = () => loadavg().map((x) => x.toFixed(1));
  const loadAtStart = load();
  try {
    ctx.log(`warm sweep: creating ${n} in-sync objects (load ${loadAtStart.join(" ")}) …`);
    const created = Date.now();
    await createObjects(
      kube,
      names.map((name) => {
        const o = queueObject(name, ctx.run, "scale", "bench-no-such-providerconfig");
        o.metadata.labels = {
          ...o.metadata.labels,
          "driftless.dev/bench-warm": set,
          [EXTERNAL_KEY_LABEL]: externalKeyOf(Queue, name),
        };
        o.metadata.annotations = { [Annotations.externalName]: name };
        return o;
      }),
    );
    const now = new Date().toISOString();
    const status = {
      conditions: [
        { type: "Ready", status: "True", reason: "Available", lastTransitionTime: now },
        { type: "Synced", status: "True", reason: "ReconcileSuccess", lastTransitionTime: now },
      ],
    };
    await inParallel(names, WRITE_CONCURRENCY, (name) => kube.patchStatus(Queue, name, status));
    ctx.log(`warm sweep: ${n} objects ready after ${Math.round((Date.now() - created) / 1000)} s`);

    const t0 = Math.floor(Date.now() / SCHEDULE) * SCHEDULE;
    const once = async (at: number, index?: SweepIndex): Promise<RunFigures> => {
      kube.resetStats();
      const sink = encodingSink();
      const started = performance.now();
      const r: SweepResult = await sweep({
        kube,
        types: [Queue],
        sink,
        now: new Date(at),
        scheduleMs: SCHEDULE,
        defaultPollMs: POLL,
        pageSize: PAGE,
        batch: true,
        labelSelector: selector,
        ...(index ? { index } : {}),
      });
      return {
        ms: performance.now() - started,
        lists: kube.stats.lists,
        watches: kube.stats.byOperation[`watch ${Queue.kind}`] ?? 0,
        listed: r.listed,
        events: r.events,
        enqueued: r.enqueued,
        batches: r.batches,
      };
    };
    const reps = 5;
    const stateless: RunFigures[] = [];
    for (let k = 1; k <= reps; k++) stateless.push(await once(t0 + k * SCHEDULE));
    const heapBefore = process.memoryUsage().heapUsed;
    const index = new SweepIndex({ scheduleMs: SCHEDULE, defaultPollMs: POLL });
    const cold = await once(t0 + (reps + 1) * SCHEDULE, index);
    globalThis.gc?.();
    const indexHeapMb = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
    const warm: RunFigures[] = [];
    for (let k = 2; k <= reps + 1; k++) warm.push(await once(t0 + (reps + k) * SCHEDULE, index));
    // `changes` objects change (a label-only write each), then one warm run.
    await inParallel(names.slice(0, changes), WRITE_CONCURRENCY, (name) =>
      kube.patch(Queue, name, { metadata: { labels: { "driftless.dev/bench-touch": "1" } } }),
    );
    const changed = await once(t0 + (2 * reps + 2) * SCHEDULE, index);
    const loadAtEnd = load();
    const med = (xs: RunFigures[], f: (r: RunFigures) => number) => summarize(xs.map(f)).median;
    const result = {
      n,
      changes,
      loadAtStart,
      loadAtEnd,
      stateless: { medianMs: med(stateless, (r) => r.ms), runs: stateless },
      cold,
      warm: { medianMs: med(warm, (r) => r.ms), runs: warm },
      changed,
      indexHeapMb,
      // The model: a stateless or cold run grows with n (measured ms per object), a warm run does not.
      model100k: {
        statelessMs: (med(stateless, (r) => r.ms) / n) * 100_000,
        coldMs: (cold.ms / n) * 100_000,
        warmMs: med(warm, (r) => r.ms),
        listsStateless: Math.ceil(100_000 / PAGE),
        listsWarm: 0,
        indexHeapMb: (indexHeapMb / n) * 100_000,
      },
    };
    const loadText = `load ${loadAtStart.join(" ")} → ${loadAtEnd.join(" ")}`;
    const s0 = stateless[0] as RunFigures;
    const w0 = warm[0] as RunFigures;
    const rows: Row[] = [
      {
        section: "13 warm sweep",
        metric: `stateless sweep of ${n} (today): LISTs / objects read / messages (batches) / time`,
        value: `${s0.lists} / ${s0.listed} / ${s0.enqueued} (${s0.batches}) / ${ms(result.stateless.medianMs)}`,
        target: "—",
        pass: undefined,
        range: loadText,
      },
      {
        section: "13 warm sweep",
        metric: `index, cold start of ${n}: LISTs / objects read / time / heap`,
        value: `${cold.lists} / ${cold.listed} / ${ms(cold.ms)} / ${indexHeapMb.toFixed(1)} MB`,
        target: "—",
        pass: undefined,
        range: "—",
      },
      {
        section: "13 warm sweep",
        metric: `index, warm, nothing changed: LISTs / watches / objects read / messages (batches) / time`,
        value: `${w0.lists} / ${w0.watches} / ${w0.listed + w0.events} / ${w0.enqueued} (${w0.batches}) / ${ms(result.warm.medianMs)}`,
        target: "0 LISTs",
        pass: warm.every((r) => r.lists === 0),
        range: range(Math.min(...warm.map((r) => r.ms)), Math.max(...warm.map((r) => r.ms)), ms),
      },
      {
        section: "13 warm sweep",
        metric: `index, warm after ${changes} changes: LISTs / watches / events / time`,
        value: `${changed.lists} / ${changed.watches} / ${changed.events} / ${ms(changed.ms)}`,
        target: "0 LISTs",
        pass: changed.lists === 0,
        range: "—",
      },
      {
        section: "13 warm sweep",
        metric: "100k (model, not run): stateless / cold / warm time; LISTs stateless → warm; index heap",
        value: `${ms(result.model100k.statelessMs)} / ${ms(result.model100k.coldMs)} / ${ms(result.model100k.warmMs)}; ${result.model100k.listsStateless} → 0; ${result.model100k.indexHeapMb.toFixed(0)} MB`,
        target: "—",
        pass: undefined,
        range: "model",
      },
    ];
    return { rows, result };
  } finally {
    ctx.log("warm sweep: deleting its objects …");
    await inParallel(names, WRITE_CONCURRENCY, (name) => kube.delete(Queue, name).catch(() => undefined));
  }
}
