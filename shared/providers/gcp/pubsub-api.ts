// Pub/Sub's REST API (pubsub/v1) for the Topic and Subscription kinds, through the project's GoogleRestClient
// rather than @google-cloud/pubsub (gRPC, google-gax and the protos: ~2.5 MB of a function bundle): JSON over
// HTTPS to Google, plain HTTP without credentials to an emulator (it serves REST on its gRPC port), no
// redirect followed, an answer's text kept only from Google's own hosts. Errors are read from Google's error
// body (its canonical `status`), as the generated kinds read them. The kinds' template (PubSubKindClient,
// pubsubProvider) reads, lists, batch-observes, creates, updates and deletes; a kind says what differs.
import type { z } from "zod";
import { googleAuditEvents } from "../../api/cloud-events.ts";
import {
  type ConnectContext,
  defineProvider,
  type ExternalClient,
  type ExternalListing,
  type ExternalObservation,
  InvalidSpecError,
  type ManagedKindProvider,
  type ObserveManyItem,
  ThrottledError,
} from "../../api/external.ts";
import type { AnyObjectSchema, ManagedKindDef, ManagedResource } from "../../api/managed.ts";
import type { GcpProviderConfigSpec } from "../../api/provider-config.ts";
import { deleted } from "../deleted.ts";
import { refusingOwnQueues } from "../own-queues.ts";
import {
  classifyGcpError,
  durationProto,
  GcpClientCache,
  type GcpClientConfig,
  gcpClientConfig,
  isGoogleEndpoint,
  PUBSUB_PRODUCTION_ENDPOINT,
} from "./config.ts";
import { classifyGoogle } from "./generic/errors.ts";
import { authFor, GoogleHttpError, GoogleRestClient } from "./google-rest.ts";

export type PubSubCollection = "topics" | "subscriptions";

/**
 * The Pub/Sub REST client of one configuration. `spec.endpoint.pubsub` is `host:port` (or a URL): Google's
 * hosts over HTTPS with the key or the ambient identity, any other (an emulator, a listed host) over plain
 * HTTP with no credentials at all, as the gRPC client's emulator mode did (authFor decides who signs).
 */
export function pubsubApi(c: GcpClientConfig): GoogleRestClient {
  const endpoint = c.pubsubEndpoint ?? PUBSUB_PRODUCTION_ENDPOINT;
  const base = /^https?:\/\//.test(endpoint)
    ? endpoint
    : `${isGoogleEndpoint(endpoint) ? "https" : "http"}://${endpoint}`;
  return new GoogleRestClient(base, authFor(base, c.credentials), {
    api: "Pub/Sub REST API",
    field: "spec.endpoint.pubsub",
  });
}

/** An id Pub/Sub allows (letters, digits, `-_.~+%`). */
const ID = /^[A-Za-z0-9][A-Za-z0-9\-_.~+%]*$/;
/** A project id, or a legacy domain-scoped one (`example.com:project`). */
const PROJECT = /^[A-Za-z0-9][A-Za-z0-9\-_.:]*$/;

/**
 * An external name (an id of the ProviderConfig's project, or a full `projects/P/<collection>/ID`) as the
 * resource's full name. Anything else would become another path of the API: refused, naming the field.
 */
export function fullNameOf(project: string, collection: PubSubCollection, externalName: string): string {
  const full = externalName.includes("/")
    ? externalName
    : `projects/${project}/${collection}/${externalName}`;
  const parsed = parseResourceName(full, collection);
  if (!parsed || !PROJECT.test(parsed.project) || !ID.test(parsed.id))
    throw new InvalidSpecError(
      `crossplane.io/external-name ${JSON.stringify(externalName)} is neither a Pub/Sub ${collection.slice(0, -1)} id nor projects/PROJECT/${collection}/ID`,
    );
  return full;
}

/** projects/P/topics/T → { project: P, id: T }. */
export function parseResourceName(name: string | null | undefined, collection: PubSubCollection) {
  const m = new RegExp(`^projects/([^/]+)/${collection}/([^/]+)$`).exec(name ?? "");
  return m ? { project: m[1] ?? "", id: m[2] ?? "" } : undefined;
}

/** The REST path of a full resource name (checked by fullNameOf), each segment encoded (`:` is a path character). */
export const pathOf = (fullName: string) =>
  `/v1/${fullName
    .split("/")
    .map((s) => encodeURIComponent(s).replaceAll("%3A", ":"))
    .join("/")}`;

/** Pub/Sub list calls' page size (the API's maximum): also the most resources one batched read covers. */
export const PUBSUB_LIST_PAGE_SIZE = 1000;

/** One page of `projects.<collection>.list` (the caller takes the rate-limit token). */
export async function listPage<M>(
  api: GoogleRestClient,
  project: string,
  collection: PubSubCollection,
  pageToken: string | undefined,
): Promise<{ items: M[]; next: string | undefined }> {
  const page = await pubsub(`list ${collection} of project ${project}`, () =>
    api.request<Record<string, unknown>>("GET", `/v1/projects/${encodeURIComponent(project)}/${collection}`, {
      query: { pageSize: String(PUBSUB_LIST_PAGE_SIZE), ...(pageToken ? { pageToken } : {}) },
    }),
  );
  const items = page[collection];
  const next = page.nextPageToken;
  return {
    items: Array.isArray(items) ? (items as M[]) : [],
    next: typeof next === "string" && next ? next : undefined,
  };
}

/** A spec duration as the JSON API takes it ("600s"), checked first. */
export const durationJson = (text: string) => {
  durationProto(text);
  return text;
};

/** Google's canonical status of an answer, only when its body named it (a bare 404 is no "not found"). */
const statusOf = (err: unknown) => (err instanceof GoogleHttpError ? err.status : undefined);
export const isNotFound = (err: unknown) => statusOf(err) === "NOT_FOUND";
export const isAlreadyExists = (err: unknown) => statusOf(err) === "ALREADY_EXISTS";

/**
 * Runs one Pub/Sub request: an answer of the API becomes the engine's class by its canonical status, with
 * what was being done (`doing`) and Google's words (from Google's hosts only); anything else (a token that
 * cannot be had, an endpoint that answers no API) as every GCP kind classifies it.
 */
export async function pubsub<T>(doing: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw err instanceof GoogleHttpError ? classifyGoogle(err, doing) : classifyGcpError(err);
  }
}

/** What a Pub/Sub resource's JSON has in common: its full name. */
type Named = { name?: string | undefined };

/** What observe reports of a spec field; null: the cloud has no value — drift when the spec sets one, never late-initialized. */
export type Observed<F> = { [K in keyof F]?: F[K] | null };

/**
 * The template of the Pub/Sub kinds (Topic, Subscription): the client of one project that reads a resource
 * by its full name, batch-observes many from the project's list, lists them for `driftless import`, and
 * creates (PUT), updates (PATCH with the update mask) and deletes one, each call classified by `pubsub`.
 * A kind adds what it reports of a resource, its create body and its changes.
 */
export abstract class PubSubKindClient<F, A, M extends Named> {
  protected readonly api: GoogleRestClient;
  protected readonly project: string;
  readonly #rateLimit: (() => Promise<void>) | undefined;
  readonly #collection: PubSubCollection;
  /** The noun in messages and the key of an update's body: topic, subscription. */
  readonly #noun: string;
  constructor(
    api: GoogleRestClient,
    project: string,
    rateLimit: (() => Promise<void>) | undefined,
    collection: PubSubCollection,
  ) {
    this.api = api;
    this.project = project;
    this.#rateLimit = rateLimit;
    this.#collection = collection;
    this.#noun = collection.slice(0, -1);
  }

  /** What observe reports of a resource as the cloud returned it, by get or in a list page. */
  protected abstract observationOf(fp: F, meta: M, fullName: string): ExternalObservation<F, A>;

  /** The writable fields of the spec that differ from the cloud (its keys are the update mask). */
  protected abstract changesOf(fp: F, observed: Observed<F>): M;

  protected fullName(name: string) {
    return fullNameOf(this.project, this.#collection, name);
  }

  async observe(mr: ManagedResource<F, A>, name: string | undefined): Promise<ExternalObservation<F, A>> {
    if (!name) return { resourceExists: false };
    const fullName = this.fullName(name);
    return pubsub(`get ${this.#noun} ${fullName}`, async () => {
      let meta: M;
      try {
        meta = await this.api.request<M>("GET", pathOf(fullName));
      } catch (err) {
        if (isNotFound(err)) return { resourceExists: false };
        throw err;
      }
      return this.observationOf(mr.spec.forProvider, meta, meta.name ?? fullName);
    });
  }

  /**
   * The project's list, page by page (one rate-limit token each), then each item's observation from it
   * (not listed: does not exist). A full name in another project is not in that list: it is observed
   * alone; its failure is its own, but throttling fails the whole call.
   */
  async observeMany(
    items: ReadonlyArray<ObserveManyItem<F, A>>,
  ): Promise<Array<ExternalObservation<F, A> | Error>> {
    const prefix = `projects/${this.project}/${this.#collection}/`;
    const inProject = (name: string) => !name.includes("/") || name.startsWith(prefix);
    const listed = new Map<string, M>();
    if (items.some((i) => inProject(i.externalName))) {
      for await (const r of this.#listed()) if (r.name) listed.set(r.name, r);
    }
    const out: Array<ExternalObservation<F, A> | Error> = [];
    for (const { mr, externalName } of items) {
      if (!inProject(externalName)) {
        await this.#rateLimit?.();
        out.push(
          await this.observe(mr, externalName).catch((err: Error) => {
            if (err instanceof ThrottledError) throw err;
            return err;
          }),
        );
        continue;
      }
      let fullName: string;
      try {
        fullName = this.fullName(externalName);
      } catch (err) {
        out.push(err as Error);
        continue;
      }
      const meta = listed.get(fullName);
      out.push(meta ? this.observationOf(mr.spec.forProvider, meta, fullName) : { resourceExists: false });
    }
    return out;
  }

  /**
   * Every resource of the collection in the ProviderConfig's project (`driftless import`): its id. An
   * Observe-only resource needs no more to be found; observe late-initializes the rest.
   */
  async list(): Promise<ExternalListing[]> {
    const out: ExternalListing[] = [];
    for await (const r of this.#listed()) {
      const parsed = parseResourceName(r.name, this.#collection);
      if (parsed?.project === this.project) out.push({ externalName: parsed.id, forProvider: {} });
    }
    return out;
  }

  /** The project's resources of the collection, page by page, one rate-limit token each. */
  async *#listed(): AsyncGenerator<M> {
    let pageToken: string | undefined;
    do {
      await this.#rateLimit?.();
      const page = await listPage<M>(this.api, this.project, this.#collection, pageToken);
      yield* page.items;
      pageToken = page.next;
    } while (pageToken);
  }

  /** Creates `fullName` with `body`; `detail` adds to what the error message says was being done. */
  protected async put(fullName: string, body: M, detail = ""): Promise<void> {
    await pubsub(`create ${this.#noun} ${fullName}${detail}`, async () => {
      try {
        await this.api.request("PUT", pathOf(fullName), { body });
      } catch (err) {
        // Only a retried create of ours gets here: observe found nothing by this name just before.
        // The next observe compares the settings and updates what differs.
        if (!isAlreadyExists(err)) throw err;
      }
    });
  }

  async update(mr: ManagedResource<F, A>, name: string, obs: ExternalObservation<F, A>) {
    const patch = this.changesOf(mr.spec.forProvider, (obs.observed ?? {}) as Observed<F>);
    const mask = Object.keys(patch).join(",");
    if (mask) {
      const fullName = this.fullName(name);
      await pubsub(`update ${this.#noun} ${fullName} (update mask ${mask})`, () =>
        this.api.request("PATCH", pathOf(fullName), { body: { [this.#noun]: patch, updateMask: mask } }),
      );
    }
    return {};
  }

  async delete(_mr: ManagedResource<F, A>, name: string) {
    const fullName = this.fullName(name);
    await pubsub(`delete ${this.#noun} ${fullName}`, () =>
      deleted(() => this.api.request("DELETE", pathOf(fullName)), isNotFound),
    );
  }
}

const clients = new GcpClientCache(pubsubApi);

/**
 * A Pub/Sub kind's provider: its audit-log methods (a change made by anyone else through them is drift),
 * its batched observe from the project's list, and a client that refuses the stack's own queues.
 */
export function pubsubProvider<FS extends AnyObjectSchema, AS extends AnyObjectSchema>(
  definition: ManagedKindDef<FS, AS>,
  collection: PubSubCollection,
  methodNames: string[],
  Client: new (
    api: GoogleRestClient,
    project: string,
    rateLimit: (() => Promise<void>) | undefined,
    collection: PubSubCollection,
  ) => ExternalClient<z.infer<FS>, z.infer<AS>>,
): ManagedKindProvider {
  return defineProvider({
    definition,
    cloudEvents: googleAuditEvents("pubsub.googleapis.com", methodNames, collection),
    observeMany: {
      calls: `projects.${collection}.list of the project (${collection}.get for one named in another project)`,
      maxItems: PUBSUB_LIST_PAGE_SIZE,
    },
    async connect(ctx: ConnectContext<GcpProviderConfigSpec>) {
      const cfg = await gcpClientConfig(ctx);
      const client = new Client(clients.get(cfg), cfg.projectId, ctx.rateLimit, collection);
      return refusingOwnQueues("gcp", client);
    },
  });
}
