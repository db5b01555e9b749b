import { z } from "zod";
import { ProviderConfigReference } from "../managed.ts";
import { API_DOMAIN, Condition, DEFAULT_PROVIDER_CONFIG } from "../meta.ts";

/** Namespaced, portable claims that app teams write. */
export const CLAIMS_GROUP = `claims.${API_DOMAIN}`;
/** Cluster-scoped classes that platform teams write: one kind per cloud service. */
export const CLASSES_GROUP = `classes.${API_DOMAIN}`;
export const CLAIMS_VERSION = "v1alpha1";

/** Where bound managed resources publish their connection Secrets before they are copied to the claim. */
export const SYSTEM_NAMESPACE = "driftless-system";

export const CLAIM_FINALIZER = `finalizer.${CLAIMS_GROUP}`;

/** Crossplane's annotation for default classes, so manifests written for Crossplane keep their meaning. */
export const DEFAULT_CLASS_ANNOTATION = "resourceclass.crossplane.io/is-default-class";

/** Labels on a bound managed resource: the link back to its claim (a namespaced owner cannot own it). */
export const ClaimLabels = {
  namespace: `${CLAIMS_GROUP}/claim-namespace`,
  name: `${CLAIMS_GROUP}/claim-name`,
  uid: `${CLAIMS_GROUP}/claim-uid`,
  /** On the propagated Secret in the claim's namespace. */
  secretOf: `${CLAIMS_GROUP}/secret-of`,
} as const;

export const ClaimAnnotations = {
  /** The class the resource was made from, `Kind/name`. */
  class: `${CLAIMS_GROUP}/class`,
  /** The class's reclaimPolicy, copied at binding: what deleting the claim does to this resource. */
  reclaimPolicy: `${CLAIMS_GROUP}/reclaim-policy`,
  /** The claim's full name (a label value is limited to 63 characters). */
  claimName: `${CLAIMS_GROUP}/claim-name`,
  /** Keys of map fields (tags, labels) that came from the claim's labels, so removing one removes it. */
  claimLabelKeys: `${CLAIMS_GROUP}/claim-label-keys`,
  /** Set on a retained resource when its claim was deleted: `namespace/name (uid)`. */
  releasedFrom: `${CLAIMS_GROUP}/released-from`,
} as const;

export const ClaimConditionType = {
  Ready: "Ready",
  Synced: "Synced",
  Bound: "Bound",
  /** A warning: several classes qualified and the first in sorted order was chosen. */
  ClassAmbiguous: "ClassAmbiguous",
} as const;

export const ClaimReason = {
  Bound: "Bound",
  Unbound: "Unbound",
  Releasing: "Releasing",
  ClassNotFound: "ClassNotFound",
  ClassNotAllowed: "ClassNotAllowed",
  ResourceConflict: "ResourceConflict",
  SecretConflict: "SecretConflict",
  InvalidSpec: "InvalidSpec",
  /** The claim asks for more than its class's limits allow. */
  LimitExceeded: "LimitExceeded",
  SeveralDefaultClasses: "SeveralDefaultClasses",
  SeveralClassesMatched: "SeveralClassesMatched",
  ReconcileSuccess: "ReconcileSuccess",
  ReconcileError: "ReconcileError",
  Available: "Available",
  Creating: "Creating",
  Deleting: "Deleting",
  Unavailable: "Unavailable",
} as const;

export const ReclaimPolicy = z
  .enum(["Delete", "Retain"])
  .describe(
    "What deleting a claim does to the resource bound to it. Delete: the managed resource and its cloud resource are deleted. Retain: both are kept, released from the claim.",
  );
export type ReclaimPolicy = z.infer<typeof ReclaimPolicy>;

export const ClassReference = z
  .object({
    kind: z.string().min(1).describe("Kind of the class, e.g. SQSQueueClass or PubSubQueueClass."),
    name: z.string().min(1).describe("Name of the class."),
  })
  .describe("A class by kind and name.");
export type ClassReference = z.infer<typeof ClassReference>;

export const ClassSelector = z
  .object({
    matchLabels: z
      .record(z.string(), z.string())
      .optional()
      .describe("Choose a class carrying all of these labels, of any class kind that serves this claim."),
  })
  .describe("Chooses a class by labels when classRef is not set.");
export type ClassSelector = z.infer<typeof ClassSelector>;

export const LocalSecretReference = z
  .object({
    name: z
      .string()
      .min(1)
      .max(253)
      .describe("Name of the Secret, in the claim's own namespace (a claim cannot name another namespace)."),
  })
  .describe("A Secret in the claim's namespace.");

export const ResourceReference = z.object({
  apiVersion: z.string().describe("API version of the managed resource."),
  kind: z.string().describe("Kind of the managed resource."),
  name: z.string().describe("Name of the managed resource (cluster-scoped)."),
});
export type ResourceReference = z.infer<typeof ResourceReference>;

/** Spec fields every claim has, besides its portable fields. */
export const claimSpecFields = {
  classRef: ClassReference.optional().describe(
    "The class to bind to. Unset: chosen by classSelector, else the default class; the choice is then recorded here.",
  ),
  classSelector: ClassSelector.optional(),
  writeConnectionSecretToRef: LocalSecretReference.optional().describe(
    "Where to write the connection details (addresses, credentials), in the claim's namespace.",
  ),
};

export const ClaimStatus = z.object({
  conditions: z.array(Condition).optional().describe("Ready, Synced and Bound conditions."),
  resourceRef: ResourceReference.optional().describe(
    "The managed resource bound to this claim (the one whose connection details it gets).",
  ),
  resourceRefs: z
    .array(ResourceReference)
    .optional()
    .describe("Every managed resource bound to this claim (a Pub/Sub queue is a Topic and a Subscription)."),
});

/** Spec fields every class has, besides its provider template. */
export const classSpecFields = {
  reclaimPolicy: ReclaimPolicy.default("Delete"),
  allowedNamespaces: z
    .array(z.string().min(1))
    .default(["*"])
    .describe(
      'Namespaces whose claims may bind to this class: names, "prefix-*" patterns, or "*" for all. A claim in any other namespace cannot use it.',
    ),
  providerConfigRef: ProviderConfigReference.default({ name: DEFAULT_PROVIDER_CONFIG }),
};
