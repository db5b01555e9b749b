// Which generated Google kinds an activation list selects, as a function's cold start computes it: a pattern
// that names a kind exactly (a CRD name or the `<api>.googleapis.<kind>` alias) is looked up, not tested
// against every kind of the catalog (50 names tested 50 × 1,082 kinds × 2 shapes at each cold start), and the
// answer is the one testing every pattern against every kind gives — globs, case, blanks and regular
// expression characters included.
import { beforeAll, describe, expect, it } from "vitest";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import { entriesSelected, generatedCrdNames } from "../../../shared/api/generated-catalog.ts";
import {
  activatedGoogleEntries,
  googleExactNames,
  googlePatternMatches,
  loadGoogleCatalog,
} from "../../../shared/api/googleapis/catalog.ts";
import { type GoogleCatalogEntry, googleAliasOf } from "../../../shared/api/googleapis/spec.ts";

beforeAll(() => {
  generateGcp();
}, 120_000);

/** Every pattern tested on every kind: what the activation list means. */
const byTesting = (patterns: readonly string[]) =>
  loadGoogleCatalog().kinds.filter((e) => patterns.some((p) => googlePatternMatches(p, e)));

/** The bench's 50 kinds: spread evenly over the catalog sorted by type (bench/sections/gcp.ts). */
const fifty = (): GoogleCatalogEntry[] => {
  const sorted = [...loadGoogleCatalog().kinds].sort((a, b) => a.typeName.localeCompare(b.typeName));
  const step = sorted.length / 50;
  return Array.from({ length: 50 }, (_, i) => sorted[Math.floor(i * step)] as GoogleCatalogEntry);
};

describe("activation of generated Google kinds by name", () => {
  it("50 kinds named by CRD name or alias are looked up: no pattern is tested against a kind", () => {
    const catalog = loadGoogleCatalog();
    let tested = 0;
    const counted = (p: string, e: GoogleCatalogEntry) => {
      tested++;
      return googlePatternMatches(p, e);
    };
    const select = entriesSelected<GoogleCatalogEntry>(counted, googleExactNames);
    const kinds = fifty();
    const patterns = kinds.map((e, i) =>
      i % 3 === 0 ? googleAliasOf(e) : (generatedCrdNames(e)[i % 3 === 1 ? 0 : 1] as string),
    );
    const selected = select(patterns, catalog);
    expect(tested).toBe(0);
    expect(selected.length).toBe(50);
    expect(new Set(selected)).toEqual(new Set(kinds));
    // A glob is still tested, once per kind at most.
    tested = 0;
    expect(select([...patterns, "run.googleapis.*"], catalog).length).toBe(
      50 + catalog.kinds.filter((e) => e.group === "run.googleapis" && !kinds.includes(e)).length,
    );
    expect(tested).toBeLessThanOrEqual(catalog.kinds.length);
  });

  it("selects what testing every pattern on every kind selects, in catalog order", () => {
    const catalog = loadGoogleCatalog();
    const sample = catalog.kinds.filter((_, i) => i % 40 === 0);
    const lists: string[][] = [
      [],
      ["*"],
      ["*.googleapis.*"],
      ["compute.googleapis.*", "run.googleapis.service"],
      ["run.*", "compute.*", "*.gcp.driftless.dev", "queues.sqs.aws.driftless.dev"],
      // Case and blanks are the pattern's own: lowered and trimmed; the names are compared as they are.
      sample.map((e) => `  ${googleAliasOf(e).toUpperCase()} `),
      sample.map((e) => (generatedCrdNames(e)[1] as string).toUpperCase()),
      // Characters a regular expression reads are not a name: tested, as before.
      sample.map((e) => googleAliasOf(e).replace(/.$/, "?")),
      sample.map((e) => googleAliasOf(e).replace(/^./, ".")),
      sample.map((e) => `.${googleAliasOf(e)}`),
      sample.map((e) => (generatedCrdNames(e)[0] as string).replace(".driftless.dev", ".driftless.*")),
      [...sample.map((e) => googleAliasOf(e)), "secretmanager.googleapis.*", "nosuch.googleapis.kind"],
      fifty().map((e) => generatedCrdNames(e)[0] as string),
    ];
    for (const patterns of lists) {
      expect(activatedGoogleEntries(patterns, catalog)).toEqual(byTesting(patterns));
    }
    expect(activatedGoogleEntries(["compute.googleapis.*"], catalog).length).toBeGreaterThan(0);
  });
});
