// The AWS path end to end on the local stack: a Queue managed resource created in the real API server →
// the forwarder (functions/forwarder.ts) → SQS on moto → messages received as Lambda's poller receives
// them → the Lambda handler module (functions/aws/reconcile.ts) with the real SQS event shape → Ready.
import { GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunningForwarder } from "../../../functions/forwarder.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { createAwsProviderConfig, ensureCrds, motoSqs } from "../../support/aws.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { ensureSqsQueue, type SqsQueuePair } from "../../support/queues.ts";
import { captureLogger, conditionOf, getMr } from "../../support/reconcile.ts";
import { TEST_LABEL } from "../pipeline/helpers.ts";
import { captureEmf, LambdaSqsPoller } from "./support.ts";

const kube = newKube();
const sqs = motoSqs();
const PC = uniqueName("pc-fn-aws");
const LABEL = uniqueName("fn-aws");
let queue: SqsQueuePair;
let forwarder: RunningForwarder | undefined;
let handler: typeof import("../../../functions/aws/reconcile.ts").handler;
/** CloudWatch EMF lines the handler wrote to stdout (kept out of the test output). */
const emfLines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  captureEmf(emfLines);
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
  queue = await ensureSqsQueue(sqs, {
    name: uniqueName("fn-work"),
    visibilityTimeoutSeconds: 30,
    maxReceiveCount: 5,
  });
  // The Lambda's environment, as serverless.yml sets it; the queue URL is left to the record's ARN.
  Object.assign(process.env, {
    LOG_LEVEL: "warn",
    DRIFTLESS_QUEUE: "sqs",
    DRIFTLESS_SQS_DLQ_URL: queue.dlqUrl,
    DRIFTLESS_SQS_MAX_RECEIVE_COUNT: "5",
  });
  ({ handler } = await import("../../../functions/aws/reconcile.ts"));
  const { readForwarderConfig, startForwarder } = await import("../../../functions/forwarder.ts");
  forwarder = await startForwarder(
    readForwarderConfig({
      ...process.env,
      DRIFTLESS_QUEUE: "sqs",
      DRIFTLESS_SQS_QUEUE_URL: queue.queueUrl,
      DRIFTLESS_LABEL_SELECTOR: `${TEST_LABEL}=${LABEL}`,
    }),
    captureLogger().logger,
  );
});

afterAll(async () => {
  vi.restoreAllMocks();
  await forwarder?.stop();
  sqs.destroy();
});

describe("AWS: forwarder → SQS → Lambda handler", () => {
  it("reconciles a new Queue managed resource to Ready", async () => {
    // Prepare
    const name = uniqueName("fn-q");
    await kube.create(Queue, {
      apiVersion: Queue.apiVersion,
      kind: Queue.kind,
      metadata: { name, labels: { [TEST_LABEL]: LABEL } },
      spec: { forProvider: { visibilityTimeoutSeconds: 42 }, providerConfigRef: { name: PC } },
    });
    const poller = new LambdaSqsPoller({ sqs, queueUrl: queue.queueUrl, queueArn: queue.queueArn, handler });

    // Act: play Lambda's poller until the resource is Ready and the requeue after create came back and
    // was settled (a visibility change on the original message, so its second receive).
    const secondDeliveryDone = () =>
      poller.invocations.some((i) =>
        i.records.some(
          (r) =>
            r.attributes.ApproximateReceiveCount === "2" &&
            !i.response.batchItemFailures.some((f) => f.itemIdentifier === r.messageId),
        ),
      );
    await poller.pollUntil(
      async () =>
        secondDeliveryDone() && conditionOf(await getMr(kube, Queue, name), "Ready")?.status === "True",
      60_000,
      `${name} Ready`,
    );

    // Assess
    const mr = await getMr(kube, Queue, name);
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
    expect((await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl).toMatch(
      new RegExp(`/${name}$`),
    );
    const records = poller.invocations.flatMap((i) => i.records);
    expect(records.length).toBeGreaterThanOrEqual(2); // created (requeued), then observed in sync
    expect(records[0]).toMatchObject({ eventSource: "aws:sqs", eventSourceARN: queue.queueArn });
    expect(JSON.parse(records[0]?.body ?? "{}")).toMatchObject({ kind: "Queue", name, reason: "watch" });
    expect(poller.invocations.at(-1)?.response).toEqual({ batchItemFailures: [] });
  });

  it("writes CloudWatch EMF metrics after each batch: reconciles by kind and outcome, queue age", async () => {
    // Prepare
    const name = uniqueName("fn-q-emf");
    await kube.create(Queue, {
      apiVersion: Queue.apiVersion,
      kind: Queue.kind,
      metadata: { name, labels: { [TEST_LABEL]: LABEL } },
      spec: { forProvider: {}, providerConfigRef: { name: PC } },
    });
    const poller = new LambdaSqsPoller({ sqs, queueUrl: queue.queueUrl, queueArn: queue.queueArn, handler });
    const mark = emfLines.length;

    // Act
    await poller.pollUntil(
      async () => conditionOf(await getMr(kube, Queue, name), "Ready")?.status === "True",
      60_000,
      `${name} Ready`,
    );

    // Assess: published when each invocation returned (nothing left for the next one), in namespace
    // "driftless" with the service dimension, one line per dimension set.
    const lines = emfLines.slice(mark) as Array<{
      _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][] }> };
      [k: string]: unknown;
    }>;
    const created = lines.find((l) => l.kind === "Queue" && l.outcome === "created");
    expect(created).toMatchObject({ service: "driftless-reconcile", Reconciles: 1 });
    expect(created?._aws.CloudWatchMetrics[0]).toMatchObject({
      Namespace: "driftless",
      Dimensions: [["service", "kind", "outcome"]],
    });
    expect(lines.find((l) => l.kind === "Queue" && l.verb === "create")).toMatchObject({ CloudApiCalls: 1 });
    expect(lines.some((l) => "QueueAge" in l && !("kind" in l))).toBe(true);
    expect(lines.find((l) => "ReconcileDuration" in l)).toMatchObject({ kind: "Queue" });
  });
});
