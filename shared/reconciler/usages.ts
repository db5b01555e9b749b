// Which Usages hold a managed resource (api/protection/usage.ts): read when it is being deleted, so the
// engine keeps its external resource — and its finalizer — until nothing uses it any more.

import type { ResourceType } from "../api/meta.ts";
import {
  ClusterUsageType,
  type UsageObject,
  UsageType,
  type UsedObject,
  usageNames,
  usageText,
} from "../api/protection/usage.ts";
import { isNotFound, type Kube } from "../kube/client.ts";

const PAGE = 500;

/** The type of a kind by apiVersion and kind, when this process knows it (undefined: it does not). */
export type TypeLookup = (apiVersion: string, kind: string) => ResourceType | undefined;

/** Every Usage and ClusterUsage naming `obj` in spec.of (none when their CRDs are not installed). */
export async function usagesOf(kube: Kube, obj: UsedObject): Promise<UsageObject[]> {
  const out: UsageObject[] = [];
  for (const t of [UsageType, ClusterUsageType]) {
    let cont: string | undefined;
    do {
      let page: Awaited<ReturnType<typeof kube.list<UsageObject>>>;
      try {
        page = await kube.list<UsageObject>(t, { limit: PAGE, ...(cont ? { continue: cont } : {}) });
      } catch (err) {
        if (isNotFound(err)) break; // no such CRD: nothing is held by it
        throw err;
      }
      out.push(...page.items.filter((u) => usageNames(u, obj)));
      cont = page.continue;
    } while (cont);
  }
  return out;
}

/**
 * Whether a Usage still holds what it names: always without a `by` (deletion protection); with one, until
 * the using resource it was bound to (its ownerReference, written by the Usage reconciler) is gone. A `by`
 * never seen, of a kind this process cannot read, or not yet resolved from its selector holds too: better
 * wait than delete something in use.
 */
export async function holds(kube: Kube, typeOf: TypeLookup, usage: UsageObject): Promise<boolean> {
  const by = usage.spec.by;
  if (!by) return true;
  const name = by.resourceRef?.name;
  const t = by.apiVersion && by.kind ? typeOf(by.apiVersion, by.kind) : undefined;
  if (!name || !t) return true;
  const bound = (usage.metadata.ownerReferences ?? []).find((o) => o.kind === by.kind && o.name === name);
  const using = await kube.get(t, name, t.namespaced ? usage.metadata.namespace : undefined);
  if (using) return true;
  return bound === undefined;
}

/** What holds `obj` now, one line each (`Subnet/a (Usage default/u)`); empty when nothing does. */
export async function holdersOf(kube: Kube, typeOf: TypeLookup, obj: UsedObject): Promise<string[]> {
  const out: string[] = [];
  for (const u of await usagesOf(kube, obj)) if (await holds(kube, typeOf, u)) out.push(usageText(u));
  return out;
}
