import { z } from "zod";
import { optionalString } from "../fields.ts";
import { defineTaggedKind } from "../managed.ts";
import { AwsArn, AwsRegion, AwsTags } from "./fields.ts";

const Tags = AwsTags.describe("Tags on the cloud resource.");

export const QueueForProvider = z.object({
  region: AwsRegion,
  fifoQueue: z.boolean().optional().describe("A FIFO queue (its name must end in .fifo). Immutable."),
  contentBasedDeduplication: z.boolean().optional().describe("FIFO only: deduplicate on a hash of the body."),
  delaySeconds: z
    .number()
    .int()
    .min(0)
    .max(900)
    .optional()
    .describe("Delivery delay of every message, seconds."),
  maximumMessageSize: z.number().int().min(1024).max(1048576).optional().describe("Largest message, bytes."),
  messageRetentionSeconds: z
    .number()
    .int()
    .min(60)
    .max(1209600)
    .optional()
    .describe("How long messages are kept, seconds."),
  receiveWaitTimeSeconds: z
    .number()
    .int()
    .min(0)
    .max(20)
    .optional()
    .describe("Long-poll wait of ReceiveMessage, seconds."),
  visibilityTimeoutSeconds: z
    .number()
    .int()
    .min(0)
    .max(43200)
    .optional()
    .describe("Visibility timeout, seconds."),
  redrivePolicy: z
    .object({
      deadLetterTargetArn: z.string().min(1).describe("ARN of the dead-letter queue."),
      maxReceiveCount: z
        .number()
        .int()
        .min(1)
        .max(1000)
        .describe("Receives before a message moves to the DLQ."),
    })
    .optional()
    .describe("Send messages received too often to a dead-letter queue."),
  policy: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      "The queue's access policy: an IAM policy document as a JSON object (Upjet's QueuePolicy), compared whole as JSON.",
    ),
  redriveAllowPolicy: z
    .object({
      redrivePermission: z
        .enum(["allowAll", "denyAll", "byQueue"])
        .describe("Which source queues may use this queue as their dead-letter queue."),
      sourceQueueArns: z
        .array(z.string().min(1))
        .min(1)
        .max(10)
        .optional()
        .describe("byQueue only: the ARNs of the source queues allowed (at most 10)."),
    })
    .optional()
    .describe("As a dead-letter queue: which queues may send to it (Upjet's QueueRedriveAllowPolicy)."),
  tags: Tags.optional(),
});

export const QueueAtProvider = z.object({
  arn: AwsArn("queue"),
  url: optionalString("The queue's URL."),
});

export const Queue = defineTaggedKind("tags", {
  group: "sqs.aws",
  kind: "Queue",
  description: "An Amazon SQS queue. The external name is the queue name.",
  forProvider: QueueForProvider,
  atProvider: QueueAtProvider,
  immutable: ["region", "fifoQueue"],
  connectionKeys: ["url", "arn"],
  // SQS documents that attribute changes can take up to 60 s to show in GetQueueAttributes.
  updateSettleMs: 60_000,
});
