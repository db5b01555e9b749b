// Pub/Sub subscriptions over Pub/Sub's REST API (pubsub-api.ts: GoogleRestClient, no gRPC client in the bundle).
import type { z } from "zod";
import { type ExternalClient, type ExternalObservation, InvalidSpecError } from "../../api/external.ts";
import {
  Subscription,
  type SubscriptionAtProvider,
  type SubscriptionForProvider,
} from "../../api/gcp/pubsub.ts";
import type { ManagedResource } from "../../api/managed.ts";
import { observedDuration, observedLabels, sameLabels } from "./config.ts";
import {
  durationJson,
  type Observed,
  PubSubKindClient,
  parseResourceName,
  pubsubProvider,
} from "./pubsub-api.ts";

type F = z.infer<typeof SubscriptionForProvider>;
type A = z.infer<typeof SubscriptionAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;
/** A subscription as pubsub/v1 answers and takes it (JSON: durations as "600s"; defaults left out). */
interface CloudSubscription {
  name?: string;
  topic?: string;
  ackDeadlineSeconds?: number;
  retainAckedMessages?: boolean;
  messageRetentionDuration?: string;
  labels?: Record<string, string>;
  enableMessageOrdering?: boolean;
  deadLetterPolicy?: { deadLetterTopic?: string; maxDeliveryAttempts?: number };
  retryPolicy?: { minimumBackoff?: string; maximumBackoff?: string };
}

/** What Pub/Sub reports as a subscription's topic once that topic was deleted. */
export const DELETED_TOPIC = "_deleted-topic_";
const DEFAULT_MAX_DELIVERY_ATTEMPTS = 5;

/** A topic id in the project, or a full name, as the full name the API wants. */
const topicName = (project: string, topic: string) =>
  topic.includes("/") ? topic : `projects/${project}/topics/${topic}`;

/** The cloud's full topic name in the form the spec uses: the id when the spec gives an id of this project. */
function topicAsSpec(project: string, spec: string | undefined, cloud: string): string {
  const parsed = parseResourceName(cloud, "topics");
  if (parsed && parsed.project === project && !spec?.includes("/")) return parsed.id;
  return cloud;
}

function observedOf(project: string, fp: F, meta: CloudSubscription): Partial<F> {
  const dlp = meta.deadLetterPolicy;
  const retry = meta.retryPolicy;
  const o: Observed<F> = {
    ackDeadlineSeconds: meta.ackDeadlineSeconds ?? null,
    retainAckedMessages: meta.retainAckedMessages ?? false,
    enableMessageOrdering: meta.enableMessageOrdering ?? false,
    messageRetentionDuration:
      observedDuration(fp.messageRetentionDuration, meta.messageRetentionDuration) ?? null,
    deadLetterPolicy: dlp?.deadLetterTopic
      ? {
          deadLetterTopic: topicAsSpec(project, fp.deadLetterPolicy?.deadLetterTopic, dlp.deadLetterTopic),
          // The API stores 0 for "the default", which is 5.
          maxDeliveryAttempts: dlp.maxDeliveryAttempts || DEFAULT_MAX_DELIVERY_ATTEMPTS,
        }
      : null,
    retryPolicy: retry
      ? {
          ...(retry.minimumBackoff
            ? { minimumBackoff: observedDuration(fp.retryPolicy?.minimumBackoff, retry.minimumBackoff) }
            : {}),
          ...(retry.maximumBackoff
            ? { maximumBackoff: observedDuration(fp.retryPolicy?.maximumBackoff, retry.maximumBackoff) }
            : {}),
        }
      : null,
  };
  // A deleted topic is reported through availability (Ready=False, with what to do), not as a change of
  // the immutable topic field: the subscription still belongs to the topic it was created for, which
  // Pub/Sub now names _deleted-topic_ (also shown in status.atProvider.topic).
  if (meta.topic === DELETED_TOPIC) o.topic = fp.topic;
  else if (meta.topic) o.topic = topicAsSpec(project, fp.topic, meta.topic);
  const labels = observedLabels(fp.labels, meta.labels);
  if (labels) o.labels = labels;
  return o as Partial<F>;
}

function deadLetterPolicyOf(project: string, fp: F): CloudSubscription["deadLetterPolicy"] {
  const d = fp.deadLetterPolicy;
  if (!d) return undefined;
  return {
    deadLetterTopic: topicName(project, d.deadLetterTopic),
    ...(d.maxDeliveryAttempts !== undefined ? { maxDeliveryAttempts: d.maxDeliveryAttempts } : {}),
  };
}

function retryPolicyOf(fp: F): CloudSubscription["retryPolicy"] {
  const r = fp.retryPolicy;
  if (!r) return undefined;
  return {
    ...(r.minimumBackoff !== undefined ? { minimumBackoff: durationJson(r.minimumBackoff) } : {}),
    ...(r.maximumBackoff !== undefined ? { maximumBackoff: durationJson(r.maximumBackoff) } : {}),
  };
}

class SubscriptionClient extends PubSubKindClient<F, A, CloudSubscription> implements ExternalClient<F, A> {
  #details(fullName: string, topic: string | undefined) {
    const project = parseResourceName(fullName, "subscriptions")?.project ?? this.project;
    // Once the topic is deleted its old name stays in the Secret: connection details are only ever added.
    return {
      subscription: fullName,
      projectID: project,
      ...(topic && topic !== DELETED_TOPIC ? { topic } : {}),
    };
  }

  /** What observe reports of a subscription as the cloud returned it, by GetSubscription or in a list page. */
  protected observationOf(fp: F, meta: CloudSubscription, fullName: string): Observation {
    const topic = meta.topic ?? undefined;
    const deleted = topic === DELETED_TOPIC;
    return {
      resourceExists: true,
      observed: observedOf(this.project, fp, meta),
      atProvider: { name: fullName, ...(topic ? { topic } : {}) },
      availability: deleted ? "Unavailable" : "Available",
      ...(deleted
        ? {
            message: `the subscription's topic ${fp.topic ?? ""} was deleted: it receives no new messages. Pub/Sub cannot attach a subscription to another topic; delete this Subscription and create it again once the topic exists.`,
          }
        : {}),
      connectionDetails: this.#details(fullName, topic),
    };
  }

  /** The mutable fields of the spec that differ from the cloud, as an update (its keys are the update mask). */
  protected changesOf(fp: F, observed: Observed<F>): CloudSubscription {
    const patch: CloudSubscription = {};
    if (fp.ackDeadlineSeconds !== undefined && fp.ackDeadlineSeconds !== observed.ackDeadlineSeconds) {
      patch.ackDeadlineSeconds = fp.ackDeadlineSeconds;
    }
    if (fp.retainAckedMessages !== undefined && fp.retainAckedMessages !== observed.retainAckedMessages) {
      patch.retainAckedMessages = fp.retainAckedMessages;
    }
    if (
      fp.messageRetentionDuration !== undefined &&
      fp.messageRetentionDuration !== observed.messageRetentionDuration
    ) {
      patch.messageRetentionDuration = durationJson(fp.messageRetentionDuration);
    }
    if (fp.labels !== undefined && !sameLabels(fp.labels, observed.labels ?? undefined)) {
      patch.labels = fp.labels;
    }
    if (fp.deadLetterPolicy !== undefined) {
      const seen = observed.deadLetterPolicy;
      const attempts = fp.deadLetterPolicy.maxDeliveryAttempts ?? DEFAULT_MAX_DELIVERY_ATTEMPTS;
      if (
        seen?.deadLetterTopic !== fp.deadLetterPolicy.deadLetterTopic ||
        seen.maxDeliveryAttempts !== attempts
      ) {
        patch.deadLetterPolicy = deadLetterPolicyOf(this.project, fp);
      }
    }
    if (fp.retryPolicy !== undefined) {
      const seen = observed.retryPolicy ?? {};
      const differs = Object.entries(fp.retryPolicy).some(
        ([k, v]) => v !== undefined && v !== seen[k as keyof typeof seen],
      );
      if (differs || observed.retryPolicy === null) patch.retryPolicy = retryPolicyOf(fp);
    }
    return patch;
  }

  async create(mr: MR, name: string | undefined) {
    if (!name) throw new Error("a subscription needs a name (crossplane.io/external-name)");
    const fp = mr.spec.forProvider;
    if (!fp.topic) {
      throw new InvalidSpecError("spec.forProvider.topic is not set: set topic, topicRef or topicSelector");
    }
    const topic = topicName(this.project, fp.topic);
    const fullName = this.fullName(name);
    const dlp = deadLetterPolicyOf(this.project, fp);
    const retry = retryPolicyOf(fp);
    const body: CloudSubscription = {
      topic,
      ...(fp.ackDeadlineSeconds !== undefined ? { ackDeadlineSeconds: fp.ackDeadlineSeconds } : {}),
      ...(fp.retainAckedMessages !== undefined ? { retainAckedMessages: fp.retainAckedMessages } : {}),
      ...(fp.messageRetentionDuration
        ? { messageRetentionDuration: durationJson(fp.messageRetentionDuration) }
        : {}),
      ...(fp.labels && Object.keys(fp.labels).length > 0 ? { labels: fp.labels } : {}),
      ...(dlp ? { deadLetterPolicy: dlp } : {}),
      ...(retry ? { retryPolicy: retry } : {}),
      ...(fp.enableMessageOrdering !== undefined ? { enableMessageOrdering: fp.enableMessageOrdering } : {}),
    };
    // A missing topic (or dead-letter topic) may be created later: its NOT_FOUND is a plain error, retried
    // with backoff, and the message names both topics.
    const on = `topic ${topic}${dlp ? `, dead-letter topic ${dlp.deadLetterTopic}` : ""}`;
    await this.put(fullName, body, ` (${on})`);
    return { connectionDetails: this.#details(fullName, topic) };
  }
}

export const subscriptionProvider = pubsubProvider(
  Subscription,
  "subscriptions",
  [
    "google.pubsub.v1.Subscriber.CreateSubscription",
    "google.pubsub.v1.Subscriber.UpdateSubscription",
    "google.pubsub.v1.Subscriber.DeleteSubscription",
    "google.pubsub.v1.Subscriber.ModifyPushConfig",
  ],
  SubscriptionClient,
);
