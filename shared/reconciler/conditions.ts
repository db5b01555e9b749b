import type { Condition } from "../api/meta.ts";
import { ConditionReason, ConditionType } from "../api/meta.ts";
import type { NewCondition } from "./contract.ts";

export const available = (): NewCondition => ({
  type: ConditionType.Ready,
  status: "True",
  reason: ConditionReason.Available,
});
export const creating = (): NewCondition => ({
  type: ConditionType.Ready,
  status: "False",
  reason: ConditionReason.Creating,
});
export const deleting = (message?: string): NewCondition => ({
  type: ConditionType.Ready,
  status: "False",
  reason: ConditionReason.Deleting,
  ...(message ? { message } : {}),
});
export const unavailable = (message?: string): NewCondition => ({
  type: ConditionType.Ready,
  status: "False",
  reason: ConditionReason.Unavailable,
  ...(message ? { message } : {}),
});
export const reconcileSuccess = (): NewCondition => ({
  type: ConditionType.Synced,
  status: "True",
  reason: ConditionReason.ReconcileSuccess,
});
export const reconcileError = (message: string): NewCondition => ({
  type: ConditionType.Synced,
  status: "False",
  reason: ConditionReason.ReconcileError,
  message,
});
export const reconcilePaused = (): NewCondition => ({
  type: ConditionType.Synced,
  status: "False",
  reason: ConditionReason.ReconcilePaused,
  message:
    "Reconciliation is paused: no cloud calls are made until crossplane.io/paused is removed or management policies are set.",
});

/** UpToDate=True: the cloud matched the spec when last observed. */
export const observeMatched = (): NewCondition => ({
  type: ConditionType.UpToDate,
  status: "True",
  reason: ConditionReason.ObserveMatched,
});
/** UpToDate=False: driftless asked the cloud to update these fields; the next observation tells. */
export const updateRequested = (fields: readonly string[]): NewCondition => ({
  type: ConditionType.UpToDate,
  status: "False",
  reason: ConditionReason.UpdateRequested,
  message: `Update requested for ${fields.join(", ") || "the external resource"}`,
});
/** UpToDate=False: the cloud differs and driftless may not update it (management policies). */
export const updateRestricted = (message: string): NewCondition => ({
  type: ConditionType.UpToDate,
  status: "False",
  reason: ConditionReason.UpdateRestricted,
  message,
});
/** UpToDate=False: an update was refused, cannot be made, or does not hold. */
export const updateFailed = (message: string): NewCondition => ({
  type: ConditionType.UpToDate,
  status: "False",
  reason: ConditionReason.UpdateFailed,
  message,
});

const same = (a: NewCondition, b: NewCondition) =>
  a.type === b.type &&
  a.status === b.status &&
  a.reason === b.reason &&
  (a.message ?? "") === (b.message ?? "") &&
  a.observedGeneration === b.observedGeneration;

/**
 * The one condition-setting function of every reconciler. Sets conditions on a list, keeping
 * lastTransitionTime when nothing but time would change, so an unchanged reconcile produces an identical
 * list (and no write). A new status or reason is a transition; a reworded message is not (the failure
 * backoff reads lastTransitionTime as "failing since"). A condition mirrored from another object may
 * carry its own lastTransitionTime: a transition then takes that time. With `generation`, each condition
 * carries it as observedGeneration (kstatus and Argo CD compare it with metadata.generation).
 */
export function setConditions(
  current: Condition[] | undefined,
  updates: ReadonlyArray<NewCondition | Condition>,
  now: Date,
  generation?: number,
): Condition[] {
  const out = [...(current ?? [])];
  for (const update of updates) {
    const { lastTransitionTime: own, ...rest } = update as NewCondition & { lastTransitionTime?: string };
    const u: NewCondition = generation === undefined ? rest : { ...rest, observedGeneration: generation };
    const i = out.findIndex((c) => c.type === u.type);
    const prev = i >= 0 ? out[i] : undefined;
    if (prev && same(prev, u)) continue;
    const next: Condition = {
      ...u,
      lastTransitionTime:
        prev && prev.status === u.status && prev.reason === u.reason
          ? prev.lastTransitionTime
          : (own ?? now.toISOString()),
    };
    if (i >= 0) out[i] = next;
    else out.push(next);
  }
  return out;
}

export const getCondition = (list: Condition[] | undefined, type: string) =>
  list?.find((c) => c.type === type);
