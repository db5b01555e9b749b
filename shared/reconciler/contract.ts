// One contract for everything driftless reconciles (managed resources, ProviderConfigs, claims, export
// bindings): the key, the result, the logger, events and metrics hooks, conditions and backoff. The one
// router that serves them all is the worker's (shared/worker/core.ts).
import type { Condition, ObjectMeta } from "../api/meta.ts";

/** Which object to reconcile: a message carries only this, the reconciler reads the object fresh. */
export interface ResourceKey {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** Every outcome any reconciler reports (a metrics label; the queue only reads `error` and the delay). */
export type Outcome =
  | "gone"
  | "paused"
  | "in-sync"
  | "created"
  | "updated"
  | "late-initialized"
  | "creating"
  | "deleting"
  | "deleted"
  | "orphaned"
  | "blocked"
  | "conflict"
  | "settling"
  | "waiting"
  | "ready"
  | "unready"
  | "in-use"
  | "released"
  | "error";

export interface ReconcileResult<O extends Outcome = Outcome> {
  outcome: O;
  /** Reconcile this key again after this delay (jittered). Absent: the drift sweep is enough. */
  requeueAfterMs?: number;
  /** When the sweep should next look at it (the poll interval), for callers that schedule themselves. */
  pollAfterMs?: number;
  error?: Error;
}

/**
 * What the router asks of each reconciler. `reconcile` may throw: a ConflictError (someone else moved
 * the object on) becomes a short requeue, anything else an error the queue retries — in the router,
 * not in each reconciler.
 */
export interface Reconciles {
  handles(apiVersion: string, kind: string): boolean;
  reconcile(key: ResourceKey): Promise<ReconcileResult>;
}

/** Reconciles one key and never throws: the router's `reconcile`, what the queue adapters call. */
export type ReconcileFn = (key: ResourceKey) => Promise<ReconcileResult>;

/** pino-compatible structured logger; fields carry keys and counts, never object bodies or secrets. */
export interface ReconcileLogger {
  info(obj: Record<string, unknown>, msg?: string): void;
  warn(obj: Record<string, unknown>, msg?: string): void;
  error(obj: Record<string, unknown>, msg?: string): void;
  debug(obj: Record<string, unknown>, msg?: string): void;
}

export const noopLogger: ReconcileLogger = { info() {}, warn() {}, error() {}, debug() {} };

/** The object an Event is about (a managed resource, a claim, a class; KubeEventRecorder fits). */
export interface EventSubject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
}

export interface EventRecorder {
  record(obj: EventSubject, type: "Normal" | "Warning", reason: string, message: string): Promise<void>;
}

/** Counts of external calls by verb, for metrics and "exactly one Create" assertions. */
export interface ExternalCallStats {
  observe: number;
  /** Batched observes (each one list/describe call of the kind's observeMany, covering many resources). */
  observeMany: number;
  create: number;
  update: number;
  delete: number;
}

/** Optional metrics hook: one call per reconcile and one per external call (errorClass: the error's name). */
export interface ReconcileMetrics {
  reconciled(kind: string, outcome: Outcome, durationMs: number): void;
  externalCall(kind: string, verb: keyof ExternalCallStats, errorClass: string | undefined): void;
}

/** A condition as a reconciler sets it; setConditions stamps lastTransitionTime. */
export type NewCondition = Omit<Condition, "lastTransitionTime">;

/** After a 409: re-read soon (jittered), it is not a failure. */
export const CONFLICT_REQUEUE_MS = 250;
/** After an unforeseen throw: retry soon (jittered); each reconciler's own backoff covers known failures. */
export const THROWN_REQUEUE_MS = 2_000;

/** Full jitter in [0.5, 1.5) × base: spreads retries so they never arrive in lockstep. */
export const jitter = (ms: number, random: () => number = Math.random): number =>
  Math.max(0, Math.round(ms * (0.5 + random())));

/**
 * Stateless exponential backoff: twice the time an object has already spent failing (read from its
 * condition's lastTransitionTime, so no worker memory is needed), within [minMs, maxMs], jittered.
 */
export const failureBackoff = (
  failingForMs: number,
  minMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number => jitter(Math.min(maxMs, Math.max(minMs, failingForMs * 2)), random);

/** `Kind/name` or `Kind/namespace/name`, as every log line names an object. */
export const keyText = (key: ResourceKey): string =>
  `${key.kind}/${key.namespace ? `${key.namespace}/` : ""}${key.name}`;
