// Pieces the forwarder and the drift sweep share: where messages go, how they log, how a failed
// request is classified, and how an object is named in messages and logs.
import type { KubeConfig } from "@kubernetes/client-node";
import type { ObjectMeta, ResourceType } from "../api/meta.ts";
import { Kube, statusOf } from "../kube/client.ts";
import type { QueueProducer } from "../queue/port.ts";

/** Where reconcile messages go: any queue producer (memory, SQS, Pub/Sub) or a recording sink in tests. */
export type MessageSink = Pick<QueueProducer, "send">;

/** pino-compatible structured logger: the one the reconcilers use (contract.ts). */
export type { ReconcileLogger as Logger } from "../reconciler/contract.ts";
export { noopLogger } from "../reconciler/contract.ts";

export const kubeOf = (k: Kube | KubeConfig): Kube => (k instanceof Kube ? k : new Kube(k));

/** The CRD that serves a type, e.g. `queues.sqs.aws.driftless.dev`: the name an operator can look up. */
export const crdName = (t: Pick<ResourceType, "plural" | "group">) => `${t.plural}.${t.group}`;

/** HTTP status of a failed list or watch; undefined when no answer came (refused, reset, timed out). */
export function httpStatusOf(err: unknown): number | undefined {
  const code = (err as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof code === "number" ? code : statusOf(err);
}

/** `namespace/name`, or `name` for cluster-scoped objects (a name never contains a slash). */
export const objectKey = (m: Pick<ObjectMeta, "name" | "namespace">) =>
  m.namespace ? `${m.namespace}/${m.name}` : m.name;

export function parseObjectKey(key: string): { name: string; namespace?: string } {
  const slash = key.indexOf("/");
  return slash === -1 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

export const errorMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));
