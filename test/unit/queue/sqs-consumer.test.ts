// The SQS consumer loop against a scripted client: failures of the queue service never end the loop.
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { encodeMessage } from "../../../shared/queue/message.ts";
import type { QueueEvent } from "../../../shared/queue/port.ts";
import { SqsConsumer } from "../../../shared/queue/sqs.ts";
import { named } from "./factories.ts";

type Command = { constructor: { name: string }; input: unknown };

/** A client that answers ReceiveMessage from a script and records every other call. */
function scriptedClient(receives: Array<() => unknown>) {
  const calls: Array<{ name: string; input: unknown }> = [];
  const client = {
    send: async (command: Command) => {
      calls.push({ name: command.constructor.name, input: command.input });
      if (command instanceof ReceiveMessageCommand) {
        const next = receives.shift();
        if (next === undefined) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          return { Messages: [] };
        }
        return next();
      }
      if (command instanceof DeleteMessageBatchCommand) throw new Error("delete endpoint down");
      return {};
    },
  };
  return { client: client as unknown as SQSClient, calls };
}

function sqsMessage(id: string, body: string) {
  return {
    MessageId: id,
    ReceiptHandle: `rh-${id}`,
    Body: body,
    Attributes: { ApproximateReceiveCount: "1" },
  };
}

describe("SqsConsumer loop", () => {
  it("survives receive and delete failures, skips malformed bodies, clamps requeue visibility", async () => {
    const events: QueueEvent[] = [];
    const handled: string[] = [];
    const { client, calls } = scriptedClient([
      () => {
        throw new Error("connection reset");
      },
      () => ({ Messages: [sqsMessage("m1", encodeMessage(named("a"))), sqsMessage("m2", "garbage")] }),
      () => ({ Messages: [sqsMessage("m3", encodeMessage(named("b")))] }),
    ]);
    const consumer = new SqsConsumer({
      client,
      queueUrl: "http://sqs.local/q",
      onEvent: (e) => events.push(e),
    });

    consumer.start(async (r) => {
      handled.push(r.message.name);
      return r.message.name === "b" ? { kind: "requeue", afterMs: 90_000_000 } : { kind: "done" };
    });
    const deadline = Date.now() + 5_000;
    while (handled.length < 2 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await consumer.stop();

    expect(handled).toEqual(["a", "b"]);
    expect(events.map((e) => e.msg)).toEqual(
      expect.arrayContaining([
        "SQS receive failed",
        "malformed message; left for the redrive policy",
        "cannot delete SQS messages; they will be redelivered",
      ]),
    );
    expect(JSON.stringify(events)).not.toContain("garbage");
    const visibility = calls.find((c) => c.name === ChangeMessageVisibilityCommand.name);
    expect(visibility?.input).toMatchObject({ ReceiptHandle: "rh-m3", VisibilityTimeout: 43_200 });
  });
});
