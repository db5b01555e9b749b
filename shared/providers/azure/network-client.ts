// The Azure network kinds' shared pieces: Microsoft.Network's api-version, "still in use" errors, the
// read-only members a PUT must not send back, and the page loops of the batched observes (every Azure
// kind's list calls use them).

import { DependentsExistError, ThrottledError } from "../../api/external.ts";
import { isObject, type Json } from "../../api/json.ts";
import { namedError } from "../../named-error.ts";
import { azure, codeIs, isGone } from "./config.ts";

/** The Microsoft.Network api-version the hand-written network kinds speak. */
export const NETWORK_API = "2025-09-01";

/** Azure refused a delete because something still uses the resource: deleting that first resolves it. */
export class InUseError extends namedError("InUseError", DependentsExistError) {}

// Answers Azure gives while dependents exist or another operation holds the resource: wait, then retry.
const IN_USE = [
  "InUseSubnetCannotBeDeleted",
  "InUseNetworkSecurityGroupCannotBeDeleted",
  "InUseRouteTableCannotBeDeleted",
  "SubnetsHaveResourcesThatCannotBeDeleted",
  "AnotherOperationInProgress",
  "RetryableError",
];

export const isInUse = (err: unknown) => codeIs(err, ...IN_USE);

/** The same address ranges in any order (Azure keeps them as a list; the spec means a set). */
export const sameSet = (a: readonly string[], b: readonly string[]) =>
  new Set(a).size === new Set(b).size && a.every((x) => b.includes(x));

/**
 * A name ARM reports in a resource id (`resourceGroups/{rg}/…`, `virtualNetworks/{vnet}/…`), in the spec's
 * spelling when it names the same thing: ARM names are case-insensitive and the cloud may change case.
 */
export function nameInId(
  id: string | undefined,
  segment: "resourceGroups" | "virtualNetworks",
  spec: string | undefined,
): string | undefined {
  const parts = (id ?? "").split("/");
  const i = parts.findIndex((p) => p.toLowerCase() === segment.toLowerCase());
  const cloud = i >= 0 ? parts[i + 1] : undefined;
  if (!cloud) return undefined;
  return spec !== undefined && spec.toLowerCase() === cloud.toLowerCase() ? spec : cloud;
}

/**
 * The pages of an Azure SDK list (`list().byPage()`), awaiting the rate limit before each page request:
 * the SDK sends one when asked for the next page, and asks only while the last page had a continuation.
 */
export async function* eachPage<P extends { continuationToken?: string }>(
  pages: AsyncIterator<P>,
  rateLimit: (() => Promise<void>) | undefined,
): AsyncGenerator<P> {
  for (;;) {
    await rateLimit?.();
    const page = await pages.next();
    if (page.done) return;
    yield page.value;
    if (!page.value.continuationToken) return;
  }
}

/**
 * A batched observe's lists of child resources: each parent's children by lower-cased name (ARM names
 * are case-insensitive), one list per parent (keyed by its lower-cased path). A parent that is gone
 * (404) has none, as observe's GET of a child says. Throttling fails the whole call (the engine splits
 * the batch and backs off); any other failure is that parent's Error.
 */
export async function listEach<P, T extends { name?: string }>(
  parents: ReadonlyMap<string, P>,
  list: (parent: P) => AsyncIterable<T[]>,
): Promise<Map<string, Map<string, T> | Error>> {
  const out = new Map<string, Map<string, T> | Error>();
  for (const [key, parent] of parents) {
    const children = new Map<string, T>();
    try {
      await azure(async () => {
        try {
          for await (const page of list(parent)) {
            for (const child of page) if (child.name) children.set(child.name.toLowerCase(), child);
          }
        } catch (err) {
          // A missing subscription is a 404 too, but it is a configuration error, not an absent parent.
          if (!isGone(err)) throw err;
        }
      });
      out.set(key, children);
    } catch (err) {
      if (err instanceof ThrottledError) throw err;
      out.set(key, err as Error);
    }
  }
  return out;
}

const pick = (o: unknown, keys: readonly string[]): Json =>
  isObject(o) ? Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]])) : {};
const each = (v: unknown, f: (x: unknown) => Json) => (Array.isArray(v) ? v.map(f) : undefined);
/** A reference to another resource: its id is all a PUT sends (the rest is that resource's, read-only here). */
const ref = (v: unknown) => (isObject(v) ? pick(v, ["id"]) : undefined);

// The writable members of Microsoft.Network's published type data (bicep-types-az, the api-version above):
// a PUT sends back only these, as the SDK's serializer did; what ARM sets (provisioningState, etag, ip
// configurations…) is read-only and refused.
const VNET_WRITABLE = [
  "addressSpace",
  "dhcpOptions",
  "flowTimeoutInMinutes",
  "enableDdosProtection",
  "enableVmProtection",
  "encryption",
  "privateEndpointVNetPolicies",
  "summarizedGatewayPrefixes",
] as const;
const SUBNET_WRITABLE = [
  "addressPrefix",
  "addressPrefixes",
  "privateEndpointNetworkPolicies",
  "privateLinkServiceNetworkPolicies",
  "sharingScope",
  "defaultOutboundAccess",
  "ipamPoolPrefixAllocations",
] as const;
const SUBNET_REFS = ["networkSecurityGroup", "routeTable", "natGateway", "serviceGateway"] as const;
const PEERING_WRITABLE = [
  "allowVirtualNetworkAccess",
  "allowForwardedTraffic",
  "allowGatewayTransit",
  "useRemoteGateways",
  "remoteVirtualNetwork",
  "localAddressSpace",
  "localVirtualNetworkAddressSpace",
  "remoteAddressSpace",
  "remoteVirtualNetworkAddressSpace",
  "remoteBgpCommunities",
  "doNotVerifyRemoteGateways",
  "peerCompleteVnets",
  "enableOnlyIPv6Peering",
  "localSubnetNames",
  "remoteSubnetNames",
] as const;

/** A subnet's properties as a PUT sends them back: its writable members, references as ids. */
export function writableSubnetProperties(p: unknown): Json {
  if (!isObject(p)) return {};
  const out: Json = pick(p, SUBNET_WRITABLE);
  for (const k of SUBNET_REFS) if (isObject(p[k])) out[k] = ref(p[k]);
  const lists: Record<string, unknown[] | undefined> = {
    serviceEndpoints: each(p.serviceEndpoints, (e) => pick(e, ["service", "networkIdentifier", "locations"])),
    serviceEndpointPolicies: each(p.serviceEndpointPolicies, (x) => ref(x) ?? {}),
    ipAllocations: each(p.ipAllocations, (x) => ref(x) ?? {}),
    applicationGatewayIPConfigurations: each(p.applicationGatewayIPConfigurations, (x) =>
      pick(x, ["id", "name", "properties"]),
    ),
    delegations: each(p.delegations, (d) => ({
      ...pick(d, ["name", "id"]),
      properties: pick(isObject(d) ? d.properties : undefined, ["serviceName"]),
    })),
  };
  for (const [k, v] of Object.entries(lists)) if (v) out[k] = v;
  return out;
}

/** A virtual network as a PUT sends it back: its writable members, its subnets and peerings kept. */
export function writableNetwork(vnet: Json): Json {
  const p = isObject(vnet.properties) ? vnet.properties : {};
  const props: Json = pick(p, VNET_WRITABLE);
  if (isObject(p.ddosProtectionPlan)) props.ddosProtectionPlan = ref(p.ddosProtectionPlan);
  if (isObject(p.bgpCommunities)) props.bgpCommunities = pick(p.bgpCommunities, ["virtualNetworkCommunity"]);
  const ipAllocations = each(p.ipAllocations, (x) => ref(x) ?? {});
  if (ipAllocations) props.ipAllocations = ipAllocations;
  const subnets = each(p.subnets, (s) => ({
    ...pick(s, ["name", "id"]),
    properties: writableSubnetProperties(isObject(s) ? s.properties : undefined),
  }));
  if (subnets) props.subnets = subnets;
  const peerings = each(p.virtualNetworkPeerings, (x) => ({
    ...pick(x, ["name", "id"]),
    properties: pick(isObject(x) ? x.properties : undefined, PEERING_WRITABLE),
  }));
  if (peerings) props.virtualNetworkPeerings = peerings;
  return { ...pick(vnet, ["location", "tags", "extendedLocation"]), properties: props };
}
