// Usages in Crossplane v2's shape (protection.crossplane.io/v1beta1, apis/protection/v1beta1 in
// crossplane/crossplane): a Usage (namespaced) or ClusterUsage says a resource (`of`) is in use — by another
// resource (`by`) or for a `reason` — and must not be deleted while it is. Same group, kinds and fields, so
// manifests written for Crossplane apply unchanged. The pure part lives here: which Usages name an object,
// and which of them still hold it. docs/concepts.md#usages says how driftless enforces them.
import { z } from "zod";
import { conditionColumn, crd } from "../crd.ts";
import { optionalString } from "../fields.ts";
import { Condition, type KindObject, type ObjectMeta, type ResourceType } from "../meta.ts";

export const PROTECTION_GROUP = "protection.crossplane.io";
export const PROTECTION_VERSION = "v1beta1";

/** The label the Usage reconciler puts on a used resource (Crossplane's webhook selects on it). */
export const IN_USE_LABEL = "crossplane.io/in-use";
/** A one-line summary of a Usage (its DETAILS printer column), as Crossplane writes it. */
export const USAGE_DETAILS_ANNOTATION = "crossplane.io/usage-details";
/** Recorded on a used resource whose deletion was refused: the propagation policy to replay it with. */
export const DELETION_ATTEMPT_ANNOTATION = "usage.crossplane.io/deletion-attempt-with-policy";
/** The Usage's own finalizer: it lets the used resource's in-use label go when the last Usage goes. */
export const USAGE_FINALIZER = "usage.protection.driftless.dev";

export const UsageType: ResourceType = {
  group: PROTECTION_GROUP,
  version: PROTECTION_VERSION,
  kind: "Usage",
  plural: "usages",
  namespaced: true,
};
export const ClusterUsageType: ResourceType = {
  group: PROTECTION_GROUP,
  version: PROTECTION_VERSION,
  kind: "ClusterUsage",
  plural: "clusterusages",
  namespaced: false,
};
export const usageTypes = (): ResourceType[] => [UsageType, ClusterUsageType];

const apiVersion = optionalString("API version of the referent, e.g. ec2.aws.driftless.dev/v1.");
const kind = optionalString("Kind of the referent, e.g. VPC.");
const matchLabels = z
  .record(z.string(), z.string())
  .optional()
  .describe("Select the resource with these labels.");
const matchControllerRef = z
  .boolean()
  .optional()
  .describe("Select only a resource with the same controller reference as the Usage.");

const ResourceRef = z.object({ name: z.string().describe("Name of the referent.") });
const Resource = z
  .object({
    apiVersion,
    kind,
    resourceRef: ResourceRef.optional().describe("Reference to the resource by name."),
    resourceSelector: z
      .object({ matchLabels, matchControllerRef })
      .optional()
      .describe(
        "Selector of the resource; ignored when resourceRef is set (the selected name is written there).",
      ),
  })
  .describe("A resource: cluster-scoped, or in the Usage's namespace.");

const NamespacedResource = z
  .object({
    apiVersion,
    kind,
    resourceRef: ResourceRef.extend({
      namespace: optionalString(
        "Namespace of the referent; default the Usage's (another only together with spec.by).",
      ),
    })
      .optional()
      .describe("Reference to the resource by name."),
    resourceSelector: z
      .object({
        matchLabels,
        matchControllerRef,
        namespace: optionalString("Namespace to select in; default the Usage's."),
      })
      .optional()
      .describe(
        "Selector of the resource; ignored when resourceRef is set (the selected name is written there).",
      ),
  })
  .describe("A resource: cluster-scoped, in the Usage's namespace, or (with spec.by) in another.");

const common = {
  by: Resource.optional().describe(
    "The resource using the other one: it must be gone before `of` may be deleted.",
  ),
  reason: optionalString("Why the resource must not be deleted (deletion protection without a `by`)."),
  replayDeletion: z
    .boolean()
    .optional()
    .describe(
      "When the Usage goes, delete the used resource again if a deletion of it was refused while the Usage held it.",
    ),
};

export const UsageSpec = z
  .object({ of: NamespacedResource.describe("The resource in use."), ...common })
  .describe("What is in use, by what or why.");
export const ClusterUsageSpec = z
  .object({ of: Resource.describe("The resource in use."), ...common })
  .describe("What is in use, by what or why.");
export type UsageSpec = z.infer<typeof UsageSpec>;

export const UsageStatus = z
  .object({ conditions: z.array(Condition).optional().describe("Ready: the used resource is protected.") })
  .describe("Whether the Usage is in force.");

export type UsageObject = KindObject<UsageSpec, { conditions?: Condition[] }>;

const COLUMNS = [
  { name: "DETAILS", type: "string", jsonPath: `.metadata.annotations.crossplane\\.io/usage-details` },
  conditionColumn("READY", "Ready"),
  { name: "AGE", type: "date", jsonPath: ".metadata.creationTimestamp" },
];

export function usageCrds() {
  const description = (scope: string) =>
    `A ${scope} Usage (Crossplane v2's shape): the resource in spec.of is not deleted while spec.by exists or the Usage does; driftless keeps the external resource until then and says so in its Ready condition.`;
  return [
    crd({
      type: UsageType,
      description: description("namespaced"),
      spec: UsageSpec,
      status: UsageStatus,
      categories: ["crossplane"],
      printerColumns: COLUMNS,
    }),
    crd({
      type: ClusterUsageType,
      description: description("cluster-scoped"),
      spec: ClusterUsageSpec,
      status: UsageStatus,
      categories: ["crossplane"],
      printerColumns: COLUMNS,
    }),
  ];
}

/** An object as Usages name it. */
export interface UsedObject {
  apiVersion: string;
  kind: string;
  metadata: Pick<ObjectMeta, "name" | "namespace" | "labels">;
}

/** Whether `usage` names `obj` in spec.of (by name, or — not yet resolved — by a selector its labels match). */
export function usageNames(usage: UsageObject, obj: UsedObject): boolean {
  const of = usage.spec?.of;
  if (!of || of.apiVersion !== obj.apiVersion || of.kind !== obj.kind) return false;
  const usageNs = usage.metadata.namespace;
  // A cluster-scoped object has no namespace: any Usage naming it counts, wherever the Usage lives.
  const nsMatches = (ns: string | undefined) =>
    !obj.metadata.namespace || (ns ?? usageNs) === obj.metadata.namespace;
  if (of.resourceRef) return of.resourceRef.name === obj.metadata.name && nsMatches(of.resourceRef.namespace);
  const sel = of.resourceSelector;
  if (!sel) return false;
  const labels = obj.metadata.labels ?? {};
  // An unresolved selector that could pick this object holds it: better wait than delete something in use.
  return (
    nsMatches((sel as { namespace?: string }).namespace) &&
    Object.entries(sel.matchLabels ?? {}).every(([k, v]) => labels[k] === v)
  );
}

/** `Kind/name` of a Usage's `by`, or undefined when it has none. */
export function usingText(usage: UsageObject): string | undefined {
  const by = usage.spec.by;
  if (!by) return undefined;
  return `${by.kind ?? "?"}/${by.resourceRef?.name ?? `(selector ${JSON.stringify(by.resourceSelector?.matchLabels ?? {})})`}`;
}

/** What a Usage holds an object for, in a status message's words: `Subnet/a (Usage ns/u)` or its reason. */
export function usageText(usage: UsageObject): string {
  const id = `${usage.kind} ${usage.metadata.namespace ? `${usage.metadata.namespace}/` : ""}${usage.metadata.name}`;
  const by = usingText(usage);
  if (by) return `${by} (${id})`;
  return usage.spec.reason ? `${id}: "${usage.spec.reason}"` : id;
}
