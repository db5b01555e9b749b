// The generated kinds this process reconciles. Here (tests, the CLI, `driftless run` from the
// repository) they are the ones DRIFTLESS_ACTIVATE selects, read from the generated directory; a
// function bundle gets instead a copy of this module holding just those kinds' specs, made by
// infra/build/build.ts from the activation list at build time — no schema database, no file reads.
import { activatedAwsccEntries, awsccDir, loadAwsccCatalog, loadAwsccSpec } from "../../api/awscc/catalog.ts";
import type { AwsccKindSpec } from "../../api/awscc/spec.ts";

/** The activation list, comma-separated (the same variable functions/config.ts documents). */
const patterns = () =>
  (process.env.DRIFTLESS_ACTIVATE ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);

export function activatedAwsccSpecs(): AwsccKindSpec[] {
  const list = patterns();
  if (list.length === 0) return [];
  const dir = awsccDir();
  let catalog: ReturnType<typeof loadAwsccCatalog>;
  try {
    catalog = loadAwsccCatalog(dir);
  } catch {
    return []; // not generated: only hand-written kinds, as before generated kinds existed
  }
  return activatedAwsccEntries(list, catalog).map((e) => loadAwsccSpec(e, dir));
}
