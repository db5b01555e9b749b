import { z } from "zod";
import { optionalString } from "./fields.ts";

/** Annotations with Crossplane's names, so users and tools that know Crossplane read them unchanged. */
export const Annotations = {
  externalName: "crossplane.io/external-name",
  createPending: "crossplane.io/external-create-pending",
  createSucceeded: "crossplane.io/external-create-succeeded",
  createFailed: "crossplane.io/external-create-failed",
  paused: "crossplane.io/paused",
  pollInterval: "crossplane.io/poll-interval",
  /** A request to reconcile now (any new value); echoed in status.lastHandledReconcileAt once handled. */
  reconcileRequestedAt: "crossplane.io/reconcile-requested-at",
  /** Where the external resource lives (api/external.ts Home, as JSON), recorded at create or import. */
  home: "driftless.dev/home",
} as const;

/** driftless's own name for the request before Crossplane v2.3 had one: still honoured, for one release. */
export const LEGACY_RECONCILE_REQUESTED_AT = "driftless.dev/reconcile-requested-at";

/** The reconcile request an object carries (the Crossplane annotation, else the legacy one), if any. */
export function reconcileRequestOf(annotations: Record<string, string> | undefined): string | undefined {
  return (
    annotations?.[Annotations.reconcileRequestedAt] ||
    annotations?.[LEGACY_RECONCILE_REQUESTED_AT] ||
    undefined
  );
}

/** The least poll interval `crossplane.io/poll-interval` may ask for (DRIFTLESS_MIN_POLL_INTERVAL). */
export const DEFAULT_MIN_POLL_INTERVAL_MS = 30_000;

export const MANAGED_FINALIZER = "finalizer.managedresource.driftless.dev";
export const PROVIDER_CONFIG_FINALIZER = "in-use.providerconfig.driftless.dev";
export const DEFAULT_PROVIDER_CONFIG = "default";
export const API_DOMAIN = "driftless.dev";

export const ConditionType = { Ready: "Ready", Synced: "Synced", UpToDate: "UpToDate" } as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType];

export const ConditionReason = {
  Available: "Available",
  Unavailable: "Unavailable",
  Creating: "Creating",
  Deleting: "Deleting",
  ReconcileSuccess: "ReconcileSuccess",
  ReconcileError: "ReconcileError",
  ReconcilePaused: "ReconcilePaused",
  // UpToDate's reasons, as crossplane-runtime names them (apis/common condition.go).
  ObserveMatched: "ObserveMatched",
  UpdateRequested: "UpdateRequested",
  UpdateRestricted: "UpdateRestricted",
  UpdateFailed: "UpdateFailed",
} as const;
export type ConditionReason = (typeof ConditionReason)[keyof typeof ConditionReason];

export const Condition = z.object({
  type: z.string().describe("Type of the condition: Ready, Synced or UpToDate."),
  status: z.enum(["True", "False", "Unknown"]).describe("Status of the condition: True, False or Unknown."),
  reason: z.string().describe("A machine-readable reason, e.g. Available, Creating, ReconcileError."),
  message: optionalString("A human-readable message explaining the condition."),
  lastTransitionTime: z.string().describe("When the condition last changed status or reason (RFC3339)."),
  observedGeneration: z
    .number()
    .int()
    .optional()
    .describe("The metadata.generation the condition was set for."),
});
export type Condition = z.infer<typeof Condition>;

export const SecretReference = z
  .object({
    name: z.string().min(1).max(253).describe("Name of the Secret."),
    namespace: z.string().min(1).max(63).describe("Namespace of the Secret."),
  })
  .describe("A reference to a Secret.");
export type SecretReference = z.infer<typeof SecretReference>;

export const SecretKeySelector = SecretReference.extend({
  key: z.string().min(1).max(253).describe("The key within the Secret."),
}).describe("A key in a Secret.");
export type SecretKeySelector = z.infer<typeof SecretKeySelector>;

export const ManagementAction = z.enum(["Observe", "Create", "Update", "Delete", "LateInitialize", "*"]);
export type ManagementAction = z.infer<typeof ManagementAction>;

export const DeletionPolicy = z.enum(["Delete", "Orphan"]);
export type DeletionPolicy = z.infer<typeof DeletionPolicy>;

/** Minimal object metadata: what the reconciler reads and writes. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: Array<{
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }>;
}

/** An object of one of driftless's own kinds as read from the API server: its spec S and status T. */
export interface KindObject<S, T> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: S;
  status?: T;
  [field: string]: unknown;
}

/** Identity of a Kubernetes resource type, enough to address it over the API. */
export interface ResourceType {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

export const apiVersionOf = (t: Pick<ResourceType, "group" | "version">) => `${t.group}/${t.version}`;

export const ResolvePolicy = z
  .object({
    resolve: z
      .enum(["IfNotPresent", "Always"])
      .optional()
      .describe(
        "IfNotPresent (default): resolve once, then keep the value. Always: resolve on every reconcile.",
      ),
    resolution: z
      .enum(["Required", "Optional"])
      .optional()
      .describe("Required (default): wait until the reference resolves. Optional: go on without it."),
  })
  .describe("How and when to resolve the reference.");

export const Reference = z
  .object({
    name: z.string().min(1).describe("Name of the referenced managed resource."),
    policy: ResolvePolicy.optional(),
  })
  .describe("A reference to another managed resource by name.");
export type Reference = z.infer<typeof Reference>;

export const Selector = z
  .object({
    matchLabels: z.record(z.string(), z.string()).optional().describe("Select a resource with these labels."),
    matchControllerRef: z
      .boolean()
      .optional()
      .describe("Select only a resource with the same controller (e.g. the same claim)."),
    policy: ResolvePolicy.optional(),
  })
  .describe("Selects a managed resource to reference by labels.");
export type Selector = z.infer<typeof Selector>;
