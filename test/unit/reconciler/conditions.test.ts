import { describe, expect, it } from "vitest";
import type { Condition } from "../../../shared/api/meta.ts";
import {
  available,
  creating,
  deleting,
  getCondition,
  reconcileError,
  reconcilePaused,
  reconcileSuccess,
  setConditions,
  unavailable,
} from "../../../shared/reconciler/conditions.ts";

const T0 = new Date("2025-01-01T00:00:00.000Z");
const T1 = new Date("2025-01-01T00:05:00.000Z");

describe("condition constructors", () => {
  it("use Crossplane's types and reasons", () => {
    expect(available()).toEqual({ type: "Ready", status: "True", reason: "Available" });
    expect(creating()).toEqual({ type: "Ready", status: "False", reason: "Creating" });
    expect(deleting()).toEqual({ type: "Ready", status: "False", reason: "Deleting" });
    expect(unavailable()).toEqual({ type: "Ready", status: "False", reason: "Unavailable" });
    expect(unavailable("pending")).toMatchObject({ message: "pending" });
    expect(reconcileSuccess()).toEqual({ type: "Synced", status: "True", reason: "ReconcileSuccess" });
    expect(reconcileError("boom")).toEqual({
      type: "Synced",
      status: "False",
      reason: "ReconcileError",
      message: "boom",
    });
    expect(reconcilePaused()).toMatchObject({ type: "Synced", status: "False", reason: "ReconcilePaused" });
  });
});

describe("setConditions", () => {
  it("adds new conditions stamped with now", () => {
    const out = setConditions(undefined, [available(), reconcileSuccess()], T0);
    expect(out).toEqual([
      { type: "Ready", status: "True", reason: "Available", lastTransitionTime: T0.toISOString() },
      { type: "Synced", status: "True", reason: "ReconcileSuccess", lastTransitionTime: T0.toISOString() },
    ]);
  });

  it("returns an identical list when nothing but time would change (so the engine writes nothing)", () => {
    const before = setConditions(undefined, [available(), reconcileError("boom")], T0);
    const after = setConditions(before, [available(), reconcileError("boom")], T1);
    expect(after).toEqual(before);
  });

  it("keeps lastTransitionTime when only the message changes, and stamps it when the reason changes", () => {
    // The error backoff reads lastTransitionTime as "failing since": a reworded error is the same failure,
    // but paused → error is a new one.
    const before = setConditions(undefined, [reconcileError("first")], T0);
    const after = setConditions(before, [reconcileError("second")], T1);
    expect(getCondition(after, "Synced")).toEqual({
      ...reconcileError("second"),
      lastTransitionTime: T0.toISOString(),
    });
    const paused = setConditions(after, [reconcilePaused()], T1);
    expect(getCondition(paused, "Synced")).toMatchObject({
      reason: "ReconcilePaused",
      lastTransitionTime: T1.toISOString(),
    });
  });

  it("stamps a new lastTransitionTime when the status changes", () => {
    const before = setConditions(undefined, [creating()], T0);
    const after = setConditions(before, [available()], T1);
    expect(getCondition(after, "Ready")).toEqual({ ...available(), lastTransitionTime: T1.toISOString() });
  });

  it("drops a stale message when the new condition has none", () => {
    const before = setConditions(undefined, [unavailable("quota")], T0);
    const after = setConditions(before, [unavailable()], T1);
    expect(getCondition(after, "Ready")?.message).toBeUndefined();
  });

  it("leaves other condition types and the input list alone", () => {
    const foreign: Condition = {
      type: "Custom",
      status: "True",
      reason: "X",
      lastTransitionTime: T0.toISOString(),
    };
    const current = [foreign];
    const out = setConditions(current, [available()], T1);
    expect(out).toEqual([foreign, { ...available(), lastTransitionTime: T1.toISOString() }]);
    expect(current).toEqual([foreign]);
  });

  it("replaces a condition in place, keeping list order", () => {
    const before = setConditions(undefined, [creating(), reconcileSuccess()], T0);
    const after = setConditions(before, [reconcileError("x"), available()], T1);
    expect(after.map((c) => c.type)).toEqual(["Ready", "Synced"]);
  });
});
