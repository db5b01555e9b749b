// What the platforms do around the functions, played against the local stack: Lambda's SQS poller
// (receive, invoke with the real event shape, delete what did not fail) and Eventarc's Pub/Sub push
// (a binary-mode CloudEvent POSTed to a Functions Framework server; 2xx acks, anything else nacks).
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { Message as PubSubMessage, Subscription } from "@google-cloud/pubsub";
import { vi } from "vitest";
import type { SqsBatchResponse, SqsEvent, SqsEventRecord } from "../../../shared/worker/sqs.ts";
import { freePort } from "../../support/env.ts";

/**
 * Keeps the CloudWatch EMF lines the Lambda handler writes to stdout after each batch out of the test
 * output, collecting them (as CloudWatch Logs would see them) into `into`; passes everything else on.
 * Undo with vi.restoreAllMocks().
 */
export function captureEmf(into: Array<Record<string, unknown>> = []): Array<Record<string, unknown>> {
  const write = process.stdout.write.bind(process.stdout) as (chunk: unknown, ...rest: unknown[]) => boolean;
  vi.spyOn(process.stdout, "write").mockImplementation(((chunk: unknown, ...rest: unknown[]) => {
    const text = String(chunk);
    if (!text.includes('"_aws"')) return write(chunk, ...rest);
    for (const line of text.split("\n").filter(Boolean)) into.push(JSON.parse(line));
    return true;
  }) as typeof process.stdout.write);
  return into;
}

export { freePort };

const ROOT = path.resolve(import.meta.dirname, "../../..");

/** The record Lambda builds from a received SQS message. */
export function lambdaRecord(m: Message, queueArn: string): SqsEventRecord {
  const a = m.Attributes ?? {};
  return {
    messageId: m.MessageId ?? "",
    receiptHandle: m.ReceiptHandle ?? "",
    body: m.Body ?? "",
    attributes: {
      ApproximateReceiveCount: a.ApproximateReceiveCount ?? "1",
      SentTimestamp: a.SentTimestamp ?? String(Date.now()),
      SenderId: a.SenderId ?? "AIDAEXAMPLE",
      ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? "",
    eventSource: "aws:sqs",
    eventSourceARN: queueArn,
    awsRegion: queueArn.split(":")[3] ?? "us-east-1",
  };
}

export interface Invocation {
  records: SqsEventRecord[];
  response: SqsBatchResponse;
}

/**
 * Lambda's SQS event source: receives up to `batchSize` messages, invokes the handler, deletes the ones
 * not listed in batchItemFailures (Lambda does; the rest come back after their visibility timeout).
 */
export class LambdaSqsPoller {
  readonly invocations: Invocation[] = [];
  readonly #sqs: SQSClient;
  readonly #queueUrl: string;
  readonly #queueArn: string;
  readonly #handler: (
    event: SqsEvent,
    context: { getRemainingTimeInMillis(): number },
  ) => Promise<SqsBatchResponse>;

  constructor(o: {
    sqs: SQSClient;
    queueUrl: string;
    queueArn: string;
    handler: (event: SqsEvent, context: { getRemainingTimeInMillis(): number }) => Promise<SqsBatchResponse>;
  }) {
    this.#sqs = o.sqs;
    this.#queueUrl = o.queueUrl;
    this.#queueArn = o.queueArn;
    this.#handler = o.handler;
  }

  /** One receive + invoke + delete round; returns how many records were delivered. */
  async pollOnce(batchSize = 10): Promise<number> {
    const out = await this.#sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.#queueUrl,
        MaxNumberOfMessages: batchSize,
        WaitTimeSeconds: 1,
        MessageSystemAttributeNames: ["All"],
      }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) return 0;
    const records = messages.map((m) => lambdaRecord(m, this.#queueArn));
    const deadline = Date.now() + 60_000;
    const response = await this.#handler(
      { Records: records },
      { getRemainingTimeInMillis: () => deadline - Date.now() },
    );
    this.invocations.push({ records, response });
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    const done = records.filter((r) => !failed.has(r.messageId));
    if (done.length > 0) {
      await this.#sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: this.#queueUrl,
          Entries: done.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
        }),
      );
    }
    return records.length;
  }

  /** Polls until `done()` holds or the time is up. */
  async pollUntil(done: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await this.pollOnce();
    }
  }
}

/** Receives from a queue (the DLQ) without deleting (long visibility), at least once, up to `timeoutMs`. */
export async function peekBodies(sqs: SQSClient, queueUrl: string, expected: number, timeoutMs: number) {
  const bodies: string[] = [];
  const deadline = Date.now() + timeoutMs;
  do {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: timeoutMs >= 1000 ? 1 : 0,
        VisibilityTimeout: 600,
      }),
    );
    for (const m of out.Messages ?? []) bodies.push(m.Body ?? "");
  } while (bodies.length < expected && Date.now() < deadline);
  return bodies;
}

export interface FunctionsFrameworkServer {
  url: string;
  logs: () => string;
  stop(): Promise<void>;
}

/** Starts `functions-framework --target … --source …` (Node 22) on a free port and waits until it serves. */
export async function startFunctionsFramework(o: {
  target: string;
  source: string;
  env: NodeJS.ProcessEnv;
  /** Default cloudevent (the reconcile and sweep functions); the doorbell is an http function. */
  signatureType?: "cloudevent" | "http";
}): Promise<FunctionsFrameworkServer> {
  const port = await freePort();
  const main = path.join(ROOT, "node_modules/@google-cloud/functions-framework/build/src/main.js");
  let output = "";
  // DRIFTLESS_TEST_GCP_BUNDLE=1 runs the built folder (`npm run build:gcp` → dist/gcp) instead of the
  // sources: the very artifact `gcloud functions deploy --source dist/gcp` uploads.
  const source = process.env.DRIFTLESS_TEST_GCP_BUNDLE ? "dist/gcp" : o.source;
  const child: ChildProcess = spawn(
    process.execPath,
    [
      main,
      `--target=${o.target}`,
      `--source=${source}`,
      `--signature-type=${o.signatureType ?? "cloudevent"}`,
      `--port=${port}`,
    ],
    {
      cwd: ROOT,
      env: { ...o.env, FUNCTION_TARGET: o.target, NODE_NO_WARNINGS: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  child.stdout?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`functions-framework exited (${child.exitCode}):\n${output}`);
    try {
      // A GET is not a CloudEvent: any HTTP answer means the server is up.
      await fetch(url, { method: "GET" });
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`functions-framework did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    url,
    logs: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** Eventarc's push: the message as a binary-mode CloudEvent; the HTTP status decides ack or nack. */
export async function pushCloudEvent(url: string, m: PubSubMessage, subscription: string, topic: string) {
  const publishTime = m.publishTime.toISOString();
  const body = {
    message: {
      data: m.data.toString("base64"),
      messageId: m.id,
      publishTime,
      attributes: m.attributes,
      ...(m.orderingKey ? { orderingKey: m.orderingKey } : {}),
    },
    subscription,
    ...(m.deliveryAttempt ? { deliveryAttempt: m.deliveryAttempt } : {}),
  };
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "ce-id": m.id,
      "ce-specversion": "1.0",
      "ce-type": "google.cloud.pubsub.topic.v1.messagePublished",
      "ce-source": `//pubsub.googleapis.com/${topic}`,
      "ce-time": publishTime,
    },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Relays every message of a (pull) subscription to the function as Eventarc would; records statuses. */
export function relayToFunction(sub: Subscription, url: string, topic: string) {
  const statuses: Array<{ id: string; status: number; attempt: number }> = [];
  sub.on("message", (m: PubSubMessage) => {
    pushCloudEvent(url, m, sub.name, topic).then(
      (status) => {
        statuses.push({ id: m.id, status, attempt: m.deliveryAttempt });
        if (status >= 200 && status < 300) m.ack();
        else m.nack();
      },
      () => m.nack(),
    );
  });
  return { statuses, stop: () => sub.close() };
}
