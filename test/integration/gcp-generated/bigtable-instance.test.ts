// Bigtable admin v2's Instance as a generated kind on a real kube-apiserver, against the generic fake: a
// create whose request holds the resource beside a create-time input (`CreateInstance {instanceId, instance,
// clusters}`, the clusters made with the instance). `clusters` is a spec field beside the instance's, sent
// only in the create, recorded there (googleapis.driftless.dev/created-with): a later change is refused
// (Synced=False) and nothing is sent, never a second instance. The fake refuses what Google refuses: an unknown
// field, the clusters inside the instance, no clusters. A Table's initialSplits are taken the same way.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Annotations } from "../../../shared/api/meta.ts";
import { CREATED_WITH_ANNOTATION } from "../../../shared/providers/gcp/generic/client.ts";
import { managedObject } from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { gcpProject } from "../../support/gcp.ts";
import { googleGenTestbed, refusedWithNothingSent } from "../../support/gcp-generated.ts";
import { conditionOf, getMr, keyOf, settle } from "../../support/reconcile.ts";

type Json = Record<string, unknown>;
const kube = newKube();
const PC = uniqueName("gcpbt");
const [INSTANCE, TABLE] = ["bigtableadmin.googleapis.com/Instance", "bigtableadmin.googleapis.com/Table"];
const bed = googleGenTestbed(kube, PC, [INSTANCE, TABLE]);
const [instance, table] = [bed.def(INSTANCE), bed.def(TABLE)];

beforeAll(() => bed.start({ opPolls: 0 }), 120_000);
afterAll(() => bed.close());

const twice = async (name: string, def = instance) => {
  for (const _ of [1, 2]) await settle(bed.reconciler, keyOf(def, name));
};

/** An Instance made with one cluster `{instanceId}-c1`, settled: its object's name, id, full name, clusters. */
const newInstance = async (prefix: string) => {
  const project = gcpProject();
  const name = uniqueName(prefix);
  const instanceId = `${prefix}-${Date.now().toString(36)}`;
  const location = `projects/${project}/locations/us-central1-b`;
  const clusters = { [`${instanceId}-c1`]: { location, serveNodes: 1, defaultStorageType: "SSD" } };
  await kube.create(
    instance,
    managedObject(instance, name, PC, {
      forProvider: { instanceId, displayName: "driftless test", clusters },
      connectionSecret: false,
    }),
  );
  await twice(name);
  return { name, instanceId, full: `projects/${project}/instances/${instanceId}`, location, clusters };
};

describe("Bigtable Instance (a create with clusters beside the instance)", () => {
  it("created with its clusters; a change of clusters refused with nothing sent; delete takes the clusters too", {
    timeout: 180_000,
  }, async () => {
    const { name, instanceId, full, location, clusters } = await newInstance("bt");
    const mr = await getMr<Json>(kube, instance, name);
    expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    expect(mr?.metadata.annotations?.[Annotations.externalName]).toBe(full);
    expect(JSON.parse(mr?.metadata.annotations?.[CREATED_WITH_ANNOTATION] ?? "{}")).toEqual({ clusters });
    // Google keeps the instance without the clusters, and made each cluster under it.
    const stored = bed.fake.resource(full);
    expect(stored).toMatchObject({ name: full, displayName: "driftless test" });
    expect(stored).not.toHaveProperty("clusters");
    expect(bed.fake.resource(`${full}/clusters/${instanceId}-c1`)).toMatchObject({
      location,
      serveNodes: 1,
      defaultStorageType: "SSD",
    });
    await twice(name);
    expect(conditionOf(await getMr(kube, instance, name), "Synced")).toMatchObject({ status: "True" });

    // The clusters are the create's: a change is refused, and nothing goes to Google.
    await refusedWithNothingSent(
      kube,
      bed,
      instance,
      name,
      { clusters: { [`${instanceId}-c1`]: { location, serveNodes: 3 } } },
      "clusters",
    );
    expect(bed.fake.resource(`${full}/clusters/${instanceId}-c1`)).toMatchObject({ serveNodes: 1 });
    expect(
      bed.fake.assets().filter((a) => JSON.stringify(a).includes(`/instances/${instanceId}"`)),
    ).toHaveLength(1);

    // Set back: in sync again.
    await kube.patch(instance, name, { spec: { forProvider: { clusters } } });
    await twice(name);
    expect(conditionOf(await getMr(kube, instance, name), "Synced")).toMatchObject({ status: "True" });

    // Delete removes the instance and its clusters.
    await kube.delete(instance, name);
    await twice(name);
    expect(await getMr(kube, instance, name)).toBeUndefined();
    expect(bed.fake.resource(full)).toBeUndefined();
    expect(bed.fake.resource(`${full}/clusters/${instanceId}-c1`)).toBeUndefined();
  });

  it("a Table's initialSplits: sent beside the table only in the create, a change refused with nothing sent", {
    timeout: 180_000,
  }, async () => {
    const { name: owner, full: parent } = await newInstance("btt");
    const name = uniqueName("bt-table");
    const initialSplits = [{ key: Buffer.from("m").toString("base64") }];
    await kube.create(
      table,
      managedObject(table, name, PC, {
        forProvider: { parent, tableId: "t1", initialSplits },
        connectionSecret: false,
      }),
    );
    await twice(name, table);
    const mr = await getMr<Json>(kube, table, name);
    expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    expect(JSON.parse(mr?.metadata.annotations?.[CREATED_WITH_ANNOTATION] ?? "{}")).toEqual({
      initialSplits,
    });
    expect(bed.fake.resource(`${parent}/tables/t1`)).toMatchObject({ name: `${parent}/tables/t1` });
    expect(bed.fake.resource(`${parent}/tables/t1`)).not.toHaveProperty("initialSplits");

    await refusedWithNothingSent(
      kube,
      bed,
      table,
      name,
      { initialSplits: [{ key: Buffer.from("q").toString("base64") }] },
      "initialSplits",
    );

    await kube.delete(table, name);
    await twice(name, table);
    expect(bed.fake.resource(`${parent}/tables/t1`)).toBeUndefined();
    await kube.delete(instance, owner);
    await twice(owner);
    expect(bed.fake.resource(parent)).toBeUndefined();
  });

  it("the fake refuses what Google refuses: an unknown field, clusters inside the instance, no clusters", async () => {
    const project = gcpProject();
    const call = async (body: unknown) => {
      const res = await fetch(`${bed.fake.url}/bigtableadmin/v2/projects/${project}/instances`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { error?: Json } };
    };
    const instanceId = `raw-${Date.now().toString(36)}`;
    const clusters = { c1: { location: `projects/${project}/locations/us-east1-b`, serveNodes: 1 } };
    const unknown = await call({ instanceId, instance: { displayName: "x" }, clusters, colour: "red" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({
      status: "INVALID_ARGUMENT",
      message: expect.stringContaining('Unknown name "colour"'),
    });
    const inside = await call({ instanceId, instance: { displayName: "x", clusters } });
    expect(inside.status).toBe(400);
    expect(inside.body.error?.message).toContain('Unknown name "clusters"');
    const none = await call({ instanceId, instance: { displayName: "x" } });
    expect(none.status).toBe(400);
    expect(none.body.error?.message).toContain("clusters");
    const wrongType = await call({ instanceId, instance: { displayName: "x" }, clusters: { c1: "x" } });
    expect(wrongType.status).toBe(400);
    expect(bed.fake.resource(`projects/${project}/instances/${instanceId}`)).toBeUndefined();
    const made = await call({ instanceId, instance: { displayName: "x" }, clusters });
    expect(made.status).toBe(200);
  });
});
