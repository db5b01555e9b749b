import { z } from "zod";
import { optionalString } from "../fields.ts";
import { defineTaggedKind } from "../managed.ts";

export const AzureTags = z
  .record(z.string().min(1).max(512), z.string().max(256))
  .describe("Tags on the Azure resource.");

/** The resource id in a kind's atProvider: `id: AzureId("server")` ("The server's Azure resource id."). */
export const AzureId = (what: string) => optionalString(`The ${what}'s Azure resource id.`);

export const ResourceGroupForProvider = z.object({
  location: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Azure region, e.g. westeurope or "West Europe" (both name the same region). Required to create; filled in on import. Immutable.',
    ),
  tags: AzureTags.optional(),
});

export const ResourceGroupAtProvider = z.object({
  id: AzureId("resource group"),
  provisioningState: optionalString(
    "Provisioning state reported by Azure Resource Manager, e.g. Succeeded or Deleting.",
  ),
});

export const ResourceGroup = defineTaggedKind("tags", {
  group: "resources.azure",
  kind: "ResourceGroup",
  description: "An Azure resource group. The external name is the resource group name.",
  forProvider: ResourceGroupForProvider,
  atProvider: ResourceGroupAtProvider,
  immutable: ["location"],
});
