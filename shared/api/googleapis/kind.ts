// A generated Google Cloud kind as the engine sees it: the generated-kind model's schemas (api/awscc/kind.ts:
// forProvider, atProvider, secrets as Secret keys, write-only inputs, immutable paths) with Google's home
// fields (location, region or zone; the project is the ProviderConfig's) and, for resources under another
// resource, the parent's full name.
import { z } from "zod";
import { awsccFacts, awsccSchemas, referenceFieldsOf } from "../awscc/kind.ts";
import type { AwsccKindSpec } from "../awscc/spec.ts";
import {
  type CloudLacks,
  defineManagedKindLazily,
  type ManagedKindDef,
  type ManagedResource,
  type ReferenceDef,
} from "../managed.ts";
import { Annotations, API_DOMAIN, Reference, Selector } from "../meta.ts";
import type { GoogleKindSpec, GoogleRef } from "./spec.ts";

const models = new WeakMap<GoogleKindSpec, AwsccKindSpec>();
/**
 * The spec as the generated-kind model the shared schema and wire code reads (the fields they read agree),
 * with its nested references as the model's `nestedReferences` (their `…Ref` / `…Selector` members).
 */
export function modelOf(spec: GoogleKindSpec): AwsccKindSpec {
  let m = models.get(spec);
  if (!m) {
    const nested = (spec.google.refs ?? []).flatMap((r) =>
      r.at
        ? [
            {
              at: r.at,
              field: r.field,
              ...(r.list ? { list: true as const } : {}),
              kind: r.kind,
              group: r.group,
            },
          ]
        : [],
    );
    m = { ...(spec as unknown as AwsccKindSpec), ...(nested.length > 0 ? { nestedReferences: nested } : {}) };
    models.set(spec, m);
  }
  return m;
}

const HOME_TEXT = {
  location: "The location (region, zone or `global`) the resource lives in. Immutable.",
  region: "The Compute region the resource lives in. Immutable.",
  zone: "The Compute zone the resource lives in. Immutable.",
} as const;

/**
 * A referenced resource's full name, as the fields that name it take it: a resource-oriented kind's
 * `atProvider.name` (or a full external name), a Compute kind's self link from `projects/` on
 * (`projects/p/global/networks/n`). Nothing until the target has one: the reference waits.
 */
export function fullNameOf(ref: Pick<GoogleRef, "family">, target: ManagedResource): string | undefined {
  const at = target.status?.atProvider as Record<string, unknown> | undefined;
  if (ref.family === "compute") {
    const link = at?.selfLink;
    return typeof link === "string" ? /(?:^|\/)(projects\/.+)$/.exec(link)?.[1] : undefined;
  }
  if (typeof at?.name === "string" && at.name.includes("/")) return at.name;
  const ext = target.metadata.annotations?.[Annotations.externalName];
  return ext?.includes("/") ? ext : undefined;
}

/**
 * The value a reference fills its field with: the target's full name (behind `prefix`), or its `from`
 * field — `selfLink` (Compute's full URL, what Compute answers with for such fields), `name` (its external
 * name), any other atProvider or forProvider string (a service account's `email`).
 */
export function referenceValueOf(
  ref: Pick<GoogleRef, "family" | "from" | "prefix">,
  target: ManagedResource,
): string | undefined {
  if (!ref.from) {
    const n = fullNameOf(ref, target);
    return n && ref.prefix ? `${ref.prefix}${n}` : n;
  }
  if ((ref.from === "name" && ref.family === "compute") || ref.from === "externalName")
    return target.metadata.annotations?.[Annotations.externalName];
  const at = (target.status?.atProvider as Record<string, unknown> | undefined)?.[ref.from];
  const fp = (target.spec.forProvider as Record<string, unknown> | undefined)?.[ref.from];
  const v = at ?? fp;
  return typeof v === "string" && v ? v : undefined;
}

/** The engine's reference definitions of a kind's `google.refs` (nested ones included): plain data. */
function referencesOf(spec: GoogleKindSpec): ReferenceDef[] {
  return (spec.google.refs ?? []).map((r) => {
    const { refField, selectorField } = referenceFieldsOf(r.field, Boolean(r.list));
    const group = `${r.group}.${API_DOMAIN}`;
    return {
      field: r.field,
      refField,
      selectorField,
      to: {
        group,
        version: "v1alpha1",
        kind: r.kind,
        plural: r.plural,
        namespaced: false,
        apiVersion: `${group}/v1alpha1`,
      },
      ...(r.list ? { list: true } : {}),
      ...(r.at ? { at: r.at } : {}),
      extract: (t: ManagedResource) => referenceValueOf(r, t),
    };
  });
}

/** The top level's `…Ref` / `…Selector` fields (nested ones are members of their object, api/awscc/kind.ts). */
function referenceFields(spec: GoogleKindSpec) {
  const fields: Record<string, z.ZodType> = {};
  for (const r of spec.google.refs ?? []) {
    if (r.at) continue;
    const { refField, selectorField } = referenceFieldsOf(r.field, Boolean(r.list));
    const group = `${r.group}.${API_DOMAIN}`;
    fields[refField] = (r.list ? z.array(Reference) : Reference)
      .optional()
      .describe(
        `${r.list ? "" : "A "}${r.kind} managed resource${r.list ? "s" : ""} (${group}) whose ${r.from ?? "full name"} fills ${r.field}.`,
      );
    fields[selectorField] = Selector.optional().describe(
      `Selects a ${r.kind} managed resource (${group}) by labels to fill ${r.field}.`,
    );
  }
  return fields;
}

/**
 * The home fields forProvider carries: location / region / zone, `parent` for an explicit parent, and a
 * Compute child's parent names (`instanceGroupManager`).
 */
export const homeFieldsOf = (spec: GoogleKindSpec): string[] => [
  ...spec.google.parent.home,
  ...(spec.google.parent.explicit ? ["parent"] : []),
  ...(spec.google.parent.vars ?? []).map((x) => x.field),
];

/** Field behaviours, references and immutable paths of a generated Google kind: plain data, no schema built. */
export function googleFacts(spec: GoogleKindSpec) {
  const s = awsccFacts(modelOf(spec));
  const immutable = [...homeFieldsOf(spec), ...s.immutable.filter((p) => p !== "region")];
  return { fields: s.fields, immutable, references: referencesOf(spec) };
}

/** forProvider and atProvider of a generated Google kind (zod: the costly part, built on a kind's first use). */
export function googleSchemas(spec: GoogleKindSpec) {
  const s = awsccSchemas(modelOf(spec));
  const home: Record<string, z.ZodType> = {};
  for (const h of spec.google.parent.home) home[h] = z.string().min(1).describe(HOME_TEXT[h]);
  if (spec.google.parent.explicit) {
    const parent = z
      .string()
      .min(1)
      .describe(
        `The full resource name of the parent this resource is created under (${spec.google.parent.template.split("|").join(" or ")}). Immutable${spec.google.parent.inBody ? ": a changed parent is refused, never followed by a move" : ""}.${spec.google.parent.optional ? " Optional: without one Google makes it with no parent (an account with no organization) or under the credentials' organization, which is then late-initialized here and recorded as its home." : ""}`,
      );
    // Filled by the engine from parentRef / parentSelector when it has them: not required of the user then.
    home.parent =
      spec.google.parent.optional || spec.google.refs?.some((r) => r.field === "parent")
        ? parent.optional()
        : parent;
  }
  for (const { v, field } of spec.google.parent.vars ?? []) {
    const named = z
      .string()
      .min(1)
      .describe(
        `The name of the parent ({${v}} in ${spec.google.create?.p ?? spec.google.get?.p}) this resource is created under. Immutable.`,
      );
    home[field] = spec.google.refs?.some((r) => r.field === field) ? named.optional() : named;
  }
  const forProvider = s.forProvider.omit({ region: true }).extend(home).extend(referenceFields(spec));
  return { forProvider, atProvider: s.atProvider };
}

/**
 * The managed kind definition of a generated Google kind. Its zod schemas are built on first use
 * (defineManagedKindLazily): activating 50 kinds builds none of them, and every path that validates reads
 * the same forProvider, built once per kind and shape.
 */
/**
 * The label a provider-chosen resource is created with: its managed resource's uid, so a create whose answer
 * was lost is found again by listing its parent (Google label keys: lowercase letters, digits, `_`, `-`).
 */
export const OWNER_LABEL = "driftless-managed-resource-uid";

/**
 * Whether a kind's resources are found by OWNER_LABEL when no name is recorded: a provider-chosen name (the
 * answer to the create is its only other source), a labels map to carry it and a list method to find it.
 */
export const findsByOwnerLabel = (spec: GoogleKindSpec): boolean =>
  spec.externalName === "providerChosen" &&
  spec.google.family === "resource" &&
  !spec.google.uniqueIn &&
  Boolean(spec.google.labels && spec.google.list);

/**
 * Whether a provider-chosen resource is found again by a field Google documents as unique within its parent
 * (a Folder's displayName, a TagKey's shortName): a lost create answer is then found by listing the parent.
 */
export const findsByUniqueField = (spec: GoogleKindSpec): boolean =>
  spec.externalName === "providerChosen" && Boolean(spec.google.uniqueIn && spec.google.list);

/**
 * What Google publishes no call for on a kind, from its facts: no delete (Cloud KMS's KeyRing). The engine
 * never asks for it and the CRD refuses asking (api/managed.ts CloudLacks).
 */
export function googleLacksOf(spec: GoogleKindSpec): CloudLacks | undefined {
  const g = spec.google;
  const method = (verb: string) =>
    g.family === "compute" ? `${g.service}.${verb}` : `${g.service}.${verb}${spec.kind}`;
  const what = (verb: string) => `${spec.typeName}: no ${method(verb)} in ${g.proto}`;
  const lacks: { Create?: string; Update?: string; Delete?: string } = {};
  if (!g.create)
    lacks.Create = `Google publishes no create for ${spec.kind} (${what("Create")}): Google makes it${g.singleton ? " with its parent" : ""}, and driftless only adopts one that exists`;
  if (!g.create && !g.update)
    lacks.Update = `Google publishes no update for ${spec.kind} (${what("Update")}) either: driftless only observes it`;
  if (!g.delete)
    lacks.Delete = `Google publishes no delete for ${spec.kind} (${what("Delete")}): deleting this object releases it, and the ${spec.kind} stays in Google Cloud`;
  return Object.keys(lacks).length > 0 ? lacks : undefined;
}

export function googleKindOf(spec: GoogleKindSpec): ManagedKindDef {
  const s = googleFacts(spec);
  const g = spec.google;
  const lacks = googleLacksOf(spec);
  const idText =
    spec.externalName === "fromAnnotation"
      ? g.family === "compute"
        ? `The external name (${Annotations.externalName}, default metadata.name) is its name.`
        : g.singleton
          ? `One per parent, made by Google with it: its spec's parent fields say which (${g.pattern ?? g.collection}).`
          : `The external name (${Annotations.externalName}, default metadata.name) is its id (${g.create?.idParam ?? spec.identifierField ?? (g.create?.namedBy === "path" ? "the last segment of the name the create PUTs" : g.create?.namedBy === "fullName" ? "the last segment of the full name the create sends as its name" : g.collection)}) or its full resource name (${g.pattern ?? g.collection}).`
      : `The external name is its full resource name, which Google chooses on create${findsByOwnerLabel(spec) ? ` (a create whose answer is lost is found again by its ${OWNER_LABEL} label)` : findsByUniqueField(spec) ? ` (a create whose answer is lost is found again by its ${g.uniqueIn}, unique within its parent)` : ""}.`;
  const keptText = lacks?.Delete ? ` ${lacks.Delete}.` : "";
  const softText = g.softDelete
    ? ` Google's delete only marks it ${g.softDelete} (restorable for 30 days): driftless treats a resource in that state as gone.`
    : "";
  const immutableText = g.immutableFromProtos
    ? ""
    : " The protos mark no field IMMUTABLE: a change Google refuses is reported with Google's message, never retried as a replacement.";
  return defineManagedKindLazily(
    {
      group: spec.group,
      kind: spec.kind,
      plural: spec.plural,
      cloud: "gcp",
      description: `${spec.description} ${idText}${immutableText}${softText}${keptText}`,
      immutable: s.immutable,
      externalName: spec.externalName,
      // A lost create answer is found again by the owner label (not found: no create reached Google).
      ownershipLookup: findsByOwnerLabel(spec) || findsByUniqueField(spec),
      fields: s.fields,
      references: s.references,
      // The protos' labels map, where the resource has one: Google's label value rules apply.
      ...(g.labels ? { tagging: { field: g.labels, format: "labels" as const } } : {}),
      ...(lacks ? { lacks } : {}),
    },
    () => googleSchemas(spec),
  );
}
