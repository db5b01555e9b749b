// The batched drift check, the worker side of the sweep's batch messages: one message names many
// objects of one kind and ProviderConfig with the resourceVersion the sweep saw and the LIST page it
// read them from (a warm sweep's batch: a label selection by external key, read from the watch cache).
// The worker reads that page again (one LIST, the same snapshot while etcd keeps it),
// checks every object that looks in sync with the kind's list calls (ManagedReconciler.checkMany) and
// writes nothing for those. Everything else — an object not on the page, changed since, drifted, failing,
// being deleted — gets today's full reconcile through the router, which reads it fresh and guards every
// write by resourceVersion: a stale page can cost a full reconcile, never cause a wrong write.
import type { V1Secret } from "@kubernetes/client-node";
import type { ManagedResource } from "../api/managed.ts";
import type { Kube } from "../kube/client.ts";
import { KubeError } from "../kube/client.ts";
import { type DriftBatch, makeMessage, type ReconcileMessage } from "../queue/message.ts";
import type { QueueProducer } from "../queue/port.ts";
import { CONNECTION_SECRET_SELECTOR } from "../reconciler/connection.ts";
import {
  failureBackoff,
  jitter,
  keyText,
  noopLogger,
  type ReconcileFn,
  type ReconcileLogger,
  type ReconcileMetrics,
  type ReconcileResult,
  type ResourceKey,
} from "../reconciler/contract.ts";
import type { BatchVerdict, ManagedReconciler } from "../reconciler/reconciler.ts";

/** A key the batch hands back to the queue as a single-key message, after a delay. */
export interface FollowUp {
  key: ResourceKey;
  afterMs: number;
}

/** What the batch did, per object (a log line and the tests' counts). */
export interface BatchSummary {
  items: number;
  /** Settled by the batched check: in sync, nothing written. */
  inSync: number;
  /** Given a full reconcile in this invocation (changed, drifted, failing, not on the page …). */
  reconciled: number;
  /** Handed back to the queue as single-key messages (their reconcile asked to look again, throttling). */
  followUps: number;
  /** The page could not be read again (410 after etcd compaction): every item took the full path. */
  pageExpired: boolean;
}

export interface BatchResult extends ReconcileResult {
  summary: BatchSummary;
  followUps: FollowUp[];
}

export interface BatchDeps {
  kube: Kube;
  engine: ManagedReconciler;
  /** The router's reconcile, for the full path (its log line, metrics and 409 handling). */
  reconcile: ReconcileFn;
  logger?: ReconcileLogger;
  /** Full reconciles of one batch running at once. */
  concurrency?: number;
  /** Each object settled in the batch counts as an in-sync reconcile (the full path reports its own). */
  metrics?: Pick<ReconcileMetrics, "reconciled"> | undefined;
  random?: () => number;
}

/** A throttled check waits at least this long before its single-key retry. */
const THROTTLED_FOLLOW_UP_MS = 5_000;
const MAX_THROTTLED_FOLLOW_UP_MS = 60_000;

const nameOf = (namespace: string | undefined, name: string) => `${namespace ?? ""}/${name}`;

/**
 * Checks one batch message. Never throws for one object's sake: each object ends in sync, reconciled or
 * handed back as a follow-up. It throws only when nothing could be done (the API server unreachable).
 */
export async function checkBatch(
  deps: BatchDeps,
  message: { apiVersion: string; kind: string; batch: DriftBatch },
): Promise<BatchResult> {
  const logger = deps.logger ?? noopLogger;
  const random = deps.random ?? Math.random;
  const started = Date.now();
  const { apiVersion, kind, batch } = message;
  const summary: BatchSummary = {
    items: batch.items.length,
    inSync: 0,
    reconciled: 0,
    followUps: 0,
    pageExpired: false,
  };
  const followUps: FollowUp[] = [];
  const keyOf = (i: { name: string; namespace?: string }): ResourceKey => ({
    apiVersion,
    kind,
    name: i.name,
    ...(i.namespace ? { namespace: i.namespace } : {}),
  });

  const def = deps.engine.definitionOf(apiVersion, kind);
  const onPage = new Map<string, ManagedResource>();
  if (def) {
    try {
      const p = batch.page;
      // A warm sweep's selection (no limit: served from the watch cache) or a page read again as it was.
      const read = p.resourceVersionMatch
        ? { resourceVersion: p.resourceVersion ?? "0", resourceVersionMatch: p.resourceVersionMatch }
        : {
            limit: p.limit,
            ...(p.continue
              ? { continue: p.continue }
              : p.resourceVersion
                ? { resourceVersion: p.resourceVersion, resourceVersionMatch: "Exact" as const }
                : {}),
          };
      const page = await deps.kube.list<ManagedResource & { [k: string]: unknown }>(def, {
        ...read,
        ...(p.labelSelector ? { labelSelector: p.labelSelector } : {}),
      });
      for (const o of page.items) onPage.set(nameOf(o.metadata.namespace, o.metadata.name), o);
    } catch (err) {
      if (!(err instanceof KubeError && err.status === 410)) throw err;
      // etcd compacted the snapshot the sweep read: every object takes the full path (one GET each).
      summary.pageExpired = true;
      logger.info({ kind, items: batch.items.length }, "batch page expired; reconciling each object");
    }
  }

  // Only objects unchanged since the sweep read them are checked from the page.
  const candidates: ManagedResource[] = [];
  const full: ResourceKey[] = [];
  for (const item of batch.items) {
    const o = onPage.get(nameOf(item.namespace, item.name));
    if (o && o.metadata.resourceVersion === item.rv) candidates.push(o);
    else full.push(keyOf(item));
  }

  let verdicts: BatchVerdict[] = [];
  if (candidates.length > 0) {
    const secrets = await readConnectionSecrets(deps.kube, candidates, logger);
    verdicts = await deps.engine.checkMany(candidates, {
      connectionSecret: (namespace, name) => {
        const inNamespace = secrets.get(namespace);
        return inNamespace === undefined ? "unknown" : inNamespace.get(name);
      },
    });
  }
  for (const [n, o] of candidates.entries()) {
    const v = verdicts[n] ?? { inSync: false, why: "unchecked" };
    const key = keyOf({
      name: o.metadata.name,
      ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
    });
    if (v.inSync) {
      summary.inSync++;
      continue;
    }
    if (v.throttled) {
      // Reconciling now would only add calls to a throttled API: look again alone, later.
      followUps.push({
        key,
        afterMs: failureBackoff(0, THROTTLED_FOLLOW_UP_MS, MAX_THROTTLED_FOLLOW_UP_MS, random),
      });
      continue;
    }
    logger.debug({ key: keyText(key), why: v.why }, "batched check needs a full reconcile");
    full.push(key);
  }

  // The full path, a few at a time; what asks to look again goes back to the queue on its own.
  let next = 0;
  const lane = async () => {
    for (let n = next++; n < full.length; n = next++) {
      const key = full[n] as ResourceKey;
      summary.reconciled++;
      let result: ReconcileResult;
      try {
        result = await deps.reconcile(key);
      } catch (err) {
        result = { outcome: "error", error: err instanceof Error ? err : new Error(String(err)) };
      }
      if (result.requeueAfterMs !== undefined || result.outcome === "error") {
        followUps.push({ key, afterMs: result.requeueAfterMs ?? jitter(1_000, random) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(deps.concurrency ?? 4, full.length) }, lane));
  summary.followUps = followUps.length;
  if (deps.metrics && summary.inSync > 0) {
    // The batch's time shared out over its checks, so reconcile-duration metrics stay per object.
    const each = (Date.now() - started) / batch.items.length;
    for (let n = 0; n < summary.inSync; n++) deps.metrics.reconciled(kind, "in-sync", each);
  }
  logger.info({ kind, ...summary }, "batched drift check");
  return { outcome: "in-sync", summary, followUps };
}

/**
 * The connection Secrets of the checked objects: one LIST per namespace, by the label every Secret
 * driftless writes carries. Where listing is refused (a Role without `list` on Secrets) each one is read
 * by name instead; a namespace that cannot be read at all maps to undefined ("unknown": those objects
 * take the full path, which reads their Secret by name).
 */
async function readConnectionSecrets(
  kube: Kube,
  objects: readonly ManagedResource[],
  logger: ReconcileLogger,
): Promise<Map<string, Map<string, V1Secret> | undefined>> {
  const byNamespace = new Map<string, Set<string>>();
  for (const o of objects) {
    const ref = o.spec.writeConnectionSecretToRef;
    if (!ref) continue;
    const names = byNamespace.get(ref.namespace) ?? new Set<string>();
    names.add(ref.name);
    byNamespace.set(ref.namespace, names);
  }
  const out = new Map<string, Map<string, V1Secret> | undefined>();
  await Promise.all(
    [...byNamespace].map(async ([namespace, names]) => {
      try {
        const list = await kube.listSecrets(namespace, CONNECTION_SECRET_SELECTOR);
        out.set(namespace, new Map(list.map((s) => [s.metadata?.name ?? "", s])));
        return;
      } catch (err) {
        if (!(err instanceof KubeError && err.status === 403)) {
          out.set(namespace, undefined);
          logger.warn(
            { namespace, error: err instanceof Error ? err.message : String(err) },
            "cannot list connection Secrets; their objects take the full path",
          );
          return;
        }
      }
      // No `list` here: by name, a few at a time.
      const found = new Map<string, V1Secret>();
      try {
        const queue = [...names];
        await Promise.all(
          Array.from({ length: Math.min(8, queue.length) }, async () => {
            for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
              const secret = await kube.getSecret(namespace, name);
              if (secret) found.set(name, secret);
            }
          }),
        );
        out.set(namespace, found);
      } catch (err) {
        out.set(namespace, undefined);
        logger.warn(
          { namespace, error: err instanceof Error ? err.message : String(err) },
          "cannot read connection Secrets; their objects take the full path",
        );
      }
    }),
  );
  return out;
}

/** A batch message as the worker core hands it over. */
export type BatchMessage = Pick<ReconcileMessage, "apiVersion" | "kind" | "id"> & { batch: DriftBatch };

/** Checks a batch message and sends its follow-ups; the queue then settles the message by the result. */
export type BatchCheckFn = (message: BatchMessage) => Promise<ReconcileResult>;

/**
 * The batch check as the queue adapters call it: follow-ups go out as single-key `requeue` messages
 * (one send per distinct delay, in seconds) through the adapter's own producer. When they cannot be
 * sent the batch message fails, so the queue delivers it again: checking twice is harmless.
 */
export function batchChecker(deps: BatchDeps, producer: QueueProducer): BatchCheckFn {
  return async (message) => {
    const result = await checkBatch(deps, message);
    const byDelay = new Map<number, ReconcileMessage[]>();
    for (const f of result.followUps) {
      const seconds = Math.max(0, Math.ceil(f.afterMs / 1000));
      const list = byDelay.get(seconds) ?? [];
      list.push(makeMessage(f.key, "requeue", message.id ? { id: message.id } : {}));
      byDelay.set(seconds, list);
    }
    for (const [seconds, messages] of byDelay) {
      const sent = await producer.send(messages, { delayMs: seconds * 1000 }).catch((err: unknown) => ({
        sent: 0,
        failed: [{ error: err instanceof Error ? err : new Error(String(err)) }],
      }));
      if (sent.failed.length > 0) {
        return {
          outcome: "error",
          error: new Error(
            `cannot requeue ${sent.failed.length} keys of a batch: ${sent.failed[0]?.error.message}`,
          ),
          requeueAfterMs: jitter(2_000),
        };
      }
    }
    return { outcome: "in-sync" };
  };
}
