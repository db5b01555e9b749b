// `driftless sweep` and `driftless forward` into a real SQS queue (moto): what they enqueue, what they
// print, and their exit codes; the memory queue is refused as a usage error.
import { CreateQueueCommand, DeleteMessageCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { beforeAll, describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { decodeMessage, type ReconcileMessage } from "../../../shared/queue/message.ts";
import { ensureCrds, motoSqs } from "../../support/aws.ts";
import { eventually, newKube, uniqueName } from "../../support/env.ts";
import { CliProcess, cli, TEST_LABEL } from "./helpers.ts";

const kube = newKube();
const sqs = motoSqs();

const queueMr = (name: string, label: string) => ({
  apiVersion: Queue.apiVersion,
  kind: Queue.kind,
  metadata: { name, labels: { [TEST_LABEL]: label } },
  spec: { forProvider: {}, providerConfigRef: { name: "not-used-here" } },
});

async function newSqsQueue(prefix: string): Promise<string> {
  const res = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName(prefix) }));
  return res.QueueUrl ?? "";
}

/** Receives (and deletes) messages until `count` arrived. */
async function receive(queueUrl: string, count: number): Promise<ReconcileMessage[]> {
  const got: ReconcileMessage[] = [];
  await eventually(
    async () => {
      const res = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      for (const m of res.Messages ?? []) {
        const decoded = decodeMessage(m.Body ?? "");
        if (decoded.ok) got.push(decoded.message);
        await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
      }
      return got.length >= count;
    },
    { timeoutMs: 20_000, what: `${count} messages` },
  );
  return got;
}

beforeAll(async () => {
  await ensureCrds();
});

describe("driftless sweep", { timeout: 180_000 }, () => {
  it("lists the resources and enqueues those that need attention into SQS, and says how many", async () => {
    // Prepare: three never-reconciled queues (not Ready: every sweep enqueues them)
    const label = uniqueName("cli-sweep");
    const url = await newSqsQueue("cli-sweep");
    const names = [0, 1, 2].map(() => uniqueName("cli-sweep-q"));
    for (const n of names) await kube.create(Queue, queueMr(n, label));
    const env = { DRIFTLESS_QUEUE: "sqs", DRIFTLESS_SQS_QUEUE_URL: url };

    // Act
    const json = await cli(["sweep", "-l", `${TEST_LABEL}=${label}`, "-o", "json"], { env });
    const text = await cli(["sweep", "--all", "-l", `${TEST_LABEL}=${label}`], { env });

    // Assess
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      target: `sqs ${url}`,
      listed: 3,
      enqueued: 3,
      attention: 3,
      sendFailures: 0,
    });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^listed 3, enqueued 3 into sqs ${url} in \\d+ ms`, "m"));
    const messages = await receive(url, 6);
    expect(messages.map((m) => m.name).sort()).toEqual([...names, ...names].sort());
    expect(new Set(messages.map((m) => m.reason))).toEqual(new Set(["drift"]));
  });

  it("refuses the memory queue (exit 2) and fails on a queue that does not exist (exit 1)", async () => {
    const memory = await cli(["sweep"], { env: { DRIFTLESS_QUEUE: "memory" } });
    expect(memory.code).toBe(2);
    expect(memory.stderr).toContain("DRIFTLESS_QUEUE=sqs");

    const label = uniqueName("cli-sweep-missing");
    await kube.create(Queue, queueMr(uniqueName("cli-sweep-m"), label));
    const missing = await cli(["sweep", "--all", "-l", `${TEST_LABEL}=${label}`], {
      env: {
        DRIFTLESS_QUEUE: "sqs",
        DRIFTLESS_SQS_QUEUE_URL: `${process.env.AWS_ENDPOINT_URL}/123456789012/${uniqueName("no-such-queue")}`,
      },
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: /m);
  });
});

describe("driftless forward", { timeout: 180_000 }, () => {
  it("forwards the key of a new resource to SQS and exits 0 on SIGTERM", async () => {
    // Prepare
    const label = uniqueName("cli-fwd");
    const url = await newSqsQueue("cli-fwd");
    const fwd = new CliProcess(["forward", "--clouds", "aws", "-l", `${TEST_LABEL}=${label}`], {
      LOG_LEVEL: "info",
      DRIFTLESS_QUEUE: "sqs",
      DRIFTLESS_SQS_QUEUE_URL: url,
    });
    try {
      await fwd.waitForLog((l) => l.msg === "forwarding", "forwarding");
      const name = uniqueName("cli-fwd-q");

      // Act
      await kube.create(Queue, queueMr(name, label));

      // Assess
      const [message] = await receive(url, 1);
      expect(message).toMatchObject({ name, kind: "Queue", apiVersion: Queue.apiVersion, reason: "watch" });
    } finally {
      expect(await fwd.stop()).toBe(0);
    }
    expect(fwd.logs().at(-1)).toMatchObject({ msg: "stopped", forwarded: 1 });
  });

  it("rejects an unknown cloud as a usage error", async () => {
    const res = await cli(["forward", "--clouds", "aws,oracle"], {
      env: { DRIFTLESS_QUEUE: "sqs", DRIFTLESS_SQS_QUEUE_URL: "http://127.0.0.1:1/x" },
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("unknown cloud(s) oracle");
  });
});
