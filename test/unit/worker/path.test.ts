// The path of one SQS message, measured instead of drawn: the files on the call stack when the SQS Queue
// kind sends GetQueueAttributes, from the SQS adapter down (docs/architecture.md draws it). The test
// stands where the Lambda handler (functions/aws/reconcile.ts) stands: it calls handleSqsBatch over the
// worker createWorker wires, as the handler does. V8's async stack follows awaits: a function that only
// passes a promise through (no await) leaves no frame, so the drawing in the doc is read from the code
// and this test checks that every file on the way is entered once, in that order.
import { relative } from "node:path";
import { GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { STSClient } from "@aws-sdk/client-sts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { providerConfigType } from "../../../shared/api/managed.ts";
import { Annotations, MANAGED_FINALIZER } from "../../../shared/api/meta.ts";
import { awsProviderConfigKinds } from "../../../shared/providers/aws/kinds.ts";
import { queueProvider } from "../../../shared/providers/aws/sqs-queue.ts";
import { makeMessage } from "../../../shared/queue/message.ts";
import { noopLogger } from "../../../shared/reconciler/contract.ts";
import { handleSqsBatch } from "../../../shared/worker/sqs.ts";
import { createWorker } from "../../../shared/worker/worker.ts";
import { MemoryApiServer } from "../../support/memory-apiserver.ts";
import { sqsRecord } from "./factories.ts";

const root = relative(process.cwd(), ".") || ".";
const URL = "https://sqs.us-east-1.amazonaws.com/123456789012/path-q";
const ARN = "arn:aws:sqs:us-east-1:123456789012:path-q";

/** The project files on a stack, outermost first, each run of frames in one file counted once. */
function filesOf(stack: string): string[] {
  const files = [...stack.matchAll(/\(?((?:file:\/\/)?\/[^\s()]+?\.ts):\d+:\d+\)?/g)]
    .map((m) => relative(root, (m[1] as string).replace(/^file:\/\//, "")))
    .filter((f) => !f.startsWith("node_modules") && !f.startsWith(".."));
  return files.reverse().filter((f, n, all) => n === 0 || all[n - 1] !== f);
}

/** The stack of the SDK call: the spy's own frame (innermost, in this file) left out. */
const callerStack = (stack: string) => stack.split("\n").slice(2).join("\n");

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the path of one SQS message", () => {
  it("reaches GetQueueAttributes in 5 file transitions, each file entered once", async () => {
    const api = new MemoryApiServer();
    const pc = providerConfigType("aws");
    api.seed(pc, {
      apiVersion: `${pc.group}/${pc.version}`,
      kind: "ProviderConfig",
      metadata: { name: "default" },
      spec: { credentials: { source: "InjectedIdentity" }, region: "us-east-1" },
    });
    api.seed(Queue, {
      apiVersion: Queue.apiVersion,
      kind: Queue.kind,
      metadata: {
        name: "path-q",
        annotations: { [Annotations.externalName]: "path-q" },
        finalizers: [MANAGED_FINALIZER],
      },
      spec: { forProvider: { region: "us-east-1" } },
      status: { atProvider: { url: URL, arn: ARN } },
    });
    const worker = createWorker({
      kube: api.kube(),
      kinds: [queueProvider],
      providerConfigKinds: awsProviderConfigKinds,
      logger: noopLogger,
      rateLimit: false,
      events: { record: async () => {} },
    });
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 200;
    const stacks: string[] = [];
    // Where the client reaches (the home check's STS GetCallerIdentity), answered here too: no wire.
    vi.spyOn(STSClient.prototype, "send").mockImplementation(async () => ({
      Account: "123456789012",
      $metadata: {},
    }));
    // The SDK call itself: every SQS client's send, answered here (no wire), its caller's stack kept.
    vi.spyOn(SQSClient.prototype, "send").mockImplementation(async (command: unknown) => {
      if (command instanceof GetQueueAttributesCommand)
        stacks.push(callerStack(new Error("GetQueueAttributes").stack ?? ""));
      return { Attributes: { QueueArn: ARN, VisibilityTimeout: "30" }, $metadata: {} };
    });
    try {
      await handleSqsBatch(
        {
          sqs: new SQSClient({ region: "us-east-1" }),
          reconcile: worker.reconcile,
          logger: noopLogger,
          queueUrl: URL,
        },
        {
          Records: [
            sqsRecord(
              makeMessage({ apiVersion: Queue.apiVersion, kind: Queue.kind, name: "path-q" }, "drift"),
            ),
          ],
        },
      );
    } finally {
      Error.stackTraceLimit = limit;
    }
    expect(stacks).toHaveLength(1);
    const path = filesOf(stacks[0] as string);
    expect(path).toEqual([
      "test/unit/worker/path.test.ts",
      "shared/worker/sqs.ts",
      "shared/worker/core.ts",
      "shared/reconciler/reconciler.ts",
      "shared/providers/aws/sqs-queue.ts",
    ]);
    // The handler's place → 4 files → the SDK: 5 transitions.
    expect(path.length).toBe(5);
  });
});
