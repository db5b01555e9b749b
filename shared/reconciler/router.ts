// The worker core every queue adapter calls (SQS in Lambda, Pub/Sub in Cloud Functions, the memory queue
// of `driftless run`): a message's key runs in its message's context, never after the invocation's
// deadline and never throwing, through the one router to the reconciler of its kind; duplicates in a
// batch run once, and the result becomes what the queue should do with the message.
import { AsyncLocalStorage } from "node:async_hooks";
import { ConflictError } from "../kube/client.ts";
import { messageKey } from "../queue/message.ts";
import type { BatchCheckFn, BatchMessage } from "./batch.ts";
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
} from "./contract.ts";

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

  /** `reconcile` as a function, for the queue adapters (they take any ReconcileFn). */
  readonly reconcileFn: ReconcileFn = (key) => this.reconcile(key);

  async reconcile(key: ResourceKey): Promise<ReconcileResult> {
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
  }
}

/** What every log line written during one message's reconcile carries: why, and which message chain. */
export interface ReconcileContext {
  /** The message's reason: watch, drift, requeue or manual. */
  reason: string;
  /** The message's correlation id (`message.id`), else the queue's id for the message. */
  correlationId: string;
  receiveCount?: number;
}

const reconcileContext = new AsyncLocalStorage<ReconcileContext>();

/** The context of the reconcile running in this async call chain, if any. */
export const currentReconcileContext = (): ReconcileContext | undefined => reconcileContext.getStore();

/** Runs `fn` with `ctx` attached to every log line a contextLogger writes inside it. */
export function withReconcileContext<T>(ctx: ReconcileContext, fn: () => Promise<T>): Promise<T> {
  return reconcileContext.run(ctx, fn);
}

/**
 * Wraps a logger so each line carries the current reconcile's reason and correlationId: the router's
 * one "reconciled" line per reconcile then has key, reason, outcome, durationMs and correlationId.
 */
export function contextLogger(logger: ReconcileLogger): ReconcileLogger {
  const withCtx = (obj: Record<string, unknown>) => {
    const ctx = reconcileContext.getStore();
    return ctx ? { reason: ctx.reason, correlationId: ctx.correlationId, ...obj } : obj;
  };
  return {
    info: (obj, msg) => logger.info(withCtx(obj), msg),
    warn: (obj, msg) => logger.warn(withCtx(obj), msg),
    error: (obj, msg) => logger.error(withCtx(obj), msg),
    debug: (obj, msg) => logger.debug(withCtx(obj), msg),
  };
}

/** now − at in ms; undefined when `at` cannot be read. */
export function queueAgeMs(message: { at: string }, now = Date.now()): number | undefined {
  const at = Date.parse(message.at);
  return Number.isNaN(at) ? undefined : Math.max(0, now - at);
}

/** Raised instead of starting a reconcile when the invocation is about to time out. */
export class DeadlineError extends Error {
  override name = "DeadlineError";
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

/** One message's work: its key, and (when it came from a queue) its context and enqueue time. */
export interface WorkItem {
  key: ResourceKey;
  /** A batch message of the sweep (its key is the batch's first object). */
  batch?: BatchMessage;
  context?: ReconcileContext;
  /** The message's `at` (RFC 3339), for the queue-age metric. */
  at?: string;
  /**
   * From the admission doorbell: the resourceVersion before the admitted write ("" = did not exist) and
   * when it was admitted (kept across requeues, unlike `at`).
   */
  admitted?: { before: string; at: string };
}

/**
 * How long a doorbell message waits for the write it reports to be stored. Admission runs before the
 * write is persisted and the write may still fail (a later webhook, a conflict, validation): after this
 * long (the API server's webhook timeout is 30 s at most) the key is reconciled whatever it holds.
 */
export const ADMISSION_WAIT_MS = 30_000;
/**
 * How soon a doorbell message whose write has not landed yet (after the in-worker waits below) is looked
 * at again, at first: then after as long as it has waited so far (doubling), so a message about a write
 * that never comes — refused later, or a forged call — costs about ten GETs in ADMISSION_WAIT_MS.
 */
export const ADMISSION_RECHECK_MS = 1_000;

export interface WorkOptions {
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
  /**
   * The stored object's resourceVersion (undefined: it does not exist), read for doorbell messages
   * (`admitted`) before they are acted on. Without it they are reconciled at once.
   */
  storedVersion?: ((key: ResourceKey) => Promise<string | undefined>) | undefined;
}

/**
 * Whether the write a doorbell message reports is still to be stored — the object still has the
 * resourceVersion it had before (or still does not exist, for a create) and the message is young — and
 * if so, when to look again.
 */
async function admittedWritePending(
  item: WorkItem,
  opts: WorkOptions,
  now: () => number,
): Promise<number | undefined> {
  const { admitted, key } = item;
  const read = opts.storedVersion;
  if (!admitted || !read) return undefined;
  const pending = async () => {
    const stored = await read(key);
    return admitted.before === "" ? stored === undefined : stored === admitted.before;
  };
  const age = queueAgeMs({ at: admitted.at }, now());
  if (age === undefined || age >= ADMISSION_WAIT_MS) return undefined;
  // Called on the hook's object: metrics sinks are classes with private state.
  const report = (result: "stored" | "waited" | "requeued") => opts.metrics?.admissionWait?.(result);
  if (!(await pending())) {
    report("stored");
    return undefined;
  }
  // Usually the write is stored a few milliseconds after admission: a fresh message looks again here
  // before it goes back to the queue, whose shortest delay is a second on SQS and ten on Pub/Sub.
  if (age < ADMISSION_INLINE_WAIT_WINDOW_MS) {
    for (const ms of ADMISSION_INLINE_WAITS_MS) {
      await new Promise((r) => setTimeout(r, ms));
      if (!(await pending())) {
        report("waited");
        return undefined;
      }
    }
  }
  report("requeued");
  return Math.max(ADMISSION_RECHECK_MS, queueAgeMs({ at: admitted.at }, now()) ?? 0);
}

/** A doorbell message younger than this waits in the worker (ADMISSION_INLINE_WAITS_MS) first. */
export const ADMISSION_INLINE_WAIT_WINDOW_MS = 1_000;
/** The in-worker waits before a young doorbell message whose write is not stored yet is requeued. */
export const ADMISSION_INLINE_WAITS_MS = [25, 50, 100, 200] as const;

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
