// The one lifecycle every reconciler plugs its domain step into (managed resources, ProviderConfigs,
// claims, export bindings), as azure-service-operator's generic reconciler and crossplane-runtime do:
// read the object fresh, add or remove its finalizer, write its status only when it changed (conditions
// with observedGeneration), record events, back off from failures statelessly, and throw a 409 to the
// router, which requeues it. It imports no queue, pipeline or worker code.
import {
  CredentialsError,
  DependencyNotReadyError,
  InvalidSpecError,
  ThrottledError,
} from "../api/external.ts";
import { type Condition, ConditionType, type ObjectMeta, type ResourceType } from "../api/meta.ts";
import { ConflictError, type Kube, type KubeObject, statusOf } from "../kube/client.ts";
import { deepEqual, replacementPatch } from "./compare.ts";
import { getCondition, setConditions } from "./conditions.ts";
import {
  type EventRecorder,
  failureBackoff,
  jitter,
  type NewCondition,
  noopLogger,
  type ReconcileLogger,
  type ResourceKey,
} from "./contract.ts";

/** Short constant messages wrapped around the cause, as crossplane-runtime does. */
export const LifecycleMsg = {
  addFinalizer: "cannot add finalizer",
  removeFinalizer: "cannot remove finalizer",
} as const;

/** Bounds of the stateless failure backoff (contract.ts failureBackoff). */
export interface Backoff {
  minMs: number;
  maxMs: number;
}
export const ERROR_BACKOFF: Backoff = { minMs: 1_000, maxMs: 5 * 60_000 };
/** A throttled cloud is asked again later than after any other failure. */
export const THROTTLED_BACKOFF: Backoff = { minMs: 5_000, maxMs: 5 * 60_000 };
/** Waiting on something usually there within seconds to minutes (a Ready reference, a class being applied). */
export const WAITING_BACKOFF: Backoff = { minMs: 1_000, maxMs: 30_000 };

/** An object the lifecycle manages: metadata, and a status with conditions. */
export interface LifecycleObject extends KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  status?: { conditions?: Condition[] };
}

/**
 * Status fields written beside the conditions. An undefined field is left as it is; an object is
 * replaced whole (keys no longer reported are removed, not merged forever).
 */
export type StatusFields = Record<string, unknown>;

export interface StatusOptions {
  /**
   * The conditions given are all the object has (a mirror of another object's): other types are dropped.
   * Default: other types are left as they are.
   */
  exclusive?: boolean;
}

/** A failure as the user sees it: a Warning event, conditions (Synced=False among them), a backoff. */
export interface Failure {
  /** The event's reason: which step failed. */
  reason: string;
  error: Error;
  /** Includes the Synced=False condition; how long it has held (same reason) drives the backoff. */
  conditions: NewCondition[];
  backoff: Backoff;
  fields?: StatusFields;
}

export interface LifecycleOptions {
  events?: EventRecorder;
  logger?: ReconcileLogger;
  now?: () => Date;
  /** Deterministic jitter source for tests; default Math.random. */
  random?: () => number;
}

/**
 * The lifecycle of the objects one Kube client holds. Every write is of the object as it was read:
 * metadata writes are guarded by its resourceVersion (a 409 is thrown, unwrapped, for the router).
 */
export class Lifecycle {
  readonly #kube: Kube;
  readonly #events: EventRecorder | undefined;
  readonly #logger: ReconcileLogger;
  readonly now: () => Date;
  readonly random: () => number;

  constructor(kube: Kube, opts: LifecycleOptions = {}) {
    this.#kube = kube;
    this.#events = opts.events;
    this.#logger = opts.logger ?? noopLogger;
    this.now = opts.now ?? (() => new Date());
    this.random = opts.random ?? Math.random;
  }

  /** Reads the object fresh (level-triggered: a stale or duplicate message does no harm); undefined when gone. */
  read<T extends LifecycleObject>(t: ResourceType, key: ResourceKey): Promise<T | undefined> {
    return this.#kube.get<T>(t, key.name, t.namespaced ? key.namespace : undefined);
  }

  /** Adds `finalizer` (with `labels`, in the same write) unless the object has it; returns the object. */
  async addFinalizer<T extends LifecycleObject>(
    t: ResourceType,
    obj: T,
    finalizer: string,
    labels?: Record<string, string>,
  ): Promise<T> {
    const finalizers = obj.metadata.finalizers ?? [];
    if (finalizers.includes(finalizer)) return obj;
    try {
      return await this.#patchMeta(t, obj, {
        finalizers: [...finalizers, finalizer],
        ...(labels ? { labels } : {}),
      });
    } catch (err) {
      throw err instanceof ConflictError ? err : wrapErr(LifecycleMsg.addFinalizer, err);
    }
  }

  /** Removes `finalizer` if the object has it; an object already gone has nothing left to hold. */
  async removeFinalizer<T extends LifecycleObject>(t: ResourceType, obj: T, finalizer: string): Promise<T> {
    const finalizers = obj.metadata.finalizers ?? [];
    if (!finalizers.includes(finalizer)) return obj;
    try {
      return await this.#patchMeta(t, obj, { finalizers: finalizers.filter((f) => f !== finalizer) });
    } catch (err) {
      if (statusOf(err) === 404) return obj;
      throw err instanceof ConflictError ? err : wrapErr(LifecycleMsg.removeFinalizer, err);
    }
  }

  #patchMeta<T extends LifecycleObject>(
    t: ResourceType,
    obj: T,
    metadata: Record<string, unknown>,
  ): Promise<T> {
    return this.#kube.patch<T>(
      t,
      obj.metadata.name,
      { metadata },
      { resourceVersion: obj.metadata.resourceVersion ?? "", namespace: obj.metadata.namespace },
    );
  }

  /**
   * Sets `conditions` (stamped with the object's generation) and `fields` on the status and writes it
   * only when something changed, so an in-sync reconcile makes no write. Returns the written object, or
   * undefined when nothing was written or the object is gone (nothing left to report on).
   */
  async writeStatus<T extends LifecycleObject>(
    t: ResourceType,
    obj: T,
    conditions: ReadonlyArray<NewCondition | Condition>,
    fields: StatusFields = {},
    opts: StatusOptions = {},
  ): Promise<T | undefined> {
    const status = statusPatch(obj, conditions, fields, this.now(), opts);
    if (!status) return undefined;
    try {
      return await this.#kube.patchStatus<T>(t, obj.metadata.name, status, {
        ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
      });
    } catch (err) {
      // Deleted meanwhile (its finalizer removed): nothing left to report on.
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  /** Records an event; a failure to record one is logged, never the reconcile's failure. */
  async event(obj: LifecycleObject, type: "Normal" | "Warning", reason: string, message: string) {
    if (!this.#events) return;
    await this.#events.record(obj, type, reason, message).catch((err: unknown) => {
      this.#logger.warn({ error: (err as Error).message }, "cannot record event");
    });
  }

  /**
   * Stateless exponential backoff: twice the time the object has already spent failing the same way,
   * read from `failing`'s type's lastTransitionTime (no worker memory), within the bounds, jittered.
   */
  backoff(conditions: Condition[] | undefined, failing: NewCondition, bounds: Backoff): number {
    const prev = getCondition(conditions, failing.type);
    const failingFor =
      prev?.status === failing.status && prev.reason === failing.reason
        ? this.now().getTime() - Date.parse(prev.lastTransitionTime)
        : 0;
    return failureBackoff(failingFor, bounds.minMs, bounds.maxMs, this.random);
  }

  /**
   * Reports a failure where the user looks: the conditions (Synced=False with the message) and a
   * Warning event. If even the status write fails, that is logged and the error still goes back to the
   * queue. Returns the backoff before the next try.
   */
  async fail<T extends LifecycleObject>(t: ResourceType, obj: T, f: Failure): Promise<number> {
    const synced = f.conditions.find((c) => c.type === ConditionType.Synced);
    const requeueAfterMs = synced
      ? this.backoff(obj.status?.conditions, synced, f.backoff)
      : failureBackoff(0, f.backoff.minMs, f.backoff.maxMs, this.random);
    try {
      await this.writeStatus(t, obj, f.conditions, f.fields);
    } catch (writeErr) {
      this.#logger.warn(
        { key: `${obj.kind}/${obj.metadata.name}`, error: (writeErr as Error).message },
        "cannot write the failure to the status",
      );
    }
    await this.event(obj, "Warning", f.reason, f.error.message);
    return requeueAfterMs;
  }

  /** Full jitter in [0.5, 1.5) × base: spreads retries so they never arrive in lockstep. */
  jitter(ms: number): number {
    return jitter(ms, this.random);
  }
}

/**
 * The status subresource patch that sets `conditions` (stamped with the object's generation) and
 * `fields` on `obj`, or undefined when it would change nothing: an in-sync reconcile writes nothing.
 * Pure, so a plan can ask whether a reconcile would write.
 */
export function statusPatch(
  obj: LifecycleObject,
  conditions: ReadonlyArray<NewCondition | Condition>,
  fields: StatusFields,
  now: Date,
  opts: StatusOptions = {},
): Record<string, unknown> | undefined {
  const before = (obj.status ?? {}) as Record<string, unknown> & { conditions?: Condition[] };
  const types = new Set(conditions.map((c) => c.type));
  const current = opts.exclusive ? before.conditions?.filter((c) => types.has(c.type)) : before.conditions;
  const next = setConditions(current, conditions, now, obj.metadata.generation);
  const status: Record<string, unknown> = { conditions: next };
  let changed = !deepEqual(next, before.conditions ?? []);
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined || deepEqual(v, before[k])) continue;
    status[k] = replacementPatch(before[k], v);
    changed = true;
  }
  return changed ? status : undefined;
}

/**
 * Whether an error is a wait (DependencyNotReadyError: a reference not Ready, something the cloud says is not
 * there yet), itself or as the cause a step's message wraps: looked at often, and never a failure to
 * dead-letter.
 */
export const isWait = (error: Error): boolean =>
  error instanceof DependencyNotReadyError || error.cause instanceof DependencyNotReadyError;

/** The managed engine's backoff bounds for an error: throttling starts higher; a wait is looked at often. */
export function errorBackoff(error: Error): Backoff {
  const throttled = error instanceof ThrottledError || error.cause instanceof ThrottledError;
  return {
    minMs: throttled ? THROTTLED_BACKOFF.minMs : ERROR_BACKOFF.minMs,
    maxMs: isWait(error) ? WAITING_BACKOFF.maxMs : ERROR_BACKOFF.maxMs,
  };
}

/** `msg: cause`, keeping the error's class so callers (backoff, metrics) still see throttling or bad credentials. */
export function wrapErr(msg: string, cause: unknown): Error {
  const inner = cause instanceof Error ? cause : new Error(String(cause));
  const text = `${msg}: ${inner.message}`;
  if (inner instanceof ThrottledError) return new ThrottledError(text, { cause: inner });
  if (inner instanceof CredentialsError) return new CredentialsError(text, { cause: inner });
  if (inner instanceof DependencyNotReadyError) return new DependencyNotReadyError(text, { cause: inner });
  if (inner instanceof InvalidSpecError) return new InvalidSpecError(text, { cause: inner });
  return new Error(text, { cause: inner });
}
