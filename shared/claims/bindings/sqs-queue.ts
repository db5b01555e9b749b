import { Queue as SqsQueue } from "../../api/aws/sqs.ts";
import { SQSQueueClass } from "../../api/claims/classes.ts";
import type { ClassBinding } from "../binding.ts";

/** Queue claims as Amazon SQS queues. */
export const sqsQueueBinding: ClassBinding = {
  class: SQSQueueClass,
  parts: [
    {
      role: "queue",
      type: SqsQueue,
      primary: true,
      portable: ({ claim }) => ({
        messageRetentionSeconds: claim.retentionSeconds,
        visibilityTimeoutSeconds: claim.processingTimeoutSeconds,
      }),
    },
  ],
  connection: () => ({ service: "sqs" }),
};
