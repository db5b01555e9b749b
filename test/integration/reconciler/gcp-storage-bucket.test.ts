import { beforeAll, describe, expect, it } from "vitest";
import { Bucket } from "../../../shared/api/gcp/storage.ts";
import { Annotations, MANAGED_FINALIZER } from "../../../shared/api/meta.ts";
import { Kube, KubeError } from "../../../shared/kube/client.ts";
import { ensureCrds } from "../../support/aws.ts";
import { kubeConfig, newKube, uniqueName } from "../../support/env.ts";
import {
  createGcpProviderConfig,
  fakeStorage,
  gcsEndpoint,
  gcsStats,
  pemBody,
  serviceAccountKey,
} from "../../support/gcp.ts";
import { captureLogger, conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

const gcs = fakeStorage();
const kube = newKube();
const PC = uniqueName("pc-gcs");
const key = serviceAccountKey();

function bucketObject(
  name: string,
  forProvider: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  return {
    apiVersion: Bucket.apiVersion,
    kind: Bucket.kind,
    metadata: { name, ...((extra.metadata as object) ?? {}) },
    spec: {
      forProvider,
      providerConfigRef: { name: PC },
      writeConnectionSecretToRef: { namespace: "default", name: `${name}-conn` },
      ...((extra.spec as object) ?? {}),
    },
  };
}

const cloudBucket = async (name: string) => (await gcs.bucket(name).getMetadata())[0];
const bucketExists = async (name: string) => (await gcs.bucket(name).exists())[0];
/** Requests the GCS fake served while `fn` ran (suites share the fake, but no other suite uses it). */
async function fakeRequestsDuring(fn: () => Promise<unknown>) {
  const before = await gcsStats();
  await fn();
  const after = await gcsStats();
  const delta: Record<string, number> = {};
  for (const [k, v] of Object.entries(after.requests)) {
    const d = v - (before.requests[k] ?? 0);
    if (d !== 0) delta[k] = d;
  }
  return delta;
}

beforeAll(async () => {
  await ensureCrds();
  // The Secret holds a real-looking service-account key: the SDK parses it, the fake cannot check it.
  await createGcpProviderConfig(kube, PC, { credentials: key.json });
});

describe("Cloud Storage Bucket against the real API server and the GCS fake", () => {
  it("creates the bucket, reports Ready and Synced, and writes the connection Secret", async () => {
    const name = uniqueName("b-create");
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    await kube.create(
      Bucket,
      bucketObject(name, {
        location: "us-east1",
        storageClass: "NEARLINE",
        versioning: { enabled: true },
        labels: { team: "a" },
      }),
    );

    await settle(r, keyOf(Bucket, name));

    const mr = await getMr<Record<string, unknown>>(kube, Bucket, name);
    expect(conditionOf(mr, "Ready")).toMatchObject({ status: "True", reason: "Available" });
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
    expect(mr?.metadata.annotations?.[Annotations.externalName]).toBe(name);
    expect(mr?.metadata.finalizers).toContain(MANAGED_FINALIZER);
    // GCS stores the location upper-case; the spec keeps the user's spelling and sees no drift.
    expect(mr?.spec.forProvider.location).toBe("us-east1");
    expect(r.externalCalls.update).toBe(0);
    const cloud = await cloudBucket(name);
    expect(cloud).toMatchObject({
      location: "US-EAST1",
      storageClass: "NEARLINE",
      versioning: { enabled: true },
      labels: { team: "a" },
    });
    expect(mr?.status?.atProvider).toMatchObject({
      url: `gs://${name}`,
      selfLink: `${gcsEndpoint()}/storage/v1/b/${name}`,
      locationType: "region",
    });
    const secret = await kube.getSecret("default", `${name}-conn`);
    const data = Object.fromEntries(
      Object.entries(secret?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]),
    );
    expect(data).toEqual({
      bucket: name,
      url: `gs://${name}`,
      selfLink: `${gcsEndpoint()}/storage/v1/b/${name}`,
    });
    expect(secret?.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: "Bucket",
      name,
      uid: mr?.metadata.uid,
    });
    expect(lines.join("\n") + JSON.stringify(mr?.status)).not.toContain(pemBody(key.privateKey).slice(0, 40));
  });

  it("makes zero API-server writes and exactly one GCS read when the resource is in sync", async () => {
    const name = uniqueName("b-insync");
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, { location: "eu", labels: { a: "b" } }));
    await settle(r, keyOf(Bucket, name));

    const counted = new Kube(kubeConfig());
    const r2 = newReconciler(counted);
    await r2.reconcile(keyOf(Bucket, name)); // warms the ProviderConfig/credentials cache
    counted.resetStats();
    let outcome = "";
    const requests = await fakeRequestsDuring(async () => {
      outcome = (await r2.reconcile(keyOf(Bucket, name))).outcome;
    });

    expect(outcome).toBe("in-sync");
    expect(counted.stats.writes).toBe(0);
    // The object, and its connection Secret: read every time, so one deleted by hand is repaired.
    expect(counted.stats.gets).toBe(2);
    expect(requests).toEqual({ "GET buckets": 1 });
  });

  it("applies a spec change to the cloud, removing a label the spec dropped", async () => {
    const name = uniqueName("b-update");
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, { labels: { keep: "x", drop: "y" } }));
    await settle(r, keyOf(Bucket, name));

    await kube.patch(Bucket, name, {
      // A JSON merge patch: null removes the label from the spec.
      spec: {
        forProvider: {
          storageClass: "COLDLINE",
          versioning: { enabled: true },
          labels: { keep: "z", drop: null },
        },
      },
    });
    const results = await settle(r, keyOf(Bucket, name));

    expect(results.map((x) => x.outcome)).toContain("updated");
    expect(await cloudBucket(name)).toMatchObject({
      storageClass: "COLDLINE",
      versioning: { enabled: true },
      labels: { keep: "z" },
    });
    expect((await cloudBucket(name)).labels).toEqual({ keep: "z" });
    expect(r.externalCalls.update).toBe(1);
  });

  it("corrects an out-of-band change in the cloud on the next reconcile", async () => {
    const name = uniqueName("b-drift");
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, { versioning: { enabled: true }, labels: { env: "dev" } }));
    await settle(r, keyOf(Bucket, name));

    await gcs
      .bucket(name)
      .setMetadata({ versioning: { enabled: false }, labels: { env: "prod", extra: "1" } });
    await settle(r, keyOf(Bucket, name));

    const cloud = await cloudBucket(name);
    expect(cloud.versioning).toEqual({ enabled: true });
    expect(cloud.labels).toEqual({ env: "dev" });
  });

  it("late-initializes the cloud's defaults into the spec and never overwrites a user value", async () => {
    const name = uniqueName("b-lateinit");
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, { storageClass: "ARCHIVE" }));
    await settle(r, keyOf(Bucket, name));

    const mr = await getMr<Record<string, unknown>>(kube, Bucket, name);
    expect(mr?.spec.forProvider).toEqual({
      storageClass: "ARCHIVE",
      location: "US",
      versioning: { enabled: false },
    });
  });

  it("reports an immutable location change in Synced and sends nothing to GCS but the read", async () => {
    const name = uniqueName("b-immutable");
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, { location: "us-east1" }));
    await settle(r, keyOf(Bucket, name));

    await kube.patch(Bucket, name, {
      spec: { forProvider: { location: "europe-west1", storageClass: "NEARLINE" } },
    });
    let outcome = "";
    const requests = await fakeRequestsDuring(async () => {
      outcome = (await r.reconcile(keyOf(Bucket, name))).outcome;
    });

    expect(outcome).toBe("error");
    expect(requests).toEqual({ "GET buckets": 1 });
    const synced = conditionOf(await getMr(kube, Bucket, name), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain(
      'cannot update immutable field(s) location (spec: "europe-west1", cloud: "US-EAST1")',
    );
    expect(await cloudBucket(name)).toMatchObject({ location: "US-EAST1", storageClass: "STANDARD" });
  });

  it("makes no cloud calls at all while paused", async () => {
    const name = uniqueName("b-paused");
    const r = newReconciler(kube);
    await kube.create(
      Bucket,
      bucketObject(name, {}, { metadata: { annotations: { [Annotations.paused]: "true" } } }),
    );

    let outcome = "";
    const requests = await fakeRequestsDuring(async () => {
      outcome = (await r.reconcile(keyOf(Bucket, name))).outcome;
    });

    expect(outcome).toBe("paused");
    expect(requests).toEqual({});
    expect(r.externalCalls).toEqual({ observe: 0, create: 0, update: 0, delete: 0 });
    expect(conditionOf(await getMr(kube, Bucket, name), "Synced")).toMatchObject({
      status: "False",
      reason: "ReconcilePaused",
    });
    expect(await bucketExists(name)).toBe(false);
  });

  it("imports an existing bucket observe-only: fills the spec ([Observe, LateInitialize]), never modifies or deletes it", async () => {
    const cloudName = uniqueName("b-import-cloud");
    await gcs.createBucket(cloudName, { location: "EU", storageClass: "COLDLINE", labels: { owner: "x" } });
    const name = uniqueName("b-import");
    const r = newReconciler(kube);
    await kube.create(
      Bucket,
      bucketObject(
        name,
        {},
        {
          metadata: { annotations: { [Annotations.externalName]: cloudName } },
          spec: { managementPolicies: ["Observe", "LateInitialize"] },
        },
      ),
    );

    await settle(r, keyOf(Bucket, name));
    const mr = await getMr<Record<string, unknown>>(kube, Bucket, name);
    expect(mr?.spec.forProvider).toEqual({
      location: "EU",
      storageClass: "COLDLINE",
      versioning: { enabled: false },
      labels: { owner: "x" },
    });
    expect(conditionOf(mr, "Ready")?.status).toBe("True");

    await kube.patch(Bucket, name, { spec: { forProvider: { storageClass: "STANDARD" } } });
    const requests = await fakeRequestsDuring(() => settle(r, keyOf(Bucket, name)));
    expect(requests["PATCH buckets"]).toBeUndefined();
    expect((await cloudBucket(cloudName)).storageClass).toBe("COLDLINE");

    await kube.delete(Bucket, name);
    await settle(r, keyOf(Bucket, name));
    expect(await getMr(kube, Bucket, name)).toBeUndefined();
    expect(await bucketExists(cloudName)).toBe(true);
    expect(r.externalCalls).toMatchObject({ create: 0, update: 0, delete: 0 });
  });

  it("names the cloud resource after the external-name annotation", async () => {
    const name = uniqueName("b-extname");
    const cloudName = uniqueName("b-cloud-name");
    const r = newReconciler(kube);
    await kube.create(
      Bucket,
      bucketObject(name, {}, { metadata: { annotations: { [Annotations.externalName]: cloudName } } }),
    );
    await settle(r, keyOf(Bucket, name));
    expect(await bucketExists(cloudName)).toBe(true);
    expect(await bucketExists(name)).toBe(false);
  });

  it("deletes the cloud resource, then removes the finalizer (deletionPolicy Delete)", async () => {
    const name = uniqueName("b-delete");
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, {}));
    await settle(r, keyOf(Bucket, name));

    await kube.delete(Bucket, name);
    expect((await getMr(kube, Bucket, name))?.metadata.deletionTimestamp).toBeDefined();
    const results = await settle(r, keyOf(Bucket, name));

    expect(results.map((x) => x.outcome)).toEqual(expect.arrayContaining(["deleting", "deleted"]));
    expect(await bucketExists(name)).toBe(false);
    expect(await getMr(kube, Bucket, name)).toBeUndefined();
    expect(await kube.getSecret("default", `${name}-conn`)).toBeUndefined();
  });

  it("keeps the cloud resource with deletionPolicy Orphan", async () => {
    const name = uniqueName("b-orphan");
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, {}, { spec: { deletionPolicy: "Orphan" } }));
    await settle(r, keyOf(Bucket, name));

    await kube.delete(Bucket, name);
    const results = await settle(r, keyOf(Bucket, name));

    expect(results.at(-1)?.outcome).toBe("orphaned");
    expect(await getMr(kube, Bucket, name)).toBeUndefined();
    expect(await bucketExists(name)).toBe(true);
  });

  it("rejects an unknown storage class at the API server", async () => {
    const name = uniqueName("b-invalid");
    const err = await kube.create(Bucket, bucketObject(name, { storageClass: "glacier" })).catch((e) => e);
    expect(err).toBeInstanceOf(KubeError);
    expect((err as KubeError).status).toBe(422);
    expect((err as Error).message).toContain("spec.forProvider.storageClass");
  });

  it("reports a bucket name GCS refuses in Synced", async () => {
    const name = uniqueName("b-badname");
    const bad = `${name}-google`; // names containing "google" are refused
    const r = newReconciler(kube);
    await kube.create(
      Bucket,
      bucketObject(name, {}, { metadata: { annotations: { [Annotations.externalName]: bad } } }),
    );
    await settle(r, keyOf(Bucket, name), 1);
    const mr = await getMr(kube, Bucket, name);
    const synced = conditionOf(mr, "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain("cannot create external resource");
    expect(synced?.message).toContain("Invalid bucket name");
    expect(mr?.metadata.annotations?.[Annotations.createFailed]).toBeDefined();
  });

  it("names the ProviderConfig when its service-account key is malformed", async () => {
    const pc = uniqueName("pc-gcs-bad");
    await createGcpProviderConfig(kube, pc, {
      credentials: JSON.stringify({ ...JSON.parse(serviceAccountKey().json), private_key: "secret-ish" }),
    });
    const name = uniqueName("b-badcreds");
    const r = newReconciler(kube);
    await kube.create(Bucket, {
      ...bucketObject(name, {}),
      spec: { forProvider: {}, providerConfigRef: { name: pc } },
    });
    const requests = await fakeRequestsDuring(() => settle(r, keyOf(Bucket, name), 1));
    const synced = conditionOf(await getMr(kube, Bucket, name), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain(`ProviderConfig "${pc}"`);
    expect(synced?.message).toContain("private_key is not a PEM-encoded private key");
    expect(synced?.message).not.toContain("secret-ish");
    expect(requests).toEqual({});
  });
});
