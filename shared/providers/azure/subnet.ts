import { Subnet } from "../../api/azure/network.ts";
import { InvalidSpecError } from "../../api/external.ts";
import { armChildProvider } from "./arm-child.ts";
import type { ArmResource } from "./arm-rest.ts";
import { availabilityOf } from "./config.ts";
import { InUseError, isInUse, NETWORK_API, nameInId, writableSubnetProperties } from "./network-client.ts";

type Parent = { rg: string; vnet: string };

/** A subnet as ARM's REST API answers it (the members read here). */
type CloudSubnet = ArmResource<{
  [member: string]: unknown;
  addressPrefix?: string;
  addressPrefixes?: string[];
  delegations?: Array<{ name?: string; properties?: { serviceName?: string } }>;
  provisioningState?: string;
}>;

type Delegations = Array<{ name: string; serviceName: string }>;
/** The spec's delegations as ARM nests them. */
const delegationsBody = (ds: Delegations) =>
  ds.map((d) => ({ name: d.name, properties: { serviceName: d.serviceName } }));

export const azureSubnetProvider = armChildProvider({
  definition: Subnet,
  resourceType: "Microsoft.Network/virtualNetworks/subnets",
  listCall: "Subnets - List per virtual network",
  homeParents: { virtualNetworkName: "virtualNetwork" },
  kind: (arm) => {
    const path = (p: Parent, name?: string) =>
      arm.sub(
        `/resourceGroups/${encodeURIComponent(p.rg)}/providers/Microsoft.Network/virtualNetworks/${encodeURIComponent(p.vnet)}/subnets${name === undefined ? "" : `/${encodeURIComponent(name)}`}`,
      );
    return {
      parent: {
        of: ({ resourceGroupName: rg, virtualNetworkName: vnet }): Parent | undefined =>
          rg && vnet ? { rg, vnet } : undefined,
        key: (p) => `${p.rg}/${p.vnet}`.toLowerCase(),
        fields: (p) => ({ resourceGroupName: p.rg, virtualNetworkName: p.vnet }),
        missing:
          "spec.forProvider.resourceGroupName and virtualNetworkName (or their Ref/Selector) are required",
      },
      parents: async function* () {
        for await (const { group, item } of arm.eachInGroups<{ name?: string }>(
          (rg) =>
            arm.sub(`/resourceGroups/${encodeURIComponent(rg)}/providers/Microsoft.Network/virtualNetworks`),
          NETWORK_API,
        ))
          if (item.name) yield { rg: group, vnet: item.name };
      },
      calls: {
        get: (p, name) => arm.call<CloudSubnet>("GET", path(p, name), NETWORK_API),
        list: (p) => arm.pages<CloudSubnet>(path(p), NETWORK_API),
        put: (p, name, body: CloudSubnet) => arm.call("PUT", path(p, name), NETWORK_API, body),
        remove: (p, name) => arm.call("DELETE", path(p, name), NETWORK_API),
      },
      mapping: {
        what: "subnet",
        observationOf: (_fp, parent, subnet) => {
          const props = subnet.properties ?? {};
          const state = props.provisioningState;
          const addressPrefix = props.addressPrefix ?? props.addressPrefixes?.[0];
          return {
            resourceExists: true,
            observed: {
              // Found in the network and group it was asked for; its id says so in ARM's own words.
              resourceGroupName: nameInId(subnet.id, "resourceGroups", parent.rg) ?? parent.rg,
              virtualNetworkName: nameInId(subnet.id, "virtualNetworks", parent.vnet) ?? parent.vnet,
              ...(addressPrefix ? { addressPrefix } : {}),
              ...(props.delegations?.length
                ? {
                    delegations: props.delegations.map((d) => ({
                      name: d.name ?? "",
                      serviceName: d.properties?.serviceName ?? "",
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
          return {
            properties: {
              addressPrefix,
              ...(delegations ? { delegations: delegationsBody(delegations) } : {}),
            },
          };
        },
        updateBody: async ({ addressPrefix, delegations }, current) => {
          if (!addressPrefix && !delegations) return undefined;
          // A PUT replaces the whole subnet: send back what Azure has (security group, route table…) with
          // only the managed fields changed.
          const { addressPrefixes: many, ...rest } = writableSubnetProperties(
            (await current()).properties,
          ) as NonNullable<CloudSubnet["properties"]>;
          return {
            properties: {
              ...rest,
              addressPrefix: addressPrefix ?? rest.addressPrefix ?? many?.[0],
              ...(delegations ? { delegations: delegationsBody(delegations) } : {}),
            },
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
    };
  },
});
