// The Compute family's template (Network, GlobalAddress): a JSON client per configuration, one global
// collection's calls — including how an insert still running is told apart from "does not exist"
// (Compute shows a resource only once its insert operation is done) — and the client every global
// Compute kind is, read from its ComputeKind data.
import type { z } from "zod";
import { googleAuditEvents } from "../../api/cloud-events.ts";
import {
  type ConnectContext,
  DependentsExistError,
  defineProvider,
  type ExternalClient,
  type ExternalListing,
  type ExternalObservation,
} from "../../api/external.ts";
import type { AnyObjectSchema, ManagedKindDef, ManagedResource } from "../../api/managed.ts";
import type { GcpProviderConfigSpec } from "../../api/provider-config.ts";
import { gcp, httpStatus } from "./config.ts";
import {
  type GcpNetworkingConfig,
  GoogleHttpError,
  type GoogleRestClient,
  gcpNetworkingConfig,
  networkingClients,
} from "./google-rest.ts";

const computeClients = networkingClients("computeEndpoint", "/compute/v1");

export type Json = Record<string, unknown>;

interface ComputeOperation {
  status?: string;
  operationType?: string;
  error?: { errors?: Array<{ code?: string; message?: string }> };
}

const isNotFound = (err: unknown) => httpStatus(err) === 404;

/** A resource being inserted: Compute does not show it yet, and creating it again would be refused. */
export const CREATING = "creating";

/** One global collection (networks, addresses) of the ProviderConfig's project; every request takes a rate-limit token. */
export class GlobalCollection<T> {
  readonly #api: GoogleRestClient;
  readonly #base: string;
  readonly #collection: "networks" | "addresses";
  readonly #rateLimit: (() => Promise<void>) | undefined;
  constructor(
    cfg: GcpNetworkingConfig,
    collection: "networks" | "addresses",
    rateLimit: (() => Promise<void>) | undefined,
  ) {
    this.#api = computeClients.get(cfg);
    this.#base = `/projects/${cfg.projectId}/global`;
    this.#collection = collection;
    this.#rateLimit = rateLimit;
  }

  #path(name: string) {
    return `${this.#base}/${this.#collection}/${encodeURIComponent(name)}`;
  }

  /** The resource; CREATING while its insert runs; undefined when there is none. A failed insert throws why. */
  async find(name: string): Promise<T | typeof CREATING | undefined> {
    try {
      return await this.#api.request<T>("GET", this.#path(name), { rateLimit: this.#rateLimit });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    // One list call, made only when the resource itself was not found.
    const out = await this.#api.request<{ items?: ComputeOperation[] }>("GET", `${this.#base}/operations`, {
      query: { filter: `targetLink eq '.*/global/${this.#collection}/${name}'` },
      rateLimit: this.#rateLimit,
    });
    const last = (out.items ?? []).filter((o) => o.operationType === "insert").at(-1);
    if (!last) return undefined;
    if (last.status !== "DONE") return CREATING;
    const e = last.error?.errors?.[0];
    if (e)
      throw new Error(
        `the last insert of ${this.#collection}/${name} failed: ${e.code ?? "error"}: ${e.message ?? ""}`,
      );
    return undefined;
  }

  /** The names of every resource of the collection in the project, page by page (`maxResults`, `pageToken`). */
  async names(): Promise<string[]> {
    const out: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = await this.#api.request<{ items?: Array<{ name?: string }>; nextPageToken?: string }>(
        "GET",
        `${this.#base}/${this.#collection}`,
        { query: { maxResults: "500", ...(pageToken ? { pageToken } : {}) }, rateLimit: this.#rateLimit },
      );
      for (const item of page.items ?? []) if (item.name) out.push(item.name);
      pageToken = page.nextPageToken || undefined;
    } while (pageToken);
    return out;
  }

  async insert(body: Json): Promise<void> {
    await this.#api.request("POST", `${this.#base}/${this.#collection}`, {
      body,
      rateLimit: this.#rateLimit,
    });
  }

  /** PATCH of the resource, or POST of one of its custom verbs (`setLabels`). */
  async change(name: string, body: Json, verb?: string): Promise<void> {
    const path = verb ? `${this.#path(name)}/${verb}` : this.#path(name);
    await this.#api.request(verb ? "POST" : "PATCH", path, { body, rateLimit: this.#rateLimit });
  }

  /** Deletes it (gone already is fine); "in use" becomes DependentsExistError: the engine waits for them. */
  async remove(name: string): Promise<void> {
    try {
      await this.#api.request("DELETE", this.#path(name), { rateLimit: this.#rateLimit });
    } catch (err) {
      if (isNotFound(err)) return;
      if (err instanceof GoogleHttpError && err.reason === "resourceInUseByAnotherResource")
        throw new DependentsExistError(err.message, { cause: err });
      throw err;
    }
  }
}

/** One global Compute kind's facts: its collection, the body that inserts it and the change it needs. */
export interface ComputeKind<F, A, T> {
  collection: "networks" | "addresses";
  /** "network", "address": for messages. */
  what: string;
  /** Its resource name in Cloud Audit Logs' method names (v1.compute.<events>.insert …). */
  events: string;
  /** The methods that change it (insert, delete and its update verbs). */
  methods: readonly string[];
  observationOf(cloud: T, fp: F): ExternalObservation<F, A>;
  /** The insert body; throws InvalidSpecError for what is missing. */
  insertBody(fp: F, name: string): Json;
  /**
   * What brings it to the spec: a PATCH body, or a custom verb's (`setLabels`); undefined: nothing.
   * `cloud` is the resource as observe read it.
   */
  change(
    fp: F,
    obs: ExternalObservation<F, A>,
    cloud: T | undefined,
  ): { body: Json; verb?: string } | undefined;
}

class ComputeKindClient<F, A, T> implements ExternalClient<F, A> {
  readonly #kind: ComputeKind<F, A, T>;
  readonly #items: GlobalCollection<T>;
  // The resource as observe() read it, handed to update() (the engine passes the very same observation).
  readonly #read = new WeakMap<ExternalObservation<F, A>, T>();
  constructor(kind: ComputeKind<F, A, T>, items: GlobalCollection<T>) {
    this.#kind = kind;
    this.#items = items;
  }

  async observe(mr: ManagedResource<F, A>, name: string | undefined): Promise<ExternalObservation<F, A>> {
    if (!name) return { resourceExists: false };
    const found = await gcp(() => this.#items.find(name));
    if (found === CREATING) return { resourceExists: true, availability: "Creating" };
    if (!found) return { resourceExists: false };
    const obs = this.#kind.observationOf(found, mr.spec.forProvider);
    this.#read.set(obs, found);
    return obs;
  }

  /** Every one in the ProviderConfig's project (`driftless import`): global, so no home field. */
  async list(): Promise<ExternalListing[]> {
    return (await gcp(() => this.#items.names())).map((externalName) => ({ externalName, forProvider: {} }));
  }

  async create(mr: ManagedResource<F, A>, name: string | undefined) {
    if (!name) throw new Error(`a ${this.#kind.what} needs a name (crossplane.io/external-name)`);
    const body = this.#kind.insertBody(mr.spec.forProvider, name);
    await gcp(() => this.#items.insert(body));
    return {};
  }

  async update(mr: ManagedResource<F, A>, name: string, obs: ExternalObservation<F, A>) {
    const change = this.#kind.change(mr.spec.forProvider, obs, this.#read.get(obs));
    if (change) await gcp(() => this.#items.change(name, change.body, change.verb));
    return {};
  }

  async delete(_mr: ManagedResource<F, A>, name: string) {
    // Whatever still holds it (addresses or peerings of a network): the engine waits for them.
    await gcp(() => this.#items.remove(name));
  }
}

/** A global Compute kind's provider: its definition and its ComputeKind data. */
export function computeProvider<FS extends AnyObjectSchema, AS extends AnyObjectSchema, T>(
  definition: ManagedKindDef<FS, AS>,
  kind: ComputeKind<z.infer<FS>, z.infer<AS>, T>,
) {
  return defineProvider({
    definition,
    limitsEachRequest: true,
    cloudEvents: googleAuditEvents(
      "compute.googleapis.com",
      kind.methods.map((m) => `v1.compute.${kind.events}.${m}`),
      kind.collection,
    ),
    async connect(ctx: ConnectContext<GcpProviderConfigSpec>) {
      const cfg = await gcpNetworkingConfig(ctx);
      return new ComputeKindClient(kind, new GlobalCollection<T>(cfg, kind.collection, ctx.rateLimit));
    },
  });
}
