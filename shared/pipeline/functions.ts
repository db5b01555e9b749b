// The platform-neutral half of the serverless cores: building the reconcile function a container keeps
// for its lifetime, making it total (it never throws, so one key never fails its batch), cutting it off
// before the platform's deadline, and the scheduled drift sweep into any queue producer.
//
// The per-platform halves live beside this file and are imported by file, so one cloud's SDK never
// lands in the other cloud's bundle: functions-sqs.ts (Lambda on SQS) and functions-pubsub.ts (Cloud
// Functions on Pub/Sub). This file imports no queue SDK.
import type { ManagedKindProvider, ProviderConfigKind } from "../api/external.ts";
import type { ResourceType } from "../api/meta.ts";
import { claimTypes } from "../claims/kinds.ts";
import { ClaimReconciler } from "../claims/reconciler.ts";
import type { Kube } from "../kube/client.ts";
import { KubeEventRecorder } from "../kube/events.ts";
import type { QueueEventSink, QueueProducer } from "../queue/port.ts";
import type { ReconcileFn } from "../reconciler/batch.ts";
import { ProviderConfigReconciler } from "../reconciler/provider-config.ts";
import { type ReconcileMetrics, Reconciler, type ResourceKey } from "../reconciler/reconciler.ts";
import { KindRegistry } from "../reconciler/registry.ts";
import type { Logger } from "./common.ts";
import { type SweepResult, sweep } from "./sweep.ts";
import { contextLogger, reconcileKey } from "./worker.ts";

/** Reconciles at once within one invocation (a batch has at most 10 messages on SQS). */
export const DEFAULT_FUNCTION_CONCURRENCY = 8;
/** Time kept free before the platform's deadline to settle messages (visibility changes, deletes). */
export const DEFAULT_DEADLINE_MARGIN_MS = 5_000;

/** Raised instead of starting a reconcile when the invocation is about to time out. */
export class DeadlineError extends Error {
  override name = "DeadlineError";
}

export interface ReconcileSetup {
  kube: Kube;
  /** The managed kinds this function serves (one cloud's, so its bundle carries one cloud's SDK). */
  kinds: readonly ManagedKindProvider[];
  providerConfigKinds: readonly ProviderConfigKind[];
  logger: Logger;
  pollIntervalMs?: number;
  /** Namespaces a managed resource may read Secrets from besides its connection Secret's (see Reconciler). */
  secretRefNamespaces?: readonly string[];
  /**
   * Also serve claims and classes (claims.driftless.dev, classes.driftless.dev) with the claim
   * reconciler, as `driftless run` does. Claims are cloud-neutral: any cloud's function can bind them
   * (it only writes Kubernetes objects); the managed resources it makes go to the functions of their cloud.
   */
  claims?: boolean;
  /** Reconciles (managed, ProviderConfig, claim) and cloud calls; the platform adapter publishes them. */
  metrics?: ReconcileMetrics & { queueAge?(ms: number): void };
}

/**
 * The reconcile function a container keeps: the managed reconciler, the ProviderConfig reconciler and
 * (with `claims`) the claim reconciler behind the same router `driftless run` uses, writing Kubernetes
 * Events. Log lines carry the reason and correlation id of the message being reconciled when the caller
 * runs each reconcile inside withReconcileContext.
 */
export function createReconcileFn(setup: ReconcileSetup): ReconcileFn {
  const registry = new KindRegistry(setup.kinds);
  const logger = contextLogger(setup.logger);
  const events = new KubeEventRecorder(setup.kube);
  const reconciler = new Reconciler(setup.kube, registry, {
    logger,
    events,
    ...(setup.metrics ? { metrics: setup.metrics } : {}),
    ...(setup.pollIntervalMs ? { pollIntervalMs: setup.pollIntervalMs } : {}),
    ...(setup.secretRefNamespaces ? { secretRefNamespaces: setup.secretRefNamespaces } : {}),
  });
  const providerConfigs = new ProviderConfigReconciler(setup.kube, registry, [...setup.providerConfigKinds]);
  const claims = setup.claims
    ? new ClaimReconciler(setup.kube, {
        logger,
        events,
        ...(setup.pollIntervalMs ? { pollIntervalMs: setup.pollIntervalMs } : {}),
      })
    : undefined;
  const workers = {
    reconciler,
    providerConfigs,
    ...(claims ? { claims } : {}),
    ...(setup.metrics ? { metrics: setup.metrics } : {}),
  };
  return (key) => reconcileKey(workers, key);
}

/**
 * Every kind a forwarder or sweep of this deployment watches: the managed kinds and their ProviderConfigs,
 * and with `claims` the claim and class kinds (what createReconcileFn serves with the same option).
 */
export function typesOf(
  kinds: readonly Pick<ManagedKindProvider, "definition">[],
  providerConfigKinds: readonly Pick<ProviderConfigKind, "type">[],
  opts: { claims?: boolean } = {},
): ResourceType[] {
  return [
    ...kinds.map((k) => k.definition),
    ...providerConfigKinds.map((k) => k.type),
    ...(opts.claims ? claimTypes() : []),
  ];
}

/**
 * Makes a reconcile function total and deadline-aware: a throw becomes an `error` result (retried by the
 * queue), and no reconcile starts after `deadlineMs` (epoch ms) — it is handed back to the queue at once.
 */
export function guardReconcile(
  reconcile: ReconcileFn,
  opts: { deadlineMs?: number; now?: () => number } = {},
): ReconcileFn {
  const now = opts.now ?? Date.now;
  return async (key: ResourceKey) => {
    if (opts.deadlineMs !== undefined && now() >= opts.deadlineMs) {
      return {
        outcome: "error",
        error: new DeadlineError("not started: the invocation is about to time out"),
        requeueAfterMs: 0,
      };
    }
    try {
      return await reconcile(key);
    } catch (err) {
      return { outcome: "error", error: err instanceof Error ? err : new Error(String(err)) };
    }
  };
}

export interface ScheduledSweepInput {
  kube: Kube;
  types: readonly ResourceType[];
  producer: Pick<QueueProducer, "send">;
  /** The schedule's period (EventBridge rate, Cloud Scheduler cron), ms. */
  scheduleMs: number;
  defaultPollMs: number;
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

/** Routes a queue adapter's structured events to the logger (run.ts has the same; it imports every adapter). */
export function logQueueEvents(logger: Logger): QueueEventSink {
  return ({ level, msg, ...fields }) => logger[level](fields, msg);
}
