// The Azure kinds: a new one is its schema in shared/api/azure/, its provider file here and one line
// below; `npm run gen:kinds` then regenerates what derives from this list.
import {
  defineProviderConfigKind,
  type ManagedKindProvider,
  type ProviderConfigKind,
} from "../../api/external.ts";
import { providerConfigs } from "../../api/provider-config.ts";
import { checkAzureCredentials } from "./config.ts";
import { containerProvider } from "./container.ts";
import { resourceGroupProvider } from "./resource-group.ts";
import { azureSubnetProvider } from "./subnet.ts";
import { virtualNetworkProvider } from "./virtual-network.ts";

export const azureKinds: ManagedKindProvider[] = [
  resourceGroupProvider,
  containerProvider,
  virtualNetworkProvider,
  azureSubnetProvider,
];

export const azureProviderConfigKinds: ProviderConfigKind[] = [
  defineProviderConfigKind({
    cloud: "azure",
    type: providerConfigs.azure.type,
    check: checkAzureCredentials,
  }),
];
