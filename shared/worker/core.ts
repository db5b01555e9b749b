// The worker core every queue adapter calls (SQS in Lambda, Pub/Sub in Cloud Functions, the memory queue
// of `driftless run` and of the export agent): a message's key runs in its message's context, never after
// the invocation's deadline and never throwing, through the one router to the reconciler of its kind;
// duplicates in a batch run once, and the result becomes what the queue should do with the message.
// The router lives here, beside the loop that calls it, so one message crosses one file from the queue
// adapter to the reconciler (docs/architecture.md counts the path).
import { ConflictError } from "../kube/client.ts";
import { messageKey } from "../queue/message.ts";
import {
  CONFLICT_REQUEUE_MS,
  jitter,
  keyText,
  noopLogger,
  type ReconcileFn,
  type ReconcileLogger,
  type ReconcileMetrics,
  type ReconcileResult,
  type Reconciles,
  type ResourceKey,
  THROWN_REQUEUE_MS,
} from "../reconciler/contract.ts";
import { type AdmissionWaitOptions, admittedWritePending } from "./admission.ts";
import type { BatchCheckFn } from "./batch.ts";
import { reconcileContext } from "./context.ts";
import { DeadlineError } from "./errors.ts";
import { queueAgeMs, type WorkItem } from "./message.ts";

export interface RouterOptions {
  logger?: ReconcileLogger;
  metrics?: Pick<ReconcileMetrics, "reconciled">;
  /** Jitter source; default Math.random. */
  random?: () => number;
}

/**
 * The one router: sends each key to the first reconciler that handles its kind, else to the last one
 * (the managed engine, which reports a kind nobody serves as an error), and for every reconcile
 * settles a throw (409 → conflict, requeue soon; anything else → error), reports its outcome and
 * duration to the metrics hook and writes the one "reconciled" log line. It never throws.
 */
export class Router implements Reconciles {
  readonly #reconcilers: readonly Reconciles[];
  readonly #logger: ReconcileLogger;
  readonly #metrics: Pick<ReconcileMetrics, "reconciled"> | undefined;
  readonly #random: () => number;

  constructor(reconcilers: readonly Reconciles[], opts: RouterOptions = {}) {
    if (reconcilers.length === 0) throw new Error("a router needs at least one reconciler");
    this.#reconcilers = reconcilers;
    this.#logger = opts.logger ?? noopLogger;
    this.#metrics = opts.metrics;
    this.#random = opts.random ?? Math.random;
  }

  handles(apiVersion: string, kind: string): boolean {
    return this.#reconcilers.some((r) => r.handles(apiVersion, kind));
  }

  /** A ReconcileFn as it stands (a bound property): what the queue adapters and the batch check take. */
  readonly reconcile: ReconcileFn = async (key: ResourceKey): Promise<ReconcileResult> => {
    const reconciler =
      this.#reconcilers.slice(0, -1).find((r) => r.handles(key.apiVersion, key.kind)) ??
      (this.#reconcilers.at(-1) as Reconciles);
    const started = Date.now();
    let result: ReconcileResult;
    try {
      result = await reconciler.reconcile(key);
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      // A 409 means someone else moved the object on: re-read soon, it is not a failure.
      result =
        error instanceof ConflictError
          ? { outcome: "conflict", requeueAfterMs: jitter(CONFLICT_REQUEUE_MS, this.#random) }
          : { outcome: "error", error, requeueAfterMs: jitter(THROWN_REQUEUE_MS, this.#random) };
    }
    const durationMs = Date.now() - started;
    this.#metrics?.reconciled(key.kind, result.outcome, durationMs);
    const fields = {
      key: keyText(key),
      apiVersion: key.apiVersion,
      outcome: result.outcome,
      durationMs,
      ...(result.requeueAfterMs !== undefined ? { requeueAfterMs: Math.round(result.requeueAfterMs) } : {}),
      ...(result.error ? { error: result.error.message } : {}),
    };
    if (result.outcome === "error") this.#logger.error(fields, "reconciled");
    else this.#logger.info(fields, "reconciled");
    return result;
  };
}

/** What a queue adapter does with a message after its reconcile (same shape as the queue port's outcome). */
export type MessageOutcome =
  | { kind: "done" }
  | { kind: "requeue"; afterMs: number }
  | { kind: "retry"; afterMs: number; error: Error };

/**
 * A failed reconcile is retried by the queue (counts toward its dead-letter limit); a reconcile that
 * asks to look again later (creating, deleting, conflict) is a fresh, delayed message.
 */
export function outcomeOf(result: ReconcileResult): MessageOutcome {
  if (result.outcome === "error") {
    return {
      kind: "retry",
      afterMs: result.requeueAfterMs ?? 1000,
      error: result.error ?? new Error("reconcile failed"),
    };
  }
  if (result.requeueAfterMs !== undefined) return { kind: "requeue", afterMs: result.requeueAfterMs };
  return { kind: "done" };
}

export interface WorkOptions extends AdmissionWaitOptions {
  /** Epoch ms after which no reconcile starts (the platform's deadline minus a margin). */
  deadlineMs?: number | undefined;
  /** Queue age of each message (now − message.at); the router reports the reconciles. */
  metrics?:
    | {
        queueAge?(ms: number): void;
        /** What a doorbell message found of its write: stored, waited (in the worker), requeued. */
        admissionWait?(result: "stored" | "waited" | "requeued"): void;
      }
    | undefined;
  now?: () => number;
  /**
   * Checks a batch message (batch.ts batchChecker). Without it a batch's objects are reconciled one by
   * one: correct, at the per-key cost.
   */
  checkBatch?: BatchCheckFn | undefined;
}

/**
 * The worker core for one message: reports its queue age, starts nothing after the deadline (handed back
 * to the queue at once), runs the reconcile in the message's context and turns a throw into an `error`
 * result (retried by the queue), so one key never fails its batch.
 */
export async function reconcileMessage(
  reconcile: ReconcileFn,
  item: WorkItem,
  opts: WorkOptions = {},
): Promise<ReconcileResult> {
  const now = opts.now ?? Date.now;
  const age = item.at === undefined ? undefined : queueAgeMs({ at: item.at }, now());
  if (age !== undefined) opts.metrics?.queueAge?.(age);
  if (opts.deadlineMs !== undefined && now() >= opts.deadlineMs) {
    return {
      outcome: "error",
      error: new DeadlineError("not started: the invocation is about to time out"),
      requeueAfterMs: 0,
    };
  }
  const run = async (): Promise<ReconcileResult> => {
    try {
      if (item.batch) return await (opts.checkBatch ?? eachKey(reconcile))(item.batch);
      // Admission ran before the write was stored: acting now would reconcile the old object.
      const recheckMs = await admittedWritePending(item, opts, now);
      if (recheckMs !== undefined) return { outcome: "waiting", requeueAfterMs: recheckMs };
      return await reconcile(item.key);
    } catch (err) {
      return { outcome: "error", error: err instanceof Error ? err : new Error(String(err)) };
    }
  };
  return item.context ? reconcileContext.run(item.context, run) : run();
}

/** A batch without a batch checker: each object's full reconcile; any failure retries the message. */
const eachKey =
  (reconcile: ReconcileFn): BatchCheckFn =>
  async (m) => {
    let failed: ReconcileResult | undefined;
    for (const i of m.batch.items) {
      const r = await reconcile({
        apiVersion: m.apiVersion,
        kind: m.kind,
        name: i.name,
        ...(i.namespace ? { namespace: i.namespace } : {}),
      });
      if (r.outcome === "error") failed ??= r;
    }
    return failed ?? { outcome: "in-sync" };
  };

export interface BatchItem extends WorkItem {
  id: string;
}

export interface BatchItemResult {
  id: string;
  key: ResourceKey;
  result: ReconcileResult;
  outcome: MessageOutcome;
}

/**
 * Reconciles a batch of keys, each independently (reconcileMessage): one resource's failure never fails
 * its neighbours. Duplicate keys in one batch are reconciled once (level-triggered: the second would see
 * the same state).
 */
export async function reconcileBatch(
  reconcile: ReconcileFn,
  items: BatchItem[],
  opts: WorkOptions & { concurrency?: number } = {},
): Promise<BatchItemResult[]> {
  const concurrency = Math.max(1, opts.concurrency ?? 8);
  const byKey = new Map<string, Promise<ReconcileResult>>();
  const keyOf = (item: WorkItem) =>
    item.batch
      ? messageKey({ ...item.key, batch: item.batch.batch })
      : `${item.key.apiVersion}/${item.key.kind}/${item.key.namespace ?? ""}/${item.key.name}`;
  let running = 0;
  const waiters: Array<() => void> = [];
  const slot = async () => {
    while (running >= concurrency) await new Promise<void>((r) => waiters.push(r));
    running++;
  };
  const release = () => {
    running--;
    waiters.shift()?.();
  };
  const run = (item: BatchItem) => {
    const k = keyOf(item);
    let p = byKey.get(k);
    if (!p) {
      p = (async () => {
        await slot();
        try {
          return await reconcileMessage(reconcile, item, opts);
        } finally {
          release();
        }
      })();
      byKey.set(k, p);
    }
    return p;
  };
  return Promise.all(
    items.map(async (item) => {
      const result = await run(item);
      return { id: item.id, key: item.key, result, outcome: outcomeOf(result) };
    }),
  );
}
