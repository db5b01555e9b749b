// Pub/Sub's REST API (pubsub/v1) for the Topic and Subscription kinds, through the project's GoogleRestClient
// rather than @google-cloud/pubsub (gRPC, google-gax and the protos: ~2.5 MB of a function bundle): JSON over
// HTTPS to Google, plain HTTP without credentials to an emulator (it serves REST on its gRPC port), no
// redirect followed, an answer's text kept only from Google's own hosts. Errors are read from Google's error
// body (its canonical `status`), as the generated kinds read them.
import {
  type ExternalListing,
  type ExternalObservation,
  InvalidSpecError,
  type ObserveManyItem,
  ThrottledError,
} from "../../api/external.ts";
import {
  classifyGcpError,
  durationProto,
  type GcpClientConfig,
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

/**
 * Every resource of the collection in the ProviderConfig's project, page by page, one rate-limit token each
 * (`driftless import`): its id. An Observe-only resource needs no more to be found; observe late-initializes the rest.
 */
export async function listIds(
  api: GoogleRestClient,
  project: string,
  collection: PubSubCollection,
  rateLimit: (() => Promise<void>) | undefined,
): Promise<ExternalListing[]> {
  const out: ExternalListing[] = [];
  let pageToken: string | undefined;
  do {
    await rateLimit?.();
    const page = await listPage<{ name?: string }>(api, project, collection, pageToken);
    for (const r of page.items) {
      const parsed = parseResourceName(r.name, collection);
      if (parsed?.project === project) out.push({ externalName: parsed.id, forProvider: {} });
    }
    pageToken = page.next;
  } while (pageToken);
  return out;
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

/**
 * The batched observe of a Pub/Sub kind: the project's list, page by page (one rate-limit token each),
 * then each item's observation from it (not listed: does not exist). A full name in another project is
 * not in that list: it is observed alone; its failure is its own, but throttling fails the whole call.
 */
export async function observePubSubList<F, A, M extends { name?: string | undefined }>(
  items: ReadonlyArray<ObserveManyItem<F, A>>,
  kind: {
    api: GoogleRestClient;
    project: string;
    collection: PubSubCollection;
    rateLimit: (() => Promise<void>) | undefined;
    observation: (mr: ObserveManyItem<F, A>["mr"], meta: M, fullName: string) => ExternalObservation<F, A>;
    observeOne: (mr: ObserveManyItem<F, A>["mr"], name: string) => Promise<ExternalObservation<F, A>>;
  },
): Promise<Array<ExternalObservation<F, A> | Error>> {
  const prefix = `projects/${kind.project}/${kind.collection}/`;
  const inProject = (name: string) => !name.includes("/") || name.startsWith(prefix);
  const listed = new Map<string, M>();
  if (items.some((i) => inProject(i.externalName))) {
    let pageToken: string | undefined;
    do {
      await kind.rateLimit?.();
      const page = await listPage<M>(kind.api, kind.project, kind.collection, pageToken);
      for (const r of page.items) if (r.name) listed.set(r.name, r);
      pageToken = page.next;
    } while (pageToken);
  }
  const out: Array<ExternalObservation<F, A> | Error> = [];
  for (const { mr, externalName } of items) {
    if (!inProject(externalName)) {
      await kind.rateLimit?.();
      out.push(
        await kind.observeOne(mr, externalName).catch((err: Error) => {
          if (err instanceof ThrottledError) throw err;
          return err;
        }),
      );
      continue;
    }
    let fullName: string;
    try {
      fullName = fullNameOf(kind.project, kind.collection, externalName);
    } catch (err) {
      out.push(err as Error);
      continue;
    }
    const meta = listed.get(fullName);
    out.push(meta ? kind.observation(mr, meta, fullName) : { resourceExists: false });
  }
  return out;
}
