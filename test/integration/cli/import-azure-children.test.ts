// `driftless import` of the hand-written Azure kinds that live in a parent or an account, on the stack's ARM
// fake, Azurite and the real kube-apiserver: subnets listed per virtual network, flexible servers group by
// group, their firewall rules and databases per server, blob containers of the ProviderConfig's storage
// account. A child's name is unique only within its parent: two networks' subnets of one name are both
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
import { Subnet } from "../../../shared/api/azure/network.ts";
import { Container } from "../../../shared/api/azure/storage.ts";
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
import { conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { cli } from "./helpers.ts";

type Written = ManagedResource & KubeObject;
const kube = newKube();
const PC = uniqueName("pc-import-azchild");
const RG = uniqueName("rg-import-child");
const arm = armClient();
const network = networkClient();
const pg = () => postgresClient();

beforeAll(async () => {
  await ensureCrds();
  await createAzureProviderConfig(kube, PC);
  await arm.resourceGroups.createOrUpdate(RG, { location: "westeurope" });
}, 120_000);

/** Runs the import of one kind: its counts line and the written objects. */
async function runImport(alias: string) {
  const out = mkdtempSync(join(tmpdir(), "driftless-import-"));
  const res = await cli(["import", "--provider-config", PC, "--kinds", alias, "-o", out]);
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
    def: FlexibleServer,
    alias: "dbforpostgresql.flexibleserver",
    make: async () => {
      const home = { resourceGroupName: RG, location: "westeurope" };
      const [written, held] = [await newServer(), await server()];
      return [written, held].map((externalName) => ({ externalName, forProvider: home }));
    },
  },
  {
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

describe.each(ROWS)("driftless import: Azure $def.kind", (row) => {
  it(`writes every ${row.def.kind} the lists name (per parent), skips the one a managed resource holds; a written one becomes Ready in Observe`, async () => {
    const made = await row.make();
    const held = made.at(-1) as Made;
    const heldObject = uniqueName(`${row.def.kind.toLowerCase()}-held`);
    await kube.create(
      row.def,
      managedObject(row.def, heldObject, PC, {
        forProvider: held.forProvider,
        annotations: { [Annotations.externalName]: held.externalName },
        spec: { managementPolicies: ["Observe"] },
        connectionSecret: false,
      }),
    );

    const { counts, objects } = await runImport(row.alias);
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
        providerConfigRef: { name: PC },
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
