// The Pub/Sub side of the forwarder: loaded on demand (dynamic import), so an SQS forwarder never loads it.
import type { Logger, MessageSink } from "../../shared/pipeline/common.ts";
import { logQueueEvents } from "../../shared/pipeline/functions.ts";
import { PubSubProducer } from "../../shared/queue/pubsub.ts";
import { PubSubRestTopic } from "../../shared/queue/pubsub-rest.ts";

export interface QueueSink {
  producer: MessageSink;
  close(): Promise<void>;
}

export function openPubSubSink(topic: string, projectId: string | undefined, logger: Logger): QueueSink {
  const producer = new PubSubProducer({
    topic: new PubSubRestTopic({ topic, projectId }),
    onEvent: logQueueEvents(logger),
  });
  // Each send is one request that has ended when it resolves: nothing is left to flush.
  return { producer, close: async () => {} };
}
