// The generated Azure kinds this process reconciles: the ones DRIFTLESS_ACTIVATE selects (patterns
// `azure:<rp>.<kind>` or CRD-name globs with `azure.gen`), read from the generated directory.
import { AzureGenNotGeneratedError, azureGenSpecsFor } from "../../../api/azure-gen/catalog.ts";
import type { AzureKindSpec } from "../../../api/azure-gen/spec.ts";
import { activationPatterns, noneIfNotGenerated } from "../../../api/generated-catalog.ts";

export const activatedAzureGenSpecs = (): AzureKindSpec[] =>
  noneIfNotGenerated(AzureGenNotGeneratedError, () => azureGenSpecsFor(activationPatterns()));
