// An extension type on the generic ARM fake: a management lock (Microsoft.Authorization/locks) written under
// a ResourceGroup managed by driftless (scopeRef by name, the default kind) and under a generated RouteTable
// (scopeRef naming its kind): created, drift put back, a changed scope refused (the scope is the lock's home),
// deleted; a scope in another subscription than the ProviderConfig's refused before any call, directly or
// through a reference, with Synced=False saying what to do; a scope that does not exist: ARM's own 404.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ResourceGroup } from "../../../shared/api/azure/resources.ts";
import { armIdOf, createAzureProviderConfig } from "../../support/azure.ts";
import { azureGenTestbed } from "../../support/azure-gen.ts";
import { managedObject } from "../../support/conformance.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { conditionOf, getMr, keyOf } from "../../support/reconcile.ts";

type Json = Record<string, unknown>;
const kube = newKube();
const PC = uniqueName("pc-azext");
const PC_OTHER = uniqueName("pc-azext-other");
const OTHER_SUB = "22222222-2222-2222-2222-222222222222";
const LOCKS = "Microsoft.Authorization/locks";
const ROUTE_TABLES = "Microsoft.Network/routeTables";

const bed = azureGenTestbed(kube, PC, [LOCKS, ROUTE_TABLES]);
const { arm, untilReady, untilGone } = bed;
const lock = bed.spec(LOCKS);
const [lockDef, routeDef] = [bed.def(LOCKS), bed.def(ROUTE_TABLES)];

const lockAt = (scope: string, name: string) => `${scope}/providers/${LOCKS}/${name}`;

/** A resource group made through driftless (the hand-written kind), Ready, with its ARM id. */
async function managedGroup(pc: string) {
  const name = uniqueName("rg-azext");
  await kube.create(
    ResourceGroup,
    managedObject(ResourceGroup, name, pc, { forProvider: { location: "westeurope" } }),
  );
  return { name, id: armIdOf(await untilReady(ResourceGroup, name)) };
}

beforeAll(async () => {
  await bed.start();
  await createAzureProviderConfig(kube, PC_OTHER, {
    armEndpoint: bed.fake.url,
    noStorage: true,
    subscriptionId: OTHER_SUB,
  });
}, 120_000);

afterAll(() => bed.close());

describe("an extension type (management lock) on the generic ARM fake", () => {
  it("on a driftless ResourceGroup: created, drift put back, a changed scope refused, deleted", async () => {
    const rg = await managedGroup(PC);
    expect(rg.id).toBe(`/subscriptions/${env("AZURE_SUBSCRIPTION_ID")}/resourceGroups/${rg.name}`);
    const name = uniqueName("lock");
    await kube.create(
      lockDef,
      managedObject(lockDef, name, PC, {
        connectionSecret: false,
        forProvider: { scopeRef: { name: rg.name }, properties: { level: "CanNotDelete", notes: "one" } },
      }),
    );
    const mr = await untilReady(lockDef, name);
    expect((mr?.spec.forProvider as Json | undefined)?.scope).toBe(rg.id);
    expect(armIdOf(mr)).toBe(lockAt(rg.id, name));
    const wire = await arm("GET", lockAt(rg.id, name), lock.apiVersion);
    expect(wire.status).toBe(200);
    expect(wire.body.properties).toMatchObject({ level: "CanNotDelete", notes: "one" });

    // Drift: changed out of band, put back.
    const changed = { properties: { level: "CanNotDelete", notes: "drifted" } };
    expect((await arm("PUT", lockAt(rg.id, name), lock.apiVersion, changed)).status).toBeLessThan(300);
    await untilReady(lockDef, name);
    expect((await arm("GET", lockAt(rg.id, name), lock.apiVersion)).body.properties).toMatchObject({
      notes: "one",
    });

    // Immutable: another scope is another home, refused before any call; nothing is written there.
    const other = await managedGroup(PC);
    await kube.patch(lockDef, name, { spec: { forProvider: { scope: other.id } } });
    await bed.reconciler.reconcile(keyOf(lockDef, name));
    const refused = await getMr(kube, lockDef, name);
    expect(conditionOf(refused, "Synced")?.message).toMatch(/never follows a resource's home/);
    expect(conditionOf(refused, "Synced")?.message).toContain(rg.id.toLowerCase());
    expect(conditionOf(refused, "Synced")).toMatchObject({ status: "False" });
    expect((await arm("GET", lockAt(other.id, name), lock.apiVersion)).status).toBe(404);
    expect((await arm("GET", lockAt(rg.id, name), lock.apiVersion)).status).toBe(200);
    // The same scope in ARM's other spelling is no change.
    await kube.patch(lockDef, name, { spec: { forProvider: { scope: rg.id.toUpperCase() } } });
    await untilReady(lockDef, name);

    // Delete: gone from ARM.
    await kube.delete(lockDef, name);
    await untilGone(lockDef, name);
    expect((await arm("GET", lockAt(rg.id, name), lock.apiVersion)).status).toBe(404);
  });

  it("on a generated kind's resource, named by scopeRef's apiVersion and kind", async () => {
    const rg = await managedGroup(PC);
    const table = uniqueName("rt");
    await kube.create(
      routeDef,
      managedObject(routeDef, table, PC, {
        connectionSecret: false,
        forProvider: { resourceGroupNameRef: { name: rg.name }, location: "westeurope" },
      }),
    );
    const tableId = armIdOf(await untilReady(routeDef, table));
    expect(tableId).toBe(`${rg.id}/providers/${ROUTE_TABLES}/${table}`);
    const name = uniqueName("lock");
    await kube.create(
      lockDef,
      managedObject(lockDef, name, PC, {
        connectionSecret: false,
        forProvider: {
          scopeRef: { apiVersion: routeDef.apiVersion, kind: routeDef.kind, name: table },
          properties: { level: "ReadOnly" },
        },
      }),
    );
    expect(armIdOf(await untilReady(lockDef, name))).toBe(lockAt(tableId, name));
    expect((await arm("GET", lockAt(tableId, name), lock.apiVersion)).status).toBe(200);
    await kube.delete(lockDef, name);
    await untilGone(lockDef, name);
    expect((await arm("GET", lockAt(tableId, name), lock.apiVersion)).status).toBe(404);
  });

  it("a scope that does not exist: ARM's own 404 in Synced=False; nothing is made", async () => {
    const rg = await managedGroup(PC);
    const missing = `${rg.id}/providers/${ROUTE_TABLES}/not-there`;
    const name = uniqueName("lock");
    await kube.create(
      lockDef,
      managedObject(lockDef, name, PC, {
        connectionSecret: false,
        forProvider: { scope: missing, properties: { level: "CanNotDelete" } },
      }),
    );
    await bed.reconciler.reconcile(keyOf(lockDef, name));
    const mr = await getMr(kube, lockDef, name);
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "False" });
    expect(conditionOf(mr, "Synced")?.message).toMatch(/ResourceNotFound.*routeTables\/not-there/);
    expect((await arm("GET", lockAt(missing, name), lock.apiVersion)).status).toBe(404);
    await kube.delete(lockDef, name);
    await untilGone(lockDef, name);
  });

  it("a scope in another subscription is refused, set directly or through a reference", async () => {
    const foreign = await managedGroup(PC_OTHER);
    expect(foreign.id).toBe(`/subscriptions/${OTHER_SUB}/resourceGroups/${foreign.name}`);
    const before = (await arm("GET", `${foreign.id}/providers/${LOCKS}`, lock.apiVersion)).body;
    for (const forProvider of [
      { scope: foreign.id, properties: { level: "CanNotDelete" } },
      { scopeRef: { name: foreign.name }, properties: { level: "CanNotDelete" } },
    ]) {
      const name = uniqueName("lock");
      await kube.create(lockDef, managedObject(lockDef, name, PC, { connectionSecret: false, forProvider }));
      await bed.reconciler.reconcile(keyOf(lockDef, name));
      await bed.reconciler.reconcile(keyOf(lockDef, name));
      const mr = await getMr(kube, lockDef, name);
      expect(conditionOf(mr, "Synced")).toMatchObject({ status: "False" });
      expect(conditionOf(mr, "Synced")?.message).toContain(
        `is in subscription ${OTHER_SUB}, but the ProviderConfig's subscription is ${env("AZURE_SUBSCRIPTION_ID")}`,
      );
      expect(conditionOf(mr, "Synced")?.message).toMatch(/spec\.providerConfigRef/);
      expect((await arm("GET", lockAt(foreign.id, name), lock.apiVersion)).status).toBe(404);
      await kube.delete(lockDef, name);
      await untilGone(lockDef, name);
    }
    expect((await arm("GET", `${foreign.id}/providers/${LOCKS}`, lock.apiVersion)).body).toEqual(before);
  });
});
