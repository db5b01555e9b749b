// Event Grid resource events over HTTP: an out-of-band change of a virtual network's address space on
// the ARM fake, the documented ResourceWriteSuccess for it POSTed to handleEventGridRequest's body (as the
// doorbell's `/<secret>/events/azure` route hands it over), its drift messages reconciled by the worker →
// the drift is corrected without a sweep. The validation handshake, an own principal's write and an
// unknown network cost no reconcile.
import type { NetworkManagementClient } from "@azure/arm-network";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VirtualNetwork } from "../../../shared/api/azure/network.ts";
import { handleEventGridRequest } from "../../../shared/cloud-events/event-grid.ts";
import { azureKinds, azureProviderConfigKinds } from "../../../shared/providers/azure/kinds.ts";
import { noopLogger } from "../../../shared/reconciler/contract.ts";
import { createWorker } from "../../../shared/worker/worker.ts";
import { ensureCrds } from "../../support/aws.ts";
import { armClient, createAzureProviderConfig, networkClient } from "../../support/azure.ts";
import { fixture } from "../../support/cloud-events.ts";
import { managedObject } from "../../support/conformance.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { RecordingSink } from "../pipeline/helpers.ts";
import { listsPerUnmanagedEvent } from "./shapes.ts";

const kube = newKube();
const PC = uniqueName("pc-ce-az");
const RG = uniqueName("rg-ce");
const managed = uniqueName("vnet-ce");
const OWN_APP = "00000000-0000-4000-8000-0000000000aa";
let network: NetworkManagementClient;

const workerKube = newKube();
const worker = createWorker({
  kube: workerKube,
  kinds: azureKinds,
  providerConfigKinds: azureProviderConfigKinds,
  logger: noopLogger,
  rateLimit: false,
  ownPrincipals: [OWN_APP],
});

/** The documented ResourceWriteSuccess of network `name` in this suite's resource group. */
const eventFor = (name: string, replace: Record<string, string> = {}) =>
  fixture("azure-resource-write-success.json", {
    "00000000-1111-2222-3333-444444444444": env("AZURE_SUBSCRIPTION_ID"),
    "rg-orders": RG,
    "vnet-orders": name,
    ...replace,
  });

/** POSTs the body to the handler, then reconciles what it enqueued, as the queue's consumer would. */
async function deliver(body: string) {
  const queue = new RecordingSink();
  workerKube.resetStats();
  const res = await handleEventGridRequest({ resolver: worker.cloudEvents, producer: queue }, body);
  const results = await Promise.all(
    queue.messages.map((m) => worker.reconcile({ apiVersion: m.apiVersion, kind: m.kind, name: m.name })),
  );
  return { res, messages: queue.messages, results };
}

const prefixes = async (name: string) =>
  (await network.virtualNetworks.get(RG, name)).addressSpace?.addressPrefixes ?? [];

beforeAll(async () => {
  await ensureCrds();
  const endpoint = env("AZURE_ARM_ENDPOINT");
  await createAzureProviderConfig(kube, PC, { noStorage: true });
  network = networkClient(endpoint);
  await armClient(endpoint).resourceGroups.createOrUpdate(RG, { location: "westeurope" });
  await kube.create(
    VirtualNetwork,
    managedObject(VirtualNetwork, managed, PC, {
      forProvider: {
        resourceGroupName: RG,
        location: "westeurope",
        addressSpace: { addressPrefixes: ["10.61.0.0/16"] },
      },
    }),
  );
  await settle(newReconciler(kube), keyOf(VirtualNetwork, managed));
}, 120_000);

afterAll(async () => {
  await kube.delete(VirtualNetwork, managed);
  await settle(newReconciler(kube), keyOf(VirtualNetwork, managed)).catch(() => undefined);
}, 60_000);

describe("cloud events: Event Grid resource events over HTTP", () => {
  it("answers the subscription validation handshake", async () => {
    const { res, messages } = await deliver(fixture("azure-subscription-validation.json"));
    expect(res).toEqual({
      status: 200,
      body: { validationResponse: "6E2B8C41-0F7A-4D93-B5E6-1A2B3C4D5E6F" },
    });
    expect(messages).toEqual([]);
    expect(workerKube.stats.lists).toBe(0);
  });

  it("an out-of-band address-space change is corrected by its ResourceWriteSuccess", async () => {
    const before = await network.virtualNetworks.get(RG, managed);
    await network.virtualNetworks
      .createOrUpdate(RG, managed, { ...before, addressSpace: { addressPrefixes: ["10.99.0.0/16"] } })
      .submitted();
    expect(await prefixes(managed)).toEqual(["10.99.0.0/16"]);

    const { res, messages, results } = await deliver(eventFor(managed));

    expect(res).toMatchObject({ status: 200, body: { events: 1, enqueued: 1 } });
    expect(messages).toMatchObject([{ kind: "VirtualNetwork", name: managed, reason: "drift" }]);
    expect(results.map((r) => r.outcome)).toEqual(["updated"]);
    expect(await prefixes(managed)).toEqual(["10.61.0.0/16"]);
  });

  it("a write by an own principal is dropped before any request to the API server", async () => {
    const { res, messages } = await deliver(
      eventFor(managed, { "c44b4083-3bb0-49c1-b47d-974e53cbdf3c": OWN_APP }),
    );
    expect(res).toMatchObject({ status: 200, body: { enqueued: 0, dropped: 1 } });
    expect(messages).toEqual([]);
    expect(workerKube.stats.lists + workerKube.stats.gets + workerKube.stats.writes).toBe(0);
  });

  it("an event about a network driftless does not manage costs one LIST per shape of the kind in use and nothing else", async () => {
    // Once per cluster, a shape without a mark is checked (any labelled object?) and the answer recorded;
    // a second event reads the marks again should that write have lost to another test's on this stack.
    for (let i = 0; i < 2; i++) await deliver(eventFor(uniqueName("not-ours")));
    const expected = await listsPerUnmanagedEvent(kube, VirtualNetwork);
    const { res, messages } = await deliver(eventFor(uniqueName("not-ours")));
    expect(res).toMatchObject({ status: 200, body: { enqueued: 0, dropped: 1 } });
    expect(messages).toEqual([]);
    // One label-selected LIST per shape of the kind in use: cluster-scoped, and namespaced (.m.) if in use.
    expect(workerKube.stats.lists).toBe(expected);
    // Nothing else: no write, and no GET but, at most, the one read of the shapes' marks whose 30 s cache
    // may run out during this test.
    const marksReads = workerKube.stats.byOperation["get ConfigMap"] ?? 0;
    expect(marksReads).toBeLessThanOrEqual(1);
    expect(workerKube.stats.gets - marksReads + workerKube.stats.writes).toBe(0);
  });
});
