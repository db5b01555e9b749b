import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  GetPublicAccessBlockCommand,
  HeadBucketCommand,
  ListBucketsCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { beforeAll, describe, expect, it } from "vitest";
import { Bucket } from "../../../shared/api/aws/s3.ts";
import { Annotations, MANAGED_FINALIZER } from "../../../shared/api/meta.ts";
import { Kube, KubeError, type KubeObject } from "../../../shared/kube/client.ts";
import { createAwsProviderConfig, ensureCrds, motoS3 } from "../../support/aws.ts";
import { env, kubeConfig, newKube, uniqueName } from "../../support/env.ts";
import { captureLogger, conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

const s3 = motoS3();
const kube = newKube();
const PC = uniqueName("pc-s3");

// Bucket names must be valid S3 names: uniqueName gives lowercase letters, digits and dashes, < 63 chars.
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

const bucketExists = async (name: string) => {
  try {
    await s3.send(new HeadBucketCommand({ Bucket: name }));
    return true;
  } catch (err) {
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
    throw err;
  }
};
const bucketsNamed = async (name: string) =>
  ((await s3.send(new ListBucketsCommand({}))).Buckets ?? []).filter((b) => b.Name === name);
const versioningOf = async (name: string) =>
  (await s3.send(new GetBucketVersioningCommand({ Bucket: name }))).Status;
const tagsOf = async (name: string) => {
  try {
    const out = await s3.send(new GetBucketTaggingCommand({ Bucket: name }));
    return Object.fromEntries((out.TagSet ?? []).map((t) => [t.Key, t.Value]));
  } catch (err) {
    if ((err as Error).name === "NoSuchTagSet") return {};
    throw err;
  }
};
const publicAccessBlockOf = async (name: string) =>
  (await s3.send(new GetPublicAccessBlockCommand({ Bucket: name }))).PublicAccessBlockConfiguration;
const secretData = async (name: string) => {
  const secret = await kube.getSecret("default", name);
  return Object.fromEntries(
    Object.entries(secret?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]),
  );
};

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
});

describe("S3 Bucket against the real API server and moto", () => {
  it("creates the bucket, reports Ready and Synced, and writes the connection Secret", async () => {
    const name = uniqueName("b-create");
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    await kube.create(Bucket, bucketObject(name, { versioning: "Enabled", tags: { team: "a" } }));

    await settle(r, keyOf(Bucket, name));

    const mr = await getMr(kube, Bucket, name);
    expect(conditionOf(mr, "Ready")).toMatchObject({ status: "True", reason: "Available" });
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
    expect(mr?.metadata.annotations?.[Annotations.externalName]).toBe(name);
    expect(mr?.metadata.finalizers).toContain(MANAGED_FINALIZER);
    expect(mr?.status?.atProvider).toEqual({ arn: `arn:aws:s3:::${name}`, region: "us-east-1" });
    expect(await versioningOf(name)).toBe("Enabled");
    expect(await tagsOf(name)).toEqual({ team: "a" });
    const data = await secretData(`${name}-conn`);
    expect(data).toEqual({
      bucket: name,
      region: "us-east-1",
      endpoint: `${env("AWS_ENDPOINT_URL").replace(/\/$/, "")}/${name}`,
    });
    const secret = await kube.getSecret("default", `${name}-conn`);
    expect(secret?.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: "Bucket",
      name,
      uid: mr?.metadata.uid,
    });
    // Credentials never reach logs or status; connection values never reach logs.
    expect(lines.join("\n") + JSON.stringify(mr?.status)).not.toContain("testing-secret-value");
    expect(lines.join("\n")).not.toContain(data.endpoint);
  });

  it("makes zero API-server writes when the resource is in sync", async () => {
    const name = uniqueName("b-insync");
    const r = newReconciler(kube);
    await kube.create(
      Bucket,
      bucketObject(name, {
        versioning: "Enabled",
        tags: { team: "a", env: "dev" },
        publicAccessBlock: { restrictPublicBuckets: true, blockPublicAcls: true },
      }),
    );
    await settle(r, keyOf(Bucket, name));

    const counted = new Kube(kubeConfig());
    const r2 = newReconciler(counted);
    await r2.reconcile(keyOf(Bucket, name)); // warms the ProviderConfig/credentials/connection caches
    counted.resetStats();
    const res = await r2.reconcile(keyOf(Bucket, name));

    expect(res.outcome).toBe("in-sync");
    expect(counted.stats.writes).toBe(0);
    // The object, and its connection Secret: read every time, so one deleted by hand is repaired.
    expect(counted.stats.gets).toBe(2);
    expect(r2.externalCalls).toMatchObject({ create: 0, update: 0, delete: 0 });
  });

  it("applies a spec change (versioning, tags, public access block) to the cloud", async () => {
    const name = uniqueName("b-update");
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, { versioning: "Enabled", tags: { team: "a", old: "x" } }));
    await settle(r, keyOf(Bucket, name));

    await kube.patch(Bucket, name, {
      spec: {
        forProvider: {
          versioning: "Suspended",
          tags: { team: "b", env: "dev", old: null }, // null removes a key in a merge patch
          publicAccessBlock: { blockPublicAcls: true, blockPublicPolicy: true },
        },
      },
    });
    const results = await settle(r, keyOf(Bucket, name));

    expect(results.map((x) => x.outcome)).toContain("updated");
    expect(r.externalCalls.update).toBe(1);
    expect(await versioningOf(name)).toBe("Suspended");
    expect(await tagsOf(name)).toEqual({ team: "b", env: "dev" });
    expect(await publicAccessBlockOf(name)).toEqual({
      BlockPublicAcls: true,
      IgnorePublicAcls: false,
      BlockPublicPolicy: true,
      RestrictPublicBuckets: false,
    });
    expect(conditionOf(await getMr(kube, Bucket, name), "Synced")?.status).toBe("True");
  });

  it("corrects an out-of-band change in the cloud on the next reconcile", async () => {
    const name = uniqueName("b-drift");
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, { versioning: "Enabled", tags: { team: "a" } }));
    await settle(r, keyOf(Bucket, name));

    await s3.send(
      new PutBucketVersioningCommand({ Bucket: name, VersioningConfiguration: { Status: "Suspended" } }),
    );
    await s3.send(
      new PutBucketTaggingCommand({
        Bucket: name,
        Tagging: {
          TagSet: [
            { Key: "team", Value: "rogue" },
            { Key: "x", Value: "y" },
          ],
        },
      }),
    );
    const results = await settle(r, keyOf(Bucket, name));

    expect(results.map((x) => x.outcome)).toContain("updated");
    expect(await versioningOf(name)).toBe("Enabled");
    expect(await tagsOf(name)).toEqual({ team: "a" });
  });

  it("late-initializes what the cloud reports and never overwrites a user value", async () => {
    const name = uniqueName("b-lateinit");
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, { tags: { team: "a" } }));
    await settle(r, keyOf(Bucket, name));

    // moto reports no versioning status for a bucket that never had one: nothing to fill but the region.
    let mr = await getMr<Record<string, unknown>>(kube, Bucket, name);
    expect(mr?.spec.forProvider).toEqual({ region: "us-east-1", tags: { team: "a" } });

    // Once versioning is set in the cloud, the cloud reports it and the empty field takes its value.
    await s3.send(
      new PutBucketVersioningCommand({ Bucket: name, VersioningConfiguration: { Status: "Enabled" } }),
    );
    await settle(r, keyOf(Bucket, name));
    mr = await getMr<Record<string, unknown>>(kube, Bucket, name);
    expect(mr?.spec.forProvider).toEqual({ region: "us-east-1", versioning: "Enabled", tags: { team: "a" } });
    expect(r.externalCalls.update).toBe(0);

    // A value the user set is never replaced by the cloud's: the cloud is corrected instead.
    await s3.send(
      new PutBucketVersioningCommand({ Bucket: name, VersioningConfiguration: { Status: "Suspended" } }),
    );
    await settle(r, keyOf(Bucket, name));
    mr = await getMr<Record<string, unknown>>(kube, Bucket, name);
    expect(mr?.spec.forProvider.versioning).toBe("Enabled");
    expect(await versioningOf(name)).toBe("Enabled");
  });

  it("reports an immutable region change in Synced, leaves the cloud untouched and makes no second bucket", async () => {
    const name = uniqueName("b-immutable");
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, { versioning: "Enabled" }));
    await settle(r, keyOf(Bucket, name));

    await kube.patch(Bucket, name, {
      spec: { forProvider: { region: "eu-west-1", versioning: "Suspended" } },
    });
    const [res] = await settle(r, keyOf(Bucket, name), 1);

    expect(res?.outcome).toBe("error");
    const mr = await getMr(kube, Bucket, name);
    const synced = conditionOf(mr, "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain(
      'cannot update immutable field(s) region (spec: "eu-west-1", cloud: "us-east-1")',
    );
    expect(synced?.message).toContain("left unchanged");
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    expect(await versioningOf(name)).toBe("Enabled");
    expect((await s3.send(new HeadBucketCommand({ Bucket: name }))).BucketRegion).toBe("us-east-1");
    expect(await bucketsNamed(name)).toHaveLength(1);
    expect(r.externalCalls).toMatchObject({ create: 1, update: 0, delete: 0 });
  });

  it("makes no cloud calls at all while paused", async () => {
    const name = uniqueName("b-paused");
    const r = newReconciler(kube);
    await kube.create(
      Bucket,
      bucketObject(name, {}, { metadata: { annotations: { [Annotations.paused]: "true" } } }),
    );

    const res = await r.reconcile(keyOf(Bucket, name));

    expect(res.outcome).toBe("paused");
    expect(r.externalCalls).toEqual({ observe: 0, create: 0, update: 0, delete: 0 });
    expect(conditionOf(await getMr(kube, Bucket, name), "Synced")).toMatchObject({
      status: "False",
      reason: "ReconcilePaused",
    });
    expect(await bucketExists(name)).toBe(false);
  });

  it("treats empty management policies as paused", async () => {
    const name = uniqueName("b-nopolicies");
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, {}, { spec: { managementPolicies: [] } }));

    const res = await r.reconcile(keyOf(Bucket, name));

    expect(res.outcome).toBe("paused");
    expect(r.externalCalls).toEqual({ observe: 0, create: 0, update: 0, delete: 0 });
    expect(await bucketExists(name)).toBe(false);
  });

  it("imports an existing bucket observe-only: fills the spec ([Observe, LateInitialize]), never modifies or deletes it", async () => {
    const cloudName = uniqueName("b-import-cloud");
    await s3.send(new CreateBucketCommand({ Bucket: cloudName }));
    await s3.send(
      new PutBucketVersioningCommand({ Bucket: cloudName, VersioningConfiguration: { Status: "Enabled" } }),
    );
    await s3.send(
      new PutBucketTaggingCommand({
        Bucket: cloudName,
        Tagging: { TagSet: [{ Key: "owner", Value: "legacy" }] },
      }),
    );
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
    expect(mr?.spec.forProvider).toMatchObject({ region: "us-east-1", versioning: "Enabled" });
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    expect((await secretData(`${name}-conn`)).bucket).toBe(cloudName);

    await kube.patch(Bucket, name, {
      spec: { forProvider: { versioning: "Suspended", tags: { owner: "me" } } },
    });
    await settle(r, keyOf(Bucket, name));
    expect(await versioningOf(cloudName)).toBe("Enabled");
    expect(await tagsOf(cloudName)).toEqual({ owner: "legacy" });

    await kube.delete(Bucket, name);
    await settle(r, keyOf(Bucket, name));
    expect(await getMr(kube, Bucket, name)).toBeUndefined();
    expect(await bucketExists(cloudName)).toBe(true);
    expect(r.externalCalls).toMatchObject({ create: 0, update: 0, delete: 0 });
  });

  it("reports observe-only import of a bucket that does not exist", async () => {
    const name = uniqueName("b-import-missing");
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, {}, { spec: { managementPolicies: ["Observe"] } }));

    const [res] = await settle(r, keyOf(Bucket, name), 1);

    expect(res?.outcome).toBe("blocked"); // looked at again at the poll interval, not a failing message
    expect(conditionOf(await getMr(kube, Bucket, name), "Synced")?.message).toContain(
      "external resource does not exist",
    );
    expect(await bucketExists(name)).toBe(false);
  });

  it("names the bucket after the external-name annotation", async () => {
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
    expect((await secretData(`${name}-conn`)).bucket).toBe(cloudName);
  });

  it("deletes the bucket, then removes the finalizer (deletionPolicy Delete)", async () => {
    const name = uniqueName("b-delete");
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, {}));
    await settle(r, keyOf(Bucket, name));
    expect(await kube.getSecret("default", `${name}-conn`)).toBeDefined();

    await kube.delete(Bucket, name);
    const mid = await getMr(kube, Bucket, name);
    expect(mid?.metadata.deletionTimestamp).toBeDefined(); // held by the finalizer until the cloud is clean
    const results = await settle(r, keyOf(Bucket, name));

    expect(results.map((x) => x.outcome)).toEqual(expect.arrayContaining(["deleting", "deleted"]));
    expect(r.externalCalls.delete).toBe(1);
    expect(await bucketExists(name)).toBe(false);
    expect(await getMr(kube, Bucket, name)).toBeUndefined();
    expect(await kube.getSecret("default", `${name}-conn`)).toBeUndefined();
  });

  it("keeps the bucket with deletionPolicy Orphan", async () => {
    const name = uniqueName("b-orphan");
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, {}, { spec: { deletionPolicy: "Orphan" } }));
    await settle(r, keyOf(Bucket, name));

    await kube.delete(Bucket, name);
    const results = await settle(r, keyOf(Bucket, name));

    expect(results.at(-1)?.outcome).toBe("orphaned");
    expect(r.externalCalls.delete).toBe(0);
    expect(await getMr(kube, Bucket, name)).toBeUndefined();
    expect(await bucketExists(name)).toBe(true);
    expect(await kube.getSecret("default", `${name}-conn`)).toBeUndefined();
  });

  it("keeps the finalizer and says why when the bucket to delete is not empty", async () => {
    const name = uniqueName("b-notempty");
    const r = newReconciler(kube);
    await kube.create(Bucket, bucketObject(name, {}));
    await settle(r, keyOf(Bucket, name));
    await s3.send(new PutObjectCommand({ Bucket: name, Key: "keep.txt", Body: "data" }));

    await kube.delete(Bucket, name);
    const [res] = await settle(r, keyOf(Bucket, name), 1);

    expect(res?.outcome).toBe("error");
    const mr = await getMr(kube, Bucket, name);
    expect(mr?.metadata.finalizers).toContain(MANAGED_FINALIZER);
    expect(conditionOf(mr, "Ready")).toMatchObject({ status: "False", reason: "Deleting" });
    const synced = conditionOf(mr, "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain(`cannot delete external resource: bucket ${name} is not empty`);
    expect(await bucketExists(name)).toBe(true);

    // Once the user empties it, the delete goes through.
    await s3.send(new DeleteObjectCommand({ Bucket: name, Key: "keep.txt" }));
    await settle(r, keyOf(Bucket, name));
    expect(await bucketExists(name)).toBe(false);
    expect(await getMr(kube, Bucket, name)).toBeUndefined();
  });

  it("calls Create exactly once for 20 concurrent reconciles of one new object", async () => {
    const name = uniqueName("b-concurrent");
    await kube.create(Bucket, bucketObject(name, {}));
    // 20 independent workers (own reconciler and API client each), as 20 Lambda containers would be.
    const workers = Array.from({ length: 20 }, () => newReconciler(new Kube(kubeConfig())));

    await Promise.all(workers.map((w) => w.reconcile(keyOf(Bucket, name))));
    await Promise.all(workers.map((w) => settle(w, keyOf(Bucket, name))));

    const creates = workers.reduce((n, w) => n + w.externalCalls.create, 0);
    expect(creates).toBe(1);
    expect(conditionOf(await getMr(kube, Bucket, name), "Ready")?.status).toBe("True");
  });

  it("recovers from a crash after Create and before the succeeded annotation without a second bucket", async () => {
    const name = uniqueName("b-crash");
    await kube.create(Bucket, bucketObject(name, { versioning: "Enabled" }));
    // The API server refuses the write that records success: the state a crash at that point leaves.
    class CrashBeforeSucceeded extends Kube {
      override async patch<T extends KubeObject>(...args: Parameters<Kube["patch"]>): Promise<T> {
        const annotations = (args[2].metadata as { annotations?: Record<string, string> } | undefined)
          ?.annotations;
        if (annotations?.[Annotations.createSucceeded]) throw new KubeError("injected crash", 503);
        return super.patch<T>(...args);
      }
    }
    const crashing = newReconciler(new CrashBeforeSucceeded(kubeConfig()), { random: () => 0 });
    const first = await crashing.reconcile(keyOf(Bucket, name));
    expect(first.outcome).toBe("error");
    expect(crashing.externalCalls.create).toBe(1);
    const stuck = await getMr(kube, Bucket, name);
    expect(stuck?.metadata.annotations?.[Annotations.createPending]).toBeDefined();
    expect(stuck?.metadata.annotations?.[Annotations.createSucceeded]).toBeUndefined();

    const { lines, logger } = captureLogger();
    const restarted = newReconciler(kube, { logger });
    await settle(restarted, keyOf(Bucket, name));

    expect(restarted.externalCalls.create).toBe(0);
    expect(lines.join("\n")).toContain("recovered an interrupted create");
    const mr = await getMr(kube, Bucket, name);
    expect(mr?.metadata.annotations?.[Annotations.createSucceeded]).toBeDefined();
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    expect(await bucketsNamed(name)).toHaveLength(1);
    expect(await versioningOf(name)).toBe("Enabled");
  });

  it("rejects a spec of the wrong type at the API server", async () => {
    const name = uniqueName("b-invalid");
    const err = await kube.create(Bucket, bucketObject(name, { versioning: "On" })).catch((e) => e);
    expect(err).toBeInstanceOf(KubeError);
    expect((err as KubeError).status).toBe(422);
    expect((err as Error).message).toContain("spec.forProvider.versioning");
  });

  it("reports a bucket name the cloud refuses in Synced without crashing", async () => {
    const name = uniqueName("b-badname");
    const r = newReconciler(kube);
    // Two characters: S3 bucket names need at least three.
    await kube.create(
      Bucket,
      bucketObject(name, {}, { metadata: { annotations: { [Annotations.externalName]: "ab" } } }),
    );

    const [res] = await settle(r, keyOf(Bucket, name), 1);

    expect(res?.outcome).toBe("error");
    const mr = await getMr(kube, Bucket, name);
    const synced = conditionOf(mr, "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain("cannot create external resource");
    expect(mr?.metadata.annotations?.[Annotations.createFailed]).toBeDefined();
  });

  it("names the ProviderConfig when its credentials are bad, without leaking them", async () => {
    const badPc = uniqueName("pc-s3-bad");
    await createAwsProviderConfig(kube, badPc, { credentials: "[default]\naws_access_key_id = only-half\n" });
    const name = uniqueName("b-badcreds");
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    await kube.create(Bucket, {
      ...bucketObject(name, {}),
      spec: { forProvider: {}, providerConfigRef: { name: badPc } },
    });

    await settle(r, keyOf(Bucket, name), 1);

    const mr = await getMr(kube, Bucket, name);
    const message = conditionOf(mr, "Synced")?.message;
    expect(message).toContain(`ProviderConfig "${badPc}"`);
    expect(message).toContain("aws_secret_access_key");
    expect(lines.join("\n") + JSON.stringify(mr?.status)).not.toContain("only-half");
    expect(await bucketExists(name)).toBe(false);
  });
});
