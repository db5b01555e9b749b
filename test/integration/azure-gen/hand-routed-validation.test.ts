import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeServer } from "../../../infra/local/fakes/arm-fake.ts";
import { loadAzureCatalog, loadAzureSpec } from "../../../shared/api/azure-gen/catalog.ts";
import { startGenericArmFake } from "../../support/azure.ts";
import { uniqueName } from "../../support/env.ts";

type Json = Record<string, unknown>;
let fake: FakeServer;
const SUB = "00000000-0000-0000-0000-0000000000aa";
const RG = uniqueName("rg-hand");
const VNET = uniqueName("vnet");

/** A read-only member of `properties` by the data (provisioningState unless the type says otherwise). */
const READ_ONLY: Record<string, string> = {
  "Microsoft.ManagedIdentity/userAssignedIdentities": "principalId",
  // Key Vault's provisioningState is writable in its data (RegisteringDns | Succeeded).
  "Microsoft.KeyVault/vaults": "hsmPoolResourceId",
};

const VALID: Array<{ type: string; names: string[]; body: Json }> = [
  {
    type: "Microsoft.Network/virtualNetworks",
    names: [VNET],
    body: { location: "westeurope", properties: { addressSpace: { addressPrefixes: ["10.0.0.0/16"] } } },
  },
  {
    type: "Microsoft.Network/virtualNetworks/subnets",
    names: [VNET, "s1"],
    body: { properties: { addressPrefix: "10.0.1.0/24" } },
  },
  {
    type: "Microsoft.Network/networkSecurityGroups",
    names: [uniqueName("nsg")],
    body: { location: "westeurope" },
  },
  {
    type: "Microsoft.Network/publicIPAddresses",
    names: [uniqueName("pip")],
    body: {
      location: "westeurope",
      sku: { name: "Standard" },
      properties: { publicIPAllocationMethod: "Static" },
    },
  },
  {
    type: "Microsoft.Storage/storageAccounts",
    names: [uniqueName("st").replace(/-/g, "").slice(0, 20)],
    body: { location: "westeurope", kind: "StorageV2", sku: { name: "Standard_LRS" } },
  },
  {
    type: "Microsoft.ManagedIdentity/userAssignedIdentities",
    names: [uniqueName("id")],
    body: { location: "westeurope" },
  },
  {
    type: "Microsoft.KeyVault/vaults",
    names: [uniqueName("kv").slice(0, 20)],
    body: {
      location: "westeurope",
      properties: {
        tenantId: "00000000-0000-0000-0000-000000000001",
        sku: { family: "A", name: "standard" },
      },
    },
  },
];

const apiVersionOf = (type: string) => {
  const e = loadAzureCatalog().kinds.find((k) => k.type === type);
  if (!e) throw new Error(`${type} is not in the data`);
  return loadAzureSpec(e).apiVersion;
};

async function put(type: string, names: string[], body: unknown) {
  const [ns, ...segs] = type.split("/");
  const path = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/${ns}/${segs.map((s, i) => `${s}/${names[i]}`).join("/")}`;
  const res = await fetch(`${fake.url}${path}?api-version=${apiVersionOf(type)}`, {
    method: "PUT",
    headers: { authorization: "Bearer t", "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json };
}

beforeAll(async () => {
  fake = await startGenericArmFake();
  const rg = await fetch(`${fake.url}/subscriptions/${SUB}/resourcegroups/${RG}?api-version=2021-04-01`, {
    method: "PUT",
    headers: { authorization: "Bearer t", "content-type": "application/json" },
    body: JSON.stringify({ location: "westeurope" }),
  });
  expect(rg.status).toBeLessThan(300);
}, 60_000);

afterAll(async () => {
  await fake?.close();
});

describe("the ARM fake's hand-routed types validate against the type data", () => {
  it.each(VALID)(
    "$type: unknown member, wrong type and read-only refused; a valid body accepted",
    async (c) => {
      const refused = async (b: Json, message: RegExp) => {
        const a = await put(c.type, c.names, b);
        expect(a.status, JSON.stringify(a.body)).toBe(400);
        expect(a.body.error).toMatchObject({ code: "InvalidRequestContent" });
        expect((a.body.error as Json).message).toMatch(message);
      };
      await refused({ ...c.body, foo: 1 }, /Could not find member 'foo'/);
      const readOnly = READ_ONLY[c.type] ?? "provisioningState";
      await refused(
        { ...c.body, properties: { ...((c.body.properties as Json | undefined) ?? {}), [readOnly]: "x" } },
        new RegExp(`'properties.${readOnly}' is read-only`),
      );
      if (c.type !== "Microsoft.Network/virtualNetworks/subnets")
        await refused({ ...c.body, tags: "team=a" }, /Path 'tags'/);
      const ok = await put(c.type, c.names, c.body);
      expect(ok.status, JSON.stringify(ok.body)).toBeLessThan(300);
    },
  );
});
