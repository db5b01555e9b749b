// Pub/Sub topics over Pub/Sub's REST API (pubsub-api.ts: GoogleRestClient, no gRPC client in the bundle).
import type { z } from "zod";
import { byResourceName } from "../../api/cloud-events.ts";
import type {
  ConnectContext,
  ExternalClient,
  ExternalListing,
  ExternalObservation,
  ObserveManyItem,
} from "../../api/external.ts";
import { defineProvider } from "../../api/external.ts";
import { Topic, type TopicAtProvider, type TopicForProvider } from "../../api/gcp/pubsub.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { GcpProviderConfigSpec } from "../../api/provider-config.ts";
import { deleted } from "../deleted.ts";
import { refusingOwnQueues } from "../own-queues.ts";
import {
  GcpClientCache,
  gcpClientConfig,
  observedDuration,
  observedLabels,
  observedSet,
  sameLabels,
} from "./config.ts";
import type { GoogleRestClient } from "./google-rest.ts";
import {
  durationJson,
  fullNameOf,
  isAlreadyExists,
  isNotFound,
  listIds,
  observePubSubList,
  PUBSUB_LIST_PAGE_SIZE,
  parseResourceName,
  pathOf,
  pubsub,
  pubsubApi,
} from "./pubsub-api.ts";

type F = z.infer<typeof TopicForProvider>;
type A = z.infer<typeof TopicAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;
/** null: the cloud has no value — drift when the spec sets one, never late-initialized. */
type Observed = { [K in keyof F]?: F[K] | null };

/** A topic as pubsub/v1 answers and takes it (JSON: durations as "600s"): the fields this kind reads or writes. */
interface TopicResource {
  name?: string;
  labels?: Record<string, string>;
  messageRetentionDuration?: string;
  messageStoragePolicy?: { allowedPersistenceRegions?: string[] };
}

const clients = new GcpClientCache(pubsubApi);

function observedOf(fp: F, meta: TopicResource): Partial<F> {
  const regions = meta.messageStoragePolicy?.allowedPersistenceRegions ?? [];
  const o: Observed = {
    messageRetentionDuration:
      observedDuration(fp.messageRetentionDuration, meta.messageRetentionDuration) ?? null,
    messageStoragePolicy:
      regions.length > 0
        ? {
            allowedPersistenceRegions: observedSet(
              fp.messageStoragePolicy?.allowedPersistenceRegions,
              regions,
            ),
          }
        : null,
  };
  const labels = observedLabels(fp.labels, meta.labels);
  if (labels) o.labels = labels;
  return o as Partial<F>;
}

/** The writable fields of the spec that differ from the cloud, as a Topic update (its keys are the update mask). */
function changesOf(fp: F, observed: Observed): TopicResource {
  const patch: TopicResource = {};
  if (fp.labels !== undefined && !sameLabels(fp.labels, observed.labels ?? undefined)) {
    patch.labels = fp.labels;
  }
  if (
    fp.messageRetentionDuration !== undefined &&
    fp.messageRetentionDuration !== observed.messageRetentionDuration
  ) {
    patch.messageRetentionDuration = durationJson(fp.messageRetentionDuration);
  }
  const regions = fp.messageStoragePolicy?.allowedPersistenceRegions;
  const seen = observed.messageStoragePolicy?.allowedPersistenceRegions;
  if (regions !== undefined && JSON.stringify(regions) !== JSON.stringify(seen)) {
    patch.messageStoragePolicy = { allowedPersistenceRegions: regions };
  }
  return patch;
}

function detailsOf(fullName: string) {
  return { topic: fullName, projectID: parseResourceName(fullName, "topics")?.project ?? "" };
}

/** What observe reports of a topic as the cloud returned it, by topics.get or in a topics.list page. */
function observationOf(fp: F, meta: TopicResource, fullName: string): Observation {
  return {
    resourceExists: true,
    observed: observedOf(fp, meta),
    atProvider: { name: fullName },
    availability: "Available",
    connectionDetails: detailsOf(fullName),
  };
}

class TopicClient implements ExternalClient<F, A> {
  readonly #api: GoogleRestClient;
  readonly #project: string;
  readonly #rateLimit: (() => Promise<void>) | undefined;
  constructor(api: GoogleRestClient, project: string, rateLimit: (() => Promise<void>) | undefined) {
    this.#api = api;
    this.#project = project;
    this.#rateLimit = rateLimit;
  }

  #fullName(name: string) {
    return fullNameOf(this.#project, "topics", name);
  }

  async observe(mr: MR, name: string | undefined): Promise<Observation> {
    if (!name) return { resourceExists: false };
    const fullName = this.#fullName(name);
    return pubsub(`get topic ${fullName}`, async () => {
      let meta: TopicResource;
      try {
        meta = await this.#api.request<TopicResource>("GET", pathOf(fullName));
      } catch (err) {
        if (isNotFound(err)) return { resourceExists: false };
        throw err;
      }
      return observationOf(mr.spec.forProvider, meta, meta.name ?? fullName);
    });
  }

  /**
   * projects.topics.list of the ProviderConfig's project, one request per page. An external name that is
   * the full name of a topic in another project is not in that list: it is observed alone.
   */
  async observeMany(items: ReadonlyArray<ObserveManyItem<F, A>>): Promise<Array<Observation | Error>> {
    return observePubSubList<F, A, TopicResource>(items, {
      api: this.#api,
      project: this.#project,
      collection: "topics",
      rateLimit: this.#rateLimit,
      observation: (mr, meta, fullName) => observationOf(mr.spec.forProvider, meta, fullName),
      observeOne: (mr, name) => this.observe(mr, name),
    });
  }

  /** Every topic of the ProviderConfig's project (`driftless import`): its id. */
  list(): Promise<ExternalListing[]> {
    return listIds(this.#api, this.#project, "topics", this.#rateLimit);
  }

  async create(mr: MR, name: string | undefined) {
    if (!name) throw new Error("a topic needs a name (crossplane.io/external-name)");
    const fp = mr.spec.forProvider;
    const fullName = this.#fullName(name);
    const body: TopicResource = {
      ...(fp.labels && Object.keys(fp.labels).length > 0 ? { labels: fp.labels } : {}),
      ...(fp.messageRetentionDuration
        ? { messageRetentionDuration: durationJson(fp.messageRetentionDuration) }
        : {}),
      ...(fp.messageStoragePolicy ? { messageStoragePolicy: fp.messageStoragePolicy } : {}),
    };
    await pubsub(`create topic ${fullName}`, async () => {
      try {
        await this.#api.request("PUT", pathOf(fullName), { body });
      } catch (err) {
        // Only a retried create of ours gets here: observe found nothing by this name just before.
        // The next observe compares the settings and updates what differs.
        if (!isAlreadyExists(err)) throw err;
      }
    });
    return { connectionDetails: detailsOf(fullName) };
  }

  async update(mr: MR, name: string, obs: ExternalObservation<F, A>) {
    const patch = changesOf(mr.spec.forProvider, (obs.observed ?? {}) as Observed);
    const mask = Object.keys(patch).join(",");
    if (mask) {
      const fullName = this.#fullName(name);
      await pubsub(`update topic ${fullName} (update mask ${mask})`, () =>
        this.#api.request("PATCH", pathOf(fullName), { body: { topic: patch, updateMask: mask } }),
      );
    }
    return {};
  }

  async delete(_mr: MR, name: string) {
    const fullName = this.#fullName(name);
    await pubsub(`delete topic ${fullName}`, () =>
      deleted(() => this.#api.request("DELETE", pathOf(fullName)), isNotFound),
    );
  }
}

export const topicProvider = defineProvider({
  definition: Topic,
  cloudEvents: {
    gcp: {
      serviceName: "pubsub.googleapis.com",
      methodNames: [
        "google.pubsub.v1.Publisher.CreateTopic",
        "google.pubsub.v1.Publisher.UpdateTopic",
        "google.pubsub.v1.Publisher.DeleteTopic",
      ],
      externalNames: byResourceName("topics"),
    },
  },
  observeMany: {
    calls: "projects.topics.list of the project (topics.get for one named in another project)",
    maxItems: PUBSUB_LIST_PAGE_SIZE,
  },
  async connect(ctx: ConnectContext<GcpProviderConfigSpec>) {
    const cfg = await gcpClientConfig(ctx);
    return refusingOwnQueues("gcp", new TopicClient(clients.get(cfg), cfg.projectId, ctx.rateLimit));
  },
});
