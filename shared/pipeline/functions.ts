// The platform-neutral pieces of the serverless functions: values made once per container, the scheduled
// drift sweep into any queue producer, and queue events as log lines. The message path itself is
// shared/worker/ (sqs.ts for Lambda on SQS, pubsub.ts for Cloud Functions on Pub/Sub, imported by file so
// one cloud's SDK never lands in the other cloud's bundle). This file imports no queue SDK.
import type { ResourceType } from "../api/meta.ts";
import type { Kube, KubeObject } from "../kube/client.ts";
import type { QueueEventSink, QueueProducer } from "../queue/port.ts";
import type { Logger } from "./common.ts";
import { type SweepResult, sweep } from "./sweep.ts";
import { SweepIndex } from "./sweep-index.ts";

export interface ScheduledSweepInput {
  kube: Kube;
  types: readonly ResourceType[];
  producer: Pick<QueueProducer, "send">;
  /** The schedule's period (EventBridge rate, Cloud Scheduler cron), ms. */
  scheduleMs: number;
  defaultPollMs: number;
  /** Adaptive polling's longest interval (sweep.ts); default none. */
  maxPollMs?: number | undefined;
  /** The least interval `crossplane.io/poll-interval` may set (sweep.ts); default 30 s. */
  minPollMs?: number | undefined;
  /** Batch messages for in-sync resources (sweep.ts); default false. */
  batch?: boolean | undefined;
  logger: Logger;
  /**
   * The time the schedule fired (EventBridge `time`, the CloudEvent's `time`). A platform retry of the
   * same tick then covers the same window instead of skipping one. Default now.
   */
  scheduledAt?: Date | undefined;
  /** Only objects matching this label selector (several deployments sharing one cluster). */
  labelSelector?: string | undefined;
  /** The container's index (sweep-index.ts): a warm run reads changes and due slots, not every object. */
  index?: SweepIndex | undefined;
  /** With an index: each kind's objects once up to date (the Provider's health tally). */
  observe?: ((t: ResourceType, items: readonly KubeObject[]) => void) | undefined;
}

/**
 * One drift sweep from a scheduled function. Rejects with the sweep's SweepError when some kinds could
 * not be listed or enqueued, so the platform retries the tick (enqueueing twice is harmless).
 */
export async function runScheduledSweep(input: ScheduledSweepInput): Promise<SweepResult> {
  return sweep({
    kube: input.kube,
    types: input.types,
    sink: input.producer,
    now: input.scheduledAt ?? new Date(),
    scheduleMs: input.scheduleMs,
    defaultPollMs: input.defaultPollMs,
    maxPollMs: input.maxPollMs,
    minPollMs: input.minPollMs,
    batch: input.batch,
    logger: input.logger,
    ...(input.labelSelector ? { labelSelector: input.labelSelector } : {}),
    index: input.index,
    observe: input.observe,
  });
}

/** The sweep settings of the functions' configuration (functions/config.ts). */
export interface SweepSettings {
  DRIFTLESS_SWEEP_INDEX: boolean;
  DRIFTLESS_SWEEP_INTERVAL: number;
  DRIFTLESS_POLL_INTERVAL: number;
  DRIFTLESS_MAX_POLL_INTERVAL?: number | undefined;
  DRIFTLESS_MIN_POLL_INTERVAL?: number | undefined;
}

/** The container's sweep index (kept while it is warm), or none when the configuration turns it off. */
export function containerSweepIndex(cfg: SweepSettings): SweepIndex | undefined {
  return cfg.DRIFTLESS_SWEEP_INDEX
    ? new SweepIndex({
        scheduleMs: cfg.DRIFTLESS_SWEEP_INTERVAL,
        defaultPollMs: cfg.DRIFTLESS_POLL_INTERVAL,
        maxPollMs: cfg.DRIFTLESS_MAX_POLL_INTERVAL,
        minPollMs: cfg.DRIFTLESS_MIN_POLL_INTERVAL,
      })
    : undefined;
}

/**
 * A value made once per container on first use. A failed make is forgotten, so the next invocation tries
 * again instead of the container staying broken (a secret store hiccup at cold start, say).
 */
export function perContainer<T>(make: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= make().catch((err: unknown) => {
      value = undefined;
      throw err;
    });
    return value;
  };
}

/** Routes a queue adapter's structured events to the logger (the functions and `driftless run`). */
export function logQueueEvents(logger: Logger): QueueEventSink {
  return ({ level, msg, ...fields }) => logger[level](fields, msg);
}
