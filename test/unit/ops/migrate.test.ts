// Crossplane (Upbound) → driftless field mapping, per kind, on the fixtures in test/fixtures/crossplane/.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { migrate } from "../../../shared/ops/migrate.ts";
import { managedKinds } from "../../../shared/providers/index.ts";

const fixture = (name: string) =>
  parseAllDocuments(readFileSync(join(import.meta.dirname, "../../fixtures/crossplane", name), "utf8")).map(
    (d) => d.toJS(),
  );
const byName = (r: ReturnType<typeof migrate>, name: string) =>
  r.objects.find((o) => o.object.metadata.name === name)?.object;

describe("migrate", () => {
  it("keeps identity, connection Secret, ProviderConfig and deletion policy, and only observes", () => {
    const r = migrate(fixture("sqs-queue.yaml"));
    expect(r.objects).toHaveLength(1);
    const q = r.objects[0]?.object;
    expect(q).toEqual({
      apiVersion: "sqs.aws.driftless.dev/v1alpha1",
      kind: "Queue",
      metadata: {
        name: "orders-queue",
        labels: { team: "payments" },
        annotations: {
          "crossplane.io/external-name": "orders-queue",
          "driftless.dev/migrated-from": "Queue.sqs.aws.upbound.io/v1beta1",
        },
      },
      spec: {
        forProvider: {
          region: "us-east-1",
          delaySeconds: 0,
          maximumMessageSize: 262144,
          messageRetentionSeconds: 345600,
          receiveWaitTimeSeconds: 0,
          visibilityTimeoutSeconds: 45,
          fifoQueue: false,
          tags: {
            team: "payments",
            "crossplane-kind": "queue.sqs.aws.upbound.io",
            "crossplane-name": "orders-queue",
            "crossplane-providerconfig": "aws-moto",
          },
        },
        managementPolicies: ["Observe"],
        deletionPolicy: "Delete",
        providerConfigRef: { name: "aws-moto" },
        writeConnectionSecretToRef: { name: "orders-queue-conn", namespace: "crossplane-system" },
      },
    });
    expect(r.issues.filter((i) => i.severity !== "note")).toEqual([]);
  });

  it("maps Upjet's AWS names and folds BucketVersioning and BucketPublicAccessBlock into the Bucket", () => {
    const r = migrate(fixture("aws.yaml"));
    expect(byName(r, "logs")?.spec.forProvider).toEqual({
      region: "eu-west-1",
      tags: { env: "prod" },
      versioning: "Enabled",
      publicAccessBlock: {
        blockPublicAcls: true,
        blockPublicPolicy: true,
        ignorePublicAcls: true,
        restrictPublicBuckets: true,
      },
    });
    expect(byName(r, "orders-db")).toMatchObject({
      kind: "DBInstance",
      spec: {
        deletionPolicy: "Orphan",
        forProvider: {
          dbInstanceClass: "db.t3.micro",
          masterUsername: "app",
          masterPasswordSecretRef: {
            name: "orders-db-master",
            namespace: "crossplane-system",
            key: "password",
          },
          preferredMaintenanceWindow: "sun:05:00-sun:05:30",
          preferredBackupWindow: "03:00-03:30",
          dbSubnetGroupNameRef: { name: "db-subnets" },
        },
      },
    });
    expect(byName(r, "orders-db")?.spec.forProvider).not.toHaveProperty("autoGeneratePassword");
    expect(byName(r, "db-subnets")).toMatchObject({ kind: "DBSubnetGroup" });
    expect(byName(r, "db-sg")).toMatchObject({
      kind: "SecurityGroup",
      metadata: { annotations: { "crossplane.io/external-name": "sg-0123" } },
      spec: { forProvider: { groupName: "db-sg", description: "database access", vpcId: "vpc-0abc" } },
    });
    expect(byName(r, "default")).toEqual({
      apiVersion: "aws.driftless.dev/v1alpha1",
      kind: "ProviderConfig",
      metadata: { name: "default" },
      spec: {
        credentials: {
          source: "Secret",
          secretRef: { namespace: "crossplane-system", name: "aws-creds", key: "credentials" },
        },
      },
    });
    expect(r.objects.map((o) => o.object.kind)).not.toContain("BucketVersioning");
    expect(r.issues.filter((i) => i.severity === "dropped").map((i) => `${i.source} ${i.field}`)).toEqual([
      "Bucket.s3.aws.upbound.io/logs forceDestroy",
    ]);
  });

  it("turns GCP block lists into objects and shortens path-style external names", () => {
    const r = migrate(fixture("gcp.yaml"));
    expect(byName(r, "events")?.spec.forProvider).toEqual({
      labels: { team: "data" },
      messageRetentionDuration: "86400s",
      messageStoragePolicy: { allowedPersistenceRegions: ["europe-west1"] },
    });
    expect(byName(r, "events-worker")).toMatchObject({
      metadata: { annotations: { "crossplane.io/external-name": "events-worker" } },
      spec: {
        forProvider: {
          topicRef: { name: "events" },
          deadLetterPolicy: {
            deadLetterTopic: "projects/acme-prod/topics/events-dlq",
            maxDeliveryAttempts: 10,
          },
          retryPolicy: { minimumBackoff: "10s", maximumBackoff: "600s" },
        },
      },
    });
    expect(byName(r, "archive")?.spec.forProvider).toMatchObject({
      versioning: { enabled: true },
      uniformBucketLevelAccess: true,
    });
    expect(r.issues.filter((i) => i.severity === "dropped").map((i) => i.field)).toEqual(["filter"]);
    expect(r.issues.filter((i) => i.field === "project")).toHaveLength(2);
  });

  it("maps Azure access types", () => {
    const r = migrate(fixture("azure.yaml"));
    expect(byName(r, "uploads")?.spec.forProvider).toEqual({
      storageAccountName: "acmeuploads",
      publicAccess: "None",
      metadata: { owner: "web" },
    });
    expect(byName(r, "shared-rg")?.spec.forProvider).toEqual({
      location: "West Europe",
      tags: { env: "prod" },
    });
  });

  it("reports unknown kinds, unmanaged fields and invalid values, never dropping them silently", () => {
    const r = migrate([
      ...fixture("unsupported.yaml"),
      {
        apiVersion: "sqs.aws.upbound.io/v1beta1",
        kind: "Queue",
        metadata: { name: "bad-values" },
        spec: { forProvider: { delaySeconds: 5000, redrivePolicy: "{not json" } },
      },
      {
        apiVersion: "ec2.aws.upbound.io/v1beta1",
        kind: "VPC",
        metadata: { name: "no-id" },
        spec: { forProvider: {} },
      },
      "just a string",
    ]);
    const text = r.issues.map((i) => `${i.severity} ${i.source}: ${i.message}`);
    expect(text).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^error Role\.iam\.aws\.upbound\.io\/app-role: driftless has no equivalent of Role/,
        ),
        expect.stringMatching(
          /^error XPostgreSQLInstance\.example\.org\/composite-db: not a Crossplane managed resource/,
        ),
        expect.stringMatching(
          /^dropped Queue\.sqs\.aws\.upbound\.io\/with-policy: forProvider\.fifoThroughputLimit has no driftless equivalent/,
        ),
        expect.stringMatching(
          /^dropped Queue\.sqs\.aws\.upbound\.io\/bad-values: forProvider\.redrivePolicy is not valid JSON/,
        ),
        expect.stringMatching(
          /^dropped Queue\.sqs\.aws\.upbound\.io\/bad-values: forProvider\.delaySeconds: .*left out/,
        ),
        expect.stringMatching(
          /^error VPC\.ec2\.aws\.upbound\.io\/no-id: no crossplane\.io\/external-name annotation: VPC ids are chosen by the cloud/,
        ),
        expect.stringMatching(/^error document \d+: not a Kubernetes object/),
      ]),
    );
    // The queue's access policy is carried as the object its JSON holds.
    expect(byName(r, "with-policy")?.spec.forProvider).toMatchObject({
      policy: { Version: "2012-10-17", Statement: [] },
    });
    expect(byName(r, "bad-values")?.spec.forProvider).toEqual({});
    // The VPC without an id is reported not migrated, so it is not written either.
    expect(byName(r, "no-id")).toBeUndefined();
    expect(r.refused).toEqual([
      "Role.iam.aws.upbound.io/app-role",
      "XPostgreSQLInstance.example.org/composite-db",
      "VPC.ec2.aws.upbound.io/no-id",
      "document 6",
    ]);
    expect(r.skipped).toBe(4);
  });

  it("has a mapping for every Crossplane kind the issue names, onto a registered driftless kind", () => {
    const registered = new Set(managedKinds.map((k) => `${k.definition.kind}.${k.definition.group}`));
    const docs = [
      ["sqs.aws.upbound.io/v1beta1", "Queue"],
      ["s3.aws.upbound.io/v1beta1", "Bucket"],
      ["rds.aws.upbound.io/v1beta1", "Instance"],
      ["pubsub.gcp.upbound.io/v1beta1", "Topic"],
      ["pubsub.gcp.upbound.io/v1beta1", "Subscription"],
      ["storage.gcp.upbound.io/v1beta1", "Bucket"],
      ["azure.upbound.io/v1beta1", "ResourceGroup"],
      ["storage.azure.upbound.io/v1beta1", "Container"],
    ].map(([apiVersion, kind]) => ({
      apiVersion,
      kind,
      metadata: { name: `x-${kind?.toLowerCase()}`, annotations: { "crossplane.io/external-name": "x" } },
      // What driftless requires of a DB instance (an export of a reconciled one has it).
      spec: { forProvider: kind === "Instance" ? { engine: "postgres", instanceClass: "db.t3.micro" } : {} },
    }));
    const r = migrate(docs);
    expect(r.objects).toHaveLength(docs.length);
    for (const o of r.objects)
      expect(registered).toContain(`${o.object.kind}.${o.object.apiVersion.split("/")[0]}`);
  });
});

describe("migrate: what the CRD keeps", () => {
  it("writes the schema's value and reports a nested field the CRD would prune on apply", () => {
    const r = migrate([
      {
        apiVersion: "pubsub.gcp.upbound.io/v1beta1",
        kind: "Topic",
        metadata: { name: "orders", annotations: { "crossplane.io/external-name": "orders" } },
        spec: {
          forProvider: {
            messageStoragePolicy: [{ allowedPersistenceRegions: ["europe-west1"], enforceInTransit: true }],
          },
        },
      },
    ]);
    expect(byName(r, "orders")?.spec.forProvider).toEqual({
      messageStoragePolicy: { allowedPersistenceRegions: ["europe-west1"] },
    });
    expect(r.issues.filter((i) => i.severity === "dropped")).toEqual([
      {
        severity: "dropped",
        source: "Topic.pubsub.gcp.upbound.io/orders",
        field: "messageStoragePolicy",
        message: expect.stringMatching(
          /^forProvider\.messageStoragePolicy\.enforceInTransit has no driftless/,
        ),
      },
    ]);
  });
});
