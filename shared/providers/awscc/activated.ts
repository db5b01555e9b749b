// The generated kinds this process reconciles. Here (tests, the CLI, `driftless run` from the
// repository) they are the ones DRIFTLESS_ACTIVATE selects, read from the generated directory; a
// function bundle gets instead a copy of this module holding just those kinds' specs, made by
// infra/build/build.ts from the activation list at build time — no schema database, no file reads.
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
