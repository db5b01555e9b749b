// The wire side of a generated Azure kind: forProvider (ARM's own body names, secrets as Secret keys) ↔ the
// PUT body and the GET answer. Walks the spec's nodes (api/azure-gen/spec.ts): secrets and write-only inputs
// are never read back or compared, ARM's normalisations (ids in any case, `East US` ≡ `eastus`) are never
// drift, read-only members go to atProvider and secret ones to the connection Secret only.
import { childPath, secretRefFieldOf } from "../../../api/azure-gen/kind.ts";
import type { AzNode, AzProp, AzureKindSpec } from "../../../api/azure-gen/spec.ts";
import type { SecretKeySelector } from "../../../api/meta.ts";
import type { SecretUse } from "../../secret-refs.ts";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

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
      out[k] = await each(p.s, v[k], here, async (x, node, w) => {
        const def = node.t === "ref" ? spec.defs[node.ref] : undefined;
        return def && isObject(x) ? walk(x, def.props, at, w) : x;
      });
    }
    return out;
  };
  return walk(forProvider, spec.body, "", "");
}

async function each(
  node: AzNode,
  v: unknown,
  where: string,
  f: (x: unknown, node: AzNode, where: string) => Promise<unknown>,
): Promise<unknown> {
  if (node.t === "array" && Array.isArray(v))
    return Promise.all(v.map((x, i) => each(node.of, x, `${where}[${i}]`, f)));
  if (node.t === "map" && isObject(v)) {
    const out: Json = {};
    for (const [k, x] of Object.entries(v)) out[k] = await each(node.of, x, `${where}.${k}`, f);
    return out;
  }
  return f(v, node, where);
}

/**
 * The GET answer in forProvider's shape. Secrets and write-only inputs are taken from `want` as they are
 * (their `…SecretRef`s included); an id or a location ARM writes another way than the spec is the spec's.
 */
export function observedOf(spec: AzureKindSpec, body: Json, want: Json, names: Json): Json {
  const out: Json = { ...names };
  const v = project(spec, { t: "ref", ref: "" }, body, want, "", spec.body);
  Object.assign(out, v as Json);
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
  const projected = project(spec, { t: "ref", ref: "" }, body, undefined, "", spec.out) as Json;
  return strip(projected, "") as Json;
}

/** The secret read-only strings of a GET answer: connection Secret keys named by their path. */
export function outSecretsOf(spec: AzureKindSpec, body: Json): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of spec.outSecrets) {
    const v = get(body, p);
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

/** Top-level members create needs and the spec does not give. */
export function missingRequired(spec: AzureKindSpec, body: Json): string[] {
  return Object.entries(spec.body)
    .filter(([k, p]) => p.req && body[k] === undefined)
    .map(([k, p]) => (spec.secrets.includes(k) ? secretRefFieldOf(k, p.s) : k));
}
