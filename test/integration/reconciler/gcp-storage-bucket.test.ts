import { describe, expect, it } from "vitest";
import { Bucket } from "../../../shared/api/gcp/storage.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import {
  connectionData,
  describeManagedKind,
  expectAvailable,
  expectSecretOwnedBy,
  type MrOptions,
  managedObject,
  useProviderConfig,
} from "../../support/conformance.ts";
import { defaultTags } from "../../support/default-tags.ts";
import { newKube, uniqueName } from "../../support/env.ts";
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
const key = serviceAccountKey();
// The Secret holds a real-looking service-account key: the SDK parses it, the fake cannot check it.
const PC = useProviderConfig("gcp", "pc-gcs", { credentials: key.json });

const bucketObject = (name: string, forProvider: Record<string, unknown> = {}, o: MrOptions = {}) =>
  managedObject(Bucket, name, PC, { forProvider, ...o });

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

describeManagedKind({
  type: Bucket,
  cloud: "the GCS fake",
  prefix: "b",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: (b) => (b === "inSync" ? { location: "eu", labels: { a: "b" } } : {}),
  invalidSpec: { forProvider: { storageClass: "glacier" }, field: "spec.forProvider.storageClass" },
  exists: bucketExists,
  requests: { during: fakeRequestsDuring, isRead: (k) => k.startsWith("GET ") },
  inSyncRequests: { "GET buckets": 1 },
  import: {
    arrange: async (cloudName) => {
      await gcs.createBucket(cloudName, { location: "EU", storageClass: "COLDLINE", labels: { owner: "x" } });
    },
    expectSpec: (forProvider) =>
      expect(forProvider).toEqual({
        location: "EU",
        storageClass: "COLDLINE",
        versioning: { enabled: false },
        labels: { owner: "x" },
        uniformBucketLevelAccess: false,
      }),
    change: { storageClass: "STANDARD" },
    expectUnchanged: async (cloudName) =>
      expect((await cloudBucket(cloudName)).storageClass).toBe("COLDLINE"),
  },
});

describe("Cloud Storage Bucket field mapping and quirks against the real API server and the GCS fake", () => {
  it("sets uniform bucket-level access, CORS and website, and puts them back when changed out of band", async () => {
    const name = uniqueName("b-web");
    const r = newReconciler(kube);
    const cors = [
      {
        origin: ["https://example.com"],
        method: ["GET", "HEAD"],
        responseHeader: ["*"],
        maxAgeSeconds: 3600,
      },
    ];
    const website = { mainPageSuffix: "index.html", notFoundPage: "404.html" };
    await kube.create(Bucket, bucketObject(name, { uniformBucketLevelAccess: true, cors, website }));
    await settle(r, keyOf(Bucket, name));
    expectAvailable(await getMr(kube, Bucket, name), name);
    expect(r.externalCalls.update).toBe(0);
    expect(await cloudBucket(name)).toMatchObject({
      iamConfiguration: { uniformBucketLevelAccess: { enabled: true } },
      cors,
      website,
    });

    // In the console: ACLs back on, another origin, no 404 page.
    await gcs.bucket(name).setMetadata({
      iamConfiguration: { uniformBucketLevelAccess: { enabled: false } },
      cors: [{ origin: ["*"], method: ["GET"] }],
      website: { mainPageSuffix: "index.html" },
    });
    const during = await fakeRequestsDuring(() => settle(r, keyOf(Bucket, name)));
    expect(during["PATCH buckets"]).toBe(1);
    expect(await cloudBucket(name)).toMatchObject({
      iamConfiguration: { uniformBucketLevelAccess: { enabled: true } },
      cors,
      website,
    });
    // And in sync after: no second PATCH.
    const after = await fakeRequestsDuring(() => settle(r, keyOf(Bucket, name)));
    expect(after["PATCH buckets"]).toBeUndefined();
  });

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
    expectAvailable(mr, name);
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
    const data = await connectionData(kube, name);
    expect(data).toEqual({
      bucket: name,
      url: `gs://${name}`,
      selfLink: `${gcsEndpoint()}/storage/v1/b/${name}`,
    });
    await expectSecretOwnedBy(kube, mr);
    expect(lines.join("\n") + JSON.stringify(mr?.status)).not.toContain(pemBody(key.privateKey).slice(0, 40));
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
    expect((await cloudBucket(name)).labels).toEqual({ ...defaultTags(Bucket, name, PC), keep: "z" });
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
    expect(cloud.labels).toEqual({ ...defaultTags(Bucket, name, PC), env: "dev" });
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
      uniformBucketLevelAccess: false,
    });
  });

  it("refuses a changed location as a changed home and sends nothing to GCS, not even a read", async () => {
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
    // A changed location is a changed home: refused before any call there (issue 36).
    expect(requests).toEqual({});
    const synced = conditionOf(await getMr(kube, Bucket, name), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain(
      'lives in location "us-east1", but its spec and ProviderConfig now reach location "europe-west1"',
    );
    expect(await cloudBucket(name)).toMatchObject({ location: "US-EAST1", storageClass: "STANDARD" });
  });

  it("reports a bucket name GCS refuses in Synced", async () => {
    const name = uniqueName("b-badname");
    const bad = `${name}-google`; // names containing "google" are refused
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, {}, { annotations: { [Annotations.externalName]: bad } }));
    await settle(r, keyOf(Bucket, name), 1);
    const mr = await getMr(kube, Bucket, name);
    const synced = conditionOf(mr, "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain("cannot create external resource");
    // The fake is not Google's host: its status and reason code are kept, its wording is not (only
    // Google's own hosts' messages reach a condition; test/unit/providers/google-rest-boundary.test.ts).
    expect(synced?.message).toContain("HTTP 400 (Content-Type application/json");
    expect(synced?.message).toMatch(/: invalid$/);
    expect(synced?.message).not.toContain(bad);
    expect(mr?.metadata.annotations?.[Annotations.createFailed]).toBeDefined();
  });

  it("names the ProviderConfig when its service-account key is malformed", async () => {
    const pc = uniqueName("pc-gcs-bad");
    await createGcpProviderConfig(kube, pc, {
      credentials: JSON.stringify({ ...JSON.parse(serviceAccountKey().json), private_key: "secret-ish" }),
    });
    const name = uniqueName("b-badcreds");
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, {}, { providerConfig: pc, connectionSecret: false }));
    const requests = await fakeRequestsDuring(() => settle(r, keyOf(Bucket, name), 1));
    const synced = conditionOf(await getMr(kube, Bucket, name), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain(`ProviderConfig "${pc}"`);
    expect(synced?.message).toContain("private_key is not a PEM-encoded private key");
    expect(synced?.message).not.toContain("secret-ish");
    expect(requests).toEqual({});
  });
});
