// The batched drift check end to end on the wire: the real kube-apiserver pages (continue tokens and
// the first page's snapshot read again with resourceVersionMatch=Exact), moto behind the real SQS client,
// and the worker core as the queue adapters call it. Counts, not time.
import { SetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import { sweep } from "../../../shared/pipeline/sweep.ts";
import { createWorker } from "../../../shared/pipeline/worker.ts";
import { awsKinds, awsProviderConfigKinds } from "../../../shared/providers/aws/kinds.ts";
import type { ReconcileMessage } from "../../../shared/queue/message.ts";
import { noopLogger } from "../../../shared/reconciler/contract.ts";
import { reconcileBatch } from "../../../shared/reconciler/router.ts";
import { createAwsProviderConfig, ensureCrds, motoSqs } from "../../support/aws.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { cleanup, inParallel, RecordingSink, TEST_LABEL } from "./helpers.ts";

const kube = newKube();
const label = uniqueName("batched");
const pc = uniqueName("pc-batched");
const N = 120;
const names = Array.from({ length: N }, (_, i) => `${label}-${String(i).padStart(3, "0")}`);

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, pc);
  const r = newReconciler(kube);
  await inParallel(names, 16, async (name) => {
    await kube.create<KubeObject>(Queue, {
      apiVersion: Queue.apiVersion,
      kind: Queue.kind,
      metadata: { name, labels: { [TEST_LABEL]: label } },
      spec: {
        forProvider: { region: "us-east-1", visibilityTimeoutSeconds: 30 },
        providerConfigRef: { name: pc },
        writeConnectionSecretToRef: { namespace: "default", name: `${name}-conn` },
      },
    });
    await settle(r, keyOf(Queue, name));
  });
}, 240_000);

afterAll(async () => {
  await cleanup(kube, names);
}, 120_000);

/** A sweep where everything is due, in batch mode, pages of `pageSize`. */
async function sweepBatches(pageSize: number) {
  const sink = new RecordingSink();
  const result = await sweep({
    kube,
    types: [Queue],
    sink,
    scheduleMs: 60_000,
    defaultPollMs: 60_000,
    pageSize,
    batch: true,
    labelSelector: `${TEST_LABEL}=${label}`,
  });
  return { result, messages: sink.messages };
}

/** A worker of its own (its Kube counts its requests), and the follow-ups it sends. */
function worker() {
  const workerKube = newKube();
  const w = createWorker({
    kube: workerKube,
    kinds: awsKinds,
    providerConfigKinds: awsProviderConfigKinds,
    logger: noopLogger,
  });
  const followUps = new RecordingSink();
  const check = async (messages: readonly ReconcileMessage[]) => {
    workerKube.stats.gets = workerKube.stats.lists = workerKube.stats.writes = 0;
    workerKube.stats.byOperation = {};
    const results = await reconcileBatch(
      w.reconcile,
      messages.map((m, i) => ({
        id: String(i),
        key: { apiVersion: m.apiVersion, kind: m.kind, name: m.name },
        ...(m.batch ? { batch: { apiVersion: m.apiVersion, kind: m.kind, batch: m.batch } } : {}),
      })),
      { checkBatch: w.checkBatch(followUps) },
    );
    return { results, stats: { ...workerKube.stats } };
  };
  return { w, check, followUps };
}

describe("batched drift check on the real API server and moto", () => {
  // One warm worker container for both rows (its ProviderConfig and credentials cached after the first).
  const { w, check, followUps } = worker();

  it(`${N} in-sync queues in two pages: two batch messages, 2 page LISTs + 2 Secret LISTs, no per-object GET, no write`, async () => {
    const { result, messages } = await sweepBatches(100);
    expect(result).toMatchObject({ listed: N, batched: N, batches: 2, pages: 2 });
    // The first page is read again by its snapshot's resourceVersion, the second by its continue token.
    expect(messages[0]?.batch?.page.resourceVersion).toBeTruthy();
    expect(messages[1]?.batch?.page.continue).toBeTruthy();
    const { results, stats } = await check(messages);
    expect(results.every((r) => r.outcome.kind === "done")).toBe(true);
    // The only GETs: the ProviderConfig and its credentials Secret, once per container.
    expect(stats.byOperation).toMatchObject({ "get ProviderConfig": 1, "get Secret": 1 });
    expect(stats).toMatchObject({ gets: 2, lists: 4, writes: 0 });
    // SQS has no list call returning a queue's attributes: one observe per queue.
    expect(w.engine.externalCalls).toMatchObject({ observe: N, observeMany: 0, update: 0, create: 0 });
    expect(followUps.messages).toHaveLength(0);
  });

  it("one queue changed in the cloud: exactly one update, and only it is read again", async () => {
    const victim = names[42] as string;
    const mr = await kube.get<KubeObject>(Queue, victim);
    const url = (mr as { status?: { atProvider?: { url?: string } } } | undefined)?.status?.atProvider?.url;
    expect(url).toBeTruthy();
    await motoSqs().send(
      new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: "99" } }),
    );
    const { messages } = await sweepBatches(1000);
    expect(messages).toHaveLength(1);
    const updates = w.engine.externalCalls.update;
    const { stats } = await check(messages);
    expect(w.engine.externalCalls.update - updates).toBe(1);
    // Its re-read and its connection Secret's (publish): nothing for the others.
    expect(stats.gets).toBe(2);
    const after = await kube.get<KubeObject>(Queue, victim);
    expect(after?.metadata.annotations?.[Annotations.externalName]).toBeTruthy();
  });
});
