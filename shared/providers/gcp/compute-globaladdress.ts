import type { z } from "zod";
import { type ExternalObservation, InvalidSpecError } from "../../api/external.ts";
import {
  GlobalAddress,
  type GlobalAddressAtProvider,
  type GlobalAddressForProvider,
  networkPathOf,
} from "../../api/gcp/compute.ts";
import { defined } from "../../api/json.ts";
import { computeProvider } from "./compute-common.ts";
import { observedLabels, sameLabels } from "./config.ts";

type F = z.infer<typeof GlobalAddressForProvider>;
type Observation = ExternalObservation<F, z.infer<typeof GlobalAddressAtProvider>>;

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

function observationOf(a: CloudAddress, fp: F): Observation {
  const network = a.network;
  return {
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
}

export const globalAddressProvider = computeProvider<
  typeof GlobalAddressForProvider,
  typeof GlobalAddressAtProvider,
  CloudAddress
>(GlobalAddress, {
  collection: "addresses",
  what: "address",
  events: "globalAddresses",
  methods: ["insert", "delete", "setLabels"],
  observationOf,
  insertBody: (fp, name) => {
    if (!fp.network)
      throw new InvalidSpecError(
        "spec.forProvider.network (or networkRef) is required to create a VPC_PEERING range",
      );
    if (fp.prefixLength === undefined)
      throw new InvalidSpecError("spec.forProvider.prefixLength is required to create a VPC_PEERING range");
    return {
      name,
      purpose: fp.purpose ?? "VPC_PEERING",
      addressType: fp.addressType ?? "INTERNAL",
      prefixLength: fp.prefixLength,
      network: networkPathOf(fp.network) ?? fp.network,
      ...defined({ address: fp.address, description: fp.description }),
      ...(fp.labels && Object.keys(fp.labels).length > 0 ? { labels: fp.labels } : {}),
    };
  },
  // Labels change by setLabels, with the fingerprint of the labels read (Compute refuses a stale one).
  change: (fp, obs, cloud) =>
    fp.labels === undefined || sameLabels(fp.labels, obs.observed?.labels)
      ? undefined
      : { body: { labels: fp.labels, labelFingerprint: cloud?.labelFingerprint }, verb: "setLabels" },
});
