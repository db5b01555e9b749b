// The client of a flexible server's child resource (firewall rule, database): found by the server it
// belongs to, written with a PUT whose operation is started and never waited for, batch-observed with one
// list per server. Each child kind supplies its SDK calls and its field mapping.
import type { PostgreSQLManagementFlexibleServerClient } from "@azure/arm-postgresql-flexible";
import type { z } from "zod";
import { byResourceUri } from "../../api/cloud-events.ts";
import {
  type ConnectContext,
  defineProvider,
  type ExternalClient,
  type ExternalObservation,
  type ObserveManyItem,
} from "../../api/external.ts";
import type { AnyObjectSchema, ManagedKindDef, ManagedResource } from "../../api/managed.ts";
import type { AzureProviderConfigSpec } from "../../api/provider-config.ts";
import { azure } from "./config.ts";
import { listEach } from "./network-client.ts";
import { isGone, onServer, postgresClient, requireServer, serverKey, serverOf } from "./postgresql-client.ts";

/** Children one batched observe covers (one list per server; ARM chooses the page size). */
const MAX_ITEMS = 1000;

type Parent = { rg: string; server: string };
type ServerScoped = { resourceGroupName?: string; serverName?: string };

/** One child kind's SDK calls (all started, none waited for, on the caller's server). */
export interface ChildCalls<T> {
  get(p: Parent, name: string): Promise<T>;
  list(p: Parent): AsyncIterator<T[] & { continuationToken?: string }>;
  put(p: Parent, name: string, body: T): Promise<unknown>;
  remove(p: Parent, name: string): Promise<unknown>;
}

/** One child kind's fields: what observe reports of a child, and the body that creates or updates one. */
export interface ChildMapping<F, A, T> {
  /** "firewall rule", "database": for messages. */
  what: string;
  observationOf(fp: F, parent: Parent, child: T): ExternalObservation<F, A>;
  /** The PUT body; throws InvalidSpecError for what is missing. */
  bodyOf(fp: F): T;
  /** Whether a PUT can bring an existing child to the spec (false: every field is immutable). */
  updatable: boolean;
}

export class ServerChildClient<F extends ServerScoped, A, T extends { name?: string }>
  implements ExternalClient<F, A>
{
  readonly #calls: ChildCalls<T>;
  readonly #map: ChildMapping<F, A, T>;
  readonly #rateLimit: (() => Promise<void>) | undefined;
  constructor(
    calls: ChildCalls<T>,
    map: ChildMapping<F, A, T>,
    rateLimit: (() => Promise<void>) | undefined,
  ) {
    this.#calls = calls;
    this.#map = map;
    this.#rateLimit = rateLimit;
  }

  async observe(mr: ManagedResource<F, A>, name: string | undefined): Promise<ExternalObservation<F, A>> {
    const parent = serverOf(mr.spec.forProvider);
    // Without its server nothing can be found (nor was anything created).
    if (!name || !parent) return { resourceExists: false };
    return azure(async () => {
      try {
        return this.#map.observationOf(mr.spec.forProvider, parent, await this.#calls.get(parent, name));
      } catch (err) {
        // The child, its server or its group missing all mean "no child"; a missing subscription does not.
        if (isGone(err)) return { resourceExists: false };
        throw err;
      }
    });
  }

  /** One list per server the items name, one request per page; a server that is gone has no children. */
  async observeMany(
    items: ReadonlyArray<ObserveManyItem<F, A>>,
  ): Promise<Array<ExternalObservation<F, A> | Error>> {
    const parents = new Map<string, Parent>();
    for (const { mr } of items) {
      const parent = serverOf(mr.spec.forProvider);
      if (parent) parents.set(serverKey(parent), parent);
    }
    const lists = await listEach(parents, (p) => this.#calls.list(p), this.#rateLimit);
    return items.map(({ mr, externalName }) => {
      const parent = serverOf(mr.spec.forProvider);
      const children = parent ? lists.get(serverKey(parent)) : undefined;
      if (!parent || children === undefined) return { resourceExists: false };
      if (children instanceof Error) return children;
      const child = children.get(externalName.toLowerCase());
      return child ? this.#map.observationOf(mr.spec.forProvider, parent, child) : { resourceExists: false };
    });
  }

  async create(mr: ManagedResource<F, A>, name: string | undefined) {
    if (!name) throw new Error(`a ${this.#map.what} needs a name (crossplane.io/external-name)`);
    const parent = requireServer(mr.spec.forProvider);
    const body = this.#map.bodyOf(mr.spec.forProvider);
    await onServer(parent.server, () => this.#calls.put(parent, name, body));
    return {};
  }

  async update(mr: ManagedResource<F, A>, name: string) {
    if (!this.#map.updatable) return {};
    const parent = requireServer(mr.spec.forProvider);
    const body = this.#map.bodyOf(mr.spec.forProvider);
    await onServer(parent.server, () => this.#calls.put(parent, name, body));
    return {};
  }

  async delete(mr: ManagedResource<F, A>, name: string) {
    const parent = serverOf(mr.spec.forProvider);
    if (!parent) return;
    try {
      await this.#calls.remove(parent, name);
    } catch (err) {
      if (isGone(err)) return;
      await onServer(parent.server, () => Promise.reject(err));
    }
  }
}

/**
 * A server child kind's provider: its definition, ARM's name of its collection (firewallRules,
 * databases: the cloud events and the external name in a resource URI), its list call's name in Azure's
 * REST reference, its SDK calls and its field mapping.
 */
export function serverChildProvider<
  FS extends AnyObjectSchema,
  AS extends AnyObjectSchema,
  T extends { name?: string },
>(o: {
  definition: ManagedKindDef<FS, AS>;
  collection: string;
  listCall: string;
  calls: (pg: PostgreSQLManagementFlexibleServerClient) => ChildCalls<T>;
  mapping: ChildMapping<z.infer<FS>, z.infer<AS>, T>;
}) {
  const operation = `Microsoft.DBforPostgreSQL/flexibleServers/${o.collection}`;
  return defineProvider({
    definition: o.definition,
    cloudEvents: {
      azure: {
        operations: [`${operation}/write`, `${operation}/delete`],
        externalNames: byResourceUri(o.collection),
      },
    },
    observeMany: { calls: o.listCall, maxItems: MAX_ITEMS },
    async connect(ctx: ConnectContext<AzureProviderConfigSpec>) {
      return new ServerChildClient(o.calls(await postgresClient(ctx)), o.mapping, ctx.rateLimit);
    },
  });
}
