// The generated kinds DRIFTLESS_ACTIVATE selects, read from the generated directory (.generated/awscc in
// the repository, dist/awscc beside a bundle): the registry's static list. What a process serves at run
// time adds the cluster's activation policies (shared/ops/served-kinds.ts, `driftless run`).
import { AwsccNotGeneratedError, awsccSpecsFor } from "../../api/awscc/catalog.ts";
import type { AwsccKindSpec } from "../../api/awscc/spec.ts";
import { activationPatterns, noneIfNotGenerated } from "../../api/generated-catalog.ts";

export const activatedAwsccSpecs = (): AwsccKindSpec[] =>
  noneIfNotGenerated(AwsccNotGeneratedError, () => awsccSpecsFor(activationPatterns()));
