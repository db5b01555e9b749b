// `driftless import`: what exists in the account a ProviderConfig reaches, as Observe-only managed resources.
// Each selected kind's `list` (the cloud's own list calls) names what exists; whatever a managed resource
// of the kind already names by its external name is skipped; the rest becomes an object with
// `managementPolicies: ["Observe"]` and `crossplane.io/external-name`: applied, driftless only reads it.
// With a depth, the kinds whose parent is a spec field are listed again under what was found, level by level.
import {
  type ExternalClient,
  type ExternalListing,
  fitsPattern,
  type ListContext,
  type ManagedKindProvider,
  NotListableError,
} from "../api/external.ts";
import { globMatcher } from "../api/glob.ts";
import { type ManagedResource, namespacedVariantOf } from "../api/managed.ts";
import { Annotations, type ResourceType } from "../api/meta.ts";
import { isNotFound, type Kube } from "../kube/client.ts";
import { type ConnectorOptions, ProviderConnector } from "../reconciler/connect.ts";
import { MAX_IMPORT_DEPTH, MAX_IMPORT_PARENTS } from "./import-limits.ts";
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
  /**
   * How many levels further down to list (0, the default: none): the kinds whose parent is a spec field
   * (ManagedKindProvider.listsUnder) are listed again under every resource found whose full name fits their
   * parent, level by level, at most MAX_IMPORT_DEPTH levels and MAX_IMPORT_PARENTS parents.
   */
  depth?: number;
}

export interface ImportResult {
  objects: DriftlessObject[];
  /** Per kind: how many were found, imported and skipped as already managed. */
  kinds: Array<{ kind: string; found: number; imported: number; managed: number }>;
  /** Selected kinds that cannot be listed (no `list` in their provider, or a child type), and why. */
  unsupported: Array<{ kind: string; reason: string }>;
  /**
   * With a depth: the levels listed below the start, the lists made under how many parents (the --parent
   * given counts), and the resources a selected kind lists under that a bound left unlisted, and which bound.
   */
  walk?: {
    levels: number;
    lists: number;
    parents: number;
    notWalked: string[];
    bound?: "depth" | "parents";
  };
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
  const depth = opts.depth ?? 0;
  if (!Number.isInteger(depth) || depth < 0 || depth > MAX_IMPORT_DEPTH)
    throw new RangeError(`depth ${depth}: a whole number from 0 to ${MAX_IMPORT_DEPTH}`);
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
  const tally = new Map<ManagedKindProvider, Tally>();
  const unsupported = new Map<ManagedKindProvider, string>();
  const objects: ImportResult["objects"] = [];
  /** Lists one kind (under one parent) and takes what no managed resource holds; the full names found. */
  const listKind = async (provider: ManagedKindProvider, ctx: ListContext): Promise<string[]> => {
    const def = provider.definition;
    let t = tally.get(provider);
    if (!t) {
      const probe = {
        apiVersion: def.apiVersion,
        kind: def.kind,
        metadata: { name: "driftless-import" },
        spec: { forProvider: {}, providerConfigRef: { name: opts.providerConfig } },
      } as unknown as ManagedResource;
      t = { client: await connector.connect(provider, probe), found: 0, imported: 0, taken: new Set() };
    }
    const client = t.client;
    let found: ExternalListing[];
    try {
      if (!client.list) throw new NotListableError("cannot be listed yet");
      found = await client.list(ctx);
    } catch (err) {
      if (!(err instanceof NotListableError)) throw err;
      if (!tally.has(provider)) unsupported.set(provider, err.message);
      return [];
    }
    tally.set(provider, t);
    unsupported.delete(provider);
    t.managed ??= await managedNames(kube, provider);
    for (const item of found) {
      t.found++;
      const key = [
        ...parentFields(item).map((f) => String(item.forProvider[f] ?? "")),
        item.externalName,
      ].join("-");
      if (held(t.managed, item) || t.taken.has(key)) continue;
      t.taken.add(key);
      t.imported++;
      objects.push({
        apiVersion: def.apiVersion,
        kind: def.kind,
        metadata: {
          name: objectNameOf(key),
          annotations: { [Annotations.externalName]: item.externalName },
        },
        spec: {
          managementPolicies: ["Observe"],
          providerConfigRef: { name: opts.providerConfig },
          forProvider: item.forProvider,
        },
      });
    }
    return found.flatMap((item) => (item.fullName ? [item.fullName] : []));
  };

  let frontier: string[] = [];
  for (const provider of selected) frontier.push(...(await listKind(provider, listContext)));
  const walk: NonNullable<ImportResult["walk"]> = {
    levels: 0,
    lists: 0,
    parents: opts.parent ? 1 : 0,
    notWalked: [],
  };
  /** The selected kinds that list under a name (their parent pattern fits it). */
  const under = (name: string) =>
    selected.filter((p) => p.listsUnder?.some((pattern) => fitsPattern(pattern, name)));
  const walked = new Set<string>(opts.parent ? [opts.parent] : []);
  for (let level = 1; level <= depth; level++) {
    const next: string[] = [];
    const here = [...new Set(frontier)].filter((n) => !walked.has(n) && under(n).length > 0);
    if (here.length === 0) {
      frontier = [];
      break;
    }
    for (const [i, name] of here.entries()) {
      if (walk.parents >= MAX_IMPORT_PARENTS) {
        walk.notWalked.push(...here.slice(i));
        walk.bound = "parents";
        break;
      }
      walked.add(name);
      walk.parents++;
      for (const provider of under(name)) {
        walk.lists++;
        next.push(...(await listKind(provider, { ...listContext, parent: name })));
      }
    }
    walk.levels = level;
    frontier = walk.bound ? [] : next;
    if (walk.bound) break;
  }
  if (!walk.bound) {
    const left = [...new Set(frontier)].filter((n) => !walked.has(n) && under(n).length > 0);
    if (depth > 0 && left.length > 0) {
      walk.notWalked.push(...left);
      walk.bound = "depth";
    }
  }
  return {
    objects,
    kinds: selected.flatMap((p) => {
      const t = tally.get(p);
      return t
        ? [
            {
              kind: kindAlias(p.definition),
              found: t.found,
              imported: t.imported,
              managed: t.found - t.imported,
            },
          ]
        : [];
    }),
    unsupported: selected.flatMap((p) => {
      const reason = unsupported.get(p);
      return reason === undefined ? [] : [{ kind: kindAlias(p.definition), reason }];
    }),
    ...(depth > 0 ? { walk } : {}),
  };
}

/** What one kind's lists found and took, and what its managed resources hold (read once per import). */
interface Tally {
  client: ExternalClient<Record<string, unknown>, Record<string, unknown>>;
  found: number;
  imported: number;
  /** The object keys taken, so a resource reached twice is written once. */
  taken: Set<string>;
  managed?: Map<string, Array<Record<string, unknown>>>;
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

/**
 * A listed resource a managed resource already holds: the same external name (and parent, for a child; names
 * compared as the clouds do, ignoring case), or the other name it is also known by (ExternalListing.alsoNamed).
 */
const held = (managed: Map<string, Array<Record<string, unknown>>>, item: ExternalListing): boolean =>
  (managed.get(item.externalName) ?? []).some((fp) =>
    parentFields(item).every(
      (f) => String(fp[f] ?? "").toLowerCase() === String(item.forProvider[f] ?? "").toLowerCase(),
    ),
  ) ||
  (item.alsoNamed !== undefined &&
    held(managed, {
      externalName: item.alsoNamed.externalName,
      forProvider: item.forProvider,
      ...(item.alsoNamed.parent ? { parent: item.alsoNamed.parent } : {}),
    }));

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
