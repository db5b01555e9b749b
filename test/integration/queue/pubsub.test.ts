// The Pub/Sub adapter against the Pub/Sub emulator from the local stack.
//
// What the emulator (0.8.20) does, as measured: ordering keys; nack redelivery with deliveryAttempt
// counting; dead-lettering to the dead-letter topic with CloudPubSubDeadLetter* attributes; the retry
// policy's backoff on *unordered* subscriptions (after an immediate first redelivery). What it does not:
// backoff on *ordered* subscriptions (nacks come straight back), and dead-lettering on an ordered
// subscription — the server fails the stream with UNKNOWN when the limit is reached and the
// subscription stays broken — so dead-letter tests use unordered subscriptions with a 0–1 s backoff.
import type { Message, PubSub } from "@google-cloud/pubsub";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage, messageKey } from "../../../shared/queue/message.ts";
import type { ReceivedMessage } from "../../../shared/queue/port.ts";
import {
  ensurePubSubTopology,
  PUBSUB_DLQ_ERROR_ATTRIBUTE,
  PubSubConsumer,
  type PubSubConsumerOptions,
  PubSubProducer,
  type PubSubTopology,
  type PubSubTopologyInput,
} from "../../../shared/queue/pubsub.ts";
import { named } from "../../unit/queue/factories.ts";
import { eventLog, pubSubClient, uniqueName, waitFor } from "./support.ts";

// The emulator applies the retry policy on unordered subscriptions: keep it short so tests stay quick.
const FAST_RETRY = { minimumBackoffSeconds: 0, maximumBackoffSeconds: 1 };

let pubsub: PubSub;
const consumers: PubSubConsumer[] = [];

beforeAll(() => {
  pubsub = pubSubClient();
});
afterEach(async () => {
  await Promise.all(consumers.splice(0).map((c) => c.stop()));
});
afterAll(async () => {
  await pubsub.close();
});

function topology(overrides: Partial<PubSubTopologyInput> = {}): Promise<PubSubTopology> {
  const base = uniqueName("dl");
  return ensurePubSubTopology(pubsub, { topic: `${base}-t`, subscription: `${base}-s`, ...overrides });
}

function consumer(options: Omit<PubSubConsumerOptions, "pubsub">): PubSubConsumer {
  const c = new PubSubConsumer({ pubsub, ...options });
  consumers.push(c);
  return c;
}

/** Collects what arrives on a subscription (the dead-letter one) for up to `timeoutMs`. */
async function collect(subscription: string, expected: number, timeoutMs: number): Promise<Message[]> {
  const got: Message[] = [];
  const sub = pubsub.subscription(subscription);
  sub.on("message", (m: Message) => {
    got.push(m);
    m.ack();
  });
  try {
    await waitFor(() => got.length >= expected, timeoutMs, `${expected} message(s) on ${subscription}`);
  } finally {
    await sub.close();
  }
  return got;
}

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

describe("Pub/Sub producer and consumer", () => {
  it("publishes with ordering keys and consumes each key in order, one handler per key", async () => {
    const topo = await topology();
    const producer = new PubSubProducer({ pubsub, topic: topo.topic });
    const base = Date.parse("2025-01-01T00:00:00Z");
    const messages = Array.from({ length: 30 }, (_, i) =>
      named(`res-${i % 5}`, { at: new Date(base + i * 1000).toISOString(), id: `seq-${i}` }),
    );
    const seen: ReceivedMessage[] = [];
    const running = new Map<string, number>();
    let maxPerKey = 0;

    const result = await producer.send(messages);
    expect(result).toEqual({ sent: 30, failed: [] });
    consumer({ subscription: topo.subscription, workers: 8 }).start(async (r) => {
      const key = messageKey(r.message);
      running.set(key, (running.get(key) ?? 0) + 1);
      maxPerKey = Math.max(maxPerKey, running.get(key) ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 3));
      running.set(key, (running.get(key) ?? 0) - 1);
      seen.push(r);
      return { kind: "done" };
    });
    await waitFor(() => seen.length >= 30, 20_000, "30 deliveries");

    expect(maxPerKey).toBe(1);
    for (let k = 0; k < 5; k++) {
      const order = seen
        .filter((r) => r.message.name === `res-${k}`)
        .map((r) => Number(r.message.id?.slice(4)));
      expect(order).toEqual([0, 1, 2, 3, 4, 5].map((n) => n * 5 + k));
    }
    expect(seen.every((r) => r.enqueuedAt instanceof Date)).toBe(true);
  });

  it("redelivers a nacked (retry) message with a higher delivery attempt", async () => {
    const topo = await topology();
    const deliveries: ReceivedMessage[] = [];
    await new PubSubProducer({ pubsub, topic: topo.topic }).send([named("flaky")]);

    consumer({ subscription: topo.subscription }).start(async (r) => {
      deliveries.push(r);
      return deliveries.length < 3 ? { kind: "retry", error: new Error("throttled") } : { kind: "done" };
    });
    await waitFor(() => deliveries.length >= 3, 20_000, "three deliveries");

    expect(deliveries.map((d) => d.receiveCount)).toEqual([1, 2, 3]);
    expect(new Set(deliveries.map((d) => d.id)).size).toBe(1);
  });

  it("holds a requeued message for afterMs, then hands it over again", async () => {
    const topo = await topology();
    const deliveries: Array<{ at: number; r: ReceivedMessage }> = [];
    await new PubSubProducer({ pubsub, topic: topo.topic }).send([named("creating")]);

    consumer({ subscription: topo.subscription }).start(async (r) => {
      deliveries.push({ at: Date.now(), r });
      return deliveries.length === 1 ? { kind: "requeue", afterMs: 800 } : { kind: "done" };
    });
    await waitFor(() => deliveries.length >= 2, 10_000, "the requeued delivery");
    await new Promise((resolve) => setTimeout(resolve, 300));

    const [first, second] = deliveries;
    expect(deliveries).toHaveLength(2);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(780);
    expect(second!.r.id).toBe(first!.r.id);
    expect(second!.r.receiveCount).toBe(1); // a requeue is not a failed delivery
    expect(second!.r.message.reason).toBe("requeue");
  });

  it("honours delayMs on send (notBefore attribute)", async () => {
    const topo = await topology();
    const received: number[] = [];
    const sentAt = Date.now();
    await new PubSubProducer({ pubsub, topic: topo.topic }).send([named("later")], { delayMs: 700 });

    consumer({ subscription: topo.subscription }).start(async () => {
      received.push(Date.now());
      return { kind: "done" };
    });
    await waitFor(() => received.length === 1, 10_000, "the delayed message");

    expect(received[0]! - sentAt).toBeGreaterThanOrEqual(680);
  });

  it("republishes a malformed message to the dead-letter topic; its neighbours succeed", async () => {
    const topo = await topology();
    const log = eventLog();
    const handled: string[] = [];
    const raw = pubsub.topic(topo.topic, { messageOrdering: true });
    await raw.publishMessage({ data: Buffer.from("definitely not json"), orderingKey: "junk" });
    await new PubSubProducer({ pubsub, topic: topo.topic }).send([named("ok-1"), named("ok-2")]);

    consumer({
      subscription: topo.subscription,
      deadLetterTopic: topo.deadLetterTopic,
      onEvent: log.sink,
    }).start(async (r) => {
      handled.push(r.message.name);
      return { kind: "done" };
    });
    const dead = await collect(topo.deadLetterSubscription, 1, 10_000);
    await waitFor(() => handled.length >= 2, 10_000, "the good neighbours");

    expect(dead.map((m) => m.data.toString())).toEqual(["definitely not json"]);
    expect(dead[0]?.attributes[PUBSUB_DLQ_ERROR_ATTRIBUTE]).toBe("body is not JSON");
    expect(handled.sort()).toEqual(["ok-1", "ok-2"]);
    expect(log.messages().filter((m) => m.startsWith("malformed"))).toEqual([
      "malformed message moved to the dead-letter topic",
    ]);
  });

  it("dead-letters a message that keeps failing after maxDeliveryAttempts (unordered subscription)", async () => {
    const topo = await topology({ ordering: false, maxDeliveryAttempts: 5, ...FAST_RETRY });
    const attempts: number[] = [];
    await new PubSubProducer({ pubsub, topic: topo.topic, ordering: false }).send([
      named("doomed"),
      named("fine"),
    ]);
    const fine: string[] = [];

    consumer({ subscription: topo.subscription }).start(async (r) => {
      if (r.message.name === "fine") {
        fine.push(r.id);
        return { kind: "done" };
      }
      attempts.push(r.receiveCount);
      return { kind: "retry", error: new Error("permanently broken") };
    });
    const dead = await collect(topo.deadLetterSubscription, 1, 20_000);

    expect(attempts).toEqual([1, 2, 3, 4, 5]);
    expect(fine).toHaveLength(1);
    expect(dead).toHaveLength(1);
    expect(JSON.parse(dead[0]!.data.toString()).name).toBe("doomed");
    expect(dead[0]!.attributes["CloudPubSubDeadLetterSourceDeliveryCount"]).toBe("5");
  });

  it("nacks malformed messages for the subscription's dead-letter policy when no DLQ topic is given", async () => {
    const topo = await topology({ ordering: false, maxDeliveryAttempts: 5, ...FAST_RETRY });
    const log = eventLog();
    await pubsub
      .topic(topo.topic)
      .publishMessage({ data: Buffer.from(encodeMessage(named("x")).replace('"v":1', '"v":3')) });

    consumer({ subscription: topo.subscription, onEvent: log.sink }).start(async () => {
      throw new Error("must not be called");
    });
    const dead = await collect(topo.deadLetterSubscription, 1, 20_000);

    expect(dead).toHaveLength(1);
    const malformed = log.events.filter(
      (e) => e.msg === "malformed message; nacked for the dead-letter policy",
    );
    expect(malformed.map((e) => e["receiveCount"])).toEqual([1, 2, 3, 4, 5]);
    expect(malformed[0]?.["err"]).toContain("unsupported message version (3)");
  });

  it("reopens the subscription after its stream dies for good, and keeps consuming", async () => {
    const base = uniqueName("dl-reopen");
    const input: PubSubTopologyInput = { topic: `${base}-t`, subscription: `${base}-s` };
    const topo = await ensurePubSubTopology(pubsub, input);
    const log = eventLog();
    const handled: string[] = [];
    consumer({ subscription: topo.subscription, onEvent: log.sink }).start(async (r) => {
      handled.push(r.message.name);
      return { kind: "done" };
    });
    await new Promise((resolve) => setTimeout(resolve, 300));

    await pubsub.subscription(topo.subscription).delete();
    await waitFor(
      () => log.messages().includes("Pub/Sub subscription closed; reopening"),
      20_000,
      "a reopen",
    );
    await ensurePubSubTopology(pubsub, input);
    await new PubSubProducer({ pubsub, topic: topo.topic }).send([named("after-outage")]);
    await waitFor(() => handled.length > 0, 40_000, "a delivery after the outage");

    expect(handled).toEqual(["after-outage"]);
  });
});
