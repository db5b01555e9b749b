import { describe, expect, it } from "vitest";
import type { DeletionPolicy, ManagementAction } from "../../../shared/api/meta.ts";
import { type Policies, resolvePolicies } from "../../../shared/reconciler/policies.ts";

const ALL: Policies = {
  observe: true,
  create: true,
  update: true,
  delete: true,
  lateInitialize: true,
  observeOnly: false,
  none: false,
};
const NOTHING: Policies = {
  ...ALL,
  observe: false,
  create: false,
  update: false,
  delete: false,
  lateInitialize: false,
};

describe("resolvePolicies", () => {
  it.each<[string, ManagementAction[] | undefined, DeletionPolicy | undefined, Policies]>([
    ["defaults (unset)", undefined, undefined, ALL],
    ["* with Delete", ["*"], "Delete", ALL],
    ["* with Orphan: Orphan removes Delete", ["*"], "Orphan", { ...ALL, delete: false }],
    ["unset with Orphan", undefined, "Orphan", { ...ALL, delete: false }],
    ["* plus redundant actions", ["*", "Observe"], "Delete", ALL],
    [
      "[Observe]: observe-only import, late-initializes",
      ["Observe"],
      "Delete",
      { ...NOTHING, observe: true, lateInitialize: true, observeOnly: true },
    ],
    [
      "[Observe] with Orphan",
      ["Observe"],
      "Orphan",
      { ...NOTHING, observe: true, lateInitialize: true, observeOnly: true },
    ],
    [
      "no Delete: the resource is orphaned",
      ["Observe", "Create", "Update", "LateInitialize"],
      "Delete",
      { ...ALL, delete: false },
    ],
    [
      "no LateInitialize: the spec is never filled",
      ["Observe", "Create", "Update", "Delete"],
      "Delete",
      { ...ALL, lateInitialize: false },
    ],
    [
      "explicit Delete still loses to Orphan",
      ["Observe", "Create", "Update", "Delete", "LateInitialize"],
      "Orphan",
      { ...ALL, delete: false },
    ],
    ["Observe and Delete", ["Observe", "Delete"], "Delete", { ...NOTHING, observe: true, delete: true }],
    ["Observe and Update", ["Observe", "Update"], undefined, { ...NOTHING, observe: true, update: true }],
    ["Create without Observe", ["Create"], "Delete", { ...NOTHING, create: true }],
    ["empty = paused", [], "Delete", { ...NOTHING, none: true }],
    ["empty with Orphan = paused", [], "Orphan", { ...NOTHING, none: true }],
  ])("%s", (_name, management, deletion, expected) => {
    expect(resolvePolicies(management, deletion)).toEqual(expected);
  });

  it("never allows Delete with deletionPolicy Orphan, whatever the management policies", () => {
    const actions: ManagementAction[] = ["Observe", "Create", "Update", "Delete", "LateInitialize", "*"];
    // Every subset of the six actions.
    for (let mask = 0; mask < 1 << actions.length; mask++) {
      const set = actions.filter((_, i) => mask & (1 << i));
      expect(resolvePolicies(set, "Orphan").delete).toBe(false);
      expect(resolvePolicies(set, "Delete").delete).toBe(set.includes("Delete") || set.includes("*"));
    }
  });
});
