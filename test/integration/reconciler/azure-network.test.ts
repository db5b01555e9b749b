import type { NetworkManagementClient } from "@azure/arm-network";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeServer } from "../../../infra/local/fakes/arm-fake.ts";
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
  networkClient,
  reconcileUntil,
  resetArmStats,
  startPrivateArmFake,
} from "../../support/azure.ts";
import {
  type Behaviour,
  describeManagedKind,
  expectAvailable,
  type ManagedType,
  type MrOptions,
  managedObject,
} from "../../support/conformance.ts";
import { defaultTags } from "../../support/default-tags.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { captureLogger, conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

const kube = newKube();
// This suite's own ARM fake checks client secrets and counts only this suite's calls.
let fake: FakeServer;
let arm: ReturnType<typeof armClient>;
let network: NetworkManagementClient;
const PC = uniqueName("pc-aznet");
const RG = uniqueName("rg-aznet"); // made directly with the SDK, for tests that do not exercise references

const mrObject = (def: ManagedType, name: string, forProvider: Record<string, unknown>, o: MrOptions = {}) =>
  managedObject(def, name, PC, { forProvider, ...o });

const notFound = (err: { statusCode?: number }) => {
  if (err.statusCode === 404) return undefined;
  throw err;
};
const vnetOf = (rg: string, name: string) => network.virtualNetworks.get(rg, name).catch(notFound);
const subnetOf = (rg: string, vnet: string, name: string) =>
  network.subnets.get(rg, vnet, name).catch(notFound);
/** Out of band, as in the portal: other DNS servers on the network (a PUT of all of it), and a subnet. */
async function changeInPortal(name: string, dnsServers: string[], subnetPrefix: string) {
  const before = await vnetOf(RG, name);
  await network.virtualNetworks
    .createOrUpdate(RG, name, { ...before, dhcpOptions: { dnsServers } })
    .submitted();
  await network.subnets.createOrUpdate(RG, name, "kept", { addressPrefix: subnetPrefix }).submitted();
}

/** A network in RG created through driftless (and settled) with these fields besides group and location. */
async function settledNetwork(
  r: ReturnType<typeof newReconciler>,
  name: string,
  forProvider: Record<string, unknown>,
) {
  await kube.create(
    VirtualNetwork,
    mrObject(VirtualNetwork, name, { resourceGroupName: RG, location: "westeurope", ...forProvider }),
  );
  await settle(r, keyOf(VirtualNetwork, name));
}

const done = (x: { outcome: string }) => x.outcome === "deleted" || x.outcome === "gone";

beforeAll(async () => {
  await ensureCrds();
  fake = await startPrivateArmFake({ [AZURE_CLIENT_ID]: AZURE_CLIENT_SECRET });
  arm = armClient(fake.url);
  network = networkClient(fake.url);
  await createAzureProviderConfig(kube, PC, { armEndpoint: fake.url, noStorage: true });
  await arm.resourceGroups.createOrUpdate(RG, { location: "westeurope" });
});

afterAll(async () => {
  await fake?.close();
});

describe("Azure VirtualNetwork and Subnet field mapping and quirks against the real API server and the ARM fake", () => {
  it("waits for the resource group and the network by reference, then creates both", async () => {
    const rg = uniqueName("rg-aznet-ref");
    const vnet = uniqueName("vnet-ref");
    const subnet = uniqueName("snet-ref");
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    // Applied at once; each waits for what it refers to.
    await kube.create(ResourceGroup, mrObject(ResourceGroup, rg, { location: "westeurope" }));
    await kube.create(
      VirtualNetwork,
      mrObject(VirtualNetwork, vnet, {
        resourceGroupNameRef: { name: rg },
        location: "West Europe",
        addressSpace: { addressPrefixes: ["10.70.0.0/16"] },
        tags: { team: "net" },
      }),
    );
    await kube.create(
      Subnet,
      mrObject(Subnet, subnet, {
        resourceGroupNameRef: { name: rg },
        virtualNetworkNameRef: { name: vnet },
        addressPrefix: "10.70.1.0/24",
      }),
    );

    for (const [def, name] of [
      [Subnet, subnet],
      [VirtualNetwork, vnet],
    ] as const) {
      const [blocked] = await settle(r, keyOf(def, name), 1);
      expect(blocked?.outcome).toBe("waiting");
      expect(conditionOf(await getMr(kube, def, name), "Synced")?.message).toContain(
        "referenced resource may not yet be ready",
      );
    }
    expect((await armStats(fake.url)).requests["PUT Microsoft.Network/virtualNetworks"]).toBeUndefined();

    await settle(r, keyOf(ResourceGroup, rg));
    await settle(r, keyOf(VirtualNetwork, vnet));
    await settle(r, keyOf(Subnet, subnet));

    const vmr = await getMr<Record<string, unknown>>(kube, VirtualNetwork, vnet);
    expectAvailable(vmr, vnet);
    expect(vmr?.spec.forProvider).toMatchObject({ resourceGroupName: rg, location: "West Europe" });
    const vnetId = `/subscriptions/${env("AZURE_SUBSCRIPTION_ID")}/resourceGroups/${rg}/providers/Microsoft.Network/virtualNetworks/${vnet}`;
    expect(vmr?.status?.atProvider).toMatchObject({ id: vnetId, provisioningState: "Succeeded" });
    expect(await vnetOf(rg, vnet)).toMatchObject({
      location: "westeurope",
      addressSpace: { addressPrefixes: ["10.70.0.0/16"] },
      tags: { team: "net" },
    });
    const conn = await kube.getSecret("default", `${vnet}-conn`);
    expect(Buffer.from(conn?.data?.id ?? "", "base64").toString()).toBe(vnetId);

    const smr = await getMr<Record<string, unknown>>(kube, Subnet, subnet);
    expect(conditionOf(smr, "Ready")?.status).toBe("True");
    expect(smr?.spec.forProvider).toMatchObject({ resourceGroupName: rg, virtualNetworkName: vnet });
    expect((await subnetOf(rg, vnet, subnet))?.addressPrefix).toBe("10.70.1.0/24");
    expect(lines.join("\n") + JSON.stringify([vmr, smr])).not.toContain(AZURE_CLIENT_SECRET);
  });

  it("applies spec changes, keeping the network's other settings, and corrects out-of-band changes", async () => {
    const name = uniqueName("vnet-update");
    const r = newReconciler(kube);
    await settledNetwork(r, name, { addressSpace: { addressPrefixes: ["10.73.0.0/16"] }, tags: { a: "1" } });
    // What driftless does not manage here (DNS servers, a subnet) must survive the PUT that changes the
    // address space: ARM replaces the whole network on a PUT, embedded subnets included.
    await changeInPortal(name, ["10.73.0.4"], "10.73.5.0/24");

    await kube.patch(VirtualNetwork, name, {
      spec: {
        forProvider: {
          addressSpace: { addressPrefixes: ["10.73.0.0/16", "10.74.0.0/16"] },
          tags: { a: "2" },
        },
      },
    });
    await settle(r, keyOf(VirtualNetwork, name));
    expect(await vnetOf(RG, name)).toMatchObject({
      addressSpace: { addressPrefixes: ["10.73.0.0/16", "10.74.0.0/16"] },
      dhcpOptions: { dnsServers: ["10.73.0.4"] },
      tags: { a: "2" },
    });
    expect((await subnetOf(RG, name, "kept"))?.addressPrefix).toBe("10.73.5.0/24");

    // Tags changed directly: set back with a PATCH of the tags alone.
    await resetArmStats(fake.url);
    await network.virtualNetworks.updateTags(RG, name, { tags: { a: "hacked" } });
    await settle(r, keyOf(VirtualNetwork, name));
    expect((await vnetOf(RG, name))?.tags).toEqual({ ...defaultTags(VirtualNetwork, name, PC), a: "2" });
    expect((await armStats(fake.url)).requests["PUT Microsoft.Network/virtualNetworks"]).toBeUndefined();
  });

  it("creates a network with its DNS servers and sets them back after an out-of-band change", async () => {
    // Prepare: a network whose DNS servers driftless manages
    const name = uniqueName("vnet-dns");
    const r = newReconciler(kube);
    await settledNetwork(r, name, {
      addressSpace: { addressPrefixes: ["10.76.0.0/16"] },
      dnsServers: ["10.76.0.4", "10.76.0.5"],
    });
    expect((await vnetOf(RG, name))?.dhcpOptions?.dnsServers).toEqual(["10.76.0.4", "10.76.0.5"]);

    // Act: someone changes them in the portal, and adds a subnet driftless does not manage
    await changeInPortal(name, ["1.1.1.1"], "10.76.5.0/24");
    await settle(r, keyOf(VirtualNetwork, name));

    // Assess: the spec's servers, in order, with the address space and the subnet kept
    expect(await vnetOf(RG, name)).toMatchObject({
      addressSpace: { addressPrefixes: ["10.76.0.0/16"] },
      dhcpOptions: { dnsServers: ["10.76.0.4", "10.76.0.5"] },
    });
    expect((await subnetOf(RG, name, "kept"))?.addressPrefix).toBe("10.76.5.0/24");
    const synced = conditionOf(await getMr(kube, VirtualNetwork, name), "Synced");
    expect(synced).toMatchObject({ status: "True" });
  });

  it("reports a location change in Synced and leaves the cloud untouched", async () => {
    const name = uniqueName("vnet-immutable");
    const r = newReconciler(kube);
    await kube.create(
      VirtualNetwork,
      mrObject(VirtualNetwork, name, {
        resourceGroupName: RG,
        location: "westeurope",
        addressSpace: { addressPrefixes: ["10.75.0.0/16"] },
      }),
    );
    await settle(r, keyOf(VirtualNetwork, name));
    await resetArmStats(fake.url);

    await kube.patch(VirtualNetwork, name, { spec: { forProvider: { location: "eastus" } } });
    const [res] = await settle(r, keyOf(VirtualNetwork, name), 1);

    expect(res?.outcome).toBe("error");
    const synced = conditionOf(await getMr(kube, VirtualNetwork, name), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain(
      // A changed location is a changed home: refused before any read there (issue 36).
      'lives in location "westeurope", but its spec and ProviderConfig now reach location "eastus"',
    );
    expect((await vnetOf(RG, name))?.location).toBe("westeurope");
    expect(Object.keys((await armStats(fake.url)).requests).filter((k) => !k.startsWith("GET"))).toEqual([]);
  });

  it("updates and corrects a subnet's address range, then deletes subnet and network without waiting on polls", async () => {
    const vnet = uniqueName("vnet-snet");
    const subnet = uniqueName("snet");
    const r = newReconciler(kube);
    await kube.create(
      VirtualNetwork,
      mrObject(VirtualNetwork, vnet, {
        resourceGroupName: RG,
        location: "westeurope",
        addressSpace: { addressPrefixes: ["10.79.0.0/16"] },
      }),
    );
    await kube.create(
      Subnet,
      mrObject(Subnet, subnet, {
        resourceGroupName: RG,
        virtualNetworkName: vnet,
        addressPrefix: "10.79.1.0/24",
      }),
    );
    await settle(r, keyOf(VirtualNetwork, vnet));
    await settle(r, keyOf(Subnet, subnet));
    expect((await subnetOf(RG, vnet, subnet))?.addressPrefix).toBe("10.79.1.0/24");

    await kube.patch(Subnet, subnet, { spec: { forProvider: { addressPrefix: "10.79.2.0/24" } } });
    await settle(r, keyOf(Subnet, subnet));
    expect((await subnetOf(RG, vnet, subnet))?.addressPrefix).toBe("10.79.2.0/24");

    await network.subnets.createOrUpdate(RG, vnet, subnet, { addressPrefix: "10.79.9.0/24" }).submitted();
    await settle(r, keyOf(Subnet, subnet));
    expect((await subnetOf(RG, vnet, subnet))?.addressPrefix).toBe("10.79.2.0/24");

    // Both deleted at once: each DELETE is started, never polled inside a reconcile.
    await kube.delete(Subnet, subnet);
    await kube.delete(VirtualNetwork, vnet);
    const started = Date.now();
    expect((await r.reconcile(keyOf(Subnet, subnet))).outcome).toBe("deleting");
    expect((await r.reconcile(keyOf(VirtualNetwork, vnet))).outcome).toBe("deleting");
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(conditionOf(await getMr(kube, VirtualNetwork, vnet), "Ready")).toMatchObject({
      status: "False",
      reason: "Deleting",
    });
    const results = [
      ...(await reconcileUntil(r, keyOf(Subnet, subnet), done)),
      ...(await reconcileUntil(r, keyOf(VirtualNetwork, vnet), done)),
    ];

    expect(results.map((x) => x.outcome)).not.toContain("error");
    expect(await vnetOf(RG, vnet)).toBeUndefined();
    expect(await getMr(kube, Subnet, subnet)).toBeUndefined();
    expect(await getMr(kube, VirtualNetwork, vnet)).toBeUndefined();
    expect(await kube.getSecret("default", `${vnet}-conn`)).toBeUndefined();
  });

  it("names the ProviderConfig when the client secret is wrong, without echoing it", async () => {
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    const wrongPc = uniqueName("pc-aznet-wrong");
    await createAzureProviderConfig(kube, wrongPc, {
      armEndpoint: fake.url,
      clientSecret: "not-the-secret-value",
      noStorage: true,
    });
    const name = uniqueName("vnet-wrongsecret");
    await kube.create(
      VirtualNetwork,
      mrObject(
        VirtualNetwork,
        name,
        {
          resourceGroupName: RG,
          location: "westeurope",
          addressSpace: { addressPrefixes: ["10.81.0.0/16"] },
        },
        { providerConfig: wrongPc },
      ),
    );

    await settle(r, keyOf(VirtualNetwork, name), 1);

    const synced = conditionOf(await getMr(kube, VirtualNetwork, name), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain(`ProviderConfig "${wrongPc}"`);
    expect(synced?.message).toContain("AADSTS7000215");
    expect(await vnetOf(RG, name)).toBeUndefined();
    expect(lines.join("\n")).not.toContain("not-the-secret-value");
  });
});

const addressSpaces: Partial<Record<Behaviour, string[]>> = {
  inSync: ["10.71.0.0/16", "10.72.0.0/16"],
  paused: ["10.76.0.0/16"],
  externalName: ["10.78.0.0/16"],
  orphan: ["10.80.0.0/16"],
  delete: ["10.82.0.0/16"],
  concurrentCreate: ["10.83.0.0/16"],
  crashRecovery: ["10.84.0.0/16"],
  emptyPolicies: ["10.85.0.0/16"],
  importMissing: ["10.86.0.0/16"],
};

// After the suite above, whose first test waits for a token from the fake.
describeManagedKind({
  type: VirtualNetwork,
  cloud: "an ARM fake that checks client secrets",
  prefix: "vnet",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: (b) => ({
    resourceGroupName: RG,
    location: "westeurope",
    addressSpace: { addressPrefixes: addressSpaces[b] ?? ["10.87.0.0/16"] },
  }),
  exists: async (name) => (await vnetOf(RG, name)) !== undefined,
  requests: { during: (fn) => armRequestsDuring(fake.url, fn), isRead: (k) => k.startsWith("GET ") },
  inSyncRequests: { "GET Microsoft.Network/virtualNetworks": 1 },
  // A long-running ARM delete: started, never polled inside a reconcile.
  settleDelete: (r, key) => reconcileUntil(r, key, done),
  deleteRepeatsUntilGone: true,
  import: {
    arrange: async (cloudName) => {
      await network.virtualNetworks
        .createOrUpdate(RG, cloudName, {
          location: "westeurope",
          addressSpace: { addressPrefixes: ["10.77.0.0/16"] },
          tags: { owner: "legacy" },
        })
        .submitted();
    },
    forProvider: { resourceGroupName: RG },
    expectSpec: (forProvider) =>
      expect(forProvider).toMatchObject({
        location: "westeurope",
        addressSpace: { addressPrefixes: ["10.77.0.0/16"] },
        tags: { owner: "legacy" },
      }),
    change: { tags: { owner: "me" } },
    expectUnchanged: async (cloudName) =>
      expect((await vnetOf(RG, cloudName))?.tags).toEqual({ owner: "legacy" }),
  },
});

// Subnets of one network made directly with the SDK; each test's subnet takes the next /24 of it.
const SUBNET_VNET = uniqueName("vnet-subnets");
let nextSubnet = 0;
const subnetForProvider = () => ({
  resourceGroupName: RG,
  virtualNetworkName: SUBNET_VNET,
  addressPrefix: `10.90.${nextSubnet++}.0/24`,
});

describeManagedKind({
  type: Subnet,
  cloud: "an ARM fake that checks client secrets",
  prefix: "snet",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: async () => {
    if (!(await vnetOf(RG, SUBNET_VNET)))
      await network.virtualNetworks
        .createOrUpdate(RG, SUBNET_VNET, {
          location: "westeurope",
          addressSpace: { addressPrefixes: ["10.90.0.0/16"] },
        })
        .pollUntilDone();
    return subnetForProvider();
  },
  exists: async (name) => (await subnetOf(RG, SUBNET_VNET, name)) !== undefined,
  requests: { during: (fn) => armRequestsDuring(fake.url, fn), isRead: (k) => k.startsWith("GET ") },
  inSyncRequests: { "GET Microsoft.Network/virtualNetworks/subnets": 1 },
  settleDelete: (r, key) => reconcileUntil(r, key, done),
  deleteRepeatsUntilGone: true,
  invalidSpec: {
    forProvider: { resourceGroupName: RG, virtualNetworkName: SUBNET_VNET, addressPrefix: "" },
    field: "spec.forProvider.addressPrefix",
  },
  import: {
    arrange: async (cloudName) => {
      await network.subnets
        .createOrUpdate(RG, SUBNET_VNET, cloudName, { addressPrefix: "10.90.200.0/24" })
        .pollUntilDone();
    },
    forProvider: { resourceGroupName: RG, virtualNetworkName: SUBNET_VNET },
    expectSpec: (forProvider) =>
      expect(forProvider).toEqual({
        resourceGroupName: RG,
        virtualNetworkName: SUBNET_VNET,
        addressPrefix: "10.90.200.0/24",
      }),
    change: { addressPrefix: "10.90.201.0/24" },
    expectUnchanged: async (cloudName) =>
      expect((await subnetOf(RG, SUBNET_VNET, cloudName))?.addressPrefix).toBe("10.90.200.0/24"),
  },
});
