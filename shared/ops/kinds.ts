// Finding a kind the way kubectl does: by Kind, plural, short name or `kind.group` (a group prefix is enough).
import type { ManagedKindDef } from "../api/managed.ts";
import { API_DOMAIN, type ResourceType } from "../api/meta.ts";
import { UsageError } from "./errors.ts";

/** Any kind the operator commands address: managed kinds and the clouds' ProviderConfigs. */
export type Addressable = ResourceType & { apiVersion?: string; shortNames?: string[] };

const label = (t: ResourceType) => `${t.kind}.${t.group}`;

// `sqs.aws.m.driftless.dev` → `sqs.aws.driftless.dev`: a kind's two shapes share this key.
const V2_SUFFIX = `.m.${API_DOMAIN}`;
const shapeKey = (t: ResourceType) =>
  `${t.kind}.${t.group.endsWith(V2_SUFFIX) ? `${t.group.slice(0, -V2_SUFFIX.length)}.${API_DOMAIN}` : t.group}`;

export interface FindKindOptions {
  /**
   * A namespace was given (-n, -A): where a kind exists in both shapes, choose the namespaced one (`.m.`
   * group). Otherwise the cluster-scoped one, as before the namespaced kinds existed.
   */
  namespaced?: boolean;
}

/**
 * Resolves `queue`, `queues`, `Queue.sqs.aws`, `queue.sqs.aws.m`, `bucket.s3` or `providerconfig.aws`
 * against the given types. A kind that exists in both shapes (`Queue.sqs.aws` and `Queue.sqs.aws.m`)
 * resolves to the cluster-scoped one unless `namespaced` is set or the group names `.m`. Throws
 * UsageError (listing the candidates) when nothing or more than one kind matches.
 */
export function findKind<T extends Addressable>(
  ref: string,
  types: readonly T[],
  opts: FindKindOptions = {},
): T {
  const dot = ref.indexOf(".");
  const name = (dot === -1 ? ref : ref.slice(0, dot)).toLowerCase();
  const group = dot === -1 ? "" : ref.slice(dot + 1).toLowerCase();
  const matches = types.filter(
    (t) =>
      [t.kind.toLowerCase(), t.plural, ...(t.shortNames ?? [])].includes(name) &&
      (!group || t.group === group || t.group.startsWith(`${group}.`)),
  );
  const chosen = preferShape(matches, opts.namespaced ?? false);
  const [only, ...rest] = chosen;
  if (only && rest.length === 0) return only;
  if (only) {
    throw new UsageError(`"${ref}" is ambiguous: ${matches.map(label).join(", ")} — add the group`);
  }
  throw new UsageError(`unknown kind "${ref}"; known: ${types.map(label).join(", ")}`);
}

/** Of a kind found in both shapes, keeps the namespaced one or the cluster-scoped one. */
function preferShape<T extends Addressable>(matches: readonly T[], namespaced: boolean): T[] {
  const byShape = new Map<string, T[]>();
  for (const t of matches) byShape.set(shapeKey(t), [...(byShape.get(shapeKey(t)) ?? []), t]);
  return [...byShape.values()].flatMap((same) =>
    same.length === 2 && same.some((t) => t.namespaced) && same.some((t) => !t.namespaced)
      ? same.filter((t) => t.namespaced === namespaced)
      : same,
  );
}

/** Which namespaces a command reads: -n/--namespace, -A/--all-namespaces. */
export interface NamespaceFlags {
  namespace?: string;
  allNamespaces?: boolean;
}

/** Whether the flags ask for namespaced objects (and so for a kind's namespaced shape). */
export const wantsNamespaced = (f: NamespaceFlags) => Boolean(f.namespace || f.allNamespaces);

/**
 * The namespace a command reads objects of `type` in, as kubectl decides it: -n, else the kubeconfig
 * context's namespace, else `default`; undefined for every namespace (-A) and for cluster-scoped kinds.
 * -n with a cluster-scoped kind, or with -A, is a usage error.
 */
export function namespaceOf(
  type: ResourceType,
  flags: NamespaceFlags,
  contextNamespace?: string,
): string | undefined {
  if (flags.namespace !== undefined && flags.allNamespaces)
    throw new UsageError("-n/--namespace and -A/--all-namespaces exclude each other");
  if (!type.namespaced) {
    if (flags.namespace !== undefined)
      throw new UsageError(`${label(type)} is cluster-scoped: -n/--namespace does not apply`);
    return undefined;
  }
  if (flags.allNamespaces) return undefined;
  return flags.namespace || contextNamespace || "default";
}

/** Splits `KIND/NAME` (kubectl's form); throws UsageError on anything else. */
export function parseKindName(ref: string): { kind: string; name: string } {
  const slash = ref.indexOf("/");
  const kind = slash === -1 ? "" : ref.slice(0, slash);
  const name = slash === -1 ? "" : ref.slice(slash + 1);
  if (!kind || !name || name.includes("/")) throw new UsageError(`expected KIND/NAME, got "${ref}"`);
  return { kind, name };
}

/** The managed kind definitions of a registry list, typed for lookups. */
export const definitionsOf = (kinds: ReadonlyArray<{ definition: ManagedKindDef }>) =>
  kinds.map((k) => k.definition);
