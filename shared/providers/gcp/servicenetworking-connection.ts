import type { z } from "zod";
import {
  type ConnectContext,
  defineProvider,
  type ExternalClient,
  type ExternalListing,
  type ExternalObservation,
  InvalidSpecError,
} from "../../api/external.ts";
import { networkPathOf } from "../../api/gcp/compute.ts";
import {
  Connection,
  type ConnectionAtProvider,
  type ConnectionForProvider,
} from "../../api/gcp/servicenetworking.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { GcpProviderConfigSpec } from "../../api/provider-config.ts";
import { deleted } from "../deleted.ts";
import { GlobalCollection } from "./compute-common.ts";
import { gcp, httpStatus, observedSet } from "./config.ts";
import {
  type GcpNetworkingConfig,
  type GoogleRestClient,
  gcpNetworkingConfig,
  networkingClients,
} from "./google-rest.ts";

type F = z.infer<typeof ConnectionForProvider>;
type A = z.infer<typeof ConnectionAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

const DEFAULT_SERVICE = "servicenetworking.googleapis.com";

interface CloudConnection {
  network?: string;
  reservedPeeringRanges?: string[];
  peering?: string;
  service?: string;
}

const clients = networkingClients("serviceNetworkingEndpoint", "/v1");

const RECORDED_NAME = /^(projects\/[^/]+\/global\/networks\/[^/:]+):(.+)$/;

/** The network and service: from the recorded `<network path>:<service>`, else from the spec. */
function target(mr: MR, name: string | undefined) {
  const fp = mr.spec.forProvider;
  const recorded = name ? RECORDED_NAME.exec(name) : null;
  return {
    network: recorded?.[1] ?? networkPathOf(fp.network),
    service: recorded?.[2] ?? fp.service ?? DEFAULT_SERVICE,
  };
}

class ConnectionClient implements ExternalClient<F, A> {
  readonly #api: GoogleRestClient;
  readonly #cfg: GcpNetworkingConfig;
  readonly #rateLimit: (() => Promise<void>) | undefined;
  constructor(api: GoogleRestClient, cfg: GcpNetworkingConfig, rateLimit: (() => Promise<void>) | undefined) {
    this.#api = api;
    this.#cfg = cfg;
    this.#rateLimit = rateLimit;
  }

  /**
   * Every connection of the default service in the ProviderConfig's project (`driftless import`):
   * connections.list takes the consumer network, so the project's networks are listed first (Compute
   * networks.list), then each network's connections.
   */
  async list(): Promise<ExternalListing[]> {
    const out: ExternalListing[] = [];
    await gcp(async () => {
      const networks = await new GlobalCollection(this.#cfg, "networks", this.#rateLimit).names();
      for (const n of networks) {
        const network = `projects/${this.#cfg.projectId}/global/networks/${n}`;
        const found = await this.#api.request<{ connections?: CloudConnection[] }>(
          "GET",
          `/services/${encodeURIComponent(DEFAULT_SERVICE)}/connections`,
          { query: { network }, rateLimit: this.#rateLimit },
        );
        if ((found.connections ?? []).length > 0)
          out.push({ externalName: `${network}:${DEFAULT_SERVICE}`, forProvider: { network } });
      }
    });
    return out;
  }

  async observe(mr: MR, name: string | undefined): Promise<Observation> {
    const { network, service } = target(mr, name);
    // Without a recorded name the network finds it: there is one connection per network and service.
    if (!network) return { resourceExists: false };
    const fp = mr.spec.forProvider;
    return gcp(async () => {
      const out = await this.#api.request<{ connections?: CloudConnection[] }>(
        "GET",
        `/services/${encodeURIComponent(service)}/connections`,
        { query: { network }, rateLimit: this.#rateLimit },
      );
      const c = out.connections?.[0];
      if (!c) return { resourceExists: false };
      const ranges = c.reservedPeeringRanges ?? [];
      return {
        resourceExists: true,
        externalName: `${network}:${service}`,
        observed: {
          network: fp.network && networkPathOf(fp.network) === network ? fp.network : network,
          service: fp.service ?? service,
          reservedPeeringRanges: observedSet(fp.reservedPeeringRanges, ranges),
        },
        atProvider: {
          ...(c.peering ? { peering: c.peering } : {}),
          ...(c.service ? { service: c.service } : {}),
        },
        availability: "Available",
      };
    });
  }

  async create(mr: MR, name: string | undefined) {
    const { network, service } = target(mr, name);
    const ranges = mr.spec.forProvider.reservedPeeringRanges;
    if (!network)
      throw new InvalidSpecError(
        "spec.forProvider.network (or networkRef) is required to create a connection",
      );
    if (!ranges || ranges.length === 0)
      throw new InvalidSpecError(
        "spec.forProvider.reservedPeeringRanges (or its refs) is required to create a connection",
      );
    await gcp(() =>
      this.#api.request("POST", `/services/${encodeURIComponent(service)}/connections`, {
        body: { network, reservedPeeringRanges: ranges },
        rateLimit: this.#rateLimit,
      }),
    );
    return { externalName: `${network}:${service}` };
  }

  async update(mr: MR, name: string, obs: Observation) {
    const { network, service } = target(mr, name);
    const want = mr.spec.forProvider.reservedPeeringRanges;
    const have = obs.observed?.reservedPeeringRanges ?? [];
    if (!want || !network) return {};
    // Removing a range the service still uses is the user's explicit choice: force it, as asked.
    const removes = have.some((r) => !want.includes(r));
    await gcp(() =>
      this.#api.request("PATCH", `/services/${encodeURIComponent(service)}/connections/-`, {
        query: { updateMask: "reservedPeeringRanges", force: String(removes) },
        body: { network, reservedPeeringRanges: want },
        rateLimit: this.#rateLimit,
      }),
    );
    return {};
  }

  async delete(mr: MR, name: string) {
    const { network, service } = target(mr, name);
    if (!network) return;
    const path = `/services/${encodeURIComponent(service)}/connections/servicenetworking-googleapis-com:deleteConnection`;
    const body = { consumerNetwork: network };
    await gcp(() =>
      deleted(
        () => this.#api.request("POST", path, { body, rateLimit: this.#rateLimit }),
        (err) => httpStatus(err) === 404,
      ),
    );
  }
}

export const connectionProvider = defineProvider({
  definition: Connection,
  limitsEachRequest: true,
  // The peering lives on the network its spec names: another network is another home.
  homeParents: { network: "network" },
  async connect(ctx: ConnectContext<GcpProviderConfigSpec>) {
    const cfg = await gcpNetworkingConfig(ctx);
    return new ConnectionClient(clients.get(cfg), cfg, ctx.rateLimit);
  },
});
