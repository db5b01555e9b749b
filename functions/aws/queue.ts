// The SQS side of the forwarder: loaded on demand (dynamic import), so a Pub/Sub forwarder never loads it.
import { SQSClient } from "@aws-sdk/client-sqs";
import type { Logger, MessageSink } from "../../shared/pipeline/common.ts";
import { logQueueEvents } from "../../shared/pipeline/functions.ts";
import { SqsProducer } from "../../shared/queue/sqs.ts";

export interface QueueSink {
  producer: MessageSink;
  close(): Promise<void>;
}

export function openSqsSink(queueUrl: string, logger: Logger): QueueSink {
  const client = new SQSClient({});
  const producer = new SqsProducer({ client, queueUrl, onEvent: logQueueEvents(logger) });
  return { producer, close: async () => client.destroy() };
}
