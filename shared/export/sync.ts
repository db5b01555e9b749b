// Permission claims: Secrets and ConfigMaps in the control-plane namespace that belong to an exported
// claim, mirrored into the claim's namespace in the app cluster (owned by the app-cluster claim).

import type { V1ConfigMap, V1ObjectMeta, V1Secret } from "@kubernetes/client-node";
import { ExportAnnotations, ExportLabels, type PermissionClaim } from "../api/export/template.ts";
import type { Kube } from "../kube/client.ts";
import { isNotFound } from "../kube/client.ts";
import { coreApi } from "../kube/core.ts";
import { namedError } from "../named-error.ts";
import { downstreamName } from "./naming.ts";

/** A same-named object the app-cluster claim does not own is in the way: never overwrite it. */
export class SyncConflictError extends namedError("SyncConflictError", Error) {}

type Core = V1Secret | V1ConfigMap;
interface Owner {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  namespace: string;
}

const selectorOf = (labels: Record<string, string> | undefined) =>
  labels && Object.keys(labels).length > 0
    ? Object.entries(labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(",")
    : undefined;

/**
 * Whether a control-plane object goes to this claim. Whatever the selector, it must be of the claim's own
 * app namespace — named `<app namespace>.<name>` in the app cluster's shared control-plane namespace —
 * so `owner: Any` never hands one app namespace another's objects (their connection Secrets).
 */
function selected(o: Core, pc: PermissionClaim, upstreamUid: string, appNamespace: string): boolean {
  const name = o.metadata?.name ?? "";
  if (!name.startsWith(`${appNamespace}.`) || name.length === appNamespace.length + 1) return false;
  if (pc.selector.owner === "Claim")
    return o.metadata?.ownerReferences?.some((r) => r.uid === upstreamUid) ?? false;
  return true;
}

const payload = (o: Core) =>
  JSON.stringify({
    type: (o as V1Secret).type ?? "Opaque",
    data: o.data ?? {},
    binaryData: (o as V1ConfigMap).binaryData ?? {},
  });

async function listUpstream(
  cp: Kube,
  resource: PermissionClaim["resource"],
  namespace: string,
  labelSelector?: string,
) {
  const q = { namespace, ...(labelSelector ? { labelSelector } : {}) };
  return resource === "secrets"
    ? ((await coreApi(cp).listNamespacedSecret(q)).items as Core[])
    : ((await coreApi(cp).listNamespacedConfigMap(q)).items as Core[]);
}

async function listDownstream(
  app: Kube,
  resource: PermissionClaim["resource"],
  namespace: string,
  uid: string,
) {
  const q = { namespace, labelSelector: `${ExportLabels.syncedFor}=${uid}` };
  return resource === "secrets"
    ? ((await coreApi(app).listNamespacedSecret(q)).items as Core[])
    : ((await coreApi(app).listNamespacedConfigMap(q)).items as Core[]);
}

async function read(app: Kube, resource: PermissionClaim["resource"], namespace: string, name: string) {
  try {
    return resource === "secrets"
      ? await coreApi(app).readNamespacedSecret({ namespace, name })
      : await coreApi(app).readNamespacedConfigMap({ namespace, name });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function write(app: Kube, resource: PermissionClaim["resource"], obj: Core, replace: boolean) {
  const namespace = obj.metadata?.namespace ?? "";
  const name = obj.metadata?.name ?? "";
  if (resource === "secrets") {
    if (replace) await coreApi(app).replaceNamespacedSecret({ namespace, name, body: obj as V1Secret });
    else await coreApi(app).createNamespacedSecret({ namespace, body: obj as V1Secret });
  } else if (replace)
    await coreApi(app).replaceNamespacedConfigMap({ namespace, name, body: obj as V1ConfigMap });
  else await coreApi(app).createNamespacedConfigMap({ namespace, body: obj as V1ConfigMap });
}

async function remove(app: Kube, resource: PermissionClaim["resource"], namespace: string, name: string) {
  try {
    if (resource === "secrets") await coreApi(app).deleteNamespacedSecret({ namespace, name });
    else await coreApi(app).deleteNamespacedConfigMap({ namespace, name });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/**
 * Mirrors the permission-claimed objects of one claim into its app-cluster namespace: creates or
 * rewrites copies whose content changed, deletes copies whose source is gone. Returns how many it wrote.
 */
export async function syncPermissionClaims(o: {
  cp: Kube;
  app: Kube;
  claims: readonly PermissionClaim[];
  upstream: { namespace: string; uid: string };
  owner: Owner;
}): Promise<number> {
  let writes = 0;
  for (const resource of ["secrets", "configmaps"] as const) {
    const pcs = o.claims.filter((c) => c.resource === resource);
    const desired = new Map<string, Core>();
    for (const pc of pcs) {
      const items = await listUpstream(
        o.cp,
        resource,
        o.upstream.namespace,
        selectorOf(pc.selector.matchLabels),
      );
      for (const item of items) {
        if (!selected(item, pc, o.upstream.uid, o.owner.namespace)) continue;
        desired.set(downstreamName(o.owner.namespace, item.metadata?.name ?? ""), item);
      }
    }
    for (const [name, source] of desired) {
      const current = await read(o.app, resource, o.owner.namespace, name);
      if (current && current.metadata?.labels?.[ExportLabels.syncedFor] !== o.owner.uid) {
        throw new SyncConflictError(
          `${resource === "secrets" ? "Secret" : "ConfigMap"} ${o.owner.namespace}/${name} already exists and does not belong to this claim: rename or remove it`,
        );
      }
      if (current && payload(current) === payload(source)) continue;
      const metadata: V1ObjectMeta = {
        name,
        namespace: o.owner.namespace,
        ...(current?.metadata?.resourceVersion ? { resourceVersion: current.metadata.resourceVersion } : {}),
        labels: { "app.kubernetes.io/managed-by": "driftless", [ExportLabels.syncedFor]: o.owner.uid },
        annotations: { [ExportAnnotations.syncedFrom]: `${o.upstream.namespace}/${source.metadata?.name}` },
        ownerReferences: [
          {
            apiVersion: o.owner.apiVersion,
            kind: o.owner.kind,
            name: o.owner.name,
            uid: o.owner.uid,
            controller: true,
          },
        ],
      };
      const copy: Core =
        resource === "secrets"
          ? {
              apiVersion: "v1",
              kind: "Secret",
              metadata,
              type: (source as V1Secret).type ?? "Opaque",
              data: source.data ?? {},
            }
          : {
              apiVersion: "v1",
              kind: "ConfigMap",
              metadata,
              data: source.data ?? {},
              binaryData: (source as V1ConfigMap).binaryData ?? {},
            };
      // A type change cannot be replaced in place: delete and write anew.
      if (current && resource === "secrets" && (current as V1Secret).type !== (copy as V1Secret).type) {
        await remove(o.app, resource, o.owner.namespace, name);
        delete metadata.resourceVersion;
        await write(o.app, resource, copy, false);
      } else await write(o.app, resource, copy, !!current);
      writes++;
    }
    for (const stale of await listDownstream(o.app, resource, o.owner.namespace, o.owner.uid)) {
      const name = stale.metadata?.name ?? "";
      if (!desired.has(name)) {
        await remove(o.app, resource, o.owner.namespace, name);
        writes++;
      }
    }
  }
  return writes;
}

/** Deletes every copy made for this app-cluster claim (its finalizer runs; an app cluster may have no GC). */
export async function removeSyncedCopies(app: Kube, namespace: string, uid: string): Promise<void> {
  for (const resource of ["secrets", "configmaps"] as const)
    for (const o of await listDownstream(app, resource, namespace, uid))
      await remove(app, resource, namespace, o.metadata?.name ?? "");
}
