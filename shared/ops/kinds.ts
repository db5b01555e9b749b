// Finding a kind the way kubectl does: by Kind, plural, short name or `kind.group` (a group prefix is enough).
import type { ManagedKindDef } from "../api/managed.ts";
import type { ResourceType } from "../api/meta.ts";
import { UsageError } from "./errors.ts";

/** Any kind the operator commands address: managed kinds and the clouds' ProviderConfigs. */
export type Addressable = ResourceType & { apiVersion?: string; shortNames?: string[] };

const label = (t: ResourceType) => `${t.kind}.${t.group}`;

/**
 * Resolves `queue`, `queues`, `Queue.sqs.aws`, `bucket.s3` or `providerconfig.aws` against the given
 * types. Throws UsageError (listing the candidates) when nothing or more than one kind matches.
 */
export function findKind<T extends Addressable>(ref: string, types: readonly T[]): T {
  const dot = ref.indexOf(".");
  const name = (dot === -1 ? ref : ref.slice(0, dot)).toLowerCase();
  const group = dot === -1 ? "" : ref.slice(dot + 1).toLowerCase();
  const matches = types.filter(
    (t) =>
      [t.kind.toLowerCase(), t.plural, ...(t.shortNames ?? [])].includes(name) &&
      (!group || t.group === group || t.group.startsWith(`${group}.`)),
  );
  const [only, ...rest] = matches;
  if (only && rest.length === 0) return only;
  if (only) {
    throw new UsageError(`"${ref}" is ambiguous: ${matches.map(label).join(", ")} — add the group`);
  }
  throw new UsageError(`unknown kind "${ref}"; known: ${types.map(label).join(", ")}`);
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
