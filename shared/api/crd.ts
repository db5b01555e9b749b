import { z } from "zod";
import type { AnyObjectSchema, ManagedKindDef } from "./managed.ts";
import { Annotations, type ResourceType } from "./meta.ts";
import { ProviderConfigStatus } from "./provider-config.ts";

/** A JSON Schema node as Kubernetes' structural OpenAPI v3 subset accepts it. */
export type JSONSchemaProps = { [key: string]: unknown };

// Zod emits these for every int; they are noise in `kubectl explain` and add nothing.
const SAFE_INT = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);

/** Rewrites zod's JSON Schema into a structural schema the API server accepts. */
export function toStructural(node: unknown): JSONSchemaProps {
  if (typeof node !== "object" || node === null) return {};
  const out: JSONSchemaProps = {};
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    switch (k) {
      case "$schema":
      case "id":
      case "$id":
        break;
      case "additionalProperties":
        // Structural schemas forbid `additionalProperties: false`; unknown fields are pruned anyway.
        if (typeof v === "object" && v !== null) out[k] = toStructural(v);
        break;
      case "properties":
        out[k] = Object.fromEntries(
          Object.entries(v as Record<string, unknown>).map(([p, s]) => [p, toStructural(s)]),
        );
        break;
      case "items":
        out[k] = toStructural(v);
        break;
      case "minimum":
      case "maximum":
        if (!SAFE_INT.has(v as number)) out[k] = v;
        break;
      case "required":
        if (Array.isArray(v) && v.length > 0) out[k] = v;
        break;
      case "anyOf":
      case "oneOf":
      case "allOf":
        throw new Error(`CRD schemas cannot use ${k} (structural schemas need one type per field)`);
      default:
        out[k] = v;
    }
  }
  // A free-form object (z.record of unknowns: no properties, additionalProperties absent or `{}`) keeps its
  // fields instead of having them pruned; the API server refuses an additionalProperties without a type.
  const anyValue =
    typeof out.additionalProperties === "object" &&
    Object.keys(out.additionalProperties as object).length === 0;
  if (out.type === "object" && !out.properties && (!out.additionalProperties || anyValue)) {
    delete out.additionalProperties;
    out["x-kubernetes-preserve-unknown-fields"] = true;
  }
  return out;
}

export function jsonSchemaOf(schema: z.ZodType): JSONSchemaProps {
  return toStructural(
    z.toJSONSchema(schema, { target: "openapi-3.0", io: "input", unrepresentable: "throw" }),
  );
}

/** The fields every Kubernetes object has, described as `kubectl explain` shows them. */
export const OBJECT_PROPERTIES = {
  apiVersion: {
    type: "string",
    description:
      "APIVersion defines the versioned schema of this representation of an object: <group>/<version>.",
  },
  kind: { type: "string", description: "Kind is the type of the object, in CamelCase." },
  // The API server refuses anything but `type` on metadata; kubectl explain shows ObjectMeta's own docs.
  metadata: { type: "object" },
} as const;

/** A printer column showing one condition's status. */
export const conditionColumn = (name: string, type: string) => ({
  name,
  type: "string",
  jsonPath: `.status.conditions[?(@.type=='${type}')].status`,
});

export interface CrdInput {
  type: ResourceType;
  description: string;
  spec: AnyObjectSchema;
  /** Left out for a kind that has no status (a class is a template): no status subresource either. */
  status?: AnyObjectSchema;
  /** What spec and status hold, for schemas that do not describe themselves. */
  specDescription?: string;
  statusDescription?: string;
  categories: string[];
  shortNames?: string[];
  printerColumns: Array<Record<string, unknown>>;
  /** Add `spec.initProvider` beside `spec.forProvider` (managed kinds). */
  initProvider?: boolean;
}

function withInitProvider(spec: JSONSchemaProps, add: boolean): JSONSchemaProps {
  const properties = spec.properties as Record<string, JSONSchemaProps> | undefined;
  const forProvider = properties?.forProvider;
  if (!add || !forProvider) return spec;
  return { ...spec, properties: { ...properties, initProvider: initProviderSchema(forProvider) } };
}

/** A status schema whose conditions are a map keyed by type: server-side apply and strategic tools merge them by key. */
function conditionsByType(status: JSONSchemaProps): JSONSchemaProps {
  const conditions = (status.properties as Record<string, JSONSchemaProps> | undefined)?.conditions;
  if (conditions) {
    conditions["x-kubernetes-list-type"] = "map";
    conditions["x-kubernetes-list-map-keys"] = ["type"];
  }
  return status;
}

const described = (schema: JSONSchemaProps, description: string | undefined): JSONSchemaProps =>
  description ? { description, ...schema } : schema;

/** A driftless CRD: one served version, with the status subresource when it has a status. */
export function crd(i: CrdInput) {
  const { type } = i;
  const spec = withInitProvider(jsonSchemaOf(i.spec), i.initProvider ?? false);
  const status = i.status && conditionsByType(jsonSchemaOf(i.status));
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${type.plural}.${type.group}`, labels: { "app.kubernetes.io/part-of": "driftless" } },
    spec: {
      group: type.group,
      names: {
        kind: type.kind,
        listKind: `${type.kind}List`,
        plural: type.plural,
        singular: type.kind.toLowerCase(),
        categories: i.categories,
        ...(i.shortNames ? { shortNames: i.shortNames } : {}),
      },
      scope: type.namespaced ? "Namespaced" : "Cluster",
      versions: [
        {
          name: type.version,
          served: true,
          storage: true,
          ...(status ? { subresources: { status: {} } } : {}),
          additionalPrinterColumns: i.printerColumns,
          schema: {
            openAPIV3Schema: {
              type: "object",
              description: i.description,
              required: ["spec"],
              properties: {
                ...OBJECT_PROPERTIES,
                spec: described(spec, i.specDescription),
                ...(status ? { status: described(status, i.statusDescription) } : {}),
              },
            },
          },
        },
      ],
    },
  };
}

/**
 * `spec.initProvider` (Crossplane's): the forProvider schema with nothing required and no defaults, since any
 * of its fields may be left to forProvider or to someone else.
 */
export function initProviderSchema(forProvider: JSONSchemaProps): JSONSchemaProps {
  const loosen = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(loosen);
    if (typeof node !== "object" || node === null) return node;
    return Object.fromEntries(
      Object.entries(node as Record<string, unknown>)
        .filter(([k]) => k !== "required" && k !== "default")
        .map(([k, v]) => [k, k === "properties" ? mapValues(v, loosen) : loosen(v)]),
    );
  };
  return {
    ...(loosen(forProvider) as JSONSchemaProps),
    description:
      "Fields set only when the external resource is created, then left to others (an autoscaler, a console): never compared for drift, never late-initialized. forProvider wins where both set a field.",
  };
}

const mapValues = (o: unknown, f: (v: unknown) => unknown) =>
  Object.fromEntries(Object.entries(o as Record<string, unknown>).map(([k, v]) => [k, f(v)]));

export function managedCrd(def: ManagedKindDef) {
  return crd({
    type: def,
    description: def.description,
    spec: def.spec,
    status: def.status,
    initProvider: true,
    categories: ["crossplane", "managed", "driftless", def.cloud],
    ...(def.shortNames ? { shortNames: def.shortNames } : {}),
    printerColumns: [
      conditionColumn("READY", "Ready"),
      conditionColumn("SYNCED", "Synced"),
      {
        name: "EXTERNAL-NAME",
        type: "string",
        jsonPath: `.metadata.annotations.${Annotations.externalName.replaceAll(".", "\\.")}`,
      },
      { name: "AGE", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ],
  });
}

export function providerConfigCrd(type: ResourceType, spec: AnyObjectSchema, cloud: string) {
  const users =
    type.kind === "ClusterProviderConfig"
      ? `namespaced ${cloud.toUpperCase()} managed resources (${type.group}) in the namespaces it allows`
      : type.namespaced
        ? `namespaced ${cloud.toUpperCase()} managed resources (${type.group}) in its own namespace`
        : `${cloud.toUpperCase()} managed resources`;
  return crd({
    type,
    description: `Credentials and endpoints driftless uses for ${users}.`,
    spec,
    status: ProviderConfigStatus,
    categories: ["driftless", "providerconfig", cloud],
    printerColumns: [
      conditionColumn("READY", "Ready"),
      { name: "USERS", type: "integer", jsonPath: ".status.users" },
      { name: "SOURCE", type: "string", jsonPath: ".spec.credentials.source" },
      { name: "AGE", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ],
  });
}
