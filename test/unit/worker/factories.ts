// Factories for the worker adapter tests: SQS event records and Pub/Sub push CloudEvents as the platforms
// send them, a recording SQS client, a recording logger and a scripted reconcile function.
import type { SQSClient } from "@aws-sdk/client-sqs";
import { encodeMessage, messageKey, type ReconcileMessage } from "../../../shared/queue/message.ts";
import type { ReconcileFn } from "../../../shared/reconciler/contract.ts";
import type { ReconcileResult, ResourceKey } from "../../../shared/reconciler/reconciler.ts";
import type { SqsEventRecord } from "../../../shared/worker/sqs.ts";
import { named } from "../queue/factories.ts";

export const QUEUE_ARN = "arn:aws:sqs:us-east-1:123456789012:driftless-test";
export const QUEUE_URL = "http://sqs.test/123456789012/driftless-test";

let seq = 0;
export function sqsRecord(
  body: ReconcileMessage | string,
  opts: { receiveCount?: number; messageId?: string } = {},
): SqsEventRecord {
  const messageId = opts.messageId ?? `m-${++seq}`;
  return {
    messageId,
    receiptHandle: `rh-${messageId}`,
    body: typeof body === "string" ? body : encodeMessage(body),
    attributes: {
      ApproximateReceiveCount: String(opts.receiveCount ?? 1),
      SentTimestamp: "1735689600000",
      SenderId: "AIDAEXAMPLE",
      ApproximateFirstReceiveTimestamp: "1735689600100",
    },
    messageAttributes: {},
    md5OfBody: "ignored",
    eventSource: "aws:sqs",
    eventSourceARN: QUEUE_ARN,
    awsRegion: "us-east-1",
  };
}

/** The CloudEvent Eventarc delivers for a Pub/Sub message (binary mode: context + `data`). */
export function pushEvent(
  body: ReconcileMessage | string,
  opts: { messageId?: string; deliveryAttempt?: number; attributes?: Record<string, string> } = {},
) {
  const data = typeof body === "string" ? body : encodeMessage(body);
  const messageId = opts.messageId ?? `p-${++seq}`;
  return {
    specversion: "1.0",
    id: messageId,
    source: "//pubsub.googleapis.com/projects/p/topics/work",
    type: "google.cloud.pubsub.topic.v1.messagePublished",
    time: "2025-01-01T00:00:00.000Z",
    data: {
      message: {
        data: Buffer.from(data, "utf8").toString("base64"),
        messageId,
        publishTime: "2025-01-01T00:00:00.000Z",
        attributes: opts.attributes ?? {},
        orderingKey: typeof body === "string" ? "" : messageKey(body),
      },
      subscription: "projects/p/subscriptions/eventarc-us-central1-reconcile-000",
      ...(opts.deliveryAttempt !== undefined ? { deliveryAttempt: opts.deliveryAttempt } : {}),
    },
  };
}

export { named };

type Command = { constructor: { name: string }; input: Record<string, unknown> };

/** An SQS client that records every command and can be told to fail some. */
export function recordingSqs(fail: (name: string, input: Record<string, unknown>) => boolean = () => false) {
  const calls: Array<{ name: string; input: Record<string, unknown> }> = [];
  const client = {
    send: async (command: Command) => {
      calls.push({ name: command.constructor.name, input: command.input });
      if (fail(command.constructor.name, command.input))
        throw new Error(`${command.constructor.name} refused`);
      if (command.constructor.name === "GetQueueUrlCommand") {
        return {
          QueueUrl: `http://sqs.test/${command.input.QueueOwnerAWSAccountId}/${command.input.QueueName}`,
        };
      }
      return {};
    },
  };
  return {
    sqs: client as unknown as SQSClient,
    calls,
    named: (n: string) => calls.filter((c) => c.name === n),
  };
}

/** A logger that keeps every line (to assert on logs and check that bodies never reach them). */
export function recordingLogger() {
  const lines: Array<{ level: string; msg: string | undefined; [k: string]: unknown }> = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg?: string) =>
    lines.push({ level, msg, ...obj });
  return {
    lines,
    logger: { info: at("info"), warn: at("warn"), error: at("error"), debug: at("debug") },
    text: () => JSON.stringify(lines),
  };
}

/** A reconcile function answering per resource name; records the keys it saw. */
export function scriptedReconcile(
  byName: Record<string, ReconcileResult | (() => Promise<ReconcileResult>)>,
) {
  const seen: ResourceKey[] = [];
  const reconcile: ReconcileFn = async (key) => {
    seen.push(key);
    const answer = byName[key.name] ?? { outcome: "in-sync" };
    return typeof answer === "function" ? answer() : answer;
  };
  return { reconcile, seen };
}
