// The work topic's producer over Pub/Sub's REST API (shared/queue/pubsub-rest.ts) against the Pub/Sub
// emulator: what it publishes arrives whole (data, attributes, ordering key, in order), a missing topic is a
// SendFailedError for every message of the batch, and a redirect is never followed.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { PubSub } from "@google-cloud/pubsub";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SendFailedError } from "../../../shared/queue/errors.ts";
import { decodeMessage, makeMessage, type ReconcileMessage } from "../../../shared/queue/message.ts";
import { PUBSUB_NOT_BEFORE_ATTRIBUTE, PubSubProducer } from "../../../shared/queue/pubsub.ts";
import { PubSubRestTopic } from "../../../shared/queue/pubsub-rest.ts";
import { ensurePubSubTopology } from "../../support/queues.ts";
import { pubSubClient, uniqueName } from "./support.ts";

let pubsub: PubSub;
beforeAll(() => {
  pubsub = pubSubClient();
});
afterAll(async () => {
  await pubsub.close();
});

const msg = (name: string): ReconcileMessage =>
  makeMessage({ apiVersion: "pubsub.gcp.upbound.io/v1beta1", kind: "Topic", name }, "watch");

describe("PubSubRestTopic with PubSubProducer", () => {
  it("publishes a batch over REST: data, attributes and ordering keys arrive, in order", async () => {
    const base = uniqueName("rest-pub");
    const topology = await ensurePubSubTopology(pubsub, {
      topic: `${base}-t`,
      subscription: `${base}-s`,
      ordering: true,
    });
    const topic = new PubSubRestTopic({ topic: `${base}-t`, projectId: process.env.GCP_PROJECT_ID });
    expect(await topic.name()).toBe(topology.topic);
    const producer = new PubSubProducer({ topic });
    const sent = [msg("a"), msg("b"), msg("a")];

    const before = Date.now();
    const result = await producer.send(sent, { delayMs: 5_000 });

    expect(result).toEqual({ sent: 3, failed: [] });
    const received: Array<{ data: string; attributes: Record<string, string>; orderingKey?: string }> = [];
    const sub = pubsub.subscription(topology.subscription);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`received ${received.length} of 3`)), 20_000);
      sub.on("message", (m) => {
        received.push({ data: m.data.toString(), attributes: m.attributes, orderingKey: m.orderingKey });
        m.ack();
        if (received.length === 3) {
          clearTimeout(timer);
          resolve();
        }
      });
      sub.on("error", reject);
    });
    await sub.close();
    const decoded = received.map((r) => {
      const d = decodeMessage(r.data);
      if (!d.ok) throw new Error(d.error);
      return d.message;
    });
    expect(decoded.map((m) => m.name).sort()).toEqual(["a", "a", "b"]);
    // Same key, same order: the two messages of "a" arrive as they were sent.
    expect(decoded.filter((m) => m.name === "a").map((m) => m.at)).toEqual([sent[0]?.at, sent[2]?.at]);
    for (const r of received) {
      expect(r.orderingKey).toMatch(/Topic/);
      expect(Number(r.attributes[PUBSUB_NOT_BEFORE_ATTRIBUTE])).toBeGreaterThanOrEqual(before + 5_000);
    }
  });

  it("fails every message of the batch when the topic does not exist, with Pub/Sub's reason", async () => {
    const topic = new PubSubRestTopic({ topic: uniqueName("rest-none"), projectId: "driftless-local" });
    const result = await new PubSubProducer({ topic }).send([msg("x"), msg("y")]);
    expect(result.sent).toBe(0);
    expect(result.failed.map((f) => f.index)).toEqual([0, 1]);
    const error = result.failed[0]?.error as SendFailedError;
    expect(error).toBeInstanceOf(SendFailedError);
    expect(String((error.cause as Error).message)).toMatch(/HTTP 404: NOT_FOUND/);
  });

  it("never follows a redirect", async () => {
    let followed = 0;
    const target: Server = createServer((_req, res) => {
      followed++;
      res.writeHead(200, { "content-type": "application/json" }).end('{"messageIds":["1"]}');
    });
    await new Promise<void>((r) => target.listen(0, "127.0.0.1", r));
    const to = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
    const redirecting: Server = createServer((_req, res) => {
      res.writeHead(307, { location: to }).end();
    });
    await new Promise<void>((r) => redirecting.listen(0, "127.0.0.1", r));
    try {
      const host = `127.0.0.1:${(redirecting.address() as AddressInfo).port}`;
      const topic = new PubSubRestTopic({
        topic: "projects/p1/topics/t1",
        env: { PUBSUB_EMULATOR_HOST: host },
      });
      await expect(topic.publish([{ data: Buffer.from("x") }])).rejects.toBeInstanceOf(SendFailedError);
      expect(followed).toBe(0);
    } finally {
      redirecting.close();
      target.close();
    }
  });
});
