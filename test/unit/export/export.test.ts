import { describe, expect, it } from "vitest";
import { Bucket, Queue } from "../../../shared/api/claims/claims.ts";
import { APIServiceExportTemplateSpec, exportTemplateCrd } from "../../../shared/api/export/template.ts";
import { agentRbac, claimKindOf, offers } from "../../../shared/export/bind.ts";
import {
  controlPlaneNamespace,
  downstreamName,
  InvalidNameError,
  upstreamName,
} from "../../../shared/export/naming.ts";

describe("export naming", () => {
  it("gives each app cluster its own namespace and each app namespace its own names in it", () => {
    expect(controlPlaneNamespace("alpha")).toBe("app-alpha");
    expect(() => controlPlaneNamespace("Alpha")).toThrow(InvalidNameError);
    expect(() => controlPlaneNamespace("a".repeat(60))).toThrow(InvalidNameError);
    // A namespace has no dot, so `<namespace>.<name>` is unambiguous across app namespaces.
    expect(upstreamName("shop", "orders")).toBe("shop.orders");
    expect(upstreamName("shop-eu", "orders")).not.toBe(upstreamName("shop", "eu-orders"));
    expect(() => upstreamName("n".repeat(63), "x".repeat(200))).toThrow(InvalidNameError);
    expect(downstreamName("shop", "shop.orders-queue")).toBe("orders-queue");
    expect(downstreamName("shop", "other.orders-queue")).toBe("other.orders-queue");
  });
});

describe("APIServiceExportTemplate", () => {
  it("defaults permission claims to Secrets/ConfigMaps owned by the claim", () => {
    const spec = APIServiceExportTemplateSpec.parse({
      apis: [{ group: "claims.driftless.dev", resource: "queues", version: "v1alpha1" }],
      permissionClaims: [{ resource: "secrets" }],
    });
    expect(spec.permissionClaims).toEqual([
      { resource: "secrets", version: "v1", selector: { owner: "Claim" } },
    ]);
    expect(() =>
      APIServiceExportTemplateSpec.parse({ apis: [], permissionClaims: [{ resource: "pods" }] }),
    ).toThrow();
  });

  it("is a cluster-scoped CRD with a status subresource", () => {
    const crd = exportTemplateCrd();
    expect(crd.metadata.name).toBe("apiserviceexporttemplates.export.driftless.dev");
    expect(crd.spec.scope).toBe("Cluster");
    expect(crd.spec.versions[0]?.subresources).toEqual({ status: {} });
  });

  it("offers claim kinds by group, resource and version; a deleted template offers nothing", () => {
    const t = {
      apiVersion: "export.driftless.dev/v1alpha1",
      kind: "APIServiceExportTemplate",
      metadata: { name: "t" },
      spec: { apis: [{ group: "claims.driftless.dev", resource: "queues", version: "v1alpha1" }] },
    };
    expect(claimKindOf(t.spec.apis[0] as never)).toBe(Queue);
    expect(claimKindOf({ group: "claims.driftless.dev", resource: "queues", version: "v1" })).toBeUndefined();
    expect(offers(t, Queue)).toBe(true);
    expect(offers(t, Bucket)).toBe(false);
    expect(offers({ ...t, metadata: { name: "t", deletionTimestamp: "2026-01-01T00:00:00Z" } }, Queue)).toBe(
      false,
    );
  });
});

describe("agent RBAC", () => {
  it("is a Role in the app cluster's namespace, plus reading its own templates by name", () => {
    const objs = agentRbac("alpha", ["t1"]);
    const role = objs.find((o) => o.kind === "Role") as { metadata: { namespace: string }; rules: unknown[] };
    expect(role.metadata.namespace).toBe("app-alpha");
    expect(JSON.stringify(role.rules)).not.toContain("classes.driftless.dev");
    const secrets = (role.rules as Array<{ resources: string[]; verbs: string[] }>).find((r) =>
      r.resources.includes("secrets"),
    );
    expect(secrets?.verbs).toEqual(["get", "list", "watch"]);
    const cr = objs.find((o) => o.kind === "ClusterRole") as { rules: Array<Record<string, unknown>> };
    expect(cr.rules).toEqual([
      {
        apiGroups: ["export.driftless.dev"],
        resources: ["apiserviceexporttemplates"],
        resourceNames: ["t1"],
        verbs: ["get"],
      },
    ]);
  });
});
