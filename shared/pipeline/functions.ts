// The platform-neutral half of the serverless cores: the reconcile function a container keeps for its
// lifetime (the worker's router, wired by createWorker exactly as `driftless run` wires it), values made
// once per container, and the scheduled drift sweep into any queue producer.
//
// The per-platform halves live beside this file and are imported by file, so one cloud's SDK never
// lands in the other cloud's bundle: functions-sqs.ts (Lambda on SQS) and functions-pubsub.ts (Cloud
// Functions on Pub/Sub). This file imports no queue SDK.
import type { ResourceType } from "../api/meta.ts";
import type { Kube } from "../kube/client.ts";
import type { QueueEventSink, QueueProducer } from "../queue/port.ts";
import type { ReconcileFn } from "../reconciler/contract.ts";
import type { Logger } from "./common.ts";
import { type SweepResult, sweep } from "./sweep.ts";
import { createWorker, type WorkerSetup } from "./worker.ts";

export { DeadlineError } from "../reconciler/router.ts";
export { typesOf } from "./worker.ts";

/** Reconciles at once within one invocation (a batch has at most 10 messages on SQS). */
export const DEFAULT_FUNCTION_CONCURRENCY = 8;
/** Time kept free before the platform's deadline to settle messages (visibility changes, deletes). */
export const DEFAULT_DEADLINE_MARGIN_MS = 5_000;

/** What a function's container needs to build its reconcile function (the worker's setup). */
export type ReconcileSetup = WorkerSetup;

/** The reconcile function a container keeps: the worker's router (see createWorker). */
export function createReconcileFn(setup: ReconcileSetup): ReconcileFn {
  return createWorker(setup).reconcile;
}

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
  });
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
