// The claim's conditions, set with the one setConditions of shared/reconciler/conditions.ts.
import { ClaimReason as R, ClaimConditionType as T } from "../api/claims/meta.ts";
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
