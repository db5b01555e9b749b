// The managed kinds the AWS functions serve: the AWS registry, imported by file (never through
// shared/providers/index.ts) so the Lambda bundles carry the AWS SDK only, and the generated kinds the
// activation policies name, decided at run time from the data beside the bundle (dist/awscc).
import { AwsccNotGeneratedError, awsccSpecsFor } from "../../shared/api/awscc/catalog.ts";
import { withNamespacedVariants } from "../../shared/api/external.ts";
import { noneIfNotGenerated } from "../../shared/api/generated-catalog.ts";
import type { Kube } from "../../shared/kube/client.ts";
import { readServed, type Served } from "../../shared/ops/served-kinds.ts";
import { awsKinds } from "../../shared/providers/aws/kinds.ts";
import { awsccProviders } from "../../shared/providers/awscc/kinds.ts";

export { awsKinds, awsProviderConfigKinds } from "../../shared/providers/aws/kinds.ts";

/** What the AWS functions serve now: the hand-written kinds and the activated generated ones (both shapes). */
export const servedAwsKinds = (kube: Kube, envPatterns: readonly string[] = []): Promise<Served> =>
  readServed({
    kube,
    handWritten: awsKinds,
    envPatterns,
    generatedFor: (patterns) =>
      withNamespacedVariants(
        awsccProviders(noneIfNotGenerated(AwsccNotGeneratedError, () => awsccSpecsFor(patterns))),
      ),
  });
