// The managed kinds the GCP functions serve: the GCP registry, imported by file (never through
// shared/providers/index.ts) so the Cloud Functions bundles carry Google's clients only, and the generated
// Google kinds the activation policies name, decided at run time from the data beside the bundle
// (gcp-kinds/).
import { withNamespacedVariants } from "../../shared/api/external.ts";
import { noneIfNotGenerated } from "../../shared/api/generated-catalog.ts";
import { GoogleNotGeneratedError, googleSpecsFor } from "../../shared/api/googleapis/catalog.ts";
import type { Kube } from "../../shared/kube/client.ts";
import { readServed, type Served } from "../../shared/ops/served-kinds.ts";
import { googleProviders } from "../../shared/providers/gcp/generic/kinds.ts";
import { gcpHome } from "../../shared/providers/gcp/home.ts";
import { gcpKinds } from "../../shared/providers/gcp/kinds.ts";
import { withHome } from "../../shared/providers/home.ts";

export { gcpKinds, gcpProviderConfigKinds } from "../../shared/providers/gcp/kinds.ts";

/** What the GCP functions serve now: the hand-written kinds and the activated generated ones (both shapes). */
export const servedGcpKinds = (kube: Kube, envPatterns: readonly string[] = []): Promise<Served> =>
  readServed({
    kube,
    handWritten: gcpKinds,
    envPatterns,
    generatedFor: (patterns) =>
      withNamespacedVariants(
        googleProviders(noneIfNotGenerated(GoogleNotGeneratedError, () => googleSpecsFor(patterns))).map(
          (p) => withHome(p, gcpHome),
        ),
      ),
  });
