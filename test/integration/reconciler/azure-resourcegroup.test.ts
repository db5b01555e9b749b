import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeServer } from "../../../infra/local/fakes/arm-fake.ts";
import { ResourceGroup } from "../../../shared/api/azure/resources.ts";
import { Annotations, type Condition } from "../../../shared/api/meta.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { managedKinds, providerConfigKinds } from "../../../shared/providers/index.ts";
import { ProviderConfigReconciler } from "../../../shared/reconciler/provider-config.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import { ensureCrds } from "../../support/aws.ts";
import {
  AZURE_CLIENT_ID,
  AZURE_CLIENT_SECRET,
  armClient,
  armRequestsDuring,
  armStats,
  createAzureProviderConfig,
  reconcileUntil,
  startPrivateArmFake,
} from "../../support/azure.ts";
import {
  describeManagedKind,
  expectAvailable,
  type MrOptions,
  managedObject,
} from "../../support/conformance.ts";
import { defaultTags } from "../../support/default-tags.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { captureLogger, conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

const kube = newKube();
const arm = armClient();
// The stack's ARM fake accepts any token; this suite's private one checks client secrets and counts only our calls.
let fake: FakeServer;
let privateArm: ReturnType<typeof armClient>;
const PC = uniqueName("pc-azrg");
const PC_PRIVATE = uniqueName("pc-azrg-private");

const groupObject = (name: string, forProvider: Record<string, unknown> = {}, o: MrOptions = {}, pc = PC) =>
  managedObject(ResourceGroup, name, pc, { forProvider, connectionSecret: false, ...o });

const groupOf = async (name: string, client = arm) =>
  client.resourceGroups.get(name).catch((err: { statusCode?: number }) => {
    if (err.statusCode === 404) return undefined;
    throw err;
  });

beforeAll(async () => {
  await ensureCrds();
  fake = await startPrivateArmFake({ [AZURE_CLIENT_ID]: AZURE_CLIENT_SECRET });
  privateArm = armClient(fake.url);
  await createAzureProviderConfig(kube, PC);
  await createAzureProviderConfig(kube, PC_PRIVATE, { armEndpoint: fake.url });
});

afterAll(async () => {
  await fake?.close();
});

describe("Azure ResourceGroup field mapping and quirks against the real API server and the ARM fake", () => {
  it("creates the group with a client secret checked by Entra ID, and reports Ready and Synced", async () => {
    const name = uniqueName("rg-create");
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    await kube.create(
      ResourceGroup,
      groupObject(
        name,
        { location: "West Europe", tags: { team: "a" } },
        { connectionSecret: true },
        PC_PRIVATE,
      ),
    );

    await settle(r, keyOf(ResourceGroup, name));

    const mr = await getMr(kube, ResourceGroup, name);
    expectAvailable(mr, name);
    expect(mr?.status?.atProvider).toEqual({
      id: `/subscriptions/${process.env.AZURE_SUBSCRIPTION_ID}/resourceGroups/${name}`,
      provisioningState: "Succeeded",
    });
    // ARM stores the short form; the user's spelling stays in the spec and is no drift.
    const group = await groupOf(name, privateArm);
    expect(group).toMatchObject({ location: "westeurope", tags: { team: "a" } });
    expect(mr?.spec.forProvider).toMatchObject({ location: "West Europe" });
    // The token came from the fake's Entra ID endpoint, which checked the client secret.
    expect((await armStats(fake.url)).requests["POST token"]).toBeGreaterThanOrEqual(1);
    // A resource group has no connection details: no Secret is written.
    expect(await kube.getSecret("default", `${name}-conn`)).toBeUndefined();
    expect(lines.join("\n") + JSON.stringify(mr?.status)).not.toContain(AZURE_CLIENT_SECRET);
  });

  it("applies a tag change to the cloud", async () => {
    const name = uniqueName("rg-update");
    const r = newReconciler(kube);
    await kube.create(
      ResourceGroup,
      groupObject(name, { location: "eastus", tags: { team: "a", old: "x" } }),
    );
    await settle(r, keyOf(ResourceGroup, name));

    await kube.patch(ResourceGroup, name, {
      spec: { forProvider: { tags: { team: "b", env: "dev", old: null } } },
    });
    const results = await settle(r, keyOf(ResourceGroup, name));

    expect(results.map((x) => x.outcome)).toContain("updated");
    expect((await groupOf(name))?.tags).toEqual({
      ...defaultTags(ResourceGroup, name, PC),
      team: "b",
      env: "dev",
    });
    expect(r.externalCalls.update).toBe(1);
  });

  it("corrects an out-of-band tag change on the next reconcile", async () => {
    const name = uniqueName("rg-drift");
    const r = newReconciler(kube);
    await kube.create(ResourceGroup, groupObject(name, { location: "eastus", tags: { team: "a" } }));
    await settle(r, keyOf(ResourceGroup, name));

    await arm.resourceGroups.update(name, { tags: { team: "hijacked", extra: "1" } });
    const results = await settle(r, keyOf(ResourceGroup, name));

    expect(results.map((x) => x.outcome)).toContain("updated");
    expect((await groupOf(name))?.tags).toEqual({ ...defaultTags(ResourceGroup, name, PC), team: "a" });
  });

  it("late-initializes tags from the cloud and never overwrites the user's location", async () => {
    const name = uniqueName("rg-lateinit");
    // The group exists with tags the spec does not mention: adopting it fills them in.
    await arm.resourceGroups.createOrUpdate(name, { location: "northeurope", tags: { costCenter: "42" } });
    const r = newReconciler(kube);
    await kube.create(ResourceGroup, groupObject(name, { location: "North Europe" }));

    await settle(r, keyOf(ResourceGroup, name));

    const mr = await getMr<Record<string, unknown>>(kube, ResourceGroup, name);
    expect(mr?.spec.forProvider).toEqual({ location: "North Europe", tags: { costCenter: "42" } });
    expect(conditionOf(mr, "Synced")?.status).toBe("True");
    expect(r.externalCalls).toMatchObject({ create: 0, update: 0 });
  });

  it("reports a location change in Synced and leaves the cloud untouched", async () => {
    const name = uniqueName("rg-immutable");
    const r = newReconciler(kube);
    await kube.create(ResourceGroup, groupObject(name, { location: "westeurope", tags: { v: "1" } }));
    await settle(r, keyOf(ResourceGroup, name));

    await kube.patch(ResourceGroup, name, {
      spec: { forProvider: { location: "eastus", tags: { v: "2" } } },
    });
    const [res] = await settle(r, keyOf(ResourceGroup, name), 1);

    expect(res?.outcome).toBe("error");
    const synced = conditionOf(await getMr(kube, ResourceGroup, name), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain(
      // A changed location is a changed home: refused before any read there (issue 36).
      'lives in location "westeurope", but its spec and ProviderConfig now reach location "eastus"',
    );
    expect(await groupOf(name)).toMatchObject({ location: "westeurope", tags: { v: "1" } });
    expect(r.externalCalls.update).toBe(0);
  });

  it("starts the long-running delete without waiting, reports Deleting, then removes the finalizer", async () => {
    const name = uniqueName("rg-delete");
    const r = newReconciler(kube);
    await kube.create(ResourceGroup, groupObject(name, { location: "westus" }));
    await settle(r, keyOf(ResourceGroup, name));

    await kube.delete(ResourceGroup, name);
    const started = Date.now();
    const first = await r.reconcile(keyOf(ResourceGroup, name));
    expect(first.outcome).toBe("deleting");
    expect(Date.now() - started).toBeLessThan(2_000); // no poll until done inside a reconcile
    const mid = await getMr(kube, ResourceGroup, name);
    expect(conditionOf(mid, "Ready")).toMatchObject({ status: "False", reason: "Deleting" });
    expect((await groupOf(name))?.properties?.provisioningState).toBe("Deleting");

    const results = await reconcileUntil(
      r,
      keyOf(ResourceGroup, name),
      (x) => x.outcome === "deleted" || x.outcome === "gone",
    );

    expect(results.map((x) => x.outcome)).not.toContain("error");
    expect(await groupOf(name)).toBeUndefined();
    expect(await getMr(kube, ResourceGroup, name)).toBeUndefined();
  });

  it("reports a missing location and a name ARM refuses in Synced without crashing", async () => {
    const noLocation = uniqueName("rg-noloc");
    const r = newReconciler(kube);
    await kube.create(ResourceGroup, groupObject(noLocation, {}));
    const [res] = await settle(r, keyOf(ResourceGroup, noLocation), 1);
    expect(res?.outcome).toBe("error");
    expect(conditionOf(await getMr(kube, ResourceGroup, noLocation), "Synced")?.message).toContain(
      "spec.forProvider.location is required",
    );

    const badName = uniqueName("rg-badname");
    await kube.create(
      ResourceGroup,
      groupObject(
        badName,
        { location: "westus" },
        { annotations: { [Annotations.externalName]: "ends-with-dot." } },
      ),
    );
    const [res2] = await settle(r, keyOf(ResourceGroup, badName), 1);
    expect(res2?.outcome).toBe("error");
    const synced = conditionOf(await getMr(kube, ResourceGroup, badName), "Synced");
    expect(synced?.message).toContain("cannot create external resource: InvalidResourceGroup");
    expect(
      (await getMr(kube, ResourceGroup, badName))?.metadata.annotations?.[Annotations.createFailed],
    ).toBeDefined();
  });

  it("names the ProviderConfig when the client secret is wrong, the client unknown, or the Secret key missing", async () => {
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });

    const wrongPc = uniqueName("pc-az-wrong");
    await createAzureProviderConfig(kube, wrongPc, {
      armEndpoint: fake.url,
      clientSecret: "not-the-secret-value",
    });
    const wrong = uniqueName("rg-wrongsecret");
    await kube.create(ResourceGroup, groupObject(wrong, { location: "westus" }, {}, wrongPc));
    await settle(r, keyOf(ResourceGroup, wrong), 1);
    const m1 = conditionOf(await getMr(kube, ResourceGroup, wrong), "Synced");
    expect(m1).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(m1?.message).toContain(`ProviderConfig "${wrongPc}"`);
    expect(m1?.message).toContain("AADSTS7000215");
    expect(m1?.message).not.toContain("Trace ID"); // stable text: no rewrite of the condition on every retry

    const unknownPc = uniqueName("pc-az-unknown");
    await createAzureProviderConfig(kube, unknownPc, { armEndpoint: fake.url, clientId: "nobody" });
    const unknown = uniqueName("rg-unknownclient");
    await kube.create(ResourceGroup, groupObject(unknown, { location: "westus" }, {}, unknownPc));
    await settle(r, keyOf(ResourceGroup, unknown), 1);
    const m2 = conditionOf(await getMr(kube, ResourceGroup, unknown), "Synced")?.message;
    expect(m2).toContain(`ProviderConfig "${unknownPc}"`);
    expect(m2).toContain("AADSTS700016");

    const noKeyPc = uniqueName("pc-az-nokey");
    await createAzureProviderConfig(kube, noKeyPc);
    await kube.patch(providerConfigs.azure.type, noKeyPc, {
      spec: { credentials: { secretRef: { key: "no-such-key" } } },
    });
    const noKey = uniqueName("rg-nokey");
    await kube.create(ResourceGroup, groupObject(noKey, { location: "westus" }, {}, noKeyPc));
    await settle(r, keyOf(ResourceGroup, noKey), 1);
    const m3 = conditionOf(await getMr(kube, ResourceGroup, noKey), "Synced")?.message;
    expect(m3).toContain(`ProviderConfig "${noKeyPc}"`);
    expect(m3).toContain('has no key "no-such-key"');

    expect(await groupOf(wrong, privateArm)).toBeUndefined();
    expect(lines.join("\n")).not.toContain("not-the-secret-value");
    expect(lines.join("\n")).not.toContain(AZURE_CLIENT_SECRET);
  });

  it("checks a ProviderConfig's credentials with a token request, without echoing them", async () => {
    const pcs = new ProviderConfigReconciler(kube, new KindRegistry(managedKinds), providerConfigKinds);
    const apiVersion = `${providerConfigs.azure.type.group}/${providerConfigs.azure.type.version}`;
    const readyOf = async (name: string) =>
      (
        await kube.get<{ metadata: { name: string }; status?: { conditions?: Condition[] } }>(
          providerConfigs.azure.type,
          name,
        )
      )?.status?.conditions?.find((c) => c.type === "Ready");

    expect(
      (await pcs.reconcile({ apiVersion: apiVersion, kind: "ProviderConfig", name: PC_PRIVATE })).outcome,
    ).toBe("ready");
    expect((await readyOf(PC_PRIVATE))?.message).toContain(
      `credentials accepted (application ${AZURE_CLIENT_ID} in tenant`,
    );

    const wrongPc = uniqueName("pc-az-check");
    await createAzureProviderConfig(kube, wrongPc, {
      armEndpoint: fake.url,
      clientSecret: "wrong-check-secret",
    });
    expect(
      (await pcs.reconcile({ apiVersion: apiVersion, kind: "ProviderConfig", name: wrongPc })).outcome,
    ).toBe("unready");
    const ready = await readyOf(wrongPc);
    expect(ready).toMatchObject({ status: "False", reason: "CredentialsRefused" });
    expect(ready?.message).toContain("AADSTS7000215");
    expect(ready?.message).not.toContain("wrong-check-secret");
  });
});

// After the suite above: its first test counts the token request the first reconcile makes.
describeManagedKind({
  type: ResourceGroup,
  cloud: "an ARM fake that checks client secrets",
  prefix: "rg",
  providerConfig: PC_PRIVATE,
  // A resource group has no connection details.
  connectionSecret: false,
  forProvider: (b) => (b === "inSync" ? { location: "westus", tags: { a: "1" } } : { location: "westus" }),
  exists: async (name) => (await groupOf(name, privateArm)) !== undefined,
  requests: {
    during: (fn) => armRequestsDuring(fake.url, fn),
    isRead: (k) => k.startsWith("GET ") || k === "POST token",
  },
  inSyncRequests: { "GET resourcegroups": 1 },
  import: {
    arrange: async (cloudName) => {
      await privateArm.resourceGroups.createOrUpdate(cloudName, {
        location: "uksouth",
        tags: { owner: "ops" },
      });
    },
    expectSpec: (forProvider) => expect(forProvider).toEqual({ location: "uksouth", tags: { owner: "ops" } }),
    change: { tags: { owner: "me" } },
    expectUnchanged: async (cloudName) =>
      expect((await groupOf(cloudName, privateArm))?.tags).toEqual({ owner: "ops" }),
  },
  ownTests: { delete: "a long-running ARM delete: proved below with its Deleting state and polls" },
});
