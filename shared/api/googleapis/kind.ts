// A generated Google Cloud kind as the engine sees it: the generated-kind model's schemas (api/awscc/kind.ts:
// forProvider, atProvider, secrets as Secret keys, write-only inputs, immutable paths) with Google's home
// fields (location, region or zone; the project is the ProviderConfig's) and, for resources under another
// resource, the parent's full name.
import { z } from "zod";
import { awsccSchemas } from "../awscc/kind.ts";
import type { AwsccKindSpec } from "../awscc/spec.ts";
import { defineManagedKind, type ManagedKindDef } from "../managed.ts";
import { Annotations } from "../meta.ts";
import type { GoogleKindSpec } from "./spec.ts";

/** The spec as the generated-kind model the shared schema and wire code reads (the fields they read agree). */
export const modelOf = (spec: GoogleKindSpec) => spec as unknown as AwsccKindSpec;

const HOME_TEXT = {
  location: "The location (region, zone or `global`) the resource lives in. Immutable.",
  region: "The Compute region the resource lives in. Immutable.",
  zone: "The Compute zone the resource lives in. Immutable.",
} as const;

/** The forProvider and atProvider schemas, field behaviours and immutable paths of a generated Google kind. */
export function googleSchemas(spec: GoogleKindSpec) {
  const s = awsccSchemas(modelOf(spec));
  const home: Record<string, z.ZodType> = {};
  for (const h of spec.google.parent.home) home[h] = z.string().min(1).describe(HOME_TEXT[h]);
  if (spec.google.parent.explicit)
    home.parent = z
      .string()
      .min(1)
      .describe(
        `The full resource name of the parent this resource is created under (${spec.google.parent.template}). Immutable.`,
      );
  const forProvider = s.forProvider.omit({ region: true }).extend(home);
  const immutable = [...Object.keys(home), ...s.immutable.filter((p) => p !== "region")];
  return { forProvider, atProvider: s.atProvider, fields: s.fields, immutable };
}

export function googleKindOf(spec: GoogleKindSpec): ManagedKindDef {
  const s = googleSchemas(spec);
  const g = spec.google;
  const idText =
    spec.externalName === "fromAnnotation"
      ? g.family === "compute"
        ? `The external name (${Annotations.externalName}, default metadata.name) is its name.`
        : `The external name (${Annotations.externalName}, default metadata.name) is its id (${g.create.idParam}) or its full resource name (${g.pattern ?? g.collection}).`
      : "The external name is its full resource name, which Google chooses on create.";
  const immutableText = g.immutableFromProtos
    ? ""
    : " The protos mark no field IMMUTABLE: a change Google refuses is reported with Google's message, never retried as a replacement.";
  return defineManagedKind({
    group: spec.group,
    kind: spec.kind,
    plural: spec.plural,
    cloud: "gcp",
    description: `${spec.description} ${idText}${immutableText}`,
    forProvider: s.forProvider,
    atProvider: s.atProvider,
    immutable: s.immutable,
    externalName: spec.externalName,
    fields: s.fields,
  });
}
