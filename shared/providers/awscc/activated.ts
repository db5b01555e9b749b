// The generated kinds DRIFTLESS_ACTIVATE selects, read from the generated directory (.generated/awscc in
// the repository, dist/awscc beside a bundle): the registry's static list. What a process serves at run
// time adds the cluster's activation policies (shared/ops/served-kinds.ts, `driftless run`).
import { awsccSpecsFor } from "../../api/awscc/catalog.ts";
import type { AwsccKindSpec } from "../../api/awscc/spec.ts";

/** The activation list, comma-separated (the same variable functions/config.ts documents). */
const patterns = () =>
  (process.env.DRIFTLESS_ACTIVATE ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);

export function activatedAwsccSpecs(): AwsccKindSpec[] {
  try {
    return awsccSpecsFor(patterns());
  } catch {
    return []; // not generated: only hand-written kinds, as before generated kinds existed
  }
}
