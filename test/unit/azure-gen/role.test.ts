// Azure RBAC for the generated Azure kinds, over every kind: the actions are derived from the resource type
// the way Azure names operations (`{Company}.{ProviderName}/{resourceType}/{action}`), one read, write and
// delete per type plus `<function>/action` for each list* function the provider calls; the custom role for
// a set of kinds is their union, nothing else. The ClusterRoles for activated kinds are gen-rbac's.
import { beforeAll, describe, expect, it } from "vitest";
import { generateAzure } from "../../../infra/gen-azure.ts";
import { azureGenRbacObjects } from "../../../infra/k8s/gen-rbac.ts";
import { loadAzureCatalog, loadAzureSpec } from "../../../shared/api/azure-gen/catalog.ts";
import { azureGenKindOf } from "../../../shared/api/azure-gen/kind.ts";
import { azureCustomRole, azureRoleActions, azureRoleScopeOf } from "../../../shared/api/azure-gen/role.ts";
import type { AzureKindSpec } from "../../../shared/api/azure-gen/spec.ts";
import { namespacedVariantOf } from "../../../shared/api/managed.ts";

let specs: AzureKindSpec[];

beforeAll(() => {
  generateAzure();
  specs = loadAzureCatalog().kinds.map((e) => loadAzureSpec(e));
});

// An operation string: a resource provider namespace, its type segments, then read|write|delete or <fn>/action.
const OPERATION =
  /^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z0-9]+)+(\/[A-Za-z][A-Za-z0-9-]*)+\/(read|write|delete|list[A-Za-z0-9]*\/action)$/;

describe("Azure role actions of the generated kinds", () => {
  it("every kind: read, write, delete on its own type and one action per list* function, all well-formed", () => {
    expect(specs.length).toBe(2050);
    let functions = 0;
    for (const s of specs) {
      const actions = azureRoleActions(s);
      for (const a of actions) expect(a, s.type).toMatch(OPERATION);
      expect(
        actions.every((a) => a.startsWith(`${s.type}/`)),
        s.type,
      ).toBe(true);
      expect(actions).toEqual(
        expect.arrayContaining([`${s.type}/read`, `${s.type}/write`, `${s.type}/delete`]),
      );
      expect(actions.length, s.type).toBe(3 + s.functions.length);
      functions += s.functions.length;
    }
    expect(functions).toBeGreaterThan(0);
  });

  it("the storage account's listKeys is Azure's documented action", () => {
    const account = specs.find((s) => s.type === "Microsoft.Storage/storageAccounts");
    expect(account && azureRoleActions(account)).toEqual([
      "Microsoft.Storage/storageAccounts/delete",
      "Microsoft.Storage/storageAccounts/listKeys/action",
      "Microsoft.Storage/storageAccounts/read",
      "Microsoft.Storage/storageAccounts/write",
    ]);
  });

  it("the custom role of a set of kinds is exactly the union of their actions, at the given scopes", () => {
    const some = specs.filter((_, i) => i % 40 === 0);
    const role = azureCustomRole(some, ["/subscriptions/s"]);
    expect(role.Actions).toEqual([...new Set(some.flatMap(azureRoleActions))].sort());
    expect(role.Actions.some((a) => a.includes("*"))).toBe(false);
    expect(role).toMatchObject({
      IsCustom: true,
      NotActions: [],
      DataActions: [],
      AssignableScopes: ["/subscriptions/s"],
    });
  });

  it("where each kind's role is assigned: its subscription, its management group, or the tenant's root", () => {
    const byType = (t: string) => specs.find((s) => s.type === t)!;
    expect(azureRoleScopeOf(byType("Microsoft.Storage/storageAccounts"))).toBe(
      "/subscriptions/<subscription-id>",
    );
    expect(azureRoleScopeOf(byType("Microsoft.Quota/groupQuotas"))).toBe(
      "/providers/Microsoft.Management/managementGroups/<management-group-id>",
    );
    expect(azureRoleScopeOf(byType("Microsoft.Management/managementGroups"))).toBe("/");
    expect(azureRoleActions(byType("Microsoft.Management/managementGroups"))).toEqual([
      "Microsoft.Management/managementGroups/delete",
      "Microsoft.Management/managementGroups/read",
      "Microsoft.Management/managementGroups/write",
    ]);
  });

  it("the ClusterRoles for activated kinds name exactly their groups and plurals, both shapes", () => {
    const some = specs.slice(0, 3).flatMap((s) => {
      const d = azureGenKindOf(s);
      return [d, namespacedVariantOf(d)];
    });
    const [forwarder, , reconciler] = azureGenRbacObjects(some) as Array<{
      rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
    }>;
    const named = (rules: Array<{ apiGroups: string[]; resources: string[] }>) =>
      rules.flatMap((r) => r.resources.map((res) => `${res}.${r.apiGroups[0]}`)).sort();
    expect(named(forwarder?.rules ?? [])).toEqual(some.map((d) => `${d.plural}.${d.group}`).sort());
    expect(new Set(named(reconciler?.rules ?? []))).toEqual(
      new Set(some.flatMap((d) => [`${d.plural}.${d.group}`, `${d.plural}/status.${d.group}`])),
    );
  });
});
