// The batched drift check end to end on the wire: the real kube-apiserver pages (continue tokens and
// the first page's snapshot read again with resourceVersionMatch=Exact), moto behind the real SQS client,
// and the worker core as the queue adapters call it. Counts, not time.
import { CreateVpcCommand, DeleteVpcCommand, EC2Client } from "@aws-sdk/client-ec2";
import { SetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VPC } from "../../../shared/api/aws/ec2.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import { sweep } from "../../../shared/pipeline/sweep.ts";
import { SweepIndex } from "../../../shared/pipeline/sweep-index.ts";
import { awsKinds, awsProviderConfigKinds } from "../../../shared/providers/aws/kinds.ts";
import type { ReconcileMessage } from "../../../shared/queue/message.ts";
import { noopLogger } from "../../../shared/reconciler/contract.ts";
import { reconcileBatch } from "../../../shared/worker/core.ts";
import { createWorker } from "../../../shared/worker/worker.ts";
import { createAwsProviderConfig, ensureCrds, motoOptions, motoSqs } from "../../support/aws.ts";
import { env, inParallel, newKube, uniqueName } from "../../support/env.ts";
import { MotoProxy } from "../../support/moto-proxy.ts";
import { keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { cleanup, RecordingSink, TEST_LABEL } from "./helpers.ts";

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
async function sweepBatches(pageSize: number, type: typeof Queue | typeof VPC = Queue) {
  const sink = new RecordingSink();
  const result = await sweep({
    kube,
    types: [type],
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
        // (items carry their own keys; `key` is the batch's first object)
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

  it(`${N} in-sync queues from a warm sweep's index: one batch selecting them by external key, 1 selection LIST + 1 Secret LIST, no GET, no write`, async () => {
    const index = new SweepIndex({ scheduleMs: 60_000, defaultPollMs: 60_000 });
    const sweepOnce = async (now: Date) => {
      const sink = new RecordingSink();
      const result = await sweep({
        kube,
        types: [Queue],
        sink,
        now,
        scheduleMs: 60_000,
        defaultPollMs: 60_000,
        pageSize: 100,
        batch: true,
        labelSelector: `${TEST_LABEL}=${label}`,
        index,
      });
      return { result, messages: sink.messages };
    };
    const t0 = Date.now();
    await sweepOnce(new Date(t0)); // cold: fills the index
    const { result, messages } = await sweepOnce(new Date(t0 + 60_000)); // the next window, warm: a watch, no LIST
    expect(result).toMatchObject({ pages: 0, watches: 1, batched: N, batches: 1 });
    expect(messages[0]?.batch?.page.resourceVersionMatch).toBe("NotOlderThan");
    const { results, stats } = await check(messages);
    expect(results.every((r) => r.outcome.kind === "done")).toBe(true);
    expect(stats).toMatchObject({ gets: 0, lists: 2, writes: 0 });
    expect(w.engine.externalCalls.update).toBe(0);
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

describe("batched drift check of a list-capable kind: VPCs on moto, calls counted on the wire", () => {
  const V = 120;
  const ec2 = new EC2Client(motoOptions());
  const vpcPc = uniqueName("pc-batched-vpc");
  const vpcNames = Array.from({ length: V }, (_, i) => `${label}-vpc-${String(i).padStart(3, "0")}`);
  const ids: string[] = [];
  let proxy: MotoProxy;

  beforeAll(async () => {
    proxy = await MotoProxy.start(env("AWS_ENDPOINT_URL"));
    await createAwsProviderConfig(kube, vpcPc, { endpoint: proxy.url });
    const r = newReconciler(kube);
    await inParallel(vpcNames, 16, async (name) => {
      const i = vpcNames.indexOf(name);
      const cidrBlock = `10.${100 + Math.floor(i / 250)}.${i % 250}.0/24`;
      const vpcId = (await ec2.send(new CreateVpcCommand({ CidrBlock: cidrBlock }))).Vpc?.VpcId ?? "";
      ids.push(vpcId);
      // Adopted: the VPC exists, the managed resource names it.
      await kube.create<KubeObject>(VPC, {
        apiVersion: VPC.apiVersion,
        kind: VPC.kind,
        metadata: {
          name,
          labels: { [TEST_LABEL]: label },
          annotations: { [Annotations.externalName]: vpcId },
        },
        spec: {
          forProvider: { region: "us-east-1", cidrBlock },
          providerConfigRef: { name: vpcPc },
          writeConnectionSecretToRef: { namespace: "default", name: `${name}-conn` },
        },
      });
      await settle(r, keyOf(VPC, name));
    });
  }, 240_000);

  afterAll(async () => {
    await inParallel(vpcNames, 16, async (name) => {
      await kube.patch(VPC, name, { metadata: { finalizers: null } }).catch(() => undefined);
      await kube.delete(VPC, name).catch(() => undefined);
    });
    await inParallel(ids, 16, (VpcId) => ec2.send(new DeleteVpcCommand({ VpcId })).catch(() => undefined));
    await proxy?.stop();
  }, 120_000);

  it(`${V} in-sync VPCs: 1 DescribeVpcs, 3 LIST requests (sweep, page, Secrets), no per-object GET, no write`, async () => {
    const { result, messages } = await sweepBatches(1000, VPC);
    expect(result).toMatchObject({ listed: V, batched: V, batches: 1 });
    const { w, check } = worker();
    // Warm the container first (ProviderConfig and credentials cached), as a running Lambda would be.
    await check(messages);
    const mark = proxy.calls.length;
    const sweepKube = newKube();
    await sweep({
      kube: sweepKube,
      types: [VPC],
      sink: new RecordingSink(),
      scheduleMs: 60_000,
      defaultPollMs: 60_000,
      batch: true,
      labelSelector: `${TEST_LABEL}=${label}`,
    });
    const { stats } = await check(messages);
    const calls = proxy.since(mark);
    expect(calls).toEqual(["DescribeVpcs"]);
    expect(sweepKube.stats.lists + stats.lists).toBe(3);
    expect(stats).toMatchObject({ gets: 0, writes: 0 });
    expect(w.engine.externalCalls).toMatchObject({ observe: 0, update: 0 });
  });

  it("one VPC drifted in the cloud among them: exactly one update", async () => {
    const victim = vpcNames[7] as string;
    // Drift: a tag the spec sets is removed in the cloud behind driftless's back.
    await kube.patch(VPC, victim, { spec: { forProvider: { tags: { team: "a" } } } });
    const r = newReconciler(kube);
    await settle(r, keyOf(VPC, victim));
    const vpcId =
      (await kube.get<KubeObject>(VPC, victim))?.metadata.annotations?.[Annotations.externalName] ?? "";
    const { DeleteTagsCommand } = await import("@aws-sdk/client-ec2");
    await ec2.send(new DeleteTagsCommand({ Resources: [vpcId], Tags: [{ Key: "team" }] }));
    const { messages } = await sweepBatches(1000, VPC);
    const { w, check } = worker();
    const mark = proxy.calls.length;
    await check(messages);
    const actions = proxy.since(mark);
    expect(actions.filter((a) => a === "CreateTags")).toHaveLength(1);
    expect(actions.filter((a) => a === "DescribeVpcs").length).toBeLessThanOrEqual(3);
    expect(w.engine.externalCalls.update).toBe(1);
  });
});
