// Reading generated CRD schemas the way `kubectl explain` does: walks properties (through array items and
// map values) and reports field paths without a description.
type Node = { [key: string]: unknown };

const asNode = (v: unknown): Node | undefined =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Node) : undefined;

/** Every field path (`spec.forProvider.tags`, `items[]`, `map{}` for values) whose schema has no description. */
export function undocumentedFields(schema: unknown, prefix = ""): string[] {
  const node = asNode(schema);
  if (!node) return [];
  const out: string[] = [];
  const props = asNode(node.properties);
  for (const [name, child] of Object.entries(props ?? {})) {
    const path = prefix ? `${prefix}.${name}` : name;
    const c = asNode(child);
    if (!c || typeof c.description !== "string" || c.description.trim() === "") out.push(path);
    out.push(...undocumentedFields(child, path));
  }
  const items = asNode(node.items);
  if (items) out.push(...undocumentedFields(items, `${prefix}[]`));
  const values = asNode(node.additionalProperties);
  if (values) out.push(...undocumentedFields(values, `${prefix}{}`));
  return out;
}
