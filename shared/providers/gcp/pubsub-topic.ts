import type { PubSub, TopicMetadata } from "@google-cloud/pubsub";
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
  durationProto,
  GcpClientCache,
  gcpClientConfig,
  isAlreadyExists,
  isNotFound,
  newPubSub,
  observedDuration,
  observedLabels,
  observedSet,
  observePubSubList,
  PUBSUB_LIST_PAGE_SIZE,
  parseResourceName,
  pubsubCall,
  sameLabels,
} from "./config.ts";

type F = z.infer<typeof TopicForProvider>;
type A = z.infer<typeof TopicAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;
/** null: the cloud has no value — drift when the spec sets one, never late-initialized. */
type Observed = { [K in keyof F]?: F[K] | null };

const clients = new GcpClientCache(newPubSub, (ps) => ps.close());

/** Topics per ListTopics page: the most one list request returns, and so one batched observe covers. */

function observedOf(fp: F, meta: TopicMetadata): Partial<F> {
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
function changesOf(fp: F, observed: Observed): TopicMetadata {
  const patch: TopicMetadata = {};
  if (fp.labels !== undefined && !sameLabels(fp.labels, observed.labels ?? undefined)) {
    patch.labels = fp.labels;
  }
  if (
    fp.messageRetentionDuration !== undefined &&
    fp.messageRetentionDuration !== observed.messageRetentionDuration
  ) {
    patch.messageRetentionDuration = durationProto(fp.messageRetentionDuration);
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

/** What observe reports of a topic as the cloud returned it, by GetTopic or in a ListTopics page. */
function observationOf(fp: F, meta: TopicMetadata, fullName: string): Observation {
  return {
    resourceExists: true,
    observed: observedOf(fp, meta),
    atProvider: { name: fullName },
    availability: "Available",
    connectionDetails: detailsOf(fullName),
  };
}

class TopicClient implements ExternalClient<F, A> {
  readonly #ps: PubSub;
  /** Calls through `gcp`, naming an endpoint that does not speak gRPC. */
  readonly #call: <T>(call: () => Promise<T>) => Promise<T>;
  readonly #rateLimit: (() => Promise<void>) | undefined;
  constructor(ps: PubSub, rateLimit: (() => Promise<void>) | undefined) {
    this.#ps = ps;
    this.#call = pubsubCall(ps);
    this.#rateLimit = rateLimit;
  }

  async observe(mr: MR, name: string | undefined): Promise<Observation> {
    if (!name) return { resourceExists: false };
    return this.#call(async () => {
      let meta: TopicMetadata;
      try {
        [meta] = await this.#ps.topic(name).getMetadata();
      } catch (err) {
        if (isNotFound(err)) return { resourceExists: false };
        throw err;
      }
      return observationOf(mr.spec.forProvider, meta, meta.name ?? this.#ps.topic(name).name);
    });
  }

  /**
   * ListTopics of the ProviderConfig's project, one request per page. An external name that is the full
   * name of a topic in another project (the SDK accepts one) is not in that list: it is observed alone.
   */
  async observeMany(items: ReadonlyArray<ObserveManyItem<F, A>>): Promise<Array<Observation | Error>> {
    return observePubSubList(items, {
      prefix: `projects/${this.#ps.projectId}/topics/`,
      fullName: (n) => this.#ps.topic(n).name,
      rateLimit: this.#rateLimit,
      listPage: async (pageToken) => {
        const [found, , page] = await this.#ps.getTopics({
          pageSize: PUBSUB_LIST_PAGE_SIZE,
          autoPaginate: false,
          ...(pageToken ? { pageToken } : {}),
        });
        return { items: found, next: page?.nextPageToken };
      },
      observation: (mr, meta, fullName) => observationOf(mr.spec.forProvider, meta, fullName),
      observeOne: (mr, name) => this.observe(mr, name),
    });
  }

  /** Every topic of the ProviderConfig's project, page by page (`driftless import`): its topic id. */
  async list(): Promise<ExternalListing[]> {
    const prefix = `projects/${this.#ps.projectId}/topics/`;
    const out: ExternalListing[] = [];
    await this.#call(async () => {
      let pageToken: string | undefined;
      do {
        await this.#rateLimit?.();
        const [found, , page] = await this.#ps.getTopics({
          pageSize: PUBSUB_LIST_PAGE_SIZE,
          autoPaginate: false,
          ...(pageToken ? { pageToken } : {}),
        });
        for (const t of found)
          if (t.name.startsWith(prefix))
            out.push({ externalName: t.name.slice(prefix.length), forProvider: {} });
        pageToken = page?.nextPageToken || undefined;
      } while (pageToken);
    });
    return out;
  }

  async create(mr: MR, name: string | undefined) {
    if (!name) throw new Error("a topic needs a name (crossplane.io/external-name)");
    const fp = mr.spec.forProvider;
    return this.#call(async () => {
      const fullName = this.#ps.topic(name).name;
      try {
        await this.#ps.createTopic({
          name: fullName,
          ...(fp.labels && Object.keys(fp.labels).length > 0 ? { labels: fp.labels } : {}),
          ...(fp.messageRetentionDuration
            ? { messageRetentionDuration: durationProto(fp.messageRetentionDuration) }
            : {}),
          ...(fp.messageStoragePolicy ? { messageStoragePolicy: fp.messageStoragePolicy } : {}),
        });
      } catch (err) {
        // Only a retried create of ours gets here: observe found nothing by this name just before.
        // The next observe compares the settings and updates what differs.
        if (!isAlreadyExists(err)) throw err;
      }
      return { connectionDetails: detailsOf(fullName) };
    });
  }

  async update(mr: MR, name: string, obs: ExternalObservation<F, A>) {
    const patch = changesOf(mr.spec.forProvider, (obs.observed ?? {}) as Observed);
    if (Object.keys(patch).length > 0) await this.#call(() => this.#ps.topic(name).setMetadata(patch));
    return {};
  }

  async delete(_mr: MR, name: string) {
    await this.#call(() => deleted(() => this.#ps.topic(name).delete(), isNotFound));
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
    return refusingOwnQueues("gcp", new TopicClient(clients.get(await gcpClientConfig(ctx)), ctx.rateLimit));
  },
});
