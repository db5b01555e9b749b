// Claims on the serverless path: a Queue claim (claims.driftless.dev) served by an SQS default class
// becomes Ready through the forwarder (functions/forwarder.ts) → SQS on moto → the Lambda handler
// (functions/aws/reconcile.ts), which routes the claim's key to the claim reconciler and the SQS Queue it
// makes to the managed reconciler; deleting the claim (reclaim policy Delete) goes the same way.
import { GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningForwarder } from "../../../functions/forwarder.ts";
import { Queue as SqsQueue } from "../../../shared/api/aws/sqs.ts";
import { Queue } from "../../../shared/api/claims/claims.ts";
import { SQSQueueClass } from "../../../shared/api/claims/classes.ts";
import { ClaimLabels } from "../../../shared/api/claims/meta.ts";
import { createAwsProviderConfig, ensureCrds, motoSqs } from "../../support/aws.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { ensureSqsQueue, type SqsQueuePair } from "../../support/queues.ts";
import { captureLogger, getMr, conditionOf as mrCondition } from "../../support/reconcile.ts";
import {
  claimObject,
  classObject,
  conditionOf,
  getClaim,
  isReady,
  newNamespace,
  secretData,
} from "../claims/support.ts";
import { TEST_LABEL } from "../pipeline/helpers.ts";
import { LambdaSqsPoller } from "./support.ts";

const kube = newKube();
const sqs = motoSqs();
const PC = uniqueName("pc-fn-claims");
const LABEL = uniqueName("fn-claims");
const CLASS = uniqueName("fn-sqs-default");
let namespace: string;
let queue: SqsQueuePair;
const forwarders: RunningForwarder[] = [];
let handler: typeof import("../../../functions/aws/reconcile.ts").handler;

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
  namespace = await newNamespace(kube, "fn-claims");
  // The default Queue class of this test's namespace only: parallel suites never see a default here.
  await kube.create(
    SQSQueueClass,
    classObject(
      SQSQueueClass,
      CLASS,
      {
        providerConfigRef: { name: PC },
        allowedNamespaces: [namespace],
        forProvider: { tags: { via: "class" } },
      },
      { isDefault: true, labels: { [TEST_LABEL]: LABEL } },
    ),
  );
  queue = await ensureSqsQueue(sqs, {
    name: uniqueName("fn-claims-work"),
    visibilityTimeoutSeconds: 30,
    maxReceiveCount: 5,
  });
  // The Lambda's environment, as serverless.yml sets it (claims are served by default).
  Object.assign(process.env, {
    LOG_LEVEL: "warn",
    DRIFTLESS_QUEUE: "sqs",
    DRIFTLESS_SQS_DLQ_URL: queue.dlqUrl,
    DRIFTLESS_SQS_MAX_RECEIVE_COUNT: "5",
    // No CloudWatch EMF lines in the test output (aws-reconcile.test.ts checks them).
    POWERTOOLS_METRICS_DISABLED: "true",
  });
  ({ handler } = await import("../../../functions/aws/reconcile.ts"));
  const { readForwarderConfig, startForwarder } = await import("../../../functions/forwarder.ts");
  // The deployment's forwarder, twice, so this test sees only its own objects on the shared cluster: its
  // claim (and class) by the test label, and the managed resources made for claims in its namespace by
  // the claim labels the claim reconciler puts on them.
  for (const selector of [`${TEST_LABEL}=${LABEL}`, `${ClaimLabels.namespace}=${namespace}`]) {
    forwarders.push(
      await startForwarder(
        readForwarderConfig({
          ...process.env,
          DRIFTLESS_QUEUE: "sqs",
          DRIFTLESS_SQS_QUEUE_URL: queue.queueUrl,
          DRIFTLESS_LABEL_SELECTOR: selector,
        }),
        captureLogger().logger,
      ),
    );
  }
});

afterAll(async () => {
  for (const f of forwarders) await f.stop();
  await kube.delete(SQSQueueClass, CLASS).catch(() => undefined);
  sqs.destroy();
});

describe("AWS: a claim through forwarder → SQS → Lambda handler", () => {
  it("binds a Queue claim to an SQS queue from the namespace's default class, Ready with its Secret, and deletes it with the claim", async () => {
    // Prepare
    await kube.create(
      Queue,
      claimObject(
        Queue,
        namespace,
        "orders",
        {
          retentionSeconds: 3600,
          processingTimeoutSeconds: 45,
          writeConnectionSecretToRef: { name: "orders-queue" },
        },
        { labels: { [TEST_LABEL]: LABEL } },
      ),
    );
    const poller = new LambdaSqsPoller({ sqs, queueUrl: queue.queueUrl, queueArn: queue.queueArn, handler });

    // Act: play Lambda's poller until the claim is Ready.
    await poller.pollUntil(
      async () => isReady(await getClaim(kube, Queue, namespace, "orders")),
      90_000,
      `claim ${namespace}/orders Ready`,
    );

    // Assess: bound to an SQS Queue made from the class, Ready, Secret copied to the claim's namespace.
    const claim = await getClaim(kube, Queue, namespace, "orders");
    expect(claim?.spec.classRef).toEqual({ kind: "SQSQueueClass", name: CLASS });
    expect(conditionOf(claim, "Synced")?.status).toBe("True");
    expect(conditionOf(claim, "Bound")?.status).toBe("True");
    const ref = claim?.status?.resourceRef;
    expect(ref).toMatchObject({ apiVersion: SqsQueue.apiVersion, kind: "Queue" });
    const name = ref?.name ?? "";
    const mr = await getMr(kube, SqsQueue, name);
    expect(mrCondition(mr, "Ready")?.status).toBe("True");
    expect(mr?.spec.forProvider).toMatchObject({
      messageRetentionSeconds: 3600,
      visibilityTimeoutSeconds: 45,
      tags: { via: "class" },
    });
    const url = (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
    expect(await secretData(kube, namespace, "orders-queue")).toMatchObject({ service: "sqs", url });
    const bodies = poller.invocations.flatMap((i) => i.records.map((r) => JSON.parse(r.body)));
    expect(bodies).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ apiVersion: Queue.apiVersion, kind: "Queue", namespace, name: "orders" }),
        expect.objectContaining({ apiVersion: SqsQueue.apiVersion, kind: "Queue", name }),
      ]),
    );

    // Act: delete the claim; the class's reclaim policy (Delete) removes the SQS queue first.
    await kube.delete(Queue, "orders", namespace);
    await poller.pollUntil(
      async () =>
        (await getClaim(kube, Queue, namespace, "orders")) === undefined &&
        (await getMr(kube, SqsQueue, name)) === undefined,
      90_000,
      `claim ${namespace}/orders and Queue ${name} gone`,
    );

    // Assess
    await expect(sqs.send(new GetQueueUrlCommand({ QueueName: name }))).rejects.toThrow();
    expect(await secretData(kube, namespace, "orders-queue")).toBeUndefined();
  });
});
