import { z } from "zod";
import { optionalString } from "../fields.ts";
import { defineManagedKind } from "../managed.ts";
import { resourceGroupReference } from "./network.ts";

// Blob metadata names are C# identifiers; Azure compares them case-insensitively.
const MetadataName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "metadata names must be C# identifiers (letters, digits, _)");

export const ContainerForProvider = z.object({
  storageAccountName: z
    .string()
    .min(3)
    .max(24)
    .optional()
    .describe(
      "The storage account the container lives in. Defaults to (and must equal) the ProviderConfig's storage.accountName, whose credentials reach it; filled in after the first reconcile. Immutable.",
    ),
  resourceGroupName: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The resource group of the storage account; usually filled from resourceGroupNameRef or resourceGroupNameSelector, so the container waits until that ResourceGroup is Ready. The Blob service API has no resource groups: the value is recorded in status.atProvider, not checked against the cloud.",
    ),
  ...resourceGroupReference.fields,
  publicAccess: z
    .enum(["None", "Blob", "Container"])
    .optional()
    .describe("Anonymous read access: None, Blob (blobs only) or Container (blobs and listing)."),
  metadata: z
    .record(MetadataName, z.string())
    .optional()
    .describe("User metadata on the container (names are case-insensitive)."),
});

export const ContainerAtProvider = z.object({
  url: optionalString("The container's URL."),
  storageAccountName: optionalString("The storage account the container lives in."),
  resourceGroupName: optionalString(
    "The resource group named by the spec (not reported by the Blob service).",
  ),
});

export const Container = defineManagedKind({
  group: "storage.azure",
  kind: "Container",
  description:
    "An Azure Blob Storage container in the ProviderConfig's storage account. The external name is the container name (3–63 lowercase letters, digits and hyphens).",
  forProvider: ContainerForProvider,
  atProvider: ContainerAtProvider,
  immutable: ["storageAccountName"],
  connectionKeys: ["endpoint", "accountName", "containerName", "sasToken", "sasUrl", "sasExpiresOn"],
  fields: {
    // The Blob service has no resource groups: recorded in status.atProvider, never compared.
    resourceGroupName: { writeOnly: true },
  },
  references: [resourceGroupReference.def],
});
