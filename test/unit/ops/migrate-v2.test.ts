// Crossplane v2 (namespaced `.m.` groups) → driftless's namespaced kinds, on the providers' own example
// manifests (test/fixtures/crossplane/v2/, sources in its README); Crossplane v1 → namespaced with
// `namespaced`; and driftless cluster-scoped objects → their namespaced variants.
import { describe, expect, it } from "vitest";
import { namespacedVariantOf } from "../../../shared/api/managed.ts";
import { MIGRATABLE_KINDS, type MigrateResult, migrate } from "../../../shared/ops/migrate.ts";
import { planSteps, withoutDelete } from "../../../shared/ops/migrate-namespaced.ts";
import { managedKinds } from "../../../shared/providers/index.ts";
import { type Doc, exported, find, fixture, issuesOf, RAND } from "./migrate-helpers.ts";

/** Every converted managed resource is the `.m.` kind in the source's namespace, with the v2 spec shape. */
function expectNamespacedShape(r: MigrateResult, namespace: string) {
  const managed = r.objects.filter((o) => !/ProviderConfig$/.test(o.object.kind));
  expect(managed.length).toBeGreaterThan(0);
  const namespaced = new Set(
    managedKinds.filter((k) => k.definition.scope === "Namespaced").map((k) => k.definition.apiVersion),
  );
  for (const { object } of managed) {
    expect(namespaced).toContain(object.apiVersion);
    expect(object.metadata.namespace).toBe(namespace);
    expect(object.spec).not.toHaveProperty("deletionPolicy");
    expect(object.spec.managementPolicies).toEqual(["Observe"]);
    expect(object.spec.providerConfigRef).toEqual({ kind: "ClusterProviderConfig", name: "default" });
    expect(object.metadata.annotations?.["crossplane.io/external-name"]).toBeTruthy();
    const def = managedKinds.find(
      (k) => k.definition.apiVersion === object.apiVersion && k.definition.kind === object.kind,
    )?.definition;
    // The object passes the namespaced kind's own schema (what the CRD enforces).
    expect(def?.spec.safeParse(object.spec).success, JSON.stringify(object.spec)).toBe(true);
  }
}

describe("migrate: Crossplane v2 (provider-upjet-aws examples)", () => {
  it("converts the SQS Queue into the namespaced Queue in the same namespace", () => {
    const r = migrate(fixture("v2/aws/sqs-queue.yaml"));
    expectNamespacedShape(r, "upbound-system");
    expect(find(r, "Queue", "example")).toEqual({
      apiVersion: "sqs.aws.m.driftless.dev/v1alpha1",
      kind: "Queue",
      metadata: {
        name: "example",
        namespace: "upbound-system",
        labels: { "testing.upbound.io/example-name": "example" },
        annotations: {
          "crossplane.io/external-name": "upbound-sqs",
          "driftless.dev/migrated-from": "Queue.sqs.aws.m.upbound.io/v1beta1",
        },
      },
      spec: {
        forProvider: {
          delaySeconds: 90,
          maximumMessageSize: 2048,
          messageRetentionSeconds: 86400,
          receiveWaitTimeSeconds: 10,
          region: "us-west-1",
          tags: { Environment: "production" },
        },
        managementPolicies: ["Observe"],
        providerConfigRef: { kind: "ClusterProviderConfig", name: "default" },
        writeConnectionSecretToRef: { name: "sqs-example" },
      },
    });
    expect(issuesOf(r, "error")).toEqual([]);
    expect(issuesOf(r, "dropped")).toEqual([]);
  });

  it("keeps an exported external name and maps providerConfigRef {kind, name} to the same kind and name", () => {
    const [queue] = fixture("v2/aws/sqs-queue.yaml");
    const spec = { ...(queue?.spec as object), providerConfigRef: { kind: "ProviderConfig", name: "team" } };
    const r = migrate(exported([{ ...(queue as Doc), spec }], { "Queue/example": "orders-prod" }));
    expect(find(r, "Queue", "example")).toMatchObject({
      metadata: { annotations: { "crossplane.io/external-name": "orders-prod" } },
      spec: { providerConfigRef: { kind: "ProviderConfig", name: "team" } },
    });
  });

  it("reports the generated example's Terraform expression as invalid JSON instead of carrying it", () => {
    const r = migrate(fixture("v2/aws/sqs-queue-generated.yaml"));
    expect(find(r, "Queue", "terraform-queue")?.spec.forProvider).not.toHaveProperty("redrivePolicy");
    expect(issuesOf(r, "dropped")).toEqual([
      "Queue.sqs.aws.m.upbound.io/terraform-queue: forProvider.redrivePolicy is not valid JSON; left out",
    ]);
  });

  it("folds namespaced BucketVersioning and BucketPublicAccessBlock into their Bucket by bucketSelector", () => {
    const versioned = migrate(fixture("v2/aws/s3-bucketversioning.yaml"));
    expectNamespacedShape(versioned, "upbound-system");
    const bucketName = `example-${RAND}`;
    expect(find(versioned, "Bucket", bucketName)?.spec.forProvider).toEqual({
      region: "us-west-1",
      versioning: "Enabled",
    });
    const blocked = migrate(fixture("v2/aws/s3-bucketpublicaccessblock.yaml"));
    expect(find(blocked, "Bucket", bucketName)?.spec.forProvider).toEqual({
      region: "us-west-1",
      publicAccessBlock: { blockPublicAcls: false, blockPublicPolicy: false },
    });
    const plain = migrate(fixture("v2/aws/s3-bucket.yaml"));
    expect(issuesOf(plain, "dropped")).toEqual([
      `Bucket.s3.aws.m.upbound.io/${RAND}: forProvider.objectLockEnabled left out: object lock is not managed by driftless (it stays unchanged)`,
    ]);
  });

  it("converts the RDS Instance with its Secret reference in its own namespace", () => {
    const r = migrate(fixture("v2/aws/rds-instance.yaml"));
    const db = find(r, "DBInstance", `example-dbinstance-${RAND}`);
    expect(db).toMatchObject({
      apiVersion: "rds.aws.m.driftless.dev/v1alpha1",
      metadata: { namespace: "upbound-system" },
      spec: {
        forProvider: {
          dbInstanceClass: "db.t3.micro",
          masterUsername: "adminuser",
          masterPasswordSecretRef: { name: "example-dbinstance", key: "password" },
          preferredMaintenanceWindow: "Mon:00:00-Mon:03:00",
        },
        writeConnectionSecretToRef: { name: "example-dbinstance-out" },
      },
    });
    expect(issuesOf(r, "error")).toEqual([
      `Key.kms.aws.m.upbound.io/sample-key-${RAND}: driftless has no equivalent of Key (kms.aws.m.upbound.io/v1beta1); it was not migrated`,
    ]);
    expect(r.issues.find((i) => i.source.startsWith("Secret.v1/"))).toMatchObject({ severity: "note" });
  });

  it("converts VPC, Subnets and SubnetGroup once the cloud-chosen ids are exported, references kept", () => {
    const r = migrate(
      exported(fixture("v2/aws/rds-subnetgroup.yaml"), {
        "VPC/sample-db-vpc": "vpc-0123",
        "Subnet/sample-db-subnet1": "subnet-1",
        "Subnet/sample-db-subnet2": "subnet-2",
      }),
    );
    expectNamespacedShape(r, "upbound-system");
    expect(find(r, "Subnet", "sample-db-subnet1")?.spec.forProvider).toMatchObject({
      vpcIdRef: { name: "sample-db-vpc" },
    });
    expect(find(r, "DBSubnetGroup", "example-subnetgroup")?.spec.forProvider).toMatchObject({
      subnetIdRefs: [{ name: "sample-db-subnet1" }, { name: "sample-db-subnet2" }],
    });
    expect(r.issues.filter((i) => i.severity !== "note")).toEqual([]);
  });

  it("says a cloud-chosen id without its external name cannot be adopted", () => {
    const r = migrate(fixture("v2/aws/ec2-securitygroup.yaml"));
    expect(issuesOf(r, "error")).toEqual([
      expect.stringMatching(
        /^SecurityGroup\.ec2\.aws\.m\.upbound\.io\/example: no crossplane\.io\/external-name/,
      ),
      expect.stringMatching(/^VPC\.ec2\.aws\.m\.upbound\.io\/sample-vpc: no crossplane\.io\/external-name/),
    ]);
    // Reported not migrated, so not written: applied, a wider policy would create a second group.
    expect(find(r, "SecurityGroup", "example")).toBeUndefined();
    expect(find(r, "VPC", "sample-vpc")).toBeUndefined();
  });

  it("converts ProviderConfig and ClusterProviderConfig to driftless's of the same kind", () => {
    const r = migrate([
      ...fixture("v2/aws/providerconfig.yaml"),
      ...fixture("v2/aws/clusterproviderconfig.yaml"),
    ]);
    expect(find(r, "ProviderConfig", "default")).toEqual({
      apiVersion: "aws.m.driftless.dev/v1alpha1",
      kind: "ProviderConfig",
      metadata: { name: "default", namespace: "upbound-system" },
      spec: {
        credentials: { source: "Secret", secretRef: { name: "example-aws-creds", key: "credentials" } },
      },
    });
    expect(find(r, "ClusterProviderConfig", "default")).toEqual({
      apiVersion: "aws.m.driftless.dev/v1alpha1",
      kind: "ClusterProviderConfig",
      metadata: { name: "default" },
      spec: {
        credentials: {
          source: "Secret",
          secretRef: { name: "provider-creds", namespace: "upbound-system", key: "creds" },
        },
      },
    });
    // The example's namespaced ProviderConfig reads a Secret in another namespace: that Secret must move.
    expect(issuesOf(r, "warning")).toEqual([
      expect.stringMatching(
        /^ProviderConfig\.aws\.m\.upbound\.io\/default: spec\.credentials\.secretRef named Secret crossplane-system\/example-aws-creds/,
      ),
    ]);
  });
});

describe("migrate: Crossplane v2 (provider-upjet-gcp and provider-upjet-azure examples)", () => {
  it("converts Pub/Sub and Cloud Storage", () => {
    const r = migrate([
      ...fixture("v2/gcp/pubsub-topic.yaml"),
      ...fixture("v2/gcp/pubsub-subscription.yaml"),
      ...fixture("v2/gcp/storage-bucket.yaml"),
    ]);
    expectNamespacedShape(r, "upbound-system");
    expect(find(r, "Subscription", "subscription")?.spec.forProvider).toEqual({
      topicSelector: { matchLabels: { "testing.upbound.io/example-name": "subscription" } },
    });
    expect(find(r, "Bucket", `bucket-${RAND}`)).toMatchObject({
      apiVersion: "storage.gcp.m.driftless.dev/v1alpha1",
      spec: {
        forProvider: {
          location: "US",
          uniformBucketLevelAccess: true,
          cors: [
            {
              maxAgeSeconds: 3600,
              method: ["GET", "HEAD", "PUT", "POST", "DELETE"],
              origin: ["http://image-store.com"],
              responseHeader: ["*"],
            },
          ],
          website: { mainPageSuffix: "index.html", notFoundPage: "404.html" },
        },
      },
    });
    expect(r.issues.filter((i) => i.severity === "dropped").map((i) => i.field)).toEqual(["forceDestroy"]);
  });

  it("converts GCP ProviderConfig and ClusterProviderConfig", () => {
    const r = migrate([
      ...fixture("v2/gcp/providerconfig.yaml"),
      ...fixture("v2/gcp/clusterproviderconfig.yaml"),
    ]);
    expect(find(r, "ProviderConfig", "default")).toMatchObject({
      apiVersion: "gcp.m.driftless.dev/v1alpha1",
      metadata: { namespace: "upbound-system" },
      spec: {
        projectID: "official-provider-testing",
        credentials: { secretRef: { name: "provider-creds" } },
      },
    });
    expect(find(r, "ProviderConfig", "default")?.spec).not.toHaveProperty("credentials.secretRef.namespace");
    expect(find(r, "ClusterProviderConfig", "default")?.apiVersion).toBe("gcp.m.driftless.dev/v1alpha1");
    expect(issuesOf(r, "warning")).toEqual([]);
  });

  it("converts ResourceGroup, VirtualNetwork, Subnet and Container", () => {
    const r = migrate([
      ...fixture("v2/azure/resourcegroup.yaml"),
      ...fixture("v2/azure/network-virtualnetwork.yaml"),
      ...fixture("v2/azure/network-subnet.yaml"),
      ...fixture("v2/azure/storage-container.yaml"),
    ]);
    expectNamespacedShape(r, "upbound-system");
    expect(find(r, "VirtualNetwork", "example")?.spec.forProvider).toEqual({
      addressSpace: { addressPrefixes: ["10.0.0.0/16"] },
      location: "West Europe",
      resourceGroupNameSelector: { matchLabels: { "testing.upbound.io/example-name": "example" } },
      tags: { environment: "Production" },
    });
    expect(find(r, "Subnet", "example-subnet")).toMatchObject({
      apiVersion: "network.azure.m.driftless.dev/v1alpha1",
      spec: { forProvider: { addressPrefix: "10.0.1.0/24" } },
    });
    // The container's storage account is the Account its selector picks in the same input.
    expect(find(r, "Container", "example")?.spec.forProvider).toEqual({
      publicAccess: "None",
      storageAccountName: "example",
      resourceGroupNameSelector: { matchLabels: { "testing.upbound.io/example-name": "example" } },
    });
    expect(issuesOf(r, "error")).toEqual([
      expect.stringMatching(
        /^SecurityGroup\.network\.azure\.m\.upbound\.io\/example: driftless has no equivalent/,
      ),
      expect.stringMatching(/^Account\.storage\.azure\.m\.upbound\.io\/example: driftless has no equivalent/),
    ]);
  });

  it("says why Azure ProviderConfigs are not converted", () => {
    const r = migrate(fixture("v2/azure/clusterproviderconfig.yaml"));
    expect(r.objects).toEqual([]);
    expect(issuesOf(r, "error")).toEqual([
      expect.stringContaining("Azure ProviderConfigs cannot be converted"),
    ]);
  });

  it("refuses a v2 object without a namespace unless one is given, and names crossplane-contrib native groups", () => {
    const queue = { apiVersion: "sqs.aws.m.upbound.io/v1beta1", kind: "Queue", metadata: { name: "q" } };
    expect(issuesOf(migrate([queue]), "error")).toEqual([expect.stringContaining("pass --namespace")]);
    expect(find(migrate([queue], { defaultNamespace: "team-a" }), "Queue", "q")?.metadata.namespace).toBe(
      "team-a",
    );
    const native = migrate([
      { apiVersion: "database.aws.m.crossplane.io/v1beta1", kind: "RDSInstance", metadata: { name: "db" } },
    ]);
    expect(issuesOf(native, "error")).toEqual([
      expect.stringContaining("crossplane-contrib's native provider"),
    ]);
  });
});

describe("migrate: Crossplane v1 → namespaced", () => {
  it("writes the namespaced shape in the target namespace: Orphan leaves Delete out, Secrets move", () => {
    const r = migrate(fixture("aws.yaml"), {
      namespaced: { namespace: "payments", providerConfigKind: "ProviderConfig" },
    });
    const db = find(r, "DBInstance", "orders-db");
    expect(db).toMatchObject({
      apiVersion: "rds.aws.m.driftless.dev/v1alpha1",
      metadata: { namespace: "payments" },
      spec: {
        managementPolicies: ["Observe"],
        providerConfigRef: { kind: "ProviderConfig", name: "default" },
        forProvider: { masterPasswordSecretRef: { name: "orders-db-master", key: "password" } },
      },
    });
    expect(db?.spec).not.toHaveProperty("deletionPolicy");
    expect(r.issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ source: "Instance.rds.aws.upbound.io/orders-db", severity: "warning" }),
        expect.objectContaining({
          source: "Instance.rds.aws.upbound.io/orders-db",
          message: expect.stringContaining("leave out Delete"),
        }),
      ]),
    );
    expect(find(r, "ProviderConfig", "default")).toEqual({
      apiVersion: "aws.m.driftless.dev/v1alpha1",
      kind: "ProviderConfig",
      metadata: { name: "default", namespace: "payments" },
      spec: { credentials: { source: "Secret", secretRef: { name: "aws-creds", key: "credentials" } } },
    });
    expect(find(r, "Bucket", "logs")?.spec.forProvider).toMatchObject({ versioning: "Enabled" });
  });

  it("keeps the cluster-scoped shape without the option (unchanged behaviour)", () => {
    const r = migrate(fixture("sqs-queue.yaml"));
    expect(r.objects[0]?.object).toMatchObject({
      apiVersion: "sqs.aws.driftless.dev/v1alpha1",
      spec: { deletionPolicy: "Delete", providerConfigRef: { name: "aws-moto" } },
    });
    expect(r.objects[0]?.object.metadata).not.toHaveProperty("namespace");
  });
});

describe("migrate: driftless cluster-scoped → namespaced", () => {
  const vpc = {
    apiVersion: "ec2.aws.driftless.dev/v1alpha1",
    kind: "VPC",
    metadata: {
      name: "main",
      uid: "0b8d7c1e-0000-4d59-9d61-2f3c1a7e9b10",
      resourceVersion: "42",
      finalizers: ["finalizer.managedresource.driftless.dev"],
      labels: { team: "payments" },
      annotations: {
        "crossplane.io/external-name": "vpc-0abc",
        "crossplane.io/external-create-pending": "2026-01-01T00:00:00Z",
        "crossplane.io/external-create-succeeded": "2026-01-01T00:00:02Z",
        "crossplane.io/poll-interval": "10m",
      },
    },
    spec: {
      forProvider: { region: "us-east-1", cidrBlock: "10.0.0.0/16" },
      deletionPolicy: "Orphan",
      providerConfigRef: { name: "aws-prod" },
    },
    status: { atProvider: { vpcId: "vpc-0abc" } },
  };
  const subnet = {
    apiVersion: "ec2.aws.driftless.dev/v1alpha1",
    kind: "Subnet",
    metadata: { name: "a", annotations: { "crossplane.io/external-name": "subnet-1" } },
    spec: {
      forProvider: {
        region: "us-east-1",
        cidrBlock: "10.0.1.0/24",
        vpcIdRef: { name: "main" },
        vpcId: "vpc-0abc",
      },
      managementPolicies: ["*"],
      writeConnectionSecretToRef: { name: "a-conn", namespace: "crossplane-system" },
    },
  };
  const db = {
    apiVersion: "rds.aws.driftless.dev/v1alpha1",
    kind: "DBInstance",
    metadata: { name: "orders" },
    spec: {
      forProvider: {
        region: "us-east-1",
        engine: "postgres",
        dbInstanceClass: "db.t3.micro",
        masterPasswordSecretRef: { name: "pw", namespace: "payments", key: "password" },
        dbSubnetGroupNameRef: { name: "elsewhere" },
      },
    },
  };
  const pc = {
    apiVersion: "aws.driftless.dev/v1alpha1",
    kind: "ProviderConfig",
    metadata: { name: "aws-prod" },
    spec: { credentials: { source: "InjectedIdentity" } },
  };

  it("carries the external name and policies (Orphan → no Delete), drops the old controller's state", () => {
    const r = migrate([{ kind: "List", apiVersion: "v1", items: [vpc, subnet, db] }], {
      namespaced: { namespace: "payments" },
    });
    expect(find(r, "VPC", "main")).toEqual({
      apiVersion: "ec2.aws.m.driftless.dev/v1alpha1",
      kind: "VPC",
      metadata: {
        name: "main",
        namespace: "payments",
        labels: { team: "payments" },
        annotations: {
          "crossplane.io/external-name": "vpc-0abc",
          "crossplane.io/poll-interval": "10m",
          "driftless.dev/migrated-from": "VPC.ec2.aws.driftless.dev/v1alpha1",
        },
      },
      spec: {
        forProvider: { region: "us-east-1", cidrBlock: "10.0.0.0/16" },
        managementPolicies: ["Observe", "Create", "Update", "LateInitialize"],
        providerConfigRef: { kind: "ClusterProviderConfig", name: "aws-prod" },
      },
    });
    expect(find(r, "Subnet", "a")?.spec).toEqual({
      forProvider: subnet.spec.forProvider, // unchanged, resolved vpcId included
      managementPolicies: ["*"],
      providerConfigRef: { kind: "ClusterProviderConfig", name: "default" },
      writeConnectionSecretToRef: { name: "a-conn" },
    });
    expect(find(r, "DBInstance", "orders")?.spec.forProvider).toMatchObject({
      masterPasswordSecretRef: { name: "pw", key: "password" },
    });
    expect(r.issues.filter((i) => i.severity === "warning").map((i) => `${i.source} ${i.field}`)).toEqual([
      "Subnet.ec2.aws.driftless.dev/a writeConnectionSecretToRef",
      "DBInstance.rds.aws.driftless.dev/orders dbSubnetGroupNameRef",
    ]);
    expect(r.issues.filter((i) => i.severity === "error")).toEqual([]);
    expect(r.moved.map((m) => `${m.def.kind}/${m.name}`)).toEqual([
      "VPC/main",
      "Subnet/a",
      "DBInstance/orders",
    ]);
    for (const { object } of r.objects) {
      const def = MIGRATABLE_KINDS.find(
        (d) => d.kind === object.kind && namespacedVariantOf(d).apiVersion === object.apiVersion,
      );
      expect(def && namespacedVariantOf(def).spec.safeParse(object.spec).success).toBe(true);
    }
  });

  it("converts the ProviderConfig to a ClusterProviderConfig, or a namespaced one with a warning on ambient identity", () => {
    const cluster = migrate([pc], { namespaced: { namespace: "payments" } });
    expect(find(cluster, "ClusterProviderConfig", "aws-prod")).toEqual({
      apiVersion: "aws.m.driftless.dev/v1alpha1",
      kind: "ClusterProviderConfig",
      metadata: { name: "aws-prod" },
      spec: { credentials: { source: "InjectedIdentity" } },
    });
    const local = migrate([pc], {
      namespaced: { namespace: "payments", providerConfigKind: "ProviderConfig" },
    });
    expect(find(local, "ProviderConfig", "aws-prod")?.metadata.namespace).toBe("payments");
    expect(issuesOf(local, "warning")).toEqual([
      expect.stringContaining("DRIFTLESS_AMBIENT_IDENTITY_NAMESPACES"),
    ]);
  });

  it("refuses what cannot be adopted safely: a create in flight, a cloud-chosen id not yet recorded", () => {
    const inFlight = {
      ...vpc,
      metadata: {
        name: "creating",
        annotations: { "crossplane.io/external-create-pending": "2026-01-01T00:00:00Z" },
      },
    };
    const unrecorded = { ...vpc, metadata: { name: "new" } };
    const r = migrate([inFlight, unrecorded], { namespaced: { namespace: "payments" } });
    expect(r.objects).toEqual([]);
    expect(issuesOf(r, "error")).toEqual([
      expect.stringContaining("has no recorded result"),
      expect.stringContaining("ids are chosen by the cloud"),
    ]);
  });

  it("needs the option, and leaves namespaced objects alone", () => {
    expect(issuesOf(migrate([subnet]), "error")).toEqual([
      expect.stringContaining("--namespaced --namespace"),
    ]);
    const already = { ...subnet, apiVersion: "ec2.aws.m.driftless.dev/v1alpha1" };
    const r = migrate([already], { namespaced: { namespace: "x" } });
    expect(r.objects).toEqual([]);
    expect(r.issues.map((i) => i.severity)).toEqual(["note"]);
  });

  it("plans: orphan, check, create, wait, then delete the old objects", () => {
    const r = migrate([vpc, subnet], { namespaced: { namespace: "payments" } });
    const steps = planSteps(r.moved, "payments", "namespaced.yaml");
    expect(steps.map((s) => s.title.split(/[,:]/)[0])).toEqual([
      "Orphan the cluster-scoped objects",
      "Check that the patch is stored (the engine reads the object fresh on every reconcile)",
      "Create the namespaced objects in payments (same external names",
      "Wait until every namespaced object is Ready and Synced",
      "Delete the cluster-scoped objects",
    ]);
    expect(steps[0]?.commands).toEqual([
      `kubectl patch vpcs.ec2.aws.driftless.dev main --type merge -p '{"spec":{"deletionPolicy":"Orphan"}}'`,
      `kubectl patch subnets.ec2.aws.driftless.dev a --type merge -p '{"spec":{"deletionPolicy":"Orphan"}}'`,
    ]);
    expect(steps[2]?.commands).toContain("kubectl apply -f namespaced.yaml");
    expect(steps[4]?.commands[0]).toBe("kubectl delete vpcs.ec2.aws.driftless.dev main --timeout=2m");
  });

  it("converts every cluster-scoped kind of the registry it is given", () => {
    const kinds = managedKinds.map((k) => k.definition).filter((d) => d.scope === "Cluster");
    const docs = kinds.map((d, i) => ({
      apiVersion: d.apiVersion,
      kind: d.kind,
      metadata: { name: `x${i}`, annotations: { "crossplane.io/external-name": `id-${i}` } },
      spec: { forProvider: {} },
    }));
    const r = migrate(docs, { namespaced: { namespace: "payments" }, kinds });
    expect(r.objects.map((o) => `${o.object.kind}.${o.object.apiVersion}`)).toEqual(
      kinds.map((d) => `${d.kind}.${namespacedVariantOf(d).apiVersion}`),
    );
    // Without the registry, the kinds Crossplane's map to are known; those are all registered.
    const registered = new Set(kinds.map((d) => `${d.kind}.${d.group}`));
    for (const d of MIGRATABLE_KINDS) expect(registered).toContain(`${d.kind}.${d.group}`);
    expect(withoutDelete(["*"])).toEqual(["Observe", "Create", "Update", "LateInitialize"]);
    expect(withoutDelete(["Observe", "Delete"])).toEqual(["Observe"]);
  });
});
