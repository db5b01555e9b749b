import { type JSONSchemaProps, jsonSchemaOf, OBJECT_PROPERTIES } from "../crd.ts";
import type { ClaimKindDef } from "./claims.ts";
import type { ClassKindDef } from "./classes.ts";
import { DEFAULT_CLASS_ANNOTATION } from "./meta.ts";

const LABELS = { "app.kubernetes.io/part-of": "driftless" };

const conditionColumn = (name: string, type: string) => ({
  name,
  type: "string",
  jsonPath: `.status.conditions[?(@.type=='${type}')].status`,
});

function names(t: { kind: string; plural: string }, categories: string[], shortNames: string[]) {
  return {
    kind: t.kind,
    listKind: `${t.kind}List`,
    plural: t.plural,
    singular: t.kind.toLowerCase(),
    categories,
    shortNames,
  };
}

function version(name: string, schema: JSONSchemaProps, columns: object[], status: boolean) {
  return {
    name,
    served: true,
    storage: true,
    ...(status ? { subresources: { status: {} } } : {}),
    additionalPrinterColumns: columns,
    schema: { openAPIV3Schema: schema },
  };
}

/** The CRD of a namespaced claim kind (category `claim`, as Crossplane's claims). */
export function claimCrd(def: ClaimKindDef) {
  const status = jsonSchemaOf(def.status);
  const conditions = (status.properties as Record<string, JSONSchemaProps> | undefined)?.conditions;
  if (conditions) {
    // Conditions are a map keyed by type: server-side apply and strategic tools merge them by key.
    conditions["x-kubernetes-list-type"] = "map";
    conditions["x-kubernetes-list-map-keys"] = ["type"];
  }
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${def.plural}.${def.group}`, labels: LABELS },
    spec: {
      group: def.group,
      names: names(def, ["claim", "driftless"], def.shortNames),
      scope: "Namespaced",
      versions: [
        version(
          def.version,
          {
            type: "object",
            description: def.description,
            required: ["spec"],
            properties: {
              ...OBJECT_PROPERTIES,
              spec: {
                description: "The desired state of the claim: its class and parameters.",
                ...jsonSchemaOf(def.spec),
              },
              status: { description: "The observed state of the claim, written by driftless.", ...status },
            },
          },
          [
            conditionColumn("READY", "Ready"),
            conditionColumn("SYNCED", "Synced"),
            { name: "CLASS", type: "string", jsonPath: ".spec.classRef.name" },
            { name: "CLASS-KIND", type: "string", jsonPath: ".spec.classRef.kind", priority: 1 },
            { name: "RESOURCE", type: "string", jsonPath: ".status.resourceRef.name" },
            { name: "AGE", type: "date", jsonPath: ".metadata.creationTimestamp" },
          ],
          true,
        ),
      ],
    },
  };
}

/** The CRD of a cluster-scoped class kind. Classes are templates: they have no status. */
export function classCrd(def: ClassKindDef) {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${def.plural}.${def.group}`, labels: LABELS },
    spec: {
      group: def.group,
      names: names(def, ["class", "driftless", def.cloud], def.shortNames),
      scope: "Cluster",
      versions: [
        version(
          def.version,
          {
            type: "object",
            description: def.description,
            required: ["spec"],
            properties: {
              ...OBJECT_PROPERTIES,
              spec: {
                description: "The template this class gives the resources of its claims.",
                ...jsonSchemaOf(def.spec),
              },
            },
          },
          [
            {
              name: "DEFAULT",
              type: "string",
              jsonPath: `.metadata.annotations.${DEFAULT_CLASS_ANNOTATION.replaceAll(".", "\\.")}`,
            },
            { name: "RECLAIM", type: "string", jsonPath: ".spec.reclaimPolicy" },
            { name: "PROVIDERCONFIG", type: "string", jsonPath: ".spec.providerConfigRef.name" },
            { name: "AGE", type: "date", jsonPath: ".metadata.creationTimestamp" },
          ],
          false,
        ),
      ],
    },
  };
}
