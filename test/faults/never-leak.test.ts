// Area 8 — never leak. A managed resource deleted while its create is still on the way to the cloud, or
// right after it, must not leave the cloud resource behind. A fault proxy (test/support/fault-proxy.ts)
// in front of moto slows CreateQueue / CreateVpc, or answers NotFound to the first reads after a create
// (an eventually consistent cloud); two reconcilers (each its own Kube client) share the API server.
// Shown, for SQS queues (names chosen by us) and VPCs (ids chosen by AWS, found by ownership tag):
// - delete while the create is in flight, 50 rounds: the create lands, is found and deleted; 0 leaked;
// - delete right after the create while reads still say NotFound (inside the creation grace period):
//   the not-found is not trusted, the resource is deleted once it shows; 0 leaked;
// - every managed resource is gone from the API server at the end (no finalizer left behind).
import { DeleteVpcCommand, DescribeVpcsCommand, EC2Client } from "@aws-sdk/client-ec2";
import { DeleteQueueCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VPC } from "../../shared/api/aws/ec2.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import type { ManagedKindDef, ManagedResource } from "../../shared/api/managed.ts";
import { Annotations } from "../../shared/api/meta.ts";
import type { ResourceKey } from "../../shared/reconciler/reconciler.ts";
import { ensureCrds, motoSqs } from "../support/aws.ts";
import { env, newKube, sleep, uniqueName } from "../support/env.ts";
import { FaultProxy } from "../support/fault-proxy.ts";
import { getMr, keyOf, newReconciler } from "../support/reconcile.ts";
import type { Reconciler } from "../support/routed.ts";
import { createAwsProviderConfigAt, forceDelete, mapLimit, motoQueues, Tally } from "./support.ts";

const kube = newKube();
const RUN = uniqueName("fnl");
/** A user tag on every VPC of this run, so leaks are counted by tag as well as by owner uid. */
const RUN_TAG = "driftless-fault-run";
const tally = new Tally("8 never leak");
const proxies: FaultProxy[] = [];
const created: Array<[ManagedKindDef, string]> = [];

/**
 * Rounds, and how many run at once: bounded so the whole file takes about a minute on a quiet machine. Its
 * time limit is twice that: the faults project runs three files at once, and a limit is no assertion.
 */
const RACE_ROUNDS = 50;
const AFTER_CREATE_ROUNDS = 20;
const WIDTH = 10;
/** How long the proxy holds each CreateQueue / CreateVpc: long enough to delete while it is in flight. */
const CREATE_LATENCY_MS = 400;
/** Reads that answer NotFound right after a create (eventual consistency). */
const NOT_FOUND_READS = 2;
/**
 * The default creation grace period. The proxy hides a resource for a number of reads, not for a time,
 * so under load those reads can come seconds after the create: a short grace would then be outlived by
 * the "lag" and prove nothing. After driftless itself requested the delete, a not-found ends the wait.
 */
const GRACE_MS = 30_000;
/** Reconciles one resource may take to be gone (each waits at most POLL_MS between tries). */
const MAX_DRIVE = 80;
const POLL_MS = 150;

const ec2 = new EC2Client({
  region: "us-east-1",
  endpoint: env("AWS_ENDPOINT_URL"),
  credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
});

async function proxied(): Promise<{ proxy: FaultProxy; pc: string }> {
  const proxy = await FaultProxy.start(env("AWS_ENDPOINT_URL"));
  proxies.push(proxy);
  const pc = uniqueName("pc-leak");
  await createAwsProviderConfigAt(kube, pc, proxy.url);
  return { proxy, pc };
}

/**
 * `group` (a test's own prefix) names its queues and tags its VPCs, so concurrent tests count apart; it
 * labels the objects too, for the test's watch (createPendings).
 */
function mrObject(def: ManagedKindDef, name: string, pc: string, group: string) {
  const forProvider = def.kind === VPC.kind ? { cidrBlock: "10.230.0.0/16", tags: { [RUN_TAG]: group } } : {};
  return {
    apiVersion: def.apiVersion,
    kind: def.kind,
    metadata: { name, labels: { [RUN_TAG]: group } },
    spec: { forProvider, providerConfigRef: { name: pc } },
  };
}

/**
 * The objects of `group` as they get their create-pending annotation, seen through one watch per kind: the
 * moment a reconciler is about to create, without polling the API server (twenty 10 ms polls at once cost
 * it a core, which starved the reconcilers they waited for when another file loaded the machine).
 */
async function createPendings(defs: readonly ManagedKindDef[], group: string, signal: AbortSignal) {
  const seen = new Map<string, ManagedResource>();
  const waiting = new Map<string, (mr: ManagedResource) => void>();
  const onEvent = (type: string, mr: ManagedResource) => {
    if ((type !== "ADDED" && type !== "MODIFIED") || !mr.metadata.annotations?.[Annotations.createPending])
      return;
    const name = mr.metadata.name;
    const wake = waiting.get(name);
    if (wake) {
      waiting.delete(name);
      wake(mr);
    } else if (!seen.has(name)) seen.set(name, mr);
  };
  for (const def of defs)
    await kube.watch<ManagedResource>(def, { labelSelector: `${RUN_TAG}=${group}` }, onEvent, signal);
  /** The object as it was when it first carried create-pending. */
  return (name: string) =>
    new Promise<ManagedResource>((resolve) => {
      const mr = seen.get(name);
      if (mr) resolve(mr);
      else waiting.set(name, resolve);
    });
}

/** Two reconcilers, each with its own API-server client, as two Lambda invocations would be. */
const pair = (): [Reconciler, Reconciler] => [
  newReconciler(newKube(), { creationGracePeriodMs: GRACE_MS }),
  newReconciler(newKube(), { creationGracePeriodMs: GRACE_MS }),
];

/** Reconciles with both reconcilers in turn, as redeliveries would, until the object is gone. */
async function driveUntilGone(rs: [Reconciler, Reconciler], def: ManagedKindDef, name: string) {
  const key: ResourceKey = keyOf(def, name);
  for (let i = 0; i < MAX_DRIVE; i++) {
    const res = await rs[i % 2]?.reconcile(key);
    if (!(await getMr(kube, def, name))) return true;
    await sleep(Math.min(res?.requeueAfterMs ?? POLL_MS, POLL_MS));
  }
  return false;
}

/** VPCs in moto tagged with one of `groups`. */
async function taggedVpcs(...groups: string[]): Promise<string[]> {
  const out = await ec2.send(
    new DescribeVpcsCommand({ Filters: [{ Name: `tag:${RUN_TAG}`, Values: groups }] }),
  );
  return (out.Vpcs ?? []).map((v) => v.VpcId ?? "");
}

/** What is left of one test: cloud resources in moto, and managed resources in the API server. */
/** Records and asserts the end state of a scenario: no object, queue or VPC left behind. */
function assertNothingLeft(
  mine: ReturnType<Tally["scope"]>,
  rounds: number,
  outcomes: boolean[],
  left: Awaited<ReturnType<typeof leftovers>>,
) {
  mine.record(
    `${rounds} rounds: every managed resource is gone from the API server`,
    outcomes.every(Boolean) && left.objects.length === 0,
    `left: ${left.objects.join(", ")}`,
  );
  mine.record("0 SQS queues leaked", left.queues.length === 0, left.queues.join(", "));
  mine.record("0 VPCs leaked", left.vpcs.length === 0, left.vpcs.join(", "));
  expect(left.queues).toHaveLength(0);
  expect(left.vpcs).toHaveLength(0);
  expect(left.objects).toHaveLength(0);
  expect(mine.lost()).toEqual([]);
}

async function leftovers(group: string, names: Array<[ManagedKindDef, string]>) {
  const queues = await motoQueues(`${group}-`);
  const vpcs = await taggedVpcs(group);
  const objects = (
    await Promise.all(names.map(async ([def, name]) => ((await getMr(kube, def, name)) ? name : undefined)))
  ).filter((n): n is string => n !== undefined);
  return { queues, vpcs, objects };
}

beforeAll(async () => {
  await ensureCrds();
});

afterAll(async () => {
  // Whatever a failed run left: objects without their finalizers, then the cloud resources directly.
  for (const def of [Queue, VPC]) {
    await forceDelete(
      kube,
      def,
      created.filter(([d]) => d === def).map(([, n]) => n),
    );
  }
  const sqs = motoSqs();
  // A queue listed here may be gone by the time it is deleted (a reconcile of a timed-out test still running).
  for (const QueueUrl of await motoQueues(`${RUN}-`))
    await sqs.send(new DeleteQueueCommand({ QueueUrl })).catch((err: Error) => {
      if (err.name !== "QueueDoesNotExist" && err.name !== "AWS.SimpleQueueService.NonExistentQueue")
        throw err;
    });
  sqs.destroy();
  for (const VpcId of await taggedVpcs(`${RUN}-race`, `${RUN}-after`))
    await ec2.send(new DeleteVpcCommand({ VpcId }));
  ec2.destroy();
  for (const p of proxies) await p.stop();
  tally.report();
  expect(tally.lost).toBe(0);
});

describe.concurrent("never leak: delete during and right after create", () => {
  it(`delete while Create is in flight (${RACE_ROUNDS} rounds, two reconcilers): 0 queues and 0 VPCs left`, async () => {
    const mine = tally.scope("leak#race");
    const group = `${RUN}-race`;
    const { proxy, pc } = await proxied();
    proxy.inject({
      fault: { kind: "latency", ms: CREATE_LATENCY_MS },
      match: (c) => c.action === "CreateQueue" || c.action === "CreateVpc",
    });
    const rounds = Array.from({ length: RACE_ROUNDS }, (_, i) => i);
    const names: Array<[ManagedKindDef, string]> = [];
    let inFlight = 0;
    const watching = new AbortController();
    const pendingOf = await createPendings([Queue, VPC], group, watching.signal);

    const outcomes = await mapLimit(rounds, WIDTH, async (i) => {
      const rs = pair();
      const one = async (def: ManagedKindDef) => {
        const name = `${group}-${def.kind.toLowerCase()}-${i}`;
        names.push([def, name]);
        created.push([def, name]);
        await kube.create(def, mrObject(def, name, pc, group));
        const key = keyOf(def, name);
        // The first reconciler gets as far as Create, which the proxy holds.
        const first = rs[0].reconcile(key);
        // Seen by the watch; or, should the reconcile end first, read once after it.
        const pending = await Promise.race([
          pendingOf(name),
          first.then(async (res) => {
            const mr = await getMr(kube, def, name);
            if (mr?.metadata.annotations?.[Annotations.createPending]) return mr;
            throw new Error(`no create-pending on ${name} after its first reconcile (${res.outcome})`);
          }),
        ]);
        if (!pending.metadata.annotations?.[Annotations.createSucceeded]) inFlight++;
        // While the create is in flight, the resource is deleted and a second reconciler takes it up.
        await kube.delete(def, name);
        const second = rs[1].reconcile(key);
        await Promise.all([first, second]);
        return driveUntilGone(rs, def, name);
      };
      const [q, v] = await Promise.all([one(Queue), one(VPC)]);
      return q && v;
    }).finally(() => watching.abort());

    const left = await leftovers(group, names);
    const creates = proxy.calls.filter((c) => c.action === "CreateQueue" || c.action === "CreateVpc").length;
    process.stdout.write(
      `[faults] never leak (race): ${RACE_ROUNDS} rounds, ${creates} creates, ${inFlight} deletes while the create was in flight, leaked queues ${left.queues.length}, leaked VPCs ${left.vpcs.length}, objects left ${left.objects.length}\n`,
    );
    // The race is real: most deletes land while the proxy still holds the create (it holds it 400 ms).
    mine.record(
      "deletes met creates in flight",
      inFlight >= RACE_ROUNDS,
      `${inFlight} of ${RACE_ROUNDS * 2}`,
    );
    assertNothingLeft(mine, RACE_ROUNDS, outcomes, left);
  }, 120_000);

  it(`delete right after Create while reads still say NotFound (${AFTER_CREATE_ROUNDS} rounds): 0 leaked`, async () => {
    const mine = tally.scope("leak#after-create");
    const group = `${RUN}-after`;
    const { proxy, pc } = await proxied();
    // Subjects (queue names, VPC ids) whose next reads answer NotFound, and how many reads are left.
    const hidden = new Map<string, number>();
    const hide = (subject: string) => hidden.set(subject, NOT_FOUND_READS);
    const take = (subject: string | undefined) => {
      const left = subject ? (hidden.get(subject) ?? 0) : 0;
      if (left <= 0 || !subject) return false;
      hidden.set(subject, left - 1);
      return true;
    };
    proxy.inject(
      {
        fault: {
          kind: "error",
          status: 400,
          code: "QueueDoesNotExist",
          message: "The specified queue does not exist.",
        },
        match: (c) => (c.action === "GetQueueUrl" || c.action === "GetQueueAttributes") && take(c.subject),
      },
      {
        fault: {
          kind: "error",
          status: 400,
          code: "InvalidVpcID.NotFound",
          message: "The vpc ID does not exist",
        },
        match: (c) => c.action === "DescribeVpcs" && take(c.subject),
      },
    );
    const rounds = Array.from({ length: AFTER_CREATE_ROUNDS }, (_, i) => i);
    const names: Array<[ManagedKindDef, string]> = [];
    let hiddenReads = 0;

    const outcomes = await mapLimit(rounds, WIDTH, async (i) => {
      const rs = pair();
      const def = i % 2 === 0 ? Queue : VPC;
      const name = `${group}-${def.kind.toLowerCase()}-${i}`;
      names.push([def, name]);
      created.push([def, name]);
      await kube.create(def, mrObject(def, name, pc, group));
      const key = keyOf(def, name);
      // Reconcile until the create has happened and its result is recorded.
      for (let n = 0; n < 10; n++) {
        const res = await rs[0].reconcile(key);
        if (res.outcome === "created") break;
      }
      const mr = await getMr(kube, def, name);
      const externalName = mr?.metadata.annotations?.[Annotations.externalName];
      if (!externalName || !mr?.metadata.annotations?.[Annotations.createSucceeded]) return false;
      // The cloud does not show it yet, and the user deletes it at once.
      hide(externalName);
      await kube.delete(def, name);
      const gone = await driveUntilGone(rs, def, name);
      hiddenReads += NOT_FOUND_READS - (hidden.get(externalName) ?? 0);
      return gone;
    });

    const left = await leftovers(group, names);
    process.stdout.write(
      `[faults] never leak (after create): ${AFTER_CREATE_ROUNDS} rounds, ${hiddenReads} reads answered NotFound, leaked queues ${left.queues.length}, leaked VPCs ${left.vpcs.length}, objects left ${left.objects.length}\n`,
    );
    mine.record(
      "the NotFound answers really happened (the test shows what it claims)",
      hiddenReads === AFTER_CREATE_ROUNDS * NOT_FOUND_READS,
      `${hiddenReads} of ${AFTER_CREATE_ROUNDS * NOT_FOUND_READS}`,
    );
    assertNothingLeft(mine, AFTER_CREATE_ROUNDS, outcomes, left);
  }, 120_000);
});
