// The activation policies in the cluster (shared/api/pkg/activation-policy.ts): read by `driftless run` (each
// sweep), `driftless crds apply`, the drift sweep and the functions (at cold start). They add generated kinds
// to what DRIFTLESS_ACTIVATE activates; the hand-written kinds keep DRIFTLESS_ACTIVATE's rule (default all).
import { awsccPatternSelects } from "../api/awscc/catalog.ts";
import type { AwsccCatalog } from "../api/awscc/spec.ts";
import { azureGenPatternSelects } from "../api/azure-gen/catalog.ts";
import type { AzureCatalog } from "../api/azure-gen/spec.ts";
import { generatedCloudOf, generatedCrdNames, isGeneratedGroup } from "../api/generated-catalog.ts";
import { googlePatternSelects } from "../api/googleapis/catalog.ts";
import type { GoogleCatalog } from "../api/googleapis/spec.ts";
import type { ManagedResource } from "../api/managed.ts";
import type { ResourceType } from "../api/meta.ts";
import { API_DOMAIN } from "../api/meta.ts";
import {
  ActivationPolicy,
  type ActivationPolicyObject,
  CrossplaneActivationPolicy,
  CrossplaneManagedResourceDefinition,
  type ManagedResourceDefinitionObject,
} from "../api/pkg/activation-policy.ts";
import { type Kube, type KubeObject, statusOf } from "../kube/client.ts";
import { CRD_TYPE, type CrdLike, typeOfCrd } from "./activation.ts";

export interface ActivationPolicies {
  /** Every policy's patterns, driftless's and Crossplane's, deduplicated. */
  patterns: string[];
  /** driftless's own policies (their status is ours to write). */
  own: ActivationPolicyObject[];
  /** Crossplane's policies, when its CRD is installed. */
  crossplane: ActivationPolicyObject[];
  /** The driftless CRDs Crossplane's ManagedResourceDefinitions say are Active (their names are patterns too). */
  definitions: string[];
}

/** Every object of a cluster-scoped type, page by page; none when its CRD is not installed. */
async function listAll<T extends KubeObject>(kube: Kube, t: ResourceType): Promise<T[]> {
  const out: T[] = [];
  let cont: string | undefined;
  do {
    try {
      const page = await kube.list<T>(t, {
        limit: 500,
        ...(cont ? { continue: cont } : {}),
      });
      out.push(...page.items);
      cont = page.continue;
    } catch (err) {
      // No CRD (Crossplane absent, or driftless's CRDs not applied yet): no policy of that group.
      if (statusOf(err) === 404) return out;
      throw new Error(`cannot list ${t.plural}.${t.group}: ${(err as Error).message}`, { cause: err });
    }
  } while (cont);
  return out;
}

export async function readActivationPolicies(kube: Kube): Promise<ActivationPolicies> {
  const [own, crossplane, mrds] = await Promise.all([
    listAll<ActivationPolicyObject & KubeObject>(kube, ActivationPolicy),
    listAll<ActivationPolicyObject & KubeObject>(kube, CrossplaneActivationPolicy),
    listAll<ManagedResourceDefinitionObject & KubeObject>(kube, CrossplaneManagedResourceDefinition),
  ]);
  const definitions = activeDefinitions(mrds);
  const patterns = [...own, ...crossplane].flatMap((p) => p.spec?.activate ?? []).map((p) => p.trim());
  return {
    patterns: [...new Set([...patterns.filter(Boolean), ...definitions])].sort(),
    own,
    crossplane,
    definitions,
  };
}

/** The generated kinds' catalogs a policy may name: AWS (Cloud Control), Azure (ARM), Google (the protos). */
export interface GeneratedCatalogs {
  awscc?: AwsccCatalog;
  azure?: AzureCatalog;
  google?: GoogleCatalog;
}

/** Every generated CRD name of these catalogs, each with the rule of which patterns select it. */
function generatedCrds(c: GeneratedCatalogs): Array<{ name: string; selectedBy: (p: string) => boolean }> {
  return [
    ...(c.awscc?.kinds ?? []).flatMap((e) =>
      generatedCrdNames(e).map((name) => ({
        name,
        selectedBy: (p: string) => awsccPatternSelects(p, name, e),
      })),
    ),
    ...(c.azure?.kinds ?? []).flatMap((e) =>
      generatedCrdNames(e).map((name) => ({
        name,
        selectedBy: (p: string) => azureGenPatternSelects(p, name, e),
      })),
    ),
    ...(c.google?.kinds ?? []).flatMap((e) =>
      generatedCrdNames(e).map((name) => ({
        name,
        selectedBy: (p: string) => googlePatternSelects(p, name, e),
      })),
    ),
  ];
}

/** The names of the Active MRDs that name a driftless kind's CRD (Crossplane's own kinds are Crossplane's). */
export const activeDefinitions = (mrds: readonly ManagedResourceDefinitionObject[]): string[] =>
  mrds
    .filter((d) => d.spec?.state === "Active" && d.metadata.name?.endsWith(`.${API_DOMAIN}`))
    .map((d) => d.metadata.name as string)
    .sort();

/** The CRD names a policy's patterns activate among the generated kinds, and the patterns that select none. */
export function policyActivates(
  policy: ActivationPolicyObject,
  catalogs: GeneratedCatalogs,
): { activated: string[]; unmatched: string[] } {
  const patterns = policy.spec?.activate ?? [];
  const activated = new Set<string>();
  const used = new Set<string>();
  for (const crd of generatedCrds(catalogs))
    for (const p of patterns)
      if (crd.selectedBy(p)) {
        activated.add(crd.name);
        used.add(p);
      }
  return { activated: [...activated].sort(), unmatched: patterns.filter((p) => !used.has(p)) };
}

/**
 * Writes what each of driftless's own policies activates to its status (`kubectl get dlmrap` shows it);
 * only when it changed. Crossplane's policies are Crossplane's to write.
 */
export async function recordActivated(
  kube: Kube,
  own: readonly ActivationPolicyObject[],
  catalogs: GeneratedCatalogs,
) {
  for (const p of own) {
    const { activated, unmatched } = policyActivates(p, catalogs);
    const same = (a: readonly string[] | undefined, b: readonly string[]) =>
      JSON.stringify(a ?? []) === JSON.stringify(b);
    if (same(p.status?.activated, activated) && same(p.status?.unmatched, unmatched)) continue;
    await kube.patchStatus(ActivationPolicy, p.metadata.name, { activated, unmatched });
  }
}

const PART_OF_DRIFTLESS = "app.kubernetes.io/part-of=driftless";

/**
 * A Warning event on every object of a generated kind whose CRD is installed but that this process does
 * not serve (not activated): such an object would otherwise sit with no status at all. Only the objects
 * the run watches (its label selector, when it shards): another shard's objects are that run's to tell.
 * Returns how many objects were told. Events are deduplicated by the recorder (one per object per ten
 * minutes, counted).
 */
export async function warnUnserved(
  kube: Kube,
  served: ReadonlySet<string>,
  events: { record(mr: ManagedResource, type: "Warning", reason: string, message: string): Promise<void> },
  o: { labelSelector?: string; perKind?: number } = {},
): Promise<number> {
  const perKind = o.perKind ?? 100;
  const crds = await kube.list<CrdObject>(CRD_TYPE, { labelSelector: PART_OF_DRIFTLESS });
  let told = 0;
  for (const crd of crds.items) {
    if (!isGeneratedGroup(crd.spec.group) || served.has(crd.metadata.name)) continue;
    const t = typeOfCrd(crd);
    const objects = await kube
      .list<KubeObject>(t, { limit: perKind, ...(o.labelSelector ? { labelSelector: o.labelSelector } : {}) })
      .catch(() => ({ items: [] }));
    const message = notActivatedMessage(crd.spec.names.kind, crd.spec.group, crd.metadata.name);
    for (const o of objects.items) {
      await events.record(o as unknown as ManagedResource, "Warning", NOT_ACTIVATED, message);
      told++;
    }
  }
  return told;
}

/** The reason of the Warning event on an object whose kind is not activated. */
export const NOT_ACTIVATED = "KindNotActivated";

/** What the Warning event says: the kind is not served, and the policy line that activates it. */
export function notActivatedMessage(kind: string, group: string, crdName: string): string {
  // The alias that activates it: `dynamodb.table`, `azure:storage.storageaccount` for a generated Azure
  // kind, `run.googleapis.service` for a generated Google one.
  const [service] = group.split(".");
  const cloud = generatedCloudOf(group);
  const alias =
    cloud === "gcp"
      ? `${service}.googleapis.${kind.toLowerCase()}`
      : `${cloud === "azure" ? "azure:" : ""}${service}.${kind.toLowerCase()}`;
  return `${kind} (${crdName}) is not activated: driftless does not reconcile it. Activate it with a ManagedResourceActivationPolicy (pkg.driftless.dev/v1alpha1, spec.activate: ["${alias}"]), or DRIFTLESS_ACTIVATE=${alias}; it is served within one sweep`;
}

type CrdObject = CrdLike & KubeObject;
