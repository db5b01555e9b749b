// The generated Google kinds as registry entries: one generic provider per activated kind.
import type { ManagedKindProvider } from "../../../api/external.ts";
import type { GoogleKindSpec } from "../../../api/googleapis/spec.ts";
import { activatedGoogleSpecs } from "./activated.ts";
import { type GoogleProviderOptions, googleProvider } from "./client.ts";

export function googleProviders(
  specs: readonly GoogleKindSpec[],
  opts: GoogleProviderOptions = {},
): ManagedKindProvider[] {
  return specs.map((s) => googleProvider(s, opts));
}

/** The activated generated kinds' providers (none unless activated: docs/gcp-generated.md). */
export const activatedGoogleKinds = (): ManagedKindProvider[] => googleProviders(activatedGoogleSpecs());
