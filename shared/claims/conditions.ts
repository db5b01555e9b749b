// The claim's conditions. setConditions differs from the managed engine's on purpose: a claim's
// condition keeps its lastTransitionTime while its status stays (a new reason is no transition here).
import { ClaimReason as R, ClaimConditionType as T } from "../api/claims/meta.ts";
import type { Condition } from "../api/meta.ts";
import type { NewCondition } from "../reconciler/contract.ts";

export type { NewCondition };

export const bound = (message: string): NewCondition => ({
  type: T.Bound,
  status: "True",
  reason: R.Bound,
  message,
});
export const unbound = (message?: string): NewCondition => ({
  type: T.Bound,
  status: "False",
  reason: R.Unbound,
  ...(message ? { message } : {}),
});
export const releasing = (message: string): NewCondition => ({
  type: T.Bound,
  status: "False",
  reason: R.Releasing,
  message,
});
export const ready = (status: "True" | "False", reason: string, message?: string): NewCondition => ({
  type: T.Ready,
  status,
  reason,
  ...(message ? { message } : {}),
});
export const synced = (): NewCondition => ({ type: T.Synced, status: "True", reason: R.ReconcileSuccess });
export const notSynced = (reason: string, message: string): NewCondition => ({
  type: T.Synced,
  status: "False",
  reason,
  message,
});
export const ambiguous = (reason: string, message: string): NewCondition => ({
  type: T.ClassAmbiguous,
  status: "True",
  reason,
  message,
});

const same = (a: NewCondition, b: NewCondition) =>
  a.type === b.type &&
  a.status === b.status &&
  a.reason === b.reason &&
  (a.message ?? "") === (b.message ?? "") &&
  a.observedGeneration === b.observedGeneration;

/** Sets conditions, keeping lastTransitionTime unless the status changes: unchanged input, identical list. */
export function setConditions(
  current: Condition[] | undefined,
  updates: NewCondition[],
  now: Date,
  generation?: number,
): Condition[] {
  const out = [...(current ?? [])];
  for (const update of updates) {
    // With `generation`, each condition says which spec it describes (observedGeneration).
    const u: NewCondition = generation === undefined ? update : { ...update, observedGeneration: generation };
    const i = out.findIndex((c) => c.type === u.type);
    const prev = i >= 0 ? out[i] : undefined;
    if (prev && same(prev, u)) continue;
    const next: Condition = {
      ...u,
      lastTransitionTime: prev && prev.status === u.status ? prev.lastTransitionTime : now.toISOString(),
    };
    if (i >= 0) out[i] = next;
    else out.push(next);
  }
  return out;
}
