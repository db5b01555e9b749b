import type { Subnet as CloudSubnet } from "@azure/arm-network";
import { Subnet } from "../../api/azure/network.ts";
import { byResourceUri } from "../../api/cloud-events.ts";
import { InvalidSpecError } from "../../api/external.ts";
import { armChildProvider } from "./arm-child.ts";
import { availabilityOf } from "./config.ts";
import { InUseError, isInUse, nameInId, networkClient } from "./network-client.ts";

type Parent = { rg: string; vnet: string };

export const azureSubnetProvider = armChildProvider({
  definition: Subnet,
  cloudEvents: {
    azure: {
      operations: [
        "Microsoft.Network/virtualNetworks/subnets/write",
        "Microsoft.Network/virtualNetworks/subnets/delete",
      ],
      externalNames: byResourceUri("subnets"),
    },
  },
  listCall: "Subnets - List per virtual network",
  client: networkClient,
  kind: (network) => ({
    parent: {
      of: ({ resourceGroupName: rg, virtualNetworkName: vnet }): Parent | undefined =>
        rg && vnet ? { rg, vnet } : undefined,
      key: (p) => `${p.rg}/${p.vnet}`.toLowerCase(),
      missing:
        "spec.forProvider.resourceGroupName and virtualNetworkName (or their Ref/Selector) are required",
    },
    calls: {
      get: (p, name) => network.subnets.get(p.rg, p.vnet, name),
      list: (p) => network.subnets.list(p.rg, p.vnet).byPage(),
      put: (p, name, body: CloudSubnet) =>
        network.subnets.createOrUpdate(p.rg, p.vnet, name, body).submitted(),
      remove: (p, name) => network.subnets.delete(p.rg, p.vnet, name).submitted(),
    },
    mapping: {
      what: "subnet",
      observationOf: (_fp, parent, subnet) => {
        const state = subnet.provisioningState;
        const addressPrefix = subnet.addressPrefix ?? subnet.addressPrefixes?.[0];
        return {
          resourceExists: true,
          observed: {
            // Found in the network and group it was asked for; its id says so in ARM's own words.
            resourceGroupName: nameInId(subnet.id, "resourceGroups", parent.rg) ?? parent.rg,
            virtualNetworkName: nameInId(subnet.id, "virtualNetworks", parent.vnet) ?? parent.vnet,
            ...(addressPrefix ? { addressPrefix } : {}),
            ...(subnet.delegations?.length
              ? {
                  delegations: subnet.delegations.map((d) => ({
                    name: d.name ?? "",
                    serviceName: d.serviceName ?? "",
                  })),
                }
              : {}),
          },
          atProvider: {
            ...(subnet.id ? { id: subnet.id } : {}),
            ...(state ? { provisioningState: state } : {}),
          },
          ...availabilityOf(state),
          ...(subnet.id ? { connectionDetails: { id: subnet.id } } : {}),
        };
      },
      createBody: ({ addressPrefix, delegations }) => {
        if (!addressPrefix)
          throw new InvalidSpecError("spec.forProvider.addressPrefix is required to create a subnet");
        return { addressPrefix, ...(delegations ? { delegations } : {}) };
      },
      updateBody: async ({ addressPrefix, delegations }, current) => {
        if (!addressPrefix && !delegations) return undefined;
        // A PUT replaces the whole subnet: send back what Azure has (security group, route table…) with
        // only the managed fields changed.
        const { addressPrefixes: many, ...rest } = await current();
        return {
          ...rest,
          addressPrefix: addressPrefix ?? rest.addressPrefix ?? many?.[0],
          ...(delegations ? { delegations } : {}),
        };
      },
    },
    writes: {
      refusedDelete: (name, err) =>
        isInUse(err)
          ? new InUseError(
              `subnet ${name} is still in use, retrying until what uses it is deleted (${(err as { code?: string }).code}: ${(err as Error).message})`,
              { cause: err },
            )
          : err,
    },
  }),
});
