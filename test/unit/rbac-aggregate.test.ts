// Interop with Crossplane v2: Compositions compose driftless kinds only if Crossplane's own ClusterRole may
// manage them. Crossplane aggregates every ClusterRole labelled rbac.crossplane.io/aggregate-to-crossplane.
import { describe, expect, it } from "vitest";
import { AGGREGATE_TO_CROSSPLANE, rbacObjects } from "../../infra/k8s/gen-rbac.ts";
import { managedKinds, providerConfigKinds } from "../../shared/providers/index.ts";

interface Role {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
}

describe("the ClusterRole aggregated to Crossplane", () => {
  const role = (rbacObjects() as Role[]).find((o) => o.metadata.name === AGGREGATE_TO_CROSSPLANE);

  it("is a ClusterRole with Crossplane's aggregation label", () => {
    expect(role?.kind).toBe("ClusterRole");
    expect(role?.metadata.labels?.["rbac.crossplane.io/aggregate-to-crossplane"]).toBe("true");
  });

  it("lets Crossplane manage every driftless managed kind (both shapes) and every ProviderConfig kind", () => {
    const types = [...managedKinds.map((k) => k.definition), ...providerConfigKinds.map((k) => k.type)];
    for (const t of types) {
      const rule = role?.rules.find((r) => r.apiGroups.includes(t.group) && r.resources.includes(t.plural));
      expect(rule, `${t.plural}.${t.group}`).toBeDefined();
      expect(rule?.verbs).toEqual(["get", "list", "watch", "create", "update", "patch", "delete"]);
    }
  });

  it("grants nothing outside driftless's groups (no Secrets, no wildcards)", () => {
    for (const r of role?.rules ?? []) {
      for (const g of r.apiGroups) expect(g).toMatch(/driftless\.dev$/);
      expect(r.resources).not.toContain("*");
    }
  });
});
