// A generated kind's provider made once per spec: the catalogs hand out one spec object per kind, so the
// registry at load and the served kinds at cold start and each sweep share the provider, its definition and
// the schemas built from it (lazily, on the kind's first use). A provider made with options (a test's
// pacing) is made afresh.
import type { ManagedKindProvider } from "../api/external.ts";

export function providersBuiltOnce<S extends object, O>(make: (spec: S, opts?: O) => ManagedKindProvider) {
  const built = new WeakMap<S, ManagedKindProvider>();
  return (specs: readonly S[], opts?: O): ManagedKindProvider[] =>
    specs.map((s) => {
      if (opts) return make(s, opts);
      let p = built.get(s);
      if (!p) {
        p = make(s);
        built.set(s, p);
      }
      return p;
    });
}
