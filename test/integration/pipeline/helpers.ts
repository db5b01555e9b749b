import { createServer } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import type { Kube } from "../../../shared/kube/client.ts";
import type { MessageSink } from "../../../shared/pipeline/common.ts";
import { type ReconcileMessage, validateMessage } from "../../../shared/queue/message.ts";
import type { SendResult } from "../../../shared/queue/port.ts";
import { env } from "../../support/env.ts";

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

/** Runs `fn` over `items`, `width` at a time. */
export async function inParallel<T>(items: readonly T[], width: number, fn: (item: T) => Promise<unknown>) {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
    }),
  );
}

/** Deletes a test's objects, dropping finalizers first so nothing lingers. */
export async function cleanup(kube: Kube, names: readonly string[]) {
  await inParallel(names, 16, async (name) => {
    const current = await kube.get(Queue, name);
    if (current?.metadata.finalizers?.length)
      await kube.patch(Queue, name, { metadata: { finalizers: null } });
    await kube.delete(Queue, name);
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}

/** A kubeconfig for another API server of the local stack (same CA and token). */
export function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "extra", server, caFile: env("DRIFTLESS_CA_FILE") }],
    users: [{ name: "admin", token: env("DRIFTLESS_KUBE_TOKEN") }],
    contexts: [{ name: "extra", cluster: "extra", user: "admin" }],
    currentContext: "extra",
  });
  return kc;
}
