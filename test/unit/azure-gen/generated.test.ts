// Every generated Azure kind (≈1,900 ARM resource types at their newest stable api-version) makes a valid
// structural CRD in both shapes, offline; no secret value has a place in spec or status of any of them; the
// wire mapping never reports ARM's normalisations (location spelling, id case) as drift.
import { beforeAll, describe, expect, it } from "vitest";
import { generateAzure, kindNameOf } from "../../../infra/gen-azure.ts";
import {
  activatedAzureEntries,
  loadAzureCatalog,
  loadAzureSpec,
} from "../../../shared/api/azure-gen/catalog.ts";
import { azureGenKindOf } from "../../../shared/api/azure-gen/kind.ts";
import { type JSONSchemaProps, managedCrd } from "../../../shared/api/crd.ts";
import { namespacedVariantOf } from "../../../shared/api/managed.ts";
import { desiredBody, observedOf } from "../../../shared/providers/azure/arm-generic/model.ts";
import { resourceIdOf } from "../../../shared/providers/azure/arm-generic/provider.ts";

/** The structural-schema rules a generator can break (the API server refuses the CRD otherwise). */
function structuralProblems(node: JSONSchemaProps, path: string, out: string[]) {
  for (const k of ["anyOf", "oneOf", "allOf", "not", "$ref"]) if (k in node) out.push(`${path}: ${k}`);
  if (!node.type && node["x-kubernetes-preserve-unknown-fields"] !== true) out.push(`${path}: no type`);
  if (node.type === "array" && !node.items) out.push(`${path}: array without items`);
  if (node.properties && node.additionalProperties) out.push(`${path}: properties and additionalProperties`);
  for (const [k, v] of Object.entries((node.properties ?? {}) as Record<string, JSONSchemaProps>))
    structuralProblems(v, `${path}.${k}`, out);
  if (node.items) structuralProblems(node.items as JSONSchemaProps, `${path}[]`, out);
  if (typeof node.additionalProperties === "object")
    structuralProblems(node.additionalProperties as JSONSchemaProps, `${path}{}`, out);
}

/** The schema node at a dotted path (through arrays and maps), or undefined. */
function schemaAt(root: JSONSchemaProps, path: string): JSONSchemaProps | undefined {
  let n: JSONSchemaProps | undefined = root;
  for (const k of path.split(".")) {
    while (n && (n.items || typeof n.additionalProperties === "object"))
      n = (n.items ?? n.additionalProperties) as JSONSchemaProps;
    n = (n?.properties as Record<string, JSONSchemaProps> | undefined)?.[k];
  }
  while (n && (n.items || typeof n.additionalProperties === "object"))
    n = (n.items ?? n.additionalProperties) as JSONSchemaProps;
  return n;
}

beforeAll(() => {
  generateAzure();
}, 120_000);

describe("generated Azure kinds (generic ARM provider)", () => {
  it.skipIf(process.env.AZURE_GEN_FAST === "1")(
    "every generated CRD, both shapes, is structural, uniquely named and a DNS-label plural",
    { timeout: 600_000 },
    () => {
      const catalog = loadAzureCatalog();
      expect(catalog.kinds.length).toBe(2050);
      const problems: string[] = [];
      const names = new Set<string>();
      for (const e of catalog.kinds) {
        const def = azureGenKindOf(loadAzureSpec(e));
        for (const d of [def, namespacedVariantOf(def)]) {
          const crd = managedCrd(d);
          if (names.has(crd.metadata.name)) problems.push(`${crd.metadata.name}: twice`);
          names.add(crd.metadata.name);
          if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(d.plural))
            problems.push(`${d.plural}: not a DNS label`);
          const schema = crd.spec.versions[0]?.schema?.openAPIV3Schema as JSONSchemaProps;
          structuralProblems(schema, crd.metadata.name, problems);
        }
      }
      expect(problems.slice(0, 20)).toEqual([]);
      // The hand-written Azure groups (<rp>.azure.driftless.dev) are never a generated kind's.
      expect([...names].filter((n) => !/\.azure\.gen(\.m)?\.driftless\.dev$/.test(n))).toEqual([]);
    },
  );

  it("secrets walk: every secret of every kind is a Secret key in spec and absent from status", {
    timeout: 600_000,
  }, () => {
    let secrets = 0;
    let inVariants = 0;
    const reachable: string[] = [];
    for (const e of loadAzureCatalog().kinds) {
      const spec = loadAzureSpec(e);
      const crd = managedCrd(azureGenKindOf(spec));
      const schema = crd.spec.versions[0]?.schema?.openAPIV3Schema as JSONSchemaProps;
      const fp = schemaAt(schema, "spec.forProvider") as JSONSchemaProps;
      const ap = schemaAt(schema, "status.atProvider") as JSONSchemaProps;
      const variants = new Set(Object.values(spec.union?.variants ?? {}));
      for (const s of spec.secrets) {
        secrets++;
        if (variants.has(s.split(".")[0] ?? "")) inVariants++;
        const parts = s.split(".");
        const last = parts.pop() ?? "";
        const parent = parts.length ? schemaAt(fp, parts.join(".")) : fp;
        // Below a free-form value nothing is structural: a secret there would be stored as given.
        if (!parent || parent["x-kubernetes-preserve-unknown-fields"])
          reachable.push(`${e.type} ${s}: free-form`);
        else if ((parent.properties as Record<string, unknown> | undefined)?.[last])
          reachable.push(`${e.type} ${s}: in spec`);
        else if (
          !(parent.properties as Record<string, unknown> | undefined)?.[`${last}SecretRef`] &&
          !(parent.properties as Record<string, unknown> | undefined)?.[`${last}SecretRefs`]
        )
          reachable.push(`${e.type} ${s}: no SecretRef`);
      }
      for (const s of spec.outSecrets) if (ap && schemaAt(ap, s)) reachable.push(`${e.type} ${s}: in status`);
    }
    expect(secrets).toBeGreaterThan(100);
    // Secrets below a discriminated body's variant members (deployment scripts, Web config…) are walked too.
    expect(inVariants).toBeGreaterThan(10);
    expect(reachable.slice(0, 20)).toEqual([]);
  });

  it("names: kinds from the type's segments, groups apart from hand-written ones, activation by name only", () => {
    expect(kindNameOf("Microsoft.Network/virtualNetworks/subnets")).toBe("VirtualNetworkSubnet");
    expect(kindNameOf("Microsoft.Cache/redis")).toBe("Redis");
    const catalog = loadAzureCatalog();
    const sa = catalog.kinds.find((k) => k.type === "Microsoft.Storage/storageAccounts");
    expect(sa).toMatchObject({ group: "storage.azure.gen", kind: "StorageAccount" });
    expect(activatedAzureEntries(["*"], catalog)).toEqual([]);
    expect(activatedAzureEntries(["azure:storage.storageaccount"], catalog).map((k) => k.type)).toEqual([
      "Microsoft.Storage/storageAccounts",
    ]);
    expect(activatedAzureEntries(["*.keyvault.azure.gen.driftless.dev"], catalog).length).toBeGreaterThan(3);
  });

  it("wire: ids by parent and home, secrets resolved from Secret keys, ARM normalisations are no drift", async () => {
    const catalog = loadAzureCatalog();
    const spec = loadAzureSpec(
      catalog.kinds.find((k) => k.type === "Microsoft.KeyVault/vaults/secrets") ?? catalog.kinds[0]!,
    );
    const fp = {
      resourceGroupName: "rg1",
      vaultName: "v1",
      properties: { valueSecretRef: { name: "s", namespace: "n", key: "k" }, contentType: "text/plain" },
    };
    expect(resourceIdOf(spec, "sub", fp, "db-password")).toBe(
      "/subscriptions/sub/resourceGroups/rg1/providers/Microsoft.KeyVault/vaults/v1/secrets/db-password",
    );
    const body = await desiredBody(spec, fp, async ({ ref }) => `value-of-${ref.key}`);
    expect(body).toEqual({ properties: { value: "value-of-k", contentType: "text/plain" } });
    const observed = observedOf(spec, { properties: { contentType: "text/plain" } }, fp, {
      resourceGroupName: "rg1",
      vaultName: "v1",
    });
    expect(observed).toEqual(fp);

    const vnet = loadAzureSpec(catalog.kinds.find((k) => k.type === "Microsoft.Network/virtualNetworks")!);
    const want = {
      resourceGroupName: "rg1",
      location: "East US",
      properties: {
        dhcpOptions: { dnsServers: ["10.0.0.4"] },
        ddosProtectionPlan: {
          id: "/subscriptions/S/resourceGroups/RG/providers/Microsoft.Network/ddosProtectionPlans/p",
        },
      },
    };
    const got = observedOf(
      vnet,
      {
        location: "eastus",
        properties: {
          dhcpOptions: { dnsServers: ["10.0.0.4"] },
          ddosProtectionPlan: {
            id: "/subscriptions/s/resourcegroups/rg/providers/microsoft.network/ddosprotectionplans/p",
          },
          provisioningState: "Succeeded",
        },
      },
      want,
      { resourceGroupName: "rg1" },
    );
    expect(got).toEqual(want);
  });
});
