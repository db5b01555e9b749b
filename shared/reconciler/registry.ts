import type { ManagedKindProvider } from "../api/external.ts";
import type { ManagedKindDef } from "../api/managed.ts";

/** The managed kinds this process reconciles, looked up by apiVersion + kind. */
export class KindRegistry {
  readonly #byKey = new Map<string, ManagedKindProvider>();

  constructor(providers: Iterable<ManagedKindProvider> = []) {
    for (const p of providers) this.register(p);
  }

  register(p: ManagedKindProvider): this {
    this.#byKey.set(`${p.definition.apiVersion}/${p.definition.kind}`, p);
    return this;
  }

  get(apiVersion: string, kind: string): ManagedKindProvider | undefined {
    return this.#byKey.get(`${apiVersion}/${kind}`);
  }

  get definitions(): ManagedKindDef[] {
    return [...this.#byKey.values()].map((p) => p.definition);
  }

  get providers(): ManagedKindProvider[] {
    return [...this.#byKey.values()];
  }
}
