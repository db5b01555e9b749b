// What the generated-kind testbeds (azure-gen.ts, gcp-generated.ts) share: their kinds' specs and defs by
// type, known at once, and what only `start()` makes (the fake, the reconciler), refused before it.
import type { ManagedKindDef } from "../../shared/api/managed.ts";

export function generatedKinds<Spec>(
  testbed: string,
  specs: Map<string, Spec>,
  kindOf: (spec: Spec) => ManagedKindDef,
) {
  const defs = new Map([...specs].map(([t, s]) => [t, kindOf(s)] as const));
  const known = <T>(type: string, v: T | undefined): T => {
    if (v === undefined) throw new Error(`${testbed}: ${type} is not one of its types`);
    return v;
  };
  return {
    specs,
    defs,
    spec: (type: string) => known(type, specs.get(type)),
    def: (type: string) => known(type, defs.get(type)),
    /** `v`, made by start(); an error before it. */
    started: <T>(what: string, v: T | undefined): T => {
      if (v === undefined) throw new Error(`${testbed}: ${what} before start()`);
      return v;
    },
  };
}
