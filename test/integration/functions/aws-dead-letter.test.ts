// Dead-lettering through the real redrive policy (moto): the drift sweep handler (functions/aws/sweep.ts)
// enqueues two managed resources — one reconciles, one keeps failing — and a poison message lands in the
// same batch. The Lambda handler settles each record on its own: the poison and the failing key reach the
// DLQ after maxReceiveCount receives, while their neighbour becomes Ready and is never dead-lettered.
import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { createAwsProviderConfig, ensureCrds, motoSqs } from "../../support/aws.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { ensureSqsQueue, type SqsQueuePair } from "../../support/queues.ts";
import { conditionOf, getMr } from "../../support/reconcile.ts";
import { TEST_LABEL } from "../pipeline/helpers.ts";
import { LambdaSqsPoller, peekBodies } from "./support.ts";

const kube = newKube();
const sqs = motoSqs();
const PC = uniqueName("pc-fn-dlq");
const LABEL = uniqueName("fn-dlq");
const MAX_RECEIVE_COUNT = 3;
let queue: SqsQueuePair;
let reconcileHandler: typeof import("../../../functions/aws/reconcile.ts").handler;
let sweepHandler: typeof import("../../../functions/aws/sweep.ts").handler;

const queueObject = (name: string, providerConfig: string) => ({
  apiVersion: Queue.apiVersion,
  kind: Queue.kind,
  metadata: { name, labels: { [TEST_LABEL]: LABEL } },
  spec: { forProvider: {}, providerConfigRef: { name: providerConfig } },
});

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
  // A short visibility timeout, so failed receives come back quickly.
  queue = await ensureSqsQueue(sqs, {
    name: uniqueName("fn-dlq"),
    visibilityTimeoutSeconds: 2,
    maxReceiveCount: MAX_RECEIVE_COUNT,
  });
  // No DRIFTLESS_SQS_DLQ_URL: malformed messages take the redrive path too.
  Object.assign(process.env, {
    LOG_LEVEL: "error",
    DRIFTLESS_QUEUE: "sqs",
    DRIFTLESS_SQS_QUEUE_URL: queue.queueUrl,
    DRIFTLESS_SQS_MAX_RECEIVE_COUNT: String(MAX_RECEIVE_COUNT),
    DRIFTLESS_SWEEP_INTERVAL: "1m",
    DRIFTLESS_LABEL_SELECTOR: `${TEST_LABEL}=${LABEL}`,
    // No CloudWatch EMF lines in the test output (aws-reconcile.test.ts checks them).
    POWERTOOLS_METRICS_DISABLED: "true",
  });
  ({ handler: reconcileHandler } = await import("../../../functions/aws/reconcile.ts"));
  ({ handler: sweepHandler } = await import("../../../functions/aws/sweep.ts"));
});

afterAll(() => {
  sqs.destroy();
});

describe("AWS: poison and failing keys dead-letter; neighbours succeed", () => {
  it("moves exactly the poison message and the failing key to the DLQ after maxReceiveCount", async () => {
    // Prepare: one resource that reconciles, one whose ProviderConfig does not exist.
    const good = uniqueName("fn-good");
    const failing = uniqueName("fn-failing");
    await kube.create(Queue, queueObject(good, PC));
    await kube.create(Queue, queueObject(failing, uniqueName("pc-missing")));
    const poison = `{"v":1,"kind":"Queue","name":"${uniqueName("poison")}"`; // truncated JSON

    // Act: the scheduled sweep enqueues both (neither is Ready yet); the poison arrives alongside.
    const swept = await sweepHandler({ time: new Date().toISOString() });
    await sqs.send(new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: poison }));
    const poller = new LambdaSqsPoller({
      sqs,
      queueUrl: queue.queueUrl,
      queueArn: queue.queueArn,
      handler: reconcileHandler,
    });
    let deadLettered: string[] = [];
    await poller.pollUntil(
      async () => {
        if (conditionOf(await getMr(kube, Queue, good), "Ready")?.status !== "True") return false;
        deadLettered = [...deadLettered, ...(await peekBodies(sqs, queue.dlqUrl, 1, 0))];
        return deadLettered.length >= 2;
      },
      120_000,
      "the DLQ to receive the poison and the failing key",
    );

    // Assess
    expect(swept).toMatchObject({ listed: 2, enqueued: 2, attention: 2 });
    const first = poller.invocations[0];
    expect(first?.records).toHaveLength(3); // all three in one batch
    const failingBodies = deadLettered
      .filter((b) => b !== poison)
      .map((b) => JSON.parse(b) as { name: string });
    expect(deadLettered).toContain(poison);
    expect(failingBodies.map((b) => b.name)).toEqual([failing]);
    // The failing key was retried by the queue, up to the limit, with its neighbour done meanwhile.
    const receivesOf = (pred: (body: string) => boolean) =>
      poller.invocations.flatMap((i) => i.records).filter((r) => pred(r.body)).length;
    expect(receivesOf((b) => b === poison)).toBe(MAX_RECEIVE_COUNT);
    expect(receivesOf((b) => b.includes(`"name":"${failing}"`))).toBe(MAX_RECEIVE_COUNT);
    const goodMr = await getMr(kube, Queue, good);
    expect(conditionOf(goodMr, "Synced")).toMatchObject({ status: "True" });
    expect(conditionOf(await getMr(kube, Queue, failing), "Synced")).toMatchObject({
      status: "False",
      reason: "ReconcileError",
    });
  }, 150_000);
});
