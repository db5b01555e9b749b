// The generated kinds of every cloud (AWS through Cloud Control, Azure through ARM, Google through its
// protos) that an activation list selects — DRIFTLESS_ACTIVATE's patterns and the cluster's activation
// policies' —, as registry entries in both shapes: what `driftless run` serves beside the hand-written
// kinds, read again each sweep. A cloud whose kinds were never generated contributes none.
import { AwsccNotGeneratedError, awsccSpecsFor, loadAwsccCatalog } from "../api/awscc/catalog.ts";
import { AzureGenNotGeneratedError, azureGenSpecsFor, loadAzureCatalog } from "../api/azure-gen/catalog.ts";
import { type ManagedKindProvider, withNamespacedVariants } from "../api/external.ts";
import { noneIfNotGenerated } from "../api/generated-catalog.ts";
import { GoogleNotGeneratedError, googleSpecsFor, loadGoogleCatalog } from "../api/googleapis/catalog.ts";
import type { GeneratedCatalogs } from "../ops/activation-policy.ts";
import { awsccProviders } from "./awscc/kinds.ts";
import { azureGenProviders } from "./azure/arm-generic/kinds.ts";
import { googleProviders } from "./gcp/generic/kinds.ts";
import { gcpHome } from "./gcp/home.ts";
import { withHome } from "./home.ts";

/** The providers (both shapes) of the generated kinds `patterns` select, on every cloud. */
export function generatedProvidersFor(patterns: readonly string[]): ManagedKindProvider[] {
  return withNamespacedVariants([
    ...awsccProviders(noneIfNotGenerated(AwsccNotGeneratedError, () => awsccSpecsFor(patterns))),
    ...azureGenProviders(noneIfNotGenerated(AzureGenNotGeneratedError, () => azureGenSpecsFor(patterns))),
    ...googleProviders(noneIfNotGenerated(GoogleNotGeneratedError, () => googleSpecsFor(patterns))).map((p) =>
      withHome(p, gcpHome),
    ),
  ]);
}

/** The catalogs that are generated here, for the policies' status (what each one activates). */
export function generatedCatalogs(): GeneratedCatalogs {
  const attempt = <T>(read: () => T): T | undefined => {
    try {
      return read();
    } catch {
      return undefined;
    }
  };
  return {
    awscc: attempt(loadAwsccCatalog),
    azure: attempt(loadAzureCatalog),
    google: attempt(loadGoogleCatalog),
  };
}
