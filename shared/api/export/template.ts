import { z } from "zod";
import { conditionColumn, crd } from "../crd.ts";
import { API_DOMAIN, Condition, type ObjectMeta, type ResourceType } from "../meta.ts";

/** Cluster-scoped templates on the control plane: what app clusters may consume. */
export const EXPORT_GROUP = `export.${API_DOMAIN}`;
export const EXPORT_VERSION = "v1alpha1";

/** On an app cluster's claim: its upstream copy is deleted (and gone) before the claim may go. */
export const EXPORT_FINALIZER = `finalizer.${EXPORT_GROUP}`;

/** Labels linking control-plane objects (and synced copies) to the app cluster they serve. */
export const ExportLabels = {
  /** On the per-app-cluster namespace, the agent's RBAC and every upstream claim. */
  appCluster: `${EXPORT_GROUP}/app-cluster`,
  /** On an upstream claim: the app cluster namespace its source lives in. */
  appNamespace: `${EXPORT_GROUP}/app-namespace`,
  /** On an upstream claim: the app-cluster claim's uid (never adopt another claim's copy). */
  appUid: `${EXPORT_GROUP}/app-uid`,
  /** On a Secret or ConfigMap copied into an app cluster: the uid of the app-cluster claim it belongs to. */
  syncedFor: `${EXPORT_GROUP}/synced-for`,
} as const;

export const ExportAnnotations = {
  /** On an upstream claim: the app-cluster claim's full name. */
  appName: `${EXPORT_GROUP}/app-name`,
  /** On an upstream claim: the permission claims it was bound with (JSON), kept if the export goes. */
  permissionClaims: `${EXPORT_GROUP}/permission-claims`,
  /** On a copied Secret or ConfigMap: `namespace/name` of its control-plane source. */
  syncedFrom: `${EXPORT_GROUP}/synced-from`,
} as const;

/** Condition types the agent writes on app-cluster claims besides the mirrored Ready/Synced/Bound. */
export const ExportConditionType = {
  /** Whether the claim's kind is (still) exported to this app cluster. */
  Exported: "Exported",
} as const;

export const ExportReason = {
  Exported: "Exported",
  /** No bound template offers the kind (deleted template, or the kind removed from it). */
  NotExported: "NotExported",
  /** The control-plane copy exists and is not this claim's (another claim's, being deleted…). */
  UpstreamConflict: "UpstreamConflict",
  /** The claim's namespace and name do not fit one control-plane name. */
  InvalidName: "InvalidName",
  /** Waiting for the control-plane copy (just made, or not yet reconciled there). */
  Pending: "Pending",
  SecretConflict: "SecretConflict",
  SyncError: "SyncError",
  Valid: "Valid",
  InvalidAPI: "InvalidAPI",
} as const;

export const GroupResourceVersion = z.object({
  group: z.string().describe('API group; "" for the core group (Secrets, ConfigMaps).'),
  resource: z.string().min(1).describe("Resource (plural), e.g. queues, secrets."),
  version: z.string().min(1).describe("API version, e.g. v1alpha1, v1."),
});
export type GroupResourceVersion = z.infer<typeof GroupResourceVersion>;

export const ExportedAPI = GroupResourceVersion.extend({
  group: z.string().min(1).describe("API group of the claim kind, e.g. claims.driftless.dev."),
}).describe("A claim kind offered to app clusters.");
export type ExportedAPI = z.infer<typeof ExportedAPI>;

export const PermissionClaimSelector = z
  .object({
    owner: z
      .enum(["Claim", "Any"])
      .default("Claim")
      .describe(
        "Claim: only objects whose ownerReferences name the control-plane claim (e.g. its connection Secret). Any: every object matching matchLabels in the app cluster's namespace that belongs to the claim's own app namespace (named <app namespace>.<name>). Objects of other app namespaces are never synced.",
      ),
    matchLabels: z
      .record(z.string(), z.string())
      .optional()
      .describe("Only objects carrying all of these labels."),
  })
  .describe("Which objects of this resource are synced back.");

export const PermissionClaim = GroupResourceVersion.extend({
  // No default for group: the API server drops an empty-string default from a structural schema.
  group: z
    .enum([""])
    .optional()
    .describe('API group: "" (core; the default). Secrets and ConfigMaps are supported.'),
  resource: z.enum(["secrets", "configmaps"]).describe("secrets or configmaps."),
  version: z.enum(["v1"]).default("v1").describe("v1."),
  selector: PermissionClaimSelector.default({ owner: "Claim" }),
}).describe("Extra objects synced from the control plane into the claim's namespace in the app cluster.");
export type PermissionClaim = z.infer<typeof PermissionClaim>;

export const APIServiceExportTemplateSpec = z.object({
  apis: z.array(ExportedAPI).min(1).describe("The claim kinds offered, by group, resource and version."),
  permissionClaims: z
    .array(PermissionClaim)
    .default([])
    .describe(
      "Objects synced back into the claim's app-cluster namespace, e.g. Secrets owned by the claim (its connection details).",
    ),
});

export const APIServiceExportTemplateStatus = z.object({
  conditions: z
    .array(Condition)
    .optional()
    .describe("Ready: the offered APIs are claim kinds driftless serves."),
  offered: z.array(z.string()).optional().describe("The offered claim kinds, `plural.group`."),
});

export const APIServiceExportTemplate: ResourceType & { apiVersion: string; description: string } = {
  group: EXPORT_GROUP,
  version: EXPORT_VERSION,
  kind: "APIServiceExportTemplate",
  plural: "apiserviceexporttemplates",
  namespaced: false,
  apiVersion: `${EXPORT_GROUP}/${EXPORT_VERSION}`,
  description:
    "Offers claim kinds of this control plane to app clusters (driftless bind): app-cluster claims are copied here, their status and the permission-claimed Secrets and ConfigMaps are copied back.",
};

/** A template as read from the API server. */
export interface ExportTemplate {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: {
    apis: ExportedAPI[];
    permissionClaims?: PermissionClaim[];
  };
  status?: z.infer<typeof APIServiceExportTemplateStatus>;
}

export function exportTemplateCrd() {
  return crd({
    type: APIServiceExportTemplate,
    description: APIServiceExportTemplate.description,
    spec: APIServiceExportTemplateSpec,
    specDescription: "What is offered to app clusters.",
    status: APIServiceExportTemplateStatus,
    statusDescription: "Whether the offered APIs are served, written by driftless bind.",
    categories: ["driftless"],
    shortNames: ["exporttemplate"],
    printerColumns: [
      conditionColumn("READY", "Ready"),
      { name: "APIS", type: "string", jsonPath: ".spec.apis[*].resource" },
      { name: "AGE", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ],
  });
}
