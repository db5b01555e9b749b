import type { z } from "zod";
import { byResourceName } from "../../api/cloud-events.ts";
import {
  type ConnectContext,
  defineProvider,
  type ExternalClient,
  type ExternalObservation,
  InvalidSpecError,
} from "../../api/external.ts";
import {
  GlobalAddress,
  type GlobalAddressAtProvider,
  type GlobalAddressForProvider,
  networkPathOf,
} from "../../api/gcp/compute.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { GcpProviderConfigSpec } from "../../api/provider-config.ts";
import { CREATING, GlobalCollection } from "./compute-common.ts";
import { gcp, observedLabels, sameLabels } from "./config.ts";
import { gcpNetworkingConfig } from "./google-rest.ts";
import { defined } from "./sql-common.ts";

type F = z.infer<typeof GlobalAddressForProvider>;
type A = z.infer<typeof GlobalAddressAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

interface CloudAddress {
  id?: string;
  selfLink?: string;
  status?: string;
  address?: string;
  prefixLength?: number;
  purpose?: "VPC_PEERING";
  addressType?: "INTERNAL";
  network?: string;
  description?: string;
  labels?: Record<string, string>;
  labelFingerprint?: string;
}

/** The fingerprint setLabels needs, handed from observe to update outside the observation's fields. */
const fingerprints = new WeakMap<Observation, string>();

function observationOf(a: CloudAddress, fp: F): Observation {
  const network = a.network;
  const obs: Observation = {
    resourceExists: true,
    observed: defined({
      purpose: a.purpose,
      addressType: a.addressType,
      prefixLength: a.prefixLength,
      address: a.address,
      // The cloud answers a URL; the spec's spelling is kept when it names the same network.
      network:
        network && fp.network && networkPathOf(fp.network) === networkPathOf(network)
          ? fp.network
          : (networkPathOf(network) ?? network),
      description: a.description,
      labels: observedLabels(fp.labels, a.labels),
    }),
    atProvider: defined({ id: a.id, selfLink: a.selfLink, status: a.status }),
    availability: "Available",
    connectionDetails: defined({
      address: a.address,
      prefixLength: a.prefixLength !== undefined ? String(a.prefixLength) : undefined,
    }) as Record<string, string>,
  };
  if (a.labelFingerprint) fingerprints.set(obs, a.labelFingerprint);
  return obs;
}

class GlobalAddressClient implements ExternalClient<F, A> {
  readonly #addresses: GlobalCollection<CloudAddress>;
  constructor(addresses: GlobalCollection<CloudAddress>) {
    this.#addresses = addresses;
  }

  async observe(mr: MR, name: string | undefined): Promise<Observation> {
    if (!name) return { resourceExists: false };
    const a = await gcp(() => this.#addresses.find(name));
    if (a === CREATING) return { resourceExists: true, availability: "Creating" };
    return a ? observationOf(a, mr.spec.forProvider) : { resourceExists: false };
  }

  async create(mr: MR, name: string | undefined) {
    if (!name) throw new Error("an address needs a name (crossplane.io/external-name)");
    const fp = mr.spec.forProvider;
    if (!fp.network)
      throw new InvalidSpecError(
        "spec.forProvider.network (or networkRef) is required to create a VPC_PEERING range",
      );
    if (fp.prefixLength === undefined)
      throw new InvalidSpecError("spec.forProvider.prefixLength is required to create a VPC_PEERING range");
    await gcp(() =>
      this.#addresses.insert({
        name,
        purpose: fp.purpose ?? "VPC_PEERING",
        addressType: fp.addressType ?? "INTERNAL",
        prefixLength: fp.prefixLength,
        network: networkPathOf(fp.network) ?? fp.network,
        ...defined({ address: fp.address, description: fp.description }),
        ...(fp.labels && Object.keys(fp.labels).length > 0 ? { labels: fp.labels } : {}),
      }),
    );
    return {};
  }

  async update(mr: MR, name: string, obs: Observation) {
    const fp = mr.spec.forProvider;
    if (fp.labels === undefined || sameLabels(fp.labels, obs.observed?.labels)) return {};
    const body = { labels: fp.labels, labelFingerprint: fingerprints.get(obs) };
    await gcp(() => this.#addresses.change(name, body, "setLabels"));
    return {};
  }

  async delete(_mr: MR, name: string) {
    await gcp(() => this.#addresses.remove(name));
  }
}

export const globalAddressProvider = defineProvider({
  definition: GlobalAddress,
  limitsEachRequest: true,
  cloudEvents: {
    gcp: {
      serviceName: "compute.googleapis.com",
      methodNames: [
        "v1.compute.globalAddresses.insert",
        "v1.compute.globalAddresses.delete",
        "v1.compute.globalAddresses.setLabels",
      ],
      externalNames: byResourceName("addresses"),
    },
  },
  async connect(ctx: ConnectContext<GcpProviderConfigSpec>) {
    const cfg = await gcpNetworkingConfig(ctx);
    return new GlobalAddressClient(new GlobalCollection<CloudAddress>(cfg, "addresses", ctx.rateLimit));
  },
});
