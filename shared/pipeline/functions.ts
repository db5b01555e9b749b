// The platform-neutral pieces of the serverless functions: values made once per container, the scheduled
// drift sweep into any queue producer, and queue events as log lines. The message path itself is
// shared/worker/ (sqs.ts for Lambda on SQS, pubsub.ts for Cloud Functions on Pub/Sub, imported by file so
// one cloud's SDK never lands in the other cloud's bundle). This file imports no queue SDK.
import type { ResourceType } from "../api/meta.ts";
import type { Kube, KubeObject } from "../kube/client.ts";
import type { QueueEventSink, QueueProducer } from "../queue/port.ts";
import type { Logger } from "./common.ts";
import { emptySweepResult, type SweepResult, sweep, sweepWindowEnd } from "./sweep.ts";
import { SweepIndex } from "./sweep-index.ts";
import {
  claimSweepWindow,
  finishSweepWindow,
  type SweepLeaseRef,
  type SweepLeaseState,
} from "./sweep-lease.ts";

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
  /** With an index: the last window sent in full by any sweep (claimedSweep hands it over). */
  handledUpTo?: number | undefined;
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
    handledUpTo: input.handledUpTo,
  });
}

export interface SweepClaimInput {
  lease: SweepLeaseRef & { holder: string };
  scheduleMs: number;
  /** The tick's time, as runScheduledSweep is given it; default now. */
  scheduledAt?: Date | undefined;
  logger: Logger;
  ttlMs?: number | undefined;
}

/** The Lease as this container last wrote it, per lease: a warm container's next claim skips the read. */
const lastWritten = new WeakMap<SweepLeaseRef, SweepLeaseState>();

/**
 * Runs `run` only if this container wins its window's Lease (sweep-lease.ts): two sweep containers never
 * both send one window. A losing sweep returns at once with `skipped`; the winner's window is then recorded
 * as done, or handed back when it failed so that the platform's retry may run it.
 */
export async function claimedSweep(
  kube: Kube,
  input: SweepClaimInput,
  run: (handledUpTo: number | undefined) => Promise<SweepResult>,
): Promise<SweepResult> {
  const windowEndMs = sweepWindowEnd((input.scheduledAt ?? new Date()).getTime(), input.scheduleMs);
  const claim = await claimSweepWindow(kube, input.lease, windowEndMs, {
    ttlMs: input.ttlMs,
    known: lastWritten.get(input.lease),
  });
  if (!claim.won) {
    input.logger.info(
      { windowEnd: new Date(windowEndMs).toISOString(), reason: claim.reason },
      "drift sweep skipped: another sweep has this window",
    );
    return { ...emptySweepResult(), skipped: claim.reason };
  }
  let sentInFull = false;
  try {
    const result = await run(claim.handledUpTo);
    sentInFull = result.sendFailures === 0;
    return result;
  } finally {
    await finishSweepWindow(kube, input.lease, claim, sentInFull).then(
      (state) => {
        if (state) lastWritten.set(input.lease, state);
      },
      (err: unknown) => {
        lastWritten.delete(input.lease);
        // The window is sent either way; a later sweep may send some of it again, never less.
        input.logger.warn({ error: (err as Error).message }, "cannot record the sweep's window in its Lease");
      },
    );
  }
}

/** What a sweep function's entry holds for the life of its container. */
export interface FunctionSweep {
  types: readonly ResourceType[];
  producer: Pick<QueueProducer, "send">;
  logger: Logger;
  index: SweepIndex | undefined;
  lease: SweepLeaseRef & { holder: string };
  scheduledAt: Date | undefined;
}

/**
 * A sweep function's run (AWS and GCP): its window claimed in the Lease, then runScheduledSweep with the
 * configuration's settings. `wrap` runs it with the kube and the health tally's observer it is handed.
 */
export function functionSweep(
  kube: Kube,
  cfg: FunctionSweepSettings,
  o: FunctionSweep,
  wrap: (
    run: (k: Kube, observe: ScheduledSweepInput["observe"]) => Promise<SweepResult>,
  ) => Promise<SweepResult>,
): Promise<SweepResult> {
  return claimedSweep(
    kube,
    {
      lease: o.lease,
      scheduleMs: cfg.DRIFTLESS_SWEEP_INTERVAL,
      scheduledAt: o.scheduledAt,
      logger: o.logger,
    },
    (handledUpTo) =>
      wrap((k, observe) =>
        runScheduledSweep({
          kube: k,
          types: o.types,
          producer: o.producer,
          scheduleMs: cfg.DRIFTLESS_SWEEP_INTERVAL,
          defaultPollMs: cfg.DRIFTLESS_POLL_INTERVAL,
          maxPollMs: cfg.DRIFTLESS_MAX_POLL_INTERVAL,
          minPollMs: cfg.DRIFTLESS_MIN_POLL_INTERVAL,
          batch: cfg.DRIFTLESS_SWEEP_BATCH,
          logger: o.logger,
          scheduledAt: o.scheduledAt,
          labelSelector: cfg.DRIFTLESS_LABEL_SELECTOR,
          index: o.index,
          handledUpTo,
          observe,
        }),
      ),
  );
}

/** The sweep function's settings of the functions' configuration (functions/config.ts). */
export interface FunctionSweepSettings extends SweepSettings {
  DRIFTLESS_SWEEP_BATCH: boolean;
  DRIFTLESS_LABEL_SELECTOR?: string | undefined;
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
