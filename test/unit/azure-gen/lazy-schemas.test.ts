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
import {
  localizeSecretRefs,
  type ManagedKindDef,
  type ManagedResource,
  providerConfigType,
} from "../../../shared/api/managed.ts";
import { azureGenProviders } from "../../../shared/providers/azure/arm-generic/kinds.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import { MemoryApiServer } from "../../support/memory-apiserver.ts";
import { Reconciler } from "../../support/routed.ts";

const spec = (type: string): AzureKindSpec => {
  const e = loadAzureCatalog().kinds.find((k) => k.type === type);
  if (!e) throw new Error(`${type} is not generated`);
  return loadAzureSpec(e);
};

/** Whether the kind's forProvider schema exists yet (a lazy one is a getter until first read). */
const built = (def: ManagedKindDef, key: "forProvider" | "atProvider" | "spec" | "status" = "forProvider") =>
  !Object.getOwnPropertyDescriptor(def, key)?.get;

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
    const api = new MemoryApiServer();
    const providers = shapes(spec("Microsoft.Network/networkSecurityGroups"));
    const defs = providers.map((p) => p.definition);
    for (const def of defs) expect(built(def)).toBe(false);
    api.seed(providerConfigType("azure"), {
      apiVersion: `${providerConfigType("azure").group}/v1alpha1`,
      kind: "ProviderConfig",
      metadata: { name: "default" },
      spec: { tenantID: "t", subscriptionID: "00000000-0000-0000-0000-000000000000" },
    });
    const reconciler = new Reconciler(api.kube(), new KindRegistry(providers), {
      rateLimit: false,
      retryBaseMs: 0,
      random: () => 0.5,
    });
    for (const def of defs) {
      const namespace = def.scope === "Namespaced" ? "team-a" : undefined;
      const key = (name: string) => ({
        apiVersion: def.apiVersion,
        kind: def.kind,
        name,
        ...(namespace ? { namespace } : {}),
      });
      const seed = (name: string, forProvider: Record<string, unknown>) =>
        api.seed(def, {
          apiVersion: def.apiVersion,
          kind: def.kind,
          metadata: { name, ...(namespace ? { namespace } : {}) },
          spec: { forProvider },
        });
      const synced = (name: string) =>
        api.get<ManagedResource>(def, name, namespace)?.status?.conditions?.find((c) => c.type === "Synced");
      // Wrong types at the top and deep inside properties: refused before any cloud call.
      seed("bad", {
        resourceGroupName: "rg",
        location: 5,
        properties: { securityRules: [{ name: "r", properties: { priority: "high" } }] },
      });
      await reconciler.reconcile(key("bad"));
      expect(synced("bad"), def.group).toMatchObject({ status: "False", reason: "ReconcileError" });
      expect(synced("bad")?.message).toMatch(/^invalid spec: /);
      expect(synced("bad")?.message).toMatch(/spec\.forProvider\.location: /);
      expect(synced("bad")?.message).toMatch(/securityRules\.0\.properties\.priority: /);
      expect(built(def)).toBe(true);
      // A valid spec passes validation and goes on to connect (no credentials here: that step fails).
      seed("good", {
        resourceGroupName: "rg",
        location: "westeurope",
        properties: { securityRules: [{ name: "r", properties: { priority: 100 } }] },
      });
      await reconciler.reconcile(key("good"));
      await reconciler.reconcile(key("good"));
      expect(synced("good")?.message, def.group).toMatch(/^cannot connect to the provider: /);
    }
  });
});
