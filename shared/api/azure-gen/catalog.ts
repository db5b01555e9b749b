// Where the generated Azure kinds are read from, and which of them an activation list selects. The specs
// are data generated from the committed type data (infra/gen-azure.ts → .generated/azure/).
import { namedError } from "../../named-error.ts";
import { activationGlob, eitherShape, generatedCatalog, generatedCrdNames } from "../generated-catalog.ts";
import { type AzureCatalog, type AzureCatalogEntry, type AzureKindSpec, azureGenAliasOf } from "./spec.ts";

export class AzureGenNotGeneratedError extends namedError("AzureGenNotGeneratedError", Error) {}

const store = generatedCatalog<AzureCatalog, AzureCatalogEntry, AzureKindSpec>({
  folder: "azure",
  env: "DRIFTLESS_AZURE_GEN_DIR",
  missing: (file) =>
    new AzureGenNotGeneratedError(`the generated Azure kinds are missing (${file}): run npm run gen:azure`),
});
/** The generated directory: DRIFTLESS_AZURE_GEN_DIR, the repository's .generated/azure, or dist/azure. */
export const azureGenDir = store.dir;
export const loadAzureCatalog = store.catalog;
export const loadAzureSpec = store.spec;

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
  if (p.includes("azure.gen")) return activationGlob(p).test(crdName);
  if (!p.startsWith("azure:")) return false;
  const alias = p.slice("azure:".length);
  const first = alias.split(".")[0] ?? "";
  if (!first || first.includes("*")) return false;
  return activationGlob(alias).test(azureGenAliasOf(e));
}

export const azureGenPatternMatches = eitherShape(azureGenPatternSelects);

/** The generated kinds an activation list selects (none without patterns). */
export function activatedAzureEntries(
  patterns: readonly string[] | undefined,
  catalog: AzureCatalog,
): AzureCatalogEntry[] {
  if (!patterns || patterns.length === 0) return [];
  // A pattern without `*` names one kind exactly: looked up, not matched against all 2,050 (cold start).
  const globbed = patterns.filter((p) => p.includes("*"));
  const exact = new Set(patterns.filter((p) => !p.includes("*")).map((p) => p.trim().toLowerCase()));
  const named = (e: AzureCatalogEntry) =>
    [...generatedCrdNames(e), `azure:${azureGenAliasOf(e)}`].some((n) => exact.has(n.toLowerCase()));
  return catalog.kinds.filter(
    (e) => (exact.size > 0 && named(e)) || globbed.some((p) => azureGenPatternMatches(p, e)),
  );
}

/** The specs of the generated kinds an activation list selects (none without patterns). */
export const azureGenSpecsFor = (patterns: readonly string[], dir?: string): AzureKindSpec[] =>
  store.specsFor(patterns, activatedAzureEntries, dir);
