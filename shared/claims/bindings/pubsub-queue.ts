import { PubSubQueueClass } from "../../api/claims/classes.ts";
import { Subscription, Topic } from "../../api/gcp/pubsub.ts";
import { type ClassBinding, objectAt } from "../binding.ts";

/** Queue claims as a Pub/Sub topic plus one subscription to it, both named after the claim. */
export const pubsubQueueBinding: ClassBinding = {
  class: PubSubQueueClass,
  parts: [
    {
      role: "topic",
      type: Topic,
      template: (spec) => objectAt(objectAt(spec, "topic"), "forProvider"),
      portable: () => ({}),
    },
    {
      role: "subscription",
      type: Subscription,
      primary: true,
      template: (spec) => objectAt(objectAt(spec, "subscription"), "forProvider"),
      // The engine waits for the Topic to be Ready, then fills in its name.
      fixed: ({ name }) => ({ topicRef: { name } }),
      portable: ({ claim }) => ({
        messageRetentionDuration:
          typeof claim.retentionSeconds === "number" ? `${claim.retentionSeconds}s` : undefined,
        ackDeadlineSeconds: claim.processingTimeoutSeconds,
      }),
    },
  ],
  connection: () => ({ service: "pubsub" }),
};
