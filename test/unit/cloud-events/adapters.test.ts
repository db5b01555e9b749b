// Cloud events through the function adapters: an EventBridge body among driftless messages on SQS, a
// LogEntry pushed from Pub/Sub, an Event Grid delivery over HTTP. Keys are reconciled in the same
// invocation; a failed LIST retries the event; malformed events are dead-lettered without their bodies.
import { describe, expect, it } from "vitest";
import { handleEventGridRequest } from "../../../shared/cloud-events/event-grid.ts";
import { CloudEventResolver } from "../../../shared/cloud-events/resolve.ts";
import { decodeMessage, type ReconcileMessage } from "../../../shared/queue/message.ts";
import { ReconcileFailedError } from "../../../shared/worker/errors.ts";
import { handlePubSubPush } from "../../../shared/worker/pubsub.ts";
import { handleSqsBatch, type SqsEventRecord } from "../../../shared/worker/sqs.ts";
import {
  named,
  pushEvent,
  QUEUE_URL,
  recordingLogger,
  recordingSqs,
  scriptedReconcile,
  sqsRecord,
} from "../worker/factories.ts";
import { clusterWith, fixture, fixtureJson, kindOf, marksUnreachable } from "./support.ts";

const queue = kindOf("Queue", "sqs.aws");
const topic = kindOf("Topic", "pubsub.gcp");
const vnet = kindOf("VirtualNetwork", "network.azure");
const failuresOf = (r: { batchItemFailures: Array<{ itemIdentifier: string }> }) =>
  r.batchItemFailures.map((f) => f.itemIdentifier);

/**
 * Prepare: the managed queue "orders" (external name orders-queue) with its index label, a recording
 * SQS client and logger, and a reconcile answering per name; `handle` runs handleSqsBatch over records.
 */
function sqsWithQueue(answers: Parameters<typeof scriptedReconcile>[0] = {}) {
  const { kube } = clusterWith([{ kind: queue, name: "orders", externalName: "orders-queue" }]);
  const { sqs, calls } = recordingSqs();
  const { logger, text } = recordingLogger();
  const { reconcile, seen } = scriptedReconcile(answers);
  const cloudEvents = new CloudEventResolver({ kube, kinds: [queue] });
  const handle = (...records: SqsEventRecord[]) =>
    handleSqsBatch({ sqs, reconcile, logger, queueUrl: QUEUE_URL, cloudEvents }, { Records: records });
  return { calls, text, seen, handle };
}

describe("handleSqsBatch with cloud events", () => {
  it("reconciles the event's resource with the batch's other messages, reason drift, and reports success", async () => {
    const { calls, text, seen, handle } = sqsWithQueue();
    const res = await handle(
      sqsRecord(fixture("aws-sqs-set-queue-attributes.json")),
      sqsRecord(named("neighbour")),
    );

    expect(failuresOf(res)).toEqual([]);
    expect(seen.map((k) => k.name).sort()).toEqual(["neighbour", "orders"]);
    expect(res.summary).toMatchObject({ cloudEvents: 1, malformed: 0, done: 1 });
    expect(calls).toEqual([]);
    expect(text()).not.toContain("VisibilityTimeout");
  });

  it("a key both in a message and in an event is reconciled once", async () => {
    const { seen, handle } = sqsWithQueue();
    // Queues are cluster-scoped: no namespace.
    const { namespace: _none, ...msg }: ReconcileMessage = {
      ...named("orders"),
      apiVersion: queue.definition.apiVersion,
      kind: "Queue",
    };
    await handle(sqsRecord(msg), sqsRecord(fixture("aws-sqs-set-queue-attributes.json")));
    expect(seen.map((k) => k.name)).toEqual(["orders"]);
  });

  it("a failed LIST lists the event record (retried); neighbours are unaffected", async () => {
    const { sqs } = recordingSqs();
    const { logger } = recordingLogger();
    const { reconcile, seen } = scriptedReconcile({});
    const event = sqsRecord(fixture("aws-sqs-set-queue-attributes.json"));
    const other = sqsRecord(named("neighbour"));
    const resolver = new CloudEventResolver({
      kube: { list: () => Promise.reject(new Error("503 from the API server")), ...marksUnreachable },
      kinds: [queue],
    });
    const res = await handleSqsBatch(
      { sqs, reconcile, logger, queueUrl: QUEUE_URL, cloudEvents: resolver },
      { Records: [event, other] },
    );
    expect(failuresOf(res)).toEqual([event.messageId]);
    expect(seen.map((k) => k.name)).toEqual(["neighbour"]);
  });

  it("a failed reconcile of an event's key lists the event with the engine's backoff", async () => {
    const { calls, handle } = sqsWithQueue({
      orders: { outcome: "error", error: new Error("boom"), requeueAfterMs: 9_000 },
    });
    const event = sqsRecord(fixture("aws-sqs-set-queue-attributes.json"));
    const res = await handle(event);
    expect(failuresOf(res)).toEqual([event.messageId]);
    expect(calls).toEqual([
      {
        name: "ChangeMessageVisibilityCommand",
        input: { QueueUrl: QUEUE_URL, ReceiptHandle: event.receiptHandle, VisibilityTimeout: 9 },
      },
    ]);
  });

  it("a key that asks to be looked at again goes back as a fresh delayed message; the event is done", async () => {
    const { calls, handle } = sqsWithQueue({ orders: { outcome: "updated", requeueAfterMs: 2_000 } });
    const res = await handle(sqsRecord(fixture("aws-sqs-set-queue-attributes.json")));
    expect(failuresOf(res)).toEqual([]);
    expect(calls.map((c) => c.name)).toEqual(["SendMessageBatchCommand"]);
    const entries = calls[0]?.input.Entries as Array<{ MessageBody: string; DelaySeconds?: number }>;
    expect(entries[0]?.DelaySeconds).toBe(2);
    const sent = decodeMessage(entries[0]?.MessageBody ?? "");
    expect(sent).toMatchObject({ ok: true, message: { name: "orders", reason: "requeue", kind: "Queue" } });
  });

  it("a malformed EventBridge event is dead-lettered like a malformed message, never logged with its body", async () => {
    const { kube } = clusterWith([]);
    const { sqs, calls } = recordingSqs();
    const { logger, text } = recordingLogger();
    const broken = fixtureJson("aws-sqs-set-queue-attributes.json");
    delete (broken.detail as Record<string, unknown>).eventName;
    const record = sqsRecord(JSON.stringify(broken));
    const res = await handleSqsBatch(
      {
        sqs,
        reconcile: scriptedReconcile({}).reconcile,
        logger,
        queueUrl: QUEUE_URL,
        deadLetterQueueUrl: `${QUEUE_URL}-dlq`,
        cloudEvents: new CloudEventResolver({ kube, kinds: [queue] }),
      },
      { Records: [record] },
    );
    expect(failuresOf(res)).toEqual([]);
    expect(res.summary.malformed).toBe(1);
    expect(calls.map((c) => c.name)).toEqual(["SendMessageCommand"]);
    expect(text()).toContain("EventBridge event: detail.eventName");
    expect(text()).not.toContain("orders-queue");
  });

  it("without a resolver an EventBridge body is malformed (as before)", async () => {
    const { sqs } = recordingSqs();
    const { logger } = recordingLogger();
    const record = sqsRecord(fixture("aws-sqs-set-queue-attributes.json"));
    const res = await handleSqsBatch(
      { sqs, reconcile: scriptedReconcile({}).reconcile, logger, queueUrl: QUEUE_URL },
      { Records: [record] },
    );
    expect(res.summary.malformed).toBe(1);
    expect(failuresOf(res)).toEqual([record.messageId]);
  });
});

describe("handlePubSubPush with audit log entries", () => {
  it("reconciles the entry's resource and acks", async () => {
    const { kube } = clusterWith([{ kind: topic, name: "events", externalName: "orders-events" }]);
    const { logger } = recordingLogger();
    const { reconcile, seen } = scriptedReconcile({});
    const res = await handlePubSubPush(
      { reconcile, logger, cloudEvents: new CloudEventResolver({ kube, kinds: [topic] }) },
      pushEvent(fixture("gcp-pubsub-update-topic.json")),
    );
    expect(res).toEqual({ outcome: "cloud-event", keys: 1 });
    expect(seen.map((k) => `${k.kind}/${k.name}`)).toEqual(["Topic/events"]);
  });

  it("an unknown topic is acked after its one LIST; a failed LIST nacks", async () => {
    const { api, kube } = clusterWith([]);
    const { logger } = recordingLogger();
    const { reconcile, seen } = scriptedReconcile({});
    const res = await handlePubSubPush(
      { reconcile, logger, cloudEvents: new CloudEventResolver({ kube, kinds: [topic] }) },
      pushEvent(fixture("gcp-pubsub-update-topic.json")),
    );
    expect(res).toEqual({ outcome: "cloud-event", keys: 0 });
    expect(seen).toEqual([]);
    expect(api.requests).toHaveLength(1);
    const failing = new CloudEventResolver({
      kube: { list: () => Promise.reject(new Error("down")), ...marksUnreachable },
      kinds: [topic],
    });
    await expect(
      handlePubSubPush(
        { reconcile, logger, cloudEvents: failing },
        pushEvent(fixture("gcp-pubsub-update-topic.json")),
      ),
    ).rejects.toBeInstanceOf(ReconcileFailedError);
  });

  it("a failed reconcile of the entry's key nacks", async () => {
    const { kube } = clusterWith([{ kind: topic, name: "events", externalName: "orders-events" }]);
    const { logger } = recordingLogger();
    const { reconcile } = scriptedReconcile({ events: { outcome: "error", error: new Error("quota") } });
    await expect(
      handlePubSubPush(
        { reconcile, logger, cloudEvents: new CloudEventResolver({ kube, kinds: [topic] }) },
        pushEvent(fixture("gcp-pubsub-update-topic.json")),
      ),
    ).rejects.toBeInstanceOf(ReconcileFailedError);
  });
});

describe("handleEventGridRequest", () => {
  const recordingProducer = () => {
    const sent: ReconcileMessage[] = [];
    return {
      sent,
      producer: {
        send: async (m: readonly ReconcileMessage[]) => {
          sent.push(...m);
          return { sent: m.length, failed: [] };
        },
      },
    };
  };

  it("answers the subscription validation handshake with its code", async () => {
    const { kube } = clusterWith([]);
    const { producer, sent } = recordingProducer();
    const res = await handleEventGridRequest(
      { resolver: new CloudEventResolver({ kube, kinds: [vnet] }), producer },
      fixture("azure-subscription-validation.json"),
    );
    expect(res).toEqual({
      status: 200,
      body: { validationResponse: "6E2B8C41-0F7A-4D93-B5E6-1A2B3C4D5E6F" },
    });
    expect(sent).toEqual([]);
  });

  it("enqueues a drift message for the resource of a ResourceWriteSuccess (Event Grid and CloudEvents schema)", async () => {
    const { kube } = clusterWith([{ kind: vnet, name: "net", externalName: "vnet-orders" }]);
    const { producer, sent } = recordingProducer();
    const deps = {
      resolver: new CloudEventResolver({ kube, kinds: [vnet, kindOf("Subnet", "network.azure")] }),
      producer,
    };
    const res = await handleEventGridRequest(deps, fixtureJson("azure-resource-write-success.json"));
    expect(res.status).toBe(200);
    expect(sent).toMatchObject([{ kind: "VirtualNetwork", name: "net", reason: "drift" }]);
    // The CloudEvents sample is of a subnet no managed resource names: one LIST, nothing enqueued.
    const ce = await handleEventGridRequest(deps, fixture("azure-resource-write-success-cloudevents.json"));
    expect(ce).toMatchObject({ status: 200, body: { events: 1, enqueued: 0, dropped: 1 } });
    expect(sent).toHaveLength(1);
  });

  it("refuses a body with no event (400), and asks for a retry when a LIST fails (500)", async () => {
    const { producer } = recordingProducer();
    const { logger, text } = recordingLogger();
    const resolver = new CloudEventResolver({
      kube: { list: () => Promise.reject(new Error("down")), ...marksUnreachable },
      kinds: [vnet],
    });
    expect((await handleEventGridRequest({ resolver, producer, logger }, "{not json")).status).toBe(400);
    expect(
      (await handleEventGridRequest({ resolver, producer, logger }, [{ hello: "vnet-orders" }])).status,
    ).toBe(400);
    expect(
      (
        await handleEventGridRequest(
          { resolver, producer, logger },
          fixture("azure-resource-write-success.json"),
        )
      ).status,
    ).toBe(500);
    expect(text()).not.toContain("vnet-orders");
  });
});
