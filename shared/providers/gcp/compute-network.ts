import type { z } from "zod";
import { byResourceName } from "../../api/cloud-events.ts";
import {
  type ConnectContext,
  defineProvider,
  type ExternalClient,
  type ExternalObservation,
} from "../../api/external.ts";
import { Network, type NetworkAtProvider, type NetworkForProvider } from "../../api/gcp/compute.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { GcpProviderConfigSpec } from "../../api/provider-config.ts";
import { CREATING, GlobalCollection, type Json } from "./compute-common.ts";
import { gcp } from "./config.ts";
import { gcpNetworkingConfig } from "./google-rest.ts";
import { defined } from "./sql-common.ts";

type F = z.infer<typeof NetworkForProvider>;
type A = z.infer<typeof NetworkAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

interface CloudNetwork {
  id?: string;
  selfLink?: string;
  description?: string;
  autoCreateSubnetworks?: boolean;
  mtu?: number;
  routingConfig?: { routingMode?: "REGIONAL" | "GLOBAL" };
  peerings?: Array<{ name?: string }>;
}

function observationOf(net: CloudNetwork): Observation {
  const peerings = (net.peerings ?? []).flatMap((p) => (p.name ? [p.name] : []));
  return {
    resourceExists: true,
    observed: defined({
      autoCreateSubnetworks: net.autoCreateSubnetworks,
      routingMode: net.routingConfig?.routingMode,
      mtu: net.mtu,
      description: net.description,
    }),
    atProvider: defined({
      id: net.id,
      selfLink: net.selfLink,
      peerings: peerings.length > 0 ? peerings : undefined,
    }),
    availability: "Available",
  };
}

class NetworkClient implements ExternalClient<F, A> {
  readonly #networks: GlobalCollection<CloudNetwork>;
  constructor(networks: GlobalCollection<CloudNetwork>) {
    this.#networks = networks;
  }

  async observe(_mr: MR, name: string | undefined): Promise<Observation> {
    if (!name) return { resourceExists: false };
    const net = await gcp(() => this.#networks.find(name));
    if (net === CREATING) return { resourceExists: true, availability: "Creating" };
    return net ? observationOf(net) : { resourceExists: false };
  }

  async create(mr: MR, name: string | undefined) {
    if (!name) throw new Error("a network needs a name (crossplane.io/external-name)");
    const fp = mr.spec.forProvider;
    await gcp(() =>
      this.#networks.insert({
        name,
        autoCreateSubnetworks: fp.autoCreateSubnetworks ?? true,
        ...defined({ mtu: fp.mtu, description: fp.description }),
        ...(fp.routingMode ? { routingConfig: { routingMode: fp.routingMode } } : {}),
      }),
    );
    return {};
  }

  async update(mr: MR, name: string, obs: Observation) {
    const fp = mr.spec.forProvider;
    const seen = obs.observed ?? {};
    const body: Json = {};
    if (fp.mtu !== undefined && fp.mtu !== seen.mtu) body.mtu = fp.mtu;
    if (fp.routingMode !== undefined && fp.routingMode !== seen.routingMode)
      body.routingConfig = { routingMode: fp.routingMode };
    if (Object.keys(body).length > 0) await gcp(() => this.#networks.change(name, body));
    return {};
  }

  async delete(_mr: MR, name: string) {
    // Addresses or peerings (a private services connection) still holding it: the engine waits for them.
    await gcp(() => this.#networks.remove(name));
  }
}

export const computeNetworkProvider = defineProvider({
  definition: Network,
  limitsEachRequest: true,
  cloudEvents: {
    gcp: {
      serviceName: "compute.googleapis.com",
      methodNames: ["v1.compute.networks.insert", "v1.compute.networks.patch", "v1.compute.networks.delete"],
      externalNames: byResourceName("networks"),
    },
  },
  async connect(ctx: ConnectContext<GcpProviderConfigSpec>) {
    const cfg = await gcpNetworkingConfig(ctx);
    return new NetworkClient(new GlobalCollection<CloudNetwork>(cfg, "networks", ctx.rateLimit));
  },
});
