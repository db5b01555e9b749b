// What a migrate run must account for, checked from the outside: every object written is one the report
// calls migrated (no ERROR for its source), and every leaf of every input forProvider is either found in the
// output (same value under the same last field name; JSON strings compared by their content) or named in
// the report (an issue of its source whose field is the leaf's path or a prefix of it). The output is read as
// the target CRD keeps it (its schema's output), so a field the API server would prune counts as lost.
import fc from "fast-check";
import { expect } from "vitest";
import { type ManagedKindDef, namespacedVariantOf } from "../../../shared/api/managed.ts";
import {
  type DriftlessObject,
  initProviderSchemaOf,
  MIGRATABLE_KINDS,
  type MigrateOptions,
  type MigrateResult,
  migrate,
} from "../../../shared/ops/migrate.ts";
import type { Doc } from "./migrate-helpers.ts";

type Obj = Record<string, unknown>;

export interface Accounting {
  /** Per Upjet kind (`Kind.group`): objects written, refused (ERROR), folded into another, leaves lost. */
  kinds: Record<string, { converted: number; refused: number; folded: number; lost: number }>;
  /** Sources written although the report has an ERROR for them. */
  writtenDespiteError: string[];
  /** `source: forProvider.path = value` of input leaves neither carried nor reported. */
  silentlyLost: string[];
}

interface Leaf {
  /** Dotted path without list indices, e.g. settings.ipConfiguration.authorizedNetworks.value. */
  path: string;
  /** The last field name on the path (list indices skipped). */
  key: string;
  value: unknown;
}

function leaves(value: unknown, path: string[] = []): Leaf[] {
  if (typeof value === "string" && /^\s*[[{]/.test(value)) {
    try {
      return leaves(JSON.parse(value), path);
    } catch {
      // not JSON: a plain string leaf
    }
  }
  if (Array.isArray(value)) return value.flatMap((v) => leaves(v, path));
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Obj);
    return entries.flatMap(([k, v]) => leaves(v, [...path, k]));
  }
  if (value === null || value === undefined) return [];
  return [{ path: path.join("."), key: path.at(-1) ?? "", value }];
}

/**
 * What the API server keeps of a written object's forProvider (its kind's schema output), or of its
 * initProvider (the same schema with nothing required).
 */
function kept(
  o: DriftlessObject,
  section: "forProvider" | "initProvider" = "forProvider",
  generated: readonly ManagedKindDef[] = [],
): unknown {
  const def = [...MIGRATABLE_KINDS, ...generated]
    .flatMap((d) => [d, namespacedVariantOf(d)])
    .find((d) => d.apiVersion === o.apiVersion && d.kind === o.kind);
  const value = (o.spec as Obj)[section];
  if (!def) return value; // a ProviderConfig: no forProvider
  if (value === undefined) return {};
  const schema = section === "forProvider" ? def.forProvider : initProviderSchemaOf(def.forProvider);
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : {};
}

const sourceOf = (doc: Obj, index: number) => {
  const apiVersion = String(doc.apiVersion ?? "");
  const name = (doc.metadata as Obj | undefined)?.name;
  return `${String(doc.kind ?? "")}.${apiVersion.split("/")[0]}/${typeof name === "string" && name ? name : `(document ${index + 1})`}`;
};

/** Checks `result` (of `migrate(docs)`) against its input documents. */
export function account(docs: readonly unknown[], result: MigrateResult): Accounting {
  const out: Accounting = { kinds: {}, writtenDespiteError: [], silentlyLost: [] };
  const refused = new Set(result.issues.filter((i) => i.severity === "error").map((i) => i.source));
  for (const o of result.objects) if (refused.has(o.source)) out.writtenDespiteError.push(o.source);
  const written = new Map(result.objects.map((o) => [o.source, o.object]));
  const everything = leaves(result.objects.map((o) => kept(o.object, "forProvider", result.generated)));

  docs.forEach((d, index) => {
    if (!d || typeof d !== "object" || Array.isArray(d)) return;
    const doc = d as Obj;
    const spec = doc.spec as Obj | undefined;
    if (!spec || String(doc.apiVersion ?? "").startsWith("v1")) return;
    const source = sourceOf(doc, index);
    const kind = source.slice(0, source.indexOf("/"));
    const row = out.kinds[kind] ?? { converted: 0, refused: 0, folded: 0, lost: 0 };
    out.kinds[kind] = row;
    if (refused.has(source)) {
      row.refused++;
      return;
    }
    const object = written.get(source);
    const folded =
      !object && result.issues.some((i) => i.source === source && /^folded into /.test(i.message));
    if (object) row.converted++;
    else if (folded) row.folded++;
    else return; // neither written nor refused: a document migrate skips with a note (bookkeeping kinds)
    const named = result.issues
      .filter((i) => i.source === source && i.field !== undefined)
      .map((i) => i.field);
    const isNamed = (path: string) =>
      named.some((f) => f !== undefined && (path === f || path.startsWith(`${f}.`)));
    // A folded object's fields land in the object it configures, whichever that is.
    const carried = object ? leaves(kept(object, "forProvider", result.generated)) : everything;
    for (const leaf of leaves(spec.forProvider)) {
      if (isNamed(leaf.path)) continue;
      if (carried.some((c) => c.key === leaf.key && c.value === leaf.value)) continue;
      row.lost++;
      out.silentlyLost.push(`${source}: forProvider.${leaf.path} = ${JSON.stringify(leaf.value)}`);
    }
    // initProvider goes through the same mapping: kept in the written initProvider, or reported under it.
    const carriedInit = object ? leaves(kept(object, "initProvider", result.generated)) : [];
    for (const leaf of leaves(spec.initProvider)) {
      if (isNamed(`initProvider.${leaf.path}`)) continue;
      if (carriedInit.some((c) => c.key === leaf.key && c.value === leaf.value)) continue;
      row.lost++;
      out.silentlyLost.push(`${source}: initProvider.${leaf.path} = ${JSON.stringify(leaf.value)}`);
    }
  });
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Every object node of a JSON value (itself first), list elements included. */
function objectsIn(value: unknown): Record<string, unknown>[] {
  if (Array.isArray(value)) return value.flatMap(objectsIn);
  if (!isObject(value)) return [];
  return [value, ...Object.values(value).flatMap(objectsIn)];
}

/**
 * The property: a random field added at any depth of any object's forProvider in `corpus` is carried or
 * reported, and nothing is written that the report calls not migrated.
 */
export function checkAddedFields(
  corpus: ReadonlyArray<{ file: string; docs: Doc[] }>,
  opts: MigrateOptions,
  numRuns = 300,
): void {
  const withForProvider = corpus.filter(({ docs }) =>
    docs.some((d) => isObject(d.spec) && isObject(d.spec.forProvider)),
  );
  const scalar = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean());
  fc.assert(
    fc.property(
      fc.nat(),
      fc.nat(),
      fc.nat(),
      fc.stringMatching(/^[a-z][a-zA-Z]{0,10}$/),
      scalar,
      (f, d, at, key, value) => {
        const { file, docs } = withForProvider[f % withForProvider.length] as (typeof corpus)[number];
        const mutated = structuredClone(docs);
        const candidates = mutated.filter((x) => isObject(x.spec) && isObject(x.spec.forProvider));
        const doc = candidates[d % candidates.length] as Doc;
        const nodes = objectsIn((doc.spec as { forProvider: unknown }).forProvider);
        const node = nodes[at % nodes.length] as Record<string, unknown>;
        node[key] = value;

        const r = migrate(mutated, opts);
        const a = account(mutated, r);
        expect(a.writtenDespiteError, file).toEqual([]);
        expect(a.silentlyLost, `${file}: ${key}=${JSON.stringify(value)}`).toEqual([]);
      },
    ),
    { numRuns },
  );
}
