// Queue topology for tests and the bench: the SQS queue + dead-letter pair and the Pub/Sub topic,
// dead-letter topic and subscriptions that serverless.yml / the GCP deployment create in production.
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueNameExists,
  SetQueueAttributesCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { PubSub, Topic } from "@google-cloud/pubsub";

const DEFAULT_SQS_MAX_RECEIVE_COUNT = 5;
const DEFAULT_SQS_VISIBILITY_TIMEOUT_SECONDS = 60;
const DLQ_RETENTION_SECONDS = 1_209_600; // 14 days, the SQS maximum: time to look at what failed
const DEFAULT_MAX_DELIVERY_ATTEMPTS = 5;
const DEFAULT_ACK_DEADLINE_SECONDS = 60;
const GRPC_ALREADY_EXISTS = 6;

export interface EnsureSqsQueueInput {
  /** Queue name; for FIFO the `.fifo` suffix is added when missing. The DLQ is `<name>-dlq`. */
  name: string;
  fifo?: boolean;
  visibilityTimeoutSeconds?: number;
  maxReceiveCount?: number;
}

export interface SqsQueuePair {
  queueUrl: string;
  queueArn: string;
  dlqUrl: string;
  dlqArn: string;
}

/** Creates (or converges) a queue and its dead-letter queue with a RedrivePolicy. Idempotent. */
export async function ensureSqsQueue(client: SQSClient, input: EnsureSqsQueueInput): Promise<SqsQueuePair> {
  const fifo = input.fifo ?? input.name.endsWith(".fifo");
  const base = input.name.replace(/\.fifo$/, "");
  const suffix = fifo ? ".fifo" : "";
  const fifoAttributes: Record<string, string> = fifo
    ? { FifoQueue: "true", ContentBasedDeduplication: "false" }
    : {};

  const dlqUrl = await createOrUpdateQueue(client, `${base}-dlq${suffix}`, fifoAttributes, {
    MessageRetentionPeriod: String(DLQ_RETENTION_SECONDS),
  });
  const dlqArn = await queueArn(client, dlqUrl);
  const queueUrl = await createOrUpdateQueue(client, `${base}${suffix}`, fifoAttributes, {
    VisibilityTimeout: String(input.visibilityTimeoutSeconds ?? DEFAULT_SQS_VISIBILITY_TIMEOUT_SECONDS),
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: dlqArn,
      maxReceiveCount: input.maxReceiveCount ?? DEFAULT_SQS_MAX_RECEIVE_COUNT,
    }),
  });
  return { queueUrl, queueArn: await queueArn(client, queueUrl), dlqUrl, dlqArn };
}

async function createOrUpdateQueue(
  client: SQSClient,
  name: string,
  immutable: Record<string, string>,
  mutable: Record<string, string>,
): Promise<string> {
  try {
    const out = await client.send(
      new CreateQueueCommand({ QueueName: name, Attributes: { ...immutable, ...mutable } }),
    );
    if (out.QueueUrl === undefined) throw new Error(`CreateQueue returned no URL for ${name}`);
    return out.QueueUrl;
  } catch (error) {
    // Same name, different attributes: converge the ones SQS lets us change.
    if (!(error instanceof QueueNameExists) && (error as { name?: string }).name !== "QueueAlreadyExists") {
      throw new Error(`cannot create SQS queue ${name}`, { cause: error });
    }
  }
  try {
    const { QueueUrl } = await client.send(new GetQueueUrlCommand({ QueueName: name }));
    if (QueueUrl === undefined) throw new Error(`GetQueueUrl returned no URL for ${name}`);
    await client.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: mutable }));
    return QueueUrl;
  } catch (error) {
    throw new Error(`cannot update SQS queue ${name}`, { cause: error });
  }
}

async function queueArn(client: SQSClient, queueUrl: string): Promise<string> {
  const out = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["QueueArn"] }),
  );
  const arn = out.Attributes?.QueueArn;
  if (arn === undefined) throw new Error(`cannot read the ARN of ${queueUrl}`);
  return arn;
}

export interface PubSubTopologyInput {
  topic: string;
  subscription: string;
  /** Default `<topic>-dlq`. */
  deadLetterTopic?: string;
  /** A subscription on the dead-letter topic, so dead letters are kept (default `<deadLetterTopic>-sub`). */
  deadLetterSubscription?: string;
  /** 5–100. */
  maxDeliveryAttempts?: number;
  /** Message ordering on the subscription (cannot be changed once created). Default true. */
  ordering?: boolean;
  ackDeadlineSeconds?: number;
  minimumBackoffSeconds?: number;
  maximumBackoffSeconds?: number;
}

export interface PubSubTopology {
  topic: string;
  subscription: string;
  deadLetterTopic: string;
  deadLetterSubscription: string;
}

/**
 * Creates (or converges) topic, dead-letter topic, a subscription on it, and the work subscription with
 * dead-letter and retry policies. Idempotent. On Google Cloud the Pub/Sub service agent also needs
 * publisher on the dead-letter topic and subscriber on the subscription (IAM, not done here).
 */
export async function ensurePubSubTopology(
  pubsub: PubSub,
  input: PubSubTopologyInput,
): Promise<PubSubTopology> {
  const deadLetterTopicName = input.deadLetterTopic ?? `${shortName(input.topic)}-dlq`;
  const topic = await ensureTopic(pubsub, input.topic);
  const deadLetterTopic = await ensureTopic(pubsub, deadLetterTopicName);
  const deadLetterSubscription = await ensureSubscription(
    deadLetterTopic,
    input.deadLetterSubscription ?? `${shortName(deadLetterTopicName)}-sub`,
    {},
  );
  const maxDeliveryAttempts = input.maxDeliveryAttempts ?? DEFAULT_MAX_DELIVERY_ATTEMPTS;
  if (maxDeliveryAttempts < 5 || maxDeliveryAttempts > 100) {
    throw new RangeError(`maxDeliveryAttempts must be 5–100, got ${maxDeliveryAttempts}`);
  }
  const subscription = await ensureSubscription(
    topic,
    input.subscription,
    {
      ackDeadlineSeconds: input.ackDeadlineSeconds ?? DEFAULT_ACK_DEADLINE_SECONDS,
      deadLetterPolicy: { deadLetterTopic: deadLetterTopic.name, maxDeliveryAttempts },
      retryPolicy: {
        minimumBackoff: { seconds: input.minimumBackoffSeconds ?? 10 },
        maximumBackoff: { seconds: input.maximumBackoffSeconds ?? 600 },
      },
    },
    input.ordering ?? true,
  );
  return {
    topic: topic.name,
    subscription,
    deadLetterTopic: deadLetterTopic.name,
    deadLetterSubscription,
  };
}

async function ensureTopic(pubsub: PubSub, name: string): Promise<Topic> {
  try {
    const [topic] = await pubsub.topic(name).get({ autoCreate: true });
    return topic;
  } catch (error) {
    throw new Error(`cannot create Pub/Sub topic ${name}`, { cause: error });
  }
}

interface MutableSubscriptionSettings {
  ackDeadlineSeconds?: number;
  deadLetterPolicy?: { deadLetterTopic: string; maxDeliveryAttempts: number };
  retryPolicy?: { minimumBackoff: { seconds: number }; maximumBackoff: { seconds: number } };
}

async function ensureSubscription(
  topic: Topic,
  name: string,
  settings: MutableSubscriptionSettings,
  ordering = false,
): Promise<string> {
  try {
    const [subscription] = await topic.createSubscription(name, {
      ...settings,
      enableMessageOrdering: ordering,
    });
    return subscription.name;
  } catch (error) {
    if ((error as { code?: unknown }).code !== GRPC_ALREADY_EXISTS) {
      throw new Error(`cannot create Pub/Sub subscription ${name}`, { cause: error });
    }
  }
  const subscription = topic.pubsub.subscription(name);
  try {
    const [metadata] = await subscription.getMetadata();
    if (metadata.topic !== topic.name) {
      throw new Error(`subscription ${name} exists on another topic (${metadata.topic})`);
    }
    if (Boolean(metadata.enableMessageOrdering) !== ordering) {
      throw new Error(`subscription ${name} exists with message ordering ${!ordering}; it cannot be changed`);
    }
    if (Object.keys(settings).length > 0) await subscription.setMetadata(settings);
    return subscription.name;
  } catch (error) {
    throw new Error(`cannot update Pub/Sub subscription ${name}`, { cause: error });
  }
}

function shortName(name: string): string {
  return name.slice(name.lastIndexOf("/") + 1);
}
