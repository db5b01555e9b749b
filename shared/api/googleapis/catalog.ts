// Where the generated Google kinds are read from, and which of them an activation list selects. The
// specs are data generated at install time (infra/gen-gcp.ts → .generated/gcp/); a function bundle has
// them as data beside it (gcp-kinds/: dist/gcp is the Cloud Functions source folder), read at run time.
import { namedError } from "../../named-error.ts";
import {
  activationGlob,
  eitherShape,
  entriesSelected,
  generatedCatalog,
  generatedCrdNames,
} from "../generated-catalog.ts";
import { type GoogleCatalog, type GoogleCatalogEntry, type GoogleKindSpec, googleAliasOf } from "./spec.ts";

export class GoogleNotGeneratedError extends namedError("GoogleNotGeneratedError", Error) {}

const store = generatedCatalog<GoogleCatalog, GoogleCatalogEntry, GoogleKindSpec>({
  folder: "gcp",
  beside: "gcp-kinds",
  env: "DRIFTLESS_GCP_GEN_DIR",
  missing: (file) =>
    new GoogleNotGeneratedError(
      `the generated Google Cloud kinds are missing (${file}): run npm run gen:gcp (npm ci runs it too)`,
    ),
});
/** The generated directory: DRIFTLESS_GCP_GEN_DIR, the repository's .generated/gcp, or gcp-kinds/ beside a bundle. */
export const googleDir = store.dir;
export const loadGoogleCatalog = store.catalog;
export const loadGoogleSpec = store.spec;

/**
 * Whether an activation pattern selects a generated Google kind's CRD. Like the generated AWS kinds they
 * are never in "everything": a pattern names them, and says `googleapis` — the alias
 * (`run.googleapis.service`, `run.googleapis.*`, `compute.googleapis.*`) or a CRD-name glob
 * (`services.run.googleapis.driftless.dev`, `*.googleapis.*` for all of them).
 */
export function googlePatternSelects(
  pattern: string,
  crdName: string,
  e: { group: string; kind: string },
): boolean {
  const p = pattern.trim().toLowerCase();
  if (!p.includes("googleapis")) return false;
  if (activationGlob(p).test(crdName)) return true;
  const first = p.split(".")[0] ?? "";
  return Boolean(first) && !first.includes("*") && activationGlob(p).test(googleAliasOf(e));
}

export const googlePatternMatches = eitherShape(googlePatternSelects);

/**
 * The names a pattern without a glob selects a kind by: its CRD names and its alias, as they are (the
 * pattern is lowercased, the names not; each holds `googleapis`, as a selecting pattern must).
 */
export const googleExactNames = (e: GoogleCatalogEntry): string[] => [
  ...generatedCrdNames(e),
  googleAliasOf(e),
];

/** The generated kinds an activation list selects (none without patterns). */
export const activatedGoogleEntries = entriesSelected<GoogleCatalogEntry>(
  googlePatternMatches,
  googleExactNames,
);

/** The specs of the generated kinds an activation list selects (none without patterns). */
export const googleSpecsFor = (patterns: readonly string[], dir?: string): GoogleKindSpec[] =>
  store.specsFor(patterns, activatedGoogleEntries, dir);
