import { z } from "zod";
import { optionalString } from "../fields.ts";
import { defineManagedKind } from "../managed.ts";
import { listReferenceTo } from "../reference.ts";
import { GlobalAddress, networkFields, networkReference } from "./compute.ts";

const peeringRangeReference = listReferenceTo("reservedPeeringRange", GlobalAddress, { fills: "name" });

export const ConnectionForProvider = z.object({
  ...networkFields("The consumer network"),
  service: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The producer service; default servicenetworking.googleapis.com (Cloud SQL and others). Immutable.",
    ),
  reservedPeeringRanges: z
    .array(z.string().min(1))
    .optional()
    .describe(
      "Names of VPC_PEERING GlobalAddresses of the network the service may use; compared as a set. Required to create.",
    ),
  ...peeringRangeReference.fields,
});

export const ConnectionAtProvider = z.object({
  peering: optionalString("The VPC peering the connection made (servicenetworking-googleapis-com)."),
  service: optionalString("The producer service, services/…"),
});

export const Connection = defineManagedKind({
  group: "servicenetworking.gcp",
  kind: "Connection",
  description:
    "A private services connection: peers a network with Google's service producers (Cloud SQL private IP) over reserved ranges. One per network and service; its external name is <network path>:<service>, recorded on create, and an existing connection of the network is adopted.",
  forProvider: ConnectionForProvider,
  atProvider: ConnectionAtProvider,
  immutable: ["network", "service"],
  connectionKeys: [],
  externalName: "providerChosen",
  references: [networkReference.def, peeringRangeReference.def],
});
