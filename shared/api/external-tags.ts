// Crossplane's default external tags (crossplane-runtime's GetExternalTags, upjet's tagger): every taggable
// cloud resource names the managed resource that made it, so cost reports, inventories and `driftless
// orphans` read the same as under Crossplane. Which keys, from which object: here; where a kind keeps its
// tags: the kind's `tagging` fact; how they join the user's tags: the engine (reconciler/plan.ts).
import type { ManagedKindDef, ManagedResource, TagPlacement } from "./managed.ts";
import { providerConfigOf } from "./managed.ts";

export const DefaultTagKey = {
  kind: "crossplane-kind",
  name: "crossplane-name",
  providerConfig: "crossplane-providerconfig",
  namespace: "crossplane-namespace",
} as const;
/** driftless's own ownership tag on provider-chosen kinds (EC2): the managed resource's uid, written at create. */
export const OWNERSHIP_TAG = "driftless.dev/managed-resource-uid";

export const DEFAULT_TAG_KEYS: readonly string[] = Object.values(DefaultTagKey);

/** Google's label value rules (cloud.google.com/compute/docs/labeling-resources#requirements): at most 63 characters. */
export const LABEL_VALUE_MAX = 63;

/**
 * The default external tags of `mr` in its kind's tag format, or undefined for a kind that is not taggable:
 * `crossplane-kind` (kind.group, lower case), `crossplane-name`, `crossplane-providerconfig`, and
 * `crossplane-namespace` for the namespaced shape.
 */
export function defaultTagsOf(def: ManagedKindDef, mr: ManagedResource): Record<string, string> | undefined {
  if (!def.tagging) return undefined;
  const tags: Record<string, string> = {
    [DefaultTagKey.kind]: `${def.kind}.${def.group}`.toLowerCase(),
    [DefaultTagKey.name]: mr.metadata.name,
    [DefaultTagKey.providerConfig]: providerConfigOf(def, mr).name,
  };
  if (def.scope === "Namespaced") tags[DefaultTagKey.namespace] = mr.metadata.namespace ?? "";
  return inFormat(def.tagging, tags);
}

/** Tag values as the placement allows them (Google labels: lowercase, [a-z0-9_-] only, ≤ 63 characters). */
export function inFormat(placement: TagPlacement, tags: Record<string, string>): Record<string, string> {
  if (placement.format === "tags") return tags;
  return Object.fromEntries(Object.entries(tags).map(([k, v]) => [k, asLabelValue(v)]));
}

/** A Google label value: lower case, every character outside [a-z0-9_-] as `_`, cut at 63 characters. */
export const asLabelValue = (v: string): string =>
  v
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, "_")
    .slice(0, LABEL_VALUE_MAX);
