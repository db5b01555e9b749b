// The generated AWS kinds as registry entries: one Cloud Control provider per activated kind (both
// shapes come from withNamespacedVariants in providers/aws/kinds.ts, like every hand-written kind).
import type { AwsccKindSpec } from "../../api/awscc/spec.ts";
import type { ManagedKindProvider } from "../../api/external.ts";
import { providersBuiltOnce } from "../built-once.ts";
import { activatedAwsccSpecs } from "./activated.ts";
import { type CloudControlOptions, cloudControlProvider } from "./cloudcontrol.ts";

/** One provider per spec, shared by the registry and the served kinds (providers/built-once.ts). */
export const awsccProviders = providersBuiltOnce<AwsccKindSpec, CloudControlOptions>(cloudControlProvider);

/** The activated generated kinds' providers (none unless activated). */
export const activatedAwsccKinds = (): ManagedKindProvider[] => awsccProviders(activatedAwsccSpecs());
