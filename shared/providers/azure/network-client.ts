// The Azure network kinds' shared pieces: the NetworkManagementClient of a ProviderConfig (built on the
// credential code in config.ts), availability from provisioningState, and "still in use" errors.
import { NetworkManagementClient } from "@azure/arm-network";
import type { Availability, ConnectContext } from "../../api/external.ts";
import { DependentsExistError } from "../../api/external.ts";
import type { AzureProviderConfigSpec } from "../../api/provider-config.ts";
import { azureCredential, ClientCache, codeIs } from "./config.ts";

const networkClients = new ClientCache<NetworkManagementClient>();

/** The Azure Resource Manager network client of a ProviderConfig, cached per credential and endpoint. */
export async function networkClient(
  ctx: ConnectContext<AzureProviderConfigSpec>,
): Promise<NetworkManagementClient> {
  const spec = ctx.providerConfig.spec;
  const { credential, cacheKey } = await azureCredential(ctx);
  const endpoint = spec.endpoint?.resourceManager?.replace(/\/+$/, "");
  return networkClients.get(`${cacheKey}/${spec.subscriptionID}/${endpoint}`, () => {
    return new NetworkManagementClient(credential, spec.subscriptionID, {
      // Tokens for another Resource Manager (sovereign clouds) are issued for that audience.
      ...(endpoint ? { endpoint, credentials: { scopes: [`${new URL(endpoint).origin}/.default`] } } : {}),
      retryOptions: { maxRetries: 2 },
    });
  });
}

export function availabilityOf(state: string | undefined): { availability: Availability; message?: string } {
  switch (state) {
    case "Succeeded":
      return { availability: "Available" };
    case "Deleting":
      return { availability: "Deleting" };
    case "Failed":
      return { availability: "Unavailable", message: "Azure reports provisioningState Failed" };
    default:
      return { availability: "Creating" };
  }
}

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
