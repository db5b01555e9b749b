import type { FieldBehaviour } from "../api/managed.ts";

/** Deep equality for JSON values (what specs and observations are made of). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => deepEqual(v, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) if (!deepEqual(ao[k], bo[k])) return false;
  return true;
}

const isEmpty = (v: unknown) => v === undefined || v === null;
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
/** No value at all: unset, null, or an empty list or map (the cloud reports "no tags" as absent). */
const isBlank = (v: unknown): boolean =>
  isEmpty(v) || (Array.isArray(v) && v.length === 0) || (isPlainObject(v) && Object.values(v).every(isBlank));

export type FieldBehaviours = Readonly<Record<string, FieldBehaviour>>;

/**
 * Fields the user set whose observed value differs. A field the user set that the cloud does not report
 * (absent or null in `observed`) is drift too: a redrive policy removed in the console must be put back.
 * Only fields declared `writeOnly` (the cloud never shows them) are skipped.
 */
export function driftedFields(
  desired: Record<string, unknown>,
  observed: Record<string, unknown>,
  maps: ReadonlySet<string> = new Set(),
  fields: FieldBehaviours = {},
): string[] {
  const out: string[] = [];
  const walk = (want: Record<string, unknown>, have: Record<string, unknown>, prefix: string) => {
    for (const [k, w] of Object.entries(want)) {
      const path = prefix ? `${prefix}.${k}` : k;
      const field = fields[path];
      if (isEmpty(w) || field?.writeOnly) continue;
      const got = have[k];
      if (isBlank(got)) {
        if (!isBlank(w)) out.push(path);
        continue;
      }
      // Nested structs compare field by field; maps such as tags compare whole (a removed tag is drift too).
      if (isPlainObject(w) && isPlainObject(got) && !maps.has(path)) walk(w, got, path);
      else if (field?.compare === "version" && typeof w === "string" && typeof got === "string") {
        if (!versionSatisfies(w, got)) out.push(path);
      } else if (!deepEqual(w, got)) out.push(path);
    }
  };
  walk(desired, observed, "");
  return out;
}

/**
 * Whether the cloud's version satisfies the wanted one: the same major, and the wanted parts are a
 * prefix ("16" ⊇ "16.5") or older than the cloud's (the cloud upgraded a minor version by itself).
 */
export function versionSatisfies(want: string, got: string): boolean {
  const w = want.split(".");
  const g = got.split(".");
  if (w[0] !== g[0]) return false;
  for (let i = 1; i < w.length; i++) {
    const a = w[i] ?? "";
    const b = g[i];
    if (b === undefined) return false;
    if (a === b) continue;
    const [na, nb] = [Number(a), Number(b)];
    return Number.isFinite(na) && Number.isFinite(nb) && nb > na;
  }
  return true;
}

/**
 * Late initialization: copy observed values into fields the user left empty; never overwrite a value
 * the user set, and never fill a field declared writeOnly or `lateInitialize: false`. Returns the
 * filled spec and the paths it filled.
 */
export function lateInitialize(
  desired: Record<string, unknown>,
  observed: Record<string, unknown>,
  maps: ReadonlySet<string> = new Set(),
  fields: FieldBehaviours = {},
  prefix = "",
): { value: Record<string, unknown>; filled: string[] } {
  const value: Record<string, unknown> = { ...desired };
  const filled: string[] = [];
  for (const [k, seen] of Object.entries(observed)) {
    if (isEmpty(seen)) continue;
    const path = prefix ? `${prefix}.${k}` : k;
    const field = fields[path];
    if (field?.writeOnly || field?.lateInitialize === false) continue;
    const mine = desired[k];
    if (isEmpty(mine)) {
      value[k] = structuredClone(seen);
      filled.push(path);
    } else if (isPlainObject(mine) && isPlainObject(seen) && !maps.has(path)) {
      const nested = lateInitialize(mine, seen, maps, fields, path);
      value[k] = nested.value;
      filled.push(...nested.filled);
    }
  }
  return { value, filled };
}

/**
 * A JSON merge patch that turns `before` into `after` for the keys it removes: each key of `before`
 * missing from `after` becomes null, at any depth, so stale keys do not outlive a merge patch.
 */
export function replacementPatch(before: unknown, after: unknown): unknown {
  if (!isPlainObject(after)) return after === undefined ? null : after;
  const out: Record<string, unknown> = {};
  const prev = isPlainObject(before) ? before : {};
  for (const k of Object.keys(prev)) if (!(k in after) || after[k] === undefined) out[k] = null;
  for (const [k, v] of Object.entries(after)) {
    if (v === undefined) continue;
    out[k] = isPlainObject(v) && isPlainObject(prev[k]) ? replacementPatch(prev[k], v) : v;
  }
  return out;
}

/** Parses a Go-style duration ("90s", "5m", "1h30m", "250ms"); undefined when malformed. */
export function parseDuration(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let consumed = 0;
  for (const m of text.matchAll(re)) {
    total += Number(m[1]) * (units[m[2] ?? "s"] ?? 0);
    consumed += m[0].length;
  }
  return consumed === text.length && total > 0 ? total : undefined;
}

interface SchemaNode {
  def?: { type?: string; innerType?: SchemaNode; shape?: Record<string, SchemaNode> };
}

/** Paths of map fields (z.record) in an object schema: maps compare and late-initialize as a whole. */
export function mapPaths(schema: unknown, prefix = "", out = new Set<string>()): Set<string> {
  let node = schema as SchemaNode;
  while (
    node.def?.innerType &&
    (node.def.type === "optional" || node.def.type === "default" || node.def.type === "nullable")
  ) {
    node = node.def.innerType;
  }
  if (node.def?.type === "record" && prefix) out.add(prefix);
  if (node.def?.type === "object" && node.def.shape) {
    for (const [k, child] of Object.entries(node.def.shape))
      mapPaths(child, prefix ? `${prefix}.${k}` : k, out);
  }
  return out;
}
