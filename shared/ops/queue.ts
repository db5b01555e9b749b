// The configured queue for the operator commands (`forward`, `sweep`, `trigger --queue`, `doctor`):
// open a producer, or check that the queue exists and answers. Cloud SDKs are loaded on demand, so a
// command that needs neither queue loads neither SDK.
import type { QueueEventSink, QueueProducer } from "../queue/port.ts";
import { UsageError } from "./errors.ts";

/** The queue part of the typed config (functions/config.ts), passed in by the CLI. */
export interface QueueSettings {
  queue: "memory" | "sqs" | "pubsub";
  sqsQueueUrl?: string | undefined;
  sqsDlqUrl?: string | undefined;
  pubsubTopic?: string | undefined;
  pubsubSubscription?: string | undefined;
  gcpProjectId?: string | undefined;
}

export interface OpenProducer {
  producer: QueueProducer;
  /** Where messages go, for the operator: `sqs https://…` or `pubsub projects/…/topics/…`. */
  target: string;
  /** Sends what is buffered and closes the client. */
  close(): Promise<void>;
}

/**
 * A producer for the configured shared queue. The memory queue lives inside `driftless run` only, so a
 * separate process cannot send to it: that is a usage error that says what to set.
 */
export async function openProducer(s: QueueSettings, onEvent?: QueueEventSink): Promise<OpenProducer> {
  if (s.queue === "sqs") {
    if (!s.sqsQueueUrl) throw new UsageError("DRIFTLESS_QUEUE=sqs needs DRIFTLESS_SQS_QUEUE_URL");
    const [{ SQSClient }, { SqsProducer }] = await Promise.all([
      import("@aws-sdk/client-sqs"),
      import("../queue/sqs.ts"),
    ]);
    const client = new SQSClient({});
    const producer = new SqsProducer({
      client,
      queueUrl: s.sqsQueueUrl,
      ...(onEvent ? { onEvent } : {}),
    });
    return { producer, target: `sqs ${s.sqsQueueUrl}`, close: async () => client.destroy() };
  }
  if (s.queue === "pubsub") {
    if (!s.pubsubTopic) throw new UsageError("DRIFTLESS_QUEUE=pubsub needs DRIFTLESS_PUBSUB_TOPIC");
    const [{ PubSubRestTopic }, { PubSubProducer }] = await Promise.all([
      import("../queue/pubsub-rest.ts"),
      import("../queue/pubsub.ts"),
    ]);
    const producer = new PubSubProducer({
      topic: new PubSubRestTopic({ topic: s.pubsubTopic, projectId: s.gcpProjectId }),
      ...(onEvent ? { onEvent } : {}),
    });
    // Each send is one request that has ended when it resolves: nothing is left to flush.
    return { producer, target: `pubsub ${s.pubsubTopic}`, close: async () => {} };
  }
  throw new UsageError(
    "DRIFTLESS_QUEUE is memory: the memory queue lives inside `driftless run`; set DRIFTLESS_QUEUE=sqs (with DRIFTLESS_SQS_QUEUE_URL) or pubsub (with DRIFTLESS_PUBSUB_TOPIC) to use a shared queue",
  );
}

export interface QueueCheck {
  ok: boolean;
  /** What was found, or what is wrong. */
  detail: string;
  /** How to fix it, when not ok. */
  fix?: string;
  /** Worth knowing even when ok (e.g. no dead-letter queue). */
  warning?: string;
}

/** SQS GetQueueAttributes / Pub/Sub topic (and subscription) exists / memory: always fine. */
export async function checkQueue(s: QueueSettings): Promise<QueueCheck[]> {
  if (s.queue === "memory") {
    return [{ ok: true, detail: "memory queue: in process, consumed by `driftless run` itself" }];
  }
  if (s.queue === "sqs") return checkSqs(s);
  return checkPubSub(s);
}

async function checkSqs(s: QueueSettings): Promise<QueueCheck[]> {
  if (!s.sqsQueueUrl) {
    return [
      {
        ok: false,
        detail: "DRIFTLESS_QUEUE=sqs but DRIFTLESS_SQS_QUEUE_URL is not set",
        fix: "set DRIFTLESS_SQS_QUEUE_URL to the queue's URL (serverless.yml outputs it after deploy)",
      },
    ];
  }
  const { SQSClient, GetQueueAttributesCommand } = await import("@aws-sdk/client-sqs");
  const client = new SQSClient({});
  const out: QueueCheck[] = [];
  try {
    for (const [role, url] of [
      ["queue", s.sqsQueueUrl],
      ["dead-letter queue", s.sqsDlqUrl],
    ] as const) {
      if (!url) continue;
      try {
        const res = await client.send(
          new GetQueueAttributesCommand({
            QueueUrl: url,
            AttributeNames: [
              "QueueArn",
              "RedrivePolicy",
              "VisibilityTimeout",
              "ApproximateNumberOfMessages",
              "ApproximateNumberOfMessagesNotVisible",
            ],
          }),
        );
        const a = res.Attributes ?? {};
        const redrive = a.RedrivePolicy
          ? (JSON.parse(a.RedrivePolicy) as { deadLetterTargetArn?: string; maxReceiveCount?: number })
          : undefined;
        const depth = `${a.ApproximateNumberOfMessages ?? "?"} waiting, ${a.ApproximateNumberOfMessagesNotVisible ?? "?"} in flight`;
        out.push({
          ok: true,
          detail: `SQS ${role} ${url} answers (${depth}${redrive ? `; redrive after ${redrive.maxReceiveCount} receives to ${redrive.deadLetterTargetArn}` : ""})`,
          ...(role === "queue" && !redrive
            ? {
                warning:
                  "the queue has no RedrivePolicy: a message that always fails is retried until it expires; add a dead-letter queue (serverless.yml does)",
              }
            : {}),
        });
      } catch (err) {
        const e = err as Error & { name?: string };
        const notFound = /NonExistentQueue|QueueDoesNotExist/.test(`${e.name} ${e.message}`);
        out.push({
          ok: false,
          detail: `SQS ${role} ${url}: ${e.name ?? "Error"}: ${e.message}`,
          fix: notFound
            ? `create the queue (deploy serverless.yml) or correct ${role === "queue" ? "DRIFTLESS_SQS_QUEUE_URL" : "DRIFTLESS_SQS_DLQ_URL"}`
            : "check AWS credentials and region (AWS_PROFILE / AWS_REGION) and that this identity may call sqs:GetQueueAttributes and sqs:SendMessage on the queue",
        });
      }
    }
  } finally {
    client.destroy();
  }
  return out;
}

async function checkPubSub(s: QueueSettings): Promise<QueueCheck[]> {
  if (!s.pubsubTopic) {
    return [
      {
        ok: false,
        detail: "DRIFTLESS_QUEUE=pubsub but DRIFTLESS_PUBSUB_TOPIC is not set",
        fix: "set DRIFTLESS_PUBSUB_TOPIC to the topic's name (and GCP_PROJECT_ID)",
      },
    ];
  }
  const { PubSub } = await import("@google-cloud/pubsub");
  const pubsub = new PubSub(s.gcpProjectId ? { projectId: s.gcpProjectId } : {});
  const out: QueueCheck[] = [];
  try {
    const checks: Array<[string, string | undefined, () => Promise<[boolean]>]> = [
      ["topic", s.pubsubTopic, () => pubsub.topic(s.pubsubTopic ?? "").exists()],
      ["subscription", s.pubsubSubscription, () => pubsub.subscription(s.pubsubSubscription ?? "").exists()],
    ];
    for (const [what, name, exists] of checks) {
      if (!name) continue;
      try {
        const [found] = await exists();
        out.push(
          found
            ? { ok: true, detail: `Pub/Sub ${what} ${name} exists` }
            : {
                ok: false,
                detail: `Pub/Sub ${what} ${name} does not exist in project ${s.gcpProjectId ?? "(default)"}`,
                fix: `create it (infra for GCP, see docs/deploy-gcp.md) or correct ${what === "topic" ? "DRIFTLESS_PUBSUB_TOPIC" : "DRIFTLESS_PUBSUB_SUBSCRIPTION"} / GCP_PROJECT_ID`,
              },
        );
      } catch (err) {
        out.push({
          ok: false,
          detail: `Pub/Sub ${what} ${name}: ${(err as Error).message}`,
          fix: "check Google credentials (GOOGLE_APPLICATION_CREDENTIALS or the workload identity) and that they may view and publish to the topic",
        });
      }
    }
  } finally {
    await pubsub.close();
  }
  return out;
}
