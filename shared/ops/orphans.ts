// `driftless orphans`: the leak finder. The cloud's tag search (providers/<cloud>/tagged.ts) names what
// carries Crossplane's default tags for one ProviderConfig (`crossplane-providerconfig`) or driftless's
// ownership tag; a resource whose managed resource — the kind and name (and namespace) its tags name, or
// the uid its ownership tag names — no longer exists in the cluster is an orphan. Reads only: it never
// deletes, it prints how to adopt one. Tags of kinds driftless does not serve (Crossplane's own providers)
// are not judged: their managed resources are not driftless's to read.

import type { ManagedKindProvider } from "../api/external.ts";
import { DefaultTagKey, inFormat, OWNERSHIP_TAG } from "../api/external-tags.ts";
import { type ManagedKindDef, type ManagedResource, namespacedVariantOf } from "../api/managed.ts";
import { providerConfigs } from "../api/provider-config.ts";
import type { TaggedResource, TagSearch } from "../api/tagged.ts";
import { isNotFound, type Kube } from "../kube/client.ts";
import { type ConnectorOptions, ProviderConnector } from "../reconciler/connect.ts";
import { UsageError } from "./errors.ts";
import { kindAlias, listManaged } from "./import.ts";

export type Cloud = keyof typeof providerConfigs;

export interface OrphanOptions extends ConnectorOptions {
  /** The cluster-scoped ProviderConfig whose account, subscription or project is searched. */
  providerConfig: string;
  /** Which cloud's ProviderConfig, when the name exists for more than one. */
  cloud?: Cloud | undefined;
  /** AWS: the region to search (default the ProviderConfig's). */
  region?: string | undefined;
}

export interface Orphan {
  /** The cloud's id: ARN, ARM resource id, Cloud Asset name. */
  id: string;
  type: string;
  location?: string;
  /** The managed resource its tags name, `Kind/name` or `Kind namespace/name`. */
  managedResource: string;
  /** Why it is an orphan, in one line. */
  reason: string;
  /** How to adopt it: the command that writes Observe-only managed resources of its kind. */
  adopt: string;
  tags: Record<string, string>;
}

export interface OrphanReport {
  cloud: Cloud;
  providerConfig: string;
  /** Resources the search returned. */
  searched: number;
  /** Tagged for a kind driftless does not serve: not judged. */
  foreign: number;
  orphans: Orphan[];
}

/** The ProviderConfig's cloud: the one (or the `--cloud`) where a cluster-scoped ProviderConfig of that name exists. */
export async function cloudOf(kube: Kube, name: string, cloud?: Cloud): Promise<Cloud> {
  const clouds = cloud ? [cloud] : (Object.keys(providerConfigs) as Cloud[]);
  const found: Cloud[] = [];
  for (const c of clouds) {
    try {
      if (await kube.get(providerConfigs[c].type, name)) found.push(c);
    } catch (err) {
      if (!isNotFound(err)) throw err; // that cloud's CRD is not installed
    }
  }
  const [only, second] = found;
  if (!only)
    throw new UsageError(
      `ProviderConfig "${name}" not found${cloud ? ` in ${providerConfigs[cloud].type.group}` : ""}`,
    );
  if (second)
    throw new UsageError(`ProviderConfig "${name}" exists for ${found.join(" and ")}: choose with --cloud`);
  return only;
}

/** Searches the cloud the ProviderConfig reaches and returns what no managed resource owns any more. */
export async function findOrphans(
  kube: Kube,
  providers: readonly ManagedKindProvider[],
  searches: Partial<Record<Cloud, TagSearch>>,
  opts: OrphanOptions,
): Promise<OrphanReport> {
  const cloud = await cloudOf(kube, opts.providerConfig, opts.cloud);
  const search = searches[cloud];
  if (!search) throw new UsageError(`driftless orphans cannot search ${cloud} yet`);
  const defs = providers.map((p) => p.definition).filter((d) => d.cloud === cloud && d.scope === "Cluster");
  const first = providers.find((p) => p.definition.cloud === cloud && p.definition.scope === "Cluster");
  if (!first) throw new UsageError(`no ${cloud} kind is served`);
  const probe = {
    apiVersion: first.definition.apiVersion,
    kind: first.definition.kind,
    metadata: { name: "driftless-orphans" },
    spec: { forProvider: {}, providerConfigRef: { name: opts.providerConfig } },
  } as unknown as ManagedResource;
  // Google label values are lower-cased and cut: the filter value is the ProviderConfig name as labelled.
  const pcValue = cloud === "gcp" ? labelValue(opts.providerConfig) : opts.providerConfig;
  const found = await new ProviderConnector(kube, opts).session(first.definition, probe, (ctx) =>
    search(ctx, [{ key: DefaultTagKey.providerConfig, value: pcValue }, { key: OWNERSHIP_TAG }], {
      region: opts.region,
    }),
  );
  return {
    cloud,
    providerConfig: opts.providerConfig,
    searched: found.length,
    ...(await judge(kube, defs, found, opts.providerConfig, pcValue)),
  };
}

const labelValue = (v: string) => inFormat({ field: "labels", format: "labels" }, { v }).v ?? v;

/** Each kind (both shapes) under the value its `crossplane-kind` tag has in this cloud's tag format. */
function kindsByTag(defs: readonly ManagedKindDef[]): Map<string, ManagedKindDef> {
  const out = new Map<string, ManagedKindDef>();
  for (const d of defs) {
    for (const shape of [d, namespacedVariantOf(d)]) {
      const value = `${shape.kind}.${shape.group}`.toLowerCase();
      out.set(shape.tagging ? (inFormat(shape.tagging, { value }).value ?? value) : value, shape);
    }
  }
  return out;
}

async function judge(
  kube: Kube,
  defs: readonly ManagedKindDef[],
  found: readonly TaggedResource[],
  providerConfig: string,
  pcValue: string,
): Promise<{ foreign: number; orphans: Orphan[] }> {
  const byTag = kindsByTag(defs);
  const listed = new Map<ManagedKindDef, ManagedResource[]>();
  const objectsOf = async (d: ManagedKindDef) => {
    let items = listed.get(d);
    if (!items) {
      items = await listManaged(kube, d);
      listed.set(d, items);
    }
    return items;
  };
  const fmt = (d: ManagedKindDef, v: string) => (d.tagging ? (inFormat(d.tagging, { v }).v ?? v) : v);
  let foreign = 0;
  const orphans: Orphan[] = [];
  for (const r of found) {
    // Another ProviderConfig's (found by the ownership tag, which is account-wide): judged under that one.
    const pcTag = r.tags[DefaultTagKey.providerConfig];
    if (pcTag !== undefined && pcTag !== pcValue) continue;
    const kindTag = r.tags[DefaultTagKey.kind];
    const uid = r.tags[OWNERSHIP_TAG];
    const def = kindTag ? byTag.get(kindTag) : undefined;
    if (kindTag && !def) {
      foreign++;
      continue;
    }
    const name = r.tags[DefaultTagKey.name];
    const ns = r.tags[DefaultTagKey.namespace];
    let owner: string;
    let reason: string;
    if (def && name !== undefined) {
      const items = await objectsOf(def);
      const exists = items.some(
        (mr) =>
          fmt(def, mr.metadata.name) === name &&
          (def.scope !== "Namespaced" || fmt(def, mr.metadata.namespace ?? "") === (ns ?? "")),
      );
      if (exists) continue;
      owner = `${def.kind} ${ns ? `${ns}/` : ""}${name}`;
      reason = `no ${def.kind} "${name}"${ns ? ` in namespace "${ns}"` : ""} exists (apiVersion ${def.apiVersion})`;
    } else if (uid) {
      // Only the ownership tag (default tags off): any kind of this cloud that tags so may hold the uid.
      const holders = defs.filter((d) => d.ownershipLookup);
      let exists = false;
      for (const d of holders) {
        for (const shape of [d, namespacedVariantOf(d)])
          if ((await objectsOf(shape)).some((mr) => mr.metadata.uid === uid)) exists = true;
      }
      if (exists) continue;
      owner = `uid ${uid}`;
      reason = `no managed resource with uid ${uid} exists`;
    } else continue; // tagged for this ProviderConfig, naming no managed resource: not one of ours
    orphans.push({
      id: r.id,
      type: r.type,
      ...(r.location ? { location: r.location } : {}),
      managedResource: owner,
      reason,
      adopt: def
        ? `driftless import --provider-config ${providerConfig} --kinds ${kindAlias(def)} -o <dir>`
        : `driftless import --provider-config ${providerConfig} --kinds '<service>.*' -o <dir>`,
      tags: r.tags,
    });
  }
  return { foreign, orphans };
}
