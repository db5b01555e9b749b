// 2. Engine overhead: N in-sync queues reconciled through the memory queue with C workers, against the
// same N bare GetQueueAttributes calls at the same concurrency — and against bare "GET the object, then
// read the cloud", the least any level-triggered reconcile can do. Same run, alternating order, through
// the same recording proxy, so moto and the machine's load are shared alike. Also the Lambda handler
// core's time per invocation (10 in-sync records), which the cost model uses.
import { GetQueueAttributesCommand, type QueueAttributeName, SQSClient } from "@aws-sdk/client-sqs";
import { awsKinds } from "../../functions/aws/kinds.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import type { ManagedResource } from "../../shared/api/managed.ts";
import { Kube } from "../../shared/kube/client.ts";
import { noopLogger } from "../../shared/pipeline/common.ts";
import { MemoryQueue } from "../../shared/queue/memory.ts";
import { encodeMessage, makeMessage } from "../../shared/queue/message.ts";
import { DEFAULT_RATE_LIMIT } from "../../shared/reconciler/rate-limit.ts";
import { KindRegistry } from "../../shared/reconciler/registry.ts";
import { reconcileHandler } from "../../shared/worker/memory.ts";
import { handleSqsBatch } from "../../shared/worker/sqs.ts";
import { inParallel } from "../../test/support/env.ts";
import { Reconciler } from "../../test/support/routed.ts";
import type { BenchContext } from "../lib/context.ts";
import { keyOf } from "../lib/fixtures.ts";
import type { Row } from "../lib/report.ts";
import { summarize } from "../lib/stats.ts";

interface Timed {
  msPerOp: number;
  cpuMsPerOp: number;
}

async function timed(n: number, fn: () => Promise<unknown>): Promise<Timed> {
  const cpu = process.cpuUsage();
  const t = performance.now();
  await fn();
  const wall = performance.now() - t;
  const u = process.cpuUsage(cpu);
  return { msPerOp: wall / n, cpuMsPerOp: (u.user + u.system) / 1000 / n };
}

export async function measureOverhead(ctx: BenchContext) {
  const names = ctx.insync;
  const n = names.length;
  const c = ctx.sizes.concurrency;
  const kube = new Kube(ctx.kc);
  const registry = new KindRegistry(awsKinds);
  const reconciler = new Reconciler(kube, registry, { rateLimit: false });
  const urls = await inParallel(names, 16, async (name) => {
    const mr = await kube.get<ManagedResource & { [k: string]: unknown }>(Queue, name);
    const url = (mr?.status?.atProvider as { url?: string } | undefined)?.url;
    if (!url) throw new Error(`${name} has no status.atProvider.url: not in sync`);
    return url;
  });
  // The provider's SDK client settings (shared/providers/aws/config.ts sdkOptions), same endpoint.
  const sqs = new SQSClient({
    region: "us-east-1",
    endpoint: ctx.proxy.url,
    credentials: { accessKeyId: "testing", secretAccessKey: "testing-secret-value" },
    maxAttempts: 3,
  });
  const read = (QueueUrl: string) =>
    sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["All" as QueueAttributeName] }));

  const engine = () =>
    timed(n, async () => {
      const queue = new MemoryQueue({ workers: c });
      queue.start(reconcileHandler({ reconcile: (key) => reconciler.reconcile(key) }));
      await queue.send(names.map((name) => makeMessage(keyOf(name), "drift")));
      await queue.idle();
      await queue.stop();
    });
  const bare = () => timed(n, () => inParallel(urls, c, read));
  const getAndRead = () =>
    timed(n, () =>
      inParallel(names, c, async (name, i) => {
        await kube.get(Queue, name);
        await read(urls[i] ?? "");
      }),
    );

  // Warm-up: connections, SDK clients, the engine's ProviderConfig cache.
  await engine();
  await bare();
  await getAndRead();
  const reps: Array<{ engine: Timed; bare: Timed; getAndRead: Timed }> = [];
  const variants = { engine, bare, getAndRead };
  const orders = [
    ["engine", "bare", "getAndRead"],
    ["bare", "getAndRead", "engine"],
    ["getAndRead", "engine", "bare"],
  ] as const;
  for (let r = 0; r < ctx.sizes.overheadReps; r++) {
    const rep: Partial<Record<keyof typeof variants, Timed>> = {};
    for (const v of orders[r % orders.length] ?? orders[0]) rep[v] = await variants[v]();
    reps.push(rep as { engine: Timed; bare: Timed; getAndRead: Timed });
    ctx.log(
      `overhead rep ${r + 1}: engine ${rep.engine?.msPerOp.toFixed(2)} ms/op, bare read ${rep.bare?.msPerOp.toFixed(2)}, GET+read ${rep.getAndRead?.msPerOp.toFixed(2)}`,
    );
  }

  // As deployed: the engine's default per-ProviderConfig rate limit, on a fresh reconciler.
  const limitedKeys = names.slice(0, Math.min(n, 200));
  const limited = new Reconciler(kube, registry);
  const limitedRun = await timed(limitedKeys.length, () =>
    inParallel(limitedKeys, c, (name) => limited.reconcile(keyOf(name))),
  );

  // The Lambda handler core, one invocation of 10 in-sync records at a time (what the cost model bills).
  const reconcile = (key: Parameters<typeof reconciler.reconcile>[0]) => reconciler.reconcile(key);
  const invocationMs: number[] = [];
  for (let i = 0; i + 10 <= n && invocationMs.length < 50; i += 10) {
    const Records = names.slice(i, i + 10).map((name, j) => ({
      messageId: `m-${i + j}`,
      receiptHandle: `r-${i + j}`,
      body: encodeMessage(makeMessage(keyOf(name), "drift")),
      attributes: { ApproximateReceiveCount: "1" },
      eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:bench",
    }));
    const t = performance.now();
    await handleSqsBatch(
      { sqs, reconcile, logger: noopLogger, queueUrl: "http://unused", concurrency: c },
      { Records },
    );
    invocationMs.push(performance.now() - t);
  }
  sqs.destroy();

  const s = (f: (r: (typeof reps)[number]) => number) => summarize(reps.map(f));
  const ratioBare = s((r) => r.engine.msPerOp / r.bare.msPerOp);
  const ratioFloor = s((r) => r.engine.msPerOp / r.getAndRead.msPerOp);
  const eng = s((r) => r.engine.msPerOp);
  const br = s((r) => r.bare.msPerOp);
  const gr = s((r) => r.getAndRead.msPerOp);
  const cpuEng = s((r) => r.engine.cpuMsPerOp);
  const cpuBare = s((r) => r.bare.cpuMsPerOp);
  const f2 = (x: number) => x.toFixed(2);
  const invocation = summarize(invocationMs);
  const rows: Row[] = [
    {
      section: "2 overhead",
      metric: `engine vs bare GetQueueAttributes (N=${n}, C=${c}; ms per key)`,
      value: `${f2(ratioBare.median)}× (${f2(eng.median)} vs ${f2(br.median)} ms)`,
      target: "≤ 1.3×",
      pass: ratioBare.median <= 1.3,
      range: `${f2(ratioBare.min)}–${f2(ratioBare.max)}×`,
    },
    {
      section: "2 overhead",
      metric: "engine vs bare GET object + GetQueueAttributes (level-triggered floor)",
      value: `${f2(ratioFloor.median)}× (${f2(gr.median)} ms floor)`,
      target: "≤ 1.3×",
      pass: ratioFloor.median <= 1.3,
      range: `${f2(ratioFloor.min)}–${f2(ratioFloor.max)}×`,
    },
    {
      section: "2 overhead",
      metric: "CPU in this process per key: engine vs bare read",
      value: `${f2(cpuEng.median)} vs ${f2(cpuBare.median)} ms`,
      target: "—",
      pass: undefined,
      range: `${f2(cpuEng.min)}–${f2(cpuEng.max)} ms`,
    },
    {
      section: "2 overhead",
      metric: `engine as deployed: rate limit ${DEFAULT_RATE_LIMIT.perSecond}/s per ProviderConfig (${limitedKeys.length} keys)`,
      value: `${(1000 / limitedRun.msPerOp).toFixed(0)} reconciles/s`,
      target: "—",
      pass: undefined,
      range: "—",
    },
    {
      section: "2 overhead",
      metric: "Lambda handler core: one invocation of 10 in-sync records",
      value: `${invocation.median.toFixed(0)} ms`,
      target: "—",
      pass: undefined,
      range: `${invocation.min.toFixed(0)}–${invocation.max.toFixed(0)} ms`,
    },
  ];
  return {
    rows,
    result: {
      n,
      concurrency: c,
      reps,
      ratioEngineToBare: ratioBare,
      ratioEngineToGetAndRead: ratioFloor,
      msPerKey: { engine: eng, bare: br, getAndRead: gr },
      cpuMsPerKey: { engine: cpuEng, bare: cpuBare },
      rateLimited: {
        keys: limitedKeys.length,
        perSecond: 1000 / limitedRun.msPerOp,
        limit: DEFAULT_RATE_LIMIT,
      },
      invocationMs: invocation,
    },
  };
}
