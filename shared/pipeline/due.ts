// When an object is due for a drift check: the sweep's rule (sweep.ts explains it) as pure functions of
// an object's few facts and the clock. The stateless sweep asks "is it due in this window?"; the warm
// sweep's index (sweep-index.ts) asks "in which window is it due next?" and files the object there, so a
// sweep reads only the slots that are due. Both answers come from the same facts and the same tick rule,
// and a property test (test/unit/pipeline/due-slot.test.ts) holds them equal.
import { createHash } from "node:crypto";
import { EXTERNAL_KEY_LABEL } from "../api/cloud-events.ts";
import type { Condition } from "../api/meta.ts";
import {
  Annotations,
  DEFAULT_MIN_POLL_INTERVAL_MS,
  type ManagementAction,
  reconcileRequestOf,
} from "../api/meta.ts";
import type { KubeObject } from "../kube/client.ts";
import { parseDuration } from "../reconciler/compare.ts";
import { resolvePolicies } from "../reconciler/policies.ts";

/** Why a sweep enqueues an object or leaves it. */
export type SweepDecision = "paused" | "attention" | "due" | "later";

/** The sweep's schedule and poll settings: what the due rule needs besides an object's facts. */
export interface DueContext {
  scheduleMs: number;
  defaultPollMs: number;
  maxPollMs?: number | undefined;
  /** The least interval `crossplane.io/poll-interval` may set; default DEFAULT_MIN_POLL_INTERVAL_MS. */
  minPollMs?: number | undefined;
}

/** End of the window a sweep at `nowMs` covers: `nowMs` rounded down to the schedule grid. */
export function sweepWindowEnd(nowMs: number, scheduleMs: number): number {
  return Math.floor(nowMs / scheduleMs) * scheduleMs;
}

/** 48 bits of SHA-1 of a uid: the number every poll phase of the object is taken from. */
export function phaseHash(uid: string): number {
  // Uniform for any interval up to thousands of years; not a security use.
  return createHash("sha1").update(uid).digest().readUIntBE(0, 6);
}

/** Stable per-object offset in [0, intervalMs): the same uid polls at the same phase every interval. */
export function pollPhase(uid: string, intervalMs: number): number {
  return phaseHash(uid) % intervalMs;
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

/** Epoch ms of an object's last change (see "Adaptive polling" in sweep.ts); 0 when nothing says. */
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

/** Everything the due rule needs of one object; none of it depends on the clock. */
export interface DueFacts {
  /** `crossplane.io/paused: "true"` or empty management policies: never enqueued. */
  paused: boolean;
  /** Deleting, spec change unseen, reconcile requested, or not Ready and Synced: enqueued every sweep. */
  attention: boolean;
  /** `crossplane.io/poll-interval` as asked (before the minimum); undefined without the annotation. */
  askedPollMs: number | undefined;
  /** See lastChangeMs. */
  lastChangeMs: number;
  /** phaseHash of the uid (of namespace/name without one). */
  phase: number;
}

/** The facts of one object. */
export function dueFacts(o: SweepObject): DueFacts {
  const annotations = o.metadata.annotations ?? {};
  const policies = o.spec?.managementPolicies;
  const paused =
    annotations[Annotations.paused] === "true" || (Array.isArray(policies) && policies.length === 0);
  const requested = reconcileRequestOf(annotations);
  const attention =
    !paused &&
    Boolean(
      o.metadata.deletionTimestamp ||
        specChangeUnseen(o) ||
        (requested !== undefined && requested !== o.status?.lastHandledReconcileAt) ||
        ((!conditionTrue(o, "Ready") || !conditionTrue(o, "Synced")) && !importWaiting(o, policies)),
    );
  return {
    paused,
    attention,
    askedPollMs: parseDuration(annotations[Annotations.pollInterval]),
    lastChangeMs: lastChangeMs(o),
    phase: phaseHash(o.metadata.uid ?? `${o.metadata.namespace ?? ""}/${o.metadata.name}`),
  };
}

/** The poll interval an object has in the window ending at `windowEndMs`. */
export function intervalAt(f: DueFacts, windowEndMs: number, ctx: DueContext): number {
  const annotated =
    f.askedPollMs === undefined
      ? undefined
      : Math.max(f.askedPollMs, ctx.minPollMs ?? DEFAULT_MIN_POLL_INTERVAL_MS);
  return Math.max(
    1,
    Math.round(
      annotated ?? adaptiveIntervalMs(ctx.defaultPollMs, ctx.maxPollMs, windowEndMs - f.lastChangeMs),
    ),
  );
}

/** The verdict for one object's facts in the window ending at `windowEndMs`. */
export function decide(f: DueFacts, windowEndMs: number, ctx: DueContext): SweepDecision {
  if (f.paused) return "paused";
  if (f.attention) return "attention";
  const interval = intervalAt(f, windowEndMs, ctx);
  return pollDue(f.phase % interval, interval, windowEndMs, ctx.scheduleMs) ? "due" : "later";
}

/** The sweep's verdict for one object; pure, so the window math is testable without a server. */
export function sweepDecision(o: SweepObject, ctx: DueContext & { windowEndMs: number }): SweepDecision {
  return decide(dueFacts(o), ctx.windowEndMs, ctx);
}

/**
 * The first window end after `afterMs` (a window end) in which the object's poll is due: its due slot.
 * Intervals only grow while an object stays unchanged (adaptive polling), and a longer interval's ticks
 * are a subset of a shorter one's, so a window without a tick of the current interval has none of any
 * later one either: the search jumps from tick to tick and ends within a few steps. Undefined for paused
 * and attention objects (they are not filed by time).
 */
export function nextDueWindow(f: DueFacts, afterMs: number, ctx: DueContext): number | undefined {
  if (f.paused || f.attention) return undefined;
  const S = ctx.scheduleMs;
  let start = afterMs + S;
  for (;;) {
    const interval = intervalAt(f, start, ctx);
    if (interval <= S) return start;
    const phase = f.phase % interval;
    // The first tick after the window before `start`, and the window end that holds it.
    const tick = phase + (Math.floor((start - S - phase) / interval) + 1) * interval;
    const windowEnd = Math.ceil(tick / S) * S;
    if (intervalAt(f, windowEnd, ctx) === interval) return windowEnd;
    start = windowEnd;
  }
}

/** Whether a due object goes into a batch: a managed resource that looks in sync and has an external name. */
export function batchable(o: SweepObject): boolean {
  return (
    o.spec?.forProvider !== undefined &&
    conditionTrue(o, "Ready") &&
    conditionTrue(o, "Synced") &&
    Boolean(o.metadata.annotations?.[Annotations.externalName])
  );
}

/** The external-key index label's value (api/cloud-events.ts): how a warm sweep's batch selects its objects. */
export const externalKeyLabelOf = (o: SweepObject): string | undefined =>
  o.metadata.labels?.[EXTERNAL_KEY_LABEL];
