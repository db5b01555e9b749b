// The generated AWS kinds as registry entries: one Cloud Control provider per activated kind (both
// shapes come from withNamespacedVariants in providers/aws/kinds.ts, like every hand-written kind).
import type { AwsccKindSpec } from "../../api/awscc/spec.ts";
import type { ManagedKindProvider } from "../../api/external.ts";
import { activatedAwsccSpecs } from "./activated.ts";
import { type CloudControlOptions, cloudControlProvider } from "./cloudcontrol.ts";

export function awsccProviders(
  specs: readonly AwsccKindSpec[],
  opts: CloudControlOptions = {},
): ManagedKindProvider[] {
  return specs.map((s) => cloudControlProvider(s, opts));
}

/** The activated generated kinds' providers (none unless activated). */
export const activatedAwsccKinds = (): ManagedKindProvider[] => awsccProviders(activatedAwsccSpecs());
