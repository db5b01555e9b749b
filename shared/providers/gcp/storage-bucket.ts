// Cloud Storage buckets over the Cloud Storage JSON API (storage/v1) with the project's GoogleRestClient,
// not the Storage library: that library's HTTP layer follows redirects and cannot be told not to
// (docs/adr/0002-gcp-rest-clients.md).
import { isDeepStrictEqual } from "node:util";
import type { z } from "zod";
import { googleAuditEvents } from "../../api/cloud-events.ts";
import {
  type ConnectContext,
  CredentialsError,
  defineProvider,
  type ExternalClient,
  type ExternalListing,
  type ExternalObservation,
  type ObserveManyItem,
  ThrottledError,
} from "../../api/external.ts";
import {
  Bucket,
  type BucketAtProvider,
  type BucketForProvider,
  StorageClass,
} from "../../api/gcp/storage.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { GcpProviderConfigSpec } from "../../api/provider-config.ts";
import {
  GcpClientCache,
  type GcpClientConfig,
  gcp,
  gcpClientConfig,
  httpStatus,
  isNotFound,
  observedLabels,
  sameLabels,
} from "./config.ts";
import { authFor, GoogleRestClient, STORAGE_PRODUCTION_ENDPOINT } from "./google-rest.ts";

type F = z.infer<typeof BucketForProvider>;
type A = z.infer<typeof BucketAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

/** A bucket resource of the JSON API (storage/v1 `Bucket`): the fields this kind reads or writes. */
interface BucketResource {
  name?: string;
  location?: string;
  locationType?: string;
  storageClass?: string;
  versioning?: { enabled?: boolean };
  labels?: Record<string, string | null>;
  iamConfiguration?: { uniformBucketLevelAccess?: { enabled?: boolean } };
  cors?: CorsLike[];
  website?: { mainPageSuffix?: string; notFoundPage?: string };
  selfLink?: string;
  projectNumber?: string | number;
}

/**
 * The Cloud Storage JSON API client of one configuration: the ProviderConfig's endpoint (checked) or
 * Google's; the key or the ambient identity only for Google's own hosts (authFor).
 */
export function storageApi(c: GcpClientConfig): GoogleRestClient {
  const endpoint = c.storageEndpoint ?? STORAGE_PRODUCTION_ENDPOINT;
  return new GoogleRestClient(endpoint, authFor(endpoint, c.credentials), {
    api: "Cloud Storage JSON API",
    field: "spec.endpoint.storage",
  });
}

const clients = new GcpClientCache(storageApi);

const bucketPath = (name: string) => `/storage/v1/b/${encodeURIComponent(name)}`;

/** Buckets per buckets.list page: the most GCS returns in one response (maxResults caps at 1,000). */
const LIST_PAGE_SIZE = 1000;

/** GCS stores locations upper-case; the spec's spelling is kept when it names the same place (no false drift). */
const locationAsSpec = (spec: string | undefined, cloud: string) =>
  spec !== undefined && spec.toUpperCase() === cloud.toUpperCase() ? spec : cloud;

function observedOf(fp: F, meta: BucketResource): Partial<F> {
  const o: Partial<F> = {
    // GCS reports no versioning block for a bucket that never had it: that is "disabled".
    versioning: { enabled: meta.versioning?.enabled === true },
  };
  if (meta.location) o.location = locationAsSpec(fp.location, meta.location);
  // A class this schema does not know would fail CRD validation if late-initialized: leave it out.
  const storageClass = StorageClass.safeParse(meta.storageClass?.toUpperCase());
  if (storageClass.success) o.storageClass = storageClass.data;
  const labels = observedLabels(fp.labels, meta.labels as Record<string, string> | undefined);
  if (labels) o.labels = labels;
  o.uniformBucketLevelAccess = meta.iamConfiguration?.uniformBucketLevelAccess?.enabled === true;
  // An empty list equals none; GCS omits `cors` and `website` when they were never set.
  const cors = corsOf(meta.cors);
  if (cors.length > 0) o.cors = cors;
  if (meta.website && (meta.website.mainPageSuffix || meta.website.notFoundPage)) {
    o.website = {
      ...(meta.website.mainPageSuffix ? { mainPageSuffix: meta.website.mainPageSuffix } : {}),
      ...(meta.website.notFoundPage ? { notFoundPage: meta.website.notFoundPage } : {}),
    };
  }
  return o;
}

type Cors = NonNullable<F["cors"]>;

interface CorsLike {
  origin?: string[] | undefined;
  method?: string[] | undefined;
  responseHeader?: string[] | undefined;
  maxAgeSeconds?: number | string | undefined;
}

/** CORS rules in one shape, the spec's and GCS's alike (maxAgeSeconds a number; empty lists left out). */
function corsOf(rules: readonly CorsLike[] | undefined): Cors {
  return (rules ?? []).map((r) => ({
    ...(r.origin?.length ? { origin: r.origin } : {}),
    ...(r.method?.length ? { method: r.method } : {}),
    ...(r.responseHeader?.length ? { responseHeader: r.responseHeader } : {}),
    ...(r.maxAgeSeconds !== undefined ? { maxAgeSeconds: Number(r.maxAgeSeconds) } : {}),
  }));
}

/** What a create or a PATCH sends for the settings GCS keeps in blocks of their own. */
function blocksOf(fp: F): Pick<BucketResource, "iamConfiguration" | "cors" | "website"> {
  return {
    ...(fp.uniformBucketLevelAccess !== undefined
      ? { iamConfiguration: { uniformBucketLevelAccess: { enabled: fp.uniformBucketLevelAccess } } }
      : {}),
    ...(fp.cors !== undefined ? { cors: corsOf(fp.cors) } : {}),
    ...(fp.website !== undefined ? { website: websiteOf(fp.website) } : {}),
  };
}

function websiteOf(w: NonNullable<F["website"]>): { mainPageSuffix?: string; notFoundPage?: string } {
  return {
    ...(w.mainPageSuffix ? { mainPageSuffix: w.mainPageSuffix } : {}),
    ...(w.notFoundPage ? { notFoundPage: w.notFoundPage } : {}),
  };
}

function detailsOf(name: string, meta: BucketResource) {
  return { bucket: name, url: `gs://${name}`, ...(meta.selfLink ? { selfLink: meta.selfLink } : {}) };
}

/** What observe reports of a bucket as the cloud returned it, by buckets.get or in a buckets.list page. */
function observationOf(fp: F, name: string, meta: BucketResource): Observation {
  return {
    resourceExists: true,
    observed: observedOf(fp, meta),
    atProvider: {
      url: `gs://${name}`,
      ...(meta.selfLink ? { selfLink: meta.selfLink } : {}),
      ...(meta.locationType ? { locationType: meta.locationType } : {}),
      ...(meta.projectNumber !== undefined ? { projectNumber: String(meta.projectNumber) } : {}),
    },
    availability: "Available",
    connectionDetails: detailsOf(name, meta),
  };
}

/** The longest prefix all names share: the list asks only for those (ours usually share a naming prefix). */
function commonPrefix(names: readonly string[]): string {
  let prefix = names[0] ?? "";
  for (const n of names) while (!n.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix;
}

/** A resource observed alone within a batch: its failure is its own, but throttling fails the whole call. */
function ownFailure(err: Error): Error {
  if (err instanceof ThrottledError) throw err;
  return err;
}

class BucketClient implements ExternalClient<F, A> {
  readonly #api: GoogleRestClient;
  readonly #project: string;
  readonly #rateLimit: (() => Promise<void>) | undefined;
  constructor(api: GoogleRestClient, project: string, rateLimit: (() => Promise<void>) | undefined) {
    this.#api = api;
    this.#project = project;
    this.#rateLimit = rateLimit;
  }

  /**
   * buckets.list of the ProviderConfig's project by name prefix, every page (one rate-limit token each);
   * `found` sees each page's buckets and may end the listing early by returning true.
   */
  async #list(prefix: string, found: (buckets: BucketResource[]) => boolean): Promise<void> {
    let pageToken: string | undefined;
    do {
      const page = await this.#api.request<{ items?: BucketResource[]; nextPageToken?: string }>(
        "GET",
        "/storage/v1/b",
        {
          query: {
            project: this.#project,
            maxResults: String(LIST_PAGE_SIZE),
            ...(prefix ? { prefix } : {}),
            ...(pageToken ? { pageToken } : {}),
          },
          rateLimit: this.#rateLimit,
        },
      );
      if (found(page.items ?? [])) return;
      pageToken = page.nextPageToken || undefined;
    } while (pageToken);
  }

  async observe(mr: MR, name: string | undefined): Promise<Observation> {
    if (!name) return { resourceExists: false };
    return gcp(async () => {
      let meta: BucketResource;
      try {
        meta = await this.#api.request<BucketResource>("GET", bucketPath(name));
      } catch (err) {
        if (isNotFound(err)) return { resourceExists: false };
        if (httpStatus(err) === 403) {
          const why = `no access to bucket "${name}": it belongs to another project (bucket names are global) or the credentials lack storage.buckets.get`;
          throw new CredentialsError(why, { cause: err });
        }
        throw err;
      }
      return observationOf(mr.spec.forProvider, name, meta);
    });
  }

  /**
   * buckets.list of the ProviderConfig's project, narrowed to the names' common prefix, one request per
   * page. Its default projection (noAcl) is what buckets.get returns, so a listed bucket reads the same.
   * A name the list lacks is read with buckets.get, as observe would: bucket names are global, and an
   * imported bucket of another project is no less there (or may answer 403) for being absent from ours.
   */
  async observeMany(items: ReadonlyArray<ObserveManyItem<F, A>>): Promise<Array<Observation | Error>> {
    const listed = new Map<string, BucketResource>();
    const prefix = commonPrefix(items.map((i) => i.externalName));
    await gcp(() =>
      this.#list(prefix, (buckets) => {
        for (const b of buckets) if (b.name) listed.set(b.name, b);
        return false;
      }),
    );
    const out: Array<Observation | Error> = [];
    for (const { mr, externalName } of items) {
      const meta = listed.get(externalName);
      if (meta) {
        out.push(observationOf(mr.spec.forProvider, externalName, meta));
        continue;
      }
      await this.#rateLimit?.();
      out.push(await this.observe(mr, externalName).catch(ownFailure));
    }
    return out;
  }

  /** Every bucket of the ProviderConfig's project, buckets.list page by page (`driftless import`): its name. */
  async list(): Promise<ExternalListing[]> {
    const out: ExternalListing[] = [];
    await gcp(() =>
      this.#list("", (buckets) => {
        for (const b of buckets) if (b.name) out.push({ externalName: b.name, forProvider: {} });
        return false;
      }),
    );
    return out;
  }

  async create(mr: MR, name: string | undefined) {
    if (!name) throw new Error("a bucket needs a name (crossplane.io/external-name)");
    const fp = mr.spec.forProvider;
    return gcp(async () => {
      try {
        const body: BucketResource = {
          name,
          ...(fp.location ? { location: fp.location } : {}),
          ...(fp.storageClass ? { storageClass: fp.storageClass } : {}),
          ...(fp.versioning ? { versioning: { enabled: fp.versioning.enabled } } : {}),
          ...(fp.labels && Object.keys(fp.labels).length > 0 ? { labels: fp.labels } : {}),
          ...blocksOf(fp),
        };
        const meta = await this.#api.request<BucketResource>("POST", "/storage/v1/b", {
          query: { project: this.#project },
          body,
        });
        return { connectionDetails: detailsOf(name, meta) };
      } catch (err) {
        if (httpStatus(err) !== 409) throw err;
        // Which 409 it is, from a fact rather than Google's wording (kept only for Google's own hosts): a
        // bucket of our project is a retried create of ours (carry on); any other is a name taken elsewhere.
        if (await this.#inProject(name)) {
          return { connectionDetails: { bucket: name, url: `gs://${name}` } };
        }
        const why = `bucket name "${name}" is taken by another project (bucket names are global): choose another name`;
        throw new Error(why, { cause: err });
      }
    });
  }

  /** Whether the ProviderConfig's project's buckets.list holds this bucket. */
  async #inProject(name: string): Promise<boolean> {
    let mine = false;
    await this.#list(name, (buckets) => {
      mine = buckets.some((b) => b.name === name);
      return mine;
    });
    return mine;
  }

  async update(mr: MR, name: string, obs: ExternalObservation<F, A>) {
    const fp = mr.spec.forProvider;
    const seen = obs.observed ?? {};
    const patch: BucketResource = {};
    if (fp.storageClass !== undefined && fp.storageClass !== seen.storageClass) {
      patch.storageClass = fp.storageClass;
    }
    if (fp.versioning !== undefined && fp.versioning.enabled !== seen.versioning?.enabled) {
      patch.versioning = { enabled: fp.versioning.enabled };
    }
    if (fp.labels !== undefined && !sameLabels(fp.labels, seen.labels)) {
      // PATCH merges labels: a label the spec dropped is removed by setting it to null.
      const removed = Object.keys(seen.labels ?? {}).filter((k) => !(k in (fp.labels ?? {})));
      patch.labels = { ...Object.fromEntries(removed.map((k) => [k, null])), ...fp.labels };
    }
    const blocks = blocksOf(fp);
    if (
      fp.uniformBucketLevelAccess !== undefined &&
      fp.uniformBucketLevelAccess !== seen.uniformBucketLevelAccess
    )
      patch.iamConfiguration = blocks.iamConfiguration;
    if (fp.cors !== undefined && !isDeepStrictEqual(corsOf(fp.cors), corsOf(seen.cors)))
      patch.cors = blocks.cors;
    // PATCH replaces the website block whole: a field the spec dropped goes with it.
    if (fp.website !== undefined && !isDeepStrictEqual(fp.website, seen.website ?? {}))
      patch.website = fp.website;
    if (Object.keys(patch).length > 0)
      await gcp(() => this.#api.request("PATCH", bucketPath(name), { body: patch }));
    return {};
  }

  async delete(_mr: MR, name: string) {
    await gcp(async () => {
      try {
        await this.#api.request("DELETE", bucketPath(name));
      } catch (err) {
        if (isNotFound(err)) return;
        if (httpStatus(err) === 409) {
          const why = `bucket ${name} is not empty: empty it first (driftless never deletes objects)`;
          throw new Error(why, { cause: err });
        }
        throw err;
      }
    });
  }
}

export const gcsBucketProvider = defineProvider({
  definition: Bucket,
  cloudEvents: googleAuditEvents(
    "storage.googleapis.com",
    ["storage.buckets.create", "storage.buckets.update", "storage.buckets.delete"],
    "buckets",
  ),
  observeMany: {
    calls: "buckets.list of the project by the names' common prefix (buckets.get for a bucket not listed)",
    maxItems: LIST_PAGE_SIZE,
  },
  async connect(ctx: ConnectContext<GcpProviderConfigSpec>) {
    const cfg = await gcpClientConfig(ctx);
    return new BucketClient(clients.get(cfg), cfg.projectId, ctx.rateLimit);
  },
});
