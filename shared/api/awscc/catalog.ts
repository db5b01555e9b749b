// Where the generated kinds are read from, and which of them an activation list selects. The specs are
// data generated at install time (infra/gen-awscc.ts → .generated/awscc/); a function bundle never
// reads them from disk: infra/build/build.ts bakes the activated ones in (providers/awscc/activated.ts).
import { namedError } from "../../named-error.ts";
import {
  activationGlob,
  eitherShape,
  entriesSelected,
  generatedCatalog,
  generatedCrdNames,
} from "../generated-catalog.ts";
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

/** awsccPatternMatches with the pattern's work done once, per pattern (globs are tested on every kind). */
const matchers = new Map<string, (e: { group: string; kind: string; plural: string }) => boolean>();
function patternMatcher(pattern: string): (e: { group: string; kind: string; plural: string }) => boolean {
  const known = matchers.get(pattern);
  if (known) return known;
  const p = pattern.trim().toLowerCase();
  const re = activationGlob(p);
  const first = p.split(".")[0] ?? "";
  const m = p.includes("awscc")
    ? (e: { group: string; kind: string; plural: string }) => generatedCrdNames(e).some((n) => re.test(n))
    : !first || first.includes("*")
      ? () => false
      : (e: { group: string; kind: string }) => re.test(awsccAliasOf(e));
  matchers.set(pattern, m);
  return m;
}

/** Whether a pattern selects either shape of a generated kind. */
export const awsccPatternMatches = eitherShape(awsccPatternSelects);

/**
 * The names a pattern without a glob selects a kind by: its CRD names (each says `awscc`, as a pattern that
 * selects by CRD name must) and its alias (which never does).
 */
export const awsccExactNames = (e: AwsccCatalogEntry): string[] => [...generatedCrdNames(e), awsccAliasOf(e)];

/** The generated kinds an activation list selects (none without patterns): a kind's exact name is looked up. */
export const activatedAwsccEntries = entriesSelected<AwsccCatalogEntry>(
  (p, e) => patternMatcher(p)(e),
  awsccExactNames,
);

/** The specs of the generated kinds the patterns select, read from the generated directory. */
export const awsccSpecsFor = (patterns: readonly string[], dir?: string): AwsccKindSpec[] =>
  store.specsFor(patterns, activatedAwsccEntries, dir);
