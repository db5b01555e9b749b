// Activation of the generated Azure kinds as the CLI plans it and as a policy's status reports it: an
// `azure:<rp>.<kind>` pattern selects both shapes of that kind and nothing hand-written; one that selects
// nothing is reported unmatched.
import { beforeAll, describe, expect, it } from "vitest";
import { activationPlan } from "../../../functions/cli/commands/crds.ts";
import { generateAzure } from "../../../infra/gen-azure.ts";
import { loadAzureCatalog } from "../../../shared/api/azure-gen/catalog.ts";
import { policyActivates } from "../../../shared/ops/activation-policy.ts";

const SHAPES = [
  "storageaccounts.storage.azure.gen.driftless.dev",
  "storageaccounts.storage.azure.gen.m.driftless.dev",
];

beforeAll(() => {
  generateAzure();
});

describe("activation of generated Azure kinds", () => {
  it("crds --activate azure:<rp>.<kind>: both shapes, no hand-written managed kind, an unmatched pattern named", async () => {
    const plan = await activationPlan({ activate: ["azure:storage.storageaccount", "azure:nosuchrp.*"] });
    const names = plan.install.map((c) => c.metadata.name);
    expect(names.filter((n) => n.includes(".azure.gen."))).toEqual(SHAPES);
    // Hand-written managed kinds are not activated by an azure: pattern (only ProviderConfigs, claims…).
    expect(names).not.toContain("resourcegroups.resources.azure.driftless.dev");
    expect(plan.unmatched).toEqual(["azure:nosuchrp.*"]);
  });

  it("a policy's status: the CRDs its azure: and azure.gen patterns select, and those selecting none", () => {
    const catalog = loadAzureCatalog();
    const policy = {
      apiVersion: "pkg.driftless.dev/v1alpha1",
      kind: "ManagedResourceActivationPolicy",
      metadata: { name: "p" },
      spec: { activate: ["azure:storage.storageaccount", "routetables.network.azure.gen.*", "azure:x.y"] },
    };
    expect(policyActivates(policy, { azure: catalog })).toEqual({
      activated: [
        "routetables.network.azure.gen.driftless.dev",
        "routetables.network.azure.gen.m.driftless.dev",
        ...SHAPES,
      ],
      unmatched: ["azure:x.y"],
    });
    // Without the Azure catalog (not generated) nothing is activated and every pattern is unmatched.
    expect(policyActivates(policy, {}).activated).toEqual([]);
  });
});
