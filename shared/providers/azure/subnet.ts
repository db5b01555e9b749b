import type { Subnet as CloudSubnet, NetworkManagementClient } from "@azure/arm-network";
import type { z } from "zod";
import { Subnet, type SubnetAtProvider, type SubnetForProvider } from "../../api/azure/network.ts";
import type { ConnectContext, ExternalClient, ExternalObservation } from "../../api/external.ts";
import { defineProvider, InvalidSpecError } from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { AzureProviderConfigSpec } from "../../api/provider-config.ts";
import { azure, classifyAzureError, codeIs, isNotFound } from "./config.ts";
import { availabilityOf, InUseError, isInUse, nameInId, networkClient } from "./network-client.ts";

type F = z.infer<typeof SubnetForProvider>;
type A = z.infer<typeof SubnetAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

// The subnet as observe() read it, handed to update() (the engine passes the very same observation).
const subnetOf = new WeakMap<Observation, CloudSubnet>();

/** Where the subnet lives; undefined until both names are known (set or resolved from references). */
function parentOf(mr: MR): { rg: string; vnet: string } | undefined {
  const { resourceGroupName: rg, virtualNetworkName: vnet } = mr.spec.forProvider;
  return rg && vnet ? { rg, vnet } : undefined;
}

class SubnetClient implements ExternalClient<F, A> {
  readonly #network: NetworkManagementClient;
  constructor(network: NetworkManagementClient) {
    this.#network = network;
  }

  async observe(mr: MR, name: string | undefined): Promise<Observation> {
    const parent = parentOf(mr);
    // Without its network nothing can be found (nor was anything created).
    if (!name || !parent) return { resourceExists: false };
    return azure(async () => {
      let subnet: CloudSubnet;
      try {
        subnet = await this.#network.subnets.get(parent.rg, parent.vnet, name);
      } catch (err) {
        // The subnet, its network or its group missing all mean "no subnet"; a missing subscription does not.
        if (isNotFound(err) && !codeIs(err, "SubscriptionNotFound")) return { resourceExists: false };
        throw err;
      }
      const state = subnet.provisioningState;
      const addressPrefix = subnet.addressPrefix ?? subnet.addressPrefixes?.[0];
      const obs: Observation = {
        resourceExists: true,
        observed: {
          // Found in the network and group it was asked for; its id says so in ARM's own words.
          resourceGroupName: nameInId(subnet.id, "resourceGroups", parent.rg) ?? parent.rg,
          virtualNetworkName: nameInId(subnet.id, "virtualNetworks", parent.vnet) ?? parent.vnet,
          ...(addressPrefix ? { addressPrefix } : {}),
        },
        atProvider: {
          ...(subnet.id ? { id: subnet.id } : {}),
          ...(state ? { provisioningState: state } : {}),
        },
        ...availabilityOf(state),
        ...(subnet.id ? { connectionDetails: { id: subnet.id } } : {}),
      };
      subnetOf.set(obs, subnet);
      return obs;
    });
  }

  async create(mr: MR, name: string | undefined) {
    if (!name) throw new Error("a subnet needs a name (crossplane.io/external-name)");
    const parent = parentOf(mr);
    if (!parent) {
      throw new InvalidSpecError(
        "spec.forProvider.resourceGroupName and virtualNetworkName (or their Ref/Selector) are required",
      );
    }
    const addressPrefix = mr.spec.forProvider.addressPrefix;
    if (!addressPrefix)
      throw new InvalidSpecError("spec.forProvider.addressPrefix is required to create a subnet");
    // Only the request is awaited, never the long-running operation: observe follows provisioningState.
    await azure(() =>
      this.#network.subnets.createOrUpdate(parent.rg, parent.vnet, name, { addressPrefix }).submitted(),
    );
    return {};
  }

  async update(mr: MR, name: string, obs: Observation) {
    const parent = parentOf(mr);
    const addressPrefix = mr.spec.forProvider.addressPrefix;
    if (!parent || !addressPrefix) return {};
    await azure(async () => {
      // A PUT replaces the whole subnet: send back what Azure has (security group, route table,
      // delegations…) with only the address range changed.
      const current = subnetOf.get(obs) ?? (await this.#network.subnets.get(parent.rg, parent.vnet, name));
      const { addressPrefixes: _many, ...rest } = current;
      await this.#network.subnets
        .createOrUpdate(parent.rg, parent.vnet, name, { ...rest, addressPrefix })
        .submitted();
    });
    return {};
  }

  async delete(mr: MR, name: string) {
    const parent = parentOf(mr);
    if (!parent) return;
    try {
      // Start the long-running delete and return: the engine requeues until observe no longer finds it.
      await this.#network.subnets.delete(parent.rg, parent.vnet, name).submitted();
    } catch (err) {
      if (isNotFound(err)) return;
      if (isInUse(err)) {
        throw new InUseError(
          `subnet ${name} is still in use, retrying until what uses it is deleted (${(err as { code?: string }).code}: ${(err as Error).message})`,
          { cause: err },
        );
      }
      throw classifyAzureError(err);
    }
  }
}

export const azureSubnetProvider = defineProvider({
  definition: Subnet,
  async connect(ctx: ConnectContext<AzureProviderConfigSpec>) {
    return new SubnetClient(await networkClient(ctx));
  },
});
