// Pub/Sub topics over Pub/Sub's REST API (pubsub-api.ts: GoogleRestClient, no gRPC client in the bundle).
import type { z } from "zod";
import type { ExternalClient, ExternalObservation } from "../../api/external.ts";
import { Topic, type TopicAtProvider, type TopicForProvider } from "../../api/gcp/pubsub.ts";
import type { ManagedResource } from "../../api/managed.ts";
import { observedDuration, observedLabels, observedSet, sameLabels } from "./config.ts";
import {
  durationJson,
  type Observed,
  PubSubKindClient,
  parseResourceName,
  pubsubProvider,
} from "./pubsub-api.ts";

type F = z.infer<typeof TopicForProvider>;
type A = z.infer<typeof TopicAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

/** A topic as pubsub/v1 answers and takes it (JSON: durations as "600s"): the fields this kind reads or writes. */
interface TopicResource {
  name?: string;
  labels?: Record<string, string>;
  messageRetentionDuration?: string;
  messageStoragePolicy?: { allowedPersistenceRegions?: string[] };
}

function observedOf(fp: F, meta: TopicResource): Partial<F> {
  const regions = meta.messageStoragePolicy?.allowedPersistenceRegions ?? [];
  const o: Observed<F> = {
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

function detailsOf(fullName: string) {
  return { topic: fullName, projectID: parseResourceName(fullName, "topics")?.project ?? "" };
}

class TopicClient extends PubSubKindClient<F, A, TopicResource> implements ExternalClient<F, A> {
  /** What observe reports of a topic as the cloud returned it, by topics.get or in a topics.list page. */
  protected observationOf(fp: F, meta: TopicResource, fullName: string): Observation {
    return {
      resourceExists: true,
      observed: observedOf(fp, meta),
      atProvider: { name: fullName },
      availability: "Available",
      connectionDetails: detailsOf(fullName),
    };
  }

  /** The writable fields of the spec that differ from the cloud, as a Topic update (its keys are the update mask). */
  protected changesOf(fp: F, observed: Observed<F>): TopicResource {
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

  async create(mr: MR, name: string | undefined) {
    if (!name) throw new Error("a topic needs a name (crossplane.io/external-name)");
    const fp = mr.spec.forProvider;
    const fullName = this.fullName(name);
    await this.put(fullName, {
      ...(fp.labels && Object.keys(fp.labels).length > 0 ? { labels: fp.labels } : {}),
      ...(fp.messageRetentionDuration
        ? { messageRetentionDuration: durationJson(fp.messageRetentionDuration) }
        : {}),
      ...(fp.messageStoragePolicy ? { messageStoragePolicy: fp.messageStoragePolicy } : {}),
    });
    return { connectionDetails: detailsOf(fullName) };
  }
}

export const topicProvider = pubsubProvider(
  Topic,
  "topics",
  [
    "google.pubsub.v1.Publisher.CreateTopic",
    "google.pubsub.v1.Publisher.UpdateTopic",
    "google.pubsub.v1.Publisher.DeleteTopic",
  ],
  TopicClient,
);
