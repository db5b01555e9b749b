import type { Subnet as CloudSubnet, NetworkManagementClient } from "@azure/arm-network";
import type { z } from "zod";
import { Subnet, type SubnetAtProvider, type SubnetForProvider } from "../../api/azure/network.ts";
import { byResourceUri } from "../../api/cloud-events.ts";
import type {
  ConnectContext,
  ExternalClient,
  ExternalObservation,
  ObserveManyItem,
} from "../../api/external.ts";
import { defineProvider, InvalidSpecError } from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { AzureProviderConfigSpec } from "../../api/provider-config.ts";
import { azure, classifyAzureError, codeIs, isNotFound } from "./config.ts";
import { availabilityOf, InUseError, isInUse, listEach, nameInId, networkClient } from "./network-client.ts";

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

/** Subnets one batched observe covers (ARM chooses the size of a list page). */
const MAX_ITEMS = 1000;

/** What observe reports of a subnet as ARM returned it, by a GET or in its network's list page. */
function observationOf(parent: { rg: string; vnet: string }, subnet: CloudSubnet): Observation {
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
}

/** A subnet's network as a list key: ARM names are case-insensitive. */
const parentKey = (p: { rg: string; vnet: string }) => `${p.rg}/${p.vnet}`.toLowerCase();

class SubnetClient implements ExternalClient<F, A> {
  readonly #network: NetworkManagementClient;
  readonly #rateLimit: (() => Promise<void>) | undefined;
  constructor(network: NetworkManagementClient, rateLimit: (() => Promise<void>) | undefined) {
    this.#network = network;
    this.#rateLimit = rateLimit;
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
      const obs = observationOf(parent, subnet);
      subnetOf.set(obs, subnet);
      return obs;
    });
  }

  /**
   * Subnets - List of each virtual network the items name, one request per page; a network or group that
   * is gone has no subnets. A listed subnet is not kept for update(): update reads the subnet afresh.
   */
  async observeMany(items: ReadonlyArray<ObserveManyItem<F, A>>): Promise<Array<Observation | Error>> {
    const parents = new Map<string, { rg: string; vnet: string }>();
    for (const { mr } of items) {
      const parent = parentOf(mr);
      if (parent) parents.set(parentKey(parent), parent);
    }
    const lists = await listEach(
      parents,
      (p) => this.#network.subnets.list(p.rg, p.vnet).byPage(),
      this.#rateLimit,
    );
    return items.map(({ mr, externalName }) => {
      const parent = parentOf(mr);
      const subnets = parent ? lists.get(parentKey(parent)) : undefined;
      if (!parent || subnets === undefined) return { resourceExists: false };
      if (subnets instanceof Error) return subnets;
      const subnet = subnets.get(externalName.toLowerCase());
      return subnet ? observationOf(parent, subnet) : { resourceExists: false };
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
    const { addressPrefix, delegations } = mr.spec.forProvider;
    if (!addressPrefix)
      throw new InvalidSpecError("spec.forProvider.addressPrefix is required to create a subnet");
    // Only the request is awaited, never the long-running operation: observe follows provisioningState.
    await azure(() =>
      this.#network.subnets
        .createOrUpdate(parent.rg, parent.vnet, name, {
          addressPrefix,
          ...(delegations ? { delegations } : {}),
        })
        .submitted(),
    );
    return {};
  }

  async update(mr: MR, name: string, obs: Observation) {
    const parent = parentOf(mr);
    const { addressPrefix, delegations } = mr.spec.forProvider;
    if (!parent || (!addressPrefix && !delegations)) return {};
    await azure(async () => {
      // A PUT replaces the whole subnet: send back what Azure has (security group, route table…) with
      // only the managed fields changed.
      const current = subnetOf.get(obs) ?? (await this.#network.subnets.get(parent.rg, parent.vnet, name));
      const { addressPrefixes: many, ...rest } = current;
      await this.#network.subnets
        .createOrUpdate(parent.rg, parent.vnet, name, {
          ...rest,
          addressPrefix: addressPrefix ?? rest.addressPrefix ?? many?.[0],
          ...(delegations ? { delegations } : {}),
        })
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
  cloudEvents: {
    azure: {
      operations: [
        "Microsoft.Network/virtualNetworks/subnets/write",
        "Microsoft.Network/virtualNetworks/subnets/delete",
      ],
      externalNames: byResourceUri("subnets"),
    },
  },
  observeMany: {
    calls: "Subnets - List per virtual network",
    maxItems: MAX_ITEMS,
  },
  async connect(ctx: ConnectContext<AzureProviderConfigSpec>) {
    return new SubnetClient(await networkClient(ctx), ctx.rateLimit);
  },
});
