// Cloud SQL runs one operation per instance and refuses the next with 409 operationInProgress — the same
// HTTP status as "already exists". A Database or User insert refused that way is a wait, said plainly;
// never taken for an insert an earlier attempt made (which would adopt, or set a password on, a user that
// does not exist). Against the Cloud SQL fake, with the kinds' own clients.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SqlFake, startSqlFake } from "../../../infra/local/fakes/gcp-sql-fake.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import type { GcpProviderConfigSpec, ProviderConfig } from "../../../shared/api/provider-config.ts";
import { sqlDatabaseProvider } from "../../../shared/providers/gcp/sql-database.ts";
import { sqlUserProvider } from "../../../shared/providers/gcp/sql-user.ts";

const PROJECT = "ops-project";
const INSTANCE = "busy";
let sql: SqlFake;

beforeAll(async () => {
  // An operation stays running for many reads: the next write on the instance is refused meanwhile.
  sql = await startSqlFake({ operationPolls: 50 });
  sql.seedInstance(PROJECT, INSTANCE, { databaseVersion: "POSTGRES_16", settings: { tier: "db-f1-micro" } });
  const res = await fetch(`${sql.url}/sql/v1beta4/projects/${PROJECT}/instances/${INSTANCE}/databases`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "running" }),
  });
  expect(res.status).toBe(200);
});
afterAll(async () => {
  await sql?.close();
});

const providerConfig = (): ProviderConfig<GcpProviderConfigSpec> => ({
  apiVersion: "gcp.driftless.dev/v1alpha1",
  kind: "ProviderConfig",
  metadata: { name: "ops", uid: "uid-ops", generation: 1 },
  spec: { projectID: PROJECT, credentials: { source: "InjectedIdentity" }, endpoint: { sql: sql.url } },
});
const child = (kind: string, forProvider: Record<string, unknown>) =>
  ({
    apiVersion: "sql.gcp.driftless.dev/v1alpha1",
    kind,
    metadata: { name: "x", uid: "uid-x", annotations: {} },
    spec: { forProvider: { instance: INSTANCE, ...forProvider } },
  }) as ManagedResource;

describe("Cloud SQL: a write refused because another operation runs on the instance", () => {
  it("a Database insert is a wait, not an adopted database", async () => {
    const client = await sqlDatabaseProvider.connect({
      providerConfig: providerConfig(),
      readSecretKey: () => Promise.reject(new Error("no Secret is read")),
    });
    const err = await client.create(child("Database", {}), "orders").catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      `an operation is running on Cloud SQL instance ${INSTANCE}; the change is sent once it is done`,
    );
    expect((await client.observe(child("Database", {}), "orders")).resourceExists).toBe(false);
  });

  it("a User insert is a wait, not a password set on a user that does not exist", async () => {
    const client = await sqlUserProvider.connect({
      providerConfig: providerConfig(),
      readSecretKey: () => Promise.resolve("a-User-passw0rd"),
    });
    const user = child("User", { passwordSecretRef: { name: "pw", namespace: "default", key: "password" } });
    const err = await client.create(user, "reporter").catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      `an operation is running on Cloud SQL instance ${INSTANCE}; the change is sent once it is done`,
    );
    expect(sql.passwordOf(PROJECT, INSTANCE, "reporter")).toBeUndefined();
    expect(sql.stats()["PUT users"] ?? 0).toBe(0);
  });
});
