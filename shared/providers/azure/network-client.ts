// The Azure network kinds' shared pieces: the NetworkManagementClient of a ProviderConfig, "still in use"
// errors, and the page loop of the batched observes (every Azure kind's list calls use it).
import { NetworkManagementClient } from "@azure/arm-network";
import type { ConnectContext } from "../../api/external.ts";
import { DependentsExistError, ThrottledError } from "../../api/external.ts";
import type { AzureProviderConfigSpec } from "../../api/provider-config.ts";
import { armSdkClient, azure, ClientCache, codeIs, isGone } from "./config.ts";

const networkClients = new ClientCache<NetworkManagementClient>();

/** The Azure Resource Manager network client of a ProviderConfig, cached per credential and endpoint. */
export const networkClient = (
  ctx: ConnectContext<AzureProviderConfigSpec>,
): Promise<NetworkManagementClient> =>
  armSdkClient(ctx, networkClients, (c, subscription, o) => new NetworkManagementClient(c, subscription, o));

/** Azure refused a delete because something still uses the resource: deleting that first resolves it. */
export class InUseError extends DependentsExistError {
  override name = "InUseError";
}

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
  list: (parent: P) => AsyncIterator<T[] & { continuationToken?: string }>,
  rateLimit: (() => Promise<void>) | undefined,
): Promise<Map<string, Map<string, T> | Error>> {
  const out = new Map<string, Map<string, T> | Error>();
  for (const [key, parent] of parents) {
    const children = new Map<string, T>();
    try {
      await azure(async () => {
        try {
          for await (const page of eachPage(list(parent), rateLimit)) {
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
