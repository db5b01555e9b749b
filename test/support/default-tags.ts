// Crossplane's default tags a managed resource's cloud resource carries (shared/api/external-tags.ts), for
// the integration suites' exact-tag expectations: the tags the user set, plus these.
import { defaultTagsOf } from "../../shared/api/external-tags.ts";
import type { ManagedKindDef, ManagedResource } from "../../shared/api/managed.ts";

export function defaultTags(
  def: ManagedKindDef,
  name: string,
  providerConfig: string,
  namespace?: string,
): Record<string, string> {
  const mr = {
    apiVersion: def.apiVersion,
    kind: def.kind,
    metadata: { name, ...(namespace ? { namespace } : {}) },
    spec: { forProvider: {}, providerConfigRef: { name: providerConfig } },
  } as ManagedResource;
  const tags = defaultTagsOf(def, mr);
  if (!tags) throw new Error(`${def.kind}.${def.group} is not taggable`);
  return tags;
}
