// The wire side of a generated Azure kind: forProvider (ARM's own body names, secrets as Secret keys) ↔ the
// PUT body and the GET answer. Walks the spec's nodes (api/azure-gen/spec.ts): secrets and write-only inputs
// are never read back or compared, ARM's normalisations (ids in any case, `East US` ≡ `eastus`) are never
// drift, read-only members go to atProvider and secret ones to the connection Secret only.
import { childPath, secretRefFieldOf } from "../../../api/azure-gen/kind.ts";
import {
  type AzNode,
  type AzProp,
  type AzureKindSpec,
  variantOf,
  variantOfValue,
} from "../../../api/azure-gen/spec.ts";
import { eachItem } from "../../../api/generated-spec.ts";
import { isObject, type Json } from "../../../api/json.ts";
import type { SecretKeySelector } from "../../../api/meta.ts";
import type { SecretUse } from "../../secret-refs.ts";

/** ARM's programmatic form of a location: "West Europe" → "westeurope". */
export const normaliseLocation = (location: string) => location.replace(/\s+/g, "").toLowerCase();
const isArmId = (s: string) => /^\/subscriptions\//i.test(s);

/** A secret or a write-only input: never read back from the cloud or compared. */
const hidden = (spec: AzureKindSpec, path: string) =>
  spec.secrets.includes(path) || spec.writeOnly.includes(path);

/** The PUT body: forProvider's body members with every `…SecretRef(s)` replaced by the secret's value. */
export async function desiredBody(
  spec: AzureKindSpec,
  forProvider: Json,
  read: (use: SecretUse) => Promise<string>,
): Promise<Json> {
  const walk = async (v: Json, props: Record<string, AzProp>, path: string, where: string): Promise<Json> => {
    const out: Json = {};
    for (const [k, p] of Object.entries(props)) {
      const at = childPath(path, k);
      const here = where ? `${where}.${k}` : k;
      if (spec.secrets.includes(at)) {
        const field = secretRefFieldOf(k, p.s);
        const ref = v[field];
        if (Array.isArray(ref))
          out[k] = await Promise.all(
            ref.map((r, i) =>
              read({ at: `${here}${field.slice(k.length)}[${i}]`, ref: r as SecretKeySelector }),
            ),
          );
        else if (isObject(ref))
          out[k] = await read({ at: `${here}${field.slice(k.length)}`, ref: ref as SecretKeySelector });
        continue;
      }
      if (v[k] === undefined) continue;
      out[k] = await eachItem(p.s, v[k], here, async (x, node, w) => {
        const def = node.t === "ref" ? spec.defs[node.ref] : undefined;
        return def && isObject(x) ? walk(x, def.props, at, w) : x;
      });
    }
    return out;
  };
  return onWire(spec, await walk(forProvider, spec.body, "", ""));
}

/**
 * A union kind's body as ARM has it: the set variant's members are the body's own and the discriminator
 * carries the variant's value (on the name, it is the resource's name: nothing to add to the body).
 */
function onWire(spec: AzureKindSpec, body: Json): Json {
  const union = spec.union;
  if (!union) return body;
  const set = variantOf(spec, body);
  const out: Json = {};
  for (const [k, v] of Object.entries(body)) if (!Object.values(union.variants).includes(k)) out[k] = v;
  if (!set) return out;
  return {
    ...out,
    ...(isObject(body[set.field]) ? (body[set.field] as Json) : {}),
    ...(union.on === "body" ? { [union.disc]: set.value } : {}),
  };
}

/**
 * An ARM document of a union kind in the spec's shape: the variant its discriminator (or, `on: "name"`,
 * its name) names holds that variant's members; the base's stay where they are. A document whose
 * variant the kind does not know is left as it is (no variant set: drift on what the spec sets).
 */
export function fromWire(spec: AzureKindSpec, body: Json): Json {
  const union = spec.union;
  if (!union) return body;
  const set = variantOfValue(spec, union.on === "name" ? body.name : body[union.disc]);
  if (!set) return body;
  const variantProps = (ref: AzProp | undefined) =>
    ref?.s.t === "ref" ? Object.keys(spec.defs[ref.s.ref]?.props ?? {}) : [];
  const mine = new Set([...variantProps(spec.body[set.field]), ...variantProps(spec.out[set.field])]);
  const out: Json = {};
  const variant: Json = {};
  for (const [k, v] of Object.entries(body)) {
    if (mine.has(k)) variant[k] = v;
    else out[k] = v;
  }
  out[set.field] = variant;
  return out;
}

/**
 * The GET answer in forProvider's shape. Secrets and write-only inputs are taken from `want` as they are
 * (their `…SecretRef`s included); an id or a location ARM writes another way than the spec is the spec's.
 */
export function observedOf(spec: AzureKindSpec, body: Json, want: Json, names: Json): Json {
  const out: Json = { ...names };
  const v = project(spec, { t: "ref", ref: "" }, fromWire(spec, body), want, "", spec.body) as Json;
  // Another variant in the cloud than the spec's: the spec's is absent there (drift, put back by the PUT),
  // and the cloud's is not shown — late-init would otherwise fill it beside the spec's (two variants).
  const mine = variantOf(spec, want);
  const theirs = variantOf(spec, v);
  if (mine && theirs && mine.field !== theirs.field) delete v[theirs.field];
  Object.assign(out, v);
  return out;
}

function project(
  spec: AzureKindSpec,
  node: AzNode,
  have: unknown,
  want: unknown,
  path: string,
  top?: Record<string, AzProp>,
): unknown {
  if (have === undefined || have === null) return undefined;
  switch (node.t) {
    case "ref": {
      const props = top ?? spec.defs[node.ref]?.props;
      if (!props || !isObject(have)) return have;
      const w = isObject(want) ? want : {};
      const out: Json = {};
      for (const [k, p] of Object.entries(props)) {
        const at = childPath(path, k);
        if (hidden(spec, at)) {
          const field = spec.secrets.includes(at) ? secretRefFieldOf(k, p.s) : k;
          if (w[field] !== undefined) out[field] = structuredClone(w[field]);
          continue;
        }
        const x = project(spec, p.s, have[k], w[k], at);
        if (x !== undefined) out[k] = x;
      }
      return out;
    }
    case "array":
      return Array.isArray(have)
        ? have.map((x, i) => project(spec, node.of, x, Array.isArray(want) ? want[i] : undefined, path))
        : have;
    case "map":
      return isObject(have)
        ? Object.fromEntries(
            Object.entries(have).map(([k, x]) => [
              k,
              project(spec, node.of, x, isObject(want) ? want[k] : undefined, path),
            ]),
          )
        : have;
    case "string":
      if (typeof have !== "string" || typeof want !== "string") return have;
      if (path === "location" && normaliseLocation(have) === normaliseLocation(want)) return want;
      if (isArmId(have) && have.toLowerCase() === want.toLowerCase()) return want;
      return have;
    case "integer":
      return typeof have === "string" && /^-?\d+$/.test(have) ? Number(have) : have;
    default:
      return have;
  }
}

const get = (o: unknown, path: string) =>
  path.split(".").reduce<unknown>((v, k) => (isObject(v) ? v[k] : undefined), o);

/** The read-only members of a GET answer (atProvider), without the secret ones. */
export function atProviderOf(spec: AzureKindSpec, body: Json): Json {
  const strip = (v: unknown, path: string): unknown => {
    if (!isObject(v)) return Array.isArray(v) ? v.map((x) => strip(x, path)) : v;
    const out: Json = {};
    for (const [k, x] of Object.entries(v)) {
      const at = childPath(path, k);
      if (!spec.outSecrets.includes(at)) out[k] = strip(x, at);
    }
    return out;
  };
  const projected = project(
    spec,
    { t: "ref", ref: "" },
    fromWire(spec, body),
    undefined,
    "",
    spec.out,
  ) as Json;
  return strip(projected, "") as Json;
}

/** The secret read-only strings of a GET answer: connection Secret keys named by their path. */
export function outSecretsOf(spec: AzureKindSpec, body: Json): Record<string, string> {
  const out: Record<string, string> = {};
  const shaped = fromWire(spec, body);
  for (const p of spec.outSecrets) {
    const v = get(shaped, p);
    if (typeof v === "string" && v) out[p] = v;
  }
  return out;
}

/**
 * The strings of a `list*` function's answer as connection Secret keys: `<path>` with list items named by
 * their keyName/name when they have one (`keys.key1.value`), else by index.
 */
export function flattenSecrets(
  v: unknown,
  prefix: string,
  out: Record<string, string> = {},
): Record<string, string> {
  if (typeof v === "string") {
    if (prefix) out[prefix] = v;
  } else if (Array.isArray(v)) {
    v.forEach((x, i) => {
      const label = isObject(x) ? (x.keyName ?? x.name) : undefined;
      flattenSecrets(x, `${prefix}.${typeof label === "string" ? label : i}`, out);
    });
  } else if (isObject(v)) {
    for (const [k, x] of Object.entries(v)) flattenSecrets(x, prefix ? `${prefix}.${k}` : k, out);
  }
  return out;
}

/**
 * Top-level members create needs and the spec (`forProvider`) does not give: required base members, one
 * variant of a union kind, and that variant's own required members.
 */
export function missingRequired(spec: AzureKindSpec, forProvider: Json): string[] {
  const missing = (props: Record<string, AzProp>, v: Json, prefix: string) =>
    Object.entries(props)
      .filter(
        ([k, p]) =>
          p.req && v[spec.secrets.includes(`${prefix}${k}`) ? secretRefFieldOf(k, p.s) : k] === undefined,
      )
      .map(([k, p]) => `${prefix}${spec.secrets.includes(`${prefix}${k}`) ? secretRefFieldOf(k, p.s) : k}`);
  const out = missing(spec.body, forProvider, "");
  if (!spec.union) return out;
  const set = variantOf(spec, forProvider);
  if (!set) return [...out, `one of ${Object.values(spec.union.variants).join(" / ")}`];
  const node = spec.body[set.field]?.s;
  const def = node?.t === "ref" ? spec.defs[node.ref] : undefined;
  const v = forProvider[set.field];
  return [...out, ...(def && isObject(v) ? missing(def.props, v, `${set.field}.`) : [])];
}
