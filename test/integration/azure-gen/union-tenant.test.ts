// The types generated last, on the generic ARM fake and a real kube-apiserver: a discriminated body
// (Microsoft.Resources/deploymentScripts: kind AzureCLI / AzurePowerShell, one member per variant) and types
// above the subscriptions (a tenant ManagementGroup, a management-group GroupQuota) — created, drift put
// back, an immutable change refused, deleted; two variants refused (Synced=False); a
// variant's secret read from a Secret and found nowhere in the object; a tenant resource never written
// through a ProviderConfig of another tenant.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ResourceGroup } from "../../../shared/api/azure/resources.ts";
import { armIdOf, createAzureProviderConfig } from "../../support/azure.ts";
import { azureGenTestbed } from "../../support/azure-gen.ts";
import { managedObject } from "../../support/conformance.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { conditionOf, getMr, keyOf } from "../../support/reconcile.ts";

type Json = Record<string, unknown>;
const kube = newKube();
const PC = uniqueName("pc-azunion");
const PC_OTHER_TENANT = uniqueName("pc-azunion-t2");
const SCRIPTS = "Microsoft.Resources/deploymentScripts";
const MGS = "Microsoft.Management/managementGroups";
const QUOTAS = "Microsoft.Quota/groupQuotas";

const bed = azureGenTestbed(kube, PC, [SCRIPTS, MGS, QUOTAS]);
const { arm, untilReady, untilGone } = bed;
const [scripts, mgs, quotas] = [bed.spec(SCRIPTS), bed.spec(MGS), bed.spec(QUOTAS)];
const [scriptDef, mgDef, quotaDef] = [bed.def(SCRIPTS), bed.def(MGS), bed.def(QUOTAS)];

beforeAll(async () => {
  // The CRDs with the variants' CEL rule, on the real API server.
  await bed.start();
  await createAzureProviderConfig(kube, PC_OTHER_TENANT, {
    armEndpoint: bed.fake.url,
    noStorage: true,
    tenantId: "33333333-3333-3333-3333-333333333333",
  });
}, 120_000);

afterAll(() => bed.close());

describe("a discriminated body: deployment script (kind AzureCLI / AzurePowerShell)", () => {
  it("two variants: Synced=False from the schema, nothing written (the CRD's CEL rule says the same)", async () => {
    // The local API server (v1.20) predates CRD validation rules (x-kubernetes-validations, 1.25+) and
    // drops them: what refuses two variants here is the kind's schema, as it does everywhere.
    const name = uniqueName("ds-two");
    const both = managedObject(scriptDef, name, PC, {
      connectionSecret: false,
      forProvider: {
        resourceGroupName: "rg",
        location: "westeurope",
        azureCLI: { properties: { azCliVersion: "2.52.0", retentionInterval: "P1D" } },
        azurePowerShell: { properties: { azPowerShellVersion: "10.0", retentionInterval: "P1D" } },
      },
    });
    await kube.create(scriptDef, both);
    await bed.reconciler.reconcile(keyOf(scriptDef, name));
    const mr = await getMr(kube, scriptDef, name);
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "False" });
    expect(conditionOf(mr, "Synced")?.message).toMatch(/at most one of azureCLI, azurePowerShell/);
    expect(
      (
        await arm(
          "GET",
          `/subscriptions/${env("AZURE_SUBSCRIPTION_ID")}/resourceGroups/rg/providers/${SCRIPTS}/${name}`,
          scripts.apiVersion,
        )
      ).status,
    ).toBe(404);
    await kube.delete(scriptDef, name);
    await untilGone(scriptDef, name);
  });

  it("created with its variant (a secret from a Secret), drift put back, immutable change refused, deleted", async () => {
    const rgName = uniqueName("rg-azunion");
    await kube.create(
      ResourceGroup,
      managedObject(ResourceGroup, rgName, PC, { forProvider: { location: "westeurope" } }),
    );
    const rgId = armIdOf(await untilReady(ResourceGroup, rgName));
    const secretValue = `s3cr3t-${uniqueName("v")}`;
    const secretName = uniqueName("ds-secret");
    await kube.createSecret({
      metadata: { name: secretName, namespace: "default" },
      stringData: { token: secretValue },
    });
    const name = uniqueName("ds");
    const properties = {
      azCliVersion: "2.52.0",
      retentionInterval: "P1D",
      scriptContent: "echo one",
      environmentVariables: [
        { name: "TOKEN", secureValueSecretRef: { name: secretName, namespace: "default", key: "token" } },
      ],
    };
    // No variant: Synced=False says which members it needs; nothing is written.
    await kube.create(
      scriptDef,
      managedObject(scriptDef, name, PC, {
        connectionSecret: false,
        forProvider: { resourceGroupNameRef: { name: rgName }, location: "westeurope" },
      }),
    );
    await bed.reconciler.reconcile(keyOf(scriptDef, name));
    await bed.reconciler.reconcile(keyOf(scriptDef, name));
    const none = await getMr(kube, scriptDef, name);
    expect(conditionOf(none, "Synced")).toMatchObject({ status: "False" });
    expect(conditionOf(none, "Synced")?.message).toContain("one of azureCLI / azurePowerShell");
    const id = `${rgId}/providers/${SCRIPTS}/${name}`;
    expect((await arm("GET", id, scripts.apiVersion)).status).toBe(404);

    // The variant (its secret read from a Secret in the connection Secret's namespace).
    await kube.patch(scriptDef, name, {
      spec: {
        forProvider: { azureCLI: { properties } },
        writeConnectionSecretToRef: { namespace: "default", name: `${name}-conn` },
      },
    });
    const mr = await untilReady(scriptDef, name);
    expect(armIdOf(mr)).toBe(id);
    // On the wire: the discriminator from the variant, its members the body's own; the secret sent, never shown.
    const wire = await arm("GET", id, scripts.apiVersion);
    expect(wire.status).toBe(200);
    expect(wire.body.kind).toBe("AzureCLI");
    expect(wire.body.properties).toMatchObject({
      scriptContent: "echo one",
      environmentVariables: [{ name: "TOKEN" }],
    });
    expect(JSON.stringify(await getMr(kube, scriptDef, name))).not.toContain(secretValue);
    // Read back into the same variant: atProvider's read-only members under azureCLI.
    expect((mr?.status?.atProvider as Json | undefined)?.azureCLI).toMatchObject({
      properties: { provisioningState: "Succeeded" },
    });

    // Drift: changed out of band (the secret sent again, as a user's tool must), put back.
    const drifted = {
      kind: "AzureCLI",
      location: "westeurope",
      properties: {
        ...properties,
        scriptContent: "echo drifted",
        environmentVariables: [{ name: "TOKEN", secureValue: "x" }],
      },
    };
    expect((await arm("PUT", id, scripts.apiVersion, drifted)).status).toBeLessThan(300);
    await untilReady(scriptDef, name);
    await untilReady(scriptDef, name);
    expect(((await arm("GET", id, scripts.apiVersion)).body.properties as Json).scriptContent).toBe(
      "echo one",
    );

    // Immutable: location is create-only, and part of the home: refused with both values, nothing written.
    await kube.patch(scriptDef, name, { spec: { forProvider: { location: "northeurope" } } });
    await bed.reconciler.reconcile(keyOf(scriptDef, name));
    const refused = await getMr(kube, scriptDef, name);
    expect(conditionOf(refused, "Synced")).toMatchObject({ status: "False" });
    expect(conditionOf(refused, "Synced")?.message).toMatch(
      /lives in location "westeurope", but its spec and ProviderConfig now reach location "northeurope": driftless never follows/,
    );
    expect((await arm("GET", id, scripts.apiVersion)).body.location).toBe("westeurope");
    await kube.patch(scriptDef, name, { spec: { forProvider: { location: "westeurope" } } });
    await untilReady(scriptDef, name);

    await kube.delete(scriptDef, name);
    await untilGone(scriptDef, name);
    expect((await arm("GET", id, scripts.apiVersion)).status).toBe(404);
    await kube.deleteSecret("default", secretName);
  });
});

describe("above the subscriptions: a tenant ManagementGroup and a management-group GroupQuota", () => {
  it("created at their own ids, drift put back, a changed management group refused, deleted", async () => {
    const mg = uniqueName("mg");
    await kube.create(
      mgDef,
      managedObject(mgDef, mg, PC, {
        connectionSecret: false,
        forProvider: { properties: { displayName: "one" } },
      }),
    );
    const mgId = `/providers/${MGS}/${mg}`;
    expect(armIdOf(await untilReady(mgDef, mg))).toBe(mgId);
    expect((await arm("GET", mgId, mgs.apiVersion)).body.properties).toMatchObject({ displayName: "one" });

    // Drift on the tenant resource: put back.
    expect(
      (await arm("PUT", mgId, mgs.apiVersion, { properties: { displayName: "drifted" } })).status,
    ).toBeLessThan(300);
    await untilReady(mgDef, mg);
    await untilReady(mgDef, mg);
    expect((await arm("GET", mgId, mgs.apiVersion)).body.properties).toMatchObject({ displayName: "one" });

    // A management-group type, its group by reference.
    const quota = uniqueName("gq");
    await kube.create(
      quotaDef,
      managedObject(quotaDef, quota, PC, {
        connectionSecret: false,
        forProvider: { managementGroupIdRef: { name: mg }, properties: { displayName: "q" } },
      }),
    );
    const quotaId = `${mgId}/providers/${QUOTAS}/${quota}`;
    const ready = await untilReady(quotaDef, quota);
    expect(armIdOf(ready)).toBe(quotaId);
    expect((ready?.spec.forProvider as Json | undefined)?.managementGroupId).toBe(mg);
    expect(
      (await arm("PUT", quotaId, quotas.apiVersion, { properties: { displayName: "x" } })).status,
    ).toBeLessThan(300);
    await untilReady(quotaDef, quota);
    await untilReady(quotaDef, quota);
    expect((await arm("GET", quotaId, quotas.apiVersion)).body.properties).toMatchObject({
      displayName: "q",
    });

    // Immutable: another management group is another home — refused, never followed; nothing written there.
    const mg2 = uniqueName("mg");
    await kube.create(mgDef, managedObject(mgDef, mg2, PC, { connectionSecret: false, forProvider: {} }));
    await untilReady(mgDef, mg2);
    await kube.patch(quotaDef, quota, {
      spec: { forProvider: { managementGroupId: mg2, managementGroupIdRef: null } },
    });
    await bed.reconciler.reconcile(keyOf(quotaDef, quota));
    const refused = await getMr(kube, quotaDef, quota);
    expect(conditionOf(refused, "Synced")).toMatchObject({ status: "False" });
    expect(conditionOf(refused, "Synced")?.message).toMatch(/never follows a resource's home/);
    expect(
      (await arm("GET", `/providers/${MGS}/${mg2}/providers/${QUOTAS}/${quota}`, quotas.apiVersion)).status,
    ).toBe(404);
    await kube.patch(quotaDef, quota, { spec: { forProvider: { managementGroupId: mg } } });
    await untilReady(quotaDef, quota);

    // Deleted: the quota, then the groups.
    await kube.delete(quotaDef, quota);
    await untilGone(quotaDef, quota);
    expect((await arm("GET", quotaId, quotas.apiVersion)).status).toBe(404);
    for (const g of [mg, mg2]) {
      await kube.delete(mgDef, g);
      await untilGone(mgDef, g);
      expect((await arm("GET", `/providers/${MGS}/${g}`, mgs.apiVersion)).status).toBe(404);
    }
  });

  it("a tenant resource is never written through a ProviderConfig of another tenant", async () => {
    const mg = uniqueName("mg");
    await kube.create(
      mgDef,
      managedObject(mgDef, mg, PC, {
        connectionSecret: false,
        forProvider: { properties: { displayName: "a" } },
      }),
    );
    await untilReady(mgDef, mg);
    await kube.patch(mgDef, mg, {
      spec: {
        providerConfigRef: { name: PC_OTHER_TENANT },
        forProvider: { properties: { displayName: "b" } },
      },
    });
    await bed.reconciler.reconcile(keyOf(mgDef, mg));
    const refused = await getMr(kube, mgDef, mg);
    expect(conditionOf(refused, "Synced")).toMatchObject({ status: "False" });
    expect(conditionOf(refused, "Synced")?.message).toMatch(/never follows a resource's home/);
    expect(conditionOf(refused, "Synced")?.message).toContain("33333333-3333-3333-3333-333333333333");
    expect((await arm("GET", `/providers/${MGS}/${mg}`, mgs.apiVersion)).body.properties).toMatchObject({
      displayName: "a",
    });
    await kube.patch(mgDef, mg, { spec: { providerConfigRef: { name: PC } } });
    await kube.delete(mgDef, mg);
    await untilGone(mgDef, mg);
  });
});
