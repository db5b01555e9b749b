import type { z } from "zod";
import type { ExternalObservation } from "../../api/external.ts";
import { Network, type NetworkAtProvider, type NetworkForProvider } from "../../api/gcp/compute.ts";
import { defined } from "../../api/json.ts";
import { computeProvider, type Json } from "./compute-common.ts";

type F = z.infer<typeof NetworkForProvider>;
type A = z.infer<typeof NetworkAtProvider>;

interface CloudNetwork {
  id?: string;
  selfLink?: string;
  description?: string;
  autoCreateSubnetworks?: boolean;
  mtu?: number;
  routingConfig?: { routingMode?: "REGIONAL" | "GLOBAL" };
  peerings?: Array<{ name?: string }>;
}

function observationOf(net: CloudNetwork): ExternalObservation<F, A> {
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

export const computeNetworkProvider = computeProvider<
  typeof NetworkForProvider,
  typeof NetworkAtProvider,
  CloudNetwork
>(Network, {
  collection: "networks",
  what: "network",
  events: "networks",
  methods: ["insert", "patch", "delete"],
  observationOf,
  insertBody: (fp, name) => ({
    name,
    autoCreateSubnetworks: fp.autoCreateSubnetworks ?? true,
    ...defined({ mtu: fp.mtu, description: fp.description }),
    ...(fp.routingMode ? { routingConfig: { routingMode: fp.routingMode } } : {}),
  }),
  change: (fp, obs) => {
    const seen = obs.observed ?? {};
    const body: Json = {};
    if (fp.mtu !== undefined && fp.mtu !== seen.mtu) body.mtu = fp.mtu;
    if (fp.routingMode !== undefined && fp.routingMode !== seen.routingMode)
      body.routingConfig = { routingMode: fp.routingMode };
    return Object.keys(body).length > 0 ? { body } : undefined;
  },
});
