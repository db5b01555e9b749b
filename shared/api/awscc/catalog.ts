// Where the generated kinds are read from, and which of them an activation list selects. The specs are
// data generated at install time (infra/gen-awscc.ts → .generated/awscc/); a function bundle never
// reads them from disk: infra/build/build.ts bakes the activated ones in (providers/awscc/activated.ts).
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { API_DOMAIN } from "../meta.ts";
import {
  AWSCC_GROUP_SUFFIX,
  type AwsccCatalog,
  type AwsccCatalogEntry,
  type AwsccKindSpec,
  awsccAliasOf,
} from "./spec.ts";

/** The generated directory: DRIFTLESS_AWSCC_DIR, the repository's .generated/awscc, or dist/awscc. */
export function awsccDir(env: Record<string, string | undefined> = process.env): string {
  if (env.DRIFTLESS_AWSCC_DIR) return env.DRIFTLESS_AWSCC_DIR;
  const here = import.meta.dirname ?? ".";
  const candidates = [resolve(here, "../../../.generated/awscc"), join(here, "awscc")];
  return candidates.find((d) => existsSync(join(d, "catalog.json"))) ?? (candidates[0] as string);
}

export class AwsccNotGeneratedError extends Error {
  override name = "AwsccNotGeneratedError";
}

const catalogs = new Map<string, AwsccCatalog>();

export function loadAwsccCatalog(dir = awsccDir()): AwsccCatalog {
  const known = catalogs.get(dir);
  if (known) return known;
  const file = join(dir, "catalog.json");
  if (!existsSync(file))
    throw new AwsccNotGeneratedError(
      `the generated AWS kinds are missing (${file}): run npm run gen:awscc (npm ci runs it too)`,
    );
  const catalog = JSON.parse(readFileSync(file, "utf8")) as AwsccCatalog;
  catalogs.set(dir, catalog);
  return catalog;
}

export function loadAwsccSpec(entry: AwsccCatalogEntry, dir = awsccDir()): AwsccKindSpec {
  return JSON.parse(readFileSync(join(dir, entry.file), "utf8")) as AwsccKindSpec;
}

/** The CRD names of a generated kind: its cluster-scoped and namespaced (`.m.`) shapes. */
export const awsccCrdNames = (e: { plural: string; group: string }) => [
  `${e.plural}.${e.group}.${API_DOMAIN}`,
  `${e.plural}.${e.group}.m.${API_DOMAIN}`,
];

/** Whether an API group is a generated AWS kind's (`dynamodb.awscc.driftless.dev`, `dynamodb.awscc.m.…`). */
export const isAwsccGroup = (group: string) => group.split(".")[1] === AWSCC_GROUP_SUFFIX;

/** The pattern's regular expression (activation's globs: `*` is any run of characters). */
// Compiled once per pattern: a cold start matches every pattern against all 1,401 kinds' names.
const globs = new Map<string, RegExp>();
const globRe = (p: string) => {
  let re = globs.get(p);
  if (!re) {
    re = new RegExp(`^${p.trim().toLowerCase().replace(/\./g, "\\.").replace(/\*/g, ".*")}$`);
    globs.set(p, re);
  }
  return re;
};

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
  if (p.includes("awscc")) return globRe(p).test(crdName);
  const first = p.split(".")[0] ?? "";
  if (!first || first.includes("*")) return false;
  return globRe(p).test(awsccAliasOf(e));
}

/** awsccPatternMatches with the pattern's work done once (a cold start tests every pattern on 1,401 kinds). */
function patternMatcher(pattern: string): (e: { group: string; kind: string; plural: string }) => boolean {
  const p = pattern.trim().toLowerCase();
  const re = globRe(p);
  if (p.includes("awscc")) return (e) => awsccCrdNames(e).some((n) => re.test(n));
  const first = p.split(".")[0] ?? "";
  if (!first || first.includes("*")) return () => false;
  return (e) => re.test(awsccAliasOf(e));
}

/** Whether a pattern selects either shape of a generated kind. */
export const awsccPatternMatches = (pattern: string, e: { group: string; kind: string; plural: string }) =>
  awsccCrdNames(e).some((n) => awsccPatternSelects(pattern, n, e));

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
export function awsccSpecsFor(patterns: readonly string[], dir = awsccDir()): AwsccKindSpec[] {
  if (patterns.length === 0) return [];
  return activatedAwsccEntries(patterns, loadAwsccCatalog(dir)).map((e) => loadAwsccSpec(e, dir));
}
