// What `driftless trace` shows: the tree from a claim (or any managed resource) through the managed
// resources it binds or references to their ProviderConfigs and connection Secrets, with READY / SYNCED /
// message per node, as `crossplane beta trace` does. Printing is the CLI's job. Secrets: name and keys only.
import type { Claim, ClaimKindDef } from "../api/claims/claims.ts";
import {
  type ManagedKindDef,
  type ManagedResource,
  providerConfigOf,
  withOwnNamespace,
} from "../api/managed.ts";
import type { Condition, ResourceType } from "../api/meta.ts";
import { holdersOf } from "../api/reference.ts";
import type { Kube, KubeObject } from "../kube/client.ts";
import { NotFoundError } from "./errors.ts";

export interface TraceNode {
  /** Claim, Managed, ProviderConfig or Secret: how the node was reached and what its status means. */
  role: "Claim" | "Managed" | "ProviderConfig" | "Secret";
  kind: string;
  group: string;
  name: string;
  namespace?: string;
  /** False when the object is missing: the edge names something that is not there (yet). */
  exists: boolean;
  /** True, False, Unknown, or "-" where the object has no such condition (Secrets, ProviderConfigs' Synced). */
  synced: string;
  ready: string;
  /** The reason and message a person should read first; empty when all is well. */
  status: string;
  externalName?: string;
  /** Secrets only: the keys present (values are never read out). */
  keys?: string[];
  children: TraceNode[];
}

type AnyObject = KubeObject & ManagedResource & { status?: { conditions?: Condition[] } };

const cond = (o: AnyObject | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);

/** One line's STATUS: the failing condition's reason and message, else Ready's reason. */
function statusOf(o: AnyObject | undefined): string {
  if (!o) return "not found";
  if (o.metadata.deletionTimestamp) return `Deleting${messageOf(cond(o, "Ready"))}`;
  const synced = cond(o, "Synced");
  const ready = cond(o, "Ready");
  if (synced?.status === "False") return `${synced.reason}${messageOf(synced)}`;
  if (ready && ready.status !== "True") return `${ready.reason}${messageOf(ready)}`;
  if (!synced && !ready) return "never reconciled";
  return ready?.reason ?? synced?.reason ?? "";
}
const messageOf = (c: Condition | undefined) => (c?.message ? `: ${c.message}` : "");

export interface TraceKinds {
  managed: readonly ManagedKindDef[];
  claims: readonly ClaimKindDef[];
}

/**
 * Builds the tree below one object. A managed resource's children are what it references (recursively),
 * its ProviderConfig and its connection Secret; a claim's are its bound managed resources and its Secret.
 * A node already on the path is shown once more without children (reference cycles end there).
 */
export async function traceObject(
  kube: Kube,
  kinds: TraceKinds,
  type: ResourceType,
  name: string,
  namespace?: string,
): Promise<TraceNode> {
  const claim = kinds.claims.find((c) => c.group === type.group && c.kind === type.kind);
  const root = claim
    ? await traceClaim(kube, kinds, claim, name, namespace)
    : await traceManaged(kube, kinds, type as ManagedKindDef, name, namespace, new Set());
  if (!root.exists)
    throw new NotFoundError(
      `${type.kind}.${type.group} "${name}" not found${type.namespaced ? ` in namespace ${namespace ?? "default"}` : ""}`,
    );
  return root;
}

async function traceClaim(
  kube: Kube,
  kinds: TraceKinds,
  def: ClaimKindDef,
  name: string,
  namespace: string | undefined,
): Promise<TraceNode> {
  const o = await kube.get<AnyObject & Claim>(def, name, namespace);
  const node = objectNode("Claim", def, name, namespace, o);
  if (!o) return node;
  const bound = o.status?.resourceRefs ?? (o.status?.resourceRef ? [o.status.resourceRef] : []);
  for (const ref of bound) {
    const mdef = kinds.managed.find((k) => k.apiVersion === ref.apiVersion && k.kind === ref.kind);
    if (!mdef) continue;
    node.children.push(
      await traceManaged(kube, kinds, mdef, ref.name, mdef.namespaced ? namespace : undefined, new Set()),
    );
  }
  const secret = o.spec.writeConnectionSecretToRef;
  if (secret && namespace) node.children.push(await secretNode(kube, namespace, secret.name));
  return node;
}

async function traceManaged(
  kube: Kube,
  kinds: TraceKinds,
  def: ManagedKindDef,
  name: string,
  namespace: string | undefined,
  path: Set<string>,
): Promise<TraceNode> {
  const o = await kube.get<AnyObject>(def, name, namespace);
  const node = objectNode("Managed", def, name, namespace, o);
  const key = `${def.group}/${def.kind}/${namespace ?? ""}/${name}`;
  if (!o || path.has(key)) return node;
  const below = new Set(path).add(key);
  const fp = (o.spec?.forProvider ?? {}) as Record<string, unknown>;
  for (const ref of def.references) {
    const targets = holdersOf(fp, ref.at).flatMap(({ holder }) => {
      const value = holder[ref.refField] as { name?: string } | Array<{ name?: string }> | undefined;
      return Array.isArray(value) ? value : value ? [value] : [];
    });
    const to = kinds.managed.find((k) => k.group === ref.to.group && k.kind === ref.to.kind);
    if (!to) continue;
    for (const t of targets)
      if (t.name)
        node.children.push(
          await traceManaged(kube, kinds, to, t.name, to.namespaced ? namespace : undefined, below),
        );
  }
  const pc = providerConfigOf(def, o);
  const pco = await kube.get<AnyObject>(pc.type, pc.name, pc.namespace);
  const pcNode = objectNode("ProviderConfig", pc.type, pc.name, pc.namespace, pco);
  pcNode.synced = "-";
  node.children.push(pcNode);
  const ref = withOwnNamespace(def, o).spec?.writeConnectionSecretToRef;
  if (ref) node.children.push(await secretNode(kube, ref.namespace, ref.name));
  return node;
}

function objectNode(
  role: TraceNode["role"],
  type: ResourceType,
  name: string,
  namespace: string | undefined,
  o: AnyObject | undefined,
): TraceNode {
  const externalName = o?.metadata.annotations?.["crossplane.io/external-name"];
  return {
    role,
    kind: type.kind,
    group: type.group,
    name,
    ...(namespace ? { namespace } : {}),
    exists: Boolean(o),
    synced: o ? (cond(o, "Synced")?.status ?? "-") : "-",
    ready: o ? (cond(o, "Ready")?.status ?? "-") : "-",
    status: statusOf(o),
    ...(externalName ? { externalName } : {}),
    children: [],
  };
}

async function secretNode(kube: Kube, namespace: string, name: string): Promise<TraceNode> {
  const s = await kube.getSecret(namespace, name);
  const keys = Object.keys(s?.data ?? {}).sort();
  return {
    role: "Secret",
    kind: "Secret",
    group: "",
    name,
    namespace,
    exists: Boolean(s),
    synced: "-",
    ready: s ? "True" : "False",
    status: s ? `${keys.length} key${keys.length === 1 ? "" : "s"}` : "not written yet",
    keys,
    children: [],
  };
}

/**
 * Every node that is not Ready: a missing object or Secret, Ready False/Unknown, a resource never
 * reconciled. A ProviderConfig nobody has checked yet (no Ready condition) is not counted against it.
 */
export function notReady(node: TraceNode): TraceNode[] {
  const ok = node.ready === "True" || (node.role === "ProviderConfig" && node.exists && node.ready === "-");
  return [...(ok ? [] : [node]), ...node.children.flatMap(notReady)];
}
