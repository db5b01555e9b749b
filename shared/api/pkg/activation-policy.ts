// Activation as objects in the cluster: a ManagedResourceActivationPolicy in Crossplane v2's shape
// (`spec.activate`: patterns of kinds, `status.activated`: what they activate). driftless reads its own
// (pkg.driftless.dev) and, where Crossplane is installed, Crossplane's (apiextensions.crossplane.io), and
// serves the generated kinds either names — docs/adr/0010-activation-policies.md says why both.
import { z } from "zod";
import { Condition, type KindObject, type ObjectMeta, type ResourceType } from "../meta.ts";
import { PKG_GROUP, PKG_VERSION, pkgCrd } from "./provider.ts";

const MRAP = { kind: "ManagedResourceActivationPolicy", plural: "managedresourceactivationpolicies" };

export const ActivationPolicy: ResourceType & { apiVersion: string; description: string } = {
  group: PKG_GROUP,
  version: PKG_VERSION,
  ...MRAP,
  namespaced: false,
  apiVersion: `${PKG_GROUP}/${PKG_VERSION}`,
  description:
    "Which generated managed kinds driftless serves (Crossplane v2's ManagedResourceActivationPolicy shape). `driftless run`, `driftless crds apply`, the drift sweep and the functions read every policy; a kind one of them activates is served within one sweep, without a rebuild or restart.",
};

/** Crossplane v2's own policy: honoured when its CRD is installed (read only, never written). */
export const CrossplaneActivationPolicy: ResourceType = {
  group: "apiextensions.crossplane.io",
  version: "v1alpha1",
  ...MRAP,
  namespaced: false,
};

/**
 * Crossplane v2's per-kind ManagedResourceDefinition (named like the kind's CRD, `spec.state` Active or
 * Inactive; Crossplane activates an MRD and never deactivates it): one whose state is Active and whose name is
 * a driftless CRD activates that kind, as a policy naming it would. Read only, never written.
 */
export const CrossplaneManagedResourceDefinition: ResourceType = {
  group: "apiextensions.crossplane.io",
  version: "v1alpha1",
  kind: "ManagedResourceDefinition",
  plural: "managedresourcedefinitions",
  namespaced: false,
};

/** An MRD as driftless reads it: its name (a CRD name) and its state. */
export interface ManagedResourceDefinitionObject {
  metadata: ObjectMeta;
  spec?: { state?: "Active" | "Inactive" | string };
  [field: string]: unknown;
}

/** Short name, for clusters where Crossplane's `managedresourceactivationpolicies` also exists. */
export const ACTIVATION_POLICY_SHORT_NAME = "dlmrap";

export const ActivationPolicySpec = z
  .object({
    activate: z
      .array(z.string())
      .describe(
        "Patterns of the kinds to activate: generated AWS kinds by `<service>.<kind>` (`dynamodb.table`, `dynamodb.*`) or a CRD-name glob naming `awscc` (`tables.dynamodb.awscc.driftless.dev`).",
      ),
  })
  .describe("What to activate.");
export type ActivationPolicySpec = z.infer<typeof ActivationPolicySpec>;

export const ActivationPolicyStatus = z
  .object({
    conditions: z.array(Condition).optional().describe("Healthy: every pattern activates a kind."),
    activated: z
      .array(z.string())
      .optional()
      .describe("The CRDs this policy activates, by name, as driftless last served them."),
    unmatched: z.array(z.string()).optional().describe("Patterns that select no kind (a typo, most likely)."),
  })
  .describe("What driftless made of the policy.");
export type ActivationPolicyStatus = z.infer<typeof ActivationPolicyStatus>;

export type ActivationPolicyObject = KindObject<ActivationPolicySpec, ActivationPolicyStatus>;

export function activationPolicyCrd() {
  return pkgCrd(ActivationPolicy, {
    spec: ActivationPolicySpec,
    status: ActivationPolicyStatus,
    shortNames: [ACTIVATION_POLICY_SHORT_NAME],
    printerColumns: [
      { name: "ACTIVATE", type: "string", jsonPath: ".spec.activate" },
      { name: "ACTIVATED", type: "string", jsonPath: ".status.activated" },
      { name: "AGE", type: "date", jsonPath: ".metadata.creationTimestamp" },
      { name: "UNMATCHED", type: "string", jsonPath: ".status.unmatched", priority: 1 },
    ],
  });
}
