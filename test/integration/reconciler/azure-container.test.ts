import { ContainerClient } from "@azure/storage-blob";
import { describe, expect, it } from "vitest";
import { ResourceGroup } from "../../../shared/api/azure/resources.ts";
import { Container } from "../../../shared/api/azure/storage.ts";
import {
  AZURE_CLIENT_SECRET,
  armClient,
  azuriteBlob,
  createAzureProviderConfig,
  reconcileUntil,
} from "../../support/azure.ts";
import {
  connectionData,
  describeManagedKind,
  expectAvailable,
  type MrOptions,
  managedObject,
  useProviderConfig,
} from "../../support/conformance.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { captureLogger, conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

const kube = newKube();
const blob = azuriteBlob();
const arm = armClient();
const PC = useProviderConfig("azure", "pc-azblob");
const ACCOUNT = env("AZURITE_ACCOUNT_NAME");
const ACCOUNT_KEY = env("AZURITE_ACCOUNT_KEY");

const containerObject = (name: string, forProvider: Record<string, unknown> = {}, o: MrOptions = {}) =>
  managedObject(Container, name, PC, { forProvider, ...o });
const groupObject = (name: string, labels: Record<string, string> = {}) =>
  managedObject(ResourceGroup, name, PC, {
    forProvider: { location: "westeurope" },
    labels,
    connectionSecret: false,
  });

const propsOf = async (name: string) =>
  blob
    .getContainerClient(name)
    .getProperties()
    .catch((err: { statusCode?: number }) => {
      if (err.statusCode === 404) return undefined;
      throw err;
    });
const exists = async (name: string) => (await propsOf(name)) !== undefined;
const secretData = (mrName: string) => connectionData(kube, mrName);

describeManagedKind({
  type: Container,
  cloud: "Azurite",
  prefix: "c",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: (b) => (b === "inSync" ? { metadata: { a: "1" } } : {}),
  exists,
  settleDelete: (r, key) => reconcileUntil(r, key, (x) => x.outcome === "deleted" || x.outcome === "gone"),
  import: {
    arrange: async (cloudName) => {
      await blob.getContainerClient(cloudName).create({ metadata: { owner: "ops" }, access: "blob" });
    },
    expectSpec: (forProvider) =>
      expect(forProvider).toEqual({
        metadata: { owner: "ops" },
        publicAccess: "Blob",
        storageAccountName: ACCOUNT,
      }),
    change: { metadata: { owner: "me" }, publicAccess: "None" },
    expectUnchanged: async (cloudName) => {
      const props = await propsOf(cloudName);
      expect(props?.metadata).toEqual({ owner: "ops" });
      expect(props?.blobPublicAccess).toBe("blob");
    },
  },
  checks: {
    externalName: async ({ name, cloudName }) =>
      expect((await secretData(name)).containerName).toBe(cloudName),
  },
});

describe("Azure Blob Container field mapping and quirks against the real API server and Azurite", () => {
  it("creates the container, reports Ready and Synced, and publishes a working SAS but never the account key", async () => {
    const name = uniqueName("c-create");
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    await kube.create(Container, containerObject(name, { metadata: { Team: "a" }, publicAccess: "Blob" }));

    await settle(r, keyOf(Container, name));

    const mr = await getMr(kube, Container, name);
    expectAvailable(mr, name);
    expect(mr?.status?.atProvider).toEqual({
      url: `${env("AZURITE_BLOB_ENDPOINT")}/${name}`,
      storageAccountName: ACCOUNT,
    });
    const props = await propsOf(name);
    expect(props?.metadata).toEqual({ team: "a" });
    expect(props?.blobPublicAccess).toBe("blob");

    const data = await secretData(name);
    expect(Object.keys(data).sort()).toEqual([
      "accountName",
      "containerName",
      "endpoint",
      "sasExpiresOn",
      "sasToken",
      "sasUrl",
    ]);
    expect(data).toMatchObject({
      endpoint: `${env("AZURITE_BLOB_ENDPOINT")}/${name}`,
      accountName: ACCOUNT,
      containerName: name,
    });
    expect(data.sasUrl).toBe(`${data.endpoint}?${data.sasToken}`);
    // Bounded: valid for at most 7 days, and at least 6 (re-signed each UTC day).
    const left = Date.parse(data.sasExpiresOn ?? "") - Date.now();
    expect(left).toBeGreaterThan(6 * 86_400_000);
    expect(left).toBeLessThanOrEqual(7 * 86_400_000);
    expect(new URLSearchParams(data.sasToken).get("sp")).toBe("racwdl");
    // The SAS reads and writes this container, and nothing else.
    const viaSas = new ContainerClient(data.sasUrl ?? "");
    await viaSas.getBlockBlobClient("hello.txt").upload("hi", 2);
    const listed: string[] = [];
    for await (const b of viaSas.listBlobsFlat()) listed.push(b.name);
    expect(listed).toEqual(["hello.txt"]);
    const other = new ContainerClient(
      `${env("AZURITE_BLOB_ENDPOINT")}/${uniqueName("c-other")}?${data.sasToken}`,
    );
    await expect(other.create()).rejects.toMatchObject({ statusCode: 403 });
    await viaSas.getBlockBlobClient("hello.txt").delete();

    const everything = lines.join("\n") + JSON.stringify(mr) + JSON.stringify(data);
    expect(everything).not.toContain(ACCOUNT_KEY);
    expect(everything).not.toContain(AZURE_CLIENT_SECRET);
    expect(lines.join("\n")).not.toContain(new URLSearchParams(data.sasToken).get("sig") ?? "no-sig");
  });

  it("applies metadata and public access changes to the cloud", async () => {
    const name = uniqueName("c-update");
    const r = newReconciler(kube);
    await kube.create(Container, containerObject(name, { metadata: { team: "a" }, publicAccess: "None" }));
    await settle(r, keyOf(Container, name));

    await kube.patch(Container, name, {
      spec: { forProvider: { metadata: { team: "b", env: "dev" }, publicAccess: "Container" } },
    });
    const results = await settle(r, keyOf(Container, name));

    expect(results.map((x) => x.outcome)).toContain("updated");
    const props = await propsOf(name);
    expect(props?.metadata).toEqual({ team: "b", env: "dev" });
    expect(props?.blobPublicAccess).toBe("container");
    expect(r.externalCalls.update).toBe(1);
  });

  it("corrects an out-of-band change and keeps stored access policies someone set", async () => {
    const name = uniqueName("c-drift");
    const r = newReconciler(kube);
    await kube.create(Container, containerObject(name, { metadata: { team: "a" }, publicAccess: "None" }));
    await settle(r, keyOf(Container, name));
    const cc = blob.getContainerClient(name);
    const policy = {
      id: "readers",
      accessPolicy: { permissions: "r", expiresOn: new Date(Date.now() + 3_600_000) },
    };

    await cc.setMetadata({ team: "hijacked", extra: "1" });
    await cc.setAccessPolicy("container", [policy]);
    const results = await settle(r, keyOf(Container, name));

    expect(results.map((x) => x.outcome)).toContain("updated");
    const props = await propsOf(name);
    expect(props?.metadata).toEqual({ team: "a" });
    expect(props?.blobPublicAccess).toBeUndefined();
    expect((await cc.getAccessPolicy()).signedIdentifiers.map((s) => s.id)).toEqual(["readers"]);
  });

  it("late-initializes cloud defaults into the spec and never overwrites a user value", async () => {
    const name = uniqueName("c-lateinit");
    const r = newReconciler(kube);
    await kube.create(Container, containerObject(name, { metadata: { Owner: "me" } }));
    await settle(r, keyOf(Container, name));

    const mr = await getMr<Record<string, unknown>>(kube, Container, name);
    // Azure returns metadata names lower-case; the user's spelling stays and is no drift.
    expect(mr?.spec.forProvider).toEqual({
      metadata: { Owner: "me" },
      publicAccess: "None",
      storageAccountName: ACCOUNT,
    });
    expect(conditionOf(mr, "Synced")?.status).toBe("True");
    expect(r.externalCalls.update).toBe(0);
  });

  it("reports a storage account change in Synced and leaves the cloud untouched", async () => {
    const name = uniqueName("c-immutable");
    const r = newReconciler(kube);
    await kube.create(Container, containerObject(name, { metadata: { v: "1" } }));
    await settle(r, keyOf(Container, name));

    await kube.patch(Container, name, {
      spec: { forProvider: { storageAccountName: "otheraccount", metadata: { v: "2" } } },
    });
    const [res] = await settle(r, keyOf(Container, name), 1);

    expect(res?.outcome).toBe("error");
    const synced = conditionOf(await getMr(kube, Container, name), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain(
      `cannot update immutable field(s) storageAccountName (spec: "otheraccount", cloud: "${ACCOUNT}")`,
    );
    expect((await propsOf(name))?.metadata).toEqual({ v: "1" });
    expect(r.externalCalls.update).toBe(0);
  });

  it("never creates a container in another account than the spec names", async () => {
    const name = uniqueName("c-wrongaccount");
    const r = newReconciler(kube);
    await kube.create(Container, containerObject(name, { storageAccountName: "otheraccount" }));
    const [res] = await settle(r, keyOf(Container, name), 1);
    expect(res?.outcome).toBe("error");
    expect(conditionOf(await getMr(kube, Container, name), "Synced")?.message).toContain(
      `storageAccountName "otheraccount" is not the ProviderConfig's storage account "${ACCOUNT}"`,
    );
    expect(await exists(name)).toBe(false);
  });

  it("refuses metadata names Azure cannot take before calling the cloud", async () => {
    const name = uniqueName("c-badmeta");
    const r = newReconciler(kube);
    await kube.create(Container, containerObject(name, { metadata: { "not a name": "x" } }));
    const [res] = await settle(r, keyOf(Container, name), 1);
    expect(res?.outcome).toBe("error");
    expect(conditionOf(await getMr(kube, Container, name), "Synced")?.message).toContain(
      "invalid spec: spec.forProvider.metadata",
    );
    expect(r.externalCalls.observe).toBe(0);
    expect(await exists(name)).toBe(false);
  });

  it("names the ProviderConfig when the account key is wrong or no storage account is configured", async () => {
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    const wrongKey = Buffer.from("definitely-not-the-account-key").toString("base64");
    const badPc = uniqueName("pc-az-badkey");
    await createAzureProviderConfig(kube, badPc, { accountKey: wrongKey });
    const bad = uniqueName("c-badkey");
    await kube.create(
      Container,
      containerObject(bad, {}, { providerConfig: badPc, connectionSecret: false }),
    );
    await settle(r, keyOf(Container, bad), 1);
    const m1 = conditionOf(await getMr(kube, Container, bad), "Synced");
    expect(m1).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(m1?.message).toContain(`ProviderConfig "${badPc}"`);
    expect(m1?.message).toContain("AuthorizationFailure");

    const noStoragePc = uniqueName("pc-az-nostorage");
    await createAzureProviderConfig(kube, noStoragePc, { noStorage: true });
    const none = uniqueName("c-nostorage");
    await kube.create(
      Container,
      containerObject(none, {}, { providerConfig: noStoragePc, connectionSecret: false }),
    );
    await settle(r, keyOf(Container, none), 1);
    const m2 = conditionOf(await getMr(kube, Container, none), "Synced")?.message;
    expect(m2).toContain(`ProviderConfig "${noStoragePc}"`);
    expect(m2).toContain("storage.accountName is not set");

    expect(await exists(bad)).toBe(false);
    expect(lines.join("\n")).not.toContain(wrongKey);
  });
});

describe("Azure Blob Container references to a ResourceGroup", () => {
  it("waits for a ResourceGroup that is not Ready yet, then is created once it is", async () => {
    const group = uniqueName("rg-for-c");
    const name = uniqueName("c-ref");
    const r = newReconciler(kube);
    await kube.create(ResourceGroup, groupObject(group)); // exists in the cluster, not reconciled: not Ready
    await kube.create(Container, containerObject(name, { resourceGroupNameRef: { name: group } }));

    const [blocked] = await settle(r, keyOf(Container, name), 1);

    expect(blocked?.outcome).toBe("waiting");
    const synced = conditionOf(await getMr(kube, Container, name), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain(`referenced ResourceGroup "${group}" is not Ready`);
    expect(synced?.message).toContain("referenced resource may not yet be ready");
    expect(r.externalCalls.create).toBe(0);
    expect(await exists(name)).toBe(false);

    await settle(r, keyOf(ResourceGroup, group));
    expect(conditionOf(await getMr(kube, ResourceGroup, group), "Ready")?.status).toBe("True");
    await settle(r, keyOf(Container, name));

    const mr = await getMr<Record<string, unknown>>(kube, Container, name);
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    expect(mr?.spec.forProvider).toMatchObject({
      resourceGroupName: group,
      resourceGroupNameRef: { name: group },
    });
    expect(mr?.status?.atProvider).toMatchObject({ resourceGroupName: group });
    expect(await exists(name)).toBe(true);
  });

  it("selects its ResourceGroup by labels", async () => {
    const label = uniqueName("team");
    const group = uniqueName("rg-sel");
    const name = uniqueName("c-sel");
    const r = newReconciler(kube);
    await kube.create(ResourceGroup, groupObject(group, { "driftless.dev/test": label }));
    await kube.create(
      ResourceGroup,
      groupObject(uniqueName("rg-sel-other"), { "driftless.dev/test": "someone-else" }),
    );
    await settle(r, keyOf(ResourceGroup, group));
    await kube.create(
      Container,
      containerObject(name, { resourceGroupNameSelector: { matchLabels: { "driftless.dev/test": label } } }),
    );

    await settle(r, keyOf(Container, name));

    const mr = await getMr<Record<string, unknown>>(kube, Container, name);
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    expect(mr?.spec.forProvider).toMatchObject({
      resourceGroupName: group,
      resourceGroupNameRef: { name: group },
    });
    expect(await exists(name)).toBe(true);
  });

  it("reports the removal of its ResourceGroup instead of crashing", async () => {
    const group = uniqueName("rg-gone");
    const r = newReconciler(kube);
    await kube.create(ResourceGroup, groupObject(group));
    await settle(r, keyOf(ResourceGroup, group));
    // Resolved once (the default) and resolved on every reconcile.
    const once = uniqueName("c-gone-once");
    const always = uniqueName("c-gone-always");
    await kube.create(Container, containerObject(once, { resourceGroupNameRef: { name: group } }));
    await kube.create(
      Container,
      containerObject(always, { resourceGroupNameRef: { name: group, policy: { resolve: "Always" } } }),
    );
    await settle(r, keyOf(Container, once));
    await settle(r, keyOf(Container, always));

    await kube.delete(ResourceGroup, group);
    await reconcileUntil(
      r,
      keyOf(ResourceGroup, group),
      (x) => x.outcome === "deleted" || x.outcome === "gone",
    );
    await expect(arm.resourceGroups.get(group)).rejects.toMatchObject({ statusCode: 404 });

    const [resAlways] = await settle(r, keyOf(Container, always), 1);
    expect(resAlways?.outcome).toBe("waiting");
    const synced = conditionOf(await getMr(kube, Container, always), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain(`referenced ResourceGroup "${group}" does not exist`);
    // IfNotPresent keeps the resolved name, as Crossplane does; the container itself is still served.
    const [resOnce] = await settle(r, keyOf(Container, once), 1);
    expect(resOnce?.outcome).toBe("in-sync");
    expect(conditionOf(await getMr(kube, Container, once), "Ready")?.status).toBe("True");
    expect(await exists(once)).toBe(true);
    expect(await exists(always)).toBe(true);
  });
});
