// The generated Google kinds as registry entries: one generic provider per activated kind.
import type { ManagedKindProvider } from "../../../api/external.ts";
import type { GoogleKindSpec } from "../../../api/googleapis/spec.ts";
import { activatedGoogleSpecs } from "./activated.ts";
import { type GoogleProviderOptions, googleProvider } from "./client.ts";

// One provider per spec (the catalog hands out one spec object per kind): the registry at load and the
// served kinds at cold start and each sweep share it, its definition and the schemas built from it.
const built = new WeakMap<GoogleKindSpec, ManagedKindProvider>();

export function googleProviders(
  specs: readonly GoogleKindSpec[],
  opts?: GoogleProviderOptions,
): ManagedKindProvider[] {
  return specs.map((s) => {
    if (opts) return googleProvider(s, opts);
    let p = built.get(s);
    if (!p) {
      p = googleProvider(s);
      built.set(s, p);
    }
    return p;
  });
}

/** The activated generated kinds' providers (none unless activated: docs/gcp-generated.md). */
export const activatedGoogleKinds = (): ManagedKindProvider[] => googleProviders(activatedGoogleSpecs());
