// The wire side of a generated kind: forProvider (camelCase, tags as a map, secrets as Secret keys) ↔
// Cloud Control's resource model (CloudFormation's PascalCase JSON), and the RFC 6902 patch of what
// drifted. Walks the same spec nodes, with the same expansion rule, as the CRD schema (api/awscc/kind.ts),
// and the registry schema's facts by field path: secrets and write-only inputs are never read back,
// compared or re-sent, create-only paths are never patched.
import { childPath, expandsAt, referenceFieldsOf, secretRefFieldOf } from "../../api/awscc/kind.ts";
import { type AwsccKindSpec, type AwsccNode, type AwsccProp, pathWithin } from "../../api/awscc/spec.ts";
import { eachItem } from "../../api/generated-spec.ts";
import { isObject, type Json } from "../../api/json.ts";
import type { SecretKeySelector } from "../../api/meta.ts";
import type { SecretUse } from "../secret-refs.ts";

/** The object type a node holds, through lists and maps (undefined for scalars and free-form values). */
const refOf = (node: AwsccNode): string | undefined => {
  let n = node;
  while (n.t === "array" || n.t === "map") n = n.of;
  return n.t === "ref" ? n.ref : undefined;
};

/** A value `f` applies to: each item of a list, each value of a map, or the value itself. */
function eachOf(node: AwsccNode, v: unknown, f: (x: unknown, inner: AwsccNode) => unknown): unknown {
  if (node.t === "array") return Array.isArray(v) ? v.map((x) => eachOf(node.of, x, f)) : v;
  if (node.t === "map") return isObject(v) ? mapValues(v, (x) => eachOf(node.of, x, f)) : v;
  return f(v, node);
}

/** A spec value (camelCase) as CloudFormation wants it. */
export function toWire(
  spec: AwsccKindSpec,
  node: AwsccNode,
  v: unknown,
  depth = 0,
  seen: readonly string[] = [],
  path = "",
): unknown {
  if (v === undefined || v === null) return v;
  switch (node.t) {
    case "tags":
      return isObject(v) ? Object.entries(v).map(([Key, Value]) => ({ Key, Value })) : v;
    case "array":
      return Array.isArray(v) ? v.map((x) => toWire(spec, node.of, x, depth, seen, path)) : v;
    case "map":
      return isObject(v) ? mapValues(v, (x) => toWire(spec, node.of, x, depth, seen, path)) : v;
    case "ref": {
      if (!isObject(v) || !expandsAt(spec, node.ref, depth, seen, path)) return v;
      const props = spec.defs[node.ref]?.props ?? {};
      const out: Json = {};
      for (const [k, x] of Object.entries(v)) {
        const p = props[k];
        if (p) out[p.n] = toWire(spec, p.s, x, depth + 1, [...seen, node.ref], childPath(path, k));
      }
      return out;
    }
    default:
      return v;
  }
}

/**
 * A CloudFormation value as the spec writes it (camelCase, tags as a map), without the members at the
 * paths `hide` names (secrets and write-only inputs: what the cloud says of them is never read back).
 */
export function fromWire(
  spec: AwsccKindSpec,
  node: AwsccNode,
  v: unknown,
  depth = 0,
  seen: readonly string[] = [],
  path = "",
  hide: (path: string) => boolean = () => false,
): unknown {
  if (v === undefined || v === null) return undefined;
  switch (node.t) {
    case "tags":
      if (!Array.isArray(v)) return v;
      return Object.fromEntries(
        v.filter(isObject).map((t) => [String(t.Key ?? t.key ?? ""), String(t.Value ?? t.value ?? "")]),
      );
    case "array":
      return Array.isArray(v) ? v.map((x) => fromWire(spec, node.of, x, depth, seen, path, hide)) : v;
    case "map":
      return isObject(v) ? mapValues(v, (x) => fromWire(spec, node.of, x, depth, seen, path, hide)) : v;
    case "ref": {
      if (!isObject(v) || !expandsAt(spec, node.ref, depth, seen, path)) return v;
      const props = spec.defs[node.ref]?.props ?? {};
      const out: Json = {};
      for (const [k, p] of Object.entries(props)) {
        const at = childPath(path, k);
        if (hide(at)) continue;
        const x = fromWire(spec, p.s, v[p.n], depth + 1, [...seen, node.ref], at, hide);
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

/** A secret or a write-only input: never read back from the cloud, compared or patched. */
const hidden = (spec: AwsccKindSpec, path: string) =>
  spec.secrets.includes(path) || spec.writeOnly.includes(path);

const mapValues = (o: Json, f: (v: unknown) => unknown): Json =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));

/**
 * forProvider with every `…SecretRef(s)` replaced by the secret's value under the property's own name,
 * at any depth: what a request is built from, never stored or shown. `read` fetches one Secret key.
 */
export async function resolveSecrets(
  spec: AwsccKindSpec,
  forProvider: Json,
  read: (use: SecretUse) => Promise<string>,
): Promise<Json> {
  const walk = async (
    v: Json,
    props: Record<string, AwsccProp>,
    depth: number,
    seen: readonly string[],
    path: string,
    where: string,
  ): Promise<Json> => {
    const out: Json = { ...v };
    for (const [k, p] of Object.entries(props)) {
      const at = childPath(path, k);
      const here = where ? `${where}.${k}` : k;
      if (spec.secrets.includes(at)) {
        const refField = secretRefFieldOf(k, p.s);
        const ref = v[refField];
        delete out[refField];
        if (Array.isArray(ref))
          out[k] = await Promise.all(
            ref.map((r, i) => read({ at: `${here}SecretRefs[${i}]`, ref: r as SecretKeySelector })),
          );
        else if (isObject(ref))
          out[k] = await read({ at: `${here}SecretRef`, ref: ref as SecretKeySelector });
        continue;
      }
      const ref = refOf(p.s);
      if (v[k] === undefined || !ref || !spec.secrets.some((s) => s.startsWith(`${at}.`))) continue;
      out[k] = await eachItem(p.s, v[k], here, async (x, _node, w) =>
        isObject(x) && expandsAt(spec, ref, depth, seen, at)
          ? walk(x, spec.defs[ref]?.props ?? {}, depth + 1, [...seen, ref], at, w)
          : x,
      );
    }
    return out;
  };
  return walk(forProvider, spec.properties, 0, [], "", "");
}

/** What a resource model is written from: forProvider with its secrets resolved, and the external name. */
export interface DesiredInput {
  forProvider: Json;
  externalName: string | undefined;
}

/** The desired state Cloud Control gets: every property the spec sets, by its CloudFormation name. */
export function desiredModel(spec: AwsccKindSpec, input: DesiredInput): Json {
  const out: Json = {};
  for (const [k, p] of Object.entries(spec.properties)) {
    if (k === spec.identifierField) {
      if (input.externalName) out[p.n] = input.externalName;
      continue;
    }
    const v = input.forProvider[k];
    if (v !== undefined) out[p.n] = toWire(spec, p.s, v, 0, [], k);
  }
  return out;
}

/**
 * What GetResource reports, in forProvider's shape. Secrets and write-only inputs the cloud never shows
 * are taken from `forProvider` as they are (their `…SecretRef`s included), at any depth, list items by
 * position: they are never drift, never late-initialized, and never a reason to re-send anything.
 */
export function observedOf(spec: AwsccKindSpec, model: Json, region: string, forProvider: Json = {}): Json {
  const out: Json = { region };
  for (const [k, p] of Object.entries(spec.properties)) {
    if (k === spec.identifierField || hidden(spec, k)) continue;
    const v = fromWire(spec, p.s, model[p.n], 0, [], k, (at) => hidden(spec, at));
    if (v !== undefined) out[k] = v;
  }
  overlay(spec, out, forProvider, spec.properties, 0, [], "");
  return out;
}

function overlay(
  spec: AwsccKindSpec,
  have: Json,
  want: Json,
  props: Record<string, AwsccProp>,
  depth: number,
  seen: readonly string[],
  path: string,
) {
  // A nested reference's `…Ref(s)` / `…Selector` are the spec's own, never the cloud's: carried over as they are.
  for (const r of spec.nestedReferences ?? [])
    if (path && r.at === path)
      for (const f of Object.values(referenceFieldsOf(r.field, Boolean(r.list))))
        if (want[f] !== undefined) have[f] = structuredClone(want[f]);
  for (const [k, p] of Object.entries(props)) {
    const at = childPath(path, k);
    const field = spec.secrets.includes(at) ? secretRefFieldOf(k, p.s) : k;
    const w = want[field];
    if (w === undefined) continue;
    if (hidden(spec, at)) {
      have[field] = structuredClone(w);
      continue;
    }
    const ref = refOf(p.s);
    if (
      !ref ||
      !expandsAt(spec, ref, depth, seen, at) ||
      !(
        spec.writeOnly.concat(spec.secrets).some((h) => h.startsWith(`${at}.`)) ||
        (spec.nestedReferences ?? []).some((r) => pathWithin(r.at, at))
      )
    )
      continue;
    const into = (h: unknown, x: unknown) => {
      if (isObject(h) && isObject(x))
        overlay(spec, h, x, spec.defs[ref]?.props ?? {}, depth + 1, [...seen, ref], at);
    };
    if (p.s.t === "array") {
      const hs = have[k];
      if (Array.isArray(hs) && Array.isArray(w)) for (const [i, x] of w.entries()) into(hs[i], x);
    } else if (p.s.t === "map") {
      const hs = have[k];
      if (isObject(hs) && isObject(w)) for (const [key, x] of Object.entries(w)) into(hs[key], x);
    } else {
      // An object the cloud shows nothing of (all its set members write-only) is there all the same.
      if (have[k] === undefined && isObject(w)) have[k] = {};
      into(have[k], w);
    }
  }
}

/** The read-only properties (attributes) of a model; dotted names (Endpoint.Address) are nested paths. */
export function atProviderOf(spec: AwsccKindSpec, model: Json): Json {
  const out: Json = {};
  for (const [k, p] of Object.entries(spec.attributes)) {
    if (p.secret) continue;
    const x = fromWire(spec, p.s, attributeOf(model, p), 0, [], k, (at) =>
      spec.attributeSecrets.includes(at),
    );
    if (x !== undefined) out[k] = x;
  }
  return out;
}

/** The secret attributes of a model (a client secret, an access key's secret): the connection Secret's. */
export function secretAttributesOf(spec: AwsccKindSpec, model: Json): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, p] of Object.entries(spec.attributes)) {
    const v = p.secret ? attributeOf(model, p) : undefined;
    if (typeof v === "string" && v) out[k] = v;
  }
  return out;
}

function attributeOf(model: Json, p: AwsccProp): unknown {
  let v: unknown = model;
  for (const part of p.n.split(".")) v = isObject(v) ? v[part] : undefined;
  return v;
}

/** The properties create needs and the spec does not give (Cloud Control would refuse the model). */
export function missingRequired(spec: AwsccKindSpec, model: Json): string[] {
  return Object.entries(spec.properties)
    .filter(([, p]) => p.req && model[p.n] === undefined)
    .map(([k, p]) => (spec.secrets.includes(k) ? secretRefFieldOf(k, p.s) : k));
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
 * in the console is put back as the spec has it). Secrets, write-only inputs and create-only paths, at
 * any depth, are never part of it, nor is a whole value with a create-only path below it (the engine
 * reports that change as immutable); the identifier neither. `add` sets a member whether it exists or not.
 */
export function patchOf(spec: AwsccKindSpec, desired: Json, current: Json): PatchOp[] {
  const ops: PatchOp[] = [];
  for (const [k, p] of Object.entries(spec.properties)) {
    if (k === spec.identifierField || desired[p.n] === undefined) continue;
    diff(spec, p, k, `/${pointer(p.n)}`, desired[p.n], current[p.n], 0, [], ops);
  }
  return ops;
}

function diff(
  spec: AwsccKindSpec,
  p: Pick<AwsccProp, "s">,
  field: string,
  path: string,
  want: unknown,
  have: unknown,
  depth: number,
  seen: readonly string[],
  ops: PatchOp[],
) {
  if (hidden(spec, field) || spec.createOnly.includes(field)) return;
  if (equal(visible(spec, p.s, want, depth, seen, field), visible(spec, p.s, have, depth, seen, field)))
    return;
  const node = p.s;
  if (node.t === "ref" && isObject(want) && isObject(have) && expandsAt(spec, node.ref, depth, seen, field)) {
    const byWire = new Map(
      Object.entries(spec.defs[node.ref]?.props ?? {}).map(([k, x]) => [x.n, [k, x] as const]),
    );
    for (const [n, v] of Object.entries(want)) {
      const sub = byWire.get(n);
      if (!sub) continue;
      diff(
        spec,
        sub[1],
        childPath(field, sub[0]),
        `${path}/${pointer(n)}`,
        v,
        have[n],
        depth + 1,
        [...seen, node.ref],
        ops,
      );
    }
    return;
  }
  if (spec.createOnly.some((c) => c.startsWith(`${field}.`))) return;
  ops.push({ op: "add", path, value: want });
}

/** A wire value without its secrets and write-only inputs: what the cloud can be compared on. */
function visible(
  spec: AwsccKindSpec,
  node: AwsccNode,
  v: unknown,
  depth: number,
  seen: readonly string[],
  path: string,
): unknown {
  if (!spec.writeOnly.concat(spec.secrets).some((h) => h.startsWith(`${path}.`))) return v;
  return eachOf(node, v, (x, inner) => {
    if (inner.t !== "ref" || !isObject(x) || !expandsAt(spec, inner.ref, depth, seen, path)) return x;
    const out: Json = {};
    for (const [k, p] of Object.entries(spec.defs[inner.ref]?.props ?? {})) {
      const at = childPath(path, k);
      if (x[p.n] === undefined || hidden(spec, at)) continue;
      out[p.n] = visible(spec, p.s, x[p.n], depth + 1, [...seen, inner.ref], at);
    }
    return out;
  });
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
