import { z } from "zod";
import { optionalString } from "../fields.ts";
import { defineManagedKind, defineTaggedKind, type ManagedResource } from "../managed.ts";
import { referenceTo } from "../reference.ts";

/** A network's path as Compute and Service Networking take it: projects/P/global/networks/N. */
export function networkPathOf(selfLinkOrPath: string | undefined): string | undefined {
  const m = /(?:^|\/)(projects\/[^/]+\/global\/networks\/[^/]+)$/.exec(selfLinkOrPath ?? "");
  return m?.[1];
}

/** What a reference to a Network fills in: its path, from the self link the cloud reported. */
export const networkPathOfTarget = (target: ManagedResource) =>
  networkPathOf((target.status?.atProvider as { selfLink?: string } | undefined)?.selfLink);

export const NetworkForProvider = z.object({
  autoCreateSubnetworks: z
    .boolean()
    .optional()
    .describe(
      "true: auto mode, a subnetwork in every region; false: custom mode. Google's default: true. Immutable here (switching to custom mode is a separate call driftless does not make).",
    ),
  routingMode: z
    .enum(["REGIONAL", "GLOBAL"])
    .optional()
    .describe(
      "Whether Cloud Routers learn routes of their own region only or of all regions (default REGIONAL).",
    ),
  mtu: z
    .number()
    .int()
    .min(1300)
    .max(8896)
    .optional()
    .describe("Maximum transmission unit in bytes (default 1460)."),
  description: z.string().max(2048).optional().describe("Description of the network. Immutable."),
});

export const NetworkAtProvider = z.object({
  id: optionalString("The network's numeric id."),
  selfLink: optionalString("The network's URL; references to it take its path from here."),
  peerings: z
    .array(z.string())
    .optional()
    .describe(
      "Names of the network's peerings (servicenetworking-googleapis-com once a private services connection exists).",
    ),
});

export const Network = defineManagedKind({
  group: "compute.gcp",
  kind: "Network",
  description:
    "A Google Cloud VPC network. The external name is the network name. An existing network is adopted with only crossplane.io/external-name and an empty forProvider; its settings are then late-initialized.",
  forProvider: NetworkForProvider,
  atProvider: NetworkAtProvider,
  immutable: ["autoCreateSubnetworks", "description"],
  connectionKeys: [],
});

/** The reference that fills `network` from a Network resource's path. */
export const networkReference = referenceTo("network", Network, {
  fills: "path",
  extract: networkPathOfTarget,
});

/** `network`, `networkRef` and `networkSelector`: a network by path or URL, or by its Network resource. */
export function networkFields(what: string) {
  return {
    network: z
      .string()
      .min(1)
      .optional()
      .describe(`${what}: projects/P/global/networks/N or its URL. Required to create. Immutable.`),
    ...networkReference.fields,
  };
}

export const GlobalAddressForProvider = z.object({
  purpose: z
    .enum(["VPC_PEERING"])
    .optional()
    .describe(
      "VPC_PEERING: an internal range reserved for private services access (e.g. Cloud SQL private IP). Default VPC_PEERING. Immutable.",
    ),
  addressType: z
    .enum(["INTERNAL"])
    .optional()
    .describe("INTERNAL (the only type for VPC_PEERING). Immutable."),
  prefixLength: z
    .number()
    .int()
    .min(8)
    .max(29)
    .optional()
    .describe("Size of the reserved range, e.g. 16 for a /16. Required to create. Immutable."),
  address: z
    .string()
    .min(1)
    .optional()
    .describe("First address of the range, e.g. 10.10.0.0; Google picks a free one when unset. Immutable."),
  ...networkFields("The network the range is reserved in"),
  description: z.string().max(2048).optional().describe("Description of the range. Immutable."),
  labels: z.record(z.string(), z.string()).optional().describe("Labels on the address."),
});

export const GlobalAddressAtProvider = z.object({
  id: optionalString("The address's numeric id."),
  selfLink: optionalString("The address's URL."),
  status: optionalString("RESERVED, RESERVING or IN_USE."),
});

export const GlobalAddress = defineTaggedKind("labels", {
  group: "compute.gcp",
  kind: "GlobalAddress",
  plural: "globaladdresses",
  description:
    "A Google Cloud global internal address range (purpose VPC_PEERING) reserved in a network for private services access. The external name is the address name.",
  forProvider: GlobalAddressForProvider,
  atProvider: GlobalAddressAtProvider,
  immutable: ["purpose", "addressType", "prefixLength", "address", "network", "description"],
  connectionKeys: ["address", "prefixLength"],
  references: [networkReference.def],
});
