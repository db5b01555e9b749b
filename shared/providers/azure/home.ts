// Where an Azure resource lives (api/external.ts Home): the ProviderConfig's subscription (named in its
// spec, so credentials cannot move it), the resource group, location or scope the kind has, and the Resource
// Manager endpoint when overridden; a Blob container lives in the ProviderConfig's storage account.

import { type AzureKindSpec, variantOf } from "../../api/azure-gen/spec.ts";
import type { ConnectContext, Home } from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { AzureProviderConfigSpec } from "../../api/provider-config.ts";
import { homeFields } from "../home.ts";
import { azureEndpoints, normaliseLocation } from "./config.ts";

type Ctx = ConnectContext<AzureProviderConfigSpec>;
type MR = ManagedResource<Record<string, unknown>, unknown>;
type Parents = Readonly<Record<string, string>>;

// An extension type's scope (the ARM id it is written under) is its home too: a changed scope is refused,
// never followed to a second resource; so are the parents a kind names (homeParents: a Subnet's virtual
// network, a flexible server's database or firewall rule's server): its id is built under them. ARM ids
// are case-insensitive.
const FIELDS = { resourceGroupName: "resourceGroup", location: "location", scope: "scope" } as const;
const normalise = (k: string, v: string) =>
  k === "location" ? normaliseLocation(v) : k === "resourceGroup" ? v : v.toLowerCase();

/**
 * An Azure Resource Manager resource's home: subscription, resource group, location, scope and the kind's
 * parents (as the kind has them).
 */
export async function azureHome(ctx: Ctx, mr: MR, parents: Parents = {}): Promise<Home> {
  const spec = ctx.providerConfig.spec;
  const endpoint = azureEndpoints(spec).resourceManager?.url;
  return {
    subscription: spec.subscriptionID,
    // "West Europe" and "westeurope" are one location to ARM.
    ...homeFields(mr.spec.forProvider, { ...FIELDS, ...parents }, normalise),
    ...(endpoint ? { endpoint } : {}),
  };
}

/**
 * A generated kind's home: a tenant or management-group type's is the ProviderConfig's tenant (its
 * credentials are issued there: a ProviderConfig of another tenant is another home, refused) and its
 * management group, no subscription; a name-discriminated union's (Microsoft.Web/sites/config) adds its
 * variant, which is its name — another variant would be another resource. Else the Azure home. A child
 * type's parents' names (`vaultName` of a Key Vault secret: the provider's homeParents) are part of it.
 */
export function azureGenHomeOf(spec: Pick<AzureKindSpec, "scope" | "union">) {
  return async (ctx: Ctx, mr: MR, parents: Parents = {}): Promise<Home> => {
    const pc = ctx.providerConfig.spec;
    const endpoint = azureEndpoints(pc).resourceManager?.url;
    const home =
      spec.scope === "tenant" || spec.scope === "managementGroup"
        ? {
            tenant: pc.tenantID.toLowerCase(),
            ...homeFields(
              mr.spec.forProvider,
              { managementGroupId: "managementGroup", ...parents },
              (_k, v) => v.toLowerCase(),
            ),
            ...(endpoint ? { endpoint } : {}),
          }
        : await azureHome(ctx, mr, parents);
    const variant = spec.union?.on === "name" ? variantOf(spec, mr.spec.forProvider) : undefined;
    return variant ? { ...home, name: variant.value.toLowerCase() } : home;
  };
}

/** A Blob container's home: the storage account (and its endpoint when overridden), the resource group named. */
export async function azureBlobHome(ctx: Ctx, mr: MR): Promise<Home> {
  const spec = ctx.providerConfig.spec;
  const endpoint = azureEndpoints(spec).blob?.url;
  return {
    ...(spec.storage?.accountName ? { storageAccount: spec.storage.accountName } : {}),
    ...homeFields(mr.spec.forProvider, { resourceGroupName: "resourceGroup" }),
    ...(endpoint ? { endpoint } : {}),
  };
}
