// CloudTrail via EventBridge on the real queue: an out-of-band SetQueueAttributes on moto (another
// client's User-Agent), the documented event for it sent to an SQS queue on moto, received the way
// Lambda's poller does and handed to handleSqsBatch → the drift is corrected in that invocation, with no
// sweep. driftless's own write and an unknown queue are dropped: no reconcile, at most one LIST per shape of
// the kind in use (shared/reconciler/shape-marks.ts).
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
} from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { EXTERNAL_KEY_LABEL, externalKeyOf } from "../../../shared/api/cloud-events.ts";
import { awsKinds, awsProviderConfigKinds } from "../../../shared/providers/aws/kinds.ts";
import { noopLogger } from "../../../shared/reconciler/contract.ts";
import { handleSqsBatch, type SqsEvent } from "../../../shared/worker/sqs.ts";
import { createWorker } from "../../../shared/worker/worker.ts";
import { createAwsProviderConfig, ensureCrds, motoSqs } from "../../support/aws.ts";
import { fixture } from "../../support/cloud-events.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { captureLogger, conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { LambdaSqsPoller } from "../functions/support.ts";
import { cleanup, TEST_LABEL } from "../pipeline/helpers.ts";
import { listsPerUnmanagedEvent } from "./shapes.ts";

const kube = newKube();
const sqs = motoSqs();
const label = uniqueName("ce-aws");
const pc = uniqueName("pc-ce-aws");
const managed = uniqueName("ce-orders");
let workQueueUrl = "";
let workQueueArn = "";

const OWN_ROLE = "arn:aws:iam::111122223333:role/driftless-prod-reconcile";
/** The worker as the Lambda builds it, over a Kube of its own (its request counts are this test's). */
const workerKube = newKube();
const { logger, lines } = captureLogger();
const worker = createWorker({
  kube: workerKube,
  kinds: awsKinds,
  providerConfigKinds: awsProviderConfigKinds,
  logger,
  rateLimit: false,
  // The reconcile role, derived at deploy time (serverless.yml): its own writes are dropped by principal.
  ownPrincipals: [OWN_ROLE],
});
const handler = (event: SqsEvent) =>
  handleSqsBatch(
    {
      sqs,
      reconcile: worker.reconcile,
      cloudEvents: worker.cloudEvents,
      logger: noopLogger,
      queueUrl: workQueueUrl,
    },
    event,
  );
const poller = () => new LambdaSqsPoller({ sqs, queueUrl: workQueueUrl, queueArn: workQueueArn, handler });

/** The documented SetQueueAttributes event, about queue `name`. */
const eventFor = (name: string, replace: Record<string, string> = {}) =>
  fixture("aws-sqs-set-queue-attributes.json", { "orders-queue": name, ...replace });

async function deliver(body: string) {
  await sqs.send(new SendMessageCommand({ QueueUrl: workQueueUrl, MessageBody: body }));
  workerKube.resetStats();
  const p = poller();
  // Moto makes a sent message receivable at once; a few empty receives (1 s long polls) at most.
  for (let i = 0; i < 5 && p.invocations.length === 0; i++) await p.pollOnce();
  return p.invocations;
}

const queueUrlOf = async (name: string) =>
  String((await getMr(kube, Queue, name))?.status?.atProvider?.url ?? "");

const visibility = async (name: string) => {
  const url = await queueUrlOf(name);
  const out = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["VisibilityTimeout"] }),
  );
  return out.Attributes?.VisibilityTimeout;
};

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, pc);
  const work = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName("ce-work") }));
  workQueueUrl = work.QueueUrl ?? "";
  workQueueArn =
    (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: workQueueUrl, AttributeNames: ["QueueArn"] })))
      .Attributes?.QueueArn ?? "";
  await kube.create(Queue, {
    apiVersion: Queue.apiVersion,
    kind: Queue.kind,
    metadata: { name: managed, labels: { [TEST_LABEL]: label } },
    spec: {
      forProvider: { region: "us-east-1", visibilityTimeoutSeconds: 30 },
      providerConfigRef: { name: pc },
    },
  });
  await settle(newReconciler(kube), keyOf(Queue, managed));
}, 120_000);

afterAll(async () => {
  await cleanup(kube, [managed]);
  await sqs.send(new DeleteQueueCommand({ QueueUrl: workQueueUrl })).catch(() => undefined);
}, 60_000);

describe("cloud events: CloudTrail via EventBridge on SQS", () => {
  it("the managed queue carries the index label of its external name", async () => {
    const mr = await getMr(kube, Queue, managed);
    expect(mr?.metadata.labels?.[EXTERNAL_KEY_LABEL]).toBe(externalKeyOf(Queue, managed));
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
  });

  it("an out-of-band SetQueueAttributes is corrected by its event, in the invocation that receives it", async () => {
    const url = await queueUrlOf(managed);
    // Someone else's tool (its own SDK client: no driftless User-Agent).
    await sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: "77" } }));
    expect(await visibility(managed)).toBe("77");

    const invocations = await deliver(eventFor(managed));

    expect(invocations).toHaveLength(1);
    expect(invocations[0]?.response.batchItemFailures).toEqual([]);
    expect(await visibility(managed)).toBe("30");
    // The LIST found it; the reconcile then read it (GET) like any message.
    // One label-selected LIST: the cluster-scoped shape finds it, so the namespaced (.m.) one is not asked.
    expect(workerKube.stats.lists).toBe(1);
    expect(workerKube.stats.byOperation["get Queue"]).toBeGreaterThanOrEqual(1);
    expect(lines.some((l) => l.includes("cloud event: reconciling") && l.includes(managed))).toBe(true);
  });

  it("driftless's own write (its role) is dropped before any request to the API server", async () => {
    const before = worker.engine.externalCalls.observe;
    const invocations = await deliver(
      eventFor(managed, {
        "arn:aws:iam::111122223333:role/PlatformAdmin": OWN_ROLE,
        "assumed-role/PlatformAdmin": "assumed-role/driftless-prod-reconcile",
      }),
    );
    expect(invocations[0]?.response.batchItemFailures).toEqual([]);
    expect(workerKube.stats.lists + workerKube.stats.gets + workerKube.stats.writes).toBe(0);
    expect(worker.engine.externalCalls.observe).toBe(before);
  });

  it("an event about a queue driftless does not manage costs one LIST per shape of the kind in use and nothing else", async () => {
    // Once per cluster, a shape without a mark is checked (any labelled object?) and the answer recorded;
    // a second event reads the marks again should that write have lost to another test's on this stack.
    for (let i = 0; i < 2; i++) await deliver(eventFor(uniqueName("not-ours")));
    const expected = await listsPerUnmanagedEvent(kube, Queue);
    const before = worker.engine.externalCalls.observe;
    const invocations = await deliver(eventFor(uniqueName("not-ours")));
    expect(invocations[0]?.response.batchItemFailures).toEqual([]);
    expect(workerKube.stats.lists).toBe(expected);
    // Nothing else: no write, and no GET but, at most, the one read of the shapes' marks whose 30 s cache
    // may run out during this test.
    const marksReads = workerKube.stats.byOperation["get ConfigMap"] ?? 0;
    expect(marksReads).toBeLessThanOrEqual(1);
    expect(workerKube.stats.gets - marksReads + workerKube.stats.writes).toBe(0);
    expect(worker.engine.externalCalls.observe).toBe(before);
  });
});
