import { conditionColumn, crd } from "../crd.ts";
import type { ClaimKindDef } from "./claims.ts";
import type { ClassKindDef } from "./classes.ts";
import { DEFAULT_CLASS_ANNOTATION } from "./meta.ts";

/** The CRD of a namespaced claim kind (category `claim`, as Crossplane's claims). */
export function claimCrd(def: ClaimKindDef) {
  return crd({
    type: def,
    description: def.description,
    spec: def.spec,
    specDescription: "The desired state of the claim: its class and parameters.",
    status: def.status,
    statusDescription: "The observed state of the claim, written by driftless.",
    categories: ["claim", "driftless"],
    shortNames: def.shortNames,
    printerColumns: [
      conditionColumn("READY", "Ready"),
      conditionColumn("SYNCED", "Synced"),
      { name: "CLASS", type: "string", jsonPath: ".spec.classRef.name" },
      { name: "CLASS-KIND", type: "string", jsonPath: ".spec.classRef.kind", priority: 1 },
      { name: "RESOURCE", type: "string", jsonPath: ".status.resourceRef.name" },
      { name: "AGE", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ],
  });
}

/** The CRD of a cluster-scoped class kind. Classes are templates: they have no status. */
export function classCrd(def: ClassKindDef) {
  return crd({
    type: def,
    description: def.description,
    spec: def.spec,
    specDescription: "The template this class gives the resources of its claims.",
    categories: ["class", "driftless", def.cloud],
    shortNames: def.shortNames,
    printerColumns: [
      {
        name: "DEFAULT",
        type: "string",
        jsonPath: `.metadata.annotations.${DEFAULT_CLASS_ANNOTATION.replaceAll(".", "\\.")}`,
      },
      { name: "RECLAIM", type: "string", jsonPath: ".spec.reclaimPolicy" },
      { name: "PROVIDERCONFIG", type: "string", jsonPath: ".spec.providerConfigRef.name" },
      { name: "AGE", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ],
  });
}
