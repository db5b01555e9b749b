// How many messages an SQS queue holds, in one GetQueueAttributes call: the drift sweep reads the
// dead-letter queue's depth for the Provider's health (shared/ops/provider-health.ts).
import { GetQueueAttributesCommand, type QueueAttributeName, type SQSClient } from "@aws-sdk/client-sqs";

/** Visible plus in-flight messages (SQS's approximate counts; delayed ones are not dead letters yet). */
export async function sqsQueueDepth(client: SQSClient, queueUrl: string): Promise<number> {
  const out = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    }),
  );
  const count = (name: QueueAttributeName) => Number.parseInt(out.Attributes?.[name] ?? "0", 10) || 0;
  return count("ApproximateNumberOfMessages") + count("ApproximateNumberOfMessagesNotVisible");
}
