// The Azure types that were not generated before: bodies that are a discriminated union (one optional
// member per variant, at most one set, the discriminator filled on the wire and read back into the same
// variant), types written above the subscriptions (tenant and management group: their own ids, their home
// the ProviderConfig's tenant), and the two types whose segments give no unique CRD name.
import { beforeAll, describe, expect, it } from "vitest";
import { ArmScope, loadArmData } from "../../../infra/azure/types-data.ts";
import { generateAzure } from "../../../infra/gen-azure.ts";
import { wireSpecOf } from "../../../infra/local/fakes/arm-generic.ts";
import { loadAzureCatalog, loadAzureSpec } from "../../../shared/api/azure-gen/catalog.ts";
import { azureGenKindOf } from "../../../shared/api/azure-gen/kind.ts";
import { type AzureKindSpec, variantFieldOf } from "../../../shared/api/azure-gen/spec.ts";
import { type JSONSchemaProps, managedCrd } from "../../../shared/api/crd.ts";
import type { ConnectContext } from "../../../shared/api/external.ts";
import { InvalidSpecError } from "../../../shared/api/external.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import type { AzureProviderConfigSpec } from "../../../shared/api/provider-config.ts";
import {
  atProviderOf,
  desiredBody,
  missingRequired,
  observedOf,
} from "../../../shared/providers/azure/arm-generic/model.ts";
import { armGenericProvider, resourceIdOf } from "../../../shared/providers/azure/arm-generic/provider.ts";
import { azureGenHomeOf } from "../../../shared/providers/azure/home.ts";
import { lateInitialize } from "../../../shared/reconciler/compare.ts";
import { homeChanges } from "../../../shared/reconciler/plan.ts";

type Json = Record<string, unknown>;
const SUB = "00000000-0000-0000-0000-0000000000aa";
const specOf = (type: string) => loadAzureSpec(loadAzureCatalog().kinds.find((k) => k.type === type)!);
let scripts: AzureKindSpec;
let siteConfig: AzureKindSpec;
let managementGroups: AzureKindSpec;
let groupQuotas: AzureKindSpec;

beforeAll(() => {
  generateAzure();
  scripts = specOf("Microsoft.Resources/deploymentScripts");
  siteConfig = specOf("Microsoft.Web/sites/config");
  managementGroups = specOf("Microsoft.Management/managementGroups");
  groupQuotas = specOf("Microsoft.Quota/groupQuotas");
}, 120_000);

const forProviderSchema = (spec: AzureKindSpec) => {
  const crd = managedCrd(azureGenKindOf(spec));
  const root = crd.spec.versions[0]?.schema?.openAPIV3Schema as JSONSchemaProps;
  const spec_ = (root.properties as Record<string, JSONSchemaProps>).spec as JSONSchemaProps;
  return (spec_.properties as Record<string, JSONSchemaProps>).forProvider as JSONSchemaProps;
};

/** The properties of the schema node at a path of member names ("[]": an array's items). */
const propsAt = (n: JSONSchemaProps, ...keys: string[]) =>
  (keys.reduce<JSONSchemaProps | undefined>(
    (x, k) =>
      k === "[]"
        ? (x?.items as JSONSchemaProps | undefined)
        : (x?.properties as Record<string, JSONSchemaProps> | undefined)?.[k],
    n,
  )?.properties ?? {}) as Record<string, JSONSchemaProps>;

describe("every resource type in the data has a kind", () => {
  it("none skipped: union bodies, tenant and management-group types, and the two name clashes are kinds", () => {
    const data = loadArmData();
    const catalog = loadAzureCatalog();
    expect(catalog.skipped).toEqual({});
    expect(catalog.kinds.length).toBe(data.resources.length);
    const byType = new Map(catalog.kinds.map((k) => [k.type.toLowerCase(), k]));
    const unions = data.resources.filter((r) => data.files[r.file]?.types[r.body]?.k === "d");
    const above = data.resources.filter(
      (r) => !(r.ws & (ArmScope.Extension | ArmScope.ResourceGroup | ArmScope.Subscription)),
    );
    expect(unions.length).toBe(33);
    expect(above.length).toBe(53);
    for (const r of unions) expect(loadAzureSpec(byType.get(r.type.toLowerCase())!).union).toBeDefined();
    for (const r of above)
      expect(loadAzureSpec(byType.get(r.type.toLowerCase())!).scope).toBe(
        r.ws & ArmScope.ManagementGroup ? "managementGroup" : "tenant",
      );
  });

  it("the two types whose segments clash get their parents' initials, deterministically", () => {
    const catalog = loadAzureCatalog();
    const kindOf = (t: string) => catalog.kinds.find((k) => k.type === t)?.kind;
    const ns = "Microsoft.SecurityAndCompliance";
    expect(kindOf(`${ns}/privateLinkServicesForM365SecurityCenter/privateEndpointConnections`)).toBe(
      "PLSFM365SCPrivateEndpointConnection",
    );
    expect(kindOf(`${ns}/privateLinkServicesForO365ManagementActivityAPI/privateEndpointConnections`)).toBe(
      "PLSFO365MAAPIPrivateEndpointConnection",
    );
    // The first of the clashing types keeps the short name.
    expect(kindOf(`${ns}/privateLinkServicesForM365ComplianceCenter/privateEndpointConnections`)).toBe(
      "PrivateEndpointConnection",
    );
  });
});

describe("discriminated bodies", () => {
  it("variant members named from the discriminator value", () => {
    expect(variantFieldOf("AzureCLI")).toBe("azureCLI");
    expect(variantFieldOf("IOT")).toBe("iot");
    expect(variantFieldOf("Microsoft.EventHub")).toBe("microsoftEventHub");
    expect(scripts.union).toEqual({
      disc: "kind",
      on: "body",
      variants: { AzureCLI: "azureCLI", AzurePowerShell: "azurePowerShell" },
    });
    expect(siteConfig.union?.on).toBe("name");
    expect(siteConfig.union?.variants.appsettings).toBe("appsettings");
  });

  it("CRD: one optional object per variant, a CEL rule for at most one; the schema refuses two", () => {
    const fp = forProviderSchema(scripts);
    const props = fp.properties as Record<string, JSONSchemaProps>;
    expect(props.azureCLI?.type).toBe("object");
    expect(props.azurePowerShell?.type).toBe("object");
    expect(props.kind).toBeUndefined();
    expect(fp["x-kubernetes-validations"]).toEqual([
      {
        rule: "[has(self.azureCLI), has(self.azurePowerShell)].filter(x, x).size() <= 1",
        message: expect.stringContaining("at most one of azureCLI, azurePowerShell"),
      },
    ]);
    const def = azureGenKindOf(scripts);
    expect(def.forProvider.safeParse({ azureCLI: {}, azurePowerShell: {} }).success).toBe(false);
    expect(def.forProvider.safeParse({ azureCLI: {} }).success).toBe(true);
  });

  it("secrets inside a variant are Secret keys in the spec, resolved on the wire, never read back", async () => {
    expect(scripts.secrets).toContain("azureCLI.properties.environmentVariables.secureValue");
    const fp = forProviderSchema(scripts);
    const env = propsAt(fp, "azureCLI", "properties", "environmentVariables", "[]");
    expect(env.secureValue).toBeUndefined();
    expect(env.secureValueSecretRef?.type).toBe("object");

    const want = {
      resourceGroupName: "rg",
      location: "westeurope",
      azureCLI: {
        properties: {
          azCliVersion: "2.52.0",
          retentionInterval: "P1D",
          scriptContent: "echo hi",
          environmentVariables: [
            { name: "A", secureValueSecretRef: { name: "s", namespace: "n", key: "k" } },
          ],
        },
      },
    };
    const body = await desiredBody(scripts, want, async ({ ref }) => `secret-${ref.key}`);
    expect(body).toEqual({
      kind: "AzureCLI",
      location: "westeurope",
      properties: {
        azCliVersion: "2.52.0",
        retentionInterval: "P1D",
        scriptContent: "echo hi",
        environmentVariables: [{ name: "A", secureValue: "secret-k" }],
      },
    });
    // ARM's answer (the secret not shown, kind in its own case, read-only members): the same variant back.
    const answer = {
      id: `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Resources/deploymentScripts/s`,
      name: "s",
      kind: "azurecli",
      location: "West Europe",
      properties: {
        ...(body.properties as Json),
        environmentVariables: [{ name: "A" }],
        provisioningState: "Succeeded",
        outputs: { a: 1 },
      },
    };
    expect(observedOf(scripts, answer, want, { resourceGroupName: "rg" })).toEqual(want);
    expect(atProviderOf(scripts, answer)).toEqual({
      id: answer.id,
      azureCLI: { properties: { provisioningState: "Succeeded", outputs: { a: 1 } } },
    });
    // The other variant in the cloud: the spec's variant is absent there (drift: the PUT puts it back), and
    // the cloud's is not shown, so late-init never fills a second variant beside the spec's.
    const other = observedOf(scripts, { ...answer, kind: "AzurePowerShell" }, want, {});
    expect(other.azureCLI).toBeUndefined();
    expect(other.azurePowerShell).toBeUndefined();
    expect(lateInitialize(want, other).filled).toEqual([]);
    // With no variant in the spec (Observe, import), the cloud's variant is there to late-initialize.
    const imported = observedOf(scripts, answer, { resourceGroupName: "rg" }, {});
    expect(lateInitialize({ resourceGroupName: "rg" }, imported).filled).toContain("azureCLI");
  });

  it("create needs one variant and that variant's required members", () => {
    expect(missingRequired(scripts, { resourceGroupName: "rg", location: "x" })).toEqual([
      "one of azureCLI / azurePowerShell",
    ]);
    expect(missingRequired(scripts, { location: "x", azureCLI: { properties: {} } })).toEqual([]);
  });

  it("named by the variant: Microsoft.Web/sites/config's name is the variant set", async () => {
    const fp = { resourceGroupName: "rg", siteName: "app", appsettings: { properties: { A: "1" } } };
    expect(resourceIdOf(siteConfig, SUB, fp, "my-object")).toBe(
      `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Web/sites/app/config/appsettings`,
    );
    expect(await desiredBody(siteConfig, fp, async () => "")).toEqual({ properties: { A: "1" } });
    expect(observedOf(siteConfig, { name: "appsettings", properties: { A: "1" } }, fp, {})).toMatchObject({
      appsettings: { properties: { A: "1" } },
    });
    expect(() => resourceIdOf(siteConfig, SUB, { resourceGroupName: "rg", siteName: "app" }, "x")).toThrow(
      InvalidSpecError,
    );
  });

  it("the fake checks a body against its variant's published members", () => {
    const wire = wireSpecOf(scripts, "AzureCLI");
    expect(wire.body.kind?.enum).toEqual(["AzureCLI"]);
    expect(wire.body.properties).toBeDefined();
    expect(wire.secrets).toContain("properties.environmentVariables.secureValue");
    expect(() => wireSpecOf(scripts, "Bash")).toThrow(/not one of AzureCLI, AzurePowerShell/);
    expect(() => wireSpecOf(scripts, undefined)).toThrow(/missing the required property 'kind'/);
    expect(() => wireSpecOf(siteConfig, "nonsense")).toThrow(/resource name 'nonsense' is not valid/);
  });
});

describe("tenant and management-group types", () => {
  const ctx = (tenantID: string) =>
    ({
      providerConfig: {
        spec: { tenantID, subscriptionID: SUB, clientID: "c", credentials: { source: "Secret" } },
      },
    }) as unknown as ConnectContext<AzureProviderConfigSpec>;
  const mr = (forProvider: Json) =>
    ({ spec: { forProvider } }) as unknown as ManagedResource<Record<string, unknown>, unknown>;

  it("ids at the tenant and in a management group; no subscription in either", () => {
    expect(managementGroups.scope).toBe("tenant");
    expect(resourceIdOf(managementGroups, SUB, {}, "mg1")).toBe(
      "/providers/Microsoft.Management/managementGroups/mg1",
    );
    expect(groupQuotas.scope).toBe("managementGroup");
    expect(resourceIdOf(groupQuotas, SUB, { managementGroupId: "mg1" }, "q1")).toBe(
      "/providers/Microsoft.Management/managementGroups/mg1/providers/Microsoft.Quota/groupQuotas/q1",
    );
    expect(() => resourceIdOf(groupQuotas, SUB, {}, "q1")).toThrow(/managementGroupId/);
  });

  it("managementGroupId is immutable, filled directly or from a generated ManagementGroup", () => {
    const def = azureGenKindOf(groupQuotas);
    expect(def.immutable).toContain("managementGroupId");
    const ref = def.references.find((r) => r.field === "managementGroupId");
    expect(ref?.to).toMatchObject({ kind: "ManagementGroup", group: "management.azure.gen.driftless.dev" });
  });

  it("home: the ProviderConfig's tenant (and management group), never the subscription", async () => {
    const home = await azureGenHomeOf(groupQuotas)(ctx("Tenant-A"), mr({ managementGroupId: "MG1" }));
    expect(home).toEqual({ tenant: "tenant-a", managementGroup: "mg1" });
    // A ProviderConfig of another tenant is another home: the engine refuses it (never follows).
    const other = await azureGenHomeOf(managementGroups)(ctx("tenant-b"), mr({}));
    expect(other).toEqual({ tenant: "tenant-b" });
    // A name-discriminated union's variant is its name: another variant is another home.
    const a = await azureGenHomeOf(siteConfig)(ctx("t"), mr({ resourceGroupName: "rg", appsettings: {} }));
    const b = await azureGenHomeOf(siteConfig)(ctx("t"), mr({ resourceGroupName: "rg", web: {} }));
    expect(a).toMatchObject({ subscription: SUB, resourceGroup: "rg", name: "appsettings" });
    expect(b).toMatchObject({ name: "web" });
  });

  it("home: a child type's parents (its id is built under them, so another parent would be another resource)", async () => {
    const secrets = specOf("Microsoft.KeyVault/vaults/secrets");
    const fp = { resourceGroupName: "rg", vaultName: "Vault-A", properties: {} };
    // The kind names its parents (homeParents); the home function reads them.
    const parents = armGenericProvider(secrets).homeParents ?? {};
    const home = await azureGenHomeOf(secrets)(ctx("t"), mr(fp), parents);
    // ARM names are case-insensitive: one home for either spelling.
    expect(home).toEqual({ subscription: SUB, resourceGroup: "rg", vaultName: "vault-a" });
    const moved = await azureGenHomeOf(secrets)(ctx("t"), mr({ ...fp, vaultName: "vault-b" }), parents);
    expect(homeChanges(home, moved)).toEqual([
      { key: "vaultName", recorded: "vault-a", requested: "vault-b" },
    ]);
  });
});
