// Kinds whose methods the extractor recognises by their HTTP binding and types rather than their names, on a
// real kube-apiserver against the generic fake: Cloud Logging's LogBucket (GetBucket / UpdateBucket /
// DeleteBucket answer a LogBucket), LogMetric (get, update and delete bound to `metric_name`, the caller's id in
// the metric's own `name`, a PUT update without a mask) and Pub/Sub's Topic, Subscription and Snapshot (created
// with a PUT on the full name; a Snapshot's request carries `subscription` beside its labels). Each: created →
// Ready, drift corrected, an immutable change refused where the proto marks one, import by external name,
// delete. The fake refuses what Google refuses (an unknown field, a missing subscription).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Annotations } from "../../../shared/api/meta.ts";
import { managedObject } from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { gcpProject } from "../../support/gcp.ts";
import { googleGenTestbed, rawGoogleRequest } from "../../support/gcp-generated.ts";
import { conditionOf, getMr, keyOf, settle } from "../../support/reconcile.ts";

type Json = Record<string, unknown>;
const BUCKET = "logging.googleapis.com/LogBucket";
const METRIC = "logging.googleapis.com/LogMetric";
const TOPIC = "pubsub.googleapis.com/Topic";
const SUB = "pubsub.googleapis.com/Subscription";
const SNAP = "pubsub.googleapis.com/Snapshot";
const kube = newKube();
const PC = uniqueName("gcpspecial");
const bed = googleGenTestbed(kube, PC, [BUCKET, METRIC, TOPIC, SUB, SNAP]);

beforeAll(() => bed.start({ opPolls: 0 }), 120_000);
afterAll(() => bed.close());

const twice = async (type: string, name: string) => {
  await settle(bed.reconciler, keyOf(bed.def(type), name));
  await settle(bed.reconciler, keyOf(bed.def(type), name));
};
const ready = async (type: string, name: string) => {
  const mr = await getMr<Json>(kube, bed.def(type), name);
  expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
  expect(conditionOf(mr, "Synced"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
  return mr;
};
const create = (type: string, name: string, forProvider: Json, annotations?: Record<string, string>) =>
  kube.create(bed.def(type), {
    ...managedObject(bed.def(type), name, PC, { forProvider, connectionSecret: false }),
    ...(annotations ? { metadata: { name, annotations } } : {}),
  } as never);
/** A second managed resource imports the same resource by its external name, then lets go of it. */
const importAndOrphan = async (type: string, externalName: string, forProvider: Json, want: Json) => {
  const imported = uniqueName("import");
  await create(type, imported, forProvider, { [Annotations.externalName]: externalName });
  await twice(type, imported);
  const mr = await ready(type, imported);
  expect(mr?.status?.atProvider).toMatchObject(want);
  await kube.patch(bed.def(type), imported, { spec: { deletionPolicy: "Orphan" } });
  await kube.delete(bed.def(type), imported);
  await twice(type, imported);
  expect(await getMr(kube, bed.def(type), imported)).toBeUndefined();
};
const remove = async (type: string, name: string, full: string) => {
  await kube.delete(bed.def(type), name);
  await twice(type, name);
  expect(await getMr(kube, bed.def(type), name)).toBeUndefined();
  expect(bed.fake.resource(full)).toBeUndefined();
};
const raw = (method: string, path: string, body: unknown) =>
  rawGoogleRequest(bed.fake.url, method, path, body);

describe("Cloud Logging: methods named after the collection, and metric_name", () => {
  it("a LogBucket (GetBucket, UpdateBucket, DeleteBucket): created, drift corrected, imported, deleted", {
    timeout: 120_000,
  }, async () => {
    const name = uniqueName("bucket");
    const parent = `projects/${gcpProject()}/locations/global`;
    const full = `${parent}/buckets/${name}`;
    await create(BUCKET, name, { parent, retentionDays: 30, description: "app logs" });
    await twice(BUCKET, name);
    const mr = await ready(BUCKET, name);
    expect(mr?.status?.atProvider).toMatchObject({ name: full });
    expect(bed.fake.resource(full)).toMatchObject({ retentionDays: 30, description: "app logs" });

    bed.fake.mutate(full, { retentionDays: 7 });
    await twice(BUCKET, name);
    expect(bed.fake.resource(full)?.retentionDays).toBe(30);
    await ready(BUCKET, name);

    await importAndOrphan(
      BUCKET,
      full,
      { parent, retentionDays: 30, description: "app logs" },
      { name: full },
    );
    expect(bed.fake.resource(full)).toBeDefined();
    await remove(BUCKET, name, full);
  });

  it("a LogMetric: its id in its own name, read and deleted by metric_name, drift put back with a PUT", {
    timeout: 120_000,
  }, async () => {
    const name = uniqueName("metric");
    const full = `projects/${gcpProject()}/metrics/${name}`;
    await create(METRIC, name, { filter: "severity>=ERROR", description: "errors" });
    await twice(METRIC, name);
    await ready(METRIC, name);
    // Google keeps the short id the caller chose as the metric's name.
    expect(bed.fake.resource(full)).toMatchObject({ name, filter: "severity>=ERROR", description: "errors" });

    bed.fake.mutate(full, { filter: "severity>=WARNING" });
    await twice(METRIC, name);
    expect(bed.fake.resource(full)?.filter).toBe("severity>=ERROR");
    await ready(METRIC, name);

    // Import by its id and by its full name.
    await importAndOrphan(METRIC, name, { filter: "severity>=ERROR", description: "errors" }, {});
    await importAndOrphan(METRIC, full, { filter: "severity>=ERROR", description: "errors" }, {});
    expect(bed.fake.resource(full)).toBeDefined();

    // The fake answers what Google answers for a field LogMetric does not have.
    const bad = await raw("POST", `logging/v2/projects/${gcpProject()}/metrics`, {
      name: "x",
      filter: "f",
      colour: 1,
    });
    expect(bad).toMatchObject({ status: 400, body: { error: { status: "INVALID_ARGUMENT" } } });
    expect(bad.body.error?.message).toMatch(/Unknown name "colour"/);
    await remove(METRIC, name, full);
  });
});

describe("Pub/Sub: creates that are a PUT on the full name", () => {
  it("a Topic, a Subscription and a Snapshot of it: created, drift corrected, a changed subscription refused, imported, deleted", {
    timeout: 180_000,
  }, async () => {
    const project = gcpProject();
    const [topic, sub, snap] = [uniqueName("topic"), uniqueName("sub"), uniqueName("snap")];
    const [topicName, subName, snapName] = [
      `projects/${project}/topics/${topic}`,
      `projects/${project}/subscriptions/${sub}`,
      `projects/${project}/snapshots/${snap}`,
    ];
    await create(TOPIC, topic, { labels: { team: "a" } });
    await twice(TOPIC, topic);
    await ready(TOPIC, topic);
    expect(bed.fake.resource(topicName)).toMatchObject({ name: topicName, labels: { team: "a" } });
    await create(SUB, sub, { topic: topicName, ackDeadlineSeconds: 20 });
    await twice(SUB, sub);
    await ready(SUB, sub);
    expect(bed.fake.resource(subName)).toMatchObject({ topic: topicName, ackDeadlineSeconds: 20 });

    await create(SNAP, snap, { subscription: subName, labels: { env: "test" } });
    await twice(SNAP, snap);
    const mr = await ready(SNAP, snap);
    // The snapshot retains its subscription's topic; the subscription is the request's, not the snapshot's.
    expect(bed.fake.resource(snapName)).toMatchObject({
      name: snapName,
      topic: topicName,
      labels: { env: "test" },
    });
    expect(bed.fake.resource(snapName)).not.toHaveProperty("subscription");
    expect(mr?.status?.atProvider).toMatchObject({ name: snapName, topic: topicName });

    // Drift of the labels is put back (UpdateSnapshot: `{snapshot, updateMask}`); so is a topic's.
    bed.fake.mutate(snapName, { labels: { env: "console" } });
    bed.fake.mutate(topicName, { labels: { team: "b" } });
    await twice(SNAP, snap);
    await twice(TOPIC, topic);
    expect(bed.fake.resource(snapName)?.labels).toMatchObject({ env: "test" });
    expect(bed.fake.resource(topicName)?.labels).toMatchObject({ team: "a" });

    // A changed subscription is refused (it is the create's, recorded then): no second snapshot, nothing sent.
    await kube.patch(bed.def(SNAP), snap, { spec: { forProvider: { subscription: `${subName}-other` } } });
    await bed.reconciler.reconcile(keyOf(bed.def(SNAP), snap));
    const changed = await getMr<Json>(kube, bed.def(SNAP), snap);
    expect(conditionOf(changed, "Synced"), JSON.stringify(changed?.status)).toMatchObject({
      status: "False",
      message: expect.stringContaining("subscription"),
    });
    expect(bed.fake.resource(snapName)?.topic).toBe(topicName);
    await kube.patch(bed.def(SNAP), snap, { spec: { forProvider: { subscription: subName } } });
    await twice(SNAP, snap);
    await ready(SNAP, snap);

    await importAndOrphan(
      SNAP,
      snapName,
      { subscription: subName, labels: { env: "test" } },
      { topic: topicName },
    );
    expect(bed.fake.resource(snapName)).toBeDefined();

    // What Google refuses: a field the request does not have, a subscription that does not exist.
    const unknown = await raw("PUT", `pubsub/v1/projects/${project}/snapshots/${snap}-x`, {
      subscription: subName,
      topic: topicName,
      colour: "red",
    });
    expect(unknown).toMatchObject({ status: 400, body: { error: { status: "INVALID_ARGUMENT" } } });
    expect(unknown.body.error?.message).toMatch(/Unknown name "topic"/);
    expect(bed.fake.resource(`${snapName}-x`)).toBeUndefined();
    const missing = await raw("PUT", `pubsub/v1/projects/${project}/snapshots/${snap}-y`, {
      subscription: `${subName}-gone`,
    });
    expect(missing).toMatchObject({ status: 404, body: { error: { status: "NOT_FOUND" } } });

    await remove(SNAP, snap, snapName);
    await remove(SUB, sub, subName);
    await remove(TOPIC, topic, topicName);
  });
});
