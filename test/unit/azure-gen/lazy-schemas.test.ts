// A generated Azure kind's zod schemas are built on the kind's first use, not when it is activated (cold
// start with 50 activated kinds), and every path still validates with the kind's one schema: the engine
// refuses a bad spec of a kind whose schema was not yet built, in both shapes, and the schema built lazily
// is the one built eagerly.
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { generateAzure } from "../../../infra/gen-azure.ts";
import { loadAzureCatalog, loadAzureSpec } from "../../../shared/api/azure-gen/catalog.ts";
import { azureGenSchemas } from "../../../shared/api/azure-gen/kind.ts";
import type { AzureKindSpec } from "../../../shared/api/azure-gen/spec.ts";
import { managedCrd } from "../../../shared/api/crd.ts";
import { withNamespacedVariants } from "../../../shared/api/external.ts";
import { localizeSecretRefs, providerConfigType } from "../../../shared/api/managed.ts";
import { azureGenProviders } from "../../../shared/providers/azure/arm-generic/kinds.ts";
import { built, expectBadSpecRefusedUnbuilt } from "../../support/lazy-kinds.ts";

const spec = (type: string): AzureKindSpec => {
  const e = loadAzureCatalog().kinds.find((k) => k.type === type);
  if (!e) throw new Error(`${type} is not generated`);
  return loadAzureSpec(e);
};

/** Both shapes of one generated kind, as the Azure registry builds them (shared/providers/azure/kinds.ts). */
const shapes = (s: AzureKindSpec) => withNamespacedVariants(azureGenProviders([s]));

beforeAll(() => {
  generateAzure();
}, 120_000);

describe("generated Azure kinds build their schemas on first use", () => {
  it("activating a kind builds no zod schema of either shape; reading one builds it once", () => {
    const [cluster, namespaced] = shapes(spec("Microsoft.Storage/storageAccounts")).map((p) => p.definition);
    if (!cluster || !namespaced) throw new Error("two shapes expected");
    for (const def of [cluster, namespaced])
      for (const key of ["forProvider", "atProvider", "spec", "status"] as const)
        expect(built(def, key), `${def.group} ${key}`).toBe(false);
    // What the registry reads at start is there without them.
    expect(cluster.references.map((r) => r.field)).toEqual(["resourceGroupName"]);
    expect(cluster.immutable).toContain("location");
    expect(namespaced.group).toBe("storage.azure.gen.m.driftless.dev");
    const first = cluster.forProvider;
    expect(built(cluster)).toBe(true);
    expect(cluster.forProvider).toBe(first);
    // The namespaced shape's schema is its own (Secret references without a namespace), still unbuilt.
    expect(built(namespaced)).toBe(false);
    expect(namespaced.forProvider).toBe(namespaced.forProvider);
  });

  it("the schemas built lazily are the ones built eagerly, in both shapes (CRD included)", () => {
    const s = spec("Microsoft.KeyVault/vaults");
    const [cluster, namespaced] = shapes(s).map((p) => p.definition);
    if (!cluster || !namespaced) throw new Error("two shapes expected");
    const eager = azureGenSchemas(s);
    expect(z.toJSONSchema(cluster.forProvider)).toEqual(z.toJSONSchema(eager.forProvider));
    expect(z.toJSONSchema(cluster.atProvider)).toEqual(z.toJSONSchema(eager.atProvider));
    const local = localizeSecretRefs(eager.forProvider);
    expect(z.toJSONSchema(namespaced.forProvider)).toEqual(z.toJSONSchema(local.schema));
    expect(namespaced.secretRefPaths).toEqual(local.paths);
    const crd = managedCrd(cluster);
    const props = crd.spec.versions[0]?.schema?.openAPIV3Schema?.properties as Record<string, unknown>;
    expect(Object.keys(props)).toEqual(expect.arrayContaining(["spec", "status"]));
  });

  it("the engine refuses a bad spec of a kind whose schema was not yet built, in both shapes", async () => {
    await expectBadSpecRefusedUnbuilt({
      providers: shapes(spec("Microsoft.Network/networkSecurityGroups")),
      providerConfig: {
        type: providerConfigType("azure"),
        spec: { tenantID: "t", subscriptionID: "00000000-0000-0000-0000-000000000000" },
      },
      // Wrong types at the top and deep inside properties: refused before any cloud call.
      bad: {
        resourceGroupName: "rg",
        location: 5,
        properties: { securityRules: [{ name: "r", properties: { priority: "high" } }] },
      },
      badPaths: [/spec\.forProvider\.location: /, /securityRules\.0\.properties\.priority: /],
      // A valid spec passes validation and goes on to connect (no credentials here: that step fails).
      good: {
        resourceGroupName: "rg",
        location: "westeurope",
        properties: { securityRules: [{ name: "r", properties: { priority: 100 } }] },
      },
    });
  });
});
