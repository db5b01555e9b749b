// Area 3 — API server faults, end to end through `driftless run` (startRun: forwarder + memory queue +
// reconciler + sweep timer):
// - its API server (an extra kube-apiserver of the stack, same etcd) is killed mid-run and restarted:
//   changes made while it was down (a create, a delete, a spec change, made through the main server)
//   are all reconciled after, and nothing crashes;
// - 409 conflicts: two reconcilers and a third writer patching the same object's metadata and spec in a
//   loop → conflicts are retried, the object converges, one Create;
// - 410 Gone on the watch (resumeFrom(type, "1")): the forwarder relists, nothing is missed;
// - a key whose reconcile keeps failing is dead-lettered by the memory queue and the resource says so.
import { GetQueueAttributesCommand, GetQueueUrlCommand, ListQueueTagsCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { awsKinds, awsProviderConfigKinds } from "../../functions/aws/kinds.ts";
import { startExtraKubeApiserver, stopExtraKubeApiserver } from "../../infra/local/stack.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import { startRun } from "../../shared/pipeline/run.ts";
import { DEAD_LETTER_EVENT_REASON } from "../../shared/worker/dead-letter.ts";
import { TEST_LABEL } from "../integration/pipeline/helpers.ts";
import { createAwsProviderConfig, ensureCrds, motoSqs } from "../support/aws.ts";
import { env, eventually, freePort, kubeConfigFor, newKube, sleep, uniqueName } from "../support/env.ts";
import { FaultProxy } from "../support/fault-proxy.ts";
import { conditionOf, getMr, keyOf, newReconciler, settle } from "../support/reconcile.ts";
import {
  bufferLogger,
  createAwsProviderConfigAt,
  eventsFor,
  forceDelete,
  motoQueues,
  Tally,
  type TallyScope,
} from "./support.ts";

const kube = newKube();
const sqs = motoSqs();
const PC = uniqueName("pc-api");
const tally = new Tally("3 API server faults");
const created: string[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (err: unknown) => unhandled.push(err);

const queueObject = (name: string, label: string, pc = PC, forProvider: Record<string, unknown> = {}) => ({
  apiVersion: Queue.apiVersion,
  kind: Queue.kind,
  metadata: { name, labels: { [TEST_LABEL]: label } },
  spec: { forProvider, providerConfigRef: { name: pc } },
});

async function createQueue(name: string, label: string, pc = PC, forProvider: Record<string, unknown> = {}) {
  created.push(name);
  await kube.create(Queue, queueObject(name, label, pc, forProvider));
}

const isReady = async (name: string) =>
  conditionOf(await getMr(kube, Queue, name), "Ready")?.status === "True";
const cloudHas = async (name: string) => (await motoQueues(name)).some((u) => u.endsWith(`/${name}`));
async function cloudAttribute(name: string, attribute: string) {
  const url = (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
  const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }));
  return (out.Attributes as Record<string, string> | undefined)?.[attribute];
}

/** Waits for `fn`; records the trial as survived or lost instead of throwing. */
async function trial(
  mine: TallyScope,
  name: string,
  fn: () => Promise<boolean>,
  timeoutMs = 30_000,
  detail?: () => string,
) {
  try {
    await eventually(async () => (await fn()) || undefined, { timeoutMs, intervalMs: 250, what: name });
    return mine.record(name, true, detail?.());
  } catch (err) {
    return mine.record(name, false, `${(err as Error).message}${detail ? `; ${detail()}` : ""}`);
  }
}

beforeAll(async () => {
  process.on("unhandledRejection", onUnhandled);
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
});

afterAll(async () => {
  process.off("unhandledRejection", onUnhandled);
  const r = newReconciler(kube);
  await Promise.all(
    created.map(async (n) => {
      await kube.delete(Queue, n);
      await settle(r, keyOf(Queue, n), 6);
    }),
  );
  await forceDelete(kube, Queue, created);
  sqs.destroy();
  tally.report();
  expect(tally.lost).toBe(0);
});

// The tests of this file are independent (own objects, own queues): they run at once.
describe.concurrent("API server faults", () => {
  it("its API server is killed and restarted mid-run: every change made meanwhile is reconciled, nothing crashes", async () => {
    const mine = tally.scope("apiserver#1");
    const label = uniqueName("fapi-restart");
    const port = await freePort();
    let apiserver = await startExtraKubeApiserver(port);
    const { logger, text } = bufferLogger("info");
    const run = await startRun({
      kubeConfig: kubeConfigFor(apiserver.server),
      logger,
      kinds: awsKinds,
      providerConfigKinds: awsProviderConfigKinds,
      labelSelector: `${TEST_LABEL}=${label}`,
      sweepIntervalMs: 5_000,
      workers: 4,
    });
    try {
      const kept = uniqueName("fapi-kept");
      const doomed = uniqueName("fapi-doomed");
      const changed = uniqueName("fapi-changed");
      for (const n of [kept, doomed, changed]) await createQueue(n, label);
      await eventually(
        async () => (await isReady(kept)) && (await isReady(doomed)) && (await isReady(changed)),
        {
          timeoutMs: 30_000,
          what: "Ready before the outage",
        },
      );

      await stopExtraKubeApiserver(apiserver.pid, "SIGKILL");
      const downAt = Date.now();
      // While it is down, through the main API server (same etcd): a create, a delete, a spec change.
      const born = uniqueName("fapi-born");
      await createQueue(born, label);
      await kube.delete(Queue, doomed);
      await kube.patch(Queue, changed, { spec: { forProvider: { visibilityTimeoutSeconds: 77 } } });
      await sleep(3_000); // reconciles and watches fail meanwhile
      apiserver = await startExtraKubeApiserver(port);
      const downMs = Date.now() - downAt;
      const upAt = Date.now();

      await trial(mine, `created while down → Ready (down ${downMs} ms)`, () => isReady(born), 40_000);
      await trial(
        mine,
        "deleted while down → cloud queue and object gone (no orphaned finalizer)",
        async () => !(await getMr(kube, Queue, doomed)) && !(await cloudHas(doomed)),
        40_000,
      );
      await trial(
        mine,
        "changed while down → applied to the cloud",
        async () => (await cloudAttribute(changed, "VisibilityTimeout")) === "77",
        40_000,
      );
      await trial(mine, "untouched resource still Ready", () => isReady(kept), 5_000);
      await trial(
        mine,
        "nothing crashed: no unhandled rejection, the run is ready again",
        async () => unhandled.length === 0 && run.readiness().every((c) => c.ok || c.name !== "queue"),
        20_000,
        () =>
          `recovered in ${Date.now() - upAt} ms; forwarder ${JSON.stringify({ ...run.forwarder?.stats(), kinds: undefined })}; ${unhandled.length} unhandled; log errors: ${
            text()
              .split("\n")
              .filter((l) => l.includes('"level":"error"')).length
          }`,
      );
    } finally {
      await run.stop();
      await stopExtraKubeApiserver(apiserver.pid);
    }
    expect(mine.lost()).toEqual([]);
  }, 150_000);

  it("409 conflicts from concurrent writers are retried and the object converges with one Create", async () => {
    const mine = tally.scope("apiserver#2");
    const proxy = await FaultProxy.start(env("AWS_ENDPOINT_URL"));
    const pc = uniqueName("pc-api-409");
    await createAwsProviderConfigAt(kube, pc, proxy.url);
    const name = uniqueName("fapi-409");
    await createQueue(name, "fapi-409", pc, { tags: { round: "0" } });
    const a = newReconciler(newKube());
    const writers = [a, newReconciler(newKube())];
    const third = newKube();
    let stop = false;
    let userWrites = 0;
    const outcomes: string[] = [];
    // A third client: labels (metadata) and a tag (spec) changing every 20–60 ms, a very busy user.
    const user = (async () => {
      while (!stop) {
        userWrites++;
        await third
          .patch(Queue, name, {
            metadata: { labels: { churn: String(userWrites % 7) } },
            spec: { forProvider: { tags: { round: String(userWrites) } } },
          })
          .catch(() => undefined);
        await sleep(20 + Math.random() * 40);
      }
    })();
    const loops = writers.map(async (w) => {
      while (!stop) {
        const res = await w.reconcile(keyOf(Queue, name));
        outcomes.push(res.outcome);
        await sleep(Math.min(res.requeueAfterMs ?? 50, 100));
      }
    });
    await sleep(6_000);
    stop = true;
    await Promise.all([user, ...loops]);
    const finalRound = String(userWrites);
    // After the churn stops: any worker's next reconcile converges it.
    await settle(a, keyOf(Queue, name));
    const mr = await getMr(kube, Queue, name);
    const url = (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
    const tags = await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }));
    const creates = proxy.calls.filter((c) => c.action === "CreateQueue" && c.subject === name).length;
    await proxy.stop();
    const conflicts = outcomes.filter((o) => o === "conflict").length;
    mine.record(
      "concurrent writers: conflicts retried, converged, one Create",
      conflicts > 0 &&
        creates === 1 &&
        conditionOf(mr, "Ready")?.status === "True" &&
        conditionOf(mr, "Synced")?.status === "True" &&
        tags.Tags?.round === finalRound,
      `${outcomes.length} reconciles (${conflicts} conflicts, ${outcomes.filter((o) => o === "error").length} errors), ${userWrites} user writes, ${creates} CreateQueue, cloud tag round=${tags.Tags?.round} (spec ${finalRound})`,
    );
    expect(mine.lost()).toEqual([]);
  }, 60_000);

  it("410 Gone on the watch: the forwarder relists and nothing is missed; a failing key is dead-lettered with a note", async () => {
    const mine = tally.scope("apiserver#3");
    const label = uniqueName("fapi-410");
    const { logger, text } = bufferLogger("info");
    const run = await startRun({
      kubeConfig: newKube().kubeConfig("startRun"),
      logger,
      kinds: awsKinds,
      providerConfigKinds: awsProviderConfigKinds,
      labelSelector: `${TEST_LABEL}=${label}`,
      sweepIntervalMs: 3_000,
      workers: 4,
    });
    try {
      const first = uniqueName("fapi-410-a");
      const failing = uniqueName("fapi-410-failing");
      await createQueue(first, label);
      // Its ProviderConfig does not exist: every reconcile fails; the memory queue dead-letters it.
      await createQueue(failing, label, uniqueName("pc-missing"));
      await eventually(() => isReady(first), { timeoutMs: 20_000, what: "Ready before the 410" });

      const relistsBefore = run.forwarder?.stats().relists ?? 0;
      run.forwarder?.resumeFrom(Queue, "1");
      const second = uniqueName("fapi-410-b");
      await createQueue(second, label);
      await kube.patch(Queue, first, { spec: { forProvider: { visibilityTimeoutSeconds: 55 } } });
      await trial(
        mine,
        "410 Gone → relist (forwarder counted it)",
        async () => (run.forwarder?.stats().relists ?? 0) > relistsBefore,
        15_000,
        () => `relists ${run.forwarder?.stats().relists}; 410 logged: ${text().includes("410")}`,
      );
      await trial(mine, "created around the 410 → Ready", () => isReady(second), 30_000);
      await trial(
        mine,
        "changed around the 410 → applied",
        async () => (await cloudAttribute(first, "VisibilityTimeout")) === "55",
        30_000,
      );
      await trial(
        mine,
        "a key that keeps failing → dead-lettered, Warning Event on the resource, Synced says why",
        async () => {
          const note = (await eventsFor(kube, failing)).find((e) => e.reason === DEAD_LETTER_EVENT_REASON);
          const synced = conditionOf(await getMr(kube, Queue, failing), "Synced");
          return (
            run.queue.stats().deadLettered >= 1 &&
            /dead-lettered after \d+ attempts; the drift sweep retries within the poll interval/.test(
              note?.message ?? "",
            ) &&
            synced?.status === "False" &&
            /ProviderConfig ".*" .*not found/.test(synced.message ?? "")
          );
        },
        60_000,
        () => `dead-lettered ${run.queue.stats().deadLettered}`,
      );
    } finally {
      await run.stop();
    }
    expect(mine.lost()).toEqual([]);
  }, 120_000);
});
