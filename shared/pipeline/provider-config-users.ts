// Which ProviderConfig each managed resource uses, from the objects the forwarder already lists and watches:
// the ProviderConfig reconciler of `driftless run` counts a ProviderConfig's users from here instead of
// listing every managed kind of its cloud on each reconcile (6–7 reconciles per ProviderConfig at start,
// each a list per kind). Crossplane counts from its manager's informer cache the same way.
//
// A kind's count is known only when it is: its CRD is not served yet (no object of it can exist), or the
// forwarder has finished a complete list of it (from then on every watch event keeps it current, and a
// relist after 410 Gone reports what vanished). Otherwise `count` answers undefined and the reconciler lists
// that kind, as before. The reconciler still lists every kind before it releases a ProviderConfig that is
// being deleted: the deletion protection never rests on a cache.
import {
  type ManagedKindDef,
  type ManagedResource,
  type ProviderConfigTarget,
  providerConfigKey,
  providerConfigOf,
} from "../api/managed.ts";
import type { ObjectMeta } from "../api/meta.ts";
import type { KnownUsers } from "../reconciler/provider-config.ts";

type KindOf = { apiVersion: string; kind: string };
const kindText = (k: KindOf) => `${k.apiVersion}/${k.kind}`;
const objectText = (m: Pick<ObjectMeta, "name" | "namespace">) => `${m.namespace ?? ""}/${m.name}`;

/** Per managed kind: the ProviderConfig key each object uses, and the users per ProviderConfig key. */
interface KindUsers {
  state: "unknown" | "not-served" | "listed";
  configOf: Map<string, string>;
  users: Map<string, number>;
}

export class ProviderConfigUsers implements KnownUsers {
  readonly #defs = new Map<string, ManagedKindDef>();
  readonly #kinds = new Map<string, KindUsers>();

  constructor(kinds: readonly ManagedKindDef[]) {
    for (const def of kinds) this.#defs.set(kindText(def), def);
  }

  /** The users of `target` among the objects of `def`, or undefined when this index does not know them. */
  count(def: KindOf, target: ProviderConfigTarget): number | undefined {
    const k = this.#kinds.get(kindText(def));
    if (k?.state === "not-served") return 0;
    if (k?.state !== "listed") return undefined;
    return k.users.get(providerConfigKey(target)) ?? 0;
  }

  /** The kind's CRD is not served yet: it has no objects. */
  notServed(kind: KindOf): void {
    const k = this.#kind(kind);
    if (k) k.state = "not-served";
  }

  /** The kind's CRD is served: its objects are not known until its first complete list. */
  served(kind: KindOf): void {
    const k = this.#kind(kind);
    if (k && k.state === "not-served") k.state = "unknown";
  }

  /** A complete list of the kind has been seen (every object of it through `seen`, the vanished through `gone`). */
  listed(kind: KindOf): void {
    const k = this.#kind(kind);
    if (k) k.state = "listed";
  }

  /** An object as a list or watch event shows it. */
  seen(kind: KindOf, obj: ManagedResource): void {
    const def = this.#defs.get(kindText(kind));
    const k = this.#kind(kind);
    if (!def || !k) return;
    this.#set(k, objectText(obj.metadata), providerConfigKey(providerConfigOf(def, obj)));
  }

  /** An object that is gone. */
  gone(kind: KindOf, meta: Pick<ObjectMeta, "name" | "namespace">): void {
    const k = this.#kind(kind);
    if (k) this.#set(k, objectText(meta), undefined);
  }

  #kind(kind: KindOf): KindUsers | undefined {
    const text = kindText(kind);
    if (!this.#defs.has(text)) return undefined;
    let k = this.#kinds.get(text);
    if (!k) {
      k = { state: "unknown", configOf: new Map(), users: new Map() };
      this.#kinds.set(text, k);
    }
    return k;
  }

  #set(k: KindUsers, object: string, config: string | undefined): void {
    const before = k.configOf.get(object);
    if (before === config) return;
    if (before !== undefined) {
      const n = (k.users.get(before) ?? 1) - 1;
      if (n > 0) k.users.set(before, n);
      else k.users.delete(before);
    }
    if (config === undefined) {
      k.configOf.delete(object);
      return;
    }
    k.configOf.set(object, config);
    k.users.set(config, (k.users.get(config) ?? 0) + 1);
  }
}
