// `driftless import`: what exists in the account a ProviderConfig reaches, as Observe-only managed resources.
// Each selected kind's `list` (the cloud's own list calls) names what exists; whatever a managed resource
// of the kind already names by its external name is skipped; the rest becomes an object with
// `managementPolicies: ["Observe"]` and `crossplane.io/external-name`: applied, driftless only reads it.
import {
  type ExternalListing,
  type ListContext,
  type ManagedKindProvider,
  NotListableError,
} from "../api/external.ts";
import { globMatcher } from "../api/glob.ts";
import { type ManagedResource, namespacedVariantOf } from "../api/managed.ts";
import { Annotations, type ResourceType } from "../api/meta.ts";
import { isNotFound, type Kube } from "../kube/client.ts";
import { type ConnectorOptions, ProviderConnector } from "../reconciler/connect.ts";
import type { DriftlessObject } from "./migrate-types.ts";

export interface ImportOptions extends ConnectorOptions {
  /** The cluster-scoped ProviderConfig whose account, subscription or project is listed. */
  providerConfig: string;
  /** `<service>.<kind>` globs, e.g. `ec2.*`, `sqs.queue` (the service is the API group's first label). */
  kinds: readonly string[];
  /**
   * Where a child type's parents come from: `cloud` (default) lists the parent types in the cloud;
   * `managed` takes the parents this ProviderConfig's managed resources hold in the cluster (no list of the
   * parent types; children of a parent driftless does not manage are not found).
   */
  parents?: "cloud" | "managed";
  /** The parent a kind whose parent is a spec field is listed under (a Google folder, organization, project). */
  parent?: string;
}

export interface ImportResult {
  objects: DriftlessObject[];
  /** Per kind: how many were found, imported and skipped as already managed. */
  kinds: Array<{ kind: string; found: number; imported: number; managed: number }>;
  /** Selected kinds that cannot be listed (no `list` in their provider, or a child type), and why. */
  unsupported: Array<{ kind: string; reason: string }>;
}

/** `<service>.<kind>` of a kind, lower-case: ec2.vpc, sqs.queue, pubsub.topic. */
export const kindAlias = (def: { group: string; kind: string }) =>
  `${def.group.split(".")[0]}.${def.kind}`.toLowerCase();

/** A Kubernetes object name for an external name: lower-case, DNS-1123 characters, at most 253. */
export function objectNameOf(externalName: string): string {
  const name = externalName
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, "-")
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, "");
  return (name || "imported").slice(0, 253);
}

/** Lists, skips what is managed, and returns the objects to write. Reads the cluster and the cloud; writes nothing. */
export async function discover(
  kube: Kube,
  providers: readonly ManagedKindProvider[],
  opts: ImportOptions,
): Promise<ImportResult> {
  const matchers = opts.kinds.map(globMatcher);
  const selected = providers.filter(
    (p) => p.definition.scope === "Cluster" && matchers.some((m) => m(kindAlias(p.definition))),
  );
  const connector = new ProviderConnector(kube, opts);
  const listContext: ListContext = {
    ...(opts.parent ? { parent: opts.parent } : {}),
    ...(opts.parents === "managed"
      ? {
          managed: async (def) =>
            (await Promise.all([def, namespacedVariantOf(def)].map((t) => listManaged(kube, t))))
              .flat()
              .filter((mr) => (mr.spec.providerConfigRef?.name ?? "default") === opts.providerConfig),
        }
      : {}),
  };
  const result: ImportResult = { objects: [], kinds: [], unsupported: [] };
  for (const provider of selected) {
    const def = provider.definition;
    const probe = {
      apiVersion: def.apiVersion,
      kind: def.kind,
      metadata: { name: "driftless-import" },
      spec: { forProvider: {}, providerConfigRef: { name: opts.providerConfig } },
    } as unknown as ManagedResource;
    const client = await connector.connect(provider, probe);
    let found: ExternalListing[];
    try {
      if (!client.list) throw new NotListableError("cannot be listed yet");
      found = await client.list(listContext);
    } catch (err) {
      if (!(err instanceof NotListableError)) throw err;
      result.unsupported.push({ kind: kindAlias(def), reason: err.message });
      continue;
    }
    const managed = await managedNames(kube, provider);
    let imported = 0;
    for (const item of found) {
      if (held(managed, item)) continue;
      imported++;
      result.objects.push({
        apiVersion: def.apiVersion,
        kind: def.kind,
        metadata: {
          name: objectNameOf(
            [...parentFields(item).map((f) => String(item.forProvider[f] ?? "")), item.externalName].join(
              "-",
            ),
          ),
          annotations: { [Annotations.externalName]: item.externalName },
        },
        spec: {
          managementPolicies: ["Observe"],
          providerConfigRef: { name: opts.providerConfig },
          forProvider: item.forProvider,
        },
      });
    }
    result.kinds.push({
      kind: kindAlias(def),
      found: found.length,
      imported,
      managed: found.length - imported,
    });
  }
  return result;
}

/**
 * What managed resources of a kind (either shape, any namespace) already hold: per external name, the
 * forProvider of each that holds it (a child is held only by one naming the same parent).
 */
async function managedNames(
  kube: Kube,
  provider: ManagedKindProvider,
): Promise<Map<string, Array<Record<string, unknown>>>> {
  const names = new Map<string, Array<Record<string, unknown>>>();
  for (const t of [provider.definition, namespacedVariantOf(provider.definition)])
    for (const mr of await listManaged(kube, t)) {
      const name = mr.metadata.annotations?.[Annotations.externalName];
      if (name) names.set(name, [...(names.get(name) ?? []), mr.spec.forProvider ?? {}]);
    }
  return names;
}

/** A listed resource a managed resource already holds: the same external name (and parent, for a child; names compared as the clouds do, ignoring case). */
const held = (managed: Map<string, Array<Record<string, unknown>>>, item: ExternalListing) =>
  (managed.get(item.externalName) ?? []).some((fp) =>
    parentFields(item).every(
      (f) => String(fp[f] ?? "").toLowerCase() === String(item.forProvider[f] ?? "").toLowerCase(),
    ),
  );

/** The forProvider fields naming a listed child's parent (none for a resource that is no child). */
const parentFields = (item: ExternalListing): readonly string[] =>
  typeof item.parent === "string" ? [item.parent] : (item.parent ?? []);

/** Every managed resource of one shape of a kind, in any namespace (none when its CRD is not installed). */
export async function listManaged(kube: Kube, t: ResourceType): Promise<ManagedResource[]> {
  const out: ManagedResource[] = [];
  let cont: string | undefined;
  do {
    let page: Awaited<ReturnType<typeof kube.list<ManagedResource & { [k: string]: unknown }>>>;
    try {
      page = await kube.list<ManagedResource & { [k: string]: unknown }>(t, {
        limit: 500,
        ...(cont ? { continue: cont } : {}),
      });
    } catch (err) {
      if (isNotFound(err)) break; // that shape's CRD is not installed: none of it
      throw err;
    }
    out.push(...page.items);
    cont = page.continue;
  } while (cont);
  return out;
}
