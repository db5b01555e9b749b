// What the generated kinds' specs (awscc, azure-gen) share: members keyed by CRD name, each with a node
// `s` that is a scalar, a container (`array`, `map`) of a node, or a `ref` into the spec's object `defs`.
import { z } from "zod";
import { isObject, type Json } from "./json.ts";

/** The member path of `k` below `path` (arrays and maps add no step, as in the engine's paths). */
export const childPath = (path: string, k: string) => (path ? `${path}.${k}` : k);

/** The field a secret is read from: `<name>SecretRef`, or `<name>SecretRefs` for a list of strings. */
export const secretRefFieldOf = (field: string, node?: { t: string }) =>
  node?.t === "array" ? `${field}SecretRefs` : `${field}SecretRef`;

type Node = { t: string; of?: unknown; ref?: unknown };

/** A field the API server keeps as given (any JSON): the `json` type. */
export const freeForm = () => z.unknown().meta({ "x-kubernetes-preserve-unknown-fields": true });

/**
 * The zod schema of a node: scalars and containers (a list, a map of the node `of`) here, any other node
 * (an object type, a type of the cloud's own) by `other`; free-form JSON where `other` has no schema.
 */
export function zodSchemaOf<N extends Node>(node: N, other: (node: N) => z.ZodType | undefined): z.ZodType {
  switch (node.t) {
    case "string":
      return z.string();
    case "integer":
      return z.number().int();
    case "number":
      return z.number();
    case "boolean":
      return z.boolean();
    case "json":
      return freeForm();
    case "array":
      return z.array(zodSchemaOf(node.of as N, other));
    case "map":
      return z.record(z.string(), zodSchemaOf(node.of as N, other));
  }
  return other(node) ?? freeForm();
}
type Members<N> = Record<string, { s: N }>;

/** The node at a member path, from `top` through containers and object refs (undefined below free-form values). */
export function nodeAtPath<N extends Node>(
  top: Members<N>,
  defs: Record<string, { props: Members<N> } | undefined>,
  path: string,
): N | undefined {
  let props: Members<N> | undefined = top;
  let node: N | undefined;
  for (const k of path.split(".")) {
    node = props?.[k]?.s;
    if (!node) return undefined;
    let inner: Node = node;
    while ((inner.t === "array" || inner.t === "map") && inner.of) inner = inner.of as Node;
    props = inner.t === "ref" ? defs[inner.ref as string]?.props : undefined;
  }
  return node;
}

/** The CRD field path of a member path: a secret's last step is its `…SecretRef(s)` field. */
export function crdPathOfMember(
  secrets: readonly string[],
  path: string,
  node: (path: string) => Node | undefined,
) {
  if (!secrets.includes(path)) return path;
  const parts = path.split(".");
  const last = parts.pop() ?? "";
  return [...parts, secretRefFieldOf(last, node(path))].join(".");
}

/**
 * `f` on each item of `v` at `node`, through containers (a list's items, a map's values), naming each
 * item's place (`users[0]`, `tags.team`) for messages: the same shape back, with `f`'s answers.
 */
export async function eachItem<N extends Node>(
  node: N,
  v: unknown,
  where: string,
  f: (x: unknown, node: N, where: string) => Promise<unknown>,
): Promise<unknown> {
  if (node.t === "array" && Array.isArray(v))
    return Promise.all(v.map((x, i) => eachItem(node.of as N, x, `${where}[${i}]`, f)));
  if (node.t === "map" && isObject(v)) {
    const out: Json = {};
    for (const [k, x] of Object.entries(v)) out[k] = await eachItem(node.of as N, x, `${where}.${k}`, f);
    return out;
  }
  return f(v, node, where);
}
