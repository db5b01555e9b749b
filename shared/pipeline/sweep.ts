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
// A warm process (the sweep function's container, `driftless run`) passes an index (sweep-index.ts): each
// kind is then read with one watch from its last resourceVersion, not listed, and only the objects whose
// poll falls in a window not yet handled — their due slots — plus the attention set are enqueued, with the
// same rule (due.ts). Its batches select their objects by external key instead of naming a page.
//
// Batches (batch: true): due objects that look in sync (Ready and Synced True, an external name) go out
// as batch messages — per page and ProviderConfig, as many keys with their resourceVersions as fit a
// message — which the worker checks with one LIST of the same page and the kinds' list calls
// (worker/batch.ts). Everything else is enqueued key by key, as without batches.
import type { KubeConfig } from "@kubernetes/client-node";
import { apiVersionOf, type ResourceType } from "../api/meta.ts";
import type { Kube, KubeObject } from "../kube/client.ts";
import {
  BATCH_MESSAGE_BYTES,
  type BatchItem,
  type BatchPage,
  encodedBytes,
  MAX_BATCH_ITEMS,
  MAX_BATCH_SELECTOR,
  makeMessage,
  type ReconcileMessage,
} from "../queue/message.ts";
import {
  crdName,
  errorMessage,
  httpStatusOf,
  kubeOf,
  type Logger,
  type MessageSink,
  noopLogger,
} from "./common.ts";
import { batchable, type SweepObject, sweepDecision, sweepWindowEnd } from "./due.ts";
import { batchSelector, type IndexEntry, type SweepIndex } from "./sweep-index.ts";

export {
  adaptiveIntervalMs,
  lastChangeMs,
  pollDue,
  pollPhase,
  type SweepDecision,
  type SweepObject,
  specChangeUnseen,
  sweepDecision,
  sweepWindowEnd,
} from "./due.ts";

// A page is also what a batch message's worker reads again: larger pages mean fewer LISTs per checked object.
export const DEFAULT_SWEEP_PAGE_SIZE = 1000;
/** Kinds listed at once: enough to overlap round trips, few enough to be gentle on the API server. */
export const DEFAULT_SWEEP_KIND_CONCURRENCY = 4;
/** Messages handed to the sink at once (the sink batches them further: SQS 10, Pub/Sub its own). */
const SEND_CHUNK = 1000;
/**
 * How long a warm batch's selection may grow: the message schema's bound. A selection is also bounded by
 * its message (selector and items together fill one message, see selections): ≈ 700 external keys for
 * short names. Fewer, larger selections are fewer API-server requests per check (one LIST each); the
 * kube-apiserver reads request lines up to its 1 MiB header limit, so the bound is the message's.
 */
export const SELECTION_BYTES = MAX_BATCH_SELECTOR;

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
  /**
   * A warm sweep process's index (sweep-index.ts), kept between runs: each kind is then read by one
   * watch from its last resourceVersion (a paged list only when cold or after 410 Gone), and only its
   * attention entries and due slots are enqueued. Made for the same schedule and poll settings.
   */
  index?: SweepIndex | undefined;
  /**
   * With an index: every kind's objects (name and conditions only) once it is up to date, for counts
   * that used to ride on the pages (the Provider's health: ProviderHealthTally.observe).
   */
  observe?: ((t: ResourceType, items: readonly KubeObject[]) => void) | undefined;
  /**
   * With an index: the last window end that sweeps in other containers sent in full (sweep-lease.ts). A
   * kind whose index last ran before it files the slots up to it as handled instead of sending them again.
   */
  handledUpTo?: number | undefined;
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
  /** With an index: watches opened, change events applied, relists after 410 Gone, objects indexed. */
  watches: number;
  events: number;
  relists: number;
  indexed: number;
  /** Set when this sweep sent nothing because another sweep has its window (sweep-lease.ts). */
  skipped?: "done" | "held" | "newer";
}

/** A sweep's result before it has done anything. */
export function emptySweepResult(): SweepResult {
  return {
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
    watches: 0,
    events: 0,
    relists: 0,
    indexed: 0,
  };
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

/** One batch message: named after its first item. */
function batchMessage(
  apiVersion: string,
  kind: string,
  providerConfig: string,
  page: BatchPage,
  items: BatchItem[],
  at: Date,
): ReconcileMessage {
  const first = items[0] as BatchItem;
  return {
    ...makeMessage({ apiVersion, kind, name: first.name, namespace: first.namespace }, "drift", { at }),
    batch: { page, providerConfig, items },
  };
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
  const make = (chunk: BatchItem[]) => batchMessage(apiVersion, kind, providerConfig, page, chunk, at);
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

/**
 * A warm sweep's messages for its due entries: in-sync managed resources with an external key as batch
 * messages that select their objects by that key (one LIST from the watch cache per batch, whatever the
 * kind's size), everything else key by key.
 */
export function indexedMessages(
  t: ResourceType,
  entries: readonly IndexEntry[],
  o: { batch: boolean; labelSelector: string | undefined; at: Date },
): { messages: ReconcileMessage[]; batches: number; batched: number } {
  const apiVersion = apiVersionOf(t);
  const messages: ReconcileMessage[] = [];
  const groups = new Map<string, IndexEntry[]>();
  for (const e of entries) {
    if (o.batch && e.batchKey && !e.facts.attention && e.rv) {
      const list = groups.get(e.providerConfig) ?? [];
      list.push(e);
      groups.set(e.providerConfig, list);
      continue;
    }
    messages.push(
      makeMessage({ apiVersion, kind: t.kind, namespace: e.namespace, name: e.name, uid: e.uid }, "drift", {
        at: o.at,
      }),
    );
  }
  let batches = 0;
  let batched = 0;
  for (const [providerConfig, group] of groups) {
    for (const chunk of selections(apiVersion, t.kind, providerConfig, group, o)) {
      const page = selectionPage(chunk, o.labelSelector);
      const items = chunk.map(itemOf);
      const made = batchMessages(apiVersion, t.kind, providerConfig, page, items, o.at);
      batches += made.length;
      batched += items.length;
      messages.push(...made);
    }
  }
  return { messages, batches, batched };
}

/** The page a warm batch re-reads: its objects by external key, from the watch cache. */
function selectionPage(chunk: readonly IndexEntry[], labelSelector: string | undefined): BatchPage {
  return {
    limit: chunk.length,
    // "0": whatever the watch cache holds, at once. A kind's cache advances only with its own events,
    // so the list's resourceVersion (etcd's, newer) could keep a read waiting until it times out; an
    // object the cache has older than the sweep saw takes the full path (its rv differs), never harm.
    resourceVersion: "0",
    resourceVersionMatch: "NotOlderThan",
    labelSelector: batchSelector(labelSelector, [...new Set(chunk.map((e) => e.batchKey as string))]),
  };
}

const itemOf = (e: IndexEntry): BatchItem => ({
  name: e.name,
  ...(e.namespace ? { namespace: e.namespace } : {}),
  rv: e.rv,
});

/**
 * Consecutive runs of entries whose whole batch message — the selector of their external keys and their
 * items — fits one message (BATCH_MESSAGE_BYTES, MAX_BATCH_ITEMS, the selector's MAX_BATCH_SELECTOR): a
 * selection split over two messages would be listed twice.
 */
function selections(
  apiVersion: string,
  kind: string,
  providerConfig: string,
  group: readonly IndexEntry[],
  o: { labelSelector: string | undefined; at: Date },
): IndexEntry[][] {
  const out: IndexEntry[][] = [];
  const selectorBase = Buffer.byteLength(batchSelector(o.labelSelector, []), "utf8");
  let chunk: IndexEntry[] = [];
  let keys = new Set<string>();
  let bytes = 0;
  let selector = 0;
  for (const e of group) {
    const key = e.batchKey as string;
    const item = itemOf(e);
    const itemBytes = Buffer.byteLength(JSON.stringify(item), "utf8") + 1;
    const keyBytes = keys.has(key) ? 0 : Buffer.byteLength(key, "utf8") + 1;
    const full =
      bytes + keyBytes + itemBytes > BATCH_MESSAGE_BYTES ||
      selector + keyBytes > SELECTION_BYTES ||
      chunk.length >= MAX_BATCH_ITEMS;
    if (chunk.length > 0 && full) {
      out.push(chunk);
      chunk = [];
    }
    if (chunk.length === 0) {
      // The message around an empty selection, named after this entry (a message is named by its first item).
      const page = selectionPage([], o.labelSelector);
      bytes = encodedBytes(batchMessage(apiVersion, kind, providerConfig, page, [item], o.at)) - itemBytes;
      selector = selectorBase;
      keys = new Set();
    }
    const added = keys.has(key) ? 0 : Buffer.byteLength(key, "utf8") + 1;
    bytes += added + itemBytes;
    selector += added;
    keys.add(key);
    chunk.push(e);
  }
  if (chunk.length > 0) out.push(chunk);
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
  const result = emptySweepResult();
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

  const send = async (t: ResourceType, messages: ReconcileMessage[]): Promise<boolean> => {
    let ok = true;
    for (let at = 0; at < messages.length; at += SEND_CHUNK) {
      const res = await opts.sink.send(messages.slice(at, at + SEND_CHUNK));
      result.enqueued += res.sent;
      result.sendFailures += res.failed.length;
      if (res.failed.length > 0) {
        ok = false;
        logger.warn(
          { kind: t.kind, failed: res.failed.length, error: res.failed[0]?.error.message },
          "sink refused some drift messages; they stay due for the next sweep",
        );
      }
    }
    return ok;
  };

  // With an index: bring the kind up to date, enqueue its attention entries and due slots, then file
  // the sent ones under their next due window (what was refused stays due for the next run).
  const sweepIndexed = async (t: ResourceType, index: SweepIndex) => {
    const k = index.kind(t);
    // Windows another container sent in full since this index last ran: their slots are not sent again.
    if (opts.handledUpTo !== undefined && k.processedUpTo !== undefined && opts.handledUpTo > k.processedUpTo)
      k.settle(opts.handledUpTo);
    const refreshed = await index.refresh(kube, t, {
      windowEndMs: ctx.windowEndMs,
      pageSize,
      labelSelector: opts.labelSelector,
    });
    result.pages += refreshed.pages;
    result.listed += refreshed.listed;
    result.watches += refreshed.watches;
    result.events += refreshed.events;
    result.relists += refreshed.relists;
    result.indexed += k.size;
    opts.observe?.(t, k.healthObjects());
    result.paused += k.pausedCount();
    const { attention, due } = k.due(ctx.windowEndMs);
    result.attention += attention.length;
    const messages = indexedMessages(t, [...attention, ...due], {
      batch: opts.batch ?? false,
      labelSelector: opts.labelSelector,
      at: now,
    });
    result.batches += messages.batches;
    result.batched += messages.batched;
    if (await send(t, messages.messages)) k.settle(ctx.windowEndMs);
  };

  const runKind = async (t: ResourceType) => {
    try {
      if (opts.index) {
        await sweepIndexed(t, opts.index);
        return;
      }
      await sweepKind(t).catch((err: unknown) => {
        // 410: the continue token outlived etcd compaction; list the kind again (duplicates are harmless).
        if (httpStatusOf(err) !== 410) throw err;
        logger.warn({ kind: t.kind }, "list continuation expired; listing the kind again");
        return sweepKind(t);
      });
    } catch (err) {
      if (httpStatusOf(err) === 404) {
        opts.index?.drop(t);
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
