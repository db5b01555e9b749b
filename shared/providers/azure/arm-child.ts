// The template of the Azure kinds that live inside a parent ARM resource (a subnet in its virtual
// network, a firewall rule or database in its flexible server): found by the parent the spec names,
// written with a PUT whose long-running operation is started and never waited for (observe follows it),
// deleted likewise, batch-observed with one list per parent. Each kind supplies its parent, its ARM
// calls (arm-rest.ts), its field mapping and how its writes fail.
import type { z } from "zod";
import {
  type ExternalClient,
  type ExternalListing,
  type ExternalObservation,
  InvalidSpecError,
  type ObserveManyItem,
} from "../../api/external.ts";
import type { AnyObjectSchema, ManagedKindDef, ManagedResource } from "../../api/managed.ts";
import { armProvider } from "./arm-provider.ts";
import type { ArmRest } from "./arm-rest.ts";
import { azure, isGone } from "./config.ts";
import { listEach } from "./network-client.ts";

/** One child kind's ARM calls on its parent `P` (writes are started, none waited for). */
export interface ChildCalls<P, T> {
  get(p: P, name: string): Promise<T>;
  list(p: P): AsyncIterable<T[]>;
  put(p: P, name: string, body: T): Promise<unknown>;
  remove(p: P, name: string): Promise<unknown>;
}

/** Where a child kind lives: its parent from the spec, the parent's list key, and the message without one. */
export interface ChildParent<F, P> {
  of(fp: F): P | undefined;
  /** The parent as a list key: ARM names are case-insensitive. */
  key(p: P): string;
  /** The InvalidSpecError message when the spec names no parent (yet). */
  missing: string;
  /** The forProvider fields that name a parent (`driftless import` writes them). */
  fields(p: P): Record<string, string>;
}

/** One child kind's fields: what observe reports of a child, and the bodies that create or update one. */
export interface ChildMapping<F, A, P, T> {
  /** "subnet", "firewall rule", "database": for messages. */
  what: string;
  observationOf(fp: F, parent: P, child: T): ExternalObservation<F, A>;
  /** The PUT body of a create; throws InvalidSpecError for what is missing. */
  createBody(fp: F): T;
  /**
   * The PUT body that brings an existing child to the spec, or undefined when nothing is to be sent;
   * `current` is the child as observe read it (read again after a batched observe). Absent: every
   * field is immutable.
   */
  updateBody?(fp: F, current: () => Promise<T>): T | undefined | Promise<T | undefined>;
}

/** How a child kind's writes fail: a wrapper of each write, and what a refused delete means. */
export interface ChildWrites<P> {
  /** Runs a write, classifying its error (default: azure()). */
  guard?<R>(parent: P, call: () => Promise<R>): Promise<R>;
  /** A refused delete as the engine should see it (e.g. "still in use": it waits); default: as is. */
  refusedDelete?(name: string, err: unknown): unknown;
}

export interface ArmChildKind<F, A, P, T> {
  parent: ChildParent<F, P>;
  /** Every parent in the subscription, group by group (`driftless import` lists each one's children). */
  parents(): AsyncIterable<P>;
  calls: ChildCalls<P, T>;
  mapping: ChildMapping<F, A, P, T>;
  writes?: ChildWrites<P>;
}

export class ArmChildClient<F, A, P, T extends { name?: string }> implements ExternalClient<F, A> {
  readonly #kind: ArmChildKind<F, A, P, T>;
  // The child as observe() read it, handed to update() (the engine passes the very same observation).
  readonly #read = new WeakMap<ExternalObservation<F, A>, T>();
  constructor(kind: ArmChildKind<F, A, P, T>) {
    this.#kind = kind;
  }

  #guard<R>(parent: P, call: () => Promise<R>): Promise<R> {
    const guard = this.#kind.writes?.guard;
    return guard ? guard(parent, call) : azure(call);
  }

  #requireParent(fp: F): P {
    const parent = this.#kind.parent.of(fp);
    if (!parent) throw new InvalidSpecError(this.#kind.parent.missing);
    return parent;
  }

  async observe(mr: ManagedResource<F, A>, name: string | undefined): Promise<ExternalObservation<F, A>> {
    const fp = mr.spec.forProvider;
    const parent = this.#kind.parent.of(fp);
    // Without its parent nothing can be found (nor was anything created).
    if (!name || !parent) return { resourceExists: false };
    return azure(async () => {
      let child: T;
      try {
        child = await this.#kind.calls.get(parent, name);
      } catch (err) {
        // The child, its parent or its group missing all mean "no child"; a missing subscription does not.
        if (isGone(err)) return { resourceExists: false };
        throw err;
      }
      const obs = this.#kind.mapping.observationOf(fp, parent, child);
      this.#read.set(obs, child);
      return obs;
    });
  }

  /**
   * One list per parent the items name, one request per page; a parent that is gone has no children.
   * A listed child is not kept for update(): update reads the child afresh.
   */
  async observeMany(
    items: ReadonlyArray<ObserveManyItem<F, A>>,
  ): Promise<Array<ExternalObservation<F, A> | Error>> {
    const { parent: where, calls, mapping } = this.#kind;
    const parents = new Map<string, P>();
    for (const { mr } of items) {
      const parent = where.of(mr.spec.forProvider);
      if (parent) parents.set(where.key(parent), parent);
    }
    const lists = await listEach(parents, (p) => calls.list(p));
    return items.map(({ mr, externalName }) => {
      const parent = where.of(mr.spec.forProvider);
      const children = parent ? lists.get(where.key(parent)) : undefined;
      if (!parent || children === undefined) return { resourceExists: false };
      if (children instanceof Error) return children;
      const child = children.get(externalName.toLowerCase());
      return child ? mapping.observationOf(mr.spec.forProvider, parent, child) : { resourceExists: false };
    });
  }

  /**
   * Every child in the subscription (`driftless import`): the parents listed group by group, then each
   * parent's children; a parent deleted between the two lists has none.
   */
  async list(): Promise<ExternalListing[]> {
    const { parent: where, parents, calls } = this.#kind;
    const out: ExternalListing[] = [];
    await azure(async () => {
      for await (const p of parents()) {
        const parent = where.fields(p);
        try {
          for await (const page of calls.list(p))
            for (const child of page)
              if (child.name)
                out.push({
                  externalName: child.name,
                  forProvider: { ...parent },
                  parent: Object.keys(parent),
                });
        } catch (err) {
          if (!isGone(err)) throw err;
        }
      }
    });
    return out;
  }

  async create(mr: ManagedResource<F, A>, name: string | undefined) {
    if (!name) throw new Error(`a ${this.#kind.mapping.what} needs a name (crossplane.io/external-name)`);
    const parent = this.#requireParent(mr.spec.forProvider);
    const body = this.#kind.mapping.createBody(mr.spec.forProvider);
    await this.#guard(parent, () => this.#kind.calls.put(parent, name, body));
    return {};
  }

  async update(mr: ManagedResource<F, A>, name: string, obs: ExternalObservation<F, A>) {
    const { calls, mapping } = this.#kind;
    if (!mapping.updateBody) return {};
    const fp = mr.spec.forProvider;
    const parent = this.#requireParent(fp);
    await this.#guard(parent, async () => {
      const read = this.#read.get(obs);
      const body = await mapping.updateBody?.(fp, async () => read ?? calls.get(parent, name));
      if (body) await calls.put(parent, name, body);
    });
    return {};
  }

  async delete(mr: ManagedResource<F, A>, name: string) {
    const parent = this.#kind.parent.of(mr.spec.forProvider);
    if (!parent) return;
    try {
      // Start the long-running delete and return: the engine requeues until observe no longer finds it.
      await this.#kind.calls.remove(parent, name);
    } catch (err) {
      if (isGone(err)) return;
      const refused = this.#kind.writes?.refusedDelete?.(name, err) ?? err;
      await this.#guard(parent, () => Promise.reject(refused));
    }
  }
}

/**
 * A child kind's provider: its definition, its cloud events, its list call's name in Azure's REST
 * reference (the batched observe), and its template data over the ProviderConfig's ARM access.
 */
export function armChildProvider<
  FS extends AnyObjectSchema,
  AS extends AnyObjectSchema,
  P,
  T extends { name?: string },
>(o: {
  definition: ManagedKindDef<FS, AS>;
  /** Its ARM resource type, e.g. `Microsoft.Network/virtualNetworks/subnets` (its cloud events). */
  resourceType: string;
  listCall: string;
  /** The parent's forProvider field and its key in the home (its id is built under it). */
  homeParents: Readonly<Record<string, string>>;
  kind: (arm: ArmRest) => ArmChildKind<z.infer<FS>, z.infer<AS>, P, T>;
}) {
  return armProvider({
    definition: o.definition,
    resourceType: o.resourceType,
    listCall: o.listCall,
    homeParents: o.homeParents,
    client: (arm) => new ArmChildClient(o.kind(arm)),
  });
}
