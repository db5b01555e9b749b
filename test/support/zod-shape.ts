// The members of a zod object schema at a field path, through optional values and lists: where a nested
// reference's `…Ref` / `…Selector` fields must sit beside the field they fill.
export function shapeAt(schema: unknown, at: string | undefined): Record<string, unknown> | undefined {
  const unwrap = (z: unknown): unknown => {
    let x = z as { def?: { type?: string; innerType?: unknown; element?: unknown } };
    while (x?.def?.type === "optional" || x?.def?.type === "array")
      x = (x.def.type === "optional" ? x.def.innerType : x.def.element) as typeof x;
    return x;
  };
  let o = schema as { shape?: Record<string, unknown> } | undefined;
  for (const part of at ? at.split(".") : []) o = unwrap(o?.shape?.[part]) as typeof o;
  return o?.shape;
}
