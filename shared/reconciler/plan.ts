// The engine's one decision: what a reconcile of a managed resource does, as a list of steps, from what is
// known of it — the object as read, the clock, where its client would reach (home) and what the cloud showed.
// Pure: no I/O, no clock of its own. The applier (reconciler.ts) performs the steps; the batched drift check
// calls the same function and finds an object in sync exactly when its plan is empty.
import type { V1Secret } from "@kubernetes/client-node";
import { EXTERNAL_KEY_LABEL, externalKeyOf } from "../api/cloud-events.ts";
import {
  type ConnectionDetails,
  type ExternalObservation,
  type Home,
  recordedHome,
} from "../api/external.ts";
import { DEFAULT_TAG_KEYS, defaultTagsOf } from "../api/external-tags.ts";
import { isObject } from "../api/json.ts";
import type { LastExternalUpdate, ManagedKindDef, ManagedResource } from "../api/managed.ts";
import {
  Annotations,
  ConditionReason,
  ConditionType,
  MANAGED_FINALIZER,
  reconcileRequestOf,
} from "../api/meta.ts";
import { driftedFields, type FieldBehaviours, lateInitialize, parseDuration } from "./compare.ts";
import {
  available,
  creating,
  deleting,
  getCondition,
  observeMatched,
  reconcileError,
  reconcilePaused,
  reconcileSuccess,
  unavailable,
  updateFailed,
  updateRequested,
  updateRestricted,
} from "./conditions.ts";
import { publishedHolds } from "./connection.ts";
import type { NewCondition, Outcome } from "./contract.ts";
import { type StatusFields, statusPatch } from "./lifecycle.ts";
import { resolvePolicies, supportedPoliciesText } from "./policies.ts";
import { referencesResolved } from "./references.ts";
import type { KnownShape } from "./shape-marks.ts";

export const SHORT_REQUEUE_MS = 2_000;
/**
 * The first look after a create (jittered): soon, because the cloud's answer often already says the resource
 * is available, and every dependent waits for Ready. crossplane-runtime requeues at once, rate-limited to 1 s.
 */
export const AFTER_CREATE_REQUEUE_MS = 500;
/** While the cloud says Creating: look again after a quarter of the time it has been creating, in these bounds. */
export const CREATING_REQUEUE_MIN_MS = 1_000;
export const CREATING_REQUEUE_MAX_MS = 30_000;
export const DEPENDENTS_REQUEUE_MS = 5_000;
/** Updates of one generation that may find the same fields changed back before driftless stops updating. */
export const DEFAULT_UPDATE_LOOP_LIMIT = 3;

// Short constant messages wrapped around the cause, as crossplane-runtime does.
export const Msg = {
  getManaged: "cannot get managed resource",
  unknownKind: "no provider is registered for this kind",
  invalidSpec: "invalid spec",
  connect: "cannot connect to the provider",
  home: "cannot determine where the external resource lives",
  observe: "cannot observe external resource",
  create: "cannot create external resource",
  update: "cannot update external resource",
  delete: "cannot delete external resource",
  publish: "cannot publish connection details",
  unpublish: "cannot unpublish connection details",
  addFinalizer: "cannot add finalizer",
  removeFinalizer: "cannot remove finalizer",
  lateInit: "cannot update managed resource with late-initialized fields",
  recordCreate: "cannot record the result of creating the external resource",
  resolveReferences: "cannot resolve references",
  initialize: "cannot initialize the managed resource",
  recordPending: "cannot record that a create is starting",
  notFoundObserveOnly:
    "external resource does not exist; without the Create management policy driftless only imports existing resources — check the crossplane.io/external-name annotation",
  notFoundNoCreate: "external resource does not exist, and driftless never creates a resource of this kind",
  externalKept: "the external resource is kept: this object is released, nothing was deleted in the cloud",
  invalidPolicy: "unsupported combination of managementPolicies",
  pendingCreate:
    "waiting for the result of a create that is in flight: a not-found now is no proof that nothing was created",
  gracePeriod: "Waiting for external resource existence to be confirmed",
  deleteRequested: "deletion of the external resource was requested",
  indexLabel: "cannot write the external-key index label",
  shapeMark: "cannot read or write the shape's mark: the external-key index label waits",
  usages: "cannot read the Usages of the managed resource",
  inUse: "waiting: in use by",
} as const;

/** Event reasons, as crossplane-runtime names them, so `kubectl describe` reads the same as under Crossplane. */
export const Reason = {
  cannotConnect: "CannotConnectToProvider",
  cannotObserve: "CannotObserveExternalResource",
  cannotCreate: "CannotCreateExternalResource",
  cannotUpdate: "CannotUpdateExternalResource",
  cannotDelete: "CannotDeleteExternalResource",
  cannotPublish: "CannotPublishConnectionDetails",
  cannotUnpublish: "CannotUnpublishConnectionDetails",
  cannotResolveRefs: "CannotResolveResourceReferences",
  cannotUpdateManaged: "CannotUpdateManagedResource",
  cannotAddFinalizer: "CannotAddFinalizer",
  cannotRemoveFinalizer: "CannotRemoveFinalizer",
  invalidPolicy: "CannotUseInvalidManagementPolicy",
  invalidSpec: "InvalidSpec",
  cannotDetermineCreation: "CannotDetermineCreationResult",
  homeChanged: "HomeChanged",
  reconcileError: "ReconcileError",
  pending: "PendingExternalResource",
  paused: "ReconciliationPaused",
  created: "CreatedExternalResource",
  updated: "UpdatedExternalResource",
  deleted: "DeletedExternalResource",
  externalKept: "ExternalResourceKept",
  updateLoop: "UpdateLoopDetected",
  cannotGetUsages: "CannotGetUsages",
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];

/** A metadata write guarded by resourceVersion (finalizers replace the list; annotations and labels merge). */
export interface MetaPatch {
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  finalizers?: string[];
}

/** What the plan's failure step reports: Synced=False with the error, a Warning event, backoff. */
export interface Failure {
  reason: Reason;
  message: string;
  /** The error class the message stands for (backoff and metrics read it). */
  kind: "invalidSpec" | "blocked";
  /** Conditions set with Synced=False (e.g. Ready kept as it is). */
  extra?: NewCondition[];
}

/** One thing a reconcile does, in order. The applier maps a failing step to its Msg and Reason. */
export type Step =
  /** Default the external name (and its index label) before anything reads by it. */
  | { do: "initialize"; patch: MetaPatch }
  | { do: "resolveReferences" }
  /** Record what the cloud showed about an earlier create (retried: it matters more than any write). */
  | { do: "recordCreate"; annotations: Record<string, string>; labels?: Record<string, string>; why: string }
  | { do: "publish"; details: ConnectionDetails; extra?: NewCondition[] }
  | { do: "unpublish"; extra?: NewCondition[] }
  | { do: "meta"; patch: MetaPatch; msg: "addFinalizer" | "indexLabel" }
  /** Move the kind's shape's mark on (shape-marks.ts) before its first index label. */
  | { do: "markShape"; to: "in-use" | "pending" }
  | { do: "removeFinalizer" }
  | { do: "lateInitialize"; forProvider: Record<string, unknown>; filled: string[] }
  | {
      do: "create";
      externalName: string | undefined;
      patch: MetaPatch;
      details?: ConnectionDetails;
      /** The index label of a provider-chosen id may ride on the write that records it (its shape is in use). */
      indexLabel: boolean;
    }
  | {
      do: "update";
      externalName: string;
      drift: string[];
      ready: NewCondition;
      /** For the change log: what started it, and each field cloud → spec (secret values redacted). */
      trigger: "spec change" | "cloud drift";
      changes: Array<{ field: string; before: unknown; after: unknown }>;
    }
  | { do: "delete"; externalName: string }
  | { do: "event"; type: "Normal" | "Warning"; reason: Reason; message: string }
  | {
      do: "status";
      conditions: NewCondition[];
      /** Replaces status.atProvider whole (keys the cloud stopped reporting go); absent: left as it is. */
      atProvider?: Record<string, unknown>;
      lastExternalUpdate?: LastExternalUpdate;
      /** What changes, for a log line. */
      why: string;
    }
  | { do: "fail"; failure: Failure };

/** What the reconcile reports when every step succeeded. */
export interface Verdict {
  outcome: Outcome;
  requeueAfterMs?: number;
  pollAfterMs?: number;
}

/**
 * A plan: steps to take now, then either the verdict, or what comes next before deciding further: plan
 * again from the object the steps wrote ("replan"), or learn more — a connection to the cloud (which
 * tells the home), an observation.
 */
export type Plan =
  | {
      steps: Step[];
      next: "replan" | "usages" | "connection" | "observation" | "shapeMark";
      verdict?: undefined;
    }
  | { steps: Step[]; next?: undefined; verdict: Verdict };

/** What is known of the resource besides the object itself. */
export interface Known {
  /**
   * While deleting: what holds the resource (Usages, api/protection/usage.ts), one line each; empty when
   * nothing does. Absent: not read yet.
   */
  usedBy?: readonly string[];
  /** References were resolved in this reconcile already (policy Always resolves once per reconcile). */
  referencesResolved?: boolean;
  /** Where the connected client would reach ({} when its kind reports none); absent before connecting. */
  home?: Home;
  /** What the cloud showed; absent before observing. */
  observation?: ExternalObservation<Record<string, unknown>, Record<string, unknown>>;
  /**
   * The connection Secret as read for a batch (undefined: it does not exist; "unknown": not read). Absent in
   * a full reconcile, whose publish step reads the Secret itself and writes only what differs.
   */
  connectionSecret?: V1Secret | undefined | "unknown";
  /** The mark of the kind's shape (shape-marks.ts), read before an index label is written; absent: not read. */
  shape?: KnownShape;
}

/** The engine's settings and the kind's facts a plan depends on. */
export interface PlanContext {
  def: ManagedKindDef;
  /** The kind's field behaviours, its references' fields as write-only. */
  fields: FieldBehaviours;
  /** forProvider paths that are maps (compared as a whole set of keys). */
  maps: Set<string>;
  now: Date;
  pollIntervalMs: number;
  minPollIntervalMs: number;
  creationGracePeriodMs: number;
  createPendingTimeoutMs: number;
  /** Updates in a row that may find the same fields changed back before driftless stops (update loop). */
  updateLoopLimit: number;
  /** Whether creates (and updates of a spec's own tags) carry Crossplane's default tags (--skip-default-tags: false). */
  defaultTags: boolean;
  /** How long a shape stays `pending` before its first index label (shape-marks.ts SHAPE_MARK_WAIT_MS). */
  shapeMarkWaitMs: number;
  /** Spreads a delay (the engine's jitter); a plan is deterministic for a deterministic jitter. */
  jitter(ms: number): number;
  /**
   * Specs already validated, by spec object (their problem, or undefined when valid). Only for a caller that
   * never rewrites what it plans (the batched check, which plans each listed object up to three times); a
   * full reconcile leaves it out and validates every plan, so a late-initialised spec is validated again.
   */
  validatedSpecs?: WeakMap<object, string | undefined>;
}

/** The steps of a reconcile of `mr` (as read, in its own namespace) given what is known so far. */
export function plan(ctx: PlanContext, mr: ManagedResource, known: Known = {}): Plan {
  const annotations = mr.metadata.annotations ?? {};
  const policies = resolvePolicies(mr.spec.managementPolicies, mr.spec.deletionPolicy, ctx.def.lacks);
  const isDeleting = Boolean(mr.metadata.deletionTimestamp);

  if (annotations[Annotations.paused] === "true" || policies.none) {
    const wasPaused = getCondition(mr.status?.conditions, "Synced")?.reason === "ReconcilePaused";
    return final(
      [
        ...statusStep(ctx, mr, [reconcilePaused()]),
        ...(wasPaused ? [] : [event("Normal", Reason.paused, reconcilePaused().message ?? "")]),
      ],
      { outcome: "paused" },
    );
  }
  if (isDeleting) {
    // A resource in use is not deleted — neither in the cloud nor, orphaned, from the cluster — until
    // whatever uses it is gone (Crossplane's Usages). Deleting both waits in order, whatever reconciles first.
    if (known.usedBy === undefined) return { steps: [], next: "usages" };
    if (known.usedBy.length > 0) {
      const message = `${Msg.inUse} ${known.usedBy.join(", ")}: the external resource is kept and deletion proceeds once nothing uses it`;
      return final(statusStep(ctx, mr, [deleting(message), reconcileSuccess()]), {
        outcome: "deleting",
        requeueAfterMs: ctx.jitter(DEPENDENTS_REQUEUE_MS),
      });
    }
  }
  // Orphan: the cloud resource stays; only our traces in the cluster go. Works whatever the spec says.
  if (isDeleting && !policies.delete) {
    // A kind whose cloud has no delete says so once, where the person who deleted the object looks.
    const lacks = ctx.def.lacks?.Delete;
    const kept = lacks ? [event("Normal", Reason.externalKept, `${Msg.externalKept}: ${lacks}`)] : [];
    return final([...kept, { do: "unpublish" }, { do: "removeFinalizer" }], { outcome: "orphaned" });
  }
  if (!isDeleting) {
    // Policies and spec validation gate create and update only: deletion must always be possible.
    if (!policies.supported)
      return failed(Reason.invalidPolicy, `${Msg.invalidPolicy}; supported are ${supportedPoliciesText()}`);
    const invalid = specProblem(ctx, mr);
    if (invalid !== undefined) return failed(Reason.invalidSpec, `${Msg.invalidSpec}: ${invalid}`);
  }
  const externalName = annotations[Annotations.externalName];
  if (!externalName && ctx.def.externalName === "fromAnnotation") {
    const name = mr.metadata.name;
    const label = indexLabelPatch(ctx.def, mr, name);
    const gate = labelGate(ctx, known, label !== undefined);
    if (gate.plan) return gate.plan;
    const patch = {
      annotations: { [Annotations.externalName]: name },
      labels: gate.write ? label : undefined,
    };
    return { steps: [{ do: "initialize", patch }], next: "replan" };
  }
  if (!isDeleting && !known.referencesResolved && !referencesResolved(ctx.def, mr)) {
    return { steps: [{ do: "resolveReferences" }], next: "replan" };
  }
  if (isDeleting) {
    // Other controllers still hold the object: keep the cloud resource until ours is the last finalizer.
    const others = (mr.metadata.finalizers ?? []).filter((f) => f !== MANAGED_FINALIZER);
    if (others.length > 0) {
      const message = `waiting for finalizers ${others.join(", ")} to be removed before deleting the external resource`;
      return final(statusStep(ctx, mr, [deleting(message), reconcileSuccess()]), {
        outcome: "deleting",
        requeueAfterMs: ctx.jitter(DEPENDENTS_REQUEUE_MS),
      });
    }
  }
  if (known.home === undefined) return { steps: [], next: "connection" };
  const moved = homeChanges(bindingHome(mr), known.home);
  if (moved.length > 0) {
    const failure = homeFailure(moved, isDeleting);
    return final([{ do: "fail", failure }], { outcome: "error" });
  }
  if (!known.observation) return { steps: [], next: "observation" };
  return planObserved(ctx, mr, known.observation, known);
}

/** What makes the spec invalid (zod's issues), or undefined; validated once per spec object where memoised. */
function specProblem(ctx: PlanContext, mr: ManagedResource): string | undefined {
  const memo = ctx.validatedSpecs;
  if (memo?.has(mr.spec)) return memo.get(mr.spec);
  let problem: string | undefined;
  const parsed = ctx.def.forProvider.safeParse(mr.spec.forProvider ?? {});
  if (!parsed.success) problem = formatIssues(parsed.error.issues);
  else if (mr.spec.initProvider) {
    // What a create sends is initProvider under forProvider: it must be valid as a whole.
    const merged = ctx.def.forProvider.safeParse(createSpec(mr));
    if (!merged.success)
      problem = formatIssues(merged.error.issues, "spec.initProvider (merged with spec.forProvider)");
  }
  memo?.set(mr.spec, problem);
  return problem;
}

/** The steps once the cloud was observed (the second half of `plan`). */
function planObserved(
  ctx: PlanContext,
  mr: ManagedResource,
  obs: ExternalObservation<Record<string, unknown>, Record<string, unknown>>,
  known: Known,
): Plan {
  const annotations = mr.metadata.annotations ?? {};
  const policies = resolvePolicies(mr.spec.managementPolicies, mr.spec.deletionPolicy, ctx.def.lacks);
  const isDeleting = Boolean(mr.metadata.deletionTimestamp);
  const now = ctx.now;
  const steps: Step[] = [];
  const externalName = annotations[Annotations.externalName];
  const pendingCreate = createIsPending(mr);
  const atProvider = obs.atProvider ?? mr.status?.atProvider;
  if (obs.resourceExists && obs.externalName && obs.externalName !== externalName) {
    // A provider-chosen id found by its ownership tag. After a crash before it was recorded the create is
    // still pending: the next round records it as recovered. A create whose answer was lost was recorded as
    // failed: it was created after all, and lives where it was made.
    const annotations = {
      [Annotations.externalName]: obs.externalName,
      ...(pendingCreate ? {} : { [Annotations.createSucceeded]: now.toISOString() }),
    };
    const label = indexLabelPatch(ctx.def, mr, obs.externalName);
    const gate = labelGate(ctx, known, label !== undefined);
    if (gate.plan) return gate.plan;
    const labels = gate.write ? label : undefined;
    return { steps: [{ do: "recordCreate", annotations, labels, why: "found" }], next: "replan" };
  }
  if (pendingCreate && obs.resourceExists) {
    // The interrupted create did reach the cloud and the external name finds it: record success, go on.
    const annotations = { [Annotations.createSucceeded]: now.toISOString() };
    return { steps: [{ do: "recordCreate", annotations, why: "recovered" }], next: "replan" };
  }
  const waiting = (message?: string) => (isDeleting ? deleting(message) : creating());
  const waitingOutcome = isDeleting ? "deleting" : "creating";
  const status = (conditions: NewCondition[]) => statusStep(ctx, mr, conditions, atProvider);

  if (pendingCreate && !obs.resourceExists) {
    const age = now.getTime() - Date.parse(pendingCreate);
    if (age < ctx.createPendingTimeoutMs) {
      // Another worker may be creating it right now: never race it, and never trust this not-found for a
      // delete — the create may land after it and leak.
      steps.push(
        ...status([waiting(Msg.pendingCreate), reconcileSuccess()]),
        event("Normal", Reason.pending, Msg.pendingCreate),
      );
      const requeueAfterMs = ctx.jitter(
        Math.min(SHORT_REQUEUE_MS * 2, ctx.createPendingTimeoutMs - age + 100),
      );
      return final(steps, { outcome: waitingOutcome, requeueAfterMs });
    }
    if (ctx.def.externalName === "providerChosen" && !ctx.def.ownershipLookup) {
      const message =
        `cannot determine creation result: a create started at ${pendingCreate} was interrupted and the cloud chose the name, so ${isDeleting ? "deleting now could leave it behind" : "creating again could leak a duplicate"}. ` +
        `Find the resource in the cloud: if it exists, set ${Annotations.externalName} to its id; if not, remove the ${Annotations.createPending} annotation. Either way driftless then continues.`;
      steps.push({
        do: "fail",
        failure: { reason: Reason.cannotDetermineCreation, message, kind: "blocked" },
      });
      return final(steps, { outcome: "blocked", pollAfterMs: pollInterval(ctx, mr) });
    }
    // Older than any create takes and still absent (by name, or by ownership tag): the create never reached
    // the cloud, so creating again cannot make a second resource, nor can deleting leak one.
  }

  if (!obs.resourceExists) {
    const succeeded = annotations[Annotations.createSucceeded];
    // Once driftless itself asked the cloud to delete it (it was seen to exist), not-found is the answer.
    const deleteRequested =
      isDeleting && getCondition(mr.status?.conditions, "Ready")?.message === Msg.deleteRequested;
    if (succeeded && !deleteRequested && now.getTime() - Date.parse(succeeded) < ctx.creationGracePeriodMs) {
      // Eventually consistent clouds may not list what they just created: a not-found now is no proof.
      steps.push(
        ...status([waiting(), reconcileSuccess()]),
        event("Normal", Reason.pending, Msg.gracePeriod),
      );
      return final(steps, { outcome: waitingOutcome, requeueAfterMs: ctx.jitter(SHORT_REQUEUE_MS) });
    }
    if (!isDeleting && !policies.create) {
      // An import of something that is not there: say so at the poll interval, not as a failing message.
      // A kind whose cloud has no create says why nothing can make it (Google makes it with its parent).
      const lacks = ctx.def.lacks?.Create;
      const message = lacks ? `${Msg.notFoundNoCreate}: ${lacks}` : Msg.notFoundObserveOnly;
      const prev = getCondition(mr.status?.conditions, "Synced");
      steps.push(...status([unavailable(message), reconcileError(message)]));
      if (prev?.message !== message) steps.push(event("Warning", Reason.cannotObserve, message));
      return final(steps, { outcome: "blocked", requeueAfterMs: pollInterval(ctx, mr) });
    }
  }

  if (isDeleting) {
    if (obs.resourceExists) {
      steps.push({ do: "delete", externalName: externalName ?? "" });
      steps.push(event("Normal", Reason.deleted, `Deleting external resource ${externalName}`));
      steps.push(...status([deleting(Msg.deleteRequested), reconcileSuccess()]));
      return final(steps, { outcome: "deleting", requeueAfterMs: ctx.jitter(SHORT_REQUEUE_MS) });
    }
    steps.push({ do: "unpublish", extra: [deleting()] }, { do: "removeFinalizer" });
    return final(steps, { outcome: "deleted" });
  }

  const home = known.home ?? {};
  // The index label and the home ride on the finalizer's write; a resource that has its finalizer (adopted,
  // or from before they existed) gets them alone, once. A resource still to be created gets them with the
  // create-pending write (a provider-chosen id's on the write that records it). Either way its shape's mark
  // must allow it first (shape-marks.ts).
  const wanted = indexLabelPatch(ctx.def, mr, externalName);
  const gate = labelGate(ctx, known, wanted !== undefined || externalName === undefined);
  if (gate.plan) return gate.plan;
  const label = gate.write && obs.resourceExists ? wanted : undefined;
  const homeNote = obs.resourceExists ? homeAnnotation(bindingHome(mr), home) : undefined;
  const meta: MetaPatch = {
    ...(label ? { labels: label } : {}),
    ...(homeNote ? { annotations: homeNote } : {}),
  };
  const finalizers = mr.metadata.finalizers ?? [];
  if (!finalizers.includes(MANAGED_FINALIZER)) {
    const patch = { finalizers: [...finalizers, MANAGED_FINALIZER], ...meta };
    return { steps: [{ do: "meta", patch, msg: "addFinalizer" }], next: "replan" };
  }
  if (label || homeNote) return { steps: [{ do: "meta", patch: meta, msg: "indexLabel" }], next: "replan" };
  // For a resource still to be created, details (e.g. a generated password) are published only by the
  // worker that wins the create-pending guard, so concurrent workers cannot overwrite each other.
  const details = obs.connectionDetails;
  if (
    obs.resourceExists &&
    details &&
    Object.keys(details).length > 0 &&
    mr.spec.writeConnectionSecretToRef
  ) {
    const secret = known.connectionSecret;
    if (!("connectionSecret" in known) || secret === "unknown" || !publishedHolds(secret, mr, details))
      steps.push({ do: "publish", details });
  }

  if (!obs.resourceExists) {
    const patch: MetaPatch = {
      annotations: {
        [Annotations.createPending]: now.toISOString(),
        ...homeAnnotation(bindingHome(mr), home),
      },
      labels: gate.write ? wanted : undefined,
    };
    // The create sends asCreated(mr): spec.initProvider under spec.forProvider.
    steps.push({
      do: "create",
      externalName,
      patch,
      indexLabel: gate.write,
      ...(details ? { details } : {}),
    });
    return final(steps, { outcome: "created", requeueAfterMs: ctx.jitter(AFTER_CREATE_REQUEUE_MS) });
  }
  return labelLater(planExisting(ctx, mr, obs, steps, atProvider), gate.waitMs);
}

/**
 * Before an index label is written (`wanted`): the shape's mark must say `in-use` (shape-marks.ts). Learns
 * it, moves it on, or leaves the label for a reconcile `waitMs` later; `write`: the label may go now.
 */
function labelGate(
  ctx: PlanContext,
  known: Known,
  wanted: boolean,
): { plan?: Plan; write: boolean; waitMs?: number } {
  if (!wanted) return { write: false };
  const shape = known.shape;
  const mark = (to: "in-use" | "pending"): Plan => ({ steps: [{ do: "markShape", to }], next: "replan" });
  switch (shape?.state) {
    case undefined:
      return { plan: { steps: [], next: "shapeMark" }, write: false };
    case "in-use":
      return { write: true };
    case "absent":
      return { plan: mark("in-use"), write: false };
    case "unused":
      return { plan: mark("pending"), write: false };
    case "pending":
      return shape.ageMs >= ctx.shapeMarkWaitMs
        ? { plan: mark("in-use"), write: false }
        : { write: false, waitMs: ctx.shapeMarkWaitMs - shape.ageMs };
    case "unreadable":
      return { write: false };
  }
}

/** A final plan that looks again when a waiting index label may be written. */
function labelLater(p: Plan, waitMs: number | undefined): Plan {
  if (waitMs === undefined || !p.verdict) return p;
  const requeueAfterMs = Math.min(p.verdict.requeueAfterMs ?? waitMs, waitMs);
  return { ...p, verdict: { ...p.verdict, requeueAfterMs } };
}

/**
 * When to look again at a resource the cloud is still creating: a quarter of the time since the create (or,
 * for an adopted one, since the object was made), within [1 s, 30 s], jittered — a few looks in the first
 * seconds, where most creates end, and about 20 over a 5-minute database instead of 75 at a fixed 4 s.
 */
function creatingRequeueMs(ctx: PlanContext, mr: ManagedResource): number {
  const since = Date.parse(
    mr.metadata.annotations?.[Annotations.createSucceeded] ?? mr.metadata.creationTimestamp ?? "",
  );
  const age = Number.isNaN(since) ? 0 : ctx.now.getTime() - since;
  return ctx.jitter(Math.min(CREATING_REQUEUE_MAX_MS, Math.max(CREATING_REQUEUE_MIN_MS, age / 4)));
}

/** The steps for a resource that exists and is not being deleted: late-init, drift, update. */
function planExisting(
  ctx: PlanContext,
  mr: ManagedResource,
  obs: ExternalObservation<Record<string, unknown>, Record<string, unknown>>,
  steps: Step[],
  atProvider: Record<string, unknown> | undefined,
): Plan {
  const policies = resolvePolicies(mr.spec.managementPolicies, mr.spec.deletionPolicy, ctx.def.lacks);
  const { def, fields, maps, now } = ctx;
  const forProvider = (mr.spec.forProvider ?? {}) as Record<string, unknown>;
  const observed = withoutDefaultTags(def, forProvider, obs.observed);
  // Late initialization: fill fields the user left empty with what the cloud chose; never overwrite, and
  // never take over a field initProvider set (it is left to others after create).
  if (policies.lateInitialize && observed) {
    const leftAlone = initProviderPaths(mr.spec.initProvider);
    // Copies the kind's field behaviours only when initProvider leaves some to others (most specs have none).
    const behaviours =
      leftAlone.length === 0
        ? fields
        : {
            ...fields,
            ...Object.fromEntries(leftAlone.map((p) => [p, { ...fields[p], lateInitialize: false }])),
          };
    const { value, filled } = lateInitialize(forProvider, observed, maps, behaviours);
    if (filled.length > 0)
      return { steps: [{ do: "lateInitialize", forProvider: value, filled }], next: "replan" };
  }
  const drift = observed ? driftedFields(forProvider, observed, maps, fields) : [];
  const upToDate = obs.resourceUpToDate ?? drift.length === 0;
  const ready = readiness(obs);
  const status = (conditions: NewCondition[], extra: { lastExternalUpdate?: LastExternalUpdate } = {}) =>
    statusStep(ctx, mr, conditions, atProvider, extra);
  const pollAfterMs = pollInterval(ctx, mr);
  const driftText = drift.join(", ") || "the external resource (reported by the provider)";

  if (upToDate || !policies.update) {
    const upToDateCond = upToDate
      ? observeMatched()
      : updateRestricted(
          `${driftText} differ(s) from the spec; the management policies do not include Update, so driftless leaves the external resource as it is`,
        );
    steps.push(...status([ready, reconcileSuccess(), upToDateCond]));
    const creatingNow = ready.reason === "Creating";
    return final(steps, {
      outcome: "in-sync",
      pollAfterMs,
      ...(creatingNow ? { requeueAfterMs: creatingRequeueMs(ctx, mr) } : {}),
    });
  }
  const settling = settleLeft(def.updateSettleMs, mr, now);
  if (settling > 0) {
    // We updated this generation moments ago and the cloud's reads lag behind: look again once it shows.
    return final(steps, { outcome: "settling", requeueAfterMs: settling + ctx.jitter(SHORT_REQUEUE_MS) });
  }
  const shown = (path: string, from: Record<string, unknown>) =>
    isSecretPath(fields, path) ? "(redacted)" : JSON.stringify(getPath(from, path));
  const values = (paths: string[]) =>
    paths.map((f) => `${f} (spec: ${shown(f, forProvider)}, cloud: ${shown(f, observed ?? {})})`).join(", ");
  const immutable = drift.filter((f) => isImmutable(def.immutable, f));
  if (immutable.length > 0) {
    const message = `cannot update immutable field(s) ${values(immutable)}: the cloud resource was left unchanged. Set the field back, or create a new resource with the new value.`;
    steps.push({
      do: "fail",
      failure: {
        reason: Reason.cannotUpdate,
        message,
        kind: "invalidSpec",
        extra: [ready, updateFailed(message)],
      },
    });
    return final(steps, { outcome: "error" });
  }
  const generation = mr.metadata.generation ?? 0;
  const changed = drift.length > 0 ? drift : [PROVIDER_REPORTED];
  const loop = updateLoop(ctx, mr, changed);
  if (loop.stop) {
    // Someone else changes these fields back right after every update: updating again only feeds the loop.
    const message = `update loop: driftless updated ${values(drift) || driftText} ${ctx.updateLoopLimit} time(s) for this generation and each time it was changed back before the cloud was seen to match. Another writer (an autoscaler, a policy, a person in the console, another controller) owns the field: driftless stopped updating it. Remove that writer or the field from spec.forProvider (spec.initProvider sets a field on create only); a new spec resumes updates.`;
    const lastExternalUpdate = {
      ...(mr.status?.lastExternalUpdate as LastExternalUpdate),
      repeats: loop.repeats,
    };
    const conditions = [ready, reconcileError(message), updateFailed(message)];
    const statusSteps = status(conditions, { lastExternalUpdate });
    steps.push(...statusSteps);
    if (getCondition(mr.status?.conditions, ConditionType.UpToDate)?.message !== message)
      steps.push(event("Warning", Reason.updateLoop, message));
    return final(steps, { outcome: "blocked", pollAfterMs });
  }
  const value = (path: string, from: Record<string, unknown>) =>
    isSecretPath(fields, path) ? "(redacted)" : getPath(from, path);
  // The spec changed since the last reconcile that succeeded (Synced at an older generation), or the cloud did.
  const synced = getCondition(mr.status?.conditions, ConditionType.Synced);
  const specChanged = synced?.observedGeneration !== undefined && synced.observedGeneration !== generation;
  steps.push({
    do: "update",
    externalName: mr.metadata.annotations?.[Annotations.externalName] ?? "",
    drift,
    ready,
    trigger: specChanged ? "spec change" : "cloud drift",
    changes: drift.map((f) => ({ field: f, before: value(f, observed ?? {}), after: value(f, forProvider) })),
  });
  steps.push(event("Normal", Reason.updated, `Updated ${drift.join(", ") || "external resource"}`));
  // Recorded on every update: settling kinds compare it, the sweep's adaptive polling reads it as the
  // resource's last change (drift found brings it back to the default interval), and the loop detector
  // counts repeats of the same fields in it.
  const lastExternalUpdate: LastExternalUpdate = {
    time: now.toISOString(),
    generation,
    fields: changed,
    repeats: loop.repeats,
  };
  steps.push(...status([ready, reconcileSuccess(), updateRequested(drift)], { lastExternalUpdate }));
  const settle = def.updateSettleMs > 0 ? def.updateSettleMs : 0;
  return final(steps, {
    outcome: "updated",
    requeueAfterMs: settle + ctx.jitter(SHORT_REQUEUE_MS),
    pollAfterMs,
  });
}

/** The field name a loop is counted under when the provider, not a field comparison, reported the difference. */
const PROVIDER_REPORTED = "(reported by the provider)";

/**
 * The update-loop detector: an update is a repeat when the last update was of this generation, changed one
 * of the same fields, and the cloud was not seen to match since (UpToDate never became ObserveMatched).
 * `repeats` counts this update among them; past the limit, driftless stops updating.
 */
function updateLoop(
  ctx: PlanContext,
  mr: ManagedResource,
  changed: readonly string[],
): { repeats: number; stop: boolean } {
  const last = mr.status?.lastExternalUpdate;
  const upToDate = getCondition(mr.status?.conditions, ConditionType.UpToDate);
  const again =
    last !== undefined &&
    last.generation === (mr.metadata.generation ?? 0) &&
    upToDate !== undefined &&
    upToDate.reason !== ConditionReason.ObserveMatched &&
    (last.fields ?? []).some((f) => changed.includes(f));
  // Once stopped it stays at limit + 1, so a stopped resource's status does not change on every look.
  const repeats = again ? Math.min((last.repeats ?? 1) + 1, ctx.updateLoopLimit + 1) : 1;
  return { repeats, stop: repeats > ctx.updateLoopLimit };
}

/**
 * A status step, only when it would change something: conditions (at this generation), atProvider, a
 * last update, or a reconcile request to answer. Steps before it write no object, so the diff holds.
 */
function statusStep(
  ctx: PlanContext,
  mr: ManagedResource,
  conditions: NewCondition[],
  atProvider?: Record<string, unknown>,
  extra: { lastExternalUpdate?: LastExternalUpdate } = {},
): Step[] {
  const fields = managedStatusFields(mr, atProvider, extra.lastExternalUpdate);
  if (!statusPatch(mr as ManagedResource & { [k: string]: unknown }, conditions, fields, ctx.now)) return [];
  const why = fields.lastHandledReconcileAt !== undefined ? "a reconcile was requested" : "conditions change";
  return [{ do: "status", conditions, ...(atProvider !== undefined ? { atProvider } : {}), ...extra, why }];
}

/**
 * A managed resource's status fields beside its conditions (lifecycle.ts writes them when they change):
 * atProvider, the last update, and a requested reconcile (crossplane.io/reconcile-requested-at) answered by
 * echoing its value.
 */
export function managedStatusFields(
  mr: ManagedResource,
  atProvider: Record<string, unknown> | undefined,
  lastExternalUpdate: LastExternalUpdate | undefined,
): StatusFields {
  const requested = reconcileRequestOf(mr.metadata.annotations);
  const handled = requested !== mr.status?.lastHandledReconcileAt ? requested : undefined;
  return { atProvider, lastExternalUpdate, lastHandledReconcileAt: handled };
}

const final = (steps: Step[], verdict: Verdict): Plan => ({ steps, verdict });
const event = (type: "Normal" | "Warning", reason: Reason, message: string): Step => ({
  do: "event",
  type,
  reason,
  message,
});
const failed = (reason: Reason, message: string): Plan =>
  final([{ do: "fail", failure: { reason, message, kind: "invalidSpec" } }], { outcome: "error" });

/** The poll interval of this resource: its crossplane.io/poll-interval (not below the least), else the default. */
export function pollInterval(
  ctx: Pick<PlanContext, "pollIntervalMs" | "minPollIntervalMs">,
  mr: ManagedResource,
) {
  const annotated = parseDuration(mr.metadata.annotations?.[Annotations.pollInterval]);
  return annotated === undefined ? ctx.pollIntervalMs : Math.max(annotated, ctx.minPollIntervalMs);
}

/** Time left before an update of this generation shows in the cloud's reads (0: compare now). */
function settleLeft(settleMs: number, mr: ManagedResource, now: Date): number {
  const last = mr.status?.lastExternalUpdate;
  if (settleMs <= 0 || !last || last.generation !== (mr.metadata.generation ?? 0)) return 0;
  return Math.max(0, Date.parse(last.time) + settleMs - now.getTime());
}

/** A drifted field is immutable when an immutable path is it, holds it, or lies inside it (dotted paths). */
function isImmutable(immutable: readonly string[], field: string): boolean {
  return immutable.some((p) => p === field || field.startsWith(`${p}.`) || p.startsWith(`${field}.`));
}

/** Whether a path is, or lies inside or around, a field whose value must never be shown. */
function isSecretPath(fields: FieldBehaviours, path: string): boolean {
  return Object.entries(fields).some(
    ([p, b]) =>
      (b.writeOnly || (b as { sensitive?: boolean }).sensitive) &&
      (p === path || path.startsWith(`${p}.`) || p.startsWith(`${path}.`)),
  );
}

/** The keys both homes name whose values differ: where the resource lives against where the spec points. */
export function homeChanges(
  recorded: Home | undefined,
  requested: Home,
): Array<{ key: string; recorded: string; requested: string }> {
  if (!recorded) return [];
  if ("" in recorded)
    return [{ key: Annotations.home, recorded: recorded[""] ?? "", requested: JSON.stringify(requested) }];
  return Object.keys(requested)
    .filter((k) => k in recorded && recorded[k] !== requested[k])
    .map((k) => ({ key: k, recorded: recorded[k] ?? "", requested: requested[k] ?? "" }));
}

/**
 * The recorded home where it binds: once a resource was imported or created, or while a create may have
 * reached the cloud. Not after a create that failed with nothing ever created: then nothing lives there.
 */
export function bindingHome(mr: ManagedResource): Home | undefined {
  const a = mr.metadata.annotations ?? {};
  const failed = a[Annotations.createFailed];
  const pending = a[Annotations.createPending];
  const nothingCreated =
    failed !== undefined &&
    a[Annotations.createSucceeded] === undefined &&
    (!pending || Date.parse(failed) >= Date.parse(pending));
  return nothingCreated ? undefined : recordedHome(mr);
}

/** The home annotation to write: the requested home with any keys the binding record lacks, or undefined. */
function homeAnnotation(recorded: Home | undefined, home: Home): Record<string, string> | undefined {
  if (Object.keys(home).length === 0) return undefined;
  if (recorded && Object.keys(home).every((k) => k in recorded)) return undefined;
  const merged = { ...home, ...recorded };
  const sorted = Object.fromEntries(
    Object.keys(merged)
      .sort()
      .map((k) => [k, merged[k]]),
  );
  return { [Annotations.home]: JSON.stringify(sorted) };
}

function homeFailure(moved: ReturnType<typeof homeChanges>, isDeleting: boolean): Failure {
  const changes = moved.map(
    (m) => `${m.key} "${m.recorded}", but its spec and ProviderConfig now reach ${m.key} "${m.requested}"`,
  );
  const message =
    `the external resource lives in ${changes.join("; and in ")}: driftless never follows a resource's home, so nothing was ${isDeleting ? "deleted" : "read, created or changed"} there. ` +
    `Set it back (spec.forProvider, providerConfigRef or the ProviderConfig's credentials) to reach it again; to move it deliberately, orphan it (deletionPolicy: Orphan, or no Delete in managementPolicies), delete this object, and import or create it in the new place.`;
  return { reason: Reason.homeChanged, message, kind: "invalidSpec" };
}

export function readiness(obs: ExternalObservation<unknown, unknown>): NewCondition {
  switch (obs.availability ?? "Available") {
    case "Available":
      return available();
    case "Creating":
      return creating();
    case "Deleting":
      return deleting();
    default:
      return unavailable(obs.message);
  }
}

/**
 * The index label (api/cloud-events.ts) as a metadata.labels patch, when the object lacks it or carries
 * one for another external name; undefined when it is right or no external name is known yet.
 */
export function indexLabelPatch(
  def: { group: string; kind: string },
  mr: ManagedResource,
  externalName: string | undefined,
): Record<string, string> | undefined {
  if (!externalName) return undefined;
  const value = externalKeyOf(def, externalName);
  return mr.metadata.labels?.[EXTERNAL_KEY_LABEL] === value ? undefined : { [EXTERNAL_KEY_LABEL]: value };
}

/** The pending time when a create started and neither success nor failure was recorded after it. */
export function createIsPending(mr: ManagedResource): string | undefined {
  const a = mr.metadata.annotations ?? {};
  const pending = a[Annotations.createPending];
  if (!pending) return undefined;
  const t = Date.parse(pending);
  const after = (v: string | undefined) => v !== undefined && Date.parse(v) >= t;
  return after(a[Annotations.createSucceeded]) || after(a[Annotations.createFailed]) ? undefined : pending;
}

function formatIssues(
  issues: Array<{ path: PropertyKey[]; message: string }>,
  at = "spec.forProvider",
): string {
  return issues.map((i) => `${at}${i.path.map((p) => `.${String(p)}`).join("")}: ${i.message}`).join("; ");
}

/**
 * The forProvider a create sends: spec.initProvider with spec.forProvider over it (objects merged key by
 * key, anything else from forProvider where it sets one), as Crossplane merges them.
 */
export function createSpec(mr: ManagedResource): Record<string, unknown> {
  const forProvider = (mr.spec.forProvider ?? {}) as Record<string, unknown>;
  const init = mr.spec.initProvider as Record<string, unknown> | undefined;
  return init ? mergeUnder(init, forProvider) : forProvider;
}

/** The resource as a create sees it (createSpec as its forProvider): where it is made, its home is read from. */
export function asCreated(mr: ManagedResource): ManagedResource {
  return mr.spec.initProvider ? { ...mr, spec: { ...mr.spec, forProvider: createSpec(mr) } } : mr;
}

/**
 * The resource as a create or an update sends it: for a create, spec.initProvider under forProvider; and
 * Crossplane's default tags (api/external-tags.ts) under the user's own tags, whose value wins on a clash.
 * Never written into the spec (GitOps tools see no diff). An update touches them only when the spec sets
 * the tags itself (else the provider leaves the tags alone, and so do they): when the tags are being written
 * anyway (they drifted), the default tags go with them; otherwise the update carries the default tags the
 * cloud has as they are, so no update ever writes tags for the default tags alone and none is ever removed.
 * Turned off (--skip-default-tags), none is added and none removed.
 */
export function asSent(
  ctx: Pick<PlanContext, "def" | "defaultTags">,
  mr: ManagedResource,
  verb: "create" | "update",
  update?: { observed: Record<string, unknown> | undefined; drift: readonly string[] },
): ManagedResource {
  const target = verb === "create" ? asCreated(mr) : mr;
  const field = ctx.def.tagging?.field;
  if (!field) return target;
  const forProvider = (target.spec.forProvider ?? {}) as Record<string, unknown>;
  const own = forProvider[field];
  if (verb === "update" && own === undefined) return target;
  const ours = ctx.defaultTags ? (defaultTagsOf(ctx.def, mr) ?? {}) : {};
  const inCloud = isObject(update?.observed?.[field])
    ? (update?.observed?.[field] as Record<string, unknown>)
    : {};
  const kept = Object.fromEntries(Object.entries(inCloud).filter(([k]) => DEFAULT_TAG_KEYS.includes(k)));
  const tagsWritten =
    verb === "create" || (update?.drift ?? []).some((p) => p === field || p.startsWith(`${field}.`));
  const defaults = tagsWritten && ctx.defaultTags ? ours : kept;
  if (Object.keys(defaults).length === 0) return target;
  const tags = { ...defaults, ...(isObject(own) ? own : {}) };
  return { ...target, spec: { ...target.spec, forProvider: { ...forProvider, [field]: tags } } };
}

/**
 * What the cloud showed without the default tags the spec does not set itself: they are driftless's, never
 * drift against the user's tags, and never late-initialized into the spec (also with default tags off, so
 * turning them off removes none).
 */
function withoutDefaultTags(
  def: ManagedKindDef,
  forProvider: Record<string, unknown>,
  observed: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  const field = def.tagging?.field;
  const tags = field ? observed?.[field] : undefined;
  if (!field || !observed || !isObject(tags)) return observed;
  const own = isObject(forProvider[field]) ? forProvider[field] : {};
  const kept = Object.fromEntries(
    Object.entries(tags).filter(([k]) => !DEFAULT_TAG_KEYS.includes(k) || k in own),
  );
  const { [field]: _all, ...rest } = observed;
  return Object.keys(kept).length > 0 || forProvider[field] !== undefined ? { ...rest, [field]: kept } : rest;
}

function mergeUnder(under: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = structuredClone(under);
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    const u = out[k];
    out[k] = isObject(u) && isObject(v) ? mergeUnder(u, v) : structuredClone(v);
  }
  return out;
}

/** Every dotted path initProvider sets (and the objects above them): late-initialization leaves those alone. */
function initProviderPaths(init: unknown, prefix = "", out: string[] = []): string[] {
  if (!isObject(init)) return out;
  for (const [k, v] of Object.entries(init)) {
    if (v === undefined) continue;
    const path = prefix ? `${prefix}.${k}` : k;
    out.push(path);
    initProviderPaths(v, path, out);
  }
  return out;
}

/** One field a create or update would send, as `driftless plan` shows it. */
export interface FieldChange {
  field: string;
  /** The cloud's value (undefined: none, or a create); "(redacted)" for a secret field. */
  current: unknown;
  desired: unknown;
}

/** The fields' current → desired values, a secret field's values never shown. */
export function fieldChanges(
  fields: FieldBehaviours,
  paths: readonly string[],
  desired: Record<string, unknown>,
  observed: Record<string, unknown> | undefined,
): FieldChange[] {
  return paths.map((field) => {
    const secret = isSecretPath(fields, field);
    const current = observed ? getPath(observed, field) : undefined;
    return {
      field,
      current: secret && current !== undefined ? "(redacted)" : current,
      desired: secret ? "(redacted)" : getPath(desired, field),
    };
  });
}

function getPath(obj: Record<string, unknown>, path: string): unknown {
  return path
    .split(".")
    .reduce<unknown>(
      (o, k) => (o && typeof o === "object" ? (o as Record<string, unknown>)[k] : undefined),
      obj,
    );
}
