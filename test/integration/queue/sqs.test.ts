// The SQS adapter against a real SQS API (moto_server from the local stack).
import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { messageKey, type ReconcileMessage } from "../../../shared/queue/message.ts";
import type { HandlerOutcome, ReceivedMessage } from "../../../shared/queue/port.ts";
import {
  ensureSqsQueue,
  SQS_DLQ_ERROR_ATTRIBUTE,
  SqsConsumer,
  type SqsConsumerOptions,
  SqsProducer,
  type SqsQueuePair,
} from "../../../shared/queue/sqs.ts";
import { named } from "../../unit/queue/factories.ts";
import { eventLog, sqsClient, uniqueName, waitFor } from "./support.ts";

let client: SQSClient;
const consumers: SqsConsumer[] = [];

beforeAll(() => {
  client = sqsClient();
});
afterEach(async () => {
  await Promise.all(consumers.splice(0).map((c) => c.stop()));
});
afterAll(() => {
  client.destroy();
});

function consumer(options: Omit<SqsConsumerOptions, "client">): SqsConsumer {
  const c = new SqsConsumer({ client, waitTimeSeconds: 1, ...options });
  consumers.push(c);
  return c;
}

async function counts(queueUrl: string): Promise<{ visible: number; inFlight: number }> {
  const out = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    }),
  );
  return {
    visible: Number(out.Attributes?.ApproximateNumberOfMessages),
    inFlight: Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible),
  };
}

/** Drains the DLQ directly (not through the adapter) so tests see exactly what landed there. */
async function drainDlq(dlqUrl: string, expected: number, timeoutMs: number) {
  const found: Array<{ body: string; attributes: Record<string, string | undefined> }> = [];
  const deadline = Date.now() + timeoutMs;
  while (found.length < expected && Date.now() < deadline) {
    const out = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: dlqUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        VisibilityTimeout: 300,
        MessageAttributeNames: ["All"],
      }),
    );
    for (const m of out.Messages ?? []) {
      const attributes: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(m.MessageAttributes ?? {})) attributes[k] = v.StringValue;
      found.push({ body: m.Body ?? "", attributes });
    }
  }
  return found;
}

function manyMessages(count: number, keys: number): ReconcileMessage[] {
  const base = Date.parse("2025-01-01T00:00:00Z");
  return Array.from({ length: count }, (_, i) =>
    named(`res-${i % keys}`, { at: new Date(base + i * 1000).toISOString(), id: `seq-${i}` }),
  );
}

describe("ensureSqsQueue", () => {
  it("creates a queue and its DLQ with a redrive policy, idempotently", async () => {
    const name = uniqueName("dl-ensure");

    const first = await ensureSqsQueue(client, { name, visibilityTimeoutSeconds: 7, maxReceiveCount: 3 });
    const again = await ensureSqsQueue(client, { name, visibilityTimeoutSeconds: 9, maxReceiveCount: 4 });

    expect(again).toEqual(first);
    expect(first.queueUrl).toMatch(new RegExp(`/${name}$`));
    expect(first.dlqUrl).toMatch(new RegExp(`/${name}-dlq$`));
    const attrs = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: first.queueUrl, AttributeNames: ["All"] }),
    );
    expect(attrs.Attributes?.VisibilityTimeout).toBe("9");
    expect(JSON.parse(attrs.Attributes?.RedrivePolicy ?? "{}")).toEqual({
      deadLetterTargetArn: first.dlqArn,
      maxReceiveCount: 4,
    });
  });

  it("creates FIFO pairs", async () => {
    const name = uniqueName("dl-ensure");

    const pair = await ensureSqsQueue(client, { name, fifo: true });

    expect(pair.queueUrl.endsWith(`${name}.fifo`)).toBe(true);
    expect(pair.dlqUrl.endsWith(`${name}-dlq.fifo`)).toBe(true);
  });
});

describe.each([
  ["standard", false],
  ["FIFO", true],
])("SQS %s queue", (_label, fifo) => {
  let pair: SqsQueuePair;

  beforeAll(async () => {
    pair = await ensureSqsQueue(client, { name: uniqueName("dl-q"), fifo, visibilityTimeoutSeconds: 30 });
  });

  it("sends 25 messages in batches and consumes them all with long polls, one handler per key", async () => {
    const producer = new SqsProducer({ client, queueUrl: pair.queueUrl });
    const messages = manyMessages(25, 5);
    const seen: ReceivedMessage[] = [];
    const running = new Map<string, number>();
    let maxPerKey = 0;

    const result = await producer.send(messages);
    expect(result).toEqual({ sent: 25, failed: [] });
    consumer({ queueUrl: pair.queueUrl, workers: 8 }).start(async (r) => {
      const key = messageKey(r.message);
      running.set(key, (running.get(key) ?? 0) + 1);
      maxPerKey = Math.max(maxPerKey, running.get(key) ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running.set(key, (running.get(key) ?? 0) - 1);
      seen.push(r);
      return { kind: "done" };
    });
    await waitFor(() => seen.length >= 25, 20_000, "25 deliveries");

    expect(new Set(seen.map((r) => r.message.id)).size).toBe(25);
    expect(maxPerKey).toBe(1);
    expect(seen.every((r) => r.receiveCount === 1 && r.enqueuedAt instanceof Date)).toBe(true);
    if (fifo) {
      // FIFO: per key (message group) in send order.
      for (let k = 0; k < 5; k++) {
        const ids = seen
          .filter((r) => r.message.name === `res-${k}`)
          .map((r) => Number(r.message.id?.slice(4)));
        expect(ids).toEqual([...ids].sort((a, b) => a - b));
      }
    }
    await consumers.splice(0).pop()?.stop();
    expect(await counts(pair.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it("requeues after a delay with ChangeMessageVisibility", async () => {
    const producer = new SqsProducer({ client, queueUrl: pair.queueUrl });
    const deliveries: Array<{ at: number; r: ReceivedMessage }> = [];
    consumer({ queueUrl: pair.queueUrl }).start(async (r) => {
      deliveries.push({ at: Date.now(), r });
      return deliveries.length === 1 ? { kind: "requeue", afterMs: 2_000 } : { kind: "done" };
    });

    await producer.send([named("requeued")]);
    await waitFor(() => deliveries.length >= 2, 15_000, "the requeued delivery");

    const [first, second] = deliveries;
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1_900);
    expect(second!.r.id).toBe(first!.r.id);
    expect(second!.r.receiveCount).toBe(2);
  });
});

describe("SQS dead-lettering", () => {
  it("sends a repeatedly failing message and a malformed one to the DLQ; their neighbours succeed", async () => {
    const pair = await ensureSqsQueue(client, {
      name: uniqueName("dl-poison"),
      visibilityTimeoutSeconds: 1,
      maxReceiveCount: 2,
    });
    const producer = new SqsProducer({ client, queueUrl: pair.queueUrl });
    const log = eventLog();
    const calls: Record<string, number[]> = {};
    await producer.send([named("good-1"), named("failing"), named("good-2")]);
    await client.send(new SendMessageCommand({ QueueUrl: pair.queueUrl, MessageBody: "not json at all" }));

    consumer({ queueUrl: pair.queueUrl, onEvent: log.sink }).start(async (r): Promise<HandlerOutcome> => {
      const name = r.message.name;
      calls[name] = [...(calls[name] ?? []), r.receiveCount];
      if (name === "failing") return { kind: "retry", error: new Error("cloud API 500") };
      return { kind: "done" };
    });
    const dead = await drainDlq(pair.dlqUrl, 2, 25_000);

    expect(dead).toHaveLength(2);
    expect(dead.map((d) => d.body)).toEqual(
      expect.arrayContaining([expect.stringContaining('"name":"failing"'), "not json at all"]),
    );
    expect(calls).toEqual({ "good-1": [1], "good-2": [1], failing: [1, 2] });
    expect(log.messages()).toContain("malformed message; left for the redrive policy");
    expect(JSON.stringify(log.events)).not.toContain("not json at all");
  });

  it("moves a malformed message to a configured DLQ at once, logged once", async () => {
    const pair = await ensureSqsQueue(client, { name: uniqueName("dl-bad"), visibilityTimeoutSeconds: 1 });
    const log = eventLog();
    const handled: string[] = [];
    await client.send(new SendMessageCommand({ QueueUrl: pair.queueUrl, MessageBody: '{"v":2}' }));
    await new SqsProducer({ client, queueUrl: pair.queueUrl }).send([named("fine")]);

    consumer({ queueUrl: pair.queueUrl, deadLetterQueueUrl: pair.dlqUrl, onEvent: log.sink }).start(
      async (r) => {
        handled.push(r.message.name);
        return { kind: "done" };
      },
    );
    const dead = await drainDlq(pair.dlqUrl, 1, 10_000);
    await waitFor(() => handled.length === 1, 10_000, "the good neighbour");
    await consumers.splice(0).pop()?.stop();

    expect(dead).toEqual([
      {
        body: '{"v":2}',
        attributes: {
          [SQS_DLQ_ERROR_ATTRIBUTE]: "unsupported message version (2); this reader understands v1",
          "driftless-source-message-id": expect.any(String),
        },
      },
    ]);
    expect(handled).toEqual(["fine"]);
    expect(log.messages().filter((m) => m.startsWith("malformed"))).toEqual([
      "malformed message moved to the dead-letter queue",
    ]);
    expect(await counts(pair.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it("keeps requeuing past maxReceiveCount without dead-lettering (fresh copy near the limit)", async () => {
    const pair = await ensureSqsQueue(client, {
      name: uniqueName("dl-wait"),
      visibilityTimeoutSeconds: 30,
      maxReceiveCount: 2,
    });
    const deliveries: ReceivedMessage[] = [];
    await new SqsProducer({ client, queueUrl: pair.queueUrl }).send([named("creating", { id: "chain-1" })]);

    consumer({ queueUrl: pair.queueUrl, maxReceiveCount: 2 }).start(async (r) => {
      deliveries.push(r);
      return deliveries.length < 5 ? { kind: "requeue", afterMs: 0 } : { kind: "done" };
    });
    await waitFor(() => deliveries.length >= 5, 20_000, "five deliveries");

    expect(deliveries.map((d) => d.receiveCount)).toEqual([1, 2, 1, 2, 1]);
    expect(deliveries.map((d) => d.message.reason)).toEqual([
      "watch",
      "watch",
      "requeue",
      "requeue",
      "requeue",
    ]);
    expect(deliveries.every((d) => d.message.id === "chain-1")).toBe(true);
    expect(await drainDlq(pair.dlqUrl, 1, 1_500)).toEqual([]);
  });

  it("delays standard-queue sends with DelaySeconds", async () => {
    const pair = await ensureSqsQueue(client, { name: uniqueName("dl-delay") });
    const received: number[] = [];
    const sentAt = Date.now();
    await new SqsProducer({ client, queueUrl: pair.queueUrl }).send([named("later")], { delayMs: 2_000 });

    consumer({ queueUrl: pair.queueUrl }).start(async () => {
      received.push(Date.now());
      return { kind: "done" };
    });
    await waitFor(() => received.length === 1, 10_000, "the delayed message");

    expect(received[0]! - sentAt).toBeGreaterThanOrEqual(1_900);
  });

  it("reports per-message failures without failing the batch", async () => {
    const pair = await ensureSqsQueue(client, { name: uniqueName("dl-partial") });
    const producer = new SqsProducer({ client, queueUrl: pair.queueUrl });

    const result = await producer.send([named("ok-1"), named("BAD NAME"), named("ok-2")]);

    expect(result.sent).toBe(2);
    expect(result.failed.map((f) => [f.index, f.error.name])).toEqual([[1, "InvalidMessageError"]]);
  });
});
