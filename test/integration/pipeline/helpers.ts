import { Queue } from "../../../shared/api/aws/sqs.ts";
import type { Kube } from "../../../shared/kube/client.ts";
import type { MessageSink } from "../../../shared/pipeline/common.ts";
import { type ReconcileMessage, validateMessage } from "../../../shared/queue/message.ts";
import type { SendResult } from "../../../shared/queue/port.ts";
import { inParallel } from "../../support/env.ts";

/** The label every object of one test carries, so its forwarder or sweep sees only that test's objects. */
export const TEST_LABEL = "driftless.dev/test";

/** A sink that keeps every message it is sent, validated against the message contract. */
export class RecordingSink implements MessageSink {
  readonly messages: ReconcileMessage[] = [];
  readonly batches: number[] = [];

  async send(messages: readonly ReconcileMessage[]): Promise<SendResult> {
    const result: SendResult = { sent: 0, failed: [] };
    this.batches.push(messages.length);
    messages.forEach((message, index) => {
      const problem = validateMessage(message);
      if (problem) result.failed.push({ index, message, error: new Error(problem) });
      else {
        this.messages.push(message);
        result.sent++;
      }
    });
    return result;
  }

  for(name: string): ReconcileMessage[] {
    return this.messages.filter((m) => m.name === name);
  }

  names(): string[] {
    return this.messages.map((m) => m.name);
  }

  clear(): void {
    this.messages.length = 0;
    this.batches.length = 0;
  }
}

export function queueObject(
  name: string,
  label: string,
  extra: { annotations?: Record<string, string>; finalizers?: string[] } = {},
) {
  return {
    apiVersion: Queue.apiVersion,
    kind: Queue.kind,
    metadata: {
      name,
      labels: { [TEST_LABEL]: label },
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
      ...(extra.finalizers ? { finalizers: extra.finalizers } : {}),
    },
    spec: { forProvider: { visibilityTimeoutSeconds: 30 }, providerConfigRef: { name: "unused" } },
  };
}

export const readyStatus = (ready = true) => ({
  conditions: [
    {
      type: "Ready",
      status: ready ? "True" : "False",
      reason: ready ? "Available" : "Creating",
      lastTransitionTime: new Date().toISOString(),
    },
    {
      type: "Synced",
      status: "True",
      reason: "ReconcileSuccess",
      lastTransitionTime: new Date().toISOString(),
    },
  ],
});

/** Deletes a test's objects, dropping finalizers first so nothing lingers. */
export async function cleanup(kube: Kube, names: readonly string[]) {
  await inParallel(names, 16, async (name) => {
    const current = await kube.get(Queue, name);
    if (current?.metadata.finalizers?.length)
      await kube.patch(Queue, name, { metadata: { finalizers: null } });
    await kube.delete(Queue, name);
  });
}
