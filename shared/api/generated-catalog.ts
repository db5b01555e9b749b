// What the three generated-kind catalogs (awscc, azure-gen, googleapis) share: where the generated
// directory is, reading its catalog once per directory and one kind's spec, the CRD names of a kind, and
// the activation patterns' globs. What differs is data: the folder, its variable, the missing-data error.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { AWSCC_GROUP_SUFFIX } from "./awscc/spec.ts";
import { AZURE_GEN_GROUP_SUFFIX } from "./azure-gen/spec.ts";
import { GOOGLE_GROUP_SUFFIX } from "./googleapis/spec.ts";
import { API_DOMAIN } from "./meta.ts";

export interface GeneratedCatalogSource {
  /** The folder under the repository's .generated/, and beside a bundle (dist/<folder>) unless `beside` says. */
  folder: string;
  /** The folder beside a bundle, where it is not `folder` (that name is taken in dist/). */
  beside?: string;
  /** The variable that points elsewhere (tests, a custom build). */
  env: string;
  /** The error when the catalog is missing, told where the catalog was looked for. */
  missing: (file: string) => Error;
}

/** A generated catalog: its directory, its catalog (read once per directory) and one kind's spec. */
export function generatedCatalog<Catalog, Entry extends { file: string }, Spec>(src: GeneratedCatalogSource) {
  const dir = (env: Record<string, string | undefined> = process.env): string => {
    const set = env[src.env];
    if (set) return set;
    const here = import.meta.dirname ?? ".";
    // In the repository this file is shared/api/; a bundle is one file with its data folders beside it.
    const candidates = [resolve(here, "../../.generated", src.folder), join(here, src.beside ?? src.folder)];
    return candidates.find((d) => existsSync(join(d, "catalog.json"))) ?? (candidates[0] as string);
  };
  const catalogs = new Map<string, Catalog>();
  const catalog = (at = dir()): Catalog => {
    const known = catalogs.get(at);
    if (known) return known;
    const file = join(at, "catalog.json");
    if (!existsSync(file)) throw src.missing(file);
    const read = JSON.parse(readFileSync(file, "utf8")) as Catalog;
    catalogs.set(at, read);
    return read;
  };
  const spec = (entry: Entry, at = dir()): Spec =>
    JSON.parse(readFileSync(join(at, entry.file), "utf8")) as Spec;
  // An activated kind's spec, read once per directory: the registry at load, the served kinds at cold start
  // and each sweep share it (and so the providers built from it). Specs are data, never changed.
  const selected = new Map<string, Spec>();
  const selectedSpec = (e: Entry, at: string): Spec => {
    const key = join(at, e.file);
    let s = selected.get(key);
    if (s === undefined) {
      s = spec(e, at);
      selected.set(key, s);
    }
    return s;
  };
  /** The specs of the entries `select` picks for an activation list (none without patterns). */
  const specsFor = (
    patterns: readonly string[],
    select: (patterns: readonly string[], catalog: Catalog) => Entry[],
    at = dir(),
  ): Spec[] => (patterns.length === 0 ? [] : select(patterns, catalog(at)).map((e) => selectedSpec(e, at)));
  return { dir, catalog, spec, specsFor };
}

/**
 * Which cloud a generated kind's group belongs to — `<service>.awscc`, `<rp>.azure.gen`, `<api>.googleapis`,
 * in either shape (`.m.`), with or without the API domain — or undefined for a hand-written kind's group.
 * The one place that tells generated kinds from hand-written ones.
 */
export function generatedCloudOf(group: string): "aws" | "azure" | "gcp" | undefined {
  const [, family, gen] = group.split(".");
  if (family === AWSCC_GROUP_SUFFIX) return "aws";
  if (family === GOOGLE_GROUP_SUFFIX) return "gcp";
  if (`${family}.${gen}` === AZURE_GEN_GROUP_SUFFIX) return "azure";
  return undefined;
}

export const isGeneratedGroup = (group: string): boolean => generatedCloudOf(group) !== undefined;

/** The CRD names of a generated kind: its cluster-scoped and namespaced (`.m.`) shapes. */
export const generatedCrdNames = (e: { plural: string; group: string }) => [
  `${e.plural}.${e.group}.${API_DOMAIN}`,
  `${e.plural}.${e.group}.m.${API_DOMAIN}`,
];

// Compiled once per pattern: an activation list is matched against every kind's two CRD names (a list of
// 50 patterns over 1,930 kinds compiled 193,000 regular expressions, 1.5 s of a cold start).
const globs = new Map<string, RegExp>();
/** The pattern's regular expression (activation's globs: `*` is any run of characters). */
export function activationGlob(p: string): RegExp {
  const known = globs.get(p);
  if (known) return known;
  const re = new RegExp(`^${p.trim().toLowerCase().replace(/\./g, "\\.").replace(/\*/g, ".*")}$`);
  globs.set(p, re);
  return re;
}

/** The activation list of this process: DRIFTLESS_ACTIVATE, comma-separated (functions/config.ts documents it). */
export const activationPatterns = (env: Record<string, string | undefined> = process.env): string[] =>
  (env.DRIFTLESS_ACTIVATE ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);

/** `read`'s specs, or none where the kinds were never generated: the process serves hand-written kinds only. */
export function noneIfNotGenerated<Spec>(notGenerated: new (m: string) => Error, read: () => Spec[]): Spec[] {
  try {
    return read();
  } catch (err) {
    if (err instanceof notGenerated) return [];
    throw err;
  }
}

type KindName = { group: string; kind: string; plural: string };

/** A pattern selects a generated kind when it selects either of its CRD names. */
export const eitherShape =
  (selects: (pattern: string, crdName: string, e: KindName) => boolean) =>
  (pattern: string, e: KindName): boolean =>
    generatedCrdNames(e).some((n) => selects(pattern, n, e));

// A character activationGlob's regular expression reads as more than itself (`.` is escaped there).
const GLOB_OR_REGEX = /[*?+()[\]{}|^$\\]/;

/**
 * The entries of a catalog an activation list selects (none without patterns), in catalog order. `names`
 * are the names a pattern selects a kind by when it has no glob (or other regular expression) character:
 * such a pattern, trimmed and lowercased, selects exactly the kinds with that name, so it is looked up
 * instead of tested on every kind (50 names over ~1,000 kinds were 100,000 tests at each cold start).
 */
export const entriesSelected =
  <E extends KindName>(matches: (pattern: string, e: E) => boolean, names: (e: E) => readonly string[]) =>
  (patterns: readonly string[] | undefined, catalog: { kinds: E[] }): E[] => {
    if (!patterns || patterns.length === 0) return [];
    const globbed = patterns.filter((p) => GLOB_OR_REGEX.test(p));
    const exact = new Set(patterns.filter((p) => !GLOB_OR_REGEX.test(p)).map((p) => p.trim().toLowerCase()));
    const named = (e: E) => exact.size > 0 && names(e).some((n) => exact.has(n));
    return catalog.kinds.filter((e) => named(e) || globbed.some((p) => matches(p, e)));
  };
