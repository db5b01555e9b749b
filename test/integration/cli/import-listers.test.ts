// `driftless import` of the hand-written kinds listed beyond import-clouds.test.ts, on the stack's fakes and
// the real kube-apiserver. Azure (ARM fake, Azurite): subnets listed per virtual network, flexible servers
// group by group, their firewall rules and databases per server, blob containers of the ProviderConfig's
// storage account. Google (Compute, Service Networking and Cloud Storage fakes): networks and global
// addresses of the project, private service connections per network, buckets of the project. A child's name is unique only within its parent: two networks' subnets of one name are both
// written (the object named after the parent too), and only the one a managed resource holds (same name,
// same parent) is skipped. Each written object applies as it is and becomes Ready in Observe; nothing in the
// cloud changes.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  FlexibleServer,
  FlexibleServerDatabase,
  FlexibleServerFirewallRule,
} from "../../../shared/api/azure/dbforpostgresql.ts";
import { Subnet, VirtualNetwork } from "../../../shared/api/azure/network.ts";
import { Container } from "../../../shared/api/azure/storage.ts";
import { GlobalAddress, Network } from "../../../shared/api/gcp/compute.ts";
import { Connection } from "../../../shared/api/gcp/servicenetworking.ts";
import { Bucket } from "../../../shared/api/gcp/storage.ts";
import type { ManagedKindDef, ManagedResource } from "../../../shared/api/managed.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import { ensureCrds } from "../../support/aws.ts";
import {
  armClient,
  azuriteBlob,
  createAzureProviderConfig,
  networkClient,
  postgresClient,
} from "../../support/azure.ts";
import { managedObject } from "../../support/conformance.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { createGcpProviderConfig, fakeStorage, gcpProject } from "../../support/gcp.ts";
import { conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { cli } from "./helpers.ts";

type Written = ManagedResource & KubeObject;
const kube = newKube();
const PC = { azure: uniqueName("pc-import-az"), gcp: uniqueName("pc-import-gcp") };
const RG = uniqueName("rg-import-child");
const arm = armClient();
const network = networkClient();
const pg = () => postgresClient();

beforeAll(async () => {
  await ensureCrds();
  await createAzureProviderConfig(kube, PC.azure);
  await createGcpProviderConfig(kube, PC.gcp);
  await arm.resourceGroups.createOrUpdate(RG, { location: "westeurope" });
}, 120_000);

/** Runs the import of one kind: its counts line and the written objects. */
async function runImport(pc: string, alias: string) {
  const out = mkdtempSync(join(tmpdir(), "driftless-import-"));
  const res = await cli(["import", "--provider-config", pc, "--kinds", alias, "-o", out]);
  expect(res.code, res.stderr).toBe(0);
  const m = new RegExp(
    `^${alias.replace(".", "\\.")}: (\\d+) found, (\\d+) written, (\\d+) already managed$`,
    "m",
  ).exec(res.stdout);
  expect(m, `${res.stdout}${res.stderr}`).not.toBeNull();
  const [found, written, managed] = (m ?? []).slice(1).map(Number) as [number, number, number];
  const objects = readdirSync(out).map((f) => parse(readFileSync(join(out, f), "utf8")) as Written);
  return { counts: { found, written, managed }, objects };
}

/** One made by hand: its external name and the forProvider the import writes for it (its home and parent). */
interface Made {
  externalName: string;
  forProvider: Record<string, string>;
}

interface Row {
  cloud: "azure" | "gcp";
  def: ManagedKindDef;
  alias: string;
  /** Makes some by hand (parents too): the last one is held by a managed resource, the others are written. */
  make: () => Promise<Made[]>;
}

const vnet = async (name: string) =>
  network.virtualNetworks
    .beginCreateOrUpdateAndWait(
      RG,
      name,
      { location: "westeurope", addressSpace: { addressPrefixes: ["10.97.0.0/16"] } },
      { updateIntervalInMs: 50 },
    )
    .then(() => name);
const subnet = (net: string, name: string) =>
  network.subnets.beginCreateOrUpdateAndWait(
    RG,
    net,
    name,
    { addressPrefix: "10.97.1.0/24" },
    { updateIntervalInMs: 50 },
  );
const newServer = async () => {
  const name = uniqueName("pg-import");
  await pg().servers.beginCreateOrUpdateAndWait(
    RG,
    name,
    {
      location: "westeurope",
      administratorLogin: "byhand",
      administratorLoginPassword: "By-Hand-Passw0rd",
      version: "16",
      sku: { name: "Standard_B1ms", tier: "Burstable" },
    },
    { updateIntervalInMs: 50 },
  );
  return name;
};
let serverMade: Promise<string> | undefined;
/** The flexible server the firewall rule and database rows use, made once. */
const server = () => {
  serverMade ??= newServer();
  return serverMade;
};

const ROWS: Row[] = [
  {
    cloud: "azure",
    def: Subnet,
    alias: "network.subnet",
    make: async () => {
      // The same subnet name in two networks: both are written; the managed one holds only network b's.
      const [a, b] = [await vnet(uniqueName("vnet-import-a")), await vnet(uniqueName("vnet-import-b"))];
      for (const net of [a, b]) await subnet(net, "shared");
      await subnet(a, "only-a");
      const home = (net: string) => ({ resourceGroupName: RG, virtualNetworkName: net });
      return [
        { externalName: "shared", forProvider: home(a) },
        { externalName: "only-a", forProvider: home(a) },
        { externalName: "shared", forProvider: home(b) },
      ];
    },
  },
  {
    cloud: "azure",
    def: FlexibleServer,
    alias: "dbforpostgresql.flexibleserver",
    make: async () => {
      const home = { resourceGroupName: RG, location: "westeurope" };
      const [written, held] = [await newServer(), await server()];
      return [written, held].map((externalName) => ({ externalName, forProvider: home }));
    },
  },
  {
    cloud: "azure",
    def: FlexibleServerFirewallRule,
    alias: "dbforpostgresql.flexibleserverfirewallrule",
    make: async () => {
      const s = await server();
      const names = [uniqueName("fw-a"), uniqueName("fw-b")];
      for (const n of names)
        await pg().firewallRules.beginCreateOrUpdateAndWait(
          RG,
          s,
          n,
          { startIpAddress: "203.0.113.0", endIpAddress: "203.0.113.255" },
          { updateIntervalInMs: 50 },
        );
      return names.map((externalName) => ({
        externalName,
        forProvider: { resourceGroupName: RG, serverName: s },
      }));
    },
  },
  {
    cloud: "azure",
    def: FlexibleServerDatabase,
    alias: "dbforpostgresql.flexibleserverdatabase",
    make: async () => {
      const s = await server();
      const names = [uniqueName("db-a"), uniqueName("db-b")];
      for (const n of names)
        await pg().databases.beginCreateAndWait(RG, s, n, {}, { updateIntervalInMs: 50 });
      return names.map((externalName) => ({
        externalName,
        forProvider: { resourceGroupName: RG, serverName: s },
      }));
    },
  },
  {
    cloud: "azure",
    def: Container,
    alias: "storage.container",
    make: async () => {
      const names = [uniqueName("ct-a"), uniqueName("ct-b")];
      for (const n of names) await azuriteBlob().createContainer(n);
      const storageAccountName = env("AZURITE_ACCOUNT_NAME");
      return names.map((externalName) => ({ externalName, forProvider: { storageAccountName } }));
    },
  },
];

/** A Google fake's REST call as a user's own tooling would make it. */
async function google(endpoint: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${endpoint}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBeLessThan(300);
  return (await res.json()) as Record<string, unknown>;
}
const compute = (method: string, path: string, body?: unknown) =>
  google(env("GCP_COMPUTE_ENDPOINT"), method, `/compute/v1/projects/${gcpProject()}/global${path}`, body);
/** A network made by hand, its insert seen through (a read is a poll of its operation). */
const gcpNetwork = async () => {
  const name = uniqueName("net-import");
  await compute("POST", "/networks", { name, autoCreateSubnetworks: false });
  for (let i = 0; i < 5; i++)
    await fetch(`${env("GCP_COMPUTE_ENDPOINT")}/compute/v1/projects/${gcpProject()}/global/networks/${name}`);
  return name;
};
const peeringRange = async (network: string) => {
  const name = uniqueName("range-import");
  await compute("POST", "/addresses", {
    name,
    purpose: "VPC_PEERING",
    addressType: "INTERNAL",
    prefixLength: 24,
    network: `projects/${gcpProject()}/global/networks/${network}`,
  });
  for (let i = 0; i < 5; i++)
    await fetch(
      `${env("GCP_COMPUTE_ENDPOINT")}/compute/v1/projects/${gcpProject()}/global/addresses/${name}`,
    );
  return name;
};
const SN = "servicenetworking.googleapis.com";
const networkPath = (n: string) => `projects/${gcpProject()}/global/networks/${n}`;

ROWS.push(
  {
    cloud: "gcp",
    def: Network,
    alias: "compute.network",
    make: async () =>
      [await gcpNetwork(), await gcpNetwork()].map((externalName) => ({ externalName, forProvider: {} })),
  },
  {
    cloud: "gcp",
    def: GlobalAddress,
    alias: "compute.globaladdress",
    make: async () => {
      const net = await gcpNetwork();
      return [await peeringRange(net), await peeringRange(net)].map((externalName) => ({
        externalName,
        forProvider: {},
      }));
    },
  },
  {
    cloud: "gcp",
    def: Connection,
    alias: "servicenetworking.connection",
    make: async () => {
      const made: Made[] = [];
      for (let i = 0; i < 2; i++) {
        const net = await gcpNetwork();
        const range = await peeringRange(net);
        await google(env("GCP_SERVICE_NETWORKING_ENDPOINT"), "POST", `/v1/services/${SN}/connections`, {
          network: networkPath(net),
          reservedPeeringRanges: [range],
        });
        for (let j = 0; j < 5; j++)
          await fetch(
            `${env("GCP_SERVICE_NETWORKING_ENDPOINT")}/v1/services/${SN}/connections?network=${encodeURIComponent(networkPath(net))}`,
          );
        made.push({ externalName: `${networkPath(net)}:${SN}`, forProvider: { network: networkPath(net) } });
      }
      return made;
    },
  },
  {
    cloud: "gcp",
    def: Bucket,
    alias: "storage.bucket",
    make: async () => {
      const names = [uniqueName("bucket-import-a"), uniqueName("bucket-import-b")];
      for (const n of names) await fakeStorage().createBucket(n);
      return names.map((externalName) => ({ externalName, forProvider: {} }));
    },
  },
);

describe.each(ROWS)("driftless import: $cloud $def.kind", (row) => {
  it(`writes every ${row.def.kind} the lists name (per parent), skips the one a managed resource holds; a written one becomes Ready in Observe`, async () => {
    const made = await row.make();
    const held = made.at(-1) as Made;
    const heldObject = uniqueName(`${row.def.kind.toLowerCase()}-held`);
    await kube.create(
      row.def,
      managedObject(row.def, heldObject, PC[row.cloud], {
        forProvider: held.forProvider,
        annotations: { [Annotations.externalName]: held.externalName },
        spec: { managementPolicies: ["Observe"] },
        connectionSecret: false,
      }),
    );

    const { counts, objects } = await runImport(PC[row.cloud], row.alias);
    // Other suites' resources share the stack's subscription: each is either written or already managed.
    expect(counts.written + counts.managed).toBe(counts.found);
    expect(counts.managed).toBeGreaterThanOrEqual(1);
    const same = (o: Written, m: Made) =>
      o.metadata.annotations?.[Annotations.externalName] === m.externalName &&
      Object.entries(m.forProvider).every(
        ([k, v]) => (o.spec.forProvider as Record<string, unknown>)[k] === v,
      );
    expect(objects.filter((o) => same(o, held))).toEqual([]);
    for (const m of made.slice(0, -1)) {
      const o = objects.find((x) => same(x, m));
      expect(o, `${m.externalName} in ${JSON.stringify(m.forProvider)}`).toBeDefined();
      expect(o?.spec).toEqual({
        managementPolicies: ["Observe"],
        providerConfigRef: { name: PC[row.cloud] },
        forProvider: m.forProvider,
      });
    }
    // Object names never collide, even where external names do (a child's is unique only in its parent).
    expect(new Set(objects.map((o) => o.metadata.name)).size).toBe(objects.length);

    // Applied as written: Ready in Observe, and nothing written to the cloud.
    const first = objects.find((x) => same(x, made[0] as Made)) as Written;
    const r = newReconciler(kube);
    await kube.delete(row.def, first.metadata.name);
    await kube.create(row.def, first as KubeObject);
    await settle(r, keyOf(row.def, first.metadata.name));
    const mr = await getMr(kube, row.def, first.metadata.name);
    expect(conditionOf(mr, "Ready")?.status, JSON.stringify(mr?.status)).toBe("True");
    expect(r.externalCalls).toMatchObject({ create: 0, update: 0, delete: 0 });
    await kube.delete(row.def, first.metadata.name);
    await kube.delete(row.def, heldObject);
  }, 300_000);
});

describe("driftless import of resources named alike in two resource groups", () => {
  it("writes the one no managed resource holds, named after its group, and skips only the managed one", async () => {
    // Arrange: one virtual network name in two groups; a managed resource holds the one in the first.
    const [rgA, rgB] = [uniqueName("rg-same-a"), uniqueName("rg-same-b")];
    const name = uniqueName("vnet-same");
    for (const [rg, prefix] of [
      [rgA, "10.61.0.0/16"],
      [rgB, "10.62.0.0/16"],
    ] as const) {
      await arm.resourceGroups.createOrUpdate(rg, { location: "westeurope" });
      await network.virtualNetworks
        .createOrUpdate(rg, name, { location: "westeurope", addressSpace: { addressPrefixes: [prefix] } })
        .submitted();
    }
    const held = uniqueName("vnet-held");
    await kube.create(
      VirtualNetwork,
      managedObject(VirtualNetwork, held, PC.azure, {
        forProvider: {
          resourceGroupName: rgA,
          location: "westeurope",
          addressSpace: { addressPrefixes: ["10.61.0.0/16"] },
        },
        annotations: { [Annotations.externalName]: name },
        spec: { managementPolicies: ["Observe"] },
        connectionSecret: false,
      }),
    );

    // Act
    const { objects } = await runImport(PC.azure, "network.virtualnetwork");

    // Assess: the second group's network is written (the old rule took it as held by name alone), named
    // with its group; the first group's is not written again.
    const ofName = objects.filter((o) => o.metadata.annotations?.[Annotations.externalName] === name);
    expect(ofName.map((o) => (o.spec.forProvider as Record<string, unknown>).resourceGroupName)).toEqual([
      rgB,
    ]);
    expect(ofName[0]?.metadata.name).toBe(`${rgB}-${name}`.toLowerCase());
    expect(new Set(objects.map((o) => o.metadata.name)).size).toBe(objects.length);
    await kube.delete(VirtualNetwork, held);
  }, 300_000);
});
