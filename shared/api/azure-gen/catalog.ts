// Where the generated Azure kinds are read from, and which of them an activation list selects. The specs
// are data generated from the committed type data (infra/gen-azure.ts → .generated/azure/).
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { API_DOMAIN } from "../meta.ts";
import { type AzureCatalog, type AzureCatalogEntry, type AzureKindSpec, azureGenAliasOf } from "./spec.ts";

/** The generated directory: DRIFTLESS_AZURE_GEN_DIR, the repository's .generated/azure, or dist/azure. */
export function azureGenDir(env: Record<string, string | undefined> = process.env): string {
  if (env.DRIFTLESS_AZURE_GEN_DIR) return env.DRIFTLESS_AZURE_GEN_DIR;
  const here = import.meta.dirname ?? ".";
  const candidates = [resolve(here, "../../../.generated/azure"), join(here, "azure")];
  return candidates.find((d) => existsSync(join(d, "catalog.json"))) ?? (candidates[0] as string);
}

export class AzureGenNotGeneratedError extends Error {
  override name = "AzureGenNotGeneratedError";
}

const catalogs = new Map<string, AzureCatalog>();

export function loadAzureCatalog(dir = azureGenDir()): AzureCatalog {
  const known = catalogs.get(dir);
  if (known) return known;
  const file = join(dir, "catalog.json");
  if (!existsSync(file))
    throw new AzureGenNotGeneratedError(
      `the generated Azure kinds are missing (${file}): run npm run gen:azure`,
    );
  const catalog = JSON.parse(readFileSync(file, "utf8")) as AzureCatalog;
  catalogs.set(dir, catalog);
  return catalog;
}

export function loadAzureSpec(entry: AzureCatalogEntry, dir = azureGenDir()): AzureKindSpec {
  return JSON.parse(readFileSync(join(dir, entry.file), "utf8")) as AzureKindSpec;
}

/** The CRD names of a generated kind: its cluster-scoped and namespaced (`.m.`) shapes. */
export const azureGenCrdNames = (e: { plural: string; group: string }) => [
  `${e.plural}.${e.group}.${API_DOMAIN}`,
  `${e.plural}.${e.group}.m.${API_DOMAIN}`,
];

// Compiled once per pattern: an activation list is matched against every kind's two CRD names (a list of
// 50 patterns over 1,930 kinds compiled 193,000 regular expressions, 1.5 s of a cold start).
const globs = new Map<string, RegExp>();
const globRe = (p: string) => {
  const known = globs.get(p);
  if (known) return known;
  const re = new RegExp(`^${p.trim().toLowerCase().replace(/\./g, "\\.").replace(/\*/g, ".*")}$`);
  globs.set(p, re);
  return re;
};

/**
 * Whether an activation pattern selects a generated Azure kind's CRD. Generated kinds are never in
 * "everything": a pattern names them by the `<rp>.<kind>` alias with an `azure:` prefix
 * (`azure:storage.storageaccount`, `azure:keyvault.*`: both shapes) or by a CRD-name glob that says
 * `azure.gen` (`storageaccounts.storage.azure.gen.driftless.dev`, `*.azure.gen.*` for all of them).
 */
export function azureGenPatternSelects(
  pattern: string,
  crdName: string,
  e: { group: string; kind: string },
): boolean {
  const p = pattern.trim().toLowerCase();
  if (p.includes("azure.gen")) return globRe(p).test(crdName);
  if (!p.startsWith("azure:")) return false;
  const alias = p.slice("azure:".length);
  const first = alias.split(".")[0] ?? "";
  if (!first || first.includes("*")) return false;
  return globRe(alias).test(azureGenAliasOf(e));
}

export const azureGenPatternMatches = (pattern: string, e: { group: string; kind: string; plural: string }) =>
  azureGenCrdNames(e).some((n) => azureGenPatternSelects(pattern, n, e));

/** The generated kinds an activation list selects (none without patterns). */
export function activatedAzureEntries(
  patterns: readonly string[] | undefined,
  catalog: AzureCatalog,
): AzureCatalogEntry[] {
  if (!patterns || patterns.length === 0) return [];
  // A pattern without `*` names one kind exactly: looked up, not matched against all 1,930 (cold start).
  const globbed = patterns.filter((p) => p.includes("*"));
  const exact = new Set(patterns.filter((p) => !p.includes("*")).map((p) => p.trim().toLowerCase()));
  const named = (e: AzureCatalogEntry) =>
    [...azureGenCrdNames(e), `azure:${azureGenAliasOf(e)}`].some((n) => exact.has(n.toLowerCase()));
  return catalog.kinds.filter(
    (e) => (exact.size > 0 && named(e)) || globbed.some((p) => azureGenPatternMatches(p, e)),
  );
}

/** The specs of the generated kinds an activation list selects (none without patterns). */
export function azureGenSpecsFor(patterns: readonly string[], dir = azureGenDir()): AzureKindSpec[] {
  if (patterns.length === 0) return [];
  return activatedAzureEntries(patterns, loadAzureCatalog(dir)).map((e) => loadAzureSpec(e, dir));
}
