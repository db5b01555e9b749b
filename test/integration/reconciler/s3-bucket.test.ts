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
import { describe, expect, it } from "vitest";
import { Bucket } from "../../../shared/api/aws/s3.ts";
import { Annotations, MANAGED_FINALIZER } from "../../../shared/api/meta.ts";
import { createAwsProviderConfig, motoS3 } from "../../support/aws.ts";
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
import { env, newKube, uniqueName } from "../../support/env.ts";
import { captureLogger, conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

const s3 = motoS3();
const kube = newKube();
const PC = useProviderConfig("aws", "pc-s3");

// Bucket names must be valid S3 names: uniqueName gives lowercase letters, digits and dashes, < 63 chars.
const bucketObject = (name: string, forProvider: Record<string, unknown> = {}, o: MrOptions = {}) =>
  managedObject(Bucket, name, PC, { forProvider, ...o });

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
const secretData = (mrName: string) => connectionData(kube, mrName);

describeManagedKind({
  type: Bucket,
  cloud: "moto",
  prefix: "b",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: (b) =>
    b === "inSync"
      ? {
          versioning: "Enabled",
          tags: { team: "a", env: "dev" },
          publicAccessBlock: { restrictPublicBuckets: true, blockPublicAcls: true },
        }
      : b === "crashRecovery"
        ? { versioning: "Enabled" }
        : {},
  invalidSpec: { forProvider: { versioning: "On" }, field: "spec.forProvider.versioning" },
  exists: bucketExists,
  count: async (name) => (await bucketsNamed(name)).length,
  import: {
    arrange: async (cloudName) => {
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
    },
    expectSpec: (forProvider) =>
      expect(forProvider).toMatchObject({ region: "us-east-1", versioning: "Enabled" }),
    change: { versioning: "Suspended", tags: { owner: "me" } },
    expectUnchanged: async (cloudName) => {
      expect(await versioningOf(cloudName)).toBe("Enabled");
      expect(await tagsOf(cloudName)).toEqual({ owner: "legacy" });
    },
  },
  checks: {
    import: async ({ name, cloudName }) => expect((await secretData(name)).bucket).toBe(cloudName),
    externalName: async ({ name, cloudName }) => expect((await secretData(name)).bucket).toBe(cloudName),
    crashRecovery: async ({ name }) => expect(await versioningOf(name)).toBe("Enabled"),
  },
});

describe("S3 Bucket field mapping and quirks against the real API server and moto", () => {
  it("creates the bucket, reports Ready and Synced, and writes the connection Secret", async () => {
    const name = uniqueName("b-create");
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    await kube.create(Bucket, bucketObject(name, { versioning: "Enabled", tags: { team: "a" } }));

    await settle(r, keyOf(Bucket, name));

    const mr = await getMr(kube, Bucket, name);
    expectAvailable(mr, name);
    expect(mr?.status?.atProvider).toEqual({ arn: `arn:aws:s3:::${name}`, region: "us-east-1" });
    expect(await versioningOf(name)).toBe("Enabled");
    expect(await tagsOf(name)).toEqual({ ...defaultTags(Bucket, name, PC), team: "a" });
    const data = await secretData(name);
    expect(data).toEqual({
      bucket: name,
      region: "us-east-1",
      endpoint: `${env("AWS_ENDPOINT_URL").replace(/\/$/, "")}/${name}`,
    });
    await expectSecretOwnedBy(kube, mr);
    // Credentials never reach logs or status; connection values never reach logs.
    expect(lines.join("\n") + JSON.stringify(mr?.status)).not.toContain("testing-secret-value");
    expect(lines.join("\n")).not.toContain(data.endpoint);
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
    expect(await tagsOf(name)).toEqual({ ...defaultTags(Bucket, name, PC), team: "b", env: "dev" });
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
    expect(await tagsOf(name)).toEqual({ ...defaultTags(Bucket, name, PC), team: "a" });
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
      // A changed region is a changed home: refused before any read there (issue 36).
      'lives in region "us-east-1", but its spec and ProviderConfig now reach region "eu-west-1"',
    );
    expect(synced?.message).toContain("nothing was read, created or changed there");
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    expect(await versioningOf(name)).toBe("Enabled");
    expect((await s3.send(new HeadBucketCommand({ Bucket: name }))).BucketRegion).toBe("us-east-1");
    expect(await bucketsNamed(name)).toHaveLength(1);
    expect(r.externalCalls).toMatchObject({ create: 1, update: 0, delete: 0 });
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

  it("reports a bucket name the cloud refuses in Synced without crashing", async () => {
    const name = uniqueName("b-badname");
    const r = newReconciler(kube);
    // Two characters: S3 bucket names need at least three.
    await kube.create(Bucket, bucketObject(name, {}, { annotations: { [Annotations.externalName]: "ab" } }));

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
    await kube.create(Bucket, bucketObject(name, {}, { providerConfig: badPc, connectionSecret: false }));

    await settle(r, keyOf(Bucket, name), 1);

    const mr = await getMr(kube, Bucket, name);
    const message = conditionOf(mr, "Synced")?.message;
    expect(message).toContain(`ProviderConfig "${badPc}"`);
    expect(message).toContain("aws_secret_access_key");
    expect(lines.join("\n") + JSON.stringify(mr?.status)).not.toContain("only-half");
    expect(await bucketExists(name)).toBe(false);
  });
});
