// `driftless migrate` carries Crossplane's Usages: each end naming a converted kind is renamed to the driftless
// kind it becomes (same scope rules as the resources), the rest is kept; a Usage naming nothing driftless
// serves stays with Crossplane. The written Usages pass the CRD's schema.
import { describe, expect, it } from "vitest";
import { ClusterUsageSpec, UsageSpec } from "../../../shared/api/protection/usage.ts";
import { migrate } from "../../../shared/ops/migrate.ts";

const upjetVpc = (name: string, v2 = false, namespace?: string) => ({
  apiVersion: v2 ? "ec2.aws.m.upbound.io/v1beta1" : "ec2.aws.upbound.io/v1beta1",
  kind: "VPC",
  metadata: {
    name,
    ...(namespace ? { namespace } : {}),
    annotations: { "crossplane.io/external-name": "vpc-1" },
  },
  spec: { forProvider: { region: "us-east-1", cidrBlock: "10.0.0.0/16" } },
});

describe("migrate: Usages", () => {
  it("a ClusterUsage of a v1 VPC by a v1 Subnet names the driftless kinds; reason and replayDeletion kept", () => {
    const r = migrate([
      upjetVpc("net"),
      {
        apiVersion: "protection.crossplane.io/v1beta1",
        kind: "ClusterUsage",
        metadata: {
          name: "subnet-uses-net",
          labels: { team: "a" },
          annotations: { "crossplane.io/usage-details": "Subnet/a uses VPC/net" },
        },
        spec: {
          of: { apiVersion: "ec2.aws.upbound.io/v1beta1", kind: "VPC", resourceRef: { name: "net" } },
          by: {
            apiVersion: "ec2.aws.upbound.io/v1beta1",
            kind: "Subnet",
            resourceSelector: { matchLabels: { tier: "private" } },
          },
          replayDeletion: true,
        },
      },
    ]);
    const usage = r.objects.find((o) => o.object.kind === "ClusterUsage")?.object;
    expect(usage).toEqual({
      apiVersion: "protection.crossplane.io/v1beta1",
      kind: "ClusterUsage",
      metadata: { name: "subnet-uses-net", labels: { team: "a" } },
      spec: {
        of: { apiVersion: "ec2.aws.driftless.dev/v1alpha1", kind: "VPC", resourceRef: { name: "net" } },
        by: {
          apiVersion: "ec2.aws.driftless.dev/v1alpha1",
          kind: "Subnet",
          resourceSelector: { matchLabels: { tier: "private" } },
        },
        replayDeletion: true,
      },
    });
    expect(ClusterUsageSpec.safeParse(usage?.spec).success).toBe(true);
    expect(r.refused).toEqual([]);
  });

  it("a v2 Usage names the namespaced kinds, in its namespace", () => {
    const r = migrate([
      upjetVpc("net", true, "team-a"),
      {
        apiVersion: "protection.crossplane.io/v1beta1",
        kind: "Usage",
        metadata: { name: "keep-net", namespace: "team-a" },
        spec: {
          of: { apiVersion: "ec2.aws.m.upbound.io/v1beta1", kind: "VPC", resourceRef: { name: "net" } },
          reason: "shared network",
        },
      },
    ]);
    const usage = r.objects.find((o) => o.object.kind === "Usage")?.object;
    expect(usage?.metadata).toEqual({ name: "keep-net", namespace: "team-a" });
    expect(usage?.spec).toEqual({
      of: { apiVersion: "ec2.aws.m.driftless.dev/v1alpha1", kind: "VPC", resourceRef: { name: "net" } },
      reason: "shared network",
    });
    expect(UsageSpec.safeParse(usage?.spec).success).toBe(true);
  });

  it("Crossplane v1's legacy Usage moves with --namespaced into a namespaced Usage of the namespaced kinds", () => {
    const r = migrate(
      [
        upjetVpc("net"),
        {
          apiVersion: "apiextensions.crossplane.io/v1beta1",
          kind: "Usage",
          metadata: { name: "keep-net" },
          spec: {
            of: { apiVersion: "ec2.aws.upbound.io/v1beta1", kind: "VPC", resourceRef: { name: "net" } },
            reason: "r",
          },
        },
      ],
      { namespaced: { namespace: "platform" } },
    );
    const usage = r.objects.find((o) => o.object.kind === "Usage")?.object;
    expect(usage?.metadata.namespace).toBe("platform");
    expect(usage?.spec.of).toMatchObject({ apiVersion: "ec2.aws.m.driftless.dev/v1alpha1" });
  });

  it("an end of a kind driftless does not serve is kept and reported; a Usage of nothing driftless serves is left", () => {
    const xr = { apiVersion: "example.org/v1", kind: "XNetwork", resourceRef: { name: "n" } };
    const r = migrate([
      {
        apiVersion: "protection.crossplane.io/v1beta1",
        kind: "ClusterUsage",
        metadata: { name: "mixed" },
        spec: {
          of: { apiVersion: "ec2.aws.upbound.io/v1beta1", kind: "VPC", resourceRef: { name: "net" } },
          by: xr,
        },
      },
      {
        apiVersion: "protection.crossplane.io/v1beta1",
        kind: "ClusterUsage",
        metadata: { name: "xr-only" },
        spec: { of: xr, reason: "r" },
      },
    ]);
    const mixed = r.objects.find((o) => o.object.metadata.name === "mixed")?.object;
    expect(mixed?.spec.by).toEqual(xr);
    expect(r.issues).toContainEqual(
      expect.objectContaining({
        severity: "warning",
        source: "ClusterUsage.protection.crossplane.io/mixed",
        field: "by",
      }),
    );
    expect(r.objects.some((o) => o.object.metadata.name === "xr-only")).toBe(false);
    expect(r.issues).toContainEqual(
      expect.objectContaining({ severity: "note", source: "ClusterUsage.protection.crossplane.io/xr-only" }),
    );
  });
});
