// The globs platform lists are written in (activation over CRD names, tenancy over namespaces).

/** A glob over CRD names: `*` matches any run of characters (dots included); nothing else is special. */
export function globMatcher(glob: string): (name: string) => boolean {
  const pattern = glob.trim().toLowerCase();
  if (!/^[a-z0-9.*-]+$/.test(pattern))
    throw new Error(`activation pattern "${glob}" may only hold a-z 0-9 . - and *`);
  const re = new RegExp(`^${pattern.replace(/\./g, "\\.").replace(/\*/g, ".*")}$`);
  return (name) => re.test(name.toLowerCase());
}
