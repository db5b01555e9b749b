// handlePubSubPush: return (2xx, ack) or throw (non-2xx, redelivered by the subscription's retry policy).
import { describe, expect, it } from "vitest";
import type { ReconcileMessage } from "../../../shared/queue/message.ts";
import type { SendResult } from "../../../shared/queue/port.ts";
import { PUBSUB_DLQ_ERROR_ATTRIBUTE } from "../../../shared/queue/pubsub.ts";
import type { PubSubOutgoing, PubSubPublisher } from "../../../shared/queue/pubsub-rest.ts";
import { MalformedMessageError, ReconcileFailedError, RequeueError } from "../../../shared/worker/errors.ts";
import { handlePubSubPush } from "../../../shared/worker/pubsub.ts";
import { named, pushEvent, recordingLogger, scriptedReconcile } from "./factories.ts";

function recordingTopic(fail = false) {
  const published: Array<{ data: Buffer; attributes: Record<string, string> }> = [];
  return {
    published,
    topic: {
      publish: async (messages: readonly PubSubOutgoing[]) => {
        if (fail) throw new Error("PERMISSION_DENIED");
        for (const m of messages)
          published.push({ data: Buffer.from(m.data), attributes: { ...m.attributes } });
        return messages.map((_, i) => `dlq-${i + 1}`);
      },
    } satisfies PubSubPublisher,
  };
}

function recordingProducer(accept = true) {
  const sent: ReconcileMessage[] = [];
  return {
    sent,
    producer: {
      send: async (messages: readonly ReconcileMessage[]): Promise<SendResult> => {
        if (!accept)
          return { sent: 0, failed: [{ index: 0, message: messages[0]!, error: new Error("quota") }] };
        sent.push(...messages);
        return { sent: messages.length, failed: [] };
      },
    },
  };
}

describe("handlePubSubPush", () => {
  it("nacks a message that is not due yet (notBefore) without reconciling it; reconciles it once due", async () => {
    const { reconcile, seen } = scriptedReconcile({ later: { outcome: "in-sync" } });
    const deps = { reconcile, logger: recordingLogger().logger };
    const future = pushEvent(named("later"), { attributes: { notBefore: String(Date.now() + 30_000) } });
    await expect(handlePubSubPush(deps, future)).rejects.toBeInstanceOf(RequeueError);
    expect(seen).toEqual([]);
    const due = pushEvent(named("later"), { attributes: { notBefore: String(Date.now() - 1) } });
    await expect(handlePubSubPush(deps, due)).resolves.toMatchObject({ outcome: "done" });
    expect(seen).toHaveLength(1);
  });

  it("acks a reconciled message and reconciles the key it names", async () => {
    const { reconcile, seen } = scriptedReconcile({ orders: { outcome: "in-sync" } });
    const result = await handlePubSubPush(
      { reconcile, logger: recordingLogger().logger },
      pushEvent(named("orders", { namespace: "team-a" })),
    );
    expect(result).toMatchObject({ outcome: "done" });
    expect(seen).toEqual([
      { apiVersion: "sqs.aws.driftless.dev/v1alpha1", kind: "Queue", name: "orders", namespace: "team-a" },
    ]);
  });

  it("throws ReconcileFailedError on a failed reconcile, so Pub/Sub redelivers with backoff", async () => {
    const { reconcile } = scriptedReconcile({ x: { outcome: "error", error: new Error("Throttled") } });
    await expect(
      handlePubSubPush({ reconcile, logger: recordingLogger().logger }, pushEvent(named("x"))),
    ).rejects.toBeInstanceOf(ReconcileFailedError);
    const throwing = scriptedReconcile({
      y: async () => {
        throw new Error("socket hang up");
      },
    });
    await expect(
      handlePubSubPush(
        { reconcile: throwing.reconcile, logger: recordingLogger().logger },
        pushEvent(named("y")),
      ),
    ).rejects.toThrow("socket hang up");
  });

  it("throws RequeueError for a waiting resource; the retry policy's backoff is the delay", async () => {
    const { reconcile } = scriptedReconcile({ db: { outcome: "creating", requeueAfterMs: 4_000 } });
    const { producer, sent } = recordingProducer();
    const err = await handlePubSubPush(
      { reconcile, logger: recordingLogger().logger, producer, maxDeliveryAttempts: 10 },
      pushEvent(named("db"), { deliveryAttempt: 3 }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RequeueError);
    expect((err as RequeueError).afterMs).toBe(4_000);
    expect(sent).toEqual([]);
  });

  it("publishes a fresh copy at the last delivery attempt instead of letting a waiting resource dead-letter", async () => {
    const { reconcile } = scriptedReconcile({ db: { outcome: "creating", requeueAfterMs: 4_000 } });
    const { producer, sent } = recordingProducer();
    const result = await handlePubSubPush(
      { reconcile, logger: recordingLogger().logger, producer, maxDeliveryAttempts: 10 },
      pushEvent(named("db", { id: "corr-9" }), { deliveryAttempt: 10 }),
    );
    expect(result).toMatchObject({ outcome: "requeued-fresh" });
    expect(sent).toEqual([expect.objectContaining({ name: "db", reason: "requeue", id: "corr-9" })]);

    // If the copy cannot be published, the delivery is nacked (and may be dead-lettered).
    const refusing = recordingProducer(false);
    await expect(
      handlePubSubPush(
        { reconcile, logger: recordingLogger().logger, producer: refusing.producer, maxDeliveryAttempts: 10 },
        pushEvent(named("db"), { deliveryAttempt: 10 }),
      ),
    ).rejects.toBeInstanceOf(RequeueError);
  });

  it("copies a malformed message verbatim to the dead-letter topic and acks it, never logging the body", async () => {
    const { topic, published } = recordingTopic();
    const log = recordingLogger();
    const result = await handlePubSubPush(
      { reconcile: scriptedReconcile({}).reconcile, logger: log.logger, deadLetterTopic: topic },
      pushEvent('{"v":1,"kind":"Queue","password":"s3cret"}', { messageId: "bad-1", attributes: { a: "b" } }),
    );
    expect(result).toEqual({ outcome: "dead-lettered", messageId: "bad-1" });
    expect(published).toHaveLength(1);
    expect(published[0]?.data.toString()).toBe('{"v":1,"kind":"Queue","password":"s3cret"}');
    expect(published[0]?.attributes).toMatchObject({ a: "b", "driftless-source-message-id": "bad-1" });
    expect(published[0]?.attributes[PUBSUB_DLQ_ERROR_ATTRIBUTE]).toBeTruthy();
    expect(log.lines.filter((l) => l.level === "error")).toHaveLength(1);
    expect(log.text()).not.toContain("s3cret");
  });

  it("nacks a malformed message without a dead-letter topic, or when the copy fails", async () => {
    const log = recordingLogger();
    const reconcile = scriptedReconcile({}).reconcile;
    await expect(
      handlePubSubPush({ reconcile, logger: log.logger }, pushEvent("garbage", { deliveryAttempt: 1 })),
    ).rejects.toBeInstanceOf(MalformedMessageError);
    await expect(
      handlePubSubPush({ reconcile, logger: log.logger }, pushEvent("garbage", { deliveryAttempt: 2 })),
    ).rejects.toBeInstanceOf(MalformedMessageError);
    expect(log.lines.filter((l) => l.level === "error")).toHaveLength(1);
    await expect(
      handlePubSubPush(
        { reconcile, logger: log.logger, deadLetterTopic: recordingTopic(true).topic },
        pushEvent("garbage"),
      ),
    ).rejects.toBeInstanceOf(MalformedMessageError);
    await expect(handlePubSubPush({ reconcile, logger: log.logger }, { data: "{" })).rejects.toBeInstanceOf(
      MalformedMessageError,
    );
  });
});
