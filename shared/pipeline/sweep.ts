// The drift sweep: a scheduled, stateless function that lists every managed resource page by page and
// enqueues those whose poll is due in this sweep's window. It is also the safety net behind the
// forwarder: every resource is reconciled within one poll interval even if every watch event were lost.
//
// Due rule, with no stored state:
// - the poll interval I is the `crossplane.io/poll-interval` annotation (Go duration) or the default;
// - each object polls at the ticks `phase + k·I`, where phase = hash(uid) mod I spreads resources
//   evenly across the interval (jitter that is stable from sweep to sweep);
// - a sweep at time t covers the window (end − S, end], where S is the schedule and end is t rounded
//   down to a multiple of S. Consecutive sweeps therefore cover consecutive, non-overlapping windows,
//   and each tick lands in exactly one of them: every object is enqueued exactly once per interval,
//   even when a sweep starts late (by less than S). Intervals of at most S are due every sweep.
// - objects not Ready=True and Synced=True, objects being deleted, objects whose spec changed since
//   Synced was last written (its observedGeneration is behind metadata.generation) and objects with a
//   reconcile request not yet handled (crossplane.io/reconcile-requested-at ≠ status.lastHandledReconcileAt)
//   are enqueued on every sweep, so an error, a deletion or a lost change event never waits an interval;
// - `crossplane.io/poll-interval` below the configured minimum (30 s by default) counts as the minimum;
// - paused objects (`crossplane.io/paused: "true"`, or empty managementPolicies) are skipped: the
//   reconciler would not touch them anyway.
//
// Adaptive polling (maxPollMs above defaultPollMs): an object without a poll-interval annotation that has
// not changed for a while is polled less often — its interval is the default doubled while the doubled
// interval still fits both in the time since its last change and under maxPollMs. Its last change is the
// latest of: a Ready or Synced transition (an error, a recovery), status.lastExternalUpdate (drift found
// and corrected, a spec change applied), and any write to it other than a status write (metadata.
// managedFields times). Intervals are the default times a power of two, and every phase is hash mod
// interval, so the ticks of a longer interval are a subset of the shorter one's: lengthening never skips
// a due check, and a change brings the object back to the default at its next tick.
//
// Batches (batch: true): due objects that look in sync (Ready and Synced True, an external name) go out
// as batch messages — per page and ProviderConfig, as many keys with their resourceVersions as fit a
// message — which the worker checks with one LIST of the same page and the kinds' list calls
// (worker/batch.ts). Everything else is enqueued key by key, as without batches.
import { createHash } from "node:crypto";
import type { KubeConfig } from "@kubernetes/client-node";
import type { Condition } from "../api/meta.ts";
import {
  Annotations,
  apiVersionOf,
  DEFAULT_MIN_POLL_INTERVAL_MS,
  type ManagementAction,
  type ResourceType,
  reconcileRequestOf,
} from "../api/meta.ts";
import type { Kube, KubeObject } from "../kube/client.ts";
import {
  BATCH_MESSAGE_BYTES,
  type BatchItem,
  type BatchPage,
  encodedBytes,
  MAX_BATCH_ITEMS,
  makeMessage,
  type ReconcileMessage,
} from "../queue/message.ts";
import { parseDuration } from "../reconciler/compare.ts";
import { resolvePolicies } from "../reconciler/policies.ts";
import {
  crdName,
  errorMessage,
  httpStatusOf,
  kubeOf,
  type Logger,
  type MessageSink,
  noopLogger,
} from "./common.ts";

// A page is also what a batch message's worker reads again: larger pages mean fewer LISTs per checked object.
export const DEFAULT_SWEEP_PAGE_SIZE = 1000;
/** Kinds listed at once: enough to overlap round trips, few enough to be gentle on the API server. */
export const DEFAULT_SWEEP_KIND_CONCURRENCY = 4;

export interface SweepOptions {
  kube: Kube | KubeConfig;
  /** Every kind to sweep (managed kinds; ProviderConfigs may be included). */
  types: readonly ResourceType[];
  sink: MessageSink;
  /** The sweep's clock; default now. */
  now?: Date;
  /** How often the sweep runs (its schedule), ms. */
  scheduleMs: number;
  /** Poll interval of objects without a `crossplane.io/poll-interval` annotation, ms. */
  defaultPollMs: number;
  /** Adaptive polling's longest interval for objects that stay unchanged (see above); default: none. */
  maxPollMs?: number | undefined;
  /** The least interval `crossplane.io/poll-interval` may set; default DEFAULT_MIN_POLL_INTERVAL_MS. */
  minPollMs?: number | undefined;
  /** Send due in-sync managed resources as batch messages (see above); default false. */
  batch?: boolean | undefined;
  /** Objects per list page (`limit`). */
  pageSize?: number;
  /** Only objects matching this label selector (sharding, tests). */
  labelSelector?: string;
  kindConcurrency?: number;
  logger?: Logger;
}

export interface SweepResult {
  /** Objects read from the API server. */
  listed: number;
  /** Messages the sink accepted. */
  enqueued: number;
  /** List pages fetched, over all kinds. */
  pages: number;
  durationMs: number;
  /** Of the listed objects, those skipped because they are paused. */
  paused: number;
  /** Of the listed objects, those enqueued because they are unready, unsynced or being deleted. */
  attention: number;
  /** Messages the sink refused (the next sweep tries again). */
  sendFailures: number;
  /** Kinds whose CRD is not installed (skipped, not an error). */
  missingKinds: string[];
  /** Batch messages among the enqueued, and the objects they carry. */
  batches: number;
  batched: number;
}

/** Some kinds could not be swept; the others were. `result` says what was done. */
export class SweepError extends Error {
  override name = "SweepError";
  readonly result: SweepResult;
  readonly failures: ReadonlyArray<{ kind: string; error: Error }>;
  constructor(result: SweepResult, failures: Array<{ kind: string; error: Error }>) {
    super(`drift sweep failed for ${failures.map((f) => `${f.kind} (${f.error.message})`).join(", ")}`, {
      cause: failures[0]?.error,
    });
    this.result = result;
    this.failures = failures;
  }
}

/** Why a sweep enqueues an object or leaves it. */
export type SweepDecision = "paused" | "attention" | "due" | "later";

/** End of the window a sweep at `nowMs` covers: `nowMs` rounded down to the schedule grid. */
export function sweepWindowEnd(nowMs: number, scheduleMs: number): number {
  return Math.floor(nowMs / scheduleMs) * scheduleMs;
}

/** Stable per-object offset in [0, intervalMs): the same uid polls at the same phase every interval. */
export function pollPhase(uid: string, intervalMs: number): number {
  // 48 bits of SHA-1: uniform for any interval up to thousands of years; not a security use.
  const h = createHash("sha1").update(uid).digest().readUIntBE(0, 6);
  return h % intervalMs;
}

/** Whether a tick `phase + k·interval` falls in the window (windowEnd − schedule, windowEnd]. */
export function pollDue(
  phaseMs: number,
  intervalMs: number,
  windowEndMs: number,
  scheduleMs: number,
): boolean {
  if (intervalMs <= scheduleMs) return true;
  // Distance back from the window's end to the latest tick at or before it.
  const sinceTick = (((windowEndMs - phaseMs) % intervalMs) + intervalMs) % intervalMs;
  return sinceTick < scheduleMs;
}

/** What the sweep reads of an object: metadata, management policies, conditions. */
export interface SweepObject {
  metadata: KubeObject["metadata"] & {
    creationTimestamp?: string;
    managedFields?: Array<{ time?: string; subresource?: string }>;
  };
  spec?: { managementPolicies?: unknown[]; forProvider?: unknown; providerConfigRef?: { name?: string } };
  status?: {
    conditions?: Condition[];
    lastExternalUpdate?: { time?: string };
    lastHandledReconcileAt?: string;
  };
}

/** Epoch ms of an object's last change (see "Adaptive polling" above); 0 when nothing says. */
export function lastChangeMs(o: SweepObject): number {
  const times = [
    o.metadata.creationTimestamp,
    o.status?.lastExternalUpdate?.time,
    ...(o.status?.conditions ?? [])
      .filter((c) => c.type === "Ready" || c.type === "Synced")
      .map((c) => c.lastTransitionTime),
    ...(o.metadata.managedFields ?? []).filter((f) => f.subresource !== "status").map((f) => f.time),
  ];
  let latest = 0;
  for (const t of times) {
    const ms = t ? Date.parse(t) : Number.NaN;
    if (ms > latest) latest = ms;
  }
  return latest;
}

/** The adaptive interval: the default doubled while it fits the unchanged time and the maximum. */
export function adaptiveIntervalMs(
  baseMs: number,
  maxMs: number | undefined,
  unchangedForMs: number,
): number {
  let interval = baseMs;
  while (maxMs !== undefined && interval * 2 <= maxMs && interval * 2 <= unchangedForMs) interval *= 2;
  return interval;
}

const conditionTrue = (o: SweepObject, type: string) =>
  o.status?.conditions?.some((c) => c.type === type && c.status === "True") ?? false;

/**
 * A spec change no reconcile has seen yet: Synced was written for an older generation. The event that
 * should have brought it (a watch, the doorbell) was lost — an endpoint down, a failed send — so the
 * next sweep brings it instead of the next poll tick.
 */
export const specChangeUnseen = (o: SweepObject): boolean => {
  const generation = o.metadata.generation;
  const synced = o.status?.conditions?.find((c) => c.type === "Synced");
  return (
    typeof generation === "number" &&
    typeof synced?.observedGeneration === "number" &&
    synced.observedGeneration < generation
  );
};

/**
 * An import (policies without Create) whose resource does not exist (Ready=False Unavailable): nothing
 * driftless does can change that, so it is looked at on its poll interval, not on every sweep.
 */
const importWaiting = (o: SweepObject, policies: unknown[] | undefined) =>
  Array.isArray(policies) &&
  !resolvePolicies(policies as ManagementAction[], undefined).create &&
  (o.status?.conditions?.some(
    (c) => c.type === "Ready" && c.status === "False" && c.reason === "Unavailable",
  ) ??
    false);

/** The sweep's verdict for one object; pure, so the window math is testable without a server. */
export function sweepDecision(
  o: SweepObject,
  ctx: {
    windowEndMs: number;
    scheduleMs: number;
    defaultPollMs: number;
    maxPollMs?: number | undefined;
    /** The least interval `crossplane.io/poll-interval` may set; default DEFAULT_MIN_POLL_INTERVAL_MS. */
    minPollMs?: number | undefined;
  },
): SweepDecision {
  const annotations = o.metadata.annotations ?? {};
  const policies = o.spec?.managementPolicies;
  if (annotations[Annotations.paused] === "true" || (Array.isArray(policies) && policies.length === 0)) {
    return "paused";
  }
  const requested = reconcileRequestOf(annotations);
  if (
    o.metadata.deletionTimestamp ||
    specChangeUnseen(o) ||
    (requested !== undefined && requested !== o.status?.lastHandledReconcileAt) ||
    ((!conditionTrue(o, "Ready") || !conditionTrue(o, "Synced")) && !importWaiting(o, policies))
  ) {
    return "attention";
  }
  const asked = parseDuration(annotations[Annotations.pollInterval]);
  const annotated =
    asked === undefined ? undefined : Math.max(asked, ctx.minPollMs ?? DEFAULT_MIN_POLL_INTERVAL_MS);
  const intervalMs = Math.max(
    1,
    Math.round(
      annotated ?? adaptiveIntervalMs(ctx.defaultPollMs, ctx.maxPollMs, ctx.windowEndMs - lastChangeMs(o)),
    ),
  );
  const phase = pollPhase(o.metadata.uid ?? `${o.metadata.namespace ?? ""}/${o.metadata.name}`, intervalMs);
  return pollDue(phase, intervalMs, ctx.windowEndMs, ctx.scheduleMs) ? "due" : "later";
}

/** Whether a due object goes into a batch: a managed resource that looks in sync and has an external name. */
function batchable(o: SweepObject): boolean {
  return (
    o.spec?.forProvider !== undefined &&
    conditionTrue(o, "Ready") &&
    conditionTrue(o, "Synced") &&
    Boolean(o.metadata.annotations?.[Annotations.externalName])
  );
}

/** One page's due objects of one ProviderConfig as batch messages, each as full as the size limit allows. */
export function batchMessages(
  apiVersion: string,
  kind: string,
  providerConfig: string,
  page: BatchPage,
  items: readonly BatchItem[],
  at: Date,
): ReconcileMessage[] {
  const out: ReconcileMessage[] = [];
  const make = (chunk: BatchItem[]): ReconcileMessage => {
    const firstItem = chunk[0] as BatchItem;
    return {
      ...makeMessage({ apiVersion, kind, name: firstItem.name, namespace: firstItem.namespace }, "drift", {
        at,
      }),
      batch: { page, providerConfig, items: chunk },
    };
  };
  let chunk: BatchItem[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = Buffer.byteLength(JSON.stringify(item), "utf8") + 1;
    if (chunk.length === 0) bytes = encodedBytes(make([item])) - size;
    if (chunk.length > 0 && (bytes + size > BATCH_MESSAGE_BYTES || chunk.length >= MAX_BATCH_ITEMS)) {
      out.push(make(chunk));
      chunk = [];
      bytes = encodedBytes(make([item])) - size;
    }
    chunk.push(item);
    bytes += size;
  }
  if (chunk.length > 0) out.push(make(chunk));
  return out;
}

/** Lists every kind page by page and enqueues the objects whose poll is due (see the rule above). */
export async function sweep(opts: SweepOptions): Promise<SweepResult> {
  const started = performance.now();
  if (!(opts.scheduleMs > 0) || !(opts.defaultPollMs > 0)) {
    throw new RangeError("sweep: scheduleMs and defaultPollMs must be positive");
  }
  const kube = kubeOf(opts.kube);
  const logger = opts.logger ?? noopLogger;
  const now = opts.now ?? new Date();
  const ctx = {
    windowEndMs: sweepWindowEnd(now.getTime(), opts.scheduleMs),
    scheduleMs: opts.scheduleMs,
    defaultPollMs: opts.defaultPollMs,
    maxPollMs: opts.maxPollMs,
    minPollMs: opts.minPollMs,
  };
  const pageSize = opts.pageSize ?? DEFAULT_SWEEP_PAGE_SIZE;
  const result: SweepResult = {
    listed: 0,
    enqueued: 0,
    pages: 0,
    durationMs: 0,
    paused: 0,
    attention: 0,
    sendFailures: 0,
    missingKinds: [],
    batches: 0,
    batched: 0,
  };
  const failures: Array<{ kind: string; error: Error }> = [];

  const sweepKind = async (t: ResourceType) => {
    const apiVersion = apiVersionOf(t);
    // One send in flight while the next page is fetched: listing and enqueueing overlap.
    let sending: Promise<void> = Promise.resolve();
    let sendError: unknown;
    const send = async (messages: ReconcileMessage[]) => {
      const res = await opts.sink.send(messages);
      result.enqueued += res.sent;
      result.sendFailures += res.failed.length;
      if (res.failed.length > 0) {
        logger.warn(
          { kind: t.kind, failed: res.failed.length, error: res.failed[0]?.error.message },
          "sink refused some drift messages; the next sweep retries them",
        );
      }
    };
    let cont: string | undefined;
    do {
      const page = await kube.list<KubeObject>(t, {
        limit: pageSize,
        ...(cont ? { continue: cont } : {}),
        ...(opts.labelSelector ? { labelSelector: opts.labelSelector } : {}),
      });
      result.pages++;
      result.listed += page.items.length;
      const messages: ReconcileMessage[] = [];
      // The page as the worker reads it again: the token it was read with, or the first page's snapshot.
      const pageRef: BatchPage = {
        limit: pageSize,
        ...(cont
          ? { continue: cont }
          : page.resourceVersion
            ? { resourceVersion: page.resourceVersion }
            : {}),
        ...(opts.labelSelector ? { labelSelector: opts.labelSelector } : {}),
      };
      const batches = new Map<string, BatchItem[]>();
      for (const o of page.items) {
        const decision = sweepDecision(o as SweepObject, ctx);
        if (decision === "paused") result.paused++;
        if (decision !== "due" && decision !== "attention") continue;
        if (decision === "attention") result.attention++;
        if (opts.batch && decision === "due" && batchable(o as SweepObject) && o.metadata.resourceVersion) {
          const pc = (o as SweepObject).spec?.providerConfigRef?.name ?? "default";
          const list = batches.get(pc) ?? [];
          list.push({
            name: o.metadata.name,
            ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
            rv: o.metadata.resourceVersion,
          });
          batches.set(pc, list);
          continue;
        }
        messages.push(
          makeMessage(
            {
              apiVersion,
              kind: t.kind,
              namespace: o.metadata.namespace,
              name: o.metadata.name,
              uid: o.metadata.uid,
            },
            "drift",
            { at: now },
          ),
        );
      }
      for (const [providerConfig, items] of batches) {
        const made = batchMessages(apiVersion, t.kind, providerConfig, pageRef, items, now);
        result.batches += made.length;
        result.batched += items.length;
        messages.push(...made);
      }
      await sending;
      if (sendError !== undefined) break;
      if (messages.length > 0) {
        sending = send(messages).catch((err: unknown) => {
          sendError = err;
        });
      }
      cont = page.continue;
    } while (cont);
    await sending;
    if (sendError !== undefined)
      throw new Error(`cannot enqueue drift messages for ${t.kind}`, { cause: sendError });
  };

  const runKind = async (t: ResourceType) => {
    try {
      await sweepKind(t).catch((err: unknown) => {
        // 410: the continue token outlived etcd compaction; list the kind again (duplicates are harmless).
        if (httpStatusOf(err) !== 410) throw err;
        logger.warn({ kind: t.kind }, "list continuation expired; listing the kind again");
        return sweepKind(t);
      });
    } catch (err) {
      if (httpStatusOf(err) === 404) {
        result.missingKinds.push(t.kind);
        logger.warn({ kind: t.kind, crd: crdName(t) }, `CRD ${crdName(t)} not installed; skipped`);
        return;
      }
      failures.push({ kind: t.kind, error: err instanceof Error ? err : new Error(errorMessage(err)) });
      logger.error({ kind: t.kind, error: errorMessage(err) }, "drift sweep of a kind failed");
    }
  };

  const queue = [...opts.types];
  const lanes = Array.from(
    { length: Math.min(opts.kindConcurrency ?? DEFAULT_SWEEP_KIND_CONCURRENCY, queue.length) },
    async () => {
      for (let t = queue.shift(); t; t = queue.shift()) await runKind(t);
    },
  );
  await Promise.all(lanes);

  result.durationMs = Math.round(performance.now() - started);
  logger.info(
    {
      listed: result.listed,
      enqueued: result.enqueued,
      attention: result.attention,
      paused: result.paused,
      pages: result.pages,
      durationMs: result.durationMs,
    },
    "drift sweep done",
  );
  if (failures.length > 0) throw new SweepError(result, failures);
  return result;
}
