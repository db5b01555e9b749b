// Where an Azure resource lives (api/external.ts Home): the ProviderConfig's subscription (named in its
// spec, so credentials cannot move it), the resource group and location the kind has, and the Resource
// Manager endpoint when overridden; a Blob container lives in the ProviderConfig's storage account.
import type { ConnectContext, Home } from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { AzureProviderConfigSpec } from "../../api/provider-config.ts";
import { homeFields } from "../home.ts";
import { azureEndpoints, normaliseLocation } from "./config.ts";

type Ctx = ConnectContext<AzureProviderConfigSpec>;
type MR = ManagedResource<Record<string, unknown>, unknown>;

const FIELDS = { resourceGroupName: "resourceGroup", location: "location" } as const;

/** An Azure Resource Manager resource's home: subscription, resource group, location (as the kind has them). */
export async function azureHome(ctx: Ctx, mr: MR): Promise<Home> {
  const spec = ctx.providerConfig.spec;
  const endpoint = azureEndpoints(spec).resourceManager?.url;
  return {
    subscription: spec.subscriptionID,
    // "West Europe" and "westeurope" are one location to ARM.
    ...homeFields(mr.spec.forProvider, FIELDS, (k, v) => (k === "location" ? normaliseLocation(v) : v)),
    ...(endpoint ? { endpoint } : {}),
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
