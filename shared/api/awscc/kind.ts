// A generated AWS kind as the engine sees it: its compact spec (spec.ts) turned into a managed kind
// definition — zod forProvider and atProvider, immutable fields, references, write-only fields — so the
// CRD, docs, validation, drift comparison and late-initialization are the hand-written kinds' own.
import { z } from "zod";
import {
  defineManagedKind,
  type FieldBehaviour,
  type ManagedKindDef,
  type ReferenceDef,
} from "../managed.ts";
import { Annotations, API_DOMAIN, Reference, SecretKeySelector, Selector } from "../meta.ts";
import {
  type AwsccKindSpec,
  type AwsccNode,
  type AwsccProp,
  awsccGroupOf,
  partsOf,
  pluralOf,
} from "./spec.ts";

/**
 * Object types nest at most this deep in the CRD; deeper values are free-form JSON in CloudFormation's
 * own (PascalCase) names. Recursive types (WAFv2 statements) end here too: structural schemas cannot
 * recurse, and each level multiplies the CRD's size.
 */
export const AWSCC_MAX_DEPTH = 5;

/** A field the API server keeps as given (any JSON): CloudFormation's `json` type. */
export const freeForm = () => z.unknown().meta({ "x-kubernetes-preserve-unknown-fields": true });

const enumText = (p: AwsccProp) => (p.enum ? ` One of: ${p.enum.join(", ")}.` : "");
const describe = (p: AwsccProp, more = "") =>
  `${p.doc ?? p.n}${enumText(p)}${p.req ? " Required on create." : ""}${p.co ? " Immutable." : ""}${more}`;

/** The zod schema of one value; `depth` counts the object types around it. */
export function zodOfNode(spec: AwsccKindSpec, node: AwsccNode, depth = 0, seen: string[] = []): z.ZodType {
  switch (node.t) {
    case "string":
      return z.string();
    case "integer":
      return z.number().int();
    case "number":
      return z.number();
    case "boolean":
      return z.boolean();
    case "json":
      return freeForm();
    case "tags":
      return z.record(z.string(), z.string());
    case "array":
      return z.array(zodOfNode(spec, node.of, depth, seen));
    case "map":
      return z.record(z.string(), zodOfNode(spec, node.of, depth, seen));
    case "ref": {
      const def = spec.defs[node.ref];
      if (!def || depth >= AWSCC_MAX_DEPTH || seen.includes(node.ref)) return freeForm();
      const shape: Record<string, z.ZodType> = {};
      for (const [k, p] of Object.entries(def.props)) {
        shape[k] = zodOfNode(spec, p.s, depth + 1, [...seen, node.ref])
          .optional()
          .describe(describe(p));
      }
      return z.object(shape);
    }
  }
}

/** The forProvider field a secret write-only property is read from. */
export const secretRefFieldOf = (field: string) => `${field}SecretRef`;

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

/** The forProvider and atProvider schemas and field behaviours of a generated kind. */
export function awsccSchemas(spec: AwsccKindSpec) {
  const fp: Record<string, z.ZodType> = {
    region: z
      .string()
      .min(1)
      .optional()
      .describe("AWS region; defaults to the ProviderConfig's region. Immutable."),
  };
  const fields: Record<string, FieldBehaviour> = {};
  for (const [k, p] of Object.entries(spec.properties)) {
    if (k === spec.identifierField) continue;
    if (p.wo === "secret") {
      const ref = secretRefFieldOf(k);
      fp[ref] = SecretKeySelector.optional().describe(
        `${describe(p)} Write-only: read from this Secret key, never stored in the spec, never compared.`,
      );
      fields[ref] = { writeOnly: true };
      continue;
    }
    fp[k] = zodOfNode(spec, p.s)
      .optional()
      .describe(describe(p, p.wo ? " Write-only: sent to AWS, never read back or compared." : ""));
    if (p.wo) fields[k] = { writeOnly: true };
  }
  const references: ReferenceDef[] = [];
  for (const r of spec.references) {
    const { refField, selectorField } = referenceFieldsOf(r.field, Boolean(r.list));
    if (fp[refField] || fp[selectorField]) continue;
    const to = referenceTarget(r.to);
    fp[refField] = (r.list ? z.array(Reference) : Reference)
      .optional()
      .describe(
        `${r.list ? "" : "A "}${to.kind} managed resource${r.list ? "s" : ""} (${to.group}) whose ${r.from === "externalName" ? "external name" : r.from.atProvider} fills ${r.field}.`,
      );
    fp[selectorField] = Selector.optional().describe(
      `Selects ${to.kind} managed resources by labels to fill ${r.field}.`,
    );
    const from = r.from;
    references.push({
      field: r.field,
      refField,
      selectorField,
      to,
      ...(r.list ? { list: true } : {}),
      ...(from === "externalName"
        ? {}
        : {
            extract: (t) => {
              const v = (t.status?.atProvider as Record<string, unknown> | undefined)?.[from.atProvider];
              return typeof v === "string" && v ? v : undefined;
            },
          }),
    });
  }
  const ap: Record<string, z.ZodType> = {};
  for (const [k, p] of Object.entries(spec.attributes))
    ap[k] = zodOfNode(spec, p.s)
      .optional()
      .describe(p.doc ?? p.n);
  const immutable = [
    "region",
    ...Object.entries(spec.properties)
      .filter(([k, p]) => p.co && k !== spec.identifierField)
      .map(([k, p]) => (p.wo === "secret" ? secretRefFieldOf(k) : k)),
  ];
  return { forProvider: z.object(fp), atProvider: z.object(ap), fields, references, immutable };
}

/** The managed kind definition of a generated kind (cluster-scoped; withNamespacedVariants adds `.m.`). */
export function awsccKindOf(spec: AwsccKindSpec): ManagedKindDef {
  const s = awsccSchemas(spec);
  const idText =
    spec.externalName === "fromAnnotation"
      ? `The external name (${Annotations.externalName}, default metadata.name) is its ${spec.primaryIdentifier[0]}.`
      : `The external name is Cloud Control's identifier (${spec.primaryIdentifier.join("|") || "none"}), chosen on create.`;
  return defineManagedKind({
    group: spec.group,
    kind: spec.kind,
    plural: spec.plural,
    cloud: "aws",
    description: `${spec.description} ${idText}`,
    forProvider: s.forProvider,
    atProvider: s.atProvider,
    immutable: s.immutable,
    externalName: spec.externalName,
    // A create is sent with an idempotency token derived from the object (providers/awscc): after an
    // interrupted create, creating again resumes the first request instead of making a second resource.
    ownershipLookup: spec.externalName === "providerChosen",
    references: s.references,
    fields: s.fields,
  });
}
