import { afterAll, describe, expect, it } from "vitest";
import { Topic } from "../../../shared/api/gcp/pubsub.ts";
import { Annotations, type Condition } from "../../../shared/api/meta.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { managedKinds, providerConfigKinds } from "../../../shared/providers/index.ts";
import { ProviderConfigReconciler } from "../../../shared/reconciler/provider-config.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import {
  connectionData,
  describeManagedKind,
  expectAvailable,
  expectSecretOwnedBy,
  type MrOptions,
  managedObject,
  useProviderConfig,
} from "../../support/conformance.ts";
import { defaultTags } from "../../support/default-tags.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import {
  codeOf,
  createGcpProviderConfig,
  emulatorPubSub,
  gcpProject,
  pemBody,
  pubsubEmulatorHost,
  serviceAccountKey,
} from "../../support/gcp.ts";
import { captureLogger, conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

// Only the ProviderConfig's endpoint may lead driftless to the emulator: the SDK's own env var goes.
pubsubEmulatorHost();
delete process.env.PUBSUB_EMULATOR_HOST;

const ps = emulatorPubSub();
const kube = newKube();
const key = serviceAccountKey();
const PC = useProviderConfig("gcp", "pc-topic", { credentials: key.json });

const topicObject = (name: string, forProvider: Record<string, unknown> = {}, o: MrOptions = {}) =>
  managedObject(Topic, name, PC, { forProvider, ...o });

const cloudTopic = async (id: string) => (await ps.topic(id).getMetadata())[0];
const topicExists = async (id: string) => (await ps.topic(id).exists())[0];
const fullName = (id: string) => `projects/${gcpProject()}/topics/${id}`;

afterAll(async () => {
  await ps.close();
});

describeManagedKind({
  type: Topic,
  cloud: "the Pub/Sub emulator",
  prefix: "t",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: (b) => (b === "inSync" ? { labels: { a: "b" } } : {}),
  invalidSpec: {
    forProvider: { messageRetentionDuration: "10m" },
    field: "spec.forProvider.messageRetentionDuration",
  },
  exists: topicExists,
  import: {
    arrange: async (cloudName) => {
      await ps.createTopic({ name: cloudName, messageRetentionDuration: { seconds: 1800 } });
    },
    expectSpec: (forProvider) => expect(forProvider).toMatchObject({ messageRetentionDuration: "1800s" }),
    change: { messageRetentionDuration: "600s" },
    expectUnchanged: async (cloudName) =>
      expect((await cloudTopic(cloudName)).messageRetentionDuration).toMatchObject({ seconds: "1800" }),
  },
  checks: {
    externalName: async ({ name, cloudName }) =>
      expect((await getMr(kube, Topic, name))?.status?.atProvider).toEqual({ name: fullName(cloudName) }),
  },
});

describe("Pub/Sub Topic field mapping and quirks against the real API server and the Pub/Sub emulator", () => {
  it("creates the topic, reports Ready and Synced, and writes the connection Secret", async () => {
    const name = uniqueName("t-create");
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    await kube.create(Topic, topicObject(name, { labels: { team: "a" }, messageRetentionDuration: "900s" }));

    await settle(r, keyOf(Topic, name));

    expect(process.env.PUBSUB_EMULATOR_HOST).toBeUndefined();
    const mr = await getMr(kube, Topic, name);
    expectAvailable(mr, name);
    expect(mr?.status?.atProvider).toEqual({ name: fullName(name) });
    const cloud = await cloudTopic(name);
    expect(cloud.labels).toEqual({ ...defaultTags(Topic, name, PC), team: "a" });
    expect(cloud.messageRetentionDuration).toMatchObject({ seconds: "900" });
    const data = await connectionData(kube, name);
    expect(data).toEqual({ topic: fullName(name), projectID: gcpProject() });
    await expectSecretOwnedBy(kube, mr);
    // The service-account key never reaches logs or status.
    expect(lines.join("\n") + JSON.stringify(mr?.status)).not.toContain(pemBody(key.privateKey).slice(0, 40));
    expect(lines.join("\n")).not.toContain("PRIVATE KEY");
  });

  it("applies a spec change to the cloud", async () => {
    const name = uniqueName("t-update");
    const r = newReconciler(kube);
    await kube.create(Topic, topicObject(name, { messageRetentionDuration: "900s" }));
    await settle(r, keyOf(Topic, name));

    await kube.patch(Topic, name, { spec: { forProvider: { messageRetentionDuration: "7200s" } } });
    const results = await settle(r, keyOf(Topic, name));

    expect(results.map((x) => x.outcome)).toContain("updated");
    expect((await cloudTopic(name)).messageRetentionDuration).toMatchObject({ seconds: "7200" });
    expect(r.externalCalls.update).toBe(1);
    expect(conditionOf(await getMr(kube, Topic, name), "Synced")?.status).toBe("True");
  });

  it("sends a label change as UpdateTopic(labels), which the emulator refuses: reported in Synced, nothing else touched", async () => {
    // Real Pub/Sub updates labels in place; the emulator knows no `labels` update-mask path. The test
    // pins the emulator's refusal so a newer emulator that accepts it makes this test fail loudly.
    const name = uniqueName("t-labels");
    const r = newReconciler(kube);
    await kube.create(Topic, topicObject(name, { labels: { team: "a" } }));
    await settle(r, keyOf(Topic, name));

    await kube.patch(Topic, name, { spec: { forProvider: { labels: { team: "b" } } } });
    const [res] = await settle(r, keyOf(Topic, name), 1);

    expect(res?.outcome).toBe("error");
    const synced = conditionOf(await getMr(kube, Topic, name), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain("cannot update external resource");
    // The emulator is not Google's host: its canonical status is kept, its wording ("labels is not a known
    // Topic field") is not (google-rest.ts); what was sent is ours to say.
    expect(synced?.message).toContain("INVALID_ARGUMENT");
    expect(synced?.message).toContain("(update mask labels)");
    expect((await cloudTopic(name)).labels).toEqual({ ...defaultTags(Topic, name, PC), team: "a" });
  });

  it("corrects an out-of-band change in the cloud on the next reconcile", async () => {
    const name = uniqueName("t-drift");
    const r = newReconciler(kube);
    await kube.create(Topic, topicObject(name, { messageRetentionDuration: "1200s" }));
    await settle(r, keyOf(Topic, name));

    await ps.topic(name).setMetadata({ messageRetentionDuration: { seconds: 3600 } });
    const results = await settle(r, keyOf(Topic, name));

    expect(results.map((x) => x.outcome)).toContain("updated");
    expect((await cloudTopic(name)).messageRetentionDuration).toMatchObject({ seconds: "1200" });
  });

  it("late-initializes cloud values into the spec and never overwrites a user value", async () => {
    const cloudName = uniqueName("t-lateinit-cloud");
    await ps.createTopic({
      name: cloudName,
      labels: { owner: "someone" },
      messageRetentionDuration: { seconds: 3600 },
      messageStoragePolicy: { allowedPersistenceRegions: ["europe-west1", "us-east1"] },
    });
    const name = uniqueName("t-lateinit");
    const r = newReconciler(kube);
    await kube.create(
      Topic,
      topicObject(
        name,
        { messageRetentionDuration: "900s" },
        { annotations: { [Annotations.externalName]: cloudName } },
      ),
    );

    await settle(r, keyOf(Topic, name));

    const mr = await getMr<Record<string, unknown>>(kube, Topic, name);
    expect(mr?.spec.forProvider).toEqual({
      messageRetentionDuration: "900s",
      labels: { owner: "someone" },
      messageStoragePolicy: { allowedPersistenceRegions: ["europe-west1", "us-east1"] },
    });
    expect((await cloudTopic(cloudName)).messageRetentionDuration).toMatchObject({ seconds: "900" });
    expect(conditionOf(mr, "Synced")?.status).toBe("True");
  });

  it("creates with a message storage policy and treats the regions as a set", async () => {
    // The emulator accepts messageStoragePolicy on create but, like labels, refuses it in UpdateTopic.
    const name = uniqueName("t-storage");
    const r = newReconciler(kube);
    await kube.create(
      Topic,
      topicObject(name, {
        messageStoragePolicy: { allowedPersistenceRegions: ["us-east1", "europe-west1"] },
      }),
    );
    await settle(r, keyOf(Topic, name));
    expect((await cloudTopic(name)).messageStoragePolicy?.allowedPersistenceRegions).toEqual([
      "us-east1",
      "europe-west1",
    ]);

    // The same regions in another order are no change: no update is attempted.
    await kube.patch(Topic, name, {
      spec: {
        forProvider: { messageStoragePolicy: { allowedPersistenceRegions: ["europe-west1", "us-east1"] } },
      },
    });
    const res = await r.reconcile(keyOf(Topic, name));
    expect(res.outcome).toBe("in-sync");
    expect(r.externalCalls.update).toBe(0);
    expect(conditionOf(await getMr(kube, Topic, name), "Synced")?.status).toBe("True");
  });

  it("reports a value the cloud refuses in Synced without crashing", async () => {
    const name = uniqueName("t-badretention"); // at least 10 minutes
    const r = newReconciler(kube);
    await kube.create(Topic, topicObject(name, { messageRetentionDuration: "5s" }));
    const [res] = await settle(r, keyOf(Topic, name), 1);
    expect(res?.outcome).toBe("error");
    const mr = await getMr(kube, Topic, name);
    const synced = conditionOf(mr, "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain("cannot create external resource");
    expect(synced?.message).toContain("INVALID_ARGUMENT");
    expect(mr?.metadata.annotations?.[Annotations.createFailed]).toBeDefined();
    expect(await topicExists(name)).toBe(false);
  });

  it("works with the injected identity (no Secret): the emulator path never asks for a token", async () => {
    const pc = uniqueName("pc-topic-injected");
    await createGcpProviderConfig(kube, pc, { credentials: "InjectedIdentity" });
    const name = uniqueName("t-injected");
    const r = newReconciler(kube);
    await kube.create(Topic, topicObject(name, {}, { providerConfig: pc, connectionSecret: false }));
    await settle(r, keyOf(Topic, name));
    expect(conditionOf(await getMr(kube, Topic, name), "Ready")?.status).toBe("True");
    expect(await topicExists(name)).toBe(true);
  });

  it("names the ProviderConfig when its service-account key is unusable, without quoting the key", async () => {
    const r = newReconciler(kube);
    const cases: Array<{ secret: string; says: string; secretKey?: string }> = [
      {
        secret: '{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\\nsecret-ish',
        says: "not valid JSON",
      },
      {
        secret: JSON.stringify({ type: "service_account", client_email: "x@y.z" }),
        says: "private_key is missing",
      },
      {
        secret: JSON.stringify({
          type: "service_account",
          client_email: "x@y.z",
          private_key: "not-a-pem-secret-ish",
        }),
        says: "not a PEM-encoded private key",
      },
      {
        secret: JSON.stringify({ type: "authorized_user", client_id: "c" }),
        says: "only service_account keys",
      },
      { secret: key.json, secretKey: "no-such-key", says: 'has no key "no-such-key"' },
    ];
    for (const c of cases) {
      const pc = uniqueName("pc-topic-bad");
      await createGcpProviderConfig(kube, pc, {
        credentials: c.secret,
        ...(c.secretKey ? { secretKey: c.secretKey } : {}),
      });
      const name = uniqueName("t-badcreds");
      await kube.create(Topic, topicObject(name, {}, { providerConfig: pc, connectionSecret: false }));
      await settle(r, keyOf(Topic, name), 1);
      const synced = conditionOf(await getMr(kube, Topic, name), "Synced");
      expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
      expect(synced?.message).toContain(`ProviderConfig "${pc}"`);
      expect(synced?.message).toContain(c.says);
      expect(synced?.message).not.toContain("secret-ish");
      expect(await codeOf(ps.topic(name).getMetadata())).toBe(5);
    }
  });

  it("checks a ProviderConfig's key, saying honestly that an emulator-only config is not verified with Google", async () => {
    const pcs = new ProviderConfigReconciler(kube, new KindRegistry(managedKinds), providerConfigKinds);
    const apiVersion = `${providerConfigs.gcp.type.group}/${providerConfigs.gcp.type.version}`;
    const readyOf = async (name: string) =>
      (
        await kube.get<{ metadata: { name: string }; status?: { conditions?: Condition[] } }>(
          providerConfigs.gcp.type,
          name,
        )
      )?.status?.conditions?.find((c) => c.type === "Ready");

    expect((await pcs.reconcile({ apiVersion: apiVersion, kind: "ProviderConfig", name: PC })).outcome).toBe(
      "ready",
    );
    const ok = await readyOf(PC);
    expect(ok?.message).toContain(
      `credentials accepted (service account ${key.email} in project ${gcpProject()}`,
    );
    expect(ok?.message).toContain("not verified with Google");

    const bad = uniqueName("pc-topic-check");
    await createGcpProviderConfig(kube, bad, {
      credentials: JSON.stringify({
        type: "service_account",
        client_email: "a@b.c",
        private_key: "secret-ish",
      }),
    });
    expect((await pcs.reconcile({ apiVersion: apiVersion, kind: "ProviderConfig", name: bad })).outcome).toBe(
      "unready",
    );
    const ready = await readyOf(bad);
    expect(ready).toMatchObject({ status: "False", reason: "CredentialsRefused" });
    expect(ready?.message).toContain("private_key is not a PEM-encoded private key");
    expect(ready?.message).not.toContain("secret-ish");
  });
});
