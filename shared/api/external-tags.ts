// Crossplane's default external tags (crossplane-runtime pkg/resource GetExternalTags; upjet's tagger):
// every taggable cloud resource says which managed resource made it, so cost reports and inventories read
// the same as under Crossplane. driftless sends them with every create (and with every update of a resource
// whose spec manages its tags) but never writes them into the spec, and never counts them as drift.
import type { AnyObjectSchema, ManagedKindDef, ManagedResource } from "./managed.ts";
import { providerConfigOf } from "./managed.ts";

export const ExternalTagKey = {
  kind: "crossplane-kind",
  name: "crossplane-name",
  providerConfig: "crossplane-providerconfig",
  providerConfigKind: "crossplane-providerconfig-kind",
  namespace: "crossplane-namespace",
} as const;
export const EXTERNAL_TAG_KEYS: readonly string[] = Object.values(ExternalTagKey);

/**
 * Where a kind keeps its tags: a top-level string map named `tags` (AWS, Azure) or `labels` (Google, whose
 * label values allow only lowercase letters, digits, `_` and `-`, at most 63 characters). Undefined: the kind
 * has neither and is not tagged.
 */
export function tagFieldOf(def: { forProvider: AnyObjectSchema }): "tags" | "labels" | undefined {
  const shape = def.forProvider.shape as Record<string, unknown>;
  if ("tags" in shape && isStringMap(shape.tags)) return "tags";
  if ("labels" in shape && isStringMap(shape.labels)) return "labels";
  return undefined;
}

/** The default external tags of `mr` (in the format its tag field allows), or undefined for an untagged kind. */
export function externalTagsOf(def: ManagedKindDef, mr: ManagedResource): Record<string, string> | undefined {
  const field = tagFieldOf(def);
  if (!field) return undefined;
  const pc = providerConfigOf(def, mr);
  const tags: Record<string, string> = {
    [ExternalTagKey.kind]: `${def.kind}.${def.group}`.toLowerCase(),
    [ExternalTagKey.name]: mr.metadata.name,
    [ExternalTagKey.providerConfig]: pc.name,
  };
  if (def.scope === "Namespaced") {
    tags[ExternalTagKey.providerConfigKind] = pc.type.kind;
    tags[ExternalTagKey.namespace] = mr.metadata.namespace ?? "";
  }
  if (field === "tags") return tags;
  return Object.fromEntries(Object.entries(tags).map(([k, v]) => [k, asLabelValue(v)]));
}

/** A Google label value: lowercase, characters outside [a-z0-9_-] as `_`, at most 63 characters. */
export const asLabelValue = (v: string) =>
  v
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, "_")
    .slice(0, 63);

function isStringMap(schema: unknown): boolean {
  // z.record(...).optional(): unwrap optional/nullable/default wrappers, then look for a record.
  let s = schema as { def?: { type?: string; innerType?: unknown } } | undefined;
  for (let i = 0; i < 4 && s?.def && s.def.type !== "record"; i++) s = s.def.innerType as typeof s;
  return s?.def?.type === "record";
}
