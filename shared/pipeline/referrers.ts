// The forwarder's referrer index: which objects wait for which by reference (`<field>Ref` / `<field>Refs`
// by name, not yet resolved), so that the moment a referenced object turns Ready the objects waiting for it
// are forwarded at once, instead of at the end of their wait's backoff (up to 30 s; a chain of five pays it
// up to four times). Level-triggered like everything the forwarder sends: a key sent too often costs one
// reconcile that finds nothing to do; one not sent is still looked at after its backoff.
//
// Memory: one entry per object still waiting for a reference (its targets' keys), and one per target that
// has a waiting referrer. Selectors are not indexed (which object they match is not known without reading
// it); their referrers keep their backoff.
import type { ReferenceDef } from "../api/managed.ts";
import type { ObjectMeta, Reference } from "../api/meta.ts";
import { holdersOf } from "../api/reference.ts";

/** A key as the forwarder sends it. */
export interface ReferrerKey {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** An object as a list or watch shows it: what the index reads of it. */
export interface SeenObject {
  apiVersion?: string;
  kind?: string;
  metadata: Pick<ObjectMeta, "name" | "namespace">;
  spec?: { forProvider?: Record<string, unknown> };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

const keyText = (k: ReferrerKey) => `${k.apiVersion}/${k.kind}/${k.namespace ?? ""}/${k.name}`;
const isEmpty = (v: unknown) =>
  v === undefined || v === null || v === "" || (Array.isArray(v) && v.length === 0);
const readyOf = (o: SeenObject) =>
  o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

/** Which objects wait for which by reference, and which of those targets were last seen Ready. */
export class ReferrerIndex {
  /** apiVersion/kind → the kind's references (only kinds that have any). */
  readonly #refsOf = new Map<string, readonly ReferenceDef[]>();
  /** referrer key → its unresolved targets' keys. */
  readonly #targetsOf = new Map<string, Set<string>>();
  /** target key → the referrers waiting for it. */
  readonly #referrersOf = new Map<string, Map<string, ReferrerKey>>();
  /** Targets with waiting referrers that were Ready when last seen. */
  readonly #ready = new Set<string>();

  constructor(kinds: readonly { apiVersion: string; kind: string; references: readonly ReferenceDef[] }[]) {
    for (const k of kinds)
      if (k.references.length > 0) this.#refsOf.set(`${k.apiVersion}/${k.kind}`, k.references);
  }

  /** Objects waiting for a reference now (for stats and tests). */
  get waiting(): number {
    return this.#targetsOf.size;
  }

  /**
   * Records `obj` of `type` as a list or watch showed it: what it waits for, if anything, and whether it
   * is Ready. Returns the referrers to forward now: those waiting for `obj` when it has just turned Ready.
   */
  seen(type: { apiVersion: string; kind: string }, obj: SeenObject): ReferrerKey[] {
    const self: ReferrerKey = {
      apiVersion: type.apiVersion,
      kind: type.kind,
      name: obj.metadata.name,
      ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
    };
    const key = keyText(self);
    const refs = this.#refsOf.get(`${type.apiVersion}/${type.kind}`);
    if (refs) this.#index(self, key, this.#waitsFor(refs, obj));
    const waiting = this.#referrersOf.get(key);
    if (!waiting) return [];
    if (!readyOf(obj)) {
      this.#ready.delete(key);
      return [];
    }
    if (this.#ready.has(key)) return [];
    this.#ready.add(key);
    return [...waiting.values()];
  }

  /** Forgets an object that is gone (as referrer; its referrers keep waiting for it). */
  gone(type: { apiVersion: string; kind: string }, meta: Pick<ObjectMeta, "name" | "namespace">): void {
    const self = {
      apiVersion: type.apiVersion,
      kind: type.kind,
      name: meta.name,
      ...(meta.namespace ? { namespace: meta.namespace } : {}),
    };
    const key = keyText(self);
    this.#index(self, key, new Set());
    this.#ready.delete(key);
  }

  #index(self: ReferrerKey, key: string, targets: Set<string>): void {
    for (const t of this.#targetsOf.get(key) ?? [])
      if (!targets.has(t)) {
        const referrers = this.#referrersOf.get(t);
        referrers?.delete(key);
        if (referrers?.size === 0) {
          this.#referrersOf.delete(t);
          this.#ready.delete(t);
        }
      }
    if (targets.size === 0) {
      this.#targetsOf.delete(key);
      return;
    }
    this.#targetsOf.set(key, targets);
    for (const t of targets) {
      let referrers = this.#referrersOf.get(t);
      if (!referrers) {
        referrers = new Map();
        this.#referrersOf.set(t, referrers);
      }
      referrers.set(key, self);
    }
  }

  /** The targets `obj` still waits for: references by name whose field is empty (or resolved Always). */
  #waitsFor(refs: readonly ReferenceDef[], obj: SeenObject): Set<string> {
    const targets = new Set<string>();
    const fp = obj.spec?.forProvider ?? {};
    for (const ref of refs)
      for (const { holder } of holdersOf(fp, ref.at)) {
        const value = holder[ref.refField] as Reference | Reference[] | undefined;
        const named = (Array.isArray(value) ? value : value ? [value] : []).filter((r) => r?.name);
        const always = named.some((r) => r.policy?.resolve === "Always");
        if (named.length === 0 || (!isEmpty(holder[ref.field]) && !always)) continue;
        for (const r of named) {
          const to = targetOf(ref, r as Reference & { apiVersion?: string; kind?: string });
          if (!to) continue;
          targets.add(
            keyText({
              apiVersion: to.apiVersion,
              kind: to.kind,
              name: r.name,
              // A namespaced resource references only resources in its own namespace.
              ...(to.namespaced && obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
            }),
          );
        }
      }
    return targets;
  }
}

/** The kind a reference names (ReferenceDef.anyKind), or its own `to`; undefined for a kind it may not name. */
function targetOf(
  ref: ReferenceDef,
  named: { apiVersion?: string; kind?: string },
): ReferenceDef["to"] | undefined {
  if (!ref.anyKind || !named.apiVersion || !named.kind) return ref.to;
  return ref.anyKind(named.apiVersion, named.kind);
}
