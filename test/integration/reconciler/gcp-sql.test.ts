// Cloud SQL DatabaseInstance, Database and User, Compute Network and GlobalAddress, and the private services
// Connection: the generic managed-resource behaviours against the real
// API server, with the real clients against the project's Cloud SQL and Compute wire fakes (started
// in-process here, so any running stack serves). The chain with private IP, updates and refusals is in
// test/unit/providers/gcp-private-sql.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeHttpServer } from "../../../infra/local/fakes/gcp-fake-http.ts";
import {
  type GcpPrivateNetworkingFakes,
  startGcpPrivateNetworkingFakes,
} from "../../../infra/local/fakes/gcp-private-networking-fakes.ts";
import { GlobalAddress, Network } from "../../../shared/api/gcp/compute.ts";
import { Connection } from "../../../shared/api/gcp/servicenetworking.ts";
import { Database, DatabaseInstance, User } from "../../../shared/api/gcp/sql.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { ensureCrds, ensureNamespace } from "../../support/aws.ts";
import {
  connectionData,
  describeManagedKind,
  expectAvailable,
  managedObject,
} from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { gcpProject } from "../../support/gcp.ts";
import { captureLogger, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

const kube = newKube();
const PC = uniqueName("pc-gcpsql");
let fakes: GcpPrivateNetworkingFakes;

beforeAll(async () => {
  fakes = await startGcpPrivateNetworkingFakes();
  await ensureCrds();
  await ensureNamespace(kube, "driftless-system");
  const t = providerConfigs.gcp.type;
  await kube.create(t, {
    apiVersion: `${t.group}/${t.version}`,
    kind: "ProviderConfig",
    metadata: { name: PC },
    // The fakes take no credentials, and driftless sends none to a host that is not Google's.
    spec: { projectID: gcpProject(), credentials: { source: "InjectedIdentity" }, endpoint: fakes.endpoint },
  });
});
afterAll(async () => {
  await kube.delete(providerConfigs.gcp.type, PC);
  await fakes?.close();
});

/** Requests a fake served while `fn` ran. */
async function requestsOf(fake: () => FakeHttpServer, fn: () => Promise<unknown>) {
  const before = fake().stats();
  await fn();
  const delta: Record<string, number> = {};
  for (const [k, v] of Object.entries(fake().stats()))
    if (v !== (before[k] ?? 0)) delta[k] = v - (before[k] ?? 0);
  return delta;
}

const instance = (name: string) => fakes.sql.instance(gcpProject(), name);
const settings = (name: string) => instance(name)?.settings as Record<string, unknown> | undefined;

describeManagedKind({
  type: DatabaseInstance,
  cloud: "the Cloud SQL fake",
  prefix: "sql",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: () => ({ databaseVersion: "POSTGRES_16", tier: "db-f1-micro" }),
  exists: async (name) => instance(name) !== undefined,
  requests: { during: (fn) => requestsOf(() => fakes.sql, fn), isRead: (k) => k.startsWith("GET ") },
  inSyncRequests: { "GET instances": 1 },
  // PENDING_DELETE is observed, and the delete asked for again (a no-op), until the instance is gone.
  deleteRepeatsUntilGone: true,
  invalidSpec: {
    forProvider: { databaseVersion: "MYSQL_8_0", tier: "db-f1-micro" },
    field: "spec.forProvider.databaseVersion",
  },
  import: {
    arrange: async (cloudName) => {
      fakes.sql.seedInstance(gcpProject(), cloudName, {
        databaseVersion: "POSTGRES_15",
        region: "europe-west1",
        settings: { tier: "db-custom-2-7680", dataDiskSizeGb: "50", availabilityType: "REGIONAL" },
      });
    },
    forProvider: { databaseVersion: "POSTGRES_15" },
    expectSpec: (fp) =>
      expect(fp).toMatchObject({
        databaseVersion: "POSTGRES_15",
        region: "europe-west1",
        tier: "db-custom-2-7680",
        diskSize: 50,
        diskType: "PD_SSD",
        availabilityType: "REGIONAL",
        ipv4Enabled: true,
      }),
    change: { tier: "db-custom-4-15360" },
    expectUnchanged: async (cloudName) => expect(settings(cloudName)?.tier).toBe("db-custom-2-7680"),
  },
});

describeManagedKind({
  type: Network,
  cloud: "the Compute fake",
  prefix: "net",
  providerConfig: PC,
  connectionSecret: false,
  exists: async (name) => fakes.compute.network(gcpProject(), name) !== undefined,
  requests: { during: (fn) => requestsOf(() => fakes.compute, fn), isRead: (k) => k.startsWith("GET ") },
  inSyncRequests: { "GET networks": 1 },
  invalidSpec: { forProvider: { mtu: 100 }, field: "spec.forProvider.mtu" },
  import: {
    arrange: async (cloudName) => {
      fakes.compute.seedNetwork(gcpProject(), cloudName, { autoCreateSubnetworks: false, mtu: 1500 });
    },
    expectSpec: (fp) =>
      expect(fp).toEqual({ autoCreateSubnetworks: false, routingMode: "REGIONAL", mtu: 1500 }),
    change: { mtu: 1400 },
    expectUnchanged: async (cloudName) =>
      expect(fakes.compute.network(gcpProject(), cloudName)?.mtu).toBe(1500),
  },
});

describe("Network adoption (the import example of the managed-resources guide) against the real API server", () => {
  it("adopts an existing network named by crossplane.io/external-name with an empty forProvider, and late-initializes it", async () => {
    const cloudName = uniqueName("existing-net");
    fakes.compute.seedNetwork(gcpProject(), cloudName, { routingConfig: { routingMode: "GLOBAL" } });
    const name = uniqueName("adopted");
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    await kube.create(
      Network,
      managedObject(Network, name, PC, {
        connectionSecret: false,
        annotations: { [Annotations.externalName]: cloudName },
      }),
    );

    await settle(r, keyOf(Network, name));

    const mr = await getMr<Record<string, unknown>>(kube, Network, name);
    expectAvailable(mr, cloudName);
    expect(r.externalCalls.create).toBe(0);
    expect(mr?.spec.forProvider).toEqual({ autoCreateSubnetworks: true, routingMode: "GLOBAL", mtu: 1460 });
    expect(lines.join("\n")).toContain("late-initialized");
  });
});

/** A Cloud SQL child (database, user) by its REST URL on the fake: whether it exists in `instance`. */
async function sqlChildExists(collection: "databases" | "users", instance: string, name: string) {
  const path = `projects/${gcpProject()}/instances/${instance}/${collection}/${encodeURIComponent(name)}`;
  const res = await fetch(`${fakes.sql.url}/sql/v1beta4/${path}`);
  if (res.status === 404) return false;
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return true;
}

/** One instance per test (Cloud SQL runs one operation per instance at a time). */
const childInstances: string[] = [];
function seededInstance(instance: string) {
  fakes.sql.seedInstance(gcpProject(), instance, {
    databaseVersion: "POSTGRES_16",
    settings: { tier: "db-f1-micro" },
  });
  childInstances.push(instance);
  return instance;
}
const anyInstanceHas = async (collection: "databases" | "users", name: string) =>
  (await Promise.all(childInstances.map((i) => sqlChildExists(collection, i, name)))).some(Boolean);

/** Makes a child behind driftless's back, as the console would. */
async function insertChild(
  collection: "databases" | "users",
  instance: string,
  body: Record<string, unknown>,
) {
  const path = `projects/${gcpProject()}/instances/${instance}/${collection}`;
  const res = await fetch(`${fakes.sql.url}/sql/v1beta4/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
}

const IMPORT_DB_INSTANCE = uniqueName("sqldb-import");
describeManagedKind({
  type: Database,
  cloud: "the Cloud SQL fake",
  prefix: "sqldb",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: (_b, name) => ({ instance: seededInstance(`${name}-i`) }),
  exists: (name) => anyInstanceHas("databases", name),
  requests: { during: (fn) => requestsOf(() => fakes.sql, fn), isRead: (k) => k.startsWith("GET ") },
  inSyncRequests: { "GET databases": 1 },
  import: {
    arrange: async (cloudName) => {
      await insertChild("databases", seededInstance(IMPORT_DB_INSTANCE), {
        name: cloudName,
        charset: "LATIN1",
        collation: "C",
      });
    },
    forProvider: { instance: IMPORT_DB_INSTANCE },
    expectSpec: (fp) =>
      expect(fp).toEqual({ instance: IMPORT_DB_INSTANCE, charset: "LATIN1", collation: "C" }),
    change: { charset: "UTF8" },
    expectUnchanged: async (cloudName) =>
      expect(await sqlChildExists("databases", IMPORT_DB_INSTANCE, cloudName)).toBe(true),
  },
});

const IMPORT_USER_INSTANCE = uniqueName("sqluser-import");
const NEW_PASSWORD = uniqueName("sqluser-new-password");
describeManagedKind({
  type: User,
  cloud: "the Cloud SQL fake",
  prefix: "sqluser",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: (_b, name) => ({ instance: seededInstance(`${name}-i`) }),
  exists: (name) => anyInstanceHas("users", name),
  requests: { during: (fn) => requestsOf(() => fakes.sql, fn), isRead: (k) => k.startsWith("GET ") },
  inSyncRequests: { "GET users": 1 },
  checks: {
    // The generated password reached the cloud and the connection Secret alike.
    inSync: async ({ kube, name }) => {
      const conn = await connectionData(kube, name);
      expect(conn.username).toBe(name);
      expect(fakes.sql.passwordOf(gcpProject(), `${name}-i`, name)).toBe(conn.password);
    },
  },
  import: {
    arrange: async (cloudName) => {
      await insertChild("users", seededInstance(IMPORT_USER_INSTANCE), {
        name: cloudName,
        password: "set-in-the-console",
      });
      await kube.createSecret({
        metadata: { name: NEW_PASSWORD, namespace: "default" },
        stringData: { password: "not-to-be-sent" },
      });
    },
    forProvider: { instance: IMPORT_USER_INSTANCE },
    expectSpec: (fp) => expect(fp).toEqual({ instance: IMPORT_USER_INSTANCE }),
    change: { passwordSecretRef: { namespace: "default", name: NEW_PASSWORD, key: "password" } },
    expectUnchanged: async (cloudName) =>
      expect(fakes.sql.passwordOf(gcpProject(), IMPORT_USER_INSTANCE, cloudName)).toBe("set-in-the-console"),
  },
});

/** Compute: an insert, then reads of the resource until its insert operation is done (the fake's rule). */
async function computeInsert(collection: "addresses", body: Record<string, unknown>) {
  const base = `${fakes.compute.url}/compute/v1/projects/${gcpProject()}/global/${collection}`;
  const res = await fetch(base, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${collection}: ${res.status} ${await res.text()}`);
  for (let i = 0; i < 10; i++) if ((await fetch(`${base}/${String(body.name)}`)).ok) return;
  throw new Error(`${collection}/${String(body.name)} did not appear`);
}

const ADDRESS_NET = uniqueName("addr-net");
const networkPath = (name: string) => `projects/${gcpProject()}/global/networks/${name}`;
describeManagedKind({
  type: GlobalAddress,
  cloud: "the Compute fake",
  prefix: "addr",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: () => {
    if (!fakes.compute.network(gcpProject(), ADDRESS_NET))
      fakes.compute.seedNetwork(gcpProject(), ADDRESS_NET);
    return { network: networkPath(ADDRESS_NET), prefixLength: 24 };
  },
  exists: async (name) => fakes.compute.address(gcpProject(), name) !== undefined,
  requests: { during: (fn) => requestsOf(() => fakes.compute, fn), isRead: (k) => k.startsWith("GET ") },
  inSyncRequests: { "GET addresses": 1 },
  invalidSpec: { forProvider: { prefixLength: 30 }, field: "spec.forProvider.prefixLength" },
  import: {
    arrange: async (cloudName) => {
      if (!fakes.compute.network(gcpProject(), ADDRESS_NET))
        fakes.compute.seedNetwork(gcpProject(), ADDRESS_NET);
      await computeInsert("addresses", {
        name: cloudName,
        purpose: "VPC_PEERING",
        addressType: "INTERNAL",
        prefixLength: 20,
        network: networkPath(ADDRESS_NET),
        labels: { owner: "legacy" },
      });
    },
    expectSpec: (fp) =>
      expect(fp).toMatchObject({
        purpose: "VPC_PEERING",
        addressType: "INTERNAL",
        prefixLength: 20,
        network: networkPath(ADDRESS_NET),
        labels: { owner: "legacy" },
      }),
    change: { labels: { owner: "me" } },
    expectUnchanged: async (cloudName) =>
      expect(fakes.compute.address(gcpProject(), cloudName)?.labels).toEqual({ owner: "legacy" }),
  },
});

const SERVICE = "servicenetworking.googleapis.com";
/** A network named after the object with a VPC_PEERING range `<name>-r` in it: what a connection needs. */
async function peeringNetwork(name: string) {
  fakes.compute.seedNetwork(gcpProject(), name, { autoCreateSubnetworks: false });
  await computeInsert("addresses", {
    name: `${name}-r`,
    purpose: "VPC_PEERING",
    addressType: "INTERNAL",
    prefixLength: 24,
    network: networkPath(name),
  });
  return { network: networkPath(name), reservedPeeringRanges: [`${name}-r`] };
}
/** The network a connection's recorded name (`<network path>:<service>`) or the object's name names. */
const connectionNetwork = (cloudName: string) =>
  /^projects\/[^/]+\/global\/networks\/([^/:]+):/.exec(cloudName)?.[1] ?? cloudName;

describeManagedKind({
  type: Connection,
  cloud: "the Service Networking fake",
  prefix: "conn",
  providerConfig: PC,
  connectionSecret: false,
  forProvider: (_b, name) => peeringNetwork(name),
  exists: async (cloudName) =>
    fakes.serviceNetworking.connection(networkPath(connectionNetwork(cloudName))) !== undefined,
  requests: {
    during: (fn) => requestsOf(() => fakes.serviceNetworking, fn),
    isRead: (k) => k.startsWith("GET "),
  },
  inSyncRequests: { "GET connections": 1 },
  ownTests: {
    externalName:
      "one connection per network and service: its external name is <network path>:<service>, recorded on create (adoption is in test/unit/providers/gcp-private-sql.test.ts)",
  },
  import: {
    arrange: async (cloudName) => {
      const { network, reservedPeeringRanges } = await peeringNetwork(cloudName);
      const url = `${fakes.serviceNetworking.url}/v1/services/${SERVICE}/connections`;
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ network, reservedPeeringRanges }),
      });
      if (!res.ok) throw new Error(`POST connections: ${res.status} ${await res.text()}`);
      return `${network}:${SERVICE}`;
    },
    expectSpec: (fp, { cloudName }) =>
      expect(fp).toEqual({
        network: networkPath(connectionNetwork(cloudName)),
        service: SERVICE,
        reservedPeeringRanges: [`${connectionNetwork(cloudName)}-r`],
      }),
    change: { reservedPeeringRanges: [] },
    expectUnchanged: async (cloudName) =>
      expect(
        fakes.serviceNetworking.connection(networkPath(connectionNetwork(cloudName)))?.reservedPeeringRanges,
      ).toEqual([`${connectionNetwork(cloudName)}-r`]),
  },
});
