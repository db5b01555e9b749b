// Area 2 — delivery. At-least-once queues deliver duplicates, out of order, and again after a worker
// dies holding a message; some messages can never succeed. Shown here:
// - one key delivered 50× at once, shuffled, to 4 independent reconcilers (each its own Kube client) →
//   exactly one Create reaches the cloud (counted by a proxy in front of moto, and by the engines);
// - a message a worker received and then died holding comes back after the SQS visibility timeout (moto)
//   and is reconciled;
// - a poison message and a resource whose reconcile always fails reach the DLQ after maxReceiveCount, the
//   resource carries the dead-letter note, and their batch neighbour becomes Ready, never dead-lettered.
import { ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { awsKinds, awsProviderConfigKinds } from "../../functions/aws/kinds.ts";
import { VPC } from "../../shared/api/aws/ec2.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import type { ManagedKindDef } from "../../shared/api/managed.ts";
import { KubeEventRecorder } from "../../shared/kube/events.ts";
import { encodeMessage, makeMessage, REASONS } from "../../shared/queue/message.ts";
import { DEAD_LETTER_EVENT_REASON, deadLetterNote } from "../../shared/worker/dead-letter.ts";
import { handleSqsBatch, type SqsBatchDeps } from "../../shared/worker/sqs.ts";
import { createWorker, typesOf } from "../../shared/worker/worker.ts";
import { LambdaSqsPoller, peekBodies } from "../integration/functions/support.ts";
import { createAwsProviderConfig, ensureCrds, motoSqs } from "../support/aws.ts";
import { env, newKube, sleep, uniqueName } from "../support/env.ts";
import { FaultProxy } from "../support/fault-proxy.ts";
import { ensureSqsQueue } from "../support/queues.ts";
import { captureLogger, conditionOf, getMr, keyOf, newReconciler, settle } from "../support/reconcile.ts";
import type { Reconciler } from "../support/routed.ts";
import {
  createAwsProviderConfigAt,
  eventsFor,
  forceDelete,
  motoQueues,
  motoVpcsOwnedBy,
  Tally,
} from "./support.ts";

const kube = newKube();
const sqs = motoSqs();
const PC = uniqueName("pc-deliv");
const PROXIED_PC = uniqueName("pc-deliv-proxy");
const tally = new Tally("2 delivery");
const queues: string[] = [];
const vpcs: string[] = [];
let proxy: FaultProxy;

const mrObject = (
  def: ManagedKindDef,
  name: string,
  pc: string,
  forProvider: Record<string, unknown> = {},
) => ({
  apiVersion: def.apiVersion,
  kind: def.kind,
  metadata: { name },
  spec: { forProvider, providerConfigRef: { name: pc } },
});

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

beforeAll(async () => {
  await ensureCrds();
  proxy = await FaultProxy.start(env("AWS_ENDPOINT_URL"));
  await createAwsProviderConfig(kube, PC);
  await createAwsProviderConfigAt(kube, PROXIED_PC, proxy.url);
});

afterAll(async () => {
  const r = newReconciler(kube);
  for (const [def, names] of [
    [Queue, queues],
    [VPC, vpcs],
  ] as const) {
    await Promise.all(
      names.map(async (n) => {
        await kube.delete(def, n);
        await settle(r, keyOf(def, n), 8);
      }),
    );
    await forceDelete(kube, def, names);
  }
  await proxy.stop();
  sqs.destroy();
  tally.report();
  expect(tally.lost).toBe(0);
});

// The tests of this file are independent (own objects, own queues): they run at once.
describe.concurrent("delivery: duplicates, redelivery, poison", () => {
  it("50 concurrent, shuffled deliveries of one key across 4 reconcilers make exactly one Create", async () => {
    const mine = tally.scope("delivery#1");
    const workers: Reconciler[] = Array.from({ length: 4 }, () => newReconciler(newKube()));
    const cases: Array<[ManagedKindDef, string, string, Record<string, unknown>]> = [
      [Queue, uniqueName("fdq"), "CreateQueue", { visibilityTimeoutSeconds: 40 }],
      [Queue, uniqueName("fdq"), "CreateQueue", {}],
      [Queue, uniqueName("fdq"), "CreateQueue", { delaySeconds: 1 }],
      [VPC, uniqueName("fdv"), "CreateVpc", { region: "us-east-1", cidrBlock: "10.61.0.0/16" }],
      [VPC, uniqueName("fdv"), "CreateVpc", { region: "us-east-1", cidrBlock: "10.62.0.0/16" }],
    ];
    for (const [def, name, createAction, forProvider] of cases) {
      (def === VPC ? vpcs : queues).push(name);
      await kube.create(def, mrObject(def, name, PROXIED_PC, forProvider));
      const before = workers.map((w) => w.externalCalls.create);
      const t0 = Date.now();
      // 50 deliveries with mixed reasons and ages, in random order, spread over the 4 workers.
      const deliveries = shuffle(
        Array.from({ length: 50 }, (_, i) => ({
          worker: workers[i % 4] as Reconciler,
          delayMs: Math.floor(Math.random() * 150),
          reason: REASONS[i % REASONS.length],
        })),
      );
      const outcomes = await Promise.all(
        deliveries.map(async (d) => {
          await sleep(d.delayMs);
          return (await d.worker.reconcile(keyOf(def, name))).outcome;
        }),
      );
      // Whatever is left (creating, requeued) settles on one worker, as the queue would bring it back.
      await settle(workers[0] as Reconciler, keyOf(def, name), 15);
      const mr = await getMr(kube, def, name);
      const engineCreates = workers.reduce((n, w, i) => n + w.externalCalls.create - (before[i] ?? 0), 0);
      const wireCreates = proxy.between(
        t0,
        Date.now() + 1,
        (c) => c.action === createAction && (def === VPC || c.subject === name),
      ).length;
      const cloud =
        def === VPC
          ? (await motoVpcsOwnedBy(mr?.metadata.uid ?? "")).length
          : (await motoQueues(name)).filter((u) => u.endsWith(`/${name}`)).length;
      const ready = conditionOf(mr, "Ready")?.status === "True";
      const detail = `engine creates ${engineCreates}, ${createAction} on the wire ${wireCreates}, in the cloud ${cloud}, Ready ${ready}; outcomes ${[...new Set(outcomes)].join(",")}`;
      mine.record(
        `50× ${def.kind} ${name}`,
        engineCreates === 1 && wireCreates === 1 && cloud === 1 && ready,
        detail,
      );
    }
    expect(mine.lost()).toEqual([]);
  }, 90_000);

  it("a message whose worker died holding it comes back after the visibility timeout and is reconciled", async () => {
    const mine = tally.scope("delivery#2");
    const pair = await ensureSqsQueue(sqs, {
      name: uniqueName("fdel-vis"),
      visibilityTimeoutSeconds: 2,
      maxReceiveCount: 5,
    });
    const name = uniqueName("fdq-vis");
    queues.push(name);
    await kube.create(Queue, mrObject(Queue, name, PC));
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: pair.queueUrl,
        MessageBody: encodeMessage(
          makeMessage({ apiVersion: Queue.apiVersion, kind: Queue.kind, name }, "watch"),
        ),
      }),
    );
    // A worker takes the message and dies: no delete, no visibility change.
    const taken = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: pair.queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 2 }),
    );
    expect(taken.Messages).toHaveLength(1);
    const { logger } = captureLogger();
    const deps: SqsBatchDeps = {
      sqs,
      logger,
      queueUrl: pair.queueUrl,
      maxReceiveCount: 5,
      reconcile: createWorker({
        kube,
        kinds: awsKinds,
        providerConfigKinds: awsProviderConfigKinds,
        logger,
      }).reconcile,
    };
    const poller = new LambdaSqsPoller({
      sqs,
      queueUrl: pair.queueUrl,
      queueArn: pair.queueArn,
      handler: (event) => handleSqsBatch(deps, event),
    });
    const t0 = Date.now();
    await poller.pollUntil(
      async () => conditionOf(await getMr(kube, Queue, name), "Ready")?.status === "True",
      30_000,
      "the redelivered message to be reconciled",
    );
    const firstSeen = poller.invocations[0]?.records[0];
    const redeliveredAfterMs = Date.now() - t0;
    const ok = firstSeen?.attributes.ApproximateReceiveCount === "2";
    mine.record(
      "redelivery after the visibility timeout",
      ok,
      `first handled receive #${firstSeen?.attributes.ApproximateReceiveCount}, Ready after ${redeliveredAfterMs} ms`,
    );
    expect(ok).toBe(true);
  }, 60_000);

  it("poison and always-failing messages reach the DLQ after maxReceiveCount; the resource says so; the neighbour is fine", async () => {
    const mine = tally.scope("delivery#3");
    const MAX = 2;
    const pair = await ensureSqsQueue(sqs, {
      name: uniqueName("fdel-dlq"),
      visibilityTimeoutSeconds: 2,
      maxReceiveCount: MAX,
    });
    const good = uniqueName("fdq-good");
    const failing = uniqueName("fdq-failing");
    queues.push(good, failing);
    await kube.create(Queue, mrObject(Queue, good, PC));
    // Its ProviderConfig does not exist: every reconcile fails, and says why.
    await kube.create(Queue, mrObject(Queue, failing, uniqueName("pc-missing")));
    const poison = `{"v":1,"apiVersion":"sqs.aws.driftless.dev/v1alpha1","kind":"Queue","name":"${uniqueName("poison")}"`;
    const bodies = [
      encodeMessage(makeMessage({ apiVersion: Queue.apiVersion, kind: Queue.kind, name: good }, "watch")),
      encodeMessage(makeMessage({ apiVersion: Queue.apiVersion, kind: Queue.kind, name: failing }, "watch")),
      poison,
    ];
    for (const MessageBody of bodies)
      await sqs.send(new SendMessageCommand({ QueueUrl: pair.queueUrl, MessageBody }));

    const { lines, logger } = captureLogger();
    const noteKube = newKube();
    const deps: SqsBatchDeps = {
      sqs,
      logger,
      queueUrl: pair.queueUrl,
      maxReceiveCount: MAX,
      reconcile: createWorker({
        kube,
        kinds: awsKinds,
        providerConfigKinds: awsProviderConfigKinds,
        logger,
      }).reconcile,
      noteDeadLetter: deadLetterNote({
        kube: noteKube,
        types: typesOf(awsKinds, awsProviderConfigKinds),
        events: new KubeEventRecorder(noteKube),
        logger,
      }),
    };
    const poller = new LambdaSqsPoller({
      sqs,
      queueUrl: pair.queueUrl,
      queueArn: pair.queueArn,
      handler: (event) => handleSqsBatch(deps, event),
    });
    const dead: string[] = [];
    await poller.pollUntil(
      async () => {
        dead.push(...(await peekBodies(sqs, pair.dlqUrl, 1, 0)));
        return dead.length >= 2;
      },
      60_000,
      "the poison and the failing key in the DLQ",
    );
    // The good neighbour may still be settling its create; let the queue finish it.
    await poller.pollUntil(
      async () => conditionOf(await getMr(kube, Queue, good), "Ready")?.status === "True",
      20_000,
      "the neighbour to become Ready",
    );

    const names = dead.map((b) => (b === poison ? "poison" : (JSON.parse(b) as { name: string }).name));
    const receives = (pred: (b: string) => boolean) =>
      poller.invocations.flatMap((i) => i.records).filter((r) => pred(r.body)).length;
    const note = (await eventsFor(kube, failing)).find((e) => e.reason === DEAD_LETTER_EVENT_REASON);
    const goodMr = await getMr(kube, Queue, good);
    const failingSynced = conditionOf(await getMr(kube, Queue, failing), "Synced");

    mine.record(
      "poison message → DLQ after maxReceiveCount",
      names.includes("poison") && receives((b) => b === poison) === MAX,
      `DLQ: ${names.join(", ")}; poison received ${receives((b) => b === poison)}×`,
    );
    mine.record(
      "always-failing resource → DLQ after maxReceiveCount, with the dead-letter note",
      names.includes(failing) &&
        receives((b) => b.includes(`"name":"${failing}"`)) === MAX &&
        note?.type === "Warning" &&
        /dead-lettered after 2 attempts; the drift sweep retries within the poll interval/.test(
          note?.message ?? "",
        ) &&
        failingSynced?.status === "False" &&
        /ProviderConfig/.test(failingSynced?.message ?? ""),
      `event: ${note?.message}; Synced: ${failingSynced?.message}`,
    );
    mine.record(
      "batch neighbour unaffected",
      conditionOf(goodMr, "Ready")?.status === "True" && !names.includes(good),
      `neighbour Ready ${conditionOf(goodMr, "Ready")?.status}`,
    );
    mine.record(
      "malformed message logged once, by id, without its body",
      lines.filter((l) => l.includes('"level":"error"') && l.includes("malformed message")).length === 1 &&
        !lines.some((l) => l.includes("poison-")),
      lines.filter((l) => l.includes("malformed")).join("\n"),
    );
    expect(mine.lost()).toEqual([]);
  }, 120_000);
});
