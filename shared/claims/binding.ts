import type { ClassKindDef } from "../api/claims/classes.ts";
import type { ManagedKindDef } from "../api/managed.ts";

export type Fields = Record<string, unknown>;

/** What a class binding gets to build or update a managed resource. */
export interface BindContext {
  /** The claim's spec: its portable fields. */
  claim: Fields;
  /** The class's spec; undefined when the class was deleted after binding (updates still flow). */
  classSpec: Fields | undefined;
  /** The managed resource's name: every part of one claim has the same. */
  name: string;
  /** The managed resource's forProvider now (absent when creating). */
  current?: Fields | undefined;
}

/** One managed resource a class makes for a claim. */
export interface PartDef {
  role: string;
  type: ManagedKindDef;
  /** The part whose connection Secret is copied to the claim's namespace. */
  primary?: boolean;
  /** The class template's forProvider for this part; default the class spec's own `forProvider`. */
  template?(classSpec: Fields): Fields;
  /** forProvider fields fixed when the resource is made (engine, references between parts). */
  fixed?(ctx: BindContext): Fields;
  /** The forProvider fields the claim decides, kept in sync; undefined values are left as they are. */
  portable(ctx: BindContext): Fields;
  /** The map field (tags, labels, metadata) the claim's `labels` are merged into. */
  labelsField?: string;
}

/** How one class kind serves its claim kind: the resources it makes and the Secret keys it adds. */
export interface ClassBinding {
  class: ClassKindDef;
  parts: PartDef[];
  /** Portable keys for the claim's Secret, from the primary resource's connection details. */
  connection(details: Readonly<Record<string, string>>): Record<string, string>;
  /** Why this class cannot serve the claim as specified, if it cannot. */
  unsupported?(claim: Fields): string | undefined;
  /** Why the claim asks for more than the class's limits allow, if it does; `cls` names the class. */
  overLimit?(claim: Fields, classSpec: Fields, cls: string): string | undefined;
}

export const defined = (o: Fields): Fields =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

export const objectAt = (o: Fields | undefined, key: string): Fields => {
  const v = o?.[key];
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Fields) : {};
};

export const stringMap = (v: unknown): Record<string, string> =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, string>) : {};

/** The claim's labels (Bucket claims), as a map. */
export const claimLabelsOf = (claim: Fields) => stringMap(claim.labels);

/** A new resource's forProvider: the class template, then fixed fields, then the claim's portable fields. */
export function initialForProvider(part: PartDef, ctx: BindContext): Fields {
  const classSpec = ctx.classSpec ?? {};
  const template = structuredClone(part.template?.(classSpec) ?? objectAt(classSpec, "forProvider"));
  const out: Fields = { ...template, ...(part.fixed?.(ctx) ?? {}), ...defined(part.portable(ctx)) };
  if (part.labelsField) {
    const labels = { ...stringMap(template[part.labelsField]), ...claimLabelsOf(ctx.claim) };
    if (Object.keys(labels).length > 0) out[part.labelsField] = labels;
  }
  return out;
}
