// Cloud SQL with a private IP, end to end through the real engine and the real clients (the Cloud SQL
// Admin, Compute and Service Networking JSON clients) against the project's wire fakes,
// started in-process, with the in-memory API server: Network → GlobalAddress → Connection →
// DatabaseInstance → Database and User, then updates, refusals and deletes. Operations progress by
// polls, so the whole file runs in about a second.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { ComputeFake } from "../../../infra/local/fakes/gcp-compute-fake.ts";
import { rateLimited } from "../../../infra/local/fakes/gcp-fake-http.ts";
import {
  type GcpPrivateNetworkingFakes,
  startGcpPrivateNetworkingFakes,
} from "../../../infra/local/fakes/gcp-private-networking-fakes.ts";
import {
  PEERING,
  type ServiceNetworkingFake,
} from "../../../infra/local/fakes/gcp-servicenetworking-fake.ts";
import type { SqlFake } from "../../../infra/local/fakes/gcp-sql-fake.ts";
import { GlobalAddress, Network } from "../../../shared/api/gcp/compute.ts";
import { Connection } from "../../../shared/api/gcp/servicenetworking.ts";
import { Database, DatabaseInstance, User } from "../../../shared/api/gcp/sql.ts";
import { type ManagedResource, namespacedTypeOf } from "../../../shared/api/managed.ts";
import { Annotations, MANAGED_FINALIZER, type ResourceType } from "../../../shared/api/meta.ts";
import { providerConfigs, v2ProviderConfigs } from "../../../shared/api/provider-config.ts";
import { gcpKinds } from "../../../shared/providers/gcp/kinds.ts";
import type { ReconcileResult, ResourceKey } from "../../../shared/reconciler/reconciler.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import { MemoryApiServer } from "../../support/memory-apiserver.ts";
import { captureLogger } from "../../support/reconcile.ts";
import { Reconciler } from "../../support/routed.ts";

const PROJECT = "driftless-test";
const NET_PATH = (n: string) => `projects/${PROJECT}/global/networks/${n}`;
let fakes: GcpPrivateNetworkingFakes;
let compute: ComputeFake;
let sn: ServiceNetworkingFake;
let sql: SqlFake;
const api = new MemoryApiServer();
const kube = api.kube();
const log = captureLogger();
const events: string[] = [];
let r: Reconciler;

beforeAll(async () => {
  fakes = await startGcpPrivateNetworkingFakes({ compute: { operationPolls: 2 } });
  ({ compute, serviceNetworking: sn, sql } = fakes);
  const pc = providerConfigs.gcp.type;
  api.seed(pc, {
    apiVersion: `${pc.group}/${pc.version}`,
    kind: "ProviderConfig",
    metadata: { name: "default" },
    spec: {
      projectID: PROJECT,
      credentials: { source: "InjectedIdentity" },
      endpoint: fakes.endpoint,
    },
  });
  r = new Reconciler(kube, new KindRegistry(gcpKinds), {
    creationGracePeriodMs: 0,
    rateLimit: false,
    retryBaseMs: 0,
    logger: log.logger,
    events: {
      async record(_mr, type, reason, message) {
        events.push(`${type} ${reason} ${message}`);
      },
    },
  });
});
afterAll(async () => {
  await fakes?.close();
});

type T = ResourceType & { apiVersion: string };
const key = (t: T, name: string): ResourceKey => ({ apiVersion: t.apiVersion, kind: t.kind, name });
const get = (t: T, name: string) => api.get<ManagedResource<Record<string, unknown>>>(t, name);
const condition = (t: T, name: string, type: string) =>
  get(t, name)?.status?.conditions?.find((c) => c.type === type);
const secretData = (name: string) =>
  Object.fromEntries(
    Object.entries((api.secret("default", name)?.data ?? {}) as Record<string, string>).map(([k, v]) => [
      k,
      Buffer.from(v, "base64").toString(),
    ]),
  );

function apply(
  t: T,
  name: string,
  forProvider: Record<string, unknown>,
  extra: { annotations?: Record<string, string>; secret?: boolean } = {},
) {
  api.seed(t, {
    apiVersion: t.apiVersion,
    kind: t.kind,
    metadata: { name, ...(extra.annotations ? { annotations: extra.annotations } : {}) },
    spec: {
      forProvider,
      ...(extra.secret ? { writeConnectionSecretToRef: { namespace: "default", name: `${name}-conn` } } : {}),
    },
  });
}

/** Reconciles until nothing is requeued (or `max` rounds); every result. */
async function settle(t: T, name: string, max = 12): Promise<ReconcileResult[]> {
  const out: ReconcileResult[] = [];
  for (let i = 0; i < max; i++) {
    const res = await r.reconcile(key(t, name));
    out.push(res);
    if (res.requeueAfterMs === undefined || res.outcome === "error" || res.outcome === "blocked") break;
  }
  return out;
}

const expectReady = (t: T, name: string) => {
  expect(condition(t, name, "Ready")).toMatchObject({ status: "True", reason: "Available" });
  expect(condition(t, name, "Synced")).toMatchObject({ status: "True" });
};

describe("Cloud SQL with private IP against the Cloud SQL, Compute and Service Networking fakes", () => {
  it("creates Network, GlobalAddress and Connection in order, each waiting for what it references", async () => {
    apply(Network, "net-a", { autoCreateSubnetworks: false });
    apply(GlobalAddress, "range-a", { prefixLength: 16, networkRef: { name: "net-a" } });
    apply(Connection, "conn-a", {
      networkRef: { name: "net-a" },
      reservedPeeringRangeRefs: [{ name: "range-a" }],
    });

    // The address cannot be made before its network is Ready.
    const early = await r.reconcile(key(GlobalAddress, "range-a"));
    expect(early.outcome).not.toBe("created");
    expect(condition(GlobalAddress, "range-a", "Synced")?.message).toContain(
      "referenced resource may not yet be ready",
    );

    const net = await settle(Network, "net-a");
    // The insert runs for a poll: Creating first (its operation is found), then Available.
    expect(net.map((x) => x.outcome)).toEqual(["created", "in-sync", "in-sync"]);
    expectReady(Network, "net-a");
    expect(get(Network, "net-a")?.spec.forProvider).toEqual({
      autoCreateSubnetworks: false,
      routingMode: "REGIONAL",
      mtu: 1460,
    });

    await settle(GlobalAddress, "range-a");
    expectReady(GlobalAddress, "range-a");
    const range = get(GlobalAddress, "range-a");
    expect(range?.spec.forProvider).toMatchObject({
      network: NET_PATH("net-a"),
      purpose: "VPC_PEERING",
      addressType: "INTERNAL",
      prefixLength: 16,
    });
    expect(compute.address(PROJECT, "range-a")?.network).toBe(
      `${compute.url}/compute/v1/${NET_PATH("net-a")}`,
    );

    await settle(Connection, "conn-a");
    expectReady(Connection, "conn-a");
    const conn = get(Connection, "conn-a");
    expect(conn?.metadata.annotations?.[Annotations.externalName]).toBe(
      `${NET_PATH("net-a")}:servicenetworking.googleapis.com`,
    );
    expect(conn?.spec.forProvider.reservedPeeringRanges).toEqual(["range-a"]);
    expect(sn.connection(NET_PATH("net-a"))?.reservedPeeringRanges).toEqual(["range-a"]);
    // Its operation is done by now: the peering shows on the network, and the Network reports it.
    await settle(Network, "net-a");
    expect(get(Network, "net-a")?.status?.atProvider).toMatchObject({ peerings: [PEERING] });
  });

  it("creates the instance with a private IP: PENDING_CREATE → RUNNABLE → Ready, with the connection Secret", async () => {
    apply(
      DatabaseInstance,
      "db-a",
      {
        databaseVersion: "POSTGRES_16",
        tier: "db-custom-1-3840",
        ipv4Enabled: false,
        privateNetworkRef: { name: "net-a" },
      },
      { secret: true },
    );

    const first = await r.reconcile(key(DatabaseInstance, "db-a"));
    expect(first.outcome).toBe("created");
    await r.reconcile(key(DatabaseInstance, "db-a"));
    expect(condition(DatabaseInstance, "db-a", "Ready")).toMatchObject({
      status: "False",
      reason: "Creating",
    });
    expect(get(DatabaseInstance, "db-a")?.status?.atProvider).toMatchObject({ state: "PENDING_CREATE" });
    await settle(DatabaseInstance, "db-a");

    expectReady(DatabaseInstance, "db-a");
    const mr = get(DatabaseInstance, "db-a");
    expect(mr?.metadata.finalizers).toContain(MANAGED_FINALIZER);
    // Late-initialized: the provider's defaults, and the network the reference chose.
    expect(mr?.spec.forProvider).toMatchObject({
      region: "us-central1",
      diskSize: 10,
      diskType: "PD_SSD",
      diskAutoresize: true,
      availabilityType: "ZONAL",
      activationPolicy: "ALWAYS",
      privateNetwork: NET_PATH("net-a"),
      deletionProtectionEnabled: false,
    });
    expect(mr?.status?.atProvider).toMatchObject({
      state: "RUNNABLE",
      connectionName: `${PROJECT}:us-central1:db-a`,
    });
    const data = secretData("db-a-conn");
    expect(Object.keys(data).sort()).toEqual([
      "connectionName",
      "password",
      "port",
      "privateIP",
      "serverCACertificate",
      "username",
    ]);
    expect(data).toMatchObject({
      port: "5432",
      username: "postgres",
      connectionName: `${PROJECT}:us-central1:db-a`,
    });
    expect(data.privateIP).toMatch(/^10\./);
    expect(data.serverCACertificate).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(data.password).toMatch(/^[A-Za-z][A-Za-z0-9]{31}$/);
    // The generated password is the one Cloud SQL got, and it is nowhere but the Secret.
    expect(sql.passwordOf(PROJECT, "db-a", "postgres")).toBe(data.password);
    const visible = [
      ...log.lines,
      ...events,
      JSON.stringify(
        api.list(`${DatabaseInstance.group}/${DatabaseInstance.version}/${DatabaseInstance.plural}`),
      ),
      JSON.stringify(api.list("v1/events")),
    ].join("\n");
    expect(visible).not.toContain(data.password);
  });

  it("waits (a wait, not a failure) while a private IP's network has no service networking connection, in Synced", async () => {
    compute.seedNetwork(PROJECT, "net-unpeered");
    apply(
      DatabaseInstance,
      "db-unpeered",
      {
        databaseVersion: "POSTGRES_16",
        tier: "db-f1-micro",
        privateNetwork: NET_PATH("net-unpeered"),
      },
      { secret: true },
    );
    const res = await r.reconcile(key(DatabaseInstance, "db-unpeered"));
    expect(res.outcome).toBe("waiting");
    const synced = condition(DatabaseInstance, "db-unpeered", "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain("has no private services connection yet");
    expect(synced?.message).toContain("NETWORK_NOT_PEERED");
    expect(sql.instance(PROJECT, "db-unpeered")).toBeUndefined();
  });

  it("creates a Database and a User on the instance through instanceRef; the user's password is published, never logged", async () => {
    apply(Database, "appdb", { instanceRef: { name: "db-a" } }, { secret: true });
    apply(User, "app", { instanceRef: { name: "db-a" } }, { secret: true });
    await settle(Database, "appdb");
    expectReady(Database, "appdb");
    expect(get(Database, "appdb")?.spec.forProvider).toMatchObject({
      instance: "db-a",
      charset: "UTF8",
      collation: "en_US.UTF8",
    });
    expect(secretData("appdb-conn")).toEqual({ database: "appdb" });

    // The instance's database create may still be running: the user waits for it, then goes in.
    await settle(User, "app");
    expectReady(User, "app");
    const user = secretData("app-conn");
    expect(user.username).toBe("app");
    expect(sql.passwordOf(PROJECT, "db-a", "app")).toBe(user.password);
    expect([...log.lines, ...events].join("\n")).not.toContain(user.password);
  });

  it("updates tier, disk size and labels in place, and rotates the root password from a Secret", async () => {
    api.seedSecret("default", "db-a-root", { password: "rotated-Passw0rd-value" });
    api.mutate(DatabaseInstance, "db-a", (o) => {
      Object.assign((o.spec as { forProvider: Record<string, unknown> }).forProvider, {
        tier: "db-custom-2-7680",
        diskSize: 20,
        userLabels: { team: "payments" },
        rootPasswordSecretRef: { namespace: "default", name: "db-a-root", key: "password" },
      });
    });
    const results = await settle(DatabaseInstance, "db-a");
    expect(results.map((x) => x.outcome)).toContain("updated");
    const settings = sql.instance(PROJECT, "db-a")?.settings as Record<string, unknown>;
    expect(settings).toMatchObject({
      tier: "db-custom-2-7680",
      dataDiskSizeGb: "20",
      userLabels: { team: "payments" },
    });
    expect(sql.passwordOf(PROJECT, "db-a", "postgres")).toBe("rotated-Passw0rd-value");
    expect(secretData("db-a-conn").password).toBe("rotated-Passw0rd-value");
    expectReady(DatabaseInstance, "db-a");
    expect([...log.lines, ...events].join("\n")).not.toContain("rotated-Passw0rd-value");
  });

  it("refuses a changed region (the instance's home) and reports an immutable version change, leaving the instance unchanged", async () => {
    const forProvider = (fp: Record<string, unknown>) =>
      api.mutate(DatabaseInstance, "db-a", (o) => {
        Object.assign((o.spec as { forProvider: Record<string, unknown> }).forProvider, fp);
      });
    // The region is where the instance lives: refused before any read there, never followed.
    forProvider({ region: "europe-west1" });
    expect((await r.reconcile(key(DatabaseInstance, "db-a"))).outcome).toBe("error");
    const moved = condition(DatabaseInstance, "db-a", "Synced");
    expect(moved).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(moved?.message).toContain('region "us-central1"');
    expect(moved?.message).toContain('"europe-west1"');
    forProvider({ region: "us-central1", databaseVersion: "POSTGRES_17" });
    expect((await r.reconcile(key(DatabaseInstance, "db-a"))).outcome).toBe("error");
    const synced = condition(DatabaseInstance, "db-a", "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain("cannot update immutable field(s)");
    expect(synced?.message).toContain("databaseVersion");
    expect(sql.instance(PROJECT, "db-a")).toMatchObject({
      region: "us-central1",
      databaseVersion: "POSTGRES_16",
    });
    forProvider({ databaseVersion: "POSTGRES_16" });
    await settle(DatabaseInstance, "db-a");
    expectReady(DatabaseInstance, "db-a");
  });

  it("reports Cloud SQL's quota error as throttling, then creates on the next try", async () => {
    sql.failNext("POST instances", () => rateLimited("sqladmin.googleapis.com"));
    apply(
      DatabaseInstance,
      "db-quota",
      { databaseVersion: "POSTGRES_15", tier: "db-f1-micro" },
      { secret: true },
    );
    const res = await r.reconcile(key(DatabaseInstance, "db-quota"));
    expect(res.outcome).toBe("error");
    expect(condition(DatabaseInstance, "db-quota", "Synced")?.message).toContain("throttled by Google Cloud");
    expect(sql.instance(PROJECT, "db-quota")).toBeUndefined();
    await settle(DatabaseInstance, "db-quota");
    expectReady(DatabaseInstance, "db-quota");
  });

  it("adopts an existing network by external name with an empty forProvider, late-initialized, never created", async () => {
    compute.seedNetwork(PROJECT, "legacy-net", {
      autoCreateSubnetworks: false,
      mtu: 1500,
      routingConfig: { routingMode: "GLOBAL" },
    });
    const before = compute.stats();
    apply(Network, "imported", {}, { annotations: { [Annotations.externalName]: "legacy-net" } });
    await settle(Network, "imported");
    expectReady(Network, "imported");
    expect(get(Network, "imported")?.spec.forProvider).toEqual({
      autoCreateSubnetworks: false,
      routingMode: "GLOBAL",
      mtu: 1500,
    });
    expect((compute.stats()["POST networks"] ?? 0) - (before["POST networks"] ?? 0)).toBe(0);
  });

  it("reports a quota failure of a network insert from its operation", async () => {
    compute.failNextInsert("net-quota", "QUOTA_EXCEEDED", "Quota 'NETWORKS' exceeded.  Limit: 5.0 globally.");
    apply(Network, "net-quota", {});
    await settle(Network, "net-quota");
    const synced = condition(Network, "net-quota", "Synced");
    expect(synced).toMatchObject({ status: "False" });
    expect(synced?.message).toContain("QUOTA_EXCEEDED");
  });

  it("adds a second reserved range to the connection in place (connections.patch)", async () => {
    apply(GlobalAddress, "range-b", { prefixLength: 20, networkRef: { name: "net-a" } });
    await settle(GlobalAddress, "range-b");
    api.mutate(Connection, "conn-a", (o) => {
      const fp = (o.spec as { forProvider: Record<string, unknown> }).forProvider;
      fp.reservedPeeringRangeRefs = [{ name: "range-a" }, { name: "range-b" }];
      delete fp.reservedPeeringRanges;
    });
    const results = await settle(Connection, "conn-a");
    expect(results.map((x) => x.outcome)).toContain("updated");
    expect(sn.connection(NET_PATH("net-a"))?.reservedPeeringRanges).toEqual(["range-a", "range-b"]);
    expectReady(Connection, "conn-a");
  });

  it("reports an instance whose create operation failed (FAILED) with the operation's error", async () => {
    sql.failNextCreate("db-failed", "INTERNAL_ERROR", "An internal error has occurred.");
    apply(
      DatabaseInstance,
      "db-failed",
      { databaseVersion: "POSTGRES_16", tier: "db-f1-micro" },
      { secret: true },
    );
    await settle(DatabaseInstance, "db-failed");
    const ready = condition(DatabaseInstance, "db-failed", "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "Unavailable" });
    expect(ready?.message).toContain(
      "Cloud SQL instance state is FAILED: INTERNAL_ERROR: An internal error has occurred.",
    );
  });

  it("works the same against a slow cloud (every answer delayed)", async () => {
    sql.delayMs = 40;
    try {
      apply(
        DatabaseInstance,
        "db-slow",
        { databaseVersion: "POSTGRES_16", tier: "db-f1-micro" },
        { secret: true },
      );
      await settle(DatabaseInstance, "db-slow");
      expectReady(DatabaseInstance, "db-slow");
    } finally {
      sql.delayMs = 0;
    }
  });

  it("sends every write with driftless's user agent (the cloud-event path drops its own writes by it)", () => {
    for (const fake of [sql, compute, sn]) {
      expect(fake.writeAgents.length).toBeGreaterThan(0);
      for (const agent of fake.writeAgents) expect(agent).toMatch(/^driftless\b/);
    }
  });

  it("deletes in reverse: the network waits for its dependents, the instance goes through PENDING_DELETE", async () => {
    for (const [t, n] of [
      [User, "app"],
      [Database, "appdb"],
      [DatabaseInstance, "db-a"],
      [Network, "net-a"],
    ] as const)
      await kube.delete(t, n);

    await settle(User, "app");
    expect(get(User, "app")).toBeUndefined();
    await settle(Database, "appdb");
    expect(get(Database, "appdb")).toBeUndefined();
    const db = await settle(DatabaseInstance, "db-a");
    expect(db.map((x) => x.outcome)).toEqual(expect.arrayContaining(["deleting", "deleted"]));
    expect(sql.instance(PROJECT, "db-a")).toBeUndefined();
    expect(api.secret("default", "db-a-conn")).toBeUndefined();

    // Still peered and holding the range: Ready=False Deleting with the reason, not an error.
    const blocked = await r.reconcile(key(Network, "net-a"));
    expect(blocked.outcome).toBe("deleting");
    expect(condition(Network, "net-a", "Ready")?.message).toContain("resourceInUseByAnotherResource");

    await kube.delete(Connection, "conn-a");
    await settle(Connection, "conn-a");
    expect(get(Connection, "conn-a")).toBeUndefined();
    expect(sn.connection(NET_PATH("net-a"))).toBeUndefined();
    for (const range of ["range-a", "range-b"]) {
      await kube.delete(GlobalAddress, range);
      await settle(GlobalAddress, range);
      expect(compute.address(PROJECT, range)).toBeUndefined();
    }
    await settle(Network, "net-a");
    expect(get(Network, "net-a")).toBeUndefined();
    expect(compute.network(PROJECT, "net-a")).toBeUndefined();
  });
});

const exampleDocs = () =>
  parseAllDocuments(readFileSync(new URL("../../../examples/gcp-sql.yaml", import.meta.url), "utf8")).map(
    (d) => d.toJS() as ManagedResource,
  );

/**
 * Applies the objects at once to a fresh API server with `providerConfig`, then reconciles them
 * round-robin, as a queue would deliver them: each waits for its references, none needs an order.
 */
async function converge(
  docs: ManagedResource[],
  providerConfig: { type: ResourceType; object: Record<string, unknown> },
) {
  const example = new MemoryApiServer();
  example.seed(providerConfig.type, providerConfig.object as Parameters<MemoryApiServer["seed"]>[1]);
  const kinds = docs.map((d) => {
    const kind = gcpKinds.find(
      (k) => k.definition.apiVersion === d.apiVersion && k.definition.kind === d.kind,
    );
    expect(kind, `${d.apiVersion} ${d.kind}`).toBeDefined();
    expect(() => kind?.definition.spec.parse(d.spec)).not.toThrow();
    example.seed(kind?.definition as T, d as unknown as Parameters<MemoryApiServer["seed"]>[1]);
    return kind?.definition as T;
  });
  const worker = new Reconciler(example.kube(), new KindRegistry(gcpKinds), {
    creationGracePeriodMs: 0,
    rateLimit: false,
    retryBaseMs: 0,
  });
  const ready = () =>
    docs.filter((d, i) =>
      example
        .get<ManagedResource>(kinds[i] as T, d.metadata.name, d.metadata.namespace)
        ?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
    ).length;
  for (let round = 0; round < 20 && ready() < docs.length; round++)
    for (const [i, d] of docs.entries())
      await worker.reconcile({
        ...key(kinds[i] as T, d.metadata.name),
        ...(d.metadata.namespace ? { namespace: d.metadata.namespace } : {}),
      });
  expect(ready()).toBe(docs.length);
  return example;
}

const INSTANCE_SECRET_KEYS = [
  "connectionName",
  "password",
  "port",
  "privateIP",
  "serverCACertificate",
  "username",
];

describe("examples/gcp-sql.yaml", () => {
  it("is valid for the kinds' schemas and becomes Ready when applied all at once", async () => {
    const pc = providerConfigs.gcp.type;
    const example = await converge(exampleDocs(), {
      type: pc,
      object: {
        apiVersion: `${pc.group}/${pc.version}`,
        kind: "ProviderConfig",
        metadata: { name: "default" },
        spec: {
          projectID: "example-project",
          credentials: { source: "InjectedIdentity" },
          endpoint: fakes.endpoint,
        },
      },
    });
    const secret = example.secret("default", "orders-db")?.data as Record<string, string>;
    expect(Object.keys(secret).sort()).toEqual(INSTANCE_SECRET_KEYS);
  });

  it("becomes Ready in the namespaced (Crossplane v2) shape too, in its own namespace, with a ClusterProviderConfig", async () => {
    const cpc = v2ProviderConfigs.gcp.cluster.type;
    const docs = exampleDocs().map((d) => {
      const t = namespacedTypeOf({
        ...(gcpKinds.find((k) => k.definition.apiVersion === d.apiVersion)?.definition as T),
      });
      const ref = d.spec.writeConnectionSecretToRef;
      return {
        ...d,
        apiVersion: t.apiVersion,
        metadata: { ...d.metadata, namespace: "team-a" },
        spec: { ...d.spec, ...(ref ? { writeConnectionSecretToRef: { name: ref.name } } : {}) },
      } as ManagedResource;
    });
    const example = await converge(docs, {
      type: cpc,
      object: {
        apiVersion: `${cpc.group}/${cpc.version}`,
        kind: "ClusterProviderConfig",
        metadata: { name: "default" },
        spec: {
          projectID: "example-project-v2",
          credentials: { source: "InjectedIdentity" },
          endpoint: fakes.endpoint,
        },
      },
    });
    const secret = example.secret("team-a", "orders-db")?.data as Record<string, string>;
    expect(Object.keys(secret).sort()).toEqual(INSTANCE_SECRET_KEYS);
    expect(fakes.sql.instance("example-project-v2", "orders-db")?.state).toBe("RUNNABLE");
  });
});
