// The API server's structural-schema rules, checked offline over a generated CRD's schema.
import type { JSONSchemaProps } from "../../shared/api/crd.ts";

/**
 * The API server's structural-schema rules that a generator can break: a type on every node (unless
 * it preserves unknown fields or is int-or-string), items on arrays, no junctors, no properties beside
 * additionalProperties, only `type` on metadata, names that are DNS labels.
 */
export function structuralProblems(node: JSONSchemaProps, path: string, out: string[]) {
  for (const k of ["anyOf", "oneOf", "allOf", "not", "$ref"]) if (k in node) out.push(`${path}: ${k}`);
  const preserve = node["x-kubernetes-preserve-unknown-fields"] === true;
  if (!node.type && !preserve && !node["x-kubernetes-int-or-string"]) out.push(`${path}: no type`);
  if (node.type === "array" && !node.items) out.push(`${path}: array without items`);
  if (node.properties && node.additionalProperties) out.push(`${path}: properties and additionalProperties`);
  if (node.additionalProperties === false) out.push(`${path}: additionalProperties false`);
  if (node.nullable !== undefined && typeof node.nullable !== "boolean") out.push(`${path}: nullable`);
  for (const [k, v] of Object.entries((node.properties ?? {}) as Record<string, JSONSchemaProps>))
    structuralProblems(v, `${path}.${k}`, out);
  if (node.items) structuralProblems(node.items as JSONSchemaProps, `${path}[]`, out);
  if (typeof node.additionalProperties === "object")
    structuralProblems(node.additionalProperties as JSONSchemaProps, `${path}{}`, out);
}
