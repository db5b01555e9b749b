// A generated AWS kind as the engine sees it: its compact spec (spec.ts) turned into a managed kind
// definition — zod forProvider and atProvider, immutable fields, references, write-only fields — so the
// CRD, docs, validation, drift comparison and late-initialization are the hand-written kinds' own.
import { z } from "zod";
import { AwsRegion } from "../aws/fields.ts";
import { childPath, crdPathOfMember, nodeAtPath, secretRefFieldOf, zodSchemaOf } from "../generated-spec.ts";
import {
  defineManagedKindLazily,
  type FieldBehaviour,
  type ManagedKindDef,
  type ReferenceDef,
} from "../managed.ts";
import { Annotations, API_DOMAIN, Reference, SecretKeySelector, Selector } from "../meta.ts";
import {
  type AwsccKindSpec,
  type AwsccNode,
  type AwsccProp,
  type AwsccReference,
  awsccGroupOf,
  type NestedReference,
  partsOf,
  pluralOf,
} from "./spec.ts";

// The generated kinds' providers and tests take these from the kind module.
export { childPath, secretRefFieldOf };

/**
 * Object types nest at most this deep in the CRD; deeper values are free-form JSON in CloudFormation's
 * own (PascalCase) names. Recursive types (WAFv2 statements) end here too: structural schemas cannot
 * recurse, and each level multiplies the CRD's size.
 */
export const AWSCC_MAX_DEPTH = 5;

const enumText = (p: AwsccProp) => (p.enum ? ` One of: ${p.enum.join(", ")}.` : "");

/**
 * Whether an object type is expanded (a structural schema) at this place, or kept as free-form JSON:
 * within the depth limit and not recursive — or on the way to a secret, which must never be free-form.
 */
export function expandsAt(
  spec: AwsccKindSpec,
  ref: string,
  depth: number,
  seen: readonly string[],
  path: string,
) {
  if (!spec.defs[ref]) return false;
  if (depth < AWSCC_MAX_DEPTH && !seen.includes(ref)) return true;
  return spec.secrets.some((s) => s.startsWith(`${path}.`));
}

function describe(spec: AwsccKindSpec, p: AwsccProp, path: string) {
  const immutable = spec.createOnly.includes(path) ? " Immutable." : "";
  const writeOnly = spec.writeOnly.includes(path)
    ? " Write-only: sent to the cloud, never read back or compared."
    : "";
  return `${p.doc ?? p.n}${enumText(p)}${p.req ? " Required on create." : ""}${immutable}${writeOnly}`;
}

/**
 * The members of an object (the top level or an object type) at `path`: a secret member becomes its
 * `…SecretRef(s)` (a Secret key, never the value); every other member its own schema.
 */
function membersOf(
  spec: AwsccKindSpec,
  props: Record<string, AwsccProp>,
  depth: number,
  seen: readonly string[],
  path: string,
  skip?: string,
): Record<string, z.ZodType> {
  const shape: Record<string, z.ZodType> = {};
  for (const [k, p] of Object.entries(props)) {
    if (k === skip) continue;
    const at = childPath(path, k);
    if (spec.secrets.includes(at)) {
      const ref = SecretKeySelector.describe(
        `${describe(spec, p, at)} Secret: read from this Secret key when a request is made; never stored in the spec or status, never compared.`,
      );
      shape[secretRefFieldOf(k, p.s)] = (p.s.t === "array" ? z.array(ref) : ref).optional();
      continue;
    }
    shape[k] = zodOfNode(spec, p.s, depth, seen, at)
      .optional()
      .describe(describe(spec, p, at));
  }
  if (path)
    for (const r of spec.nestedReferences ?? []) if (r.at === path) Object.assign(shape, nestedRefShape(r));
  return shape;
}

/** The `…Ref(s)` / `…Selector` members a nested reference adds to the object that holds its field. */
function nestedRefShape(r: NestedReference): Record<string, z.ZodType> {
  const { refField, selectorField } = referenceFieldsOf(r.field, Boolean(r.list));
  const group = `${r.group}.${API_DOMAIN}`;
  return {
    [refField]: (r.list ? z.array(Reference) : Reference)
      .optional()
      .describe(
        `${r.list ? "" : "A "}${r.kind} managed resource${r.list ? "s" : ""} (${group}) whose name fills ${r.field} here.`,
      ),
    [selectorField]: Selector.optional().describe(
      `Selects a ${r.kind} managed resource (${group}) by labels to fill ${r.field} here.`,
    ),
  };
}

/** The zod schema of one value at field path `path`; `depth` counts the object types around it. */
export function zodOfNode(
  spec: AwsccKindSpec,
  node: AwsccNode,
  depth = 0,
  seen: readonly string[] = [],
  path = "",
): z.ZodType {
  return zodSchemaOf(node, (n) => {
    if (n.t === "tags") return z.record(z.string(), z.string());
    if (n.t !== "ref") return undefined;
    const def = spec.defs[n.ref];
    if (!def || !expandsAt(spec, n.ref, depth, seen, path)) return undefined;
    return z.object(membersOf(spec, def.props, depth + 1, [...seen, n.ref], path));
  });
}

/** The CRD field paths of the spec's paths: a secret's last step is its `…SecretRef(s)` field. */
export function crdPathOf(spec: AwsccKindSpec, path: string): string {
  return crdPathOfMember(spec.secrets, path, (p) => nodeAt(spec, p));
}

/** The spec node at a field path (undefined below free-form values). */
export function nodeAt(spec: AwsccKindSpec, path: string): AwsccNode | undefined {
  return nodeAtPath(spec.properties, spec.defs, path);
}

/** Reference fields, Crossplane's way: `roleRef`/`roleSelector`; lists `subnetIdRefs`/`subnetIdSelector`. */
export function referenceFieldsOf(field: string, list: boolean) {
  const base = list ? field.replace(/s$/, "") : field;
  return { refField: list ? `${base}Refs` : `${base}Ref`, selectorField: `${base}Selector` };
}

/** The type a reference points at: a hand-written kind (`ec2.aws/VPC`) or a generated one. */
export function referenceTarget(to: { type: string } | { handWritten: string }) {
  const [group, kind] =
    "type" in to
      ? [awsccGroupOf(to.type), partsOf(to.type).kind]
      : (to.handWritten.split("/") as [string, string]);
  const full = `${group}.${API_DOMAIN}`;
  return {
    group: full,
    version: "v1alpha1",
    kind,
    plural: "type" in to ? pluralOf(kind) : `${kind.toLowerCase()}s`,
    namespaced: false,
    apiVersion: `${full}/v1alpha1`,
  };
}

/** The top-level forProvider member names of a generated kind (a secret's is its `…SecretRef(s)`). */
function topMemberNames(spec: AwsccKindSpec): Set<string> {
  const names = new Set(["region"]);
  for (const [k, p] of Object.entries(spec.properties))
    if (k !== spec.identifierField) names.add(spec.secrets.includes(k) ? secretRefFieldOf(k, p.s) : k);
  return names;
}

/**
 * The spec's references with their engine definitions; a reference whose `…Ref` or `…Selector` name is
 * already taken (a property of that name, or an earlier reference) gets none.
 */
function referencesWithDefs(spec: AwsccKindSpec) {
  const taken = topMemberNames(spec);
  const out: Array<{ r: AwsccReference; def: ReferenceDef }> = [];
  for (const r of spec.references) {
    const { refField, selectorField } = referenceFieldsOf(r.field, Boolean(r.list));
    if (taken.has(refField) || taken.has(selectorField)) continue;
    taken.add(refField);
    taken.add(selectorField);
    const from = r.from;
    out.push({
      r,
      def: {
        field: r.field,
        refField,
        selectorField,
        to: referenceTarget(r.to),
        ...(r.list ? { list: true } : {}),
        ...(from === "externalName"
          ? {}
          : {
              extract: (t) => {
                const v = (t.status?.atProvider as Record<string, unknown> | undefined)?.[from.atProvider];
                return typeof v === "string" && v ? v : undefined;
              },
            }),
      },
    });
  }
  return out;
}

/** Field behaviours, references and immutable paths of a generated kind: plain data, no schema built. */
export function awsccFacts(spec: AwsccKindSpec) {
  // The engine skips these when comparing and late-initializing (a list's members are overlaid by the
  // provider instead: the engine compares lists whole).
  const fields: Record<string, FieldBehaviour> = {};
  for (const p of [...spec.writeOnly, ...spec.secrets]) fields[crdPathOf(spec, p)] = { writeOnly: true };
  const references = referencesWithDefs(spec).map((x) => x.def);
  // Create-only at any depth, as dotted paths (arrays without an index): the engine refuses to patch them.
  const immutable = ["region", ...spec.createOnly.map((p) => crdPathOf(spec, p))];
  return { fields, references, immutable };
}

/** forProvider and atProvider of a generated kind (zod: the costly part, built on a kind's first use). */
export function awsccSchemas(spec: AwsccKindSpec) {
  const fp: Record<string, z.ZodType> = {
    region: AwsRegion,
  };
  Object.assign(fp, membersOf(spec, spec.properties, 0, [], "", spec.identifierField));
  for (const { r, def } of referencesWithDefs(spec)) {
    const to = def.to;
    fp[def.refField] = (r.list ? z.array(Reference) : Reference)
      .optional()
      .describe(
        `${r.list ? "" : "A "}${to.kind} managed resource${r.list ? "s" : ""} (${to.group}) whose ${r.from === "externalName" ? "external name" : r.from.atProvider} fills ${r.field}.`,
      );
    fp[def.selectorField] = Selector.optional().describe(
      `Selects ${to.kind} managed resources by labels to fill ${r.field}.`,
    );
  }
  const ap: Record<string, z.ZodType> = {};
  for (const [k, p] of Object.entries(spec.attributes))
    if (!p.secret)
      ap[k] = zodOfNode(spec, p.s)
        .optional()
        .describe(p.doc ?? p.n);
  return { forProvider: z.object(fp), atProvider: z.object(ap) };
}

/**
 * The managed kind definition of a generated kind (cluster-scoped; withNamespacedVariants adds `.m.`). Its
 * zod schemas are built on first use (defineManagedKindLazily): activating many kinds builds none of them,
 * and every path that validates reads the same forProvider, built once per kind and shape.
 */
export function awsccKindOf(spec: AwsccKindSpec): ManagedKindDef {
  const s = awsccFacts(spec);
  const idText =
    spec.externalName === "fromAnnotation"
      ? `The external name (${Annotations.externalName}, default metadata.name) is its ${spec.primaryIdentifier[0]}.`
      : `The external name is Cloud Control's identifier (${spec.primaryIdentifier.join("|") || "none"}), chosen on create.`;
  return defineManagedKindLazily(
    {
      group: spec.group,
      kind: spec.kind,
      plural: spec.plural,
      cloud: "aws",
      description: `${spec.description} ${idText}`,
      immutable: s.immutable,
      externalName: spec.externalName,
      // A create is sent with an idempotency token derived from the object (providers/awscc): after an
      // interrupted create, creating again resumes the first request instead of making a second resource.
      ownershipLookup: spec.externalName === "providerChosen",
      references: s.references,
      fields: s.fields,
      // The registry schema's tagging.tagProperty (taggable types only), a {key: value} map in the spec.
      ...(spec.tags ? { tagging: { field: spec.tags.field, format: "tags" as const } } : {}),
    },
    () => awsccSchemas(spec),
  );
}
