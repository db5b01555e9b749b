// Crossplane's reference fields, named once: forProvider.<field> is filled from the managed resource that
// `<field>Ref` names or `<field>Selector` selects (a list field `<one>s`: `<one>Refs`, `<one>Selector`), and
// the engine's ReferenceDef says the same names.
import { z } from "zod";
import { isObject, type Json } from "./json.ts";
import type { ReferenceDef } from "./managed.ts";
import { Reference, Selector } from "./meta.ts";

interface ReferenceOptions {
  /** What of the target fills the field, as the descriptions say it: "id", "name", "path". */
  fills: string;
  /** The value taken from the target; default its crossplane.io/external-name. */
  extract?: ReferenceDef["extract"];
}

/** `<field>Ref` and `<field>Selector` (the forProvider fields) and the ReferenceDef that resolves them. */
export function referenceTo<const F extends string>(field: F, to: ReferenceDef["to"], o: ReferenceOptions) {
  const fields = {
    [`${field}Ref`]: Reference.optional().describe(
      `A ${to.kind} managed resource whose ${o.fills} fills ${field} once it is Ready.`,
    ),
    [`${field}Selector`]: Selector.optional().describe(
      `Selects a ${to.kind} managed resource by labels to fill ${field}.`,
    ),
  } as { [K in `${F}Ref`]: z.ZodOptional<typeof Reference> } & {
    [K in `${F}Selector`]: z.ZodOptional<typeof Selector>;
  };
  return { fields, def: definition(field, `${field}Ref`, `${field}Selector`, to, o) };
}

/** For the list field `<one>s`: `<one>Refs` and `<one>Selector`, and the ReferenceDef that resolves them. */
export function listReferenceTo<const O extends string>(one: O, to: ReferenceDef["to"], o: ReferenceOptions) {
  const field = `${one}s`;
  const fields = {
    [`${one}Refs`]: Reference.array()
      .optional()
      .describe(`${to.kind} managed resources whose ${o.fills}s fill ${field} once they are all Ready.`),
    [`${one}Selector`]: Selector.optional().describe(
      `Selects ${to.kind} managed resources by labels to fill ${field}.`,
    ),
  } as { [K in `${O}Refs`]: z.ZodOptional<z.ZodArray<typeof Reference>> } & {
    [K in `${O}Selector`]: z.ZodOptional<typeof Selector>;
  };
  return { fields, def: { ...definition(field, `${one}Refs`, `${one}Selector`, to, o), list: true } };
}

function definition(
  field: string,
  refField: string,
  selectorField: string,
  to: ReferenceDef["to"],
  o: ReferenceOptions,
): ReferenceDef {
  return { field, refField, selectorField, to, ...(o.extract ? { extract: o.extract } : {}) };
}

/**
 * The objects that hold a reference's fields, with their place for messages: forProvider itself, or (a
 * nested reference) every object at `at`, each item of a list on the way on its own (`subnetworks[1].`).
 */
export function holdersOf(fp: Json, at: string | undefined): Array<{ holder: Json; where: string }> {
  let out = [{ holder: fp, where: "" }];
  for (const part of at ? at.split(".") : []) {
    const next: typeof out = [];
    for (const { holder, where } of out) {
      const v = holder[part];
      if (Array.isArray(v))
        v.forEach((x, i) => {
          if (isObject(x)) next.push({ holder: x, where: `${where}${part}[${i}].` });
        });
      else if (isObject(v)) next.push({ holder: v, where: `${where}${part}.` });
    }
    out = next;
  }
  return out;
}

const kindFields = (what: string, to: ReferenceDef["to"]) => ({
  apiVersion: z
    .string()
    .min(1)
    .optional()
    .describe(`API version of the referenced kind (${what}); default ${to.apiVersion}.`),
  kind: z.string().min(1).optional().describe(`Kind of the referenced managed resource; default ${to.kind}.`),
});

/**
 * `<field>Ref` and `<field>Selector` that may name any kind `anyKind` allows by `apiVersion` and `kind`
 * (default `to`), and the ReferenceDef that resolves them.
 */
export function anyKindReferenceTo(
  field: string,
  to: ReferenceDef["to"],
  o: ReferenceOptions & { anyKind: NonNullable<ReferenceDef["anyKind"]>; what: string },
) {
  const fields: Record<string, z.ZodType> = {
    [`${field}Ref`]: Reference.extend(kindFields(o.what, to))
      .optional()
      .describe(`A managed resource (${o.what}) whose ${o.fills} fills ${field} once it is Ready.`),
    [`${field}Selector`]: Selector.extend(kindFields(o.what, to))
      .optional()
      .describe(`Selects a managed resource (${o.what}) of the kind named by labels to fill ${field}.`),
  };
  return {
    fields,
    def: { ...definition(field, `${field}Ref`, `${field}Selector`, to, o), anyKind: o.anyKind },
  };
}
