import type { V1Secret } from "@kubernetes/client-node";
import type { ConnectionDetails } from "../api/external.ts";
import type { ManagedResource } from "../api/managed.ts";
import { isConflict, type Kube } from "../kube/client.ts";
import { connectionSecret } from "../kube/connection-secret.ts";

const MAX_CONFLICT_RETRIES = 3;

/**
 * Publishes connection details to the Secret named by writeConnectionSecretToRef. Keys are additive
 * (never removed while the resource lives); the Secret is owned by the managed resource. The Secret is
 * read on every publish (one GET, no write when it already holds the details), so a Secret deleted or
 * edited out of band is repaired on the next reconcile: no in-memory cache can hide the damage.
 */
export class ConnectionPublisher {
  readonly #kube: Kube;

  constructor(kube: Kube) {
    this.#kube = kube;
  }

  async publish(mr: ManagedResource, details: ConnectionDetails | undefined): Promise<boolean> {
    const ref = mr.spec.writeConnectionSecretToRef;
    if (!ref || !details || Object.keys(details).length === 0) return false;
    for (let attempt = 0; ; attempt++) {
      const current = await this.#kube.getSecret(ref.namespace, ref.name);
      const owner = ownerReference(mr);
      if (current) {
        const owners = current.metadata?.ownerReferences ?? [];
        if (!owners.some((o) => o.uid === owner.uid)) {
          throw new Error(
            `connection Secret ${ref.namespace}/${ref.name} already exists and is not owned by this resource; choose another name`,
          );
        }
      }
      const secret = connectionSecret({
        name: ref.name,
        namespace: ref.namespace,
        current,
        data: Object.fromEntries(
          Object.entries(details).map(([k, v]) => [k, Buffer.from(v, "utf8").toString("base64")]),
        ),
        annotations: current?.metadata?.annotations,
        ownerReferences: current?.metadata?.ownerReferences ?? [owner],
      });
      if (!secret) return false;
      try {
        if (current) await this.#kube.replaceSecret(secret);
        else await this.#kube.createSecret(secret);
        return true;
      } catch (err) {
        // Someone else wrote the Secret in between (409 on replace, or on create if it appeared): re-read.
        if (attempt < MAX_CONFLICT_RETRIES && isConflict(err)) continue;
        throw err;
      }
    }
  }

  async unpublish(mr: ManagedResource): Promise<void> {
    const ref = mr.spec.writeConnectionSecretToRef;
    if (!ref) return;
    const current = await this.#kube.getSecret(ref.namespace, ref.name);
    // Only delete a Secret we own; a same-named Secret of someone else stays.
    if (current?.metadata?.ownerReferences?.some((o) => o.uid === mr.metadata.uid)) {
      await this.#kube.deleteSecret(ref.namespace, ref.name);
    }
  }
}

/** Whether a connection Secret as read already holds `details` for `mr` (publish would write nothing). */
export function publishedHolds(
  secret: V1Secret | undefined,
  mr: ManagedResource,
  details: ConnectionDetails,
): boolean {
  if (!secret) return false;
  if (!(secret.metadata?.ownerReferences ?? []).some((o) => o.uid === mr.metadata.uid)) return false;
  const data = secret.data ?? {};
  return Object.entries(details).every(([k, v]) => data[k] === Buffer.from(v, "utf8").toString("base64"));
}

/** The label every connection Secret driftless writes carries (what a batched check lists by). */
export const CONNECTION_SECRET_SELECTOR = "app.kubernetes.io/managed-by=driftless";

function ownerReference(mr: ManagedResource) {
  return {
    apiVersion: mr.apiVersion,
    kind: mr.kind,
    name: mr.metadata.name,
    uid: mr.metadata.uid ?? "",
    controller: true,
    blockOwnerDeletion: false,
  };
}
