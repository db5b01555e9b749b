// A small value a structural JSON schema (a CRD's openAPIV3Schema) accepts: its required properties filled
// (recursively) with placeholder values that keep to the schema's enum, default, bounds and lengths. The
// caller may ask for more properties than `required` lists — generated AWS kinds mark "required on create"
// in their spec, not in the CRD (an import need not repeat them): see awsccSampleOf.

import { secretRefFieldOf } from "../../shared/api/awscc/kind.ts";
import type { AwsccKindSpec, AwsccNode } from "../../shared/api/awscc/spec.ts";

export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-int-or-string"?: boolean;
}

/** Where a property stands: the names from the root, `[]` for a list's item, `{}` for a map's value. */
export type SchemaPath = readonly string[];

export interface SampleOptions {
  /** Also fill this property of the object at `path` (the schema's own `required` always are). */
  include?: (path: SchemaPath, name: string) => boolean;
  /** The value of a free-form field (preserve-unknown-fields without properties). */
  freeForm?: unknown;
}

const PLACEHOLDER = "placeholder";

function stringOf(s: JsonSchema): string {
  const min = s.minLength ?? 0;
  const text = PLACEHOLDER.length >= min ? PLACEHOLDER : PLACEHOLDER.padEnd(min, "x");
  return s.maxLength !== undefined ? text.slice(0, Math.max(min, s.maxLength)) : text;
}

function numberOf(s: JsonSchema): number {
  const lo = s.minimum ?? Number.NEGATIVE_INFINITY;
  const hi = s.maximum ?? Number.POSITIVE_INFINITY;
  return Math.min(Math.max(1, lo), hi);
}

/** A value `schema` accepts, at `path` (for `include`). */
export function sampleOf(schema: JsonSchema, o: SampleOptions = {}, path: SchemaPath = []): unknown {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (schema.default !== undefined) return structuredClone(schema.default);
  if (schema["x-kubernetes-int-or-string"]) return 1;
  switch (schema.type) {
    case "string":
      return stringOf(schema);
    case "integer":
    case "number":
      return numberOf(schema);
    case "boolean":
      return true;
    case "array":
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () =>
        sampleOf(schema.items ?? {}, o, [...path, "[]"]),
      );
    default:
      break;
  }
  const props = schema.properties;
  if (props) {
    const required = new Set(schema.required ?? []);
    const out: Record<string, unknown> = {};
    for (const [name, s] of Object.entries(props))
      if (required.has(name) || o.include?.(path, name)) out[name] = sampleOf(s, o, [...path, name]);
    return out;
  }
  const values = schema.additionalProperties;
  if (typeof values === "object") return { key: sampleOf(values, o, [...path, "{}"]) };
  return schema["x-kubernetes-preserve-unknown-fields"] ? structuredClone(o.freeForm ?? {}) : {};
}

/** The spec node at `path` below forProvider (camelCase names, `[]`/`{}` steps), or undefined. */
function awsccPropAt(spec: AwsccKindSpec, path: SchemaPath) {
  const [top, ...rest] = path;
  if (top === undefined) return undefined;
  const secret = Object.entries(spec.properties).find(
    ([k, p]) => spec.secrets.includes(k) && secretRefFieldOf(k, p.s) === top,
  );
  let prop = secret ? secret[1] : spec.properties[top];
  let node: AwsccNode | undefined = prop?.s;
  for (const step of rest) {
    if (!node) return undefined;
    if (step === "[]" || step === "{}") {
      node = "of" in node ? node.of : undefined;
      continue;
    }
    prop = node.t === "ref" ? spec.defs[node.ref]?.props[step] : undefined;
    node = prop?.s;
  }
  return prop;
}

/**
 * A generated AWS kind's forProvider with every top-level field set (the CRD's whole first level is
 * exercised) and, below it, the members CloudFormation requires on create; free-form (JSON) values hold a
 * small object of their own, so the API server's keeping them is checked too.
 */
export function awsccSampleOf(spec: AwsccKindSpec, forProvider: JsonSchema): Record<string, unknown> {
  return sampleOf(forProvider, {
    include: (path, name) => path.length === 0 || awsccPropAt(spec, [...path, name])?.req === true,
    freeForm: { Placeholder: PLACEHOLDER },
  }) as Record<string, unknown>;
}
