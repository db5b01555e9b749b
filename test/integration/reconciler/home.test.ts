// A hand-written Azure or Google Cloud kind's home never moves silently (issue 36), as the generated AWS
// kinds' (test/integration/awscc/home.test.ts): a resource Ready in one location, subscription or project
// whose spec then points elsewhere is refused — Synced=False naming the key and both values, a Warning
// event HomeChanged, no write in the new home — and set back it is in sync again. The clouds behind are
// home-aware as the real ones are: the ARM fake keeps resources per subscription and refuses an existing
// name in another location (InvalidResourceLocation), the Pub/Sub emulator keeps topics per project, and
// the GCS fake keeps a bucket's location.
import { PubSub } from "@google-cloud/pubsub";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeServer } from "../../../infra/local/fakes/arm-fake.ts";
import { VirtualNetwork } from "../../../shared/api/azure/network.ts";
import { Topic } from "../../../shared/api/gcp/pubsub.ts";
import { Bucket } from "../../../shared/api/gcp/storage.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { coreApi } from "../../../shared/kube/core.ts";
import { KubeEventRecorder } from "../../../shared/kube/events.ts";
import { ensureCrds } from "../../support/aws.ts";
import {
  AZURE_CLIENT_ID,
  AZURE_CLIENT_SECRET,
  armClient,
  armRequestsDuring,
  createAzureProviderConfig,
  startPrivateArmFake,
} from "../../support/azure.ts";
import { expectAvailable, type ManagedType, managedObject } from "../../support/conformance.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { createGcpProviderConfig, fakeStorage, gcpProject, pubsubEmulatorHost } from "../../support/gcp.ts";
import { conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

const kube = newKube();
const r = newReconciler(kube, { events: new KubeEventRecorder(kube) });

async function warnings(name: string) {
  const events = await coreApi(kube).listNamespacedEvent({ namespace: "default" });
  return events.items
    .filter((e) => e.involvedObject.name === name && e.type === "Warning")
    .map((e) => ({ reason: e.reason, message: e.message ?? "" }));
}

/** Settles an object changed to another home and checks it was refused as a changed home naming both values. */
async function expectRefused(type: ManagedType, name: string, key: string, recorded: string, asked: string) {
  await settle(r, keyOf(type, name), 3);
  const mr = await getMr(kube, type, name);
  const synced = conditionOf(mr, "Synced");
  expect(synced?.status).toBe("False");
  expect(synced?.message).toContain(`${key} "${recorded}"`);
  expect(synced?.message).toContain(`"${asked}"`);
  expect(await warnings(name)).toContainEqual(expect.objectContaining({ reason: "HomeChanged" }));
}

describe("an Azure resource's home", () => {
  const PC = uniqueName("pc-azhome");
  const OTHER_PC = uniqueName("pc-azhome-other");
  const OTHER_SUBSCRIPTION = "22222222-2222-4222-8222-222222222222";
  const RG = uniqueName("rg-azhome");
  let fake: FakeServer;
  let arm: ReturnType<typeof armClient>;

  beforeAll(async () => {
    await ensureCrds();
    fake = await startPrivateArmFake({ [AZURE_CLIENT_ID]: AZURE_CLIENT_SECRET });
    arm = armClient(fake.url);
    await createAzureProviderConfig(kube, PC, { armEndpoint: fake.url, noStorage: true });
    await createAzureProviderConfig(kube, OTHER_PC, {
      armEndpoint: fake.url,
      noStorage: true,
      subscriptionId: OTHER_SUBSCRIPTION,
    });
    await arm.resourceGroups.createOrUpdate(RG, { location: "westeurope" });
  });
  afterAll(async () => {
    await fake?.close();
  });

  async function readyNetwork() {
    const name = uniqueName("vnet-home");
    await kube.create(
      VirtualNetwork,
      managedObject(VirtualNetwork, name, PC, {
        forProvider: {
          resourceGroupName: RG,
          location: "westeurope",
          addressSpace: { addressPrefixes: ["10.90.0.0/16"] },
        },
      }),
    );
    await settle(r, keyOf(VirtualNetwork, name));
    expectAvailable(await getMr(kube, VirtualNetwork, name));
    return name;
  }
  const writes = (requests: Record<string, number>) =>
    Object.entries(requests)
      .filter(([k]) => /^(PUT|PATCH|DELETE) /.test(k))
      .reduce((n, [, v]) => n + v, 0);

  it("is recorded at create: subscription, resource group, location, endpoint", async () => {
    const name = await readyNetwork();
    const mr = await getMr(kube, VirtualNetwork, name);
    expect(JSON.parse(mr?.metadata.annotations?.[Annotations.home] ?? "{}")).toEqual({
      subscription: env("AZURE_SUBSCRIPTION_ID"),
      resourceGroup: RG,
      location: "westeurope",
      endpoint: fake.url,
    });
  });

  it("refuses a changed location with no write, as ARM itself would; set back it is in sync", async () => {
    const name = await readyNetwork();
    // The fake is location-aware as ARM is: the same name in another location is refused.
    await expect(
      arm.resources.createOrUpdateById(
        `/subscriptions/${env("AZURE_SUBSCRIPTION_ID")}/resourceGroups/${RG}/providers/Microsoft.Network/virtualNetworks/${name}`,
        "2024-05-01",
        { location: "eastus", properties: { addressSpace: { addressPrefixes: ["10.90.0.0/16"] } } },
      ),
    ).rejects.toMatchObject({ code: "InvalidResourceLocation" });

    await kube.patch(VirtualNetwork, name, { spec: { forProvider: { location: "East US" } } });
    const requests = await armRequestsDuring(fake.url, () =>
      expectRefused(VirtualNetwork, name, "location", "westeurope", "eastus"),
    );
    expect(writes(requests)).toBe(0);

    await kube.patch(VirtualNetwork, name, { spec: { forProvider: { location: "West Europe" } } });
    await settle(r, keyOf(VirtualNetwork, name));
    expectAvailable(await getMr(kube, VirtualNetwork, name));
  });

  it("refuses a providerConfigRef switched to another subscription's ProviderConfig", async () => {
    const name = await readyNetwork();
    await kube.patch(VirtualNetwork, name, { spec: { providerConfigRef: { name: OTHER_PC } } });
    const requests = await armRequestsDuring(fake.url, () =>
      expectRefused(VirtualNetwork, name, "subscription", env("AZURE_SUBSCRIPTION_ID"), OTHER_SUBSCRIPTION),
    );
    // Not a read, not a write in the other subscription: nothing there to find, nothing made there.
    expect(Object.keys(requests).filter((k) => !k.startsWith("POST "))).toEqual([]);

    await kube.patch(VirtualNetwork, name, { spec: { providerConfigRef: { name: PC } } });
    await settle(r, keyOf(VirtualNetwork, name));
    expectAvailable(await getMr(kube, VirtualNetwork, name));
  });
});

describe("a Google Cloud resource's home", () => {
  const PC = uniqueName("pc-gcphome");
  const OTHER_PC = uniqueName("pc-gcphome-other");
  const OTHER_PROJECT = uniqueName("other-project");
  const other = new PubSub({ apiEndpoint: pubsubEmulatorHost(), projectId: OTHER_PROJECT });
  const gcs = fakeStorage();

  beforeAll(async () => {
    await ensureCrds();
    await createGcpProviderConfig(kube, PC);
    await createGcpProviderConfig(kube, OTHER_PC, { projectId: OTHER_PROJECT });
  });
  afterAll(async () => {
    await other.close();
  });

  it("refuses a Topic whose providerConfigRef now names another project, and makes nothing there", async () => {
    const name = uniqueName("topic-home");
    await kube.create(Topic, managedObject(Topic, name, PC, { forProvider: {} }));
    await settle(r, keyOf(Topic, name));
    expectAvailable(await getMr(kube, Topic, name));
    expect(
      JSON.parse((await getMr(kube, Topic, name))?.metadata.annotations?.[Annotations.home] ?? "{}"),
    ).toEqual({ project: gcpProject() });

    await kube.patch(Topic, name, { spec: { providerConfigRef: { name: OTHER_PC } } });
    await expectRefused(Topic, name, "project", gcpProject(), OTHER_PROJECT);
    const [topics] = await other.getTopics();
    expect(topics.map((t) => t.name)).toEqual([]);

    await kube.patch(Topic, name, { spec: { providerConfigRef: { name: PC } } });
    await settle(r, keyOf(Topic, name));
    expectAvailable(await getMr(kube, Topic, name));
  });

  it("refuses a Bucket moved to another location; the bucket stays where it is", async () => {
    const name = uniqueName("bucket-home");
    await kube.create(Bucket, managedObject(Bucket, name, PC, { forProvider: { location: "EU" } }));
    await settle(r, keyOf(Bucket, name));
    expectAvailable(await getMr(kube, Bucket, name));

    await kube.patch(Bucket, name, { spec: { forProvider: { location: "US" } } });
    await expectRefused(Bucket, name, "location", "eu", "us");
    const external = (await getMr(kube, Bucket, name))?.metadata.annotations?.[Annotations.externalName];
    const [meta] = await gcs.bucket(external ?? name).getMetadata();
    expect(meta.location).toBe("EU");

    await kube.patch(Bucket, name, { spec: { forProvider: { location: "eu" } } });
    await settle(r, keyOf(Bucket, name));
    expectAvailable(await getMr(kube, Bucket, name));
  });
});
