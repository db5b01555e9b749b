// The SQS producer and the test kit's queue pair against a real SQS API (moto_server from the local stack).
import { GetQueueAttributesCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqsProducer } from "../../../shared/queue/sqs.ts";
import { ensureSqsQueue } from "../../support/queues.ts";
import { named } from "../../unit/queue/factories.ts";
import { sqsClient, uniqueName } from "./support.ts";

let client: SQSClient;

beforeAll(() => {
  client = sqsClient();
});
afterAll(() => {
  client.destroy();
});

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

describe("SqsProducer", () => {
  it("delays standard-queue sends with DelaySeconds", async () => {
    const pair = await ensureSqsQueue(client, { name: uniqueName("dl-delay") });
    const received: number[] = [];
    const sentAt = Date.now();
    await new SqsProducer({ client, queueUrl: pair.queueUrl }).send([named("later")], { delayMs: 2_000 });

    while (received.length === 0 && Date.now() - sentAt < 10_000) {
      const out = await client.send(
        new ReceiveMessageCommand({ QueueUrl: pair.queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 1 }),
      );
      for (const _ of out.Messages ?? []) received.push(Date.now());
    }

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
