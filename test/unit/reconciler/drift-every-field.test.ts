// "Spec sets X, cloud lacks X → update", for every managed kind and every field a user can set: the
// engine's comparison must report each one as drift, unless the kind declares it writeOnly (the cloud
// never shows it) or it only names a reference. A kind's observe that omits a value the cloud lacks is
// then corrected, never read as in sync.
import { describe, expect, it } from "vitest";
import { managedKinds } from "../../../shared/providers/index.ts";
import { driftedFields, mapPaths } from "../../../shared/reconciler/compare.ts";

interface Node {
  def?: {
    type?: string;
    innerType?: Node;
    shape?: Record<string, Node>;
    element?: Node;
    valueType?: Node;
    entries?: Record<string, string>;
    values?: unknown[];
    options?: Node[];
    in?: Node;
  };
}

const unwrap = (n: Node): Node => {
  let node = n;
  while (node.def?.innerType || node.def?.in) node = (node.def.innerType ?? node.def.in) as Node;
  return node;
};

/** A value of the schema's type that no cloud would report by accident, or undefined when none can be made. */
function sample(n: Node): unknown {
  const node = unwrap(n);
  switch (node.def?.type) {
    case "string":
      return "set-by-user";
    case "number":
    case "int":
      return 7;
    case "boolean":
      return true;
    case "enum":
      return Object.values(node.def.entries ?? {})[0];
    case "literal":
      return node.def.values?.[0];
    case "array": {
      const v = node.def.element ? sample(node.def.element) : undefined;
      return v === undefined ? undefined : [v];
    }
    case "record":
      return { "set-by": "user" };
    case "object":
      return undefined; // walked field by field
    case "union":
      return node.def.options?.[0] ? sample(node.def.options[0]) : undefined;
    default:
      return undefined;
  }
}

/** Every leaf path of an object schema with a sample value. */
function leaves(n: Node, prefix = ""): Array<[string, unknown]> {
  const node = unwrap(n);
  if (node.def?.type === "object" && node.def.shape) {
    return Object.entries(node.def.shape).flatMap(([k, child]) =>
      leaves(child, prefix ? `${prefix}.${k}` : k),
    );
  }
  const v = sample(node);
  return v === undefined ? [] : [[prefix, v]];
}

function setPath(path: string, value: unknown): Record<string, unknown> {
  const parts = path.split(".");
  const root: Record<string, unknown> = {};
  let o = root;
  for (const p of parts.slice(0, -1)) {
    const next: Record<string, unknown> = {};
    o[p] = next;
    o = next;
  }
  o[parts.at(-1) ?? ""] = value;
  return root;
}

describe("drift by absence, every kind and every settable field", () => {
  const rows = managedKinds.flatMap((p) => {
    const def = p.definition;
    const skipped = new Set([
      ...def.references.flatMap((r) => [r.refField, r.selectorField]),
      ...Object.entries(def.fields)
        .filter(([, f]) => f.writeOnly)
        .map(([k]) => k),
    ]);
    const maps = mapPaths(def.forProvider);
    return leaves(def.forProvider as unknown as Node)
      .filter(([path]) => ![...skipped].some((s) => path === s || path.startsWith(`${s}.`)))
      .map(([path, value]) => ({ kind: `${def.kind}.${def.group}`, path, value, maps, fields: def.fields }));
  });

  it("has fields to check for every kind", () => {
    for (const p of managedKinds)
      expect(rows.some((r) => r.kind === `${p.definition.kind}.${p.definition.group}`)).toBe(true);
  });

  it.each(rows)("$kind: spec sets $path, the cloud lacks it → drift", ({ path, value, maps, fields }) => {
    const desired = setPath(path, value);
    const drift = driftedFields(desired, {}, maps, fields);
    expect(drift.some((d) => path === d || path.startsWith(`${d}.`))).toBe(true);
  });
});
