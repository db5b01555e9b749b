// Area 1 — crash consistency. A real worker process (worker-child.ts: the real Reconciler, Kubernetes
// client and AWS providers) SIGKILLs itself at a step boundary of a create or a delete; a fresh process
// then reconciles the same key without crashing. For every boundary: exactly one cloud resource (or none
// after a delete), no object stuck on its finalizer, and every object Ready or saying why not.
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VPC } from "../../shared/api/aws/ec2.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import type { ManagedKindDef } from "../../shared/api/managed.ts";
import { Annotations } from "../../shared/api/meta.ts";
import type { ResourceKey } from "../../shared/reconciler/reconciler.ts";
import { createAwsProviderConfig, ensureCrds } from "../support/aws.ts";
import { newKube, uniqueName } from "../support/env.ts";
import { conditionOf, getMr, keyOf, newReconciler, settle } from "../support/reconcile.ts";
import { TEST_COMPILE_CACHE, testBundle } from "../support/test-bundles.ts";
import { forceDelete, mapLimit, motoQueues, motoVpcsOwnedBy, Tally } from "./support.ts";
import type { Boundary, ChildConfig, ChildResult } from "./worker-child.ts";

const kube = newKube();
const PC = uniqueName("pc-crash");
const RUN = uniqueName("fc");
const tally = new Tally("1 crash consistency");
/** Scenarios run this many at a time per test (the three tests run at once): two children in a row each. */
const WIDTH = 3;

interface ChildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  crashedAt?: string;
  result?: ChildResult;
  output: string;
}

function runChild(cfg: ChildConfig, timeoutMs = 40_000): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    // worker-child.ts, bundled by the global setup: two processes per scenario start in 0.25 s of CPU, not 1.5 s.
    const child = spawn(process.execPath, [testBundle("worker-child"), JSON.stringify(cfg)], {
      env: { ...process.env, NODE_NO_WARNINGS: "1", NODE_COMPILE_CACHE: TEST_COMPILE_CACHE },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      output += d.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      const crashedAt = /^CRASH (\S+)$/m.exec(output)?.[1];
      const result = /^RESULT (.+)$/m.exec(output)?.[1];
      resolve({
        code,
        signal,
        output,
        ...(crashedAt ? { crashedAt } : {}),
        ...(result ? { result: JSON.parse(result) as ChildResult } : {}),
      });
    });
  });
}

const queueObject = (name: string) => ({
  apiVersion: Queue.apiVersion,
  kind: Queue.kind,
  metadata: { name },
  spec: {
    forProvider: { visibilityTimeoutSeconds: 45 },
    providerConfigRef: { name: PC },
    writeConnectionSecretToRef: { namespace: "default", name: `${name}-conn` },
  },
});

let cidr = 0;
const vpcObject = (name: string) => ({
  apiVersion: VPC.apiVersion,
  kind: VPC.kind,
  metadata: { name },
  spec: {
    forProvider: { region: "us-east-1", cidrBlock: `10.${(cidr++ % 200) + 20}.0.0/16` },
    providerConfigRef: { name: PC },
  },
});

/** Crash at `boundary`, restart without crashing; describes what went wrong, or undefined. */
async function crashAndRestart(key: ResourceKey, boundary: Boundary): Promise<string | undefined> {
  const first = await runChild({ key, crashAt: boundary });
  if (first.signal !== "SIGKILL" || first.crashedAt !== boundary)
    return `the first worker did not die at ${boundary} (exit ${first.code}/${first.signal}): ${first.output.slice(-400)}`;
  const second = await runChild({ key });
  if (!second.result) return `the restarted worker did not finish: ${second.output.slice(-400)}`;
  const outcomes = second.result.outcomes;
  if (outcomes.includes("blocked")) return `blocked after restart: ${second.result.errors.join("; ")}`;
  if (outcomes.at(-1) === "error") return `still failing after restart: ${second.result.errors.join("; ")}`;
  // A create that reached the cloud before the crash must not be made again; one that did not, must.
  const creates = second.result.externalCalls.create ?? 0;
  const expected = CREATES_AFTER_RESTART[boundary];
  if (expected !== undefined && creates !== expected)
    return `the restarted worker called create ${creates}× (expected ${expected})`;
  return undefined;
}

/** Creates the restarted worker must make, by boundary (during-create: either, the count decides). */
const CREATES_AFTER_RESTART: Partial<Record<Boundary, number>> = {
  "after-finalizer-add": 1,
  "after-create-pending": 1,
  "before-create": 1,
  "after-create": 0,
  "after-create-succeeded": 0,
  "after-status-write": 0,
};

/** Ready + Synced, create annotations consistent; describes what is wrong, or undefined. */
async function checkReady(def: ManagedKindDef, name: string): Promise<string | undefined> {
  const mr = await getMr(kube, def, name);
  if (!mr) return "object is gone";
  const ready = conditionOf(mr, "Ready");
  const synced = conditionOf(mr, "Synced");
  if (ready?.status !== "True" || synced?.status !== "True")
    return `Ready=${ready?.status}/${ready?.reason} Synced=${synced?.status}: ${synced?.message ?? ""}`;
  const a = mr.metadata.annotations ?? {};
  const pending = Date.parse(a[Annotations.createPending] ?? "");
  const succeeded = Date.parse(a[Annotations.createSucceeded] ?? "");
  if (!(succeeded >= pending)) return `create-succeeded (${succeeded}) not after create-pending (${pending})`;
  return undefined;
}

const createBoundaries: Boundary[] = [
  "after-finalizer-add",
  "after-create-pending",
  "before-create",
  "during-create",
  "after-create",
  "after-create-succeeded",
  "after-status-write",
];
const vpcBoundaries: Boundary[] = [
  "after-create-pending",
  "during-create",
  "after-create",
  "after-create-succeeded",
  "after-status-write",
];
const deleteBoundaries: Boundary[] = [
  "before-delete",
  "during-delete",
  "after-delete",
  "after-status-write",
  "after-unpublish",
  "during-finalizer-removal",
];

const createdQueues: string[] = [];
const createdVpcs: string[] = [];

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
});

afterAll(async () => {
  // Deleting what the create scenarios left Ready is one more check: nothing is stuck on a finalizer.
  const reconciler = newReconciler(kube);
  await Promise.all(
    [...createdQueues.map((n) => [Queue, n] as const), ...createdVpcs.map((n) => [VPC, n] as const)].map(
      async ([def, name]) => {
        await kube.delete(def, name);
        await settle(reconciler, keyOf(def, name), 10);
      },
    ),
  );
  const stuck = (
    await Promise.all([
      ...createdQueues.map((n) => getMr(kube, Queue, n)),
      ...createdVpcs.map((n) => getMr(kube, VPC, n)),
    ])
  ).filter(Boolean);
  await forceDelete(kube, Queue, createdQueues);
  await forceDelete(kube, VPC, createdVpcs);
  tally.report();
  expect(stuck.map((o) => o?.metadata.name)).toEqual([]);
  expect(tally.lost).toBe(0);
});

// Independent tests (own objects): they run at once; the children spend most of their time waiting.
describe.concurrent("crash consistency: a worker process killed at every step boundary, then restarted", () => {
  it("SQS Queue create: one queue, Ready, for every boundary", async () => {
    const mine = tally.scope("crash#1");
    await mapLimit(createBoundaries, WIDTH, async (boundary) => {
      const name = `${RUN}-c-${boundary}`;
      createdQueues.push(name);
      await kube.create(Queue, queueObject(name));
      const problem =
        (await crashAndRestart(keyOf(Queue, name), boundary)) ??
        (await checkReady(Queue, name)) ??
        (await motoQueues(name).then((q) => {
          const exact = q.filter((u) => u.endsWith(`/${name}`)).length;
          return exact === 1 ? undefined : `${exact} queues named ${name} in moto`;
        }));
      mine.record(`queue create / ${boundary}`, problem === undefined, problem);
    });
    // By prefix: every queue this test made in moto, one per scenario and nothing else.
    expect(await motoQueues(`${RUN}-c-`)).toHaveLength(createBoundaries.length);
    expect(mine.lost()).toEqual([]);
  }, 120_000);

  it("VPC create (the cloud chooses the id; found again by its ownership tag): exactly one VPC", async () => {
    const mine = tally.scope("crash#2");
    await mapLimit(vpcBoundaries, WIDTH, async (boundary) => {
      const name = `${RUN}-v-${boundary}`;
      createdVpcs.push(name);
      await kube.create(VPC, vpcObject(name));
      const uid = (await getMr(kube, VPC, name))?.metadata.uid ?? "";
      let problem = (await crashAndRestart(keyOf(VPC, name), boundary)) ?? (await checkReady(VPC, name));
      const vpcs = await motoVpcsOwnedBy(uid);
      const recorded = (await getMr(kube, VPC, name))?.metadata.annotations?.[Annotations.externalName];
      if (!problem && vpcs.length !== 1) problem = `${vpcs.length} VPCs carry this resource's uid`;
      if (!problem && recorded !== vpcs[0]) problem = `external-name ${recorded} is not the VPC ${vpcs[0]}`;
      mine.record(`vpc create / ${boundary}`, problem === undefined, problem);
    });
    expect(mine.lost()).toEqual([]);
  }, 120_000);

  it("SQS Queue delete: queue gone, object gone (no orphaned finalizer), for every boundary", async () => {
    const mine = tally.scope("crash#3");
    const reconciler = newReconciler(kube);
    await mapLimit(deleteBoundaries, WIDTH, async (boundary) => {
      const name = `${RUN}-d-${boundary}`;
      await kube.create(Queue, queueObject(name));
      await settle(reconciler, keyOf(Queue, name));
      let problem = await checkReady(Queue, name);
      if (!problem) {
        await kube.delete(Queue, name);
        problem = await crashAndRestart(keyOf(Queue, name), boundary);
      }
      const left = await getMr(kube, Queue, name);
      if (!problem && left)
        problem = `object still there (finalizers ${JSON.stringify(left.metadata.finalizers)})`;
      const queues = await motoQueues(name);
      if (!problem && queues.length !== 0) problem = `${queues.length} queues left in moto`;
      if (problem) createdQueues.push(name);
      mine.record(`queue delete / ${boundary}`, problem === undefined, problem);
    });
    expect(mine.lost()).toEqual([]);
  }, 120_000);
});
