import { createHash } from "node:crypto";
import type { ManagedResource } from "../api/managed.ts";
import type { Kube } from "./client.ts";

const DEDUP_WINDOW_MS = 10 * 60_000;
const MAX_REMEMBERED = 10_000;
// Events about cluster-scoped objects live in "default", where kubectl describe looks for them.
const CLUSTER_SCOPED_EVENT_NAMESPACE = "default";

/**
 * Kubernetes Events for managed resources, deduplicated like client-go's correlator: the same
 * reason and message for the same object within ten minutes bumps `count` instead of adding an event.
 */
export class KubeEventRecorder {
  readonly #kube: Kube;
  readonly #component: string;
  readonly #seen = new Map<string, { name: string; namespace: string; count: number; at: number }>();

  constructor(kube: Kube, component = "driftless") {
    this.#kube = kube;
    this.#component = component;
  }

  async record(
    mr: ManagedResource,
    type: "Normal" | "Warning",
    reason: string,
    message: string,
  ): Promise<void> {
    const namespace = mr.metadata.namespace ?? CLUSTER_SCOPED_EVENT_NAMESPACE;
    const now = new Date();
    const key = createHash("sha256")
      .update(`${mr.metadata.uid}\0${type}\0${reason}\0${message}`)
      .digest("hex")
      .slice(0, 16);
    const seen = this.#seen.get(key);
    if (seen && now.getTime() - seen.at < DEDUP_WINDOW_MS) {
      seen.count++;
      seen.at = now.getTime();
      try {
        await this.#kube.patchEvent(seen.namespace, seen.name, {
          count: seen.count,
          lastTimestamp: now.toISOString(),
        });
        return;
      } catch {
        this.#seen.delete(key); // expired or deleted on the server: create a fresh one below
      }
    }
    const name = `${mr.metadata.name}.${key}`.slice(0, 253);
    await this.#kube
      .createEvent(namespace, {
        metadata: { name: `${name}.${now.getTime().toString(36)}`, namespace },
        involvedObject: {
          apiVersion: mr.apiVersion,
          kind: mr.kind,
          name: mr.metadata.name,
          uid: mr.metadata.uid ?? "",
          ...(mr.metadata.namespace ? { namespace: mr.metadata.namespace } : {}),
        },
        type,
        reason,
        message: message.slice(0, 1024),
        count: 1,
        firstTimestamp: now.toISOString(),
        lastTimestamp: now.toISOString(),
        source: { component: this.#component },
        reportingComponent: this.#component,
      })
      .then((ev) => {
        if (this.#seen.size >= MAX_REMEMBERED) this.#seen.clear();
        this.#seen.set(key, { name: ev.metadata?.name ?? name, namespace, count: 1, at: now.getTime() });
      });
  }
}
