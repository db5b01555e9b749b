// Which generated kinds an activation list selects, as a function's cold start computes it: a pattern that
// names a kind exactly (a CRD name or the kind's alias) is looked up, not tested against every kind of the
// catalog (50 names tested 50 × 1,082 Google kinds × 2 shapes at each cold start), and the answer is the one
// testing every pattern against every kind gives — globs, case, blanks and regular expression characters
// included. The same for the generated Google and AWS kinds.
import { beforeAll, describe, expect, it } from "vitest";
import { generateAwscc } from "../../../infra/gen-awscc.ts";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import {
  activatedAwsccEntries,
  awsccExactNames,
  awsccPatternMatches,
  loadAwsccCatalog,
} from "../../../shared/api/awscc/catalog.ts";
import { awsccAliasOf } from "../../../shared/api/awscc/spec.ts";
import { entriesSelected, generatedCrdNames } from "../../../shared/api/generated-catalog.ts";
import {
  activatedGoogleEntries,
  googleExactNames,
  googlePatternMatches,
  loadGoogleCatalog,
} from "../../../shared/api/googleapis/catalog.ts";
import { googleAliasOf } from "../../../shared/api/googleapis/spec.ts";

type Entry = { group: string; kind: string; plural: string; typeName: string };

interface Catalog {
  name: string;
  generate: () => unknown;
  kinds: () => Entry[];
  matches: (p: string, e: Entry) => boolean;
  exactNames: (e: Entry) => readonly string[];
  activated: (patterns: readonly string[], catalog: { kinds: Entry[] }) => Entry[];
  alias: (e: Entry) => string;
  /** A glob over one group, and the group it covers. */
  group: { glob: string; group: string };
  /** Patterns of the other clouds and hand-written kinds, which select none of these. */
  others: string[];
}

const catalogs: Catalog[] = [
  {
    name: "Google",
    generate: generateGcp,
    kinds: () => loadGoogleCatalog().kinds,
    matches: googlePatternMatches,
    exactNames: googleExactNames as unknown as Catalog["exactNames"],
    activated: activatedGoogleEntries as unknown as Catalog["activated"],
    alias: googleAliasOf,
    group: { glob: "run.googleapis.*", group: "run.googleapis" },
    others: ["run.*", "compute.*", "*.gcp.driftless.dev", "queues.sqs.aws.driftless.dev", "dynamodb.table"],
  },
  {
    name: "AWS",
    generate: generateAwscc,
    kinds: () => loadAwsccCatalog().kinds,
    matches: awsccPatternMatches,
    exactNames: awsccExactNames as unknown as Catalog["exactNames"],
    activated: activatedAwsccEntries as unknown as Catalog["activated"],
    alias: awsccAliasOf,
    group: { glob: "dynamodb.*", group: "dynamodb.awscc" },
    others: ["*", "*.table", "queues.sqs.aws.driftless.dev", "run.googleapis.service"],
  },
];

describe.each(catalogs)("activation of generated $name kinds by name", (c) => {
  beforeAll(() => {
    c.generate();
  }, 120_000);

  /** Every pattern tested on every kind: what the activation list means. */
  const byTesting = (patterns: readonly string[]) =>
    c.kinds().filter((e) => patterns.some((p) => c.matches(p, e)));

  /** 50 kinds spread evenly over the catalog sorted by type (the bench's 50: bench/sections/gcp.ts). */
  const fifty = (): Entry[] => {
    const sorted = [...c.kinds()].sort((a, b) => a.typeName.localeCompare(b.typeName));
    const step = sorted.length / 50;
    return Array.from({ length: 50 }, (_, i) => sorted[Math.floor(i * step)] as Entry);
  };

  it("50 kinds named by CRD name or alias are looked up: no pattern is tested against a kind", () => {
    const catalog = { kinds: c.kinds() };
    let tested = 0;
    const counted = (p: string, e: Entry) => {
      tested++;
      return c.matches(p, e);
    };
    const select = entriesSelected<Entry>(counted, c.exactNames);
    const kinds = fifty();
    const patterns = kinds.map((e, i) =>
      i % 3 === 0 ? c.alias(e) : (generatedCrdNames(e)[i % 3 === 1 ? 0 : 1] as string),
    );
    const selected = select(patterns, catalog);
    expect(tested).toBe(0);
    expect(selected.length).toBe(50);
    expect(new Set(selected)).toEqual(new Set(kinds));
    // A glob is still tested, once per kind at most.
    tested = 0;
    expect(select([...patterns, c.group.glob], catalog).length).toBe(
      50 + catalog.kinds.filter((e) => e.group === c.group.group && !kinds.includes(e)).length,
    );
    expect(tested).toBeLessThanOrEqual(catalog.kinds.length);
  });

  it("selects what testing every pattern on every kind selects, in catalog order", () => {
    const catalog = { kinds: c.kinds() };
    const sample = catalog.kinds.filter((_, i) => i % 40 === 0);
    const lists: string[][] = [
      [],
      ["*"],
      [c.group.glob],
      c.others,
      [c.group.glob, c.alias(sample[0] as Entry)],
      // Case and blanks are the pattern's own: lowered and trimmed; the names are compared as they are.
      sample.map((e) => `  ${c.alias(e).toUpperCase()} `),
      sample.map((e) => (generatedCrdNames(e)[1] as string).toUpperCase()),
      // Characters a regular expression reads are not a name: tested, as before.
      sample.map((e) => c.alias(e).replace(/.$/, "?")),
      sample.map((e) => c.alias(e).replace(/^./, ".")),
      sample.map((e) => `.${c.alias(e)}`),
      sample.map((e) => (generatedCrdNames(e)[0] as string).replace(".driftless.dev", ".driftless.*")),
      [...sample.map((e) => c.alias(e)), "nosuch.kind", "nosuch.googleapis.kind"],
      fifty().map((e) => generatedCrdNames(e)[0] as string),
    ];
    for (const patterns of lists) expect(c.activated(patterns, catalog)).toEqual(byTesting(patterns));
    expect(c.activated([c.group.glob], catalog).length).toBeGreaterThan(0);
  });
});
