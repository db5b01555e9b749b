// Where an Azure resource lives (api/external.ts Home): the ProviderConfig's subscription (named in its
// spec, so credentials cannot move it), the resource group, location or scope the kind has, and the Resource
// Manager endpoint when overridden; a Blob container lives in the ProviderConfig's storage account.
import type { ConnectContext, Home } from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { AzureProviderConfigSpec } from "../../api/provider-config.ts";
import { homeFields } from "../home.ts";
import { azureEndpoints, normaliseLocation } from "./config.ts";

type Ctx = ConnectContext<AzureProviderConfigSpec>;
type MR = ManagedResource<Record<string, unknown>, unknown>;

// An extension type's scope (the ARM id it is written under) is its home too: a changed scope is refused,
// never followed to a second resource. ARM ids are case-insensitive.
const FIELDS = { resourceGroupName: "resourceGroup", location: "location", scope: "scope" } as const;
const normalise = (k: string, v: string) =>
  k === "location" ? normaliseLocation(v) : k === "scope" ? v.toLowerCase() : v;

/** An Azure Resource Manager resource's home: subscription, resource group, location, scope (as the kind has them). */
export async function azureHome(ctx: Ctx, mr: MR): Promise<Home> {
  const spec = ctx.providerConfig.spec;
  const endpoint = azureEndpoints(spec).resourceManager?.url;
  return {
    subscription: spec.subscriptionID,
    // "West Europe" and "westeurope" are one location to ARM.
    ...homeFields(mr.spec.forProvider, FIELDS, normalise),
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
