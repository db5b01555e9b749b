import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AzureKindSpec } from "../../../shared/api/azure-gen/spec.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { armClient } from "../../support/azure.ts";
import { azureGenTestbed } from "../../support/azure-gen.ts";
import { connectionData, managedObject } from "../../support/conformance.ts";
import { defaultTags } from "../../support/default-tags.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { conditionOf, getMr, keyOf } from "../../support/reconcile.ts";

type Json = Record<string, unknown>;
const kube = newKube();
const PC = uniqueName("pc-azgen");
const RG = uniqueName("rg-azgen");

interface Fixture {
  type: string;
  forProvider: (name: string) => Json;
  /** A member set out of band (path below the body, and its value): the spec's value must come back. */
  drift: { path: string; value: unknown };
}

const tagged = (o: Json = {}) => ({ location: "westeurope", tags: { team: "a" }, ...o });
const TAG_DRIFT = { path: "tags", value: { team: "console" } };
const FIXTURES: Fixture[] = [
  {
    type: "Microsoft.Network/routeTables",
    forProvider: () => tagged({ properties: { disableBgpRoutePropagation: true } }),
    drift: TAG_DRIFT,
  },
  { type: "Microsoft.Network/dnsZones", forProvider: () => tagged({ location: "global" }), drift: TAG_DRIFT },
  { type: "Microsoft.Network/applicationSecurityGroups", forProvider: () => tagged(), drift: TAG_DRIFT },
  {
    type: "Microsoft.Network/natGateways",
    forProvider: () => tagged({ sku: { name: "Standard" }, properties: { idleTimeoutInMinutes: 4 } }),
    drift: { path: "properties.idleTimeoutInMinutes", value: 10 },
  },
  {
    type: "Microsoft.OperationalInsights/workspaces",
    forProvider: () => tagged({ properties: { retentionInDays: 30 } }),
    drift: { path: "properties.retentionInDays", value: 90 },
  },
  {
    type: "Microsoft.Insights/components",
    forProvider: () => tagged({ kind: "web", properties: { Application_Type: "web" } }),
    drift: TAG_DRIFT,
  },
  {
    type: "Microsoft.Web/serverfarms",
    forProvider: () => tagged({ sku: { name: "B1", capacity: 1 } }),
    drift: { path: "sku", value: { name: "B2", capacity: 1 } },
  },
  {
    type: "Microsoft.ContainerRegistry/registries",
    forProvider: () => tagged({ sku: { name: "Basic" }, properties: { adminUserEnabled: true } }),
    drift: { path: "properties.adminUserEnabled", value: false },
  },
  {
    type: "Microsoft.EventHub/namespaces",
    forProvider: () => tagged({ sku: { name: "Standard" } }),
    drift: TAG_DRIFT,
  },
  {
    type: "Microsoft.ServiceBus/namespaces",
    forProvider: () => tagged({ sku: { name: "Standard" } }),
    drift: TAG_DRIFT,
  },
  {
    type: "Microsoft.Cache/redis",
    forProvider: () =>
      tagged({ properties: { sku: { name: "Basic", family: "C", capacity: 0 }, enableNonSslPort: false } }),
    drift: { path: "properties.enableNonSslPort", value: true },
  },
  {
    type: "Microsoft.Sql/servers",
    forProvider: () => tagged({ properties: { administratorLogin: "sqladmin", version: "12.0" } }),
    drift: TAG_DRIFT,
  },
  {
    type: "Microsoft.Compute/availabilitySets",
    forProvider: () => tagged({ properties: { platformFaultDomainCount: 2 } }),
    drift: TAG_DRIFT,
  },
  {
    type: "Microsoft.Compute/disks",
    forProvider: () => tagged({ properties: { creationData: { createOption: "Empty" }, diskSizeGB: 4 } }),
    drift: { path: "properties.diskSizeGB", value: 8 },
  },
  { type: "Microsoft.App/managedEnvironments", forProvider: () => tagged(), drift: TAG_DRIFT },
  {
    type: "Microsoft.Automation/automationAccounts",
    forProvider: () => tagged({ properties: { sku: { name: "Basic" } } }),
    drift: TAG_DRIFT,
  },
  {
    type: "Microsoft.SignalRService/signalR",
    forProvider: () => tagged({ sku: { name: "Free_F1" } }),
    drift: TAG_DRIFT,
  },
];
// The children: created below a parent of their own (by name or by reference), no location of theirs.
const CHILD_FIXTURES: Array<Fixture & { parent: string; parentFor: Json }> = [
  {
    type: "Microsoft.EventHub/namespaces/eventhubs",
    parent: "Microsoft.EventHub/namespaces",
    parentFor: tagged({ sku: { name: "Standard" } }),
    forProvider: () => ({ properties: { partitionCount: 2, messageRetentionInDays: 1 } }),
    drift: { path: "properties.messageRetentionInDays", value: 3 },
  },
  {
    type: "Microsoft.ServiceBus/namespaces/queues",
    parent: "Microsoft.ServiceBus/namespaces",
    parentFor: tagged({ sku: { name: "Standard" } }),
    forProvider: () => ({ properties: { maxDeliveryCount: 5 } }),
    drift: { path: "properties.maxDeliveryCount", value: 9 },
  },
  {
    type: "Microsoft.Sql/servers/databases",
    parent: "Microsoft.Sql/servers",
    parentFor: tagged({ properties: { administratorLogin: "sqladmin" } }),
    forProvider: () => tagged({ sku: { name: "Basic" } }),
    drift: TAG_DRIFT,
  },
];

const bed = azureGenTestbed(
  kube,
  PC,
  [...FIXTURES, ...CHILD_FIXTURES].map((f) => f.type),
);
const { arm, untilReady, untilGone, spec: specOf, def: defOf } = bed;

const idOf = (spec: AzureKindSpec, names: string[]) => {
  const [ns, ...segs] = spec.type.split("/");
  return `/subscriptions/${env("AZURE_SUBSCRIPTION_ID")}/resourceGroups/${RG}/providers/${ns}/${segs.map((s, i) => `${s}/${names[i]}`).join("/")}`;
};

const setAt = (o: Json, path: string, v: unknown) => {
  const parts = path.split(".");
  const last = parts.pop() as string;
  let at = o;
  for (const p of parts) {
    at[p] ??= {};
    at = at[p] as Json;
  }
  at[last] = v;
};
const getAt = (o: unknown, path: string) =>
  path.split(".").reduce<unknown>((v, k) => (v as Json | undefined)?.[k], o);

beforeAll(async () => {
  await bed.start();
  await armClient(bed.fake.url).resourceGroups.createOrUpdate(RG, { location: "westeurope" });
}, 120_000);

afterAll(() => bed.close());

describe("generated Azure kinds on the generic ARM fake", () => {
  it.each(FIXTURES)(
    "$type: create (async), drift corrected, immutable location refused, import, delete",
    async (f) => {
      const spec = specOf(f.type);
      const def = defOf(f.type);
      const name = uniqueName("g");
      const fp: Json = { resourceGroupName: RG, ...f.forProvider(name) };
      await kube.create(def, managedObject(def, name, PC, { forProvider: fp }));
      // Create: the PUT returns at once, the resource is Creating until the operation ends.
      await bed.reconciler.reconcile(keyOf(def, name));
      const creating = await arm("GET", idOf(spec, [name]), spec.apiVersion);
      expect(creating.status).toBe(200);
      const mr = await untilReady(def, name);
      expect((mr?.status?.atProvider as Json | undefined)?.id).toBe(idOf(spec, [name]));

      // Drift: changed out of band, put back as the spec has it.
      // What a user's own tool sends: the writable body, one member changed.
      const { resourceGroupName: _, ...changed } = structuredClone(fp);
      setAt(changed, f.drift.path, f.drift.value);
      expect((await arm("PUT", idOf(spec, [name]), spec.apiVersion, changed)).status).toBeLessThan(300);
      await untilReady(def, name);
      const back = await untilReady(def, name);
      expect(back).toBeDefined();
      const after = (await arm("GET", idOf(spec, [name]), spec.apiVersion)).body;
      // Tags put back carry Crossplane's default tags beside the spec's (the engine writes them with any tags write).
      const expected =
        f.drift === TAG_DRIFT
          ? { ...defaultTags(def, name, PC), ...(fp.tags as Json) }
          : getAt(fp, f.drift.path);
      expect(getAt(after, f.drift.path)).toEqual(expected);

      // Immutable: a new location is refused by the engine; the cloud keeps the old one.
      if (spec.createOnly.includes("location") && fp.location !== "global") {
        await kube.patch(def, name, { spec: { forProvider: { location: "eastus" } } });
        await bed.reconciler.reconcile(keyOf(def, name));
        const refused = await getMr(kube, def, name);
        expect(conditionOf(refused, "Synced")).toMatchObject({ status: "False" });
        // The location is the resource's home: the engine refuses a changed home before any call.
        expect(conditionOf(refused, "Synced")?.message).toMatch(/lives in location "westeurope"|immutable/);
        expect((await arm("GET", idOf(spec, [name]), spec.apiVersion)).body.location).toBe("westeurope");
        // ARM's own spelling of the same location is no change at all.
        await kube.patch(def, name, { spec: { forProvider: { location: "West Europe" } } });
        await untilReady(def, name);
      }

      // Import: a second object with the same external name, Observe only.
      const imported = uniqueName("imp");
      await kube.create(
        def,
        managedObject(def, imported, PC, {
          forProvider: { resourceGroupName: RG },
          annotations: { [Annotations.externalName]: name },
          spec: { managementPolicies: ["Observe"] },
        }),
      );
      const seen = await untilReady(def, imported);
      expect((seen?.status?.atProvider as Json | undefined)?.id).toBe(idOf(spec, [name]));
      await kube.delete(def, imported);
      await untilGone(def, imported);
      expect((await arm("GET", idOf(spec, [name]), spec.apiVersion)).status).toBe(200);

      // Delete: 202 from ARM, gone at the next observe.
      await kube.delete(def, name);
      await untilGone(def, name);
      expect((await arm("GET", idOf(spec, [name]), spec.apiVersion)).status).toBe(404);
    },
    60_000,
  );

  it.each(CHILD_FIXTURES)(
    "$type: created below its parent by reference, drift corrected, deleted",
    async (f) => {
      const spec = specOf(f.type);
      const def = defOf(f.type);
      const parentDef = defOf(f.parent);
      const parent = uniqueName("p");
      const name = uniqueName("c");
      await kube.create(
        parentDef,
        managedObject(parentDef, parent, PC, { forProvider: { resourceGroupName: RG, ...f.parentFor } }),
      );
      await untilReady(parentDef, parent);
      const field = spec.parents[0]?.field as string;
      await kube.create(
        def,
        managedObject(def, name, PC, {
          forProvider: { resourceGroupName: RG, [`${field}Ref`]: { name: parent }, ...f.forProvider(name) },
        }),
      );
      const mr = await untilReady(def, name);
      expect((mr?.spec.forProvider as Json | undefined)?.[field]).toBe(parent);
      const id = idOf(spec, [parent, name]);
      // What a user's own tool sends: the writable body, one member changed.
      const now = structuredClone(f.forProvider(name));
      setAt(now, f.drift.path, f.drift.value);
      expect((await arm("PUT", id, spec.apiVersion, now)).status).toBeLessThan(300);
      await untilReady(def, name);
      await untilReady(def, name);
      const fp = f.forProvider(name);
      expect(getAt((await arm("GET", id, spec.apiVersion)).body, f.drift.path)).toEqual(
        f.drift === TAG_DRIFT
          ? { ...defaultTags(def, name, PC), ...(fp.tags as Json) }
          : getAt(fp, f.drift.path),
      );
      await kube.delete(def, name);
      await untilGone(def, name);
      await kube.delete(parentDef, parent);
      await untilGone(parentDef, parent);
      expect((await arm("GET", id, spec.apiVersion)).status).toBe(404);
    },
    60_000,
  );

  it("a password from a Secret key reaches ARM and nothing else; listKeys answers land in the connection Secret", async () => {
    const spec = specOf("Microsoft.Sql/servers");
    const def = defOf("Microsoft.Sql/servers");
    const name = uniqueName("sqlpw");
    const password = `pw-${uniqueName("x")}-value`;
    await kube.deleteSecret("default", `${name}-pw`);
    await kube.createSecret({
      metadata: { name: `${name}-pw`, namespace: "default" },
      stringData: { password },
    });
    await kube.create(
      def,
      managedObject(def, name, PC, {
        forProvider: tagged({
          resourceGroupName: RG,
          properties: {
            administratorLogin: "sqladmin",
            administratorLoginPasswordSecretRef: {
              namespace: "default",
              name: `${name}-pw`,
              key: "password",
            },
          },
        }),
      }),
    );
    const mr = await untilReady(def, name);
    expect(JSON.stringify(mr)).not.toContain(password);
    expect(JSON.stringify((await arm("GET", idOf(spec, [name]), spec.apiVersion)).body)).not.toContain(
      password,
    );

    const redis = defOf("Microsoft.Cache/redis");
    const cache = uniqueName("cache");
    await kube.create(
      redis,
      managedObject(redis, cache, PC, {
        forProvider: {
          resourceGroupName: RG,
          ...FIXTURES.find((f) => f.type === "Microsoft.Cache/redis")?.forProvider(cache),
        },
      }),
    );
    const ready = await untilReady(redis, cache);
    const conn = await connectionData(kube, cache);
    expect(Object.keys(conn)).toEqual(expect.arrayContaining(["primaryKey", "secondaryKey"]));
    for (const v of Object.values(conn)) expect(JSON.stringify(ready)).not.toContain(v);
  }, 60_000);

  it("ARM's errors: throttling with Retry-After and a conflict are Synced=False with ARM's message", async () => {
    const spec = specOf("Microsoft.Network/routeTables");
    const def = defOf("Microsoft.Network/routeTables");
    const inject = (f: Json) =>
      fetch(`${bed.fake.url}/__fake/fail`, { method: "POST", body: JSON.stringify(f) });
    const cases: Array<{ fault?: Json; forProvider?: Json; message: RegExp }> = [
      {
        fault: {
          status: 429,
          code: "TooManyRequests",
          message: "The request is being throttled.",
          retryAfter: "17",
        },
        message: /throttled.*Retry-After 17/,
      },
      {
        fault: {
          status: 409,
          code: "Conflict",
          message: "Operation is not allowed: another update is in progress.",
        },
        message: /Conflict.*another update/,
      },
      {
        fault: {
          status: 409,
          code: "QuotaExceeded",
          message: "Operation could not be completed as it results in exceeding approved quota.",
        },
        message: /QuotaExceeded.*quota/,
      },
      {
        fault: {
          status: 400,
          code: "InvalidRequestContent",
          message: "Could not find member 'foo' on object of type 'RouteTable'. Path 'foo'.",
        },
        message: /Could not find member 'foo'/,
      },
    ];
    for (const c of cases) {
      const name = uniqueName("err");
      if (c.fault) await inject({ method: "PUT", path: `/routeTables/${name}`, times: 1, ...c.fault });
      await kube.create(
        def,
        managedObject(def, name, PC, { forProvider: tagged({ resourceGroupName: RG, ...c.forProvider }) }),
      );
      await bed.reconciler.reconcile(keyOf(def, name));
      const mr = await getMr(kube, def, name);
      expect(conditionOf(mr, "Synced")).toMatchObject({ status: "False" });
      expect(conditionOf(mr, "Synced")?.message).toMatch(c.message);
      expect((await arm("GET", idOf(spec, [name]), spec.apiVersion)).status).toBe(404);
      await kube.patch(def, name, { metadata: { finalizers: [] } });
      await kube.delete(def, name);
    }
  }, 60_000);

  it("the generic fake validates every PUT against the type data with ARM's error bodies", async () => {
    const spec = specOf("Microsoft.Compute/disks");
    const id = idOf(spec, [uniqueName("d")]);
    const body = {
      location: "westeurope",
      properties: { creationData: { createOption: "Empty" }, diskSizeGB: 4 },
    };
    const refused = async (b: unknown, status: number, code: string, message: RegExp) => {
      const a = await arm("PUT", id, spec.apiVersion, b);
      expect(a.status).toBe(status);
      expect(a.body.error).toMatchObject({ code });
      expect((a.body.error as Json).message).toMatch(message);
    };
    await refused({ ...body, foo: 1 }, 400, "InvalidRequestContent", /Could not find member 'foo'/);
    await refused(
      { ...body, properties: { ...body.properties, diskSizeGB: "four" } },
      400,
      "InvalidRequestContent",
      /Error converting value "four" to type 'System.Int64'. Path 'properties.diskSizeGB'/,
    );
    await refused(
      { ...body, properties: { ...body.properties, provisioningState: "Succeeded" } },
      400,
      "InvalidRequestContent",
      /'properties.provisioningState' is read-only/,
    );
    await refused(
      { location: "westeurope" },
      400,
      "InvalidRequestContent",
      /missing the required property|creationData/,
    );
    expect((await arm("PUT", id, "2020-01-01", body)).body.error).toMatchObject({
      code: "NoRegisteredProviderFound",
    });
    expect((await arm("PUT", id, spec.apiVersion, body)).status).toBe(201);
    await arm("GET", id, spec.apiVersion);
    await refused(
      { ...body, location: "eastus" },
      400,
      "PropertyChangeNotAllowed",
      /Changing property 'location' is not allowed/,
    );
    expect((await arm("PUT", id, spec.apiVersion, { ...body, location: "West Europe" })).status).toBe(200);
  });
});
