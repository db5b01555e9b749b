import { describe, expect, it } from "vitest";
import { initialForProvider } from "../../../shared/claims/binding.ts";
import { classBindings } from "../../../shared/claims/bindings/index.ts";

const binding = (kind: string) => {
  const b = classBindings.find((x) => x.class.kind === kind);
  if (!b) throw new Error(`no binding ${kind}`);
  return b;
};

describe("class bindings: template ⊕ the claim's portable fields", () => {
  it("SQS: retention and processing timeout, over the class template", () => {
    const part = binding("SQSQueueClass").parts[0]!;
    const fp = initialForProvider(part, {
      claim: { retentionSeconds: 3600, processingTimeoutSeconds: 45 },
      classSpec: { forProvider: { visibilityTimeoutSeconds: 10, delaySeconds: 5 } },
      name: "q-1",
    });
    expect(fp).toEqual({ visibilityTimeoutSeconds: 45, delaySeconds: 5, messageRetentionSeconds: 3600 });
  });

  it("Pub/Sub: a topic and a subscription that references it, same name; the subscription is primary", () => {
    const b = binding("PubSubQueueClass");
    expect(b.parts.map((p) => [p.type.kind, p.primary ?? false])).toEqual([
      ["Topic", false],
      ["Subscription", true],
    ]);
    const ctx = {
      claim: { retentionSeconds: 600 },
      classSpec: { subscription: { forProvider: { ackDeadlineSeconds: 20 } } },
      name: "q-1",
    };
    expect(initialForProvider(b.parts[1]!, ctx)).toEqual({
      ackDeadlineSeconds: 20,
      topicRef: { name: "q-1" },
      messageRetentionDuration: "600s",
    });
    expect(initialForProvider(b.parts[0]!, ctx)).toEqual({});
  });

  it("S3: labels merge into the template's tags; versioning false only suspends a versioned bucket", () => {
    const part = binding("S3BucketClass").parts[0]!;
    const ctx = {
      claim: { labels: { team: "a" }, versioning: false },
      classSpec: { forProvider: { tags: { cc: "1" } } },
      name: "b",
    };
    expect(initialForProvider(part, ctx)).toEqual({ tags: { cc: "1", team: "a" } });
    expect(part.portable({ ...ctx, current: { versioning: "Enabled" } })).toEqual({
      versioning: "Suspended",
    });
    expect(part.portable({ ...ctx, claim: { versioning: true } })).toEqual({ versioning: "Enabled" });
  });

  it("RDS: postgres, the class's size map, and a username; never a shared password", () => {
    const part = binding("RDSInstanceClass").parts[0]!;
    const fp = initialForProvider(part, {
      claim: { version: "16", storageGB: 50, size: "large" },
      classSpec: { forProvider: { skipFinalSnapshot: true }, sizes: { large: "db.r6g.large" } },
      name: "db",
    });
    expect(fp).toEqual({
      engine: "postgres",
      masterUsername: "dbadmin",
      engineVersion: "16",
      allocatedStorage: 50,
      dbInstanceClass: "db.r6g.large",
      skipFinalSnapshot: true,
    });
    expect(binding("RDSInstanceClass").connection({ endpoint: "h.example", port: "5432" })).toEqual({
      service: "rds-postgresql",
      host: "h.example",
    });
  });

  it("Cloud SQL: POSTGRES_<major>, diskSize, the class's tier map; the portable host is the private IP, else the public one", () => {
    const b = binding("CloudSQLInstanceClass");
    const fp = initialForProvider(b.parts[0]!, {
      claim: { version: "16.4", storageGB: 50, size: "medium" },
      classSpec: { forProvider: { region: "europe-west1", privateNetworkRef: { name: "vpc" } }, sizes: {} },
      name: "db",
    });
    expect(fp).toEqual({
      region: "europe-west1",
      privateNetworkRef: { name: "vpc" },
      databaseVersion: "POSTGRES_16",
      diskSize: 50,
      tier: "db-custom-2-7680",
    });
    expect(b.connection({ privateIP: "10.0.0.3", publicIP: "34.1.2.3" })).toMatchObject({ host: "10.0.0.3" });
    expect(b.connection({ publicIP: "34.1.2.3" })).toEqual({
      service: "cloudsql-postgresql",
      host: "34.1.2.3",
    });
  });

  it("Azure PostgreSQL: the major version, storage rounded up to a size Azure offers, the sku map, an administrator", () => {
    const b = binding("AzurePostgreSQLClass");
    const fp = initialForProvider(b.parts[0]!, {
      claim: { version: "16", storageGB: 100, size: "small" },
      classSpec: { forProvider: { location: "westeurope", resourceGroupNameRef: { name: "dbs" } } },
      name: "db",
    });
    expect(fp).toEqual({
      location: "westeurope",
      resourceGroupNameRef: { name: "dbs" },
      administratorLogin: "pgadmin",
      version: "16",
      storageSizeGB: 128,
      sku: { name: "Standard_B1ms", tier: "Burstable" },
    });
    expect(b.parts[0]!.portable({ claim: { storageGB: 20 }, classSpec: {}, name: "db" }).storageSizeGB).toBe(
      32,
    );
    expect(b.connection({ host: "db.postgres.database.azure.com" })).toEqual({ service: "azure-postgresql" });
  });

  it("every PostgreSQL class applies the same limits", () => {
    for (const kind of ["RDSInstanceClass", "CloudSQLInstanceClass", "AzurePostgreSQLClass"]) {
      const over = binding(kind).overLimit?.(
        { storageGB: 500, size: "small" },
        { limits: { maxStorageGB: 100 } },
        kind,
      );
      expect(over, kind).toMatch(/storageGB 500 is over the limit/);
    }
  });

  it("Azure: refuses versioning, which containers do not have", () => {
    expect(binding("AzureContainerClass").unsupported?.({ versioning: true })).toMatch(
      /cannot serve versioning/,
    );
    expect(binding("AzureContainerClass").unsupported?.({ versioning: false })).toBeUndefined();
  });

  it("serves every class kind exactly once, and exactly one part of each is primary", () => {
    expect(new Set(classBindings.map((b) => b.class.kind)).size).toBe(classBindings.length);
    for (const b of classBindings) expect(b.parts.filter((p) => p.primary)).toHaveLength(1);
  });
});
