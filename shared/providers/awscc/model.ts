// The wire side of a generated kind: forProvider (camelCase, tags as a map) ↔ Cloud Control's resource
// model (CloudFormation's PascalCase JSON), and the RFC 6902 patch of what drifted. Walks the same
// spec nodes, with the same depth limit, as the CRD schema (api/awscc/kind.ts).
import { AWSCC_MAX_DEPTH } from "../../api/awscc/kind.ts";
import type { AwsccKindSpec, AwsccNode, AwsccProp } from "../../api/awscc/spec.ts";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Whether a ref node is expanded at this depth (else it travels as raw JSON both ways). */
const expands = (spec: AwsccKindSpec, ref: string, depth: number, seen: string[]) =>
  Boolean(spec.defs[ref]) && depth < AWSCC_MAX_DEPTH && !seen.includes(ref);

/** A spec value (camelCase) as CloudFormation wants it. */
export function toWire(
  spec: AwsccKindSpec,
  node: AwsccNode,
  v: unknown,
  depth = 0,
  seen: string[] = [],
): unknown {
  if (v === undefined || v === null) return v;
  switch (node.t) {
    case "tags":
      return isObject(v) ? Object.entries(v).map(([Key, Value]) => ({ Key, Value })) : v;
    case "array":
      return Array.isArray(v) ? v.map((x) => toWire(spec, node.of, x, depth, seen)) : v;
    case "map":
      return isObject(v) ? mapValues(v, (x) => toWire(spec, node.of, x, depth, seen)) : v;
    case "ref": {
      if (!isObject(v) || !expands(spec, node.ref, depth, seen)) return v;
      const props = spec.defs[node.ref]?.props ?? {};
      const out: Json = {};
      for (const [k, x] of Object.entries(v)) {
        const p = props[k];
        if (p) out[p.n] = toWire(spec, p.s, x, depth + 1, [...seen, node.ref]);
      }
      return out;
    }
    default:
      return v;
  }
}

/** A CloudFormation value as the spec writes it (camelCase, tags as a map). */
export function fromWire(
  spec: AwsccKindSpec,
  node: AwsccNode,
  v: unknown,
  depth = 0,
  seen: string[] = [],
): unknown {
  if (v === undefined || v === null) return undefined;
  switch (node.t) {
    case "tags":
      if (!Array.isArray(v)) return v;
      return Object.fromEntries(
        v.filter(isObject).map((t) => [String(t.Key ?? t.key ?? ""), String(t.Value ?? t.value ?? "")]),
      );
    case "array":
      return Array.isArray(v) ? v.map((x) => fromWire(spec, node.of, x, depth, seen)) : v;
    case "map":
      return isObject(v) ? mapValues(v, (x) => fromWire(spec, node.of, x, depth, seen)) : v;
    case "ref": {
      if (!isObject(v) || !expands(spec, node.ref, depth, seen)) return v;
      const props = spec.defs[node.ref]?.props ?? {};
      const out: Json = {};
      for (const [k, p] of Object.entries(props)) {
        const x = fromWire(spec, p.s, v[p.n], depth + 1, [...seen, node.ref]);
        if (x !== undefined) out[k] = x;
      }
      return out;
    }
    case "integer":
    case "number":
      return typeof v === "string" && v.trim() !== "" && !Number.isNaN(Number(v)) ? Number(v) : v;
    default:
      return v;
  }
}

const mapValues = (o: Json, f: (v: unknown) => unknown): Json =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));

/** The properties a resource model is written from, and the values of secret ones (read from Secrets). */
export interface DesiredInput {
  forProvider: Json;
  externalName: string | undefined;
  secrets: Record<string, string>;
}

/** The desired state Cloud Control gets: every property the spec sets, by its CloudFormation name. */
export function desiredModel(spec: AwsccKindSpec, input: DesiredInput): Json {
  const out: Json = {};
  for (const [k, p] of Object.entries(spec.properties)) {
    if (k === spec.identifierField) {
      if (input.externalName) out[p.n] = input.externalName;
      continue;
    }
    if (p.wo === "secret") {
      if (input.secrets[k] !== undefined) out[p.n] = input.secrets[k];
      continue;
    }
    const v = input.forProvider[k];
    if (v !== undefined) out[p.n] = toWire(spec, p.s, v);
  }
  return out;
}

/** What GetResource reports, in forProvider's shape (write-only and identifier properties left out). */
export function observedOf(spec: AwsccKindSpec, model: Json, region: string): Json {
  const out: Json = { region };
  for (const [k, p] of Object.entries(spec.properties)) {
    if (k === spec.identifierField || p.wo) continue;
    const v = fromWire(spec, p.s, model[p.n]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** The read-only properties (attributes) of a model; dotted names (Endpoint.Address) are nested paths. */
export function atProviderOf(spec: AwsccKindSpec, model: Json): Json {
  const out: Json = {};
  for (const [k, p] of Object.entries(spec.attributes)) {
    let v: unknown = model;
    for (const part of p.n.split(".")) v = isObject(v) ? v[part] : undefined;
    const x = fromWire(spec, p.s, v);
    if (x !== undefined) out[k] = x;
  }
  return out;
}

/** The properties create needs and the spec does not give (Cloud Control would refuse the model). */
export function missingRequired(spec: AwsccKindSpec, model: Json): string[] {
  return Object.entries(spec.properties)
    .filter(([, p]) => p.req && model[p.n] === undefined)
    .map(([k, p]) => (p.wo === "secret" ? `${k}SecretRef` : k));
}

export interface PatchOp {
  op: "add";
  path: string;
  value: unknown;
}

const pointer = (s: string) => s.replaceAll("~", "~0").replaceAll("/", "~1");

/**
 * An RFC 6902 patch of only what differs between the desired model and the current one: objects are
 * descended into member by member, lists, maps and free-form values are replaced whole (a map removed
 * in the console is put back as the spec has it). Write-only and create-only top-level properties and
 * the identifier are never part of it. `add` sets a member whether it exists or not.
 */
export function patchOf(spec: AwsccKindSpec, desired: Json, current: Json): PatchOp[] {
  const ops: PatchOp[] = [];
  for (const [k, p] of Object.entries(spec.properties)) {
    if (k === spec.identifierField || p.wo || p.co || desired[p.n] === undefined) continue;
    diff(spec, p, `/${pointer(p.n)}`, desired[p.n], current[p.n], 0, [], ops);
  }
  return ops;
}

function diff(
  spec: AwsccKindSpec,
  p: Pick<AwsccProp, "s">,
  path: string,
  want: unknown,
  have: unknown,
  depth: number,
  seen: string[],
  ops: PatchOp[],
) {
  if (equal(want, have)) return;
  const node = p.s;
  if (node.t === "ref" && isObject(want) && isObject(have) && expands(spec, node.ref, depth, seen)) {
    const byWire = new Map(Object.values(spec.defs[node.ref]?.props ?? {}).map((x) => [x.n, x]));
    for (const [k, v] of Object.entries(want)) {
      const sub = byWire.get(k);
      if (!sub || sub.wo) continue;
      diff(spec, sub, `${path}/${pointer(k)}`, v, have[k], depth + 1, [...seen, node.ref], ops);
    }
    return;
  }
  ops.push({ op: "add", path, value: want });
}

/** Deep equality of JSON values; key order does not matter. */
export function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => equal(a[k], b[k]));
  }
  return false;
}
