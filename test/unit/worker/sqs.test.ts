// handleSqsBatch: what the Lambda reconcile function reports for each record, and which SQS calls it makes.
import { describe, expect, it } from "vitest";
import { handleSqsBatch, parseQueueArn, queueUrlForArn } from "../../../shared/worker/sqs.ts";
import {
  named,
  QUEUE_URL,
  recordingLogger,
  recordingSqs,
  scriptedReconcile,
  sqsRecord,
} from "./factories.ts";

const failuresOf = (r: { batchItemFailures: Array<{ itemIdentifier: string }> }) =>
  r.batchItemFailures.map((f) => f.itemIdentifier);

describe("handleSqsBatch", () => {
  it("settles each record by its own outcome; neighbours are independent", async () => {
    // Prepare
    const { sqs, calls } = recordingSqs();
    const { logger } = recordingLogger();
    const { reconcile, seen } = scriptedReconcile({
      ok: { outcome: "in-sync" },
      waiting: { outcome: "creating", requeueAfterMs: 2_500 },
      broken: { outcome: "error", error: new Error("AccessDenied"), requeueAfterMs: 8_200 },
    });
    const ok = sqsRecord(named("ok"));
    const waiting = sqsRecord(named("waiting"));
    const broken = sqsRecord(named("broken"), { receiveCount: 2 });

    // Act
    const res = await handleSqsBatch(
      { sqs, reconcile, logger, queueUrl: QUEUE_URL, maxReceiveCount: 5 },
      { Records: [ok, waiting, broken] },
    );

    // Assess
    expect(seen.map((k) => k.name).sort()).toEqual(["broken", "ok", "waiting"]);
    expect(failuresOf(res)).toEqual([waiting.messageId, broken.messageId]);
    expect(calls).toEqual([
      {
        name: "ChangeMessageVisibilityCommand",
        input: { QueueUrl: QUEUE_URL, ReceiptHandle: waiting.receiptHandle, VisibilityTimeout: 3 },
      },
      {
        name: "ChangeMessageVisibilityCommand",
        input: { QueueUrl: QUEUE_URL, ReceiptHandle: broken.receiptHandle, VisibilityTimeout: 9 },
      },
    ]);
    expect(res.summary).toMatchObject({ records: 3, done: 1, requeued: 1, retried: 1, malformed: 0 });
  });

  it("re-sends a waiting resource as a fresh message at the redrive limit instead of dead-lettering it", async () => {
    const { sqs, calls } = recordingSqs();
    const { reconcile } = scriptedReconcile({ slow: { outcome: "creating", requeueAfterMs: 30_000 } });
    const atLimit = sqsRecord(named("slow", { id: "corr-1" }), { receiveCount: 5 });

    const res = await handleSqsBatch(
      { sqs, reconcile, logger: recordingLogger().logger, queueUrl: QUEUE_URL, maxReceiveCount: 5 },
      { Records: [atLimit] },
    );

    expect(failuresOf(res)).toEqual([]);
    expect(calls.map((c) => c.name)).toEqual(["SendMessageCommand", "DeleteMessageCommand"]);
    const sent = JSON.parse(String(calls[0]?.input.MessageBody));
    expect(sent).toMatchObject({ name: "slow", reason: "requeue", id: "corr-1" });
    expect(calls[0]?.input.DelaySeconds).toBe(30);
    expect(res.summary.resent).toBe(1);
  });

  it("copies a malformed record to the DLQ once, reports success, and never logs its body", async () => {
    const { sqs, calls } = recordingSqs();
    const log = recordingLogger();
    const { reconcile } = scriptedReconcile({});
    const poison = sqsRecord('{"v":2,"secret":"hunter2"}');
    const good = sqsRecord(named("fine"));

    const res = await handleSqsBatch(
      { sqs, reconcile, logger: log.logger, deadLetterQueueUrl: `${QUEUE_URL}-dlq` },
      { Records: [poison, good] },
    );

    expect(failuresOf(res)).toEqual([]);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      name: "SendMessageCommand",
      input: { QueueUrl: `${QUEUE_URL}-dlq`, MessageBody: poison.body },
    });
    const errors = log.lines.filter((l) => l.level === "error");
    expect(errors).toEqual([expect.objectContaining({ messageId: poison.messageId })]);
    expect(log.text()).not.toContain("hunter2");
  });

  it("leaves a malformed record to the redrive policy without a DLQ URL, or when the copy fails", async () => {
    const log = recordingLogger();
    const poison = sqsRecord("not json");
    const again = sqsRecord("not json either", { receiveCount: 3 });
    const { reconcile } = scriptedReconcile({});

    const plain = await handleSqsBatch(
      { sqs: recordingSqs().sqs, reconcile, logger: log.logger },
      { Records: [poison, again] },
    );
    expect(failuresOf(plain)).toEqual([poison.messageId, again.messageId]);
    // Logged once per message: its first receive at error, later ones at debug.
    expect(log.lines.filter((l) => l.level === "error").map((l) => l.messageId)).toEqual([poison.messageId]);

    const refusing = recordingSqs(() => true);
    const failedCopy = await handleSqsBatch(
      { sqs: refusing.sqs, reconcile, logger: log.logger, deadLetterQueueUrl: `${QUEUE_URL}-dlq` },
      { Records: [poison] },
    );
    expect(failuresOf(failedCopy)).toEqual([poison.messageId]);
  });

  it("reconciles a key once per batch; its duplicates are reported as success", async () => {
    const { sqs, calls } = recordingSqs();
    const { reconcile, seen } = scriptedReconcile({ dup: { outcome: "creating", requeueAfterMs: 1_000 } });
    const first = sqsRecord(named("dup"));
    const second = sqsRecord(named("dup", { reason: "drift" }));

    const res = await handleSqsBatch(
      { sqs, reconcile, logger: recordingLogger().logger, queueUrl: QUEUE_URL },
      { Records: [first, second] },
    );

    expect(seen).toHaveLength(1);
    expect(failuresOf(res)).toEqual([first.messageId]);
    expect(calls).toHaveLength(1);
    expect(res.summary.duplicates).toBe(1);
  });

  it("turns a throwing reconcile into a retry, and starts nothing after the deadline", async () => {
    const { sqs, calls } = recordingSqs();
    const { reconcile, seen } = scriptedReconcile({
      throws: async () => {
        throw new Error("boom");
      },
    });
    const a = sqsRecord(named("throws"));
    const res = await handleSqsBatch(
      { sqs, reconcile, logger: recordingLogger().logger, queueUrl: QUEUE_URL },
      { Records: [a] },
    );
    expect(failuresOf(res)).toEqual([a.messageId]);
    expect(calls[0]?.input.VisibilityTimeout).toBe(1);

    const late = sqsRecord(named("late"));
    const timedOut = await handleSqsBatch(
      { sqs, reconcile, logger: recordingLogger().logger, queueUrl: QUEUE_URL, deadlineMs: Date.now() - 1 },
      { Records: [late] },
    );
    expect(seen.map((k) => k.name)).toEqual(["throws"]);
    expect(failuresOf(timedOut)).toEqual([late.messageId]);
    expect(calls.at(-1)?.input).toMatchObject({ ReceiptHandle: late.receiptHandle, VisibilityTimeout: 0 });
  });

  it("still lists a message whose visibility change fails (it returns after the queue's timeout)", async () => {
    const { sqs } = recordingSqs((name) => name === "ChangeMessageVisibilityCommand");
    const { reconcile } = scriptedReconcile({
      w: { outcome: "deleting", requeueAfterMs: 2_000 },
      e: { outcome: "error", error: new Error("x") },
    });
    const w = sqsRecord(named("w"));
    const e = sqsRecord(named("e"));
    const res = await handleSqsBatch(
      { sqs, reconcile, logger: recordingLogger().logger, queueUrl: QUEUE_URL },
      { Records: [w, e] },
    );
    expect(failuresOf(res)).toEqual([w.messageId, e.messageId]);
  });

  it("looks the queue URL up from the record's ARN when none is configured", async () => {
    const { sqs, calls } = recordingSqs();
    const { reconcile } = scriptedReconcile({ w: { outcome: "creating", requeueAfterMs: 1 } });
    const record = { ...sqsRecord(named("w")), eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:by-arn" };
    await handleSqsBatch({ sqs, reconcile, logger: recordingLogger().logger }, { Records: [record] });
    expect(calls.map((c) => c.name)).toEqual(["GetQueueUrlCommand", "ChangeMessageVisibilityCommand"]);
    expect(calls[1]?.input.QueueUrl).toBe("http://sqs.test/123456789012/by-arn");
  });
});

describe("queue URL of an event source", () => {
  it("parses SQS ARNs and refuses others", () => {
    expect(parseQueueArn("arn:aws:sqs:eu-west-1:123456789012:work.fifo")).toEqual({
      partition: "aws",
      region: "eu-west-1",
      account: "123456789012",
      name: "work.fifo",
    });
    expect(() => parseQueueArn("arn:aws:sns:us-east-1:1:t")).toThrow("not an SQS queue ARN");
  });

  it("asks SQS once per container (GetQueueUrl by name and owner) and retries after a failure", async () => {
    let fail = true;
    const { sqs, named: callsNamed } = recordingSqs((name) => name === "GetQueueUrlCommand" && fail);
    const arn = "arn:aws:sqs:eu-west-1:210987654321:lookup-once";
    await expect(queueUrlForArn(sqs, arn)).rejects.toThrow("refused");
    fail = false;
    expect(await queueUrlForArn(sqs, arn)).toBe("http://sqs.test/210987654321/lookup-once");
    expect(await queueUrlForArn(sqs, arn)).toBe("http://sqs.test/210987654321/lookup-once");
    expect(callsNamed("GetQueueUrlCommand").map((c) => c.input)).toEqual([
      { QueueName: "lookup-once", QueueOwnerAWSAccountId: "210987654321" },
      { QueueName: "lookup-once", QueueOwnerAWSAccountId: "210987654321" },
    ]);
  });
});
