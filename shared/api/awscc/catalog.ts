// Where the generated kinds are read from, and which of them an activation list selects. The specs are
// data generated at install time (infra/gen-awscc.ts → .generated/awscc/); a function bundle never
// reads them from disk: infra/build/build.ts bakes the activated ones in (providers/awscc/activated.ts).
import { namedError } from "../../named-error.ts";
import { activationGlob, eitherShape, generatedCatalog, generatedCrdNames } from "../generated-catalog.ts";
import {
  AWSCC_GROUP_SUFFIX,
  type AwsccCatalog,
  type AwsccCatalogEntry,
  type AwsccKindSpec,
  awsccAliasOf,
} from "./spec.ts";

export class AwsccNotGeneratedError extends namedError("AwsccNotGeneratedError", Error) {}

const store = generatedCatalog<AwsccCatalog, AwsccCatalogEntry, AwsccKindSpec>({
  folder: "awscc",
  env: "DRIFTLESS_AWSCC_DIR",
  missing: (file) =>
    new AwsccNotGeneratedError(
      `the generated AWS kinds are missing (${file}): run npm run gen:awscc (npm ci runs it too)`,
    ),
});
/** The generated directory: DRIFTLESS_AWSCC_DIR, the repository's .generated/awscc, or dist/awscc. */
export const awsccDir = store.dir;
export const loadAwsccCatalog = store.catalog;
export const loadAwsccSpec = store.spec;

/** Whether an API group is a generated AWS kind's (`dynamodb.awscc.driftless.dev`, `dynamodb.awscc.m.…`). */
export const isAwsccGroup = (group: string) => group.split(".")[1] === AWSCC_GROUP_SUFFIX;

/**
 * Whether an activation pattern selects a generated kind's CRD. Generated kinds are never in
 * "everything": a pattern selects them only by naming them — by the `<service>.<kind>` alias
 * (`dynamodb.table`, `dynamodb.*`: both shapes; the first part must be a service, not `*`) or by a
 * CRD-name glob that says `awscc` (`tables.dynamodb.awscc.driftless.dev`, `*.awscc.*` for all of them).
 */
export function awsccPatternSelects(
  pattern: string,
  crdName: string,
  e: { group: string; kind: string },
): boolean {
  const p = pattern.trim().toLowerCase();
  if (p.includes("awscc")) return activationGlob(p).test(crdName);
  const first = p.split(".")[0] ?? "";
  if (!first || first.includes("*")) return false;
  return activationGlob(p).test(awsccAliasOf(e));
}

/** awsccPatternMatches with the pattern's work done once (a cold start tests every pattern on 1,401 kinds). */
function patternMatcher(pattern: string): (e: { group: string; kind: string; plural: string }) => boolean {
  const p = pattern.trim().toLowerCase();
  const re = activationGlob(p);
  if (p.includes("awscc")) return (e) => generatedCrdNames(e).some((n) => re.test(n));
  const first = p.split(".")[0] ?? "";
  if (!first || first.includes("*")) return () => false;
  return (e) => re.test(awsccAliasOf(e));
}

/** Whether a pattern selects either shape of a generated kind. */
export const awsccPatternMatches = eitherShape(awsccPatternSelects);

/** The generated kinds an activation list selects (none without patterns). */
export function activatedAwsccEntries(
  patterns: readonly string[] | undefined,
  catalog: AwsccCatalog,
): AwsccCatalogEntry[] {
  if (!patterns || patterns.length === 0) return [];
  const matchers = patterns.map(patternMatcher);
  return catalog.kinds.filter((e) => matchers.some((m) => m(e)));
}

/** The specs of the generated kinds the patterns select, read from the generated directory. */
export const awsccSpecsFor = (patterns: readonly string[], dir?: string): AwsccKindSpec[] =>
  store.specsFor(patterns, activatedAwsccEntries, dir);
