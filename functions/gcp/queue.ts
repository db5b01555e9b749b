// The Pub/Sub side of the forwarder: loaded on demand (dynamic import), so an SQS forwarder never loads it.
import { PubSub } from "@google-cloud/pubsub";
import type { Logger, MessageSink } from "../../shared/pipeline/common.ts";
import { logQueueEvents } from "../../shared/pipeline/functions.ts";
import { PubSubProducer } from "../../shared/queue/pubsub.ts";

export interface QueueSink {
  producer: MessageSink;
  close(): Promise<void>;
}

export function openPubSubSink(topic: string, projectId: string | undefined, logger: Logger): QueueSink {
  const pubsub = new PubSub(projectId ? { projectId } : {});
  const producer = new PubSubProducer({ pubsub, topic, onEvent: logQueueEvents(logger) });
  return {
    producer,
    close: async () => {
      await producer.flush();
      await pubsub.close();
    },
  };
}
