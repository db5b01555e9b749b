import { GetBucketTaggingCommand, GetBucketVersioningCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Bucket as S3Bucket } from "../../../shared/api/aws/s3.ts";
import { ResourceGroup } from "../../../shared/api/azure/resources.ts";
import { Container } from "../../../shared/api/azure/storage.ts";
import { Bucket } from "../../../shared/api/claims/claims.ts";
import { AzureContainerClass, GCSBucketClass, S3BucketClass } from "../../../shared/api/claims/classes.ts";
import { ClaimAnnotations } from "../../../shared/api/claims/meta.ts";
import { Bucket as GcsBucket } from "../../../shared/api/gcp/storage.ts";
import { createAwsProviderConfig, ensureCrds, motoS3 } from "../../support/aws.ts";
import { azuriteBlob, createAzureProviderConfig, reconcileUntil } from "../../support/azure.ts";
import { defaultTags } from "../../support/default-tags.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { createGcpProviderConfig, fakeStorage } from "../../support/gcp.ts";
import { newReconciler } from "../../support/reconcile.ts";
import {
  claimKey,
  claimObject,
  classObject,
  conditionOf,
  drive,
  getClaim,
  isReady,
  type KubeMr,
  newClaimReconciler,
  newNamespace,
  secretData,
} from "./support.ts";

const kube = newKube();
const s3 = motoS3();
const gcs = fakeStorage();
const blob = azuriteBlob();
const AWS_PC = uniqueName("pc-bkt-aws");
const GCP_PC = uniqueName("pc-bkt-gcp");
const AZ_PC = uniqueName("pc-bkt-az");
const S3_CLASS = uniqueName("bkt-s3");
const GCS_CLASS = uniqueName("bkt-gcs");
const AZ_CLASS = uniqueName("bkt-az");
const RG = uniqueName("rg-claims");

const settle = (ns: string, name: string, until: Parameters<typeof drive>[0]["until"] = isReady) =>
  drive({
    kube,
    claims: newClaimReconciler(kube),
    mrs: newReconciler(kube),
    def: Bucket,
    namespace: ns,
    name,
    until,
  });

beforeAll(async () => {
  await ensureCrds();
  await Promise.all([
    createAwsProviderConfig(kube, AWS_PC),
    createGcpProviderConfig(kube, GCP_PC),
    createAzureProviderConfig(kube, AZ_PC),
  ]);
  await kube.create(
    S3BucketClass,
    classObject(S3BucketClass, S3_CLASS, {
      providerConfigRef: { name: AWS_PC },
      forProvider: { tags: { cost_center: "42" } },
    }),
  );
  await kube.create(
    GCSBucketClass,
    classObject(GCSBucketClass, GCS_CLASS, {
      providerConfigRef: { name: GCP_PC },
      forProvider: { location: "EU" },
    }),
  );
  // The container's resource group is a managed resource of the platform team's, named by the template.
  await kube.create(ResourceGroup, {
    apiVersion: ResourceGroup.apiVersion,
    kind: ResourceGroup.kind,
    metadata: { name: RG },
    spec: { forProvider: { location: "westeurope" }, providerConfigRef: { name: AZ_PC } },
  });
  await reconcileUntil(
    newReconciler(kube),
    { apiVersion: ResourceGroup.apiVersion, kind: "ResourceGroup", name: RG },
    (r) => r.outcome === "in-sync",
  );
  await kube.create(
    AzureContainerClass,
    classObject(AzureContainerClass, AZ_CLASS, {
      providerConfigRef: { name: AZ_PC },
      forProvider: { resourceGroupNameRef: { name: RG }, publicAccess: "None" },
    }),
  );
}, 120_000);

afterAll(async () => {
  await kube.delete(S3BucketClass, S3_CLASS);
  await kube.delete(GCSBucketClass, GCS_CLASS);
  await kube.delete(AzureContainerClass, AZ_CLASS);
});

describe("Bucket claims on three clouds", () => {
  it("S3: versioning and labels land on the bucket, next to the class's tags; a removed label goes", async () => {
    const ns = await newNamespace(kube, "bkt-s3");
    await kube.create(
      Bucket,
      claimObject(Bucket, ns, "assets", {
        classRef: { kind: "S3BucketClass", name: S3_CLASS },
        versioning: true,
        labels: { team: "web", env: "dev" },
        writeConnectionSecretToRef: { name: "assets" },
      }),
    );

    const { claim } = await settle(ns, "assets");

    const name = claim?.status?.resourceRef?.name ?? "";
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket: name }))).Status).toBe("Enabled");
    const tags = async () =>
      Object.fromEntries(
        ((await s3.send(new GetBucketTaggingCommand({ Bucket: name }))).TagSet ?? []).map((t) => [
          t.Key,
          t.Value,
        ]),
      );
    expect(await tags()).toMatchObject({ cost_center: "42", team: "web", env: "dev" });
    expect(await secretData(kube, ns, "assets")).toMatchObject({
      service: "s3",
      bucket: name,
      endpoint: expect.stringContaining(name),
    });

    // A merge patch: null removes the label.
    await kube.patch(
      Bucket,
      "assets",
      { spec: { labels: { env: null }, versioning: false } },
      { namespace: ns },
    );
    await settle(ns, "assets", (c, r) => isReady(c) && r.outcome === "in-sync");

    const mr = await kube.get<KubeMr>(S3Bucket, name);
    expect(mr?.spec.forProvider).toMatchObject({
      versioning: "Suspended",
      tags: { cost_center: "42", team: "web" },
    });
    expect(mr?.metadata.annotations?.[ClaimAnnotations.claimLabelKeys]).toBe("team");
    expect(await tags()).toEqual({ ...defaultTags(S3Bucket, name, AWS_PC), cost_center: "42", team: "web" });
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket: name }))).Status).toBe("Suspended");
  });

  it("Cloud Storage: versioning and labels land on the bucket", async () => {
    const ns = await newNamespace(kube, "bkt-gcs");
    await kube.create(
      Bucket,
      claimObject(Bucket, ns, "exports", {
        classRef: { kind: "GCSBucketClass", name: GCS_CLASS },
        versioning: true,
        labels: { team: "data" },
        writeConnectionSecretToRef: { name: "exports" },
      }),
    );

    const { claim } = await settle(ns, "exports");

    const name = claim?.status?.resourceRef?.name ?? "";
    expect((await kube.get<KubeMr>(GcsBucket, name))?.spec.forProvider).toMatchObject({
      location: "EU",
      versioning: { enabled: true },
      labels: { team: "data" },
    });
    const [meta] = await gcs.bucket(name).getMetadata();
    expect(meta).toMatchObject({ versioning: { enabled: true }, labels: { team: "data" } });
    expect(await secretData(kube, ns, "exports")).toMatchObject({
      service: "gcs",
      bucket: name,
      url: `gs://${name}`,
    });
  });

  it("Azure: a container in the class's resource group, labels as metadata; versioning is refused clearly", async () => {
    const ns = await newNamespace(kube, "bkt-az");
    await kube.create(
      Bucket,
      claimObject(Bucket, ns, "media", {
        classRef: { kind: "AzureContainerClass", name: AZ_CLASS },
        labels: { team: "media" },
        writeConnectionSecretToRef: { name: "media" },
      }),
    );
    await kube.create(
      Bucket,
      claimObject(Bucket, ns, "versioned", {
        classRef: { kind: "AzureContainerClass", name: AZ_CLASS },
        versioning: true,
      }),
    );

    const { claim } = await settle(ns, "media");

    const name = claim?.status?.resourceRef?.name ?? "";
    const mr = await kube.get<KubeMr>(Container, name);
    expect(mr?.spec.forProvider).toMatchObject({ resourceGroupName: RG, metadata: { team: "media" } });
    expect((await blob.getContainerClient(name).getProperties()).metadata).toEqual({ team: "media" });
    expect(await secretData(kube, ns, "media")).toMatchObject({
      service: "azure-blob",
      bucket: name,
      containerName: name,
      endpoint: expect.stringContaining(name),
    });

    const refused = await newClaimReconciler(kube).reconcile(claimKey(Bucket, ns, "versioned"));
    expect(refused.outcome).toBe("blocked");
    expect(conditionOf(await getClaim(kube, Bucket, ns, "versioned"), "Synced")).toMatchObject({
      reason: "InvalidSpec",
      message: expect.stringContaining("AzureContainerClass cannot serve versioning: true"),
    });
  });
});
