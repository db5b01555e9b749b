// The Azure kinds: a new one is its schema in shared/api/azure/, its provider file here and one line
// below; `npm run gen:kinds` then regenerates what derives from this list.
import { providerConfigKindsOf, withNamespacedVariants } from "../../api/external.ts";
import { withHome } from "../home.ts";
import { activatedAzureGenKinds } from "./arm-generic/kinds.ts";
import { checkAzureCredentials } from "./config.ts";
import { containerProvider } from "./container.ts";
import { flexibleServerProvider } from "./flexible-server.ts";
import { flexibleServerDatabaseProvider } from "./flexible-server-database.ts";
import { flexibleServerFirewallRuleProvider } from "./flexible-server-firewall-rule.ts";
import { azureBlobHome, azureHome } from "./home.ts";
import { resourceGroupProvider } from "./resource-group.ts";
import { azureSubnetProvider } from "./subnet.ts";
import { virtualNetworkProvider } from "./virtual-network.ts";

export const azureKinds = withNamespacedVariants([
  withHome(resourceGroupProvider, azureHome),
  // A Blob container lives in the ProviderConfig's storage account, not in a resource group's location.
  withHome(containerProvider, azureBlobHome),
  withHome(virtualNetworkProvider, azureHome),
  withHome(azureSubnetProvider, azureHome),
  withHome(flexibleServerProvider, azureHome),
  withHome(flexibleServerFirewallRuleProvider, azureHome),
  withHome(flexibleServerDatabaseProvider, azureHome),
  // The generated kinds (generic ARM provider) that are activated; none by default (docs/azure-generated.md).
  ...activatedAzureGenKinds(),
]);

export const azureProviderConfigKinds = providerConfigKindsOf("azure", checkAzureCredentials);
