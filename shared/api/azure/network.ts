import { z } from "zod";
import { optionalString } from "../fields.ts";
import { defineManagedKind, defineTaggedKind } from "../managed.ts";
import { referenceTo } from "../reference.ts";
import { AzureId, AzureTags, ResourceGroup } from "./resources.ts";

/** The reference of every kind that lives in a resource group: its name, from a ResourceGroup. */
export const resourceGroupReference = referenceTo("resourceGroupName", ResourceGroup, { fills: "name" });

/** The resource group fields of every kind that lives in one (name, or a reference to a ResourceGroup). */
export const resourceGroupFields = {
  resourceGroupName: z
    .string()
    .min(1)
    .optional()
    .describe("The resource group the resource lives in. Required. Immutable."),
  ...resourceGroupReference.fields,
};

/** The region of a resource in a resource group, as its spec says it. */
export const AzureLocation = z
  .string()
  .min(1)
  .optional()
  .describe(
    'Azure region, e.g. westeurope or "West Europe". Required to create; filled in on import. Immutable.',
  );

const ProvisioningState = optionalString(
  "Provisioning state reported by Azure Resource Manager, e.g. Succeeded, Updating or Deleting.",
);

export const VirtualNetworkForProvider = z.object({
  ...resourceGroupFields,
  location: AzureLocation,
  addressSpace: z
    .object({
      addressPrefixes: z
        .array(z.string().min(1))
        .min(1)
        .describe("Address ranges (CIDR) of the network, compared as a set, e.g. [10.0.0.0/16]."),
    })
    .optional()
    .describe("The address space subnets are carved from. Required to create."),
  dnsServers: z
    .array(z.string().min(1))
    .optional()
    .describe(
      "DNS servers (IP addresses) of the network's machines, in order; [] means Azure's own DNS. Unset: not managed.",
    ),
  tags: AzureTags.optional(),
});

export const VirtualNetworkAtProvider = z.object({
  id: AzureId("virtual network"),
  provisioningState: ProvisioningState,
  resourceGuid: optionalString("The virtual network's resource GUID."),
});

export const VirtualNetwork = defineTaggedKind("tags", {
  group: "network.azure",
  kind: "VirtualNetwork",
  description:
    "An Azure virtual network. The external name is the network's name in its resource group. The connection Secret holds its resource id.",
  forProvider: VirtualNetworkForProvider,
  atProvider: VirtualNetworkAtProvider,
  immutable: ["location", "resourceGroupName"],
  connectionKeys: ["id"],
  references: [resourceGroupReference.def],
});

const virtualNetworkReference = referenceTo("virtualNetworkName", VirtualNetwork, { fills: "name" });

export const SubnetForProvider = z.object({
  ...resourceGroupFields,
  virtualNetworkName: z
    .string()
    .min(1)
    .optional()
    .describe("The virtual network the subnet belongs to. Required. Immutable."),
  ...virtualNetworkReference.fields,
  addressPrefix: z
    .string()
    .min(1)
    .optional()
    .describe("The subnet's address range (CIDR) inside the network's address space. Required to create."),
  delegations: z
    .array(
      z.object({
        name: z.string().min(1).describe("Name of the delegation within the subnet."),
        serviceName: z
          .string()
          .min(1)
          .describe(
            "The service the subnet is delegated to, e.g. Microsoft.DBforPostgreSQL/flexibleServers.",
          ),
      }),
    )
    .optional()
    .describe(
      "Services the subnet is delegated to: a PostgreSQL flexible server with private access needs one to Microsoft.DBforPostgreSQL/flexibleServers.",
    ),
});

export const SubnetAtProvider = z.object({
  id: AzureId("subnet"),
  provisioningState: ProvisioningState,
});

export const Subnet = defineManagedKind({
  group: "network.azure",
  kind: "Subnet",
  description:
    "A subnet of an Azure virtual network. The external name is the subnet's name in its network. The connection Secret holds its resource id.",
  forProvider: SubnetForProvider,
  atProvider: SubnetAtProvider,
  immutable: ["resourceGroupName", "virtualNetworkName"],
  connectionKeys: ["id"],
  references: [resourceGroupReference.def, virtualNetworkReference.def],
});
