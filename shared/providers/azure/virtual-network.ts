import type { z } from "zod";
import {
  VirtualNetwork,
  type VirtualNetworkAtProvider,
  type VirtualNetworkForProvider,
} from "../../api/azure/network.ts";
import type {
  ExternalClient,
  ExternalListing,
  ExternalObservation,
  ObserveManyItem,
} from "../../api/external.ts";
import { InvalidSpecError } from "../../api/external.ts";
import { defined } from "../../api/json.ts";
import type { ManagedResource } from "../../api/managed.ts";
import { armProvider } from "./arm-provider.ts";
import type { ArmResource, ArmRest } from "./arm-rest.ts";
import { availabilityOf, azure, classifyAzureError, isGone, isNotFound } from "./config.ts";
import { listInGroups, observedLocation, observeInGroups } from "./in-group.ts";
import { InUseError, isInUse, NETWORK_API, nameInId, sameSet, writableNetwork } from "./network-client.ts";

type F = z.infer<typeof VirtualNetworkForProvider>;
type A = z.infer<typeof VirtualNetworkAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

/** A virtual network as ARM's REST API answers it (the members read here). */
interface CloudNetwork
  extends ArmResource<{
    addressSpace?: { addressPrefixes?: string[] };
    dhcpOptions?: { dnsServers?: string[] };
    provisioningState?: string;
    resourceGuid?: string;
  }> {
  [member: string]: unknown;
}

// The network as observe() read it, handed to update() (the engine passes the very same observation).
const networkOf = new WeakMap<Observation, CloudNetwork>();

/** What observe reports of a network as ARM returned it, by a GET or in a list page of group `rg`. */
function observationOf(fp: F, rg: string, vnet: CloudNetwork): Observation {
  const props = vnet.properties ?? {};
  const prefixes = props.addressSpace?.addressPrefixes ?? [];
  const specPrefixes = fp.addressSpace?.addressPrefixes;
  const tags = vnet.tags ?? {};
  const dnsServers = props.dhcpOptions?.dnsServers ?? [];
  const state = props.provisioningState;
  return {
    resourceExists: true,
    observed: defined({
      // Found in the group it was asked for; its id says so in ARM's own words.
      resourceGroupName: nameInId(vnet.id, "resourceGroups", rg) ?? rg,
      // ARM stores "westeurope": the user's "West Europe" names the same region and is no drift.
      location: observedLocation(fp.location, vnet.location),
      addressSpace:
        prefixes.length > 0
          ? {
              addressPrefixes: specPrefixes && sameSet(specPrefixes, prefixes) ? specPrefixes : prefixes,
            }
          : undefined,
      dnsServers: fp.dnsServers !== undefined || dnsServers.length > 0 ? dnsServers : undefined,
      tags: fp.tags !== undefined || Object.keys(tags).length > 0 ? tags : undefined,
    }),
    atProvider: defined({ id: vnet.id, provisioningState: state, resourceGuid: props.resourceGuid }),
    ...availabilityOf(state),
    ...(vnet.id ? { connectionDetails: { id: vnet.id } } : {}),
  };
}

class VirtualNetworkClient implements ExternalClient<F, A> {
  readonly #arm: ArmRest;
  constructor(arm: ArmRest) {
    this.#arm = arm;
  }

  #path(rg: string, name?: string) {
    const group = `/resourceGroups/${encodeURIComponent(rg)}/providers/Microsoft.Network/virtualNetworks`;
    return this.#arm.sub(name === undefined ? group : `${group}/${encodeURIComponent(name)}`);
  }

  #get(rg: string, name: string) {
    return this.#arm.call<CloudNetwork>("GET", this.#path(rg, name), NETWORK_API);
  }

  async observe(mr: MR, name: string | undefined): Promise<Observation> {
    const rg = mr.spec.forProvider.resourceGroupName;
    // Without its resource group nothing can be found (nor was anything created).
    if (!name || !rg) return { resourceExists: false };
    return azure(async () => {
      let vnet: CloudNetwork;
      try {
        vnet = await this.#get(rg, name);
      } catch (err) {
        // A missing subscription is a 404 too, but it is a configuration error, not an absent network.
        if (isGone(err)) return { resourceExists: false };
        throw err;
      }
      const obs = observationOf(mr.spec.forProvider, rg, vnet);
      networkOf.set(obs, vnet);
      return obs;
    });
  }

  /** Every virtual network of the subscription, resource group by resource group (`driftless import`). */
  list(): Promise<ExternalListing[]> {
    return listInGroups(this.#arm, (rg) => this.#path(rg), NETWORK_API);
  }

  /**
   * Virtual Networks - List of each resource group the items name, one request per page; a group that
   * is gone has no networks. A listed network is not kept for update(): update reads the network afresh.
   */
  async observeMany(items: ReadonlyArray<ObserveManyItem<F, A>>): Promise<Array<Observation | Error>> {
    return observeInGroups(
      items,
      (rg) => this.#arm.pages<CloudNetwork>(this.#path(rg), NETWORK_API),
      (mr, rg, vnet) => (vnet ? observationOf(mr.spec.forProvider, rg, vnet) : { resourceExists: false }),
    );
  }

  async create(mr: MR, name: string | undefined) {
    if (!name) throw new Error("a virtual network needs a name (crossplane.io/external-name)");
    const { resourceGroupName: rg, location, addressSpace, dnsServers, tags } = mr.spec.forProvider;
    if (!rg) {
      throw new InvalidSpecError(
        "spec.forProvider.resourceGroupName (or resourceGroupNameRef, resourceGroupNameSelector) is required",
      );
    }
    if (!location)
      throw new InvalidSpecError("spec.forProvider.location is required to create a virtual network");
    if (!addressSpace)
      throw new InvalidSpecError("spec.forProvider.addressSpace is required to create a virtual network");
    // Only the request is awaited, never the long-running operation: observe follows provisioningState.
    await azure(() =>
      this.#arm.call("PUT", this.#path(rg, name), NETWORK_API, {
        location,
        ...(tags !== undefined ? { tags } : {}),
        properties: {
          addressSpace,
          ...(dnsServers !== undefined ? { dhcpOptions: { dnsServers } } : {}),
        },
      }),
    );
    return {};
  }

  async update(mr: MR, name: string, obs: Observation) {
    const fp = mr.spec.forProvider;
    const rg = fp.resourceGroupName ?? "";
    const observed = obs.observed ?? {};
    const prefixesDrifted =
      fp.addressSpace !== undefined &&
      JSON.stringify(fp.addressSpace.addressPrefixes) !==
        JSON.stringify(observed.addressSpace?.addressPrefixes);
    const dnsDrifted =
      fp.dnsServers !== undefined &&
      JSON.stringify(fp.dnsServers) !== JSON.stringify(observed.dnsServers ?? []);
    await azure(async () => {
      if (prefixesDrifted || dnsDrifted) {
        // A PUT replaces the whole network: send back what Azure has (its subnets, DNS servers, peerings…)
        // with only the managed fields changed, or Azure would drop what the request leaves out.
        const current = writableNetwork(networkOf.get(obs) ?? (await this.#get(rg, name)));
        const props = (current.properties ?? {}) as NonNullable<CloudNetwork["properties"]>;
        await this.#arm.call("PUT", this.#path(rg, name), NETWORK_API, {
          ...current,
          ...(fp.tags !== undefined ? { tags: fp.tags } : {}),
          properties: {
            ...props,
            ...(prefixesDrifted
              ? {
                  addressSpace: {
                    ...props.addressSpace,
                    addressPrefixes: fp.addressSpace?.addressPrefixes ?? [],
                  },
                }
              : {}),
            ...(dnsDrifted ? { dhcpOptions: { ...props.dhcpOptions, dnsServers: fp.dnsServers } } : {}),
          },
        });
      } else if (fp.tags !== undefined) {
        // Tags alone: a PATCH, which touches nothing else.
        await this.#arm.call("PATCH", this.#path(rg, name), NETWORK_API, { tags: fp.tags });
      }
    });
    return {};
  }

  async delete(mr: MR, name: string) {
    const rg = mr.spec.forProvider.resourceGroupName;
    if (!rg) return;
    try {
      // Start the long-running delete and return: the engine requeues (Ready=False, Deleting) until
      // observe no longer finds the network, so no worker waits on a poll.
      await this.#arm.call("DELETE", this.#path(rg, name), NETWORK_API);
    } catch (err) {
      if (isNotFound(err)) return;
      if (isInUse(err)) {
        throw new InUseError(
          `virtual network ${name} is still in use, retrying until what uses it is deleted (${(err as { code?: string }).code}: ${(err as Error).message})`,
          { cause: err },
        );
      }
      throw classifyAzureError(err);
    }
  }
}

export const virtualNetworkProvider = armProvider({
  definition: VirtualNetwork,
  resourceType: "Microsoft.Network/virtualNetworks",
  listCall: "Virtual Networks - List per resource group",
  client: (arm) => new VirtualNetworkClient(arm),
});
