// The doorbell function's Function URL: an AdmissionReview posted the way a Function URL delivers it
// (payload format 2.0) is answered "allowed" and puts the key on the real SQS queue (moto), where the
// reconcile function's SQS path reconciles it. Everything but the path secret is a bare 404.
import { randomBytes } from "node:crypto";
import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import type { LambdaUrlEvent } from "../../../shared/doorbell/platforms.ts";
import { decodeMessage } from "../../../shared/queue/message.ts";
import { admissionReview } from "../../support/admission.ts";
import { createAwsProviderConfig, ensureCrds, motoSqs } from "../../support/aws.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { ensureSqsQueue, type SqsQueuePair } from "../../support/queues.ts";
import { conditionOf, getMr } from "../../support/reconcile.ts";
import { TEST_LABEL } from "../pipeline/helpers.ts";
import { captureEmf, LambdaSqsPoller } from "./support.ts";

const kube = newKube();
const sqs = motoSqs();
const PC = uniqueName("pc-fn-bell");
const LABEL = uniqueName("fn-bell");
const SECRET = randomBytes(20).toString("hex");
let queue: SqsQueuePair;
let handler: typeof import("../../../functions/aws/doorbell.ts").handler;
let reconcile: typeof import("../../../functions/aws/reconcile.ts").handler;

const urlEvent = (path: string, body: unknown, base64 = false): LambdaUrlEvent => {
  const text = JSON.stringify(body);
  return {
    version: "2.0",
    rawPath: path,
    body: base64 ? Buffer.from(text).toString("base64") : text,
    isBase64Encoded: base64,
    headers: { "content-type": "application/json" },
    requestContext: { http: { method: "POST", path } },
  };
};

const review = (obj: Record<string, unknown>) =>
  admissionReview(Queue, {
    uid: "7c5a-request",
    name: (obj.metadata as { name: string }).name,
    operation: "CREATE",
    object: obj,
    options: { fieldManager: "kubectl-client-side-apply" },
  });

async function receiveAll() {
  const out = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: queue.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
  );
  return out.Messages ?? [];
}

beforeAll(async () => {
  captureEmf();
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
  queue = await ensureSqsQueue(sqs, {
    name: uniqueName("fn-bell"),
    visibilityTimeoutSeconds: 30,
    maxReceiveCount: 5,
  });
  Object.assign(process.env, {
    LOG_LEVEL: process.env.BELL_LOG ?? "warn",
    DRIFTLESS_QUEUE: "sqs",
    DRIFTLESS_SQS_QUEUE_URL: queue.queueUrl,
    DRIFTLESS_SQS_DLQ_URL: queue.dlqUrl,
    DRIFTLESS_DOORBELL_SECRET: SECRET,
  });
  ({ handler } = await import("../../../functions/aws/doorbell.ts"));
  ({ handler: reconcile } = await import("../../../functions/aws/reconcile.ts"));
});

afterAll(() => {
  vi.restoreAllMocks();
  sqs.destroy();
});

describe("AWS: Function URL → doorbell function → SQS → reconcile function", () => {
  it("wrong secret, wrong route, GET: a bare 404 / 405 and nothing on the queue", async () => {
    const name = uniqueName("fn-bell-no");
    const obj = { apiVersion: Queue.apiVersion, kind: Queue.kind, metadata: { name } };
    const answers = await Promise.all([
      handler(urlEvent(`/${"x".repeat(40)}/admit`, review(obj))),
      handler(urlEvent(`/${SECRET}/nothing`, review(obj))),
      handler(urlEvent("/admit", review(obj))),
    ]);
    expect(answers.map((a) => a.statusCode)).toEqual([404, 404, 404]);
    const get = urlEvent(`/${SECRET}/admit`, review(obj));
    get.requestContext.http.method = "GET";
    expect((await handler(get)).statusCode).toBe(405);
    expect(await receiveAll()).toEqual([]);
  });

  it("an admitted create is allowed, enqueued with its admission, and reconciled to Ready from the queue", async () => {
    const name = uniqueName("fn-bell-q");
    const obj = {
      apiVersion: Queue.apiVersion,
      kind: Queue.kind,
      metadata: { name, labels: { [TEST_LABEL]: LABEL } },
      spec: { forProvider: {}, providerConfigRef: { name: PC } },
    };
    // Admission first (as the API server does), then the write it admitted.
    const answer = await handler(urlEvent(`/${SECRET}/admit`, review(obj), true));
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "7c5a-request", allowed: true },
    });
    await kube.create(Queue, obj);

    const poller = new LambdaSqsPoller({
      sqs,
      queueUrl: queue.queueUrl,
      queueArn: queue.queueArn,
      handler: reconcile,
    });
    await poller.pollUntil(
      async () => conditionOf(await getMr(kube, Queue, name), "Ready")?.status === "True",
      60_000,
      `${name} Ready`,
    );
    const first = poller.invocations[0]?.records[0];
    const decoded = decodeMessage(first?.body ?? "");
    expect(decoded.ok && decoded.message).toMatchObject({
      kind: "Queue",
      name,
      reason: "watch",
      admitted: { before: "" },
    });
  });
});
