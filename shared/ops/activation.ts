// Activation: only the managed kinds a platform uses have CRDs in the API server (each CRD costs the API
// server memory; hundreds of them slow it down). Like Crossplane's ManagedResourceActivationPolicy, an
// activation list of globs over CRD names (`queues.sqs.aws.driftless.dev`, `*.aws.driftless.dev`,
// `*`) says which managed kinds are installed. ProviderConfigs, claims, classes and export templates are
// not managed kinds and are always installed. No list: every kind (what driftless always did).
//
// Deactivating (pruning) removes the CRD of a managed kind that is no longer activated — never while
// objects of it exist: deleting a CRD deletes its objects, finalizers or not, and their cloud resources
// would be left behind unmanaged. The check is a LIST just before the delete: an object created in
// between is not seen (run it when nobody creates objects of kinds being deactivated).
import { globMatcher } from "../api/glob.ts";
import type { ResourceType } from "../api/meta.ts";
import type { Kube } from "../kube/client.ts";

/** The generated CRD's parts activation reads. */
export interface CrdLike {
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    group: string;
    names: { kind: string; plural: string };
    scope: string;
    versions: Array<{ name: string; storage?: boolean }>;
  };
}

export interface ActivationPlan<C> {
  /** What to install: every non-managed CRD and the activated managed ones. */
  install: C[];
  /** Managed kinds' CRDs not activated. */
  inactive: C[];
  /** Patterns that matched no managed kind (a typo, most likely). */
  unmatched: string[];
}

/**
 * Splits generated CRDs by an activation list. `isManaged` tells managed kinds from the rest; an empty or
 * absent list activates every kind.
 */
export function planActivation<C extends CrdLike>(
  crds: readonly C[],
  patterns: readonly string[] | undefined,
  isManaged: (crd: C) => boolean,
): ActivationPlan<C> {
  if (!patterns || patterns.length === 0) return { install: [...crds], inactive: [], unmatched: [] };
  const matchers = patterns.map((p) => ({ p, match: globMatcher(p), used: false }));
  const install: C[] = [];
  const inactive: C[] = [];
  for (const crd of crds) {
    if (!isManaged(crd)) {
      install.push(crd);
      continue;
    }
    const hits = matchers.filter((m) => m.match(crd.metadata.name));
    for (const m of hits) m.used = true;
    (hits.length > 0 ? install : inactive).push(crd);
  }
  return { install, inactive, unmatched: matchers.filter((m) => !m.used).map((m) => m.p) };
}

/** The type of a CRD's objects, to count them. */
export function typeOfCrd(crd: CrdLike): ResourceType {
  const version = crd.spec.versions.find((v) => v.storage)?.name ?? crd.spec.versions[0]?.name ?? "v1";
  return {
    group: crd.spec.group,
    version,
    kind: crd.spec.names.kind,
    plural: crd.spec.names.plural,
    namespaced: crd.spec.scope === "Namespaced",
  };
}

export const CRD_TYPE: ResourceType = {
  group: "apiextensions.k8s.io",
  version: "v1",
  kind: "CustomResourceDefinition",
  plural: "customresourcedefinitions",
  namespaced: false,
};

export type PruneResult =
  | { name: string; result: "deleted" }
  | { name: string; result: "kept"; objects: number }
  | { name: string; result: "absent" };

/**
 * Deletes the CRDs of inactive managed kinds that have no objects; a CRD with objects is kept and
 * reported (deactivate it after its objects are gone). One LIST (limit 1) per installed inactive kind.
 */
export async function pruneInactive(kube: Kube, inactive: readonly CrdLike[]): Promise<PruneResult[]> {
  const out: PruneResult[] = [];
  for (const crd of inactive) {
    const name = crd.metadata.name;
    if (!(await kube.get(CRD_TYPE, name))) {
      out.push({ name, result: "absent" });
      continue;
    }
    const page = await kube.list(typeOfCrd(crd), { limit: 1 });
    if (page.items.length > 0) {
      out.push({ name, result: "kept", objects: page.items.length });
      continue;
    }
    await kube.delete(CRD_TYPE, name);
    out.push({ name, result: "deleted" });
  }
  return out;
}
