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
  supported: true,
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
      "[Observe]: observe-only import, never writes the spec (Crossplane late-inits only with LateInitialize)",
      ["Observe"],
      "Delete",
      { ...NOTHING, observe: true, observeOnly: true },
    ],
    ["[Observe] with Orphan", ["Observe"], "Orphan", { ...NOTHING, observe: true, observeOnly: true }],
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
    [
      "[Observe, LateInitialize]: import that fills the spec",
      ["Observe", "LateInitialize"],
      undefined,
      { ...NOTHING, observe: true, lateInitialize: true },
    ],
    [
      "Create without Observe is unsupported",
      ["Create"],
      "Delete",
      { ...NOTHING, create: true, supported: false },
    ],
    [
      "Create and Update without Observe is unsupported",
      ["Create", "Update"],
      undefined,
      { ...NOTHING, create: true, update: true, supported: false },
    ],
    [
      "[Observe, Create, Update, Delete, LateInitialize] in any order",
      ["LateInitialize", "Delete", "Update", "Create", "Observe"],
      undefined,
      ALL,
    ],
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

  it("never allows an action the kind's cloud publishes no call for, whatever the policies say", () => {
    const actions: ManagementAction[] = ["Observe", "Create", "Update", "Delete", "LateInitialize", "*"];
    for (let mask = 0; mask < 1 << actions.length; mask++) {
      const set = actions.filter((_, i) => mask & (1 << i));
      const noDelete = resolvePolicies(set, "Delete", { Delete: "no delete" });
      expect(noDelete.delete).toBe(false);
      expect(noDelete.create).toBe(resolvePolicies(set, "Delete").create);
      const noCreate = resolvePolicies(set, "Delete", { Create: "no create", Update: "no update" });
      expect(noCreate.create).toBe(false);
      expect(noCreate.update).toBe(false);
      expect(noCreate.delete).toBe(resolvePolicies(set, "Delete").delete);
    }
  });
});
