// The scope of an extension type (locks, role assignments, diagnostic settings…): the Azure Resource Manager
// id it is written under, `{scope}/providers/{namespace}/{type}/{name}` — the subscription, a resource
// group or any resource. Its syntax, and the managed kinds a `scopeRef` / `scopeSelector` may name: every
// driftless Azure kind whose status.atProvider.id is its ARM id (hand-written and generated).
import {
  FlexibleServer,
  FlexibleServerDatabase,
  FlexibleServerFirewallRule,
} from "../azure/dbforpostgresql.ts";
import { Subnet, VirtualNetwork } from "../azure/network.ts";
import { ResourceGroup } from "../azure/resources.ts";
import type { ManagedResource, ReferenceDef } from "../managed.ts";
import { API_DOMAIN } from "../meta.ts";
import { loadAzureCatalog } from "./catalog.ts";
import { AZURE_GEN_GROUP_SUFFIX } from "./spec.ts";

/** Where an ARM id lives: its subscription and (below one) resource group. */
export interface ArmScope {
  subscription: string;
  resourceGroup?: string;
}

// /subscriptions/{id}[/resourceGroups/{name}][/providers/{namespace}/{type}/{name}[/{type}/{name}]…]…
// (an extension resource's own id is a scope too: providers may repeat). Case-insensitive, as ARM.
const ARM_ID =
  /^\/subscriptions\/([^/]+)(?:\/resourceGroups\/([^/]+))?((?:\/providers\/[^/]+(?:\/[^/]+\/[^/]+)+)*)$/i;

/** The subscription and resource group of an ARM id, or why it is not one. */
export function parseArmScope(id: string): ArmScope | { invalid: string } {
  const m = ARM_ID.exec(id);
  if (!m)
    return {
      invalid: `"${id}" is not an Azure Resource Manager id (/subscriptions/{id}, /subscriptions/{id}/resourceGroups/{name}, or a resource's id …/providers/{namespace}/{type}/{name})`,
    };
  const [, subscription = "", resourceGroup, rest = ""] = m;
  // A subscription-level resource (…/providers/…) with no group is fine; a bare /providers is not a scope.
  if (rest === "" && /\/providers$/i.test(id)) return { invalid: `"${id}" ends in /providers` };
  return {
    subscription: decodeURIComponent(subscription),
    ...(resourceGroup ? { resourceGroup: decodeURIComponent(resourceGroup) } : {}),
  };
}

/** The hand-written Azure kinds that have an ARM id (a Blob container is data plane: it has none). */
const HAND_WRITTEN = [
  ResourceGroup,
  VirtualNetwork,
  Subnet,
  FlexibleServer,
  FlexibleServerFirewallRule,
  FlexibleServerDatabase,
];

/**
 * The cluster-scoped kind of `apiVersion` and `kind` when it is a driftless Azure kind with an ARM id:
 * hand-written, or generated (looked up in the generated catalog, so a kind needs no activation to be named;
 * reading it needs its CRD and the reconciler's RBAC rules, which come with activation).
 */
export const armIdKindOf: NonNullable<ReferenceDef["anyKind"]> = (apiVersion, kind) => {
  const [group = "", version = ""] = apiVersion.split("/");
  const hand = HAND_WRITTEN.find((d) => d.group === group && d.kind === kind && d.version === version);
  if (hand)
    return {
      group: hand.group,
      version: hand.version,
      kind: hand.kind,
      plural: hand.plural,
      namespaced: false,
      apiVersion,
    };
  if (version !== "v1alpha1" || !group.endsWith(`.${AZURE_GEN_GROUP_SUFFIX}.${API_DOMAIN}`)) return undefined;
  const e = loadAzureCatalog().kinds.find((k) => `${k.group}.${API_DOMAIN}` === group && k.kind === kind);
  return e ? { group, version, kind: e.kind, plural: e.plural, namespaced: false, apiVersion } : undefined;
};

/** A target's ARM id: its status.atProvider.id. */
export const armIdOf = (target: ManagedResource) =>
  (target.status?.atProvider as { id?: unknown } | undefined)?.id as string | undefined;
