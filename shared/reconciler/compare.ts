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

/**
 * Fields the user set whose observed value differs. A field the cloud does not report (absent in
 * `observed`) is not drift: the provider says so through resourceUpToDate if it matters.
 */
export function driftedFields(
  desired: Record<string, unknown>,
  observed: Record<string, unknown>,
  maps: ReadonlySet<string> = new Set(),
  prefix = "",
): string[] {
  const out: string[] = [];
  for (const [k, want] of Object.entries(desired)) {
    if (isEmpty(want) || !(k in observed)) continue;
    const got = observed[k];
    const path = prefix ? `${prefix}.${k}` : k;
    // Nested structs compare field by field; maps such as tags compare whole (a removed tag is drift too).
    if (isPlainObject(want) && isPlainObject(got) && !maps.has(path))
      out.push(...driftedFields(want, got, maps, path));
    else if (!deepEqual(want, got)) out.push(path);
  }
  return out;
}

/**
 * Late initialization: copy observed values into fields the user left empty; never overwrite a value
 * the user set. Returns the filled spec and the paths it filled.
 */
export function lateInitialize(
  desired: Record<string, unknown>,
  observed: Record<string, unknown>,
  maps: ReadonlySet<string> = new Set(),
  prefix = "",
): { value: Record<string, unknown>; filled: string[] } {
  const value: Record<string, unknown> = { ...desired };
  const filled: string[] = [];
  for (const [k, seen] of Object.entries(observed)) {
    if (isEmpty(seen)) continue;
    const path = prefix ? `${prefix}.${k}` : k;
    const mine = desired[k];
    if (isEmpty(mine)) {
      value[k] = structuredClone(seen);
      filled.push(path);
    } else if (isPlainObject(mine) && isPlainObject(seen) && !maps.has(path)) {
      const nested = lateInitialize(mine, seen, maps, path);
      value[k] = nested.value;
      filled.push(...nested.filled);
    }
  }
  return { value, filled };
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
