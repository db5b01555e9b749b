// The generated Google kinds as registry entries: one generic provider per activated kind.
import type { ManagedKindProvider } from "../../../api/external.ts";
import type { GoogleKindSpec } from "../../../api/googleapis/spec.ts";
import { providersBuiltOnce } from "../../built-once.ts";
import { activatedGoogleSpecs } from "./activated.ts";
import { type GoogleProviderOptions, googleProvider } from "./client.ts";

/** One provider per spec, shared by the registry and the served kinds (providers/built-once.ts). */
export const googleProviders = providersBuiltOnce<GoogleKindSpec, GoogleProviderOptions>(googleProvider);

/** The activated generated kinds' providers (none unless activated: docs/gcp-generated.md). */
export const activatedGoogleKinds = (): ManagedKindProvider[] => googleProviders(activatedGoogleSpecs());
