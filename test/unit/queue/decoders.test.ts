import { describe, expect, it } from "vitest";
import { backoffMs } from "../../../shared/queue/backoff.ts";
import { encodeMessage } from "../../../shared/queue/message.ts";
import { decodePubSubPushEvent, PUBSUB_NOT_BEFORE_ATTRIBUTE } from "../../../shared/queue/pubsub.ts";
import { decodeSqsRecord, sqsDeduplicationId } from "../../../shared/queue/sqs.ts";
import { aMessage } from "./factories.ts";

function aLambdaRecord(body: string, receiveCount = "1") {
  return {
    messageId: "059f36b4-87a3-44ab-83d2-661975830a7d",
    receiptHandle: "AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a",
    body,
    attributes: { ApproximateReceiveCount: receiveCount, SentTimestamp: "1545082649183" },
  };
}

function aPushEvent(
  data: string,
  extra: Record<string, unknown> = {},
  attributes: Record<string, string> = {},
) {
  return {
    id: "evt-1",
    type: "google.cloud.pubsub.topic.v1.messagePublished",
    data: {
      message: {
        data: Buffer.from(data).toString("base64"),
        messageId: "1234567890",
        publishTime: "2025-01-02T03:04:05.000Z",
        orderingKey: "Queue.sqs.aws.driftless.dev/team-a/orders",
        attributes,
      },
      subscription: "projects/p/subscriptions/s",
      ...extra,
    },
  };
}

describe("decodeSqsRecord", () => {
  it("decodes a Lambda SQS record", () => {
    const result = decodeSqsRecord(aLambdaRecord(encodeMessage(aMessage()), "3"));

    expect(result).toEqual({
      ok: true,
      received: {
        message: aMessage(),
        id: "059f36b4-87a3-44ab-83d2-661975830a7d",
        receiveCount: 3,
        enqueuedAt: new Date(1545082649183),
      },
    });
  });

  it("reports a malformed body with its message id, never the body", () => {
    const result = decodeSqsRecord(aLambdaRecord("hello"));

    expect(result).toEqual({
      ok: false,
      messageId: "059f36b4-87a3-44ab-83d2-661975830a7d",
      receiveCount: 1,
      error: "body is not JSON",
    });
  });

  it("derives a FIFO deduplication id from key and time", () => {
    const id = sqsDeduplicationId(aMessage());

    expect(id).toMatch(/^[0-9a-f]{64}$/);
    expect(sqsDeduplicationId(aMessage({ reason: "drift" }))).toBe(id);
    expect(sqsDeduplicationId(aMessage({ at: "2025-01-02T03:04:06.000Z" }))).not.toBe(id);
  });
});

describe("decodePubSubPushEvent", () => {
  it("decodes a Cloud Functions gen2 CloudEvent", () => {
    const result = decodePubSubPushEvent(aPushEvent(encodeMessage(aMessage()), { deliveryAttempt: 4 }));

    expect(result).toEqual({
      ok: true,
      received: {
        message: aMessage(),
        id: "1234567890",
        receiveCount: 4,
        enqueuedAt: new Date("2025-01-02T03:04:05.000Z"),
      },
    });
  });

  it("returns notBefore for a delayed message", () => {
    const event = aPushEvent(
      encodeMessage(aMessage()),
      {},
      { [PUBSUB_NOT_BEFORE_ATTRIBUTE]: "1767225600000" },
    );

    const result = decodePubSubPushEvent(event);

    expect(result.ok && result.notBefore).toEqual(new Date(1767225600000));
  });

  it.each([
    ["no data", {}, "event has no Pub/Sub message"],
    ["data that is not JSON", { data: "{" }, "event data is not JSON"],
    ["a message with no data", { data: { message: { messageId: "9" } } }, "body is not JSON"],
    [
      "a wrong version",
      aPushEvent(JSON.stringify({ ...aMessage(), v: 2 })),
      "unsupported message version (2)",
    ],
  ])("rejects %s without throwing", (_label, event, expected) => {
    const result = decodePubSubPushEvent(event);

    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(expected);
  });

  it("accepts null and primitives without throwing", () => {
    for (const event of [null, undefined, 42, "x", []]) expect(decodePubSubPushEvent(event).ok).toBe(false);
  });
});

describe("backoffMs", () => {
  it("doubles per attempt within [d/2, d] and caps at maxMs", () => {
    const policy = { baseMs: 100, maxMs: 1_000 };

    expect([1, 2, 3, 4, 5, 30].map((n) => backoffMs(n, policy, () => 1))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
    expect([1, 2, 3].map((n) => backoffMs(n, policy, () => 0))).toEqual([50, 100, 200]);
  });
});
