import { dirname } from "node:path";
import { PostgreSQLManagementFlexibleServerClient, type Server } from "@azure/arm-postgresql-flexible";
import { ClientSecretCredential } from "@azure/identity";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeServer, startArmFake } from "../../../infra/local/fakes/arm-fake.ts";
import { ensureTls } from "../../../infra/local/tls.ts";
import {
  FlexibleServer,
  FlexibleServerDatabase,
  FlexibleServerFirewallRule,
} from "../../../shared/api/azure/dbforpostgresql.ts";
import { Subnet, VirtualNetwork } from "../../../shared/api/azure/network.ts";
import { ResourceGroup } from "../../../shared/api/azure/resources.ts";
import { ensureCrds } from "../../support/aws.ts";
import {
  AZURE_CLIENT_ID,
  AZURE_CLIENT_SECRET,
  armClient,
  armRequestsDuring,
  armStats,
  createAzureProviderConfig,
  reconcileUntil,
  resetArmStats,
} from "../../support/azure.ts";
import {
  connectionData,
  describeManagedKind,
  expectAvailable,
  expectSecretOwnedBy,
  type ManagedType,
  type MrOptions,
  managedObject,
} from "../../support/conformance.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { captureLogger, conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

const kube = newKube();
// This suite's own ARM fake: it checks client secrets and counts only this suite's calls.
let fake: FakeServer;
let pg: PostgreSQLManagementFlexibleServerClient;
const PC = uniqueName("pc-azpg");
const RG = uniqueName("rg-azpg"); // made directly with the SDK, for tests that do not exercise references
const OTHER_RG = uniqueName("rg-azpg-other");

const mrObject = (def: ManagedType, name: string, forProvider: Record<string, unknown>, o: MrOptions = {}) =>
  managedObject(def, name, PC, { forProvider, ...o });

/** A small public server: what every test starts from. */
const serverSpec = (o: Record<string, unknown> = {}) => ({
  resourceGroupName: RG,
  location: "westeurope",
  administratorLogin: "pgadmin",
  version: "16",
  sku: { name: "Standard_B1ms", tier: "Burstable" },
  ...o,
});

const notFound = (err: { statusCode?: number }) => {
  if (err.statusCode === 404) return undefined;
  throw err;
};
const serverOf = (rg: string, name: string): Promise<Server | undefined> =>
  pg.servers.get(rg, name).catch(notFound);
const done = (x: { outcome: string }) => x.outcome === "deleted" || x.outcome === "gone";

/** Posts a fault the fake answers the next `times` matching requests with. */
const injectFault = (f: Record<string, unknown>) =>
  fetch(`${fake.url}/__fake/fail`, { method: "POST", body: JSON.stringify(f) });

beforeAll(async () => {
  await ensureCrds();
  const tls = await ensureTls(dirname(env("DRIFTLESS_CA_FILE")));
  // A small quota, so a test can exceed it without creating dozens of servers.
  fake = await startArmFake({
    port: 0,
    cert: tls.serverCert,
    key: tls.serverKey,
    clients: { [AZURE_CLIENT_ID]: AZURE_CLIENT_SECRET },
    lroMs: 500,
    postgresVCoreQuota: 40,
  });
  const credential = new ClientSecretCredential(
    env("AZURE_TENANT_ID"),
    AZURE_CLIENT_ID,
    AZURE_CLIENT_SECRET,
    {
      authorityHost: fake.url,
      disableInstanceDiscovery: true,
    },
  );
  pg = new PostgreSQLManagementFlexibleServerClient(credential, env("AZURE_SUBSCRIPTION_ID"), {
    endpoint: fake.url,
    credentialScopes: [`${fake.url}/.default`],
  });
  await createAzureProviderConfig(kube, PC, { armEndpoint: fake.url, noStorage: true });
  const arm = armClient(fake.url);
  await arm.resourceGroups.createOrUpdate(RG, { location: "westeurope" });
  await arm.resourceGroups.createOrUpdate(OTHER_RG, { location: "westeurope" });
});

afterAll(async () => {
  await fake?.close();
});

describe("Azure PostgreSQL flexible server against the real API server and the ARM fake", () => {
  it("creates a public server as ARM runs it (Creating, then Ready), its firewall rule and database by reference; the password stays in the Secret", async () => {
    const rg = uniqueName("rg-azpg-ref");
    const server = uniqueName("pgpublic");
    const rule = uniqueName("fw-office");
    const db = uniqueName("db-app");
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    await kube.create(ResourceGroup, mrObject(ResourceGroup, rg, { location: "westeurope" }));
    await kube.create(
      FlexibleServer,
      mrObject(FlexibleServer, server, {
        ...serverSpec({ resourceGroupName: undefined, resourceGroupNameRef: { name: rg } }),
        tags: { team: "data" },
      }),
    );
    const parent = { resourceGroupNameRef: { name: rg }, serverNameRef: { name: server } };
    await kube.create(
      FlexibleServerFirewallRule,
      mrObject(FlexibleServerFirewallRule, rule, {
        ...parent,
        startIpAddress: "203.0.113.0",
        endIpAddress: "203.0.113.255",
      }),
    );
    await kube.create(FlexibleServerDatabase, mrObject(FlexibleServerDatabase, db, parent));

    // The rule waits for the server, the server for its group.
    const [blocked] = await settle(r, keyOf(FlexibleServerFirewallRule, rule), 1);
    expect(blocked?.outcome).toBe("waiting");
    await settle(r, keyOf(ResourceGroup, rg));

    // One reconcile sends the PUT alone: it never polls or waits for the operation (observe follows the state).
    const created = await r.reconcile(keyOf(FlexibleServer, server));
    expect(created.requeueAfterMs).toBeDefined();
    const stats = (await armStats(fake.url)).requests;
    expect(stats["PUT Microsoft.DBforPostgreSQL/flexibleServers"]).toBe(1);
    expect(stats["GET Microsoft.DBforPostgreSQL/operations"]).toBeUndefined();
    // The next one observes the server still provisioning: Ready=False Creating.
    await r.reconcile(keyOf(FlexibleServer, server));
    let mr = await getMr<Record<string, unknown>>(kube, FlexibleServer, server);
    expect(conditionOf(mr, "Ready")).toMatchObject({ status: "False", reason: "Creating" });
    expect(mr?.status?.atProvider).toMatchObject({ state: "Provisioning" });
    // The firewall rule still waits: the server is not Ready.
    const [waiting] = await settle(r, keyOf(FlexibleServerFirewallRule, rule), 1);
    expect(conditionOf(await getMr(kube, FlexibleServerFirewallRule, rule), "Synced")?.message).toContain(
      "referenced resource may not yet be ready",
    );
    expect(waiting?.outcome).toBe("waiting");

    await settle(r, keyOf(FlexibleServer, server));
    mr = await getMr<Record<string, unknown>>(kube, FlexibleServer, server);
    expectAvailable(mr, server);
    // Azure's defaults, late-initialized.
    expect(mr?.spec.forProvider).toMatchObject({
      resourceGroupName: rg,
      storageSizeGB: 32,
      backupRetentionDays: 7,
      geoRedundantBackup: "Disabled",
      publicNetworkAccess: "Enabled",
      availabilityZone: "1",
    });
    expect(mr?.status?.atProvider).toMatchObject({
      state: "Ready",
      fullyQualifiedDomainName: `${server}.postgres.database.azure.com`,
    });
    await expectSecretOwnedBy(kube, mr);
    const conn = await connectionData(kube, server);
    expect(conn).toMatchObject({
      host: `${server}.postgres.database.azure.com`,
      port: "5432",
      username: "pgadmin",
    });
    expect(conn.password).toMatch(/^[A-Za-z][A-Za-z0-9]{31}$/);

    await settle(r, keyOf(FlexibleServerFirewallRule, rule));
    await settle(r, keyOf(FlexibleServerDatabase, db));
    expectAvailable(await getMr(kube, FlexibleServerFirewallRule, rule), rule);
    expect(await pg.firewallRules.get(rg, server, rule)).toMatchObject({
      startIpAddress: "203.0.113.0",
      endIpAddress: "203.0.113.255",
    });
    const dbMr = await getMr<Record<string, unknown>>(kube, FlexibleServerDatabase, db);
    expectAvailable(dbMr, db);
    expect(dbMr?.spec.forProvider).toMatchObject({ charset: "UTF8", collation: "en_US.utf8" });
    expect(await connectionData(kube, db)).toEqual({ database: db });

    // The rule changed in the portal is put back.
    await pg.firewallRules.beginCreateOrUpdateAndWait(rg, server, rule, {
      startIpAddress: "0.0.0.0",
      endIpAddress: "255.255.255.255",
    });
    await settle(r, keyOf(FlexibleServerFirewallRule, rule));
    expect((await pg.firewallRules.get(rg, server, rule)).endIpAddress).toBe("203.0.113.255");

    const events = await kube.listEvents("default");
    const seen = lines.join("\n") + JSON.stringify(mr?.status) + JSON.stringify(events);
    expect(seen).not.toContain(conn.password);
    expect(seen).not.toContain(AZURE_CLIENT_SECRET);

    // Deleted children first, then the server: every DELETE is started, none is waited for.
    for (const [def, name] of [
      [FlexibleServerFirewallRule, rule],
      [FlexibleServerDatabase, db],
      [FlexibleServer, server],
    ] as const) {
      await kube.delete(def, name);
      const results = await reconcileUntil(r, keyOf(def, name), done);
      expect(results.map((x) => x.outcome)).not.toContain("error");
      expect(await getMr(kube, def, name)).toBeUndefined();
    }
    expect(await serverOf(rg, server)).toBeUndefined();
  });

  it("places a server in a delegated subnet (private access), refuses firewall rules on it, and names an undelegated subnet", async () => {
    const vnet = uniqueName("vnet-pg");
    const subnet = uniqueName("snet-pg");
    const plain = uniqueName("snet-plain");
    const server = uniqueName("pgprivate");
    const refused = uniqueName("pgrefused");
    const rule = uniqueName("fw-private");
    const r = newReconciler(kube);
    await kube.create(
      VirtualNetwork,
      mrObject(VirtualNetwork, vnet, {
        resourceGroupName: RG,
        location: "westeurope",
        addressSpace: { addressPrefixes: ["10.90.0.0/16"] },
      }),
    );
    const delegations = [{ name: "postgres", serviceName: "Microsoft.DBforPostgreSQL/flexibleServers" }];
    await kube.create(
      Subnet,
      mrObject(Subnet, subnet, {
        resourceGroupName: RG,
        virtualNetworkNameRef: { name: vnet },
        addressPrefix: "10.90.1.0/24",
        delegations,
      }),
    );
    await kube.create(
      Subnet,
      mrObject(Subnet, plain, {
        resourceGroupName: RG,
        virtualNetworkNameRef: { name: vnet },
        addressPrefix: "10.90.2.0/24",
      }),
    );
    const dnsZone = `/subscriptions/${env("AZURE_SUBSCRIPTION_ID")}/resourceGroups/${RG}/providers/Microsoft.Network/privateDnsZones/${server}.private.postgres.database.azure.com`;
    await kube.create(
      FlexibleServer,
      mrObject(
        FlexibleServer,
        server,
        serverSpec({ delegatedSubnetIdRef: { name: subnet }, privateDnsZoneId: dnsZone }),
      ),
    );
    await kube.create(
      FlexibleServer,
      mrObject(FlexibleServer, refused, serverSpec({ delegatedSubnetIdRef: { name: plain } })),
    );
    await settle(r, keyOf(VirtualNetwork, vnet));
    await settle(r, keyOf(Subnet, subnet));
    await settle(r, keyOf(Subnet, plain));
    const subnetMr = await getMr<Record<string, unknown>>(kube, Subnet, subnet);
    expectAvailable(subnetMr, subnet);
    expect(subnetMr?.spec.forProvider).toMatchObject({ delegations });

    await settle(r, keyOf(FlexibleServer, server));
    const mr = await getMr<Record<string, unknown>>(kube, FlexibleServer, server);
    expectAvailable(mr, server);
    const subnetId = (subnetMr?.status?.atProvider as { id?: string } | undefined)?.id ?? "";
    expect(mr?.spec.forProvider).toMatchObject({
      delegatedSubnetId: subnetId,
      publicNetworkAccess: "Disabled",
    });
    expect((await serverOf(RG, server))?.network).toMatchObject({
      delegatedSubnetResourceId: subnetId,
      privateDnsZoneArmResourceId: dnsZone,
      publicNetworkAccess: "Disabled",
    });

    const [res] = await settle(r, keyOf(FlexibleServer, refused), 1);
    expect(res?.outcome).toBe("error");
    expect(conditionOf(await getMr(kube, FlexibleServer, refused), "Synced")?.message).toContain(
      "SubnetNotDelegated",
    );
    expect(await serverOf(RG, refused)).toBeUndefined();

    await kube.create(
      FlexibleServerFirewallRule,
      mrObject(FlexibleServerFirewallRule, rule, {
        resourceGroupName: RG,
        serverNameRef: { name: server },
        startIpAddress: "198.51.100.1",
        endIpAddress: "198.51.100.1",
      }),
    );
    await settle(r, keyOf(FlexibleServerFirewallRule, rule), 2);
    expect(conditionOf(await getMr(kube, FlexibleServerFirewallRule, rule), "Synced")).toMatchObject({
      status: "False",
      message: expect.stringContaining("FirewallRuleNotSupported"),
    });

    // Moving the server to another subnet is reported, never attempted.
    await resetArmStats(fake.url);
    await kube.patch(FlexibleServer, server, {
      spec: { forProvider: { delegatedSubnetId: `${subnetId}x` } },
    });
    const [moved] = await settle(r, keyOf(FlexibleServer, server), 1);
    expect(moved?.outcome).toBe("error");
    expect(conditionOf(await getMr(kube, FlexibleServer, server), "Synced")?.message).toContain(
      "cannot update immutable field(s) delegatedSubnetId",
    );
    expect(Object.keys((await armStats(fake.url)).requests).filter((k) => !k.startsWith("GET"))).toEqual([]);
  });

  it("scales, grows and upgrades in place, corrects drift, rotates the password, and reports what Azure cannot do", async () => {
    const name = uniqueName("pgupdate");
    const secret = uniqueName("pgupdate-admin");
    await kube.createSecret({
      metadata: { name: secret, namespace: "default" },
      stringData: { pw: "First-Passw0rd" },
    });
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    await kube.create(
      FlexibleServer,
      mrObject(
        FlexibleServer,
        name,
        serverSpec({ administratorPasswordSecretRef: { namespace: "default", name: secret, key: "pw" } }),
      ),
    );
    await settle(r, keyOf(FlexibleServer, name));
    expect((await connectionData(kube, name)).password).toBe("First-Passw0rd");

    await kube.patch(FlexibleServer, name, {
      spec: {
        forProvider: {
          sku: { name: "Standard_D2ds_v5", tier: "GeneralPurpose" },
          storageSizeGB: 64,
          backupRetentionDays: 14,
          version: "17",
        },
      },
    });
    await settle(r, keyOf(FlexibleServer, name));
    expect(await serverOf(RG, name)).toMatchObject({
      sku: { name: "Standard_D2ds_v5", tier: "GeneralPurpose" },
      storage: { storageSizeGB: 64 },
      backup: { backupRetentionDays: 14 },
      version: "17",
    });
    // Scaling keeps the server Available (state Updating), then Ready again.
    await reconcileUntil(r, keyOf(FlexibleServer, name), () => true);
    await settle(r, keyOf(FlexibleServer, name));
    expectAvailable(await getMr(kube, FlexibleServer, name), name);

    // Changed in the portal: set back.
    await pg.servers.beginUpdateAndWait(RG, name, { backup: { backupRetentionDays: 30 }, tags: { x: "y" } });
    await settle(r, keyOf(FlexibleServer, name));
    expect((await serverOf(RG, name))?.backup?.backupRetentionDays).toBe(14);

    // A new password in the user's Secret: one PATCH, then published.
    await kube.deleteSecret("default", secret);
    await kube.createSecret({
      metadata: { name: secret, namespace: "default" },
      stringData: { pw: "Second-Passw0rd" },
    });
    const requests = await armRequestsDuring(fake.url, () =>
      reconcileUntil(r, keyOf(FlexibleServer, name), () => true, { timeoutMs: 5_000 }).then(() =>
        settle(r, keyOf(FlexibleServer, name)),
      ),
    );
    expect(requests["PATCH Microsoft.DBforPostgreSQL/flexibleServers"]).toBe(1);

    // Shrinking storage and downgrading are refused with the reason; the location cannot change at all.
    for (const [change, text] of [
      [{ storageSizeGB: 32 }, "Azure cannot shrink storage"],
      [{ version: "15" }, "Azure cannot downgrade PostgreSQL"],
      [
        { location: "northeurope" },
        // A changed location is a changed home: refused before any read there (issue 36).
        'lives in location "westeurope", but its spec and ProviderConfig now reach location "northeurope"',
      ],
    ] as const) {
      const fp = (await getMr<Record<string, unknown>>(kube, FlexibleServer, name))?.spec.forProvider ?? {};
      await kube.patch(FlexibleServer, name, { spec: { forProvider: change } });
      await resetArmStats(fake.url);
      const [res] = await settle(r, keyOf(FlexibleServer, name), 1);
      expect(res?.outcome).toBe("error");
      expect(conditionOf(await getMr(kube, FlexibleServer, name), "Synced")?.message).toContain(text);
      expect(Object.keys((await armStats(fake.url)).requests).filter((k) => !k.startsWith("GET"))).toEqual(
        [],
      );
      const key = Object.keys(change)[0] as string;
      await kube.patch(FlexibleServer, name, { spec: { forProvider: { [key]: fp[key] } } });
    }
    expect(lines.join("\n")).not.toContain("Passw0rd");
  });

  it("reports a name taken elsewhere, throttling and exhausted quota in Synced, creating nothing", async () => {
    const taken = uniqueName("pgtaken");
    await pg.servers.beginCreateOrUpdateAndWait(OTHER_RG, taken, {
      location: "westeurope",
      sku: { name: "Standard_B1ms", tier: "Burstable" },
      administratorLogin: "someone",
      administratorLoginPassword: "Elsewhere-Passw0rd",
    });
    const r = newReconciler(kube);
    await kube.create(FlexibleServer, mrObject(FlexibleServer, taken, serverSpec()));
    await settle(r, keyOf(FlexibleServer, taken), 1);
    const synced = conditionOf(await getMr(kube, FlexibleServer, taken), "Synced");
    expect(synced?.message).toContain("ServerNameAlreadyExists");
    expect(synced?.message).toContain("choose another crossplane.io/external-name");
    expect(await serverOf(RG, taken)).toBeUndefined();

    const throttled = uniqueName("pgthrottled");
    await kube.create(FlexibleServer, mrObject(FlexibleServer, throttled, serverSpec()));
    await injectFault({
      method: "GET",
      path: `/flexibleServers/${throttled}`,
      status: 429,
      code: "TooManyRequests",
      message: "The request is being throttled.",
      retryAfter: "0",
      times: 5,
    });
    const [res] = await settle(r, keyOf(FlexibleServer, throttled), 1);
    expect(res?.outcome).toBe("error");
    expect(conditionOf(await getMr(kube, FlexibleServer, throttled), "Synced")?.message).toContain(
      "throttled by Azure (TooManyRequests",
    );

    const big = uniqueName("pgbig");
    await kube.create(
      FlexibleServer,
      mrObject(
        FlexibleServer,
        big,
        serverSpec({ sku: { name: "Standard_E64ds_v5", tier: "MemoryOptimized" } }),
      ),
    );
    await settle(r, keyOf(FlexibleServer, big), 1);
    expect(conditionOf(await getMr(kube, FlexibleServer, big), "Synced")?.message).toContain("QuotaExceeded");
    expect(await serverOf(RG, big)).toBeUndefined();
  });
});

// After the suite above, whose first test waits for a token from the fake.
describeManagedKind({
  type: FlexibleServer,
  cloud: "an ARM fake that runs long-running operations",
  prefix: "pgflex",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: () => serverSpec(),
  exists: async (name) => (await serverOf(RG, name)) !== undefined,
  requests: { during: (fn) => armRequestsDuring(fake.url, fn), isRead: (k) => k.startsWith("GET ") },
  inSyncRequests: { "GET Microsoft.DBforPostgreSQL/flexibleServers": 1 },
  settleDelete: (r, key) => reconcileUntil(r, key, done),
  deleteRepeatsUntilGone: true,
  import: {
    arrange: async (cloudName) => {
      await pg.servers.beginCreateOrUpdateAndWait(RG, cloudName, {
        location: "westeurope",
        sku: { name: "Standard_B2s", tier: "Burstable" },
        administratorLogin: "legacyadmin",
        administratorLoginPassword: "Legacy-Passw0rd",
        version: "15",
        tags: { owner: "legacy" },
      });
    },
    forProvider: { resourceGroupName: RG },
    expectSpec: (forProvider) =>
      expect(forProvider).toMatchObject({
        location: "westeurope",
        administratorLogin: "legacyadmin",
        version: "15",
        sku: { name: "Standard_B2s", tier: "Burstable" },
        storageSizeGB: 32,
        tags: { owner: "legacy" },
      }),
    change: { tags: { owner: "me" } },
    expectUnchanged: async (cloudName) =>
      expect((await serverOf(RG, cloudName))?.tags).toEqual({ owner: "legacy" }),
  },
  invalidSpec: { forProvider: { version: "sixteen" }, field: "spec.forProvider.version" },
});

// The server the child kinds' conformance runs in, made directly with the SDK on first use.
const CHILD_SERVER = uniqueName("pgchildren");
async function childServer() {
  if (!(await serverOf(RG, CHILD_SERVER)))
    await pg.servers.beginCreateOrUpdateAndWait(RG, CHILD_SERVER, {
      location: "westeurope",
      sku: { name: "Standard_B1ms", tier: "Burstable" },
      administratorLogin: "pgadmin",
      administratorLoginPassword: "Children-Passw0rd",
      version: "16",
    });
  return { resourceGroupName: RG, serverName: CHILD_SERVER };
}
const ruleOf = (name: string) => pg.firewallRules.get(RG, CHILD_SERVER, name).catch(notFound);
const databaseOf = (name: string) => pg.databases.get(RG, CHILD_SERVER, name).catch(notFound);

describeManagedKind({
  type: FlexibleServerFirewallRule,
  cloud: "an ARM fake that runs long-running operations",
  prefix: "pgfw",
  providerConfig: PC,
  connectionSecret: false,
  forProvider: async () => ({
    ...(await childServer()),
    startIpAddress: "203.0.113.1",
    endIpAddress: "203.0.113.9",
  }),
  exists: async (name) => (await ruleOf(name)) !== undefined,
  requests: { during: (fn) => armRequestsDuring(fake.url, fn), isRead: (k) => k.startsWith("GET ") },
  inSyncRequests: { "GET Microsoft.DBforPostgreSQL/flexibleServers/firewallRules": 1 },
  settleDelete: (r, key) => reconcileUntil(r, key, done),
  deleteRepeatsUntilGone: true,
  invalidSpec: { forProvider: { startIpAddress: "not-an-ip" }, field: "spec.forProvider.startIpAddress" },
  import: {
    arrange: async (cloudName) => {
      await childServer();
      await pg.firewallRules.beginCreateOrUpdateAndWait(RG, CHILD_SERVER, cloudName, {
        startIpAddress: "198.51.100.0",
        endIpAddress: "198.51.100.255",
      });
    },
    forProvider: { resourceGroupName: RG, serverName: CHILD_SERVER },
    expectSpec: (forProvider) =>
      expect(forProvider).toEqual({
        resourceGroupName: RG,
        serverName: CHILD_SERVER,
        startIpAddress: "198.51.100.0",
        endIpAddress: "198.51.100.255",
      }),
    change: { endIpAddress: "198.51.100.1" },
    expectUnchanged: async (cloudName) =>
      expect((await ruleOf(cloudName))?.endIpAddress).toBe("198.51.100.255"),
  },
});

describeManagedKind({
  type: FlexibleServerDatabase,
  cloud: "an ARM fake that runs long-running operations",
  prefix: "pgdb",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: () => childServer(),
  exists: async (name) => (await databaseOf(name)) !== undefined,
  requests: { during: (fn) => armRequestsDuring(fake.url, fn), isRead: (k) => k.startsWith("GET ") },
  inSyncRequests: { "GET Microsoft.DBforPostgreSQL/flexibleServers/databases": 1 },
  settleDelete: (r, key) => reconcileUntil(r, key, done),
  deleteRepeatsUntilGone: true,
  import: {
    arrange: async (cloudName) => {
      await childServer();
      await pg.databases.beginCreateAndWait(RG, CHILD_SERVER, cloudName, {
        charset: "UTF8",
        collation: "en_US.utf8",
      });
    },
    forProvider: { resourceGroupName: RG, serverName: CHILD_SERVER },
    expectSpec: (forProvider) =>
      expect(forProvider).toEqual({
        resourceGroupName: RG,
        serverName: CHILD_SERVER,
        charset: "UTF8",
        collation: "en_US.utf8",
      }),
    change: { charset: "LATIN1" },
    expectUnchanged: async (cloudName) => expect((await databaseOf(cloudName))?.charset).toBe("UTF8"),
  },
});
