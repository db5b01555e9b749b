// The generated Azure kinds as registry entries: one generic ARM provider per activated kind, with the
// Azure home (subscription, resource group, location; a tenant or management-group type's tenant); both shapes come from withNamespacedVariants.
import type { AzureKindSpec } from "../../../api/azure-gen/spec.ts";
import type { ManagedKindProvider } from "../../../api/external.ts";
import { withHome } from "../../home.ts";
import { azureGenHomeOf } from "../home.ts";
import { activatedAzureGenSpecs } from "./activated.ts";
import { armGenericProvider } from "./provider.ts";

export const azureGenProviders = (specs: readonly AzureKindSpec[]): ManagedKindProvider[] =>
  specs.map((s) => withHome(armGenericProvider(s), azureGenHomeOf(s)));

/** The activated generated kinds' providers (none unless activated). */
export const activatedAzureGenKinds = (): ManagedKindProvider[] =>
  azureGenProviders(activatedAzureGenSpecs());
