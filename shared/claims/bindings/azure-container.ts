import { Container } from "../../api/azure/storage.ts";
import { AzureContainerClass } from "../../api/claims/classes.ts";
import type { ClassBinding } from "../binding.ts";

/** Bucket claims as Azure Blob Storage containers; the template names the resource group. */
export const azureContainerBinding: ClassBinding = {
  class: AzureContainerClass,
  parts: [
    {
      role: "container",
      type: Container,
      primary: true,
      portable: () => ({}),
      labelsField: "metadata",
    },
  ],
  connection: (d) => ({ service: "azure-blob", ...(d.containerName ? { bucket: d.containerName } : {}) }),
  unsupported: (claim) =>
    claim.versioning === true
      ? "AzureContainerClass cannot serve versioning: true (Azure versions blobs per storage account, not per container); choose another class or drop versioning"
      : undefined,
};
