// Area 4 — cloud faults. A fault proxy of our own (test/support/fault-proxy.ts) sits between the real AWS
// SDK and moto, named as the ProviderConfig's endpoint, and injects what a real account does under load:
// throttling in each protocol's own shape (SQS JSON ThrottlingException, Query Throttling, EC2
// RequestLimitExceeded), 429, 503, latency and dropped connections. Shown:
// - bounded retries: at most `maxAttempts` (3) SDK attempts per operation, then the engine's exponential,
//   jittered backoff between reconciles (≥ 2.5 s for throttling, never shrinking): no hot loop;
// - Synced=False naming the throttling while it lasts, Ready after the proxy stops injecting;
// - transient faults absorbed by the SDK's retries (the reconcile succeeds at once);
// - the per-ProviderConfig rate limit: calls through the proxy stay within the token bucket (burst +
//   rate × time) while 200 resources reconcile, SDK retries included.

import { CreateQueueCommand, DeleteQueueCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VPC } from "../../shared/api/aws/ec2.ts";
import { DBInstance } from "../../shared/api/aws/rds.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import type { ManagedKindDef, ManagedResource } from "../../shared/api/managed.ts";
import { providerConfigs } from "../../shared/api/provider-config.ts";
import { MemoryQueue, makeMessage } from "../../shared/queue/index.ts";
import { DEFAULT_RATE_LIMIT, type RateLimit, TokenBucket } from "../../shared/reconciler/rate-limit.ts";
import type { ReconcileResult, ResourceKey } from "../../shared/reconciler/reconciler.ts";
import { reconcileHandler } from "../../shared/worker/memory.ts";
import { ensureCrds, motoSqs } from "../support/aws.ts";
import { env, newKube, sleep, uniqueName } from "../support/env.ts";
import { type Fault, type FaultCall, FaultProxy } from "../support/fault-proxy.ts";
import { conditionOf, getMr, keyOf, newReconciler, settle } from "../support/reconcile.ts";
import type { Reconciler } from "../support/routed.ts";
import { createAwsProviderConfigAt, forceDelete, mapLimit, motoQueues, Tally } from "./support.ts";

const kube = newKube();
const LABEL = "driftless.dev/fault-test";
const RUN = uniqueName("fcl");
const tally = new Tally("4 cloud faults");
const queues: string[] = [];
/** The 200 of the rate-limit test: removed directly (objects and moto queues), not reconciled away. */
const bulk: string[] = [];
const others: Array<[ManagedKindDef, string]> = [];
// Each test has its own proxy and ProviderConfig, so the tests run at once without seeing each other.
const proxies: FaultProxy[] = [];

async function proxied(): Promise<{ proxy: FaultProxy; pc: string }> {
  const proxy = await FaultProxy.start(env("AWS_ENDPOINT_URL"));
  proxies.push(proxy);
  const pc = uniqueName("pc-cloud");
  await createAwsProviderConfigAt(kube, pc, proxy.url);
  return { proxy, pc };
}

const queueObject = (name: string, pc: string, forProvider: Record<string, unknown> = {}) => ({
  apiVersion: Queue.apiVersion,
  kind: Queue.kind,
  metadata: { name, labels: { [LABEL]: RUN } },
  spec: { forProvider, providerConfigRef: { name: pc } },
});

async function newQueue(prefix: string, pc: string): Promise<string> {
  const name = uniqueName(prefix);
  queues.push(name);
  await kube.create(Queue, queueObject(name, pc));
  return name;
}

interface Round {
  at: number;
  end: number;
  res: ReconcileResult;
}

/** Reconciles as the queue would (next delivery after requeueAfterMs) until `until` (epoch ms). */
async function follow(r: Reconciler, key: ResourceKey, until: number, maxRounds: number) {
  const rounds: Round[] = [];
  while (Date.now() < until && rounds.length < maxRounds) {
    const at = Date.now();
    const res = await r.reconcile(key);
    rounds.push({ at, end: Date.now(), res });
    if (res.requeueAfterMs === undefined || rounds.length >= maxRounds) break;
    await sleep(res.requeueAfterMs);
  }
  return rounds;
}

/** Queues that exist in moto and as objects of `pc`, with 5% of their calls throttled by the proxy. */
async function existingQueuesThrottled(names: string[], pc: string, proxy: FaultProxy) {
  bulk.push(...names);
  const sqs = motoSqs();
  await mapLimit(names, 20, (n) => sqs.send(new CreateQueueCommand({ QueueName: n })));
  sqs.destroy();
  await mapLimit(names, 20, (n) => kube.create(Queue, queueObject(n, pc)));
  proxy.inject({
    fault: { kind: "throttle" },
    match: (c) => names.includes(c.subject ?? ""),
    probability: 0.05,
  });
}

/** Waits until every named Queue is Ready or the deadline passes; how many are Ready. */
async function readyBy(names: readonly string[], deadline: number): Promise<number> {
  let ready = 0;
  while (Date.now() < deadline) {
    const page = await kube.list<ManagedResource & { [k: string]: unknown }>(Queue, {
      labelSelector: `${LABEL}=${RUN}`,
    });
    ready = page.items.filter(
      (o) => names.includes(o.metadata.name ?? "") && conditionOf(o, "Ready")?.status === "True",
    ).length;
    if (ready === names.length) break;
    await sleep(500);
  }
  return ready;
}

/** The token-bucket bound: calls up to any moment ≤ burst + rate × elapsed (+1 for timer rounding). */
function bucketViolations(calls: readonly FaultCall[], limit: RateLimit, t0: number): number {
  const sorted = calls.map((c) => c.at).sort((a, b) => a - b);
  return sorted.filter((t, i) => i + 1 > limit.burst + (limit.perSecond * (t - t0)) / 1000 + 1).length;
}

beforeAll(async () => {
  await ensureCrds();
});

afterAll(async () => {
  for (const p of proxies) p.heal();
  // Delete through the proxies, unlimited: every queue this file made goes, and no object is left behind.
  const r = newReconciler(kube, { rateLimit: false });
  await mapLimit(queues, 16, async (name) => {
    await kube.delete(Queue, name);
    await settle(r, keyOf(Queue, name), 6);
  });
  for (const [def, name] of others) {
    await kube.delete(def, name);
    await settle(r, keyOf(def, name), 6);
  }
  await forceDelete(kube, Queue, queues);
  await forceDelete(kube, Queue, bulk);
  const sqs = motoSqs();
  await mapLimit(await motoQueues(`${RUN}-rl-`), 32, (QueueUrl) =>
    sqs.send(new DeleteQueueCommand({ QueueUrl })),
  );
  sqs.destroy();
  for (const [def, name] of others) await forceDelete(kube, def, [name]);
  for (const p of proxies) await p.stop();
  tally.report();
  expect(tally.lost).toBe(0);
});

// Independent tests (own proxy, own ProviderConfig, own objects): they run at once.
describe.concurrent("cloud faults through a proxy in front of moto", () => {
  it("throttling: ≤ 3 SDK attempts per operation, growing jittered backoff between reconciles, Synced=False, then recovery", async () => {
    const mine = tally.scope("cloud#1");
    const { proxy, pc } = await proxied();
    const names = await Promise.all([1, 2, 3, 4].map(() => newQueue(`${RUN}-thr`, pc)));
    proxy.inject({ fault: { kind: "throttle" }, match: (c) => names.includes(c.subject ?? "") });
    const r = newReconciler(kube);
    const t0 = Date.now();
    // Two deliveries each, at the times the engine asks for: the window is from the first to the end of the second.
    const runs = await Promise.all(names.map((n) => follow(r, keyOf(Queue, n), t0 + 45_000, 2)));
    const during = await Promise.all(names.map((n) => getMr(kube, Queue, n)));

    runs.forEach((rounds, i) => {
      const name = names[i] ?? "";
      const attempts = rounds.map(
        (rd) =>
          proxy.between(rd.at, rd.end + 1, (c) => c.subject === name && c.outcome === "throttle").length,
      );
      // The engine's backoff after each failed reconcile (the last one's wait reaches past the window).
      const backoffs = rounds.map((rd) => rd.res.requeueAfterMs ?? 0);
      const gaps = rounds.slice(1).map((rd, j) => rd.at - (rounds[j]?.end ?? 0));
      const windowEnd = (rounds.at(-1)?.end ?? t0) + 1;
      const total = proxy.between(t0, windowEnd, (c) => c.subject === name).length;
      const synced = conditionOf(during[i], "Synced");
      const ok =
        rounds.length === 2 &&
        attempts.every((a) => a >= 1 && a <= 3) &&
        backoffs.every((b) => b >= 2_500) &&
        backoffs.every((b, j) => j === 0 || b >= (backoffs[j - 1] ?? 0) * 0.95) &&
        gaps.every((g, j) => g >= (backoffs[j] ?? 0) - 50) &&
        total <= 3 * rounds.length &&
        synced?.status === "False" &&
        /throttled by AWS \(ThrottlingException/.test(synced.message ?? "");
      mine.record(
        `throttled queue ${i + 1}: bounded attempts, backoff, Synced=False`,
        ok,
        `${rounds.length} reconciles in ${((windowEnd - t0) / 1000).toFixed(1)} s, SDK attempts ${attempts.join("/")}, backoffs ${backoffs.join("/")} ms, ${total} calls; Synced: ${synced?.message}`,
      );
    });
    // Jitter: the four resources do not retry in lockstep.
    const firstGaps = runs.map((rounds) => (rounds[1]?.at ?? 0) - (rounds[0]?.end ?? 0));
    const spread = Math.max(...firstGaps) - Math.min(...firstGaps);
    mine.record(
      "retries are jittered (not in lockstep)",
      spread >= 200,
      `first gaps ${firstGaps.join("/")} ms`,
    );

    // Recovery: the proxy stops throttling; the next delivery (a watch event, the sweep, or the queue's
    // own retry at the backoff above) makes it Ready.
    proxy.heal();
    const after = await Promise.all(
      names.map(async (n) => {
        await settle(r, keyOf(Queue, n));
        return getMr(kube, Queue, n);
      }),
    );
    after.forEach((mr, i) => {
      const ready =
        conditionOf(mr, "Ready")?.status === "True" && conditionOf(mr, "Synced")?.status === "True";
      mine.record(
        `throttled queue ${i + 1}: Ready after the throttling stops`,
        ready,
        conditionOf(mr, "Synced")?.message,
      );
    });
    expect(mine.lost()).toEqual([]);
  }, 90_000);

  it("transient faults (2 failed attempts each) are absorbed by the SDK's retries; persistent ones are reported", async () => {
    const mine = tally.scope("cloud#2");
    const { proxy, pc } = await proxied();
    const r = newReconciler(kube);
    const transient: Array<[string, Fault]> = [
      ["SQS JSON ThrottlingException", { kind: "throttle" }],
      ["SQS JSON RequestThrottled", { kind: "throttle", code: "RequestThrottled" }],
      ["HTTP 429", { kind: "status", status: 429 }],
      ["HTTP 503", { kind: "status", status: 503 }],
      ["dropped connection", { kind: "drop" }],
      ["1.5 s latency", { kind: "latency", ms: 1_500 }],
    ];
    for (const [label, fault] of transient) {
      const name = await newQueue(`${RUN}-tr`, pc);
      proxy.inject({ fault, match: (c) => c.subject === name, times: 2 });
      const t0 = Date.now();
      const results = await settle(r, keyOf(Queue, name));
      const mr = await getMr(kube, Queue, name);
      const errors = results.filter((x) => x.outcome === "error").length;
      const ok = conditionOf(mr, "Ready")?.status === "True" && errors === 0;
      mine.record(
        `transient ${label}`,
        ok,
        `${results.map((x) => x.outcome).join(",")} in ${Date.now() - t0} ms; faults hit ${proxy.calls.filter((c) => c.subject === name && c.outcome !== "forwarded").length}`,
      );
    }

    // EC2 (Query dialect): RequestLimitExceeded twice on CreateVpc, then through.
    const vpc = uniqueName(`${RUN}-vpc`);
    others.push([VPC, vpc]);
    await kube.create(VPC, {
      apiVersion: VPC.apiVersion,
      kind: VPC.kind,
      metadata: { name: vpc },
      spec: {
        forProvider: { region: "us-east-1", cidrBlock: "10.77.0.0/16" },
        providerConfigRef: { name: pc },
      },
    });
    proxy.inject({ fault: { kind: "throttle" }, match: (c) => c.action === "CreateVpc", times: 2 });
    await settle(r, keyOf(VPC, vpc));
    const vpcMr = await getMr(kube, VPC, vpc);
    mine.record(
      "transient EC2 RequestLimitExceeded",
      conditionOf(vpcMr, "Ready")?.status === "True",
      `${proxy.calls
        .filter((c) => c.action === "CreateVpc")
        .map((c) => c.status)
        .join(",")}`,
    );

    // Query protocol (RDS): persistent Throttling is reported as such; persistent drops say what failed.
    const db = uniqueName(`${RUN}-db`);
    others.push([DBInstance, db]);
    await kube.create(DBInstance, {
      apiVersion: DBInstance.apiVersion,
      kind: DBInstance.kind,
      metadata: { name: db },
      spec: {
        forProvider: {
          engine: "postgres",
          dbInstanceClass: "db.t3.micro",
          allocatedStorage: 20,
          masterUsername: "dbadmin",
          skipFinalSnapshot: true,
        },
        providerConfigRef: { name: pc },
        writeConnectionSecretToRef: { namespace: "default", name: `${db}-conn` },
      },
    });
    proxy.inject({ fault: { kind: "throttle" }, match: (c) => c.subject === db });
    const dbRes = await r.reconcile(keyOf(DBInstance, db));
    const dbSynced = conditionOf(await getMr(kube, DBInstance, db), "Synced");
    mine.record(
      "persistent RDS Query Throttling → Synced=False names it, backoff ≥ 2.5 s",
      dbSynced?.status === "False" &&
        /throttled by AWS \(Throttling/.test(dbSynced.message ?? "") &&
        (dbRes.requeueAfterMs ?? 0) >= 2_500,
      `${dbSynced?.message}; next try in ${dbRes.requeueAfterMs} ms`,
    );
    const dropped = await newQueue(`${RUN}-drop`, pc);
    proxy.inject({ fault: { kind: "drop" }, match: (c) => c.subject === dropped });
    const dropRes = await r.reconcile(keyOf(Queue, dropped));
    const dropSynced = conditionOf(await getMr(kube, Queue, dropped), "Synced");
    const dropAttempts = proxy.calls.filter((c) => c.subject === dropped).length;
    mine.record(
      "persistent dropped connections → Synced=False with the cause, 3 attempts",
      dropRes.outcome === "error" && dropSynced?.status === "False" && dropAttempts === 3,
      `${dropSynced?.message}; ${dropAttempts} attempts`,
    );
    proxy.heal();
    expect(mine.lost()).toEqual([]);
  }, 90_000);

  it("the per-ProviderConfig rate limit holds while 200 resources reconcile (SDK retries included)", async () => {
    const mine = tally.scope("cloud#3");
    const { proxy, pc } = await proxied();
    // A drift sweep over 200 existing queues (2 calls each) under the default limit (20/s, burst 40),
    // with some throttling on the way: the SDK's retries take tokens too.
    const LIMIT = DEFAULT_RATE_LIMIT;
    const names = Array.from({ length: 200 }, (_, i) => `${RUN}-rl-${i}`);
    await existingQueuesThrottled(names, pc, proxy);
    const r = newReconciler(newKube());
    const queue = new MemoryQueue({ workers: 32 });
    queue.start(reconcileHandler({ reconcile: (key) => r.reconcile(key) }));
    const t0 = Date.now();
    await queue.send(
      names.map((name) => makeMessage({ apiVersion: Queue.apiVersion, kind: Queue.kind, name }, "watch")),
    );
    const ready = await readyBy(names, t0 + 60_000);
    const t1 = Date.now();
    await queue.stop();
    proxy.heal();
    const calls = proxy.between(t0, t1 + 1, (c) => names.includes(c.subject ?? ""));
    const violations = bucketViolations(calls, LIMIT, t0);
    const peak = proxy.peakRate(1_000, t0 + 1_000, t1);
    const seconds = (t1 - t0) / 1000;
    const throttled = calls.filter((c) => c.outcome === "throttle").length;
    mine.record(
      "200 resources under the default limit: calls within burst + rate × time",
      violations === 0 && ready === names.length,
      `${calls.length} calls (${throttled} throttled and retried) in ${seconds.toFixed(1)} s: ${(calls.length / seconds).toFixed(1)}/s on average, peak ${peak} in a 1 s window after the first second (bucket: ≤ ${LIMIT.burst} + ${LIMIT.perSecond}/s), ${violations} over the bound; ${ready}/200 Ready`,
    );
    expect(mine.lost()).toEqual([]);
  }, 120_000);

  it("the limit holds for the deployment: 4 processes together stay within the ProviderConfig's rate", async () => {
    const mine = tally.scope("cloud#5");
    const { proxy, pc } = await proxied();
    // The ProviderConfig's own limit, for the whole deployment; four processes (four containers, each its
    // own connector and bucket) reconcile at once, as four concurrent Lambda invocations would.
    const LIMIT: RateLimit = { perSecond: 20, burst: 10 };
    await kube.patch(providerConfigs.aws.type, pc, { spec: { rateLimit: LIMIT } });
    const PROCESSES = 4;
    const names = Array.from({ length: 80 }, (_, i) => `${RUN}-dl-${i}`);
    await existingQueuesThrottled(names, pc, proxy);
    const processes = Array.from({ length: PROCESSES }, () => {
      const r = newReconciler(newKube(), { rateLimitInstances: PROCESSES });
      const queue = new MemoryQueue({ workers: 16 });
      queue.start(reconcileHandler({ reconcile: (key) => r.reconcile(key) }));
      return queue;
    });
    const t0 = Date.now();
    await Promise.all(
      processes.map((queue, p) =>
        queue.send(
          names
            .filter((_, i) => i % PROCESSES === p)
            .map((name) => makeMessage({ apiVersion: Queue.apiVersion, kind: Queue.kind, name }, "watch")),
        ),
      ),
    );
    const ready = await readyBy(names, t0 + 60_000);
    const t1 = Date.now();
    await Promise.all(processes.map((q) => q.stop()));
    proxy.heal();
    const calls = proxy.between(t0, t1 + 1, (c) => names.includes(c.subject ?? ""));
    const violations = bucketViolations(calls, LIMIT, t0);
    const peak = proxy.peakRate(1_000, t0 + 1_000, t1);
    mine.record(
      "4 processes, one ProviderConfig limit for the deployment: calls within burst + rate × time",
      violations === 0 && ready === names.length,
      `${calls.length} calls in ${((t1 - t0) / 1000).toFixed(1)} s from ${PROCESSES} processes, peak ${peak} in a 1 s window (deployment limit: ≤ ${LIMIT.burst} + ${LIMIT.perSecond}/s), ${violations} over the bound; ${ready}/${names.length} Ready`,
    );
    expect(mine.lost()).toEqual([]);
  }, 120_000);

  it("TokenBucket: burst, then the rate, first come first served", async () => {
    const mine = tally.scope("cloud#4");
    const bucket = new TokenBucket({ perSecond: 50, burst: 5 });
    const t0 = performance.now();
    const times: number[] = [];
    await Promise.all(
      Array.from({ length: 30 }, async () => {
        await bucket.acquire();
        times.push(performance.now() - t0);
      }),
    );
    // 5 at once, then 25 more at 50/s ≈ 500 ms (loose upper bound: other tests share this event loop).
    const sorted = [...times].sort((x, y) => x - y);
    const last = sorted.at(-1) ?? 0;
    const gap = (sorted[5] ?? 0) - (sorted[4] ?? 0);
    const ok = gap >= 10 && last >= 450 && last < 3_000;
    mine.record(
      "token bucket timing",
      ok,
      `the 6th waited ${gap.toFixed(0)} ms after the burst of 5; the 30th at ${last.toFixed(0)} ms`,
    );
    expect(ok).toBe(true);
  });
});
