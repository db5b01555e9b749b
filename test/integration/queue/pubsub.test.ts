// The Pub/Sub topology helper of the test kit against the Pub/Sub emulator from the local stack.
import type { PubSub } from "@google-cloud/pubsub";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensurePubSubTopology, type PubSubTopologyInput } from "../../support/queues.ts";
import { pubSubClient, uniqueName } from "./support.ts";

let pubsub: PubSub;

beforeAll(() => {
  pubsub = pubSubClient();
});
afterAll(async () => {
  await pubsub.close();
});

describe("ensurePubSubTopology", () => {
  it("creates topic, dead-letter topic and subscriptions with policies, idempotently", async () => {
    const base = uniqueName("dl-topo");
    const input: PubSubTopologyInput = {
      topic: `${base}-t`,
      subscription: `${base}-s`,
      maxDeliveryAttempts: 7,
    };

    const first = await ensurePubSubTopology(pubsub, input);
    const again = await ensurePubSubTopology(pubsub, { ...input, maxDeliveryAttempts: 9 });

    expect(again).toEqual(first);
    expect(first).toEqual({
      topic: `projects/driftless-local/topics/${base}-t`,
      subscription: `projects/driftless-local/subscriptions/${base}-s`,
      deadLetterTopic: `projects/driftless-local/topics/${base}-t-dlq`,
      deadLetterSubscription: `projects/driftless-local/subscriptions/${base}-t-dlq-sub`,
    });
    const [metadata] = await pubsub.subscription(first.subscription).getMetadata();
    expect(metadata.enableMessageOrdering).toBe(true);
    expect(metadata.deadLetterPolicy).toMatchObject({
      deadLetterTopic: first.deadLetterTopic,
      maxDeliveryAttempts: 9,
    });
    expect(metadata.retryPolicy).toMatchObject({
      minimumBackoff: { seconds: "10" },
      maximumBackoff: { seconds: "600" },
    });
  });

  it("refuses to flip message ordering on an existing subscription", async () => {
    const base = uniqueName("dl-topo");
    await ensurePubSubTopology(pubsub, { topic: `${base}-t`, subscription: `${base}-s`, ordering: true });

    await expect(
      ensurePubSubTopology(pubsub, { topic: `${base}-t`, subscription: `${base}-s`, ordering: false }),
    ).rejects.toThrow(/cannot update Pub\/Sub subscription/);
  });
});
