// Where the generated Google kinds are read from, and which of them an activation list selects. The
// specs are data generated at install time (infra/gen-gcp.ts → .generated/gcp/); a function bundle gets
// the activated ones baked in, as with the generated AWS kinds.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { API_DOMAIN } from "../meta.ts";
import { type GoogleCatalog, type GoogleCatalogEntry, type GoogleKindSpec, googleAliasOf } from "./spec.ts";

/** The generated directory: DRIFTLESS_GCP_GEN_DIR, the repository's .generated/gcp, or dist/gcp. */
export function googleDir(env: Record<string, string | undefined> = process.env): string {
  if (env.DRIFTLESS_GCP_GEN_DIR) return env.DRIFTLESS_GCP_GEN_DIR;
  const here = import.meta.dirname ?? ".";
  const candidates = [resolve(here, "../../../.generated/gcp"), join(here, "gcp")];
  return candidates.find((d) => existsSync(join(d, "catalog.json"))) ?? (candidates[0] as string);
}

export class GoogleNotGeneratedError extends Error {
  override name = "GoogleNotGeneratedError";
}

const catalogs = new Map<string, GoogleCatalog>();

export function loadGoogleCatalog(dir = googleDir()): GoogleCatalog {
  const known = catalogs.get(dir);
  if (known) return known;
  const file = join(dir, "catalog.json");
  if (!existsSync(file))
    throw new GoogleNotGeneratedError(
      `the generated Google Cloud kinds are missing (${file}): run npm run gen:gcp (npm ci runs it too)`,
    );
  const catalog = JSON.parse(readFileSync(file, "utf8")) as GoogleCatalog;
  catalogs.set(dir, catalog);
  return catalog;
}

export function loadGoogleSpec(entry: GoogleCatalogEntry, dir = googleDir()): GoogleKindSpec {
  return JSON.parse(readFileSync(join(dir, entry.file), "utf8")) as GoogleKindSpec;
}

/** The CRD names of a generated kind: its cluster-scoped and namespaced (`.m.`) shapes. */
export const googleCrdNames = (e: { plural: string; group: string }) => [
  `${e.plural}.${e.group}.${API_DOMAIN}`,
  `${e.plural}.${e.group}.m.${API_DOMAIN}`,
];

const globRe = (p: string) =>
  new RegExp(`^${p.trim().toLowerCase().replace(/\./g, "\\.").replace(/\*/g, ".*")}$`);

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
  if (globRe(p).test(crdName)) return true;
  const first = p.split(".")[0] ?? "";
  return Boolean(first) && !first.includes("*") && globRe(p).test(googleAliasOf(e));
}

export const googlePatternMatches = (pattern: string, e: { group: string; kind: string; plural: string }) =>
  googleCrdNames(e).some((n) => googlePatternSelects(pattern, n, e));

export function activatedGoogleEntries(
  patterns: readonly string[] | undefined,
  catalog: GoogleCatalog,
): GoogleCatalogEntry[] {
  if (!patterns || patterns.length === 0) return [];
  return catalog.kinds.filter((e) => patterns.some((p) => googlePatternMatches(p, e)));
}
