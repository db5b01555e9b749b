// What Lambda's SQS event source mapping does around the reconcile function, played against moto: long
// polls (20 s, up to 10 messages), invokes the handler core with the real event shape, deletes what the
// handler did not list in batchItemFailures. Each poller is one "container": its own reconcile function
// (own Kube, own Reconciler, own caches), invoked one batch at a time, as Lambda runs one at a time.
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { awsKinds, awsProviderConfigKinds } from "../../functions/aws/kinds.ts";
import { FIELD_MANAGER, Kube } from "../../shared/kube/client.ts";
import { noopLogger } from "../../shared/pipeline/common.ts";
import { handleSqsBatch, type SqsEvent, type SqsEventRecord } from "../../shared/worker/sqs.ts";
import { createWorker } from "../../shared/worker/worker.ts";
import { ensureSqsQueue, type SqsQueuePair } from "../../test/support/queues.ts";

type Handler = (event: SqsEvent) => ReturnType<typeof handleSqsBatch>;

/** The record Lambda builds from a received message. */
export function lambdaRecord(m: Message, queueArn: string): SqsEventRecord {
  const a = m.Attributes ?? {};
  return {
    messageId: m.MessageId ?? "",
    receiptHandle: m.ReceiptHandle ?? "",
    body: m.Body ?? "",
    attributes: {
      ApproximateReceiveCount: a.ApproximateReceiveCount ?? "1",
      SentTimestamp: a.SentTimestamp ?? String(Date.now()),
      SenderId: a.SenderId ?? "AIDAEXAMPLE",
      ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? "",
    eventSource: "aws:sqs",
    eventSourceARN: queueArn,
    awsRegion: queueArn.split(":")[3] ?? "us-east-1",
  };
}

export interface Invocation {
  records: number;
  durationMs: number;
  failures: number;
  at: number;
}

export class LambdaEventSource {
  readonly invocations: Invocation[] = [];
  readonly #sqs: SQSClient;
  readonly #queueUrl: string;
  readonly #queueArn: string;
  readonly #abort = new AbortController();
  #loops: Promise<void>[] = [];
  #lastMessageAt = Date.now();
  #inFlight = 0;

  constructor(o: { sqs: SQSClient; queueUrl: string; queueArn: string }) {
    this.#sqs = o.sqs;
    this.#queueUrl = o.queueUrl;
    this.#queueArn = o.queueArn;
  }

  /** Starts one poller per handler (one handler per emulated container). */
  start(handlers: Handler[]): void {
    this.#loops = handlers.map((h) => this.#poll(h));
  }

  /**
   * Resolves once the queue is empty (no visible, delayed or in-flight message), no invocation is
   * running and nothing was received for `quietMs`: a backlog would otherwise queue the next changes.
   */
  async drained(quietMs: number, timeoutMs: number): Promise<boolean> {
    const since = Date.now();
    const deadline = since + timeoutMs;
    while (Date.now() < deadline) {
      const last = Math.max(this.#lastMessageAt, since);
      if (this.#inFlight === 0 && Date.now() - last > quietMs && (await this.#depth()) === 0) return true;
      await new Promise((r) => setTimeout(r, 250));
    }
    return false;
  }

  async #depth(): Promise<number> {
    const out = await this.#sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: this.#queueUrl,
        AttributeNames: [
          "ApproximateNumberOfMessages",
          "ApproximateNumberOfMessagesNotVisible",
          "ApproximateNumberOfMessagesDelayed",
        ],
      }),
    );
    const a = out.Attributes ?? {};
    return (
      Number(a.ApproximateNumberOfMessages ?? 0) +
      Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
      Number(a.ApproximateNumberOfMessagesDelayed ?? 0)
    );
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await Promise.allSettled(this.#loops);
  }

  async #poll(handler: Handler): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      let messages: Message[];
      try {
        const out = await this.#sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: this.#queueUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 20,
            MessageSystemAttributeNames: ["All"],
          }),
          { abortSignal: signal },
        );
        messages = out.Messages ?? [];
      } catch {
        if (signal.aborted) return;
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      if (messages.length === 0) continue;
      this.#lastMessageAt = Date.now();
      this.#inFlight++;
      try {
        const records = messages.map((m) => lambdaRecord(m, this.#queueArn));
        const started = Date.now();
        const res = await handler({ Records: records });
        this.invocations.push({
          records: records.length,
          durationMs: Date.now() - started,
          failures: res.batchItemFailures.length,
          at: started,
        });
        const failed = new Set(res.batchItemFailures.map((f) => f.itemIdentifier));
        const done = records.filter((r) => !failed.has(r.messageId));
        if (done.length > 0) {
          await this.#sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: this.#queueUrl,
              Entries: done.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
            }),
          );
        }
      } finally {
        this.#inFlight--;
        this.#lastMessageAt = Date.now();
      }
    }
  }
}

/**
 * `count` emulated Lambda containers, each with the worker the AWS entry point builds (createWorker
 * with the reconcilers' field manager) behind the Lambda handler core, as functions/aws/reconcile.ts
 * wires it: doorbell messages wait for their write, cloud events are resolved. Their Kube clients are
 * returned for request counts.
 */
export function lambdaContainers(o: {
  kc: import("@kubernetes/client-node").KubeConfig;
  sqs: SQSClient;
  queueUrl: string;
  count?: number;
  /** What doorbell messages found of their write (the handler's metrics hook). */
  admissionWait?: (result: "stored" | "waited" | "requeued") => void;
}): { handlers: Handler[]; kubes: Kube[] } {
  const kubes: Kube[] = [];
  const handlers = Array.from({ length: o.count ?? 2 }, () => {
    const kube = new Kube(o.kc, { fieldManager: FIELD_MANAGER });
    kubes.push(kube);
    const worker = createWorker({
      kube,
      kinds: awsKinds,
      providerConfigKinds: awsProviderConfigKinds,
      logger: noopLogger,
    });
    return (event: SqsEvent) =>
      handleSqsBatch(
        {
          sqs: o.sqs,
          reconcile: worker.reconcile,
          storedVersion: worker.storedVersion,
          cloudEvents: worker.cloudEvents,
          logger: noopLogger,
          queueUrl: o.queueUrl,
          maxReceiveCount: 5,
          concurrency: 8,
          ...(o.admissionWait ? { metrics: { admissionWait: o.admissionWait } } : {}),
        },
        event,
      );
  });
  return { handlers, kubes };
}

/** An SQS client straight at moto (not through the recording proxy) and a fresh work queue with its DLQ. */
export async function benchWorkQueue(
  env: Record<string, string | undefined>,
  name: string,
): Promise<{ sqs: SQSClient; work: SqsQueuePair }> {
  const sqs = new SQSClient({
    region: "us-east-1",
    endpoint: env.AWS_ENDPOINT_URL,
    credentials: { accessKeyId: "testing", secretAccessKey: "testing-secret-value" },
  });
  const work = await ensureSqsQueue(sqs, { name, visibilityTimeoutSeconds: 30, maxReceiveCount: 5 });
  return { sqs, work };
}
