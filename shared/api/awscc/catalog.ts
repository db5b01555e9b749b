// Where the generated kinds are read from, and which of them an activation list selects. The specs are
// data generated at install time (infra/gen-awscc.ts → .generated/awscc/); a function bundle never
// reads them from disk: infra/build/build.ts bakes the activated ones in (providers/awscc/activated.ts).
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { API_DOMAIN } from "../meta.ts";
import { type AwsccCatalog, type AwsccCatalogEntry, type AwsccKindSpec, awsccAliasOf } from "./spec.ts";

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

/** The pattern's regular expression (activation's globs: `*` is any run of characters). */
const globRe = (p: string) =>
  new RegExp(`^${p.trim().toLowerCase().replace(/\./g, "\\.").replace(/\*/g, ".*")}$`);

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

/** Whether a pattern selects either shape of a generated kind. */
export const awsccPatternMatches = (pattern: string, e: { group: string; kind: string; plural: string }) =>
  awsccCrdNames(e).some((n) => awsccPatternSelects(pattern, n, e));

/** The generated kinds an activation list selects (none without patterns). */
export function activatedAwsccEntries(
  patterns: readonly string[] | undefined,
  catalog: AwsccCatalog,
): AwsccCatalogEntry[] {
  if (!patterns || patterns.length === 0) return [];
  return catalog.kinds.filter((e) => patterns.some((p) => awsccPatternMatches(p, e)));
}

/** The specs of the generated kinds the patterns select, read from the generated directory. */
export function awsccSpecsFor(patterns: readonly string[], dir = awsccDir()): AwsccKindSpec[] {
  if (patterns.length === 0) return [];
  return activatedAwsccEntries(patterns, loadAwsccCatalog(dir)).map((e) => loadAwsccSpec(e, dir));
}
