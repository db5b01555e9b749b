import { z } from "zod";
import { optionalString } from "../fields.ts";
import { defineTaggedKind } from "../managed.ts";
import { referenceTo } from "../reference.ts";

/** A Google protobuf Duration in its JSON form: seconds with an optional fraction, e.g. "600s", "3.5s". */
export const Duration = z
  .string()
  .regex(/^(0|[1-9]\d*)(\.\d{1,9})?s$/, 'a duration in seconds, e.g. "600s"')
  .describe('A duration in seconds with an "s" suffix, e.g. "600s".');

const Labels = z
  .record(z.string(), z.string())
  .describe("Labels on the cloud resource (lower-case keys and values, at most 64).");

export const TopicForProvider = z.object({
  labels: Labels.optional(),
  messageRetentionDuration: Duration.optional().describe(
    'How long the topic keeps published messages, e.g. "86400s" (10 minutes to 31 days). Unset: messages are kept only for subscriptions.',
  ),
  messageStoragePolicy: z
    .object({
      allowedPersistenceRegions: z
        .array(z.string().min(1))
        .min(1)
        .describe("Google Cloud regions where messages published to the topic may be stored."),
    })
    .optional()
    .describe("Where messages may be stored at rest; unset: the organisation policy decides."),
});

export const TopicAtProvider = z.object({
  name: optionalString("The topic's full name, projects/PROJECT/topics/TOPIC."),
});

export const Topic = defineTaggedKind("labels", {
  group: "pubsub.gcp",
  kind: "Topic",
  description: "A Google Cloud Pub/Sub topic. The external name is the topic id.",
  forProvider: TopicForProvider,
  atProvider: TopicAtProvider,
  connectionKeys: ["topic", "projectID"],
});

const topicReference = referenceTo("topic", Topic, { fills: "external name" });

export const SubscriptionForProvider = z.object({
  topic: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The topic: its id in the ProviderConfig's project, or its full name projects/PROJECT/topics/TOPIC. Set it, or topicRef or topicSelector. Immutable.",
    ),
  ...topicReference.fields,
  ackDeadlineSeconds: z
    .number()
    .int()
    .min(10)
    .max(600)
    .optional()
    .describe("How long a subscriber has to acknowledge a message before it is redelivered, seconds."),
  messageRetentionDuration: Duration.optional().describe(
    'How long unacknowledged messages are kept, e.g. "604800s" (10 minutes to 7 days).',
  ),
  retainAckedMessages: z
    .boolean()
    .optional()
    .describe("Keep acknowledged messages for the retention duration (for seek)."),
  labels: Labels.optional(),
  deadLetterPolicy: z
    .object({
      deadLetterTopic: z
        .string()
        .min(1)
        .describe("The dead-letter topic: its id in the ProviderConfig's project, or its full name."),
      maxDeliveryAttempts: z
        .number()
        .int()
        .min(5)
        .max(100)
        .optional()
        .describe("Delivery attempts before a message goes to the dead-letter topic (default 5)."),
    })
    .optional()
    .describe("Send messages that cannot be delivered to a dead-letter topic."),
  retryPolicy: z
    .object({
      minimumBackoff: Duration.optional().describe(
        'Shortest redelivery delay, "0s" to "600s" (default "10s").',
      ),
      maximumBackoff: Duration.optional().describe(
        'Longest redelivery delay, "0s" to "600s" (default "600s").',
      ),
    })
    .optional()
    .describe("Exponential backoff between redeliveries; unset: redeliver immediately."),
  enableMessageOrdering: z
    .boolean()
    .optional()
    .describe("Deliver messages with the same ordering key in order. Immutable."),
});

export const SubscriptionAtProvider = z.object({
  name: optionalString("The subscription's full name, projects/PROJECT/subscriptions/SUBSCRIPTION."),
  topic: optionalString("The topic's full name as Pub/Sub reports it (_deleted-topic_ once it was deleted)."),
});

export const Subscription = defineTaggedKind("labels", {
  group: "pubsub.gcp",
  kind: "Subscription",
  description: "A Google Cloud Pub/Sub pull subscription. The external name is the subscription id.",
  forProvider: SubscriptionForProvider,
  atProvider: SubscriptionAtProvider,
  immutable: ["topic", "enableMessageOrdering"],
  connectionKeys: ["subscription", "topic", "projectID"],
  references: [topicReference.def],
  // The reference fields are inputs of driftless itself: no cloud reports them.
});
