// The Provider object: one per cloud a driftless deployment serves, cluster-scoped, the way Crossplane's
// Providers show a provider package — INSTALLED, HEALTHY, the running version, revisions — except that
// nothing runs in the cluster: the functions record their version when they start, and the drift sweep
// records health from what it already reads (docs/operations.md, "Providers").
//
// The group is not Crossplane's pkg.crossplane.io, so both can be installed side by side.
import { z } from "zod";
import { type CrdInput, conditionColumn, crd } from "../crd.ts";
import { optionalString } from "../fields.ts";
import { API_DOMAIN, Condition, type KindObject, type ResourceType } from "../meta.ts";

export const PKG_GROUP = `pkg.${API_DOMAIN}`;
export const PKG_VERSION = "v1alpha1";

export const Provider: ResourceType & { apiVersion: string; description: string } = {
  group: PKG_GROUP,
  version: PKG_VERSION,
  kind: "Provider",
  plural: "providers",
  namespaced: false,
  apiVersion: `${PKG_GROUP}/${PKG_VERSION}`,
  description:
    "A driftless deployment serving one cloud: the function version it runs (with a short revision history), the kinds it has activated, and its health as the drift sweep last saw it. Written by driftless; there is nothing to install.",
};

/** Short name and category, for clusters where Crossplane's `providers.pkg.crossplane.io` also exists. */
export const PROVIDER_SHORT_NAME = "dlprovider";

/** Revisions kept in status.revisions unless spec.revisionHistoryLimit says otherwise. */
export const DEFAULT_REVISION_HISTORY_LIMIT = 5;

export const ProviderConditionType = {
  /** The deployment's current revision is recorded and at least one of its kinds has a CRD. */
  Installed: "Installed",
  /** The last health check found no refused credentials, dead letters or total reconcile failure. */
  Healthy: "Healthy",
} as const;

export const ProviderReason = {
  ActiveRevision: "ActiveRevision",
  NoActiveKinds: "NoActiveKinds",
  AwaitingRevision: "AwaitingRevision",
  HealthyDeployment: "HealthyDeployment",
  AwaitingHealthCheck: "AwaitingHealthCheck",
  SweepFailed: "SweepFailed",
  ProviderConfigRefused: "ProviderConfigRefused",
  DeadLetters: "DeadLetters",
  NoSuccessfulReconcile: "NoSuccessfulReconcile",
} as const;
export type ProviderReason = (typeof ProviderReason)[keyof typeof ProviderReason];

export const ProviderSpec = z
  .object({
    cloud: z.enum(["aws", "gcp", "azure"]).describe("The cloud this deployment's kinds belong to."),
    labelSelector: optionalString(
      "The label selector of a sharded deployment (DRIFTLESS_LABEL_SELECTOR): it serves only the objects matching it.",
    ),
    revisionHistoryLimit: z
      .number()
      .int()
      .min(1)
      .max(50)
      .optional()
      .describe(`Revisions kept in status.revisions (default ${DEFAULT_REVISION_HISTORY_LIMIT}).`),
  })
  .describe("Which deployment this is. Written once by driftless when it first starts.");
export type ProviderSpec = z.infer<typeof ProviderSpec>;

export const ProviderRevision = z
  .object({
    revision: z.number().int().min(1).describe("The revision number, counted up from 1."),
    version: z.string().describe("The driftless version the functions run, e.g. 0.1.0."),
    identifier: z
      .string()
      .describe(
        "What runs it: aws-lambda <function>:<version>, gcp-functions <service>/<revision>, or driftless-run.",
      ),
    activatedAt: z.string().describe("When a function of this revision first started (RFC3339)."),
  })
  .describe("A deployed function version.");
export type ProviderRevision = z.infer<typeof ProviderRevision>;

export const ProviderStatus = z
  .object({
    conditions: z
      .array(Condition)
      .optional()
      .describe(
        "Installed: the current revision and its activated kinds. Healthy: the last health check (drift sweep) of its resources, ProviderConfigs and dead letters.",
      ),
    currentRevision: z.number().int().optional().describe("The revision the functions run now."),
    currentVersion: optionalString("The driftless version of the current revision."),
    currentIdentifier: optionalString("The function version of the current revision."),
    revisions: z
      .array(ProviderRevision)
      .optional()
      .describe("The latest revisions, newest first (at most spec.revisionHistoryLimit)."),
    activatedKinds: z
      .array(z.string())
      .optional()
      .describe("The CRDs of the kinds this deployment serves that are installed (activated), by name."),
    resources: z
      .object({
        total: z.number().int().describe("Managed resources seen, paused ones not counted."),
        synced: z.number().int().describe("Of these, Synced=True."),
        failing: z.number().int().describe("Of these, Synced=False with ReconcileError."),
        paused: z.number().int().describe("Paused managed resources (not counted in total)."),
        lastSyncedTime: optionalString(
          "The latest successful reconcile the conditions show: the newest Synced=True transition (an in-sync reconcile writes nothing).",
        ),
      })
      .optional()
      .describe("The managed resources the last health check saw."),
    providerConfigs: z
      .object({
        total: z.number().int().describe("ProviderConfigs seen."),
        ready: z.number().int().describe("Of these, Ready=True (credentials accepted)."),
        refused: z
          .array(z.string())
          .optional()
          .describe("ProviderConfigs whose credential check failed (Ready=False)."),
      })
      .optional()
      .describe("The ProviderConfigs' credential checks, as their Ready conditions show them."),
    deadLetters: z
      .number()
      .int()
      .optional()
      .describe(
        "Messages in the dead-letter queue (SQS), or dead-lettered since the last check (driftless run); absent when the queue cannot tell cheaply (Pub/Sub).",
      ),
    lastHealthCheckTime: optionalString(
      "When a health check last wrote this status; refreshed at least every 30 minutes while the sweep runs.",
    ),
  })
  .describe("What driftless observed: revisions, activated kinds, health.");
export type ProviderStatus = z.infer<typeof ProviderStatus>;

/** A Provider as read from the API server. */
export type ProviderObject = KindObject<ProviderSpec, ProviderStatus>;

/** The CRD of a pkg kind (Provider, ActivationPolicy): its type's own description, in the pkg category. */
export const pkgCrd = (
  type: ResourceType & { description: string },
  o: Pick<CrdInput, "spec" | "status" | "shortNames" | "printerColumns">,
) => crd({ type, description: type.description, categories: ["driftless", "pkg"], ...o });

export function providerCrd() {
  return pkgCrd(Provider, {
    spec: ProviderSpec,
    status: ProviderStatus,
    // `kubectl get providers` may mean Crossplane's: `kubectl get dlprovider` never does.
    shortNames: [PROVIDER_SHORT_NAME],
    printerColumns: [
      conditionColumn("INSTALLED", ProviderConditionType.Installed),
      conditionColumn("HEALTHY", ProviderConditionType.Healthy),
      { name: "VERSION", type: "string", jsonPath: ".status.currentVersion" },
      { name: "REVISION", type: "integer", jsonPath: ".status.currentRevision" },
      { name: "AGE", type: "date", jsonPath: ".metadata.creationTimestamp" },
      { name: "DEPLOYMENT", type: "string", jsonPath: ".status.currentIdentifier", priority: 1 },
      { name: "RESOURCES", type: "integer", jsonPath: ".status.resources.total", priority: 1 },
      { name: "SYNCED", type: "integer", jsonPath: ".status.resources.synced", priority: 1 },
    ],
  });
}
