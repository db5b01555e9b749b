// Crossplane v2's ManagedResourceDefinitions as activation input (issue 35, item 6): where Crossplane is
// installed, an MRD whose name is a driftless CRD and whose spec.state is Active activates that kind, as a
// ManagedResourceActivationPolicy naming it would; an Inactive MRD, or an Active one of another provider's
// kind, activates nothing. Against the real API server, with the MRD CRD in Crossplane's group and shape.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activationPlan } from "../../../functions/cli/commands/crds.ts";
import { CrossplaneManagedResourceDefinition } from "../../../shared/api/pkg/activation-policy.ts";
import { applyCrds } from "../../../shared/kube/crds.ts";
import { readActivationPolicies } from "../../../shared/ops/activation-policy.ts";
import { kubeConfig, newKube, uniqueName } from "../../support/env.ts";

const kube = newKube();
const MRD = CrossplaneManagedResourceDefinition;
const ACTIVE = "queues.sqs.awscc.driftless.dev";
const INACTIVE = "tables.dynamodb.awscc.driftless.dev";
const OTHER = `${uniqueName("buckets")}.s3.aws.upbound.io`;

/** Crossplane's MRD CRD as far as driftless reads it: cluster-scoped, spec.state, the rest kept as given. */
const mrdCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${MRD.plural}.${MRD.group}` },
  spec: {
    group: MRD.group,
    scope: "Cluster",
    names: { kind: MRD.kind, plural: MRD.plural, singular: "managedresourcedefinition", shortNames: ["mrd"] },
    versions: [
      {
        name: MRD.version,
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                "x-kubernetes-preserve-unknown-fields": true,
                properties: { state: { type: "string", enum: ["Active", "Inactive"] } },
              },
            },
          },
        },
      },
    ],
  },
};

const mrd = (name: string, state: "Active" | "Inactive") => ({
  apiVersion: `${MRD.group}/${MRD.version}`,
  kind: MRD.kind,
  metadata: { name },
  spec: { state, group: name.split(".").slice(1).join(".") },
});

beforeAll(async () => {
  await applyCrds(kubeConfig(), [mrdCrd]);
  for (const [name, state] of [
    [ACTIVE, "Active"],
    [INACTIVE, "Inactive"],
    [OTHER, "Active"],
  ] as const) {
    await kube.delete(MRD, name).catch(() => undefined);
    await kube.create(MRD, mrd(name, state));
  }
}, 60_000);

afterAll(async () => {
  for (const name of [ACTIVE, INACTIVE, OTHER]) await kube.delete(MRD, name).catch(() => undefined);
});

describe("Crossplane's ManagedResourceDefinitions", { timeout: 60_000 }, () => {
  it("an Active MRD of a driftless kind activates it; Inactive ones and other providers' kinds do not", async () => {
    const policies = await readActivationPolicies(kube);
    expect(policies.definitions).toContain(ACTIVE);
    expect(policies.definitions).not.toContain(INACTIVE);
    expect(policies.definitions).not.toContain(OTHER);
    expect(policies.patterns).toContain(ACTIVE);

    const plan = await activationPlan({ activate: [], policyPatterns: policies.patterns });
    const install = plan.install.map((c) => c.metadata.name);
    expect(install).toContain(ACTIVE);
    expect(install).not.toContain(INACTIVE);
  });
});
