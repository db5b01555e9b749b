import { afterAll, describe, expect, it } from "vitest";
import { Subscription, Topic } from "../../../shared/api/gcp/pubsub.ts";
import {
  connectionData,
  describeManagedKind,
  expectAvailable,
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
  pubsubEmulatorHost,
} from "../../support/gcp.ts";
import { captureLogger, conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

// Only the ProviderConfig's endpoint may lead driftless to the emulator: the SDK's own env var goes.
pubsubEmulatorHost();
delete process.env.PUBSUB_EMULATOR_HOST;

const ps = emulatorPubSub();
const kube = newKube();
const PC = useProviderConfig("gcp", "pc-sub");

const subObject = (name: string, forProvider: Record<string, unknown> = {}, o: MrOptions = {}) =>
  managedObject(Subscription, name, PC, { forProvider, ...o });
const topicObject = (name: string, labels?: Record<string, string>) =>
  managedObject(Topic, name, PC, { connectionSecret: false, ...(labels ? { labels } : {}) });

/** A topic made directly in the emulator, for subscriptions that name it. */
async function newTopic(prefix = "st-topic") {
  const id = uniqueName(prefix);
  await ps.createTopic(id);
  return id;
}

const cloudSub = async (id: string) => (await ps.subscription(id).getMetadata())[0];
const subExists = async (id: string) => (await ps.subscription(id).exists())[0];
const fullTopic = (id: string) => `projects/${gcpProject()}/topics/${id}`;
const fullSub = (id: string) => `projects/${gcpProject()}/subscriptions/${id}`;
const secretData = (mrName: string) => connectionData(kube, mrName);

afterAll(async () => {
  await ps.close();
});

let importedTopic = "";
describeManagedKind({
  type: Subscription,
  cloud: "the Pub/Sub emulator",
  prefix: "s",
  providerConfig: PC,
  connectionSecret: true,
  // A fractional backoff in the in-sync object: "10.5s" must compare equal to the cloud's seconds + nanos.
  forProvider: async (b) => ({
    topic: await newTopic(),
    ...(b === "inSync" ? { retryPolicy: { minimumBackoff: "10.5s" } } : {}),
  }),
  exists: subExists,
  import: {
    arrange: async (cloudName) => {
      importedTopic = await newTopic();
      await ps.topic(importedTopic).createSubscription(cloudName, { ackDeadlineSeconds: 77 });
    },
    expectSpec: (forProvider) =>
      expect(forProvider).toMatchObject({ topic: importedTopic, ackDeadlineSeconds: 77 }),
    change: { ackDeadlineSeconds: 11 },
    expectUnchanged: async (cloudName) => expect((await cloudSub(cloudName)).ackDeadlineSeconds).toBe(77),
  },
});

describe("Pub/Sub Subscription field mapping and quirks against the real API server and the Pub/Sub emulator", () => {
  it("creates the subscription with every setting, reports Ready and Synced, and writes the connection Secret", async () => {
    const topic = await newTopic();
    const dlq = await newTopic("st-dlq");
    const name = uniqueName("s-create");
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    await kube.create(
      Subscription,
      subObject(name, {
        topic,
        ackDeadlineSeconds: 30,
        messageRetentionDuration: "7200s",
        retainAckedMessages: true,
        labels: { team: "a" },
        deadLetterPolicy: { deadLetterTopic: dlq, maxDeliveryAttempts: 7 },
        retryPolicy: { minimumBackoff: "5s", maximumBackoff: "300s" },
        enableMessageOrdering: true,
      }),
    );

    await settle(r, keyOf(Subscription, name));

    const mr = await getMr(kube, Subscription, name);
    expectAvailable(mr);
    expect(mr?.status?.atProvider).toEqual({ name: fullSub(name), topic: fullTopic(topic) });
    const cloud = await cloudSub(name);
    expect(cloud).toMatchObject({
      topic: fullTopic(topic),
      ackDeadlineSeconds: 30,
      messageRetentionDuration: { seconds: "7200" },
      retainAckedMessages: true,
      labels: { team: "a" },
      deadLetterPolicy: { deadLetterTopic: fullTopic(dlq), maxDeliveryAttempts: 7 },
      retryPolicy: { minimumBackoff: { seconds: "5" }, maximumBackoff: { seconds: "300" } },
      enableMessageOrdering: true,
    });
    expect(await secretData(name)).toEqual({
      subscription: fullSub(name),
      topic: fullTopic(topic),
      projectID: gcpProject(),
    });
    // No update was needed after create: ids in the spec match the cloud's full names.
    expect(r.externalCalls.update).toBe(0);
    expect(lines.join("\n")).not.toContain("PRIVATE KEY");
  });

  it("late-initializes the cloud's defaults into the spec and never overwrites a user value", async () => {
    const topic = await newTopic();
    const name = uniqueName("s-lateinit");
    const r = newReconciler(kube);
    await kube.create(Subscription, subObject(name, { topic, ackDeadlineSeconds: 45 }));
    await settle(r, keyOf(Subscription, name));

    const mr = await getMr<Record<string, unknown>>(kube, Subscription, name);
    expect(mr?.spec.forProvider).toEqual({
      topic,
      ackDeadlineSeconds: 45,
      messageRetentionDuration: "604800s",
      retainAckedMessages: false,
      enableMessageOrdering: false,
    });
  });

  it("applies a spec change to the cloud", async () => {
    const topic = await newTopic();
    const dlq = await newTopic("st-dlq");
    const name = uniqueName("s-update");
    const r = newReconciler(kube);
    await kube.create(Subscription, subObject(name, { topic, ackDeadlineSeconds: 20 }));
    await settle(r, keyOf(Subscription, name));

    await kube.patch(Subscription, name, {
      spec: {
        forProvider: {
          ackDeadlineSeconds: 120,
          retainAckedMessages: true,
          deadLetterPolicy: { deadLetterTopic: dlq },
          retryPolicy: { minimumBackoff: "15s", maximumBackoff: "120s" },
        },
      },
    });
    const results = await settle(r, keyOf(Subscription, name));

    expect(results.map((x) => x.outcome)).toContain("updated");
    expect(await cloudSub(name)).toMatchObject({
      ackDeadlineSeconds: 120,
      retainAckedMessages: true,
      deadLetterPolicy: { deadLetterTopic: fullTopic(dlq), maxDeliveryAttempts: 5 },
      retryPolicy: { minimumBackoff: { seconds: "15" }, maximumBackoff: { seconds: "120" } },
    });
    // The dead-letter default is late-initialized, then all is in sync.
    const mr = await getMr<{ deadLetterPolicy?: unknown }>(kube, Subscription, name);
    expect(mr?.spec.forProvider.deadLetterPolicy).toEqual({ deadLetterTopic: dlq, maxDeliveryAttempts: 5 });
    expect(results.at(-1)?.outcome).toBe("in-sync");
    expect(r.externalCalls.update).toBe(1);
  });

  it("corrects an out-of-band change in the cloud, including a removed retry policy", async () => {
    const topic = await newTopic();
    const name = uniqueName("s-drift");
    const r = newReconciler(kube);
    await kube.create(
      Subscription,
      subObject(name, { topic, ackDeadlineSeconds: 60, retryPolicy: { minimumBackoff: "20s" } }),
    );
    await settle(r, keyOf(Subscription, name));

    await ps.subscription(name).setMetadata({ ackDeadlineSeconds: 15 });
    await ps.subscription(name).setMetadata({ retryPolicy: null });
    expect((await cloudSub(name)).retryPolicy).toBeNull();
    await settle(r, keyOf(Subscription, name));

    const cloud = await cloudSub(name);
    expect(cloud.ackDeadlineSeconds).toBe(60);
    expect(cloud.retryPolicy?.minimumBackoff).toMatchObject({ seconds: "20" });
  });

  it("reports an immutable field change in Synced and leaves the cloud untouched", async () => {
    const topic = await newTopic();
    const other = await newTopic();
    const name = uniqueName("s-immutable");
    const r = newReconciler(kube);
    await kube.create(Subscription, subObject(name, { topic, ackDeadlineSeconds: 30 }));
    await settle(r, keyOf(Subscription, name));

    await kube.patch(Subscription, name, {
      spec: { forProvider: { enableMessageOrdering: true, topic: other, ackDeadlineSeconds: 99 } },
    });
    const [res] = await settle(r, keyOf(Subscription, name), 1);

    expect(res?.outcome).toBe("error");
    const synced = conditionOf(await getMr(kube, Subscription, name), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain("cannot update immutable field(s)");
    expect(synced?.message).toContain("topic");
    expect(synced?.message).toContain("enableMessageOrdering");
    expect(synced?.message).toContain("left unchanged");
    const cloud = await cloudSub(name);
    expect(cloud).toMatchObject({
      topic: fullTopic(topic),
      enableMessageOrdering: false,
      ackDeadlineSeconds: 30,
    });
    expect(r.externalCalls.update).toBe(0);
  });

  it("sends a label change as UpdateSubscription(labels), which the emulator refuses: reported in Synced", async () => {
    // Real Pub/Sub updates subscription labels in place; the emulator knows no `labels` update-mask path.
    const topic = await newTopic();
    const name = uniqueName("s-labels");
    const r = newReconciler(kube);
    await kube.create(Subscription, subObject(name, { topic, labels: { team: "a" } }));
    await settle(r, keyOf(Subscription, name));

    await kube.patch(Subscription, name, { spec: { forProvider: { labels: { team: "b" } } } });
    const [res] = await settle(r, keyOf(Subscription, name), 1);

    expect(res?.outcome).toBe("error");
    const synced = conditionOf(await getMr(kube, Subscription, name), "Synced");
    // The emulator is not Google's host: its canonical status is kept, its wording ("labels is not a known
    // Subscription field") is not (google-rest.ts); what was sent is ours to say.
    expect(synced?.message).toContain("INVALID_ARGUMENT");
    expect(synced?.message).toContain("(update mask labels)");
    expect((await cloudSub(name)).labels).toEqual({ ...defaultTags(Subscription, name, PC), team: "a" });
  });

  it("waits for a referenced Topic to be Ready before creating, then fills topic from it (topicRef)", async () => {
    const topicMr = uniqueName("st-ref");
    const name = uniqueName("s-ref");
    const r = newReconciler(kube);
    await kube.create(Topic, topicObject(topicMr));
    await kube.create(Subscription, subObject(name, { topicRef: { name: topicMr } }));

    // The Topic exists in Kubernetes but was never reconciled: not Ready, so no subscription yet.
    const [blocked] = await settle(r, keyOf(Subscription, name), 1);
    expect(blocked?.outcome).toBe("waiting");
    const waiting = await getMr<Record<string, unknown>>(kube, Subscription, name);
    const synced = conditionOf(waiting, "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain("referenced resource may not yet be ready");
    expect(synced?.message).toContain(topicMr);
    expect(waiting?.spec.forProvider.topic).toBeUndefined();
    expect(r.externalCalls.create).toBe(0);
    expect(await subExists(name)).toBe(false);

    await settle(r, keyOf(Topic, topicMr));
    expect(conditionOf(await getMr(kube, Topic, topicMr), "Ready")?.status).toBe("True");
    await settle(r, keyOf(Subscription, name));

    const mr = await getMr<Record<string, unknown>>(kube, Subscription, name);
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    expect(mr?.spec.forProvider.topic).toBe(topicMr);
    expect((await cloudSub(name)).topic).toBe(fullTopic(topicMr));
  });

  it("picks the labelled Topic with topicSelector.matchLabels", async () => {
    const wanted = uniqueName("st-sel-yes");
    const other = uniqueName("st-sel-no");
    const label = uniqueName("app");
    const r = newReconciler(kube);
    await kube.create(Topic, topicObject(wanted, { "driftless.dev/test-app": label }));
    await kube.create(Topic, topicObject(other, { "driftless.dev/test-app": `${label}-other` }));
    await settle(r, keyOf(Topic, wanted));
    await settle(r, keyOf(Topic, other));

    const name = uniqueName("s-selector");
    await kube.create(
      Subscription,
      subObject(name, { topicSelector: { matchLabels: { "driftless.dev/test-app": label } } }),
    );
    await settle(r, keyOf(Subscription, name));

    const mr = await getMr<Record<string, unknown>>(kube, Subscription, name);
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    expect(mr?.spec.forProvider).toMatchObject({ topic: wanted, topicRef: { name: wanted } });
    expect((await cloudSub(name)).topic).toBe(fullTopic(wanted));
  });

  it("reports, without crashing, when the referenced topic is deleted while the subscription uses it", async () => {
    const topicMr = uniqueName("st-gone");
    const name = uniqueName("s-topic-gone");
    const r = newReconciler(kube);
    await kube.create(Topic, topicObject(topicMr));
    await settle(r, keyOf(Topic, topicMr));
    await kube.create(Subscription, subObject(name, { topicRef: { name: topicMr } }));
    await settle(r, keyOf(Subscription, name));
    expect(conditionOf(await getMr(kube, Subscription, name), "Ready")?.status).toBe("True");

    await kube.delete(Topic, topicMr);
    await settle(r, keyOf(Topic, topicMr));
    expect(await codeOf(ps.topic(topicMr).getMetadata())).toBe(5);

    const [res] = await settle(r, keyOf(Subscription, name), 1);
    expect(res?.outcome).toBe("in-sync");
    const mr = await getMr(kube, Subscription, name);
    const ready = conditionOf(mr, "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "Unavailable" });
    expect(ready?.message).toContain(`topic ${topicMr} was deleted`);
    expect(conditionOf(mr, "Synced")?.status).toBe("True");
    expect(mr?.status?.atProvider).toMatchObject({ topic: "_deleted-topic_" });
    // The old topic name stays in the Secret: connection details are only ever added.
    expect((await secretData(name)).topic).toBe(fullTopic(topicMr));
    expect(r.externalCalls.update).toBe(0);

    // Still deletable.
    await kube.delete(Subscription, name);
    await settle(r, keyOf(Subscription, name));
    expect(await subExists(name)).toBe(false);
  });

  it("reports a topic that does not exist in Synced, and creates once it does", async () => {
    const topic = uniqueName("st-later");
    const name = uniqueName("s-notopic");
    const r = newReconciler(kube);
    await kube.create(Subscription, subObject(name, { topic }));
    const [res] = await settle(r, keyOf(Subscription, name), 1);
    expect(res?.outcome).toBe("error");
    const synced = conditionOf(await getMr(kube, Subscription, name), "Synced");
    expect(synced?.message).toContain("cannot create external resource");
    expect(synced?.message).toContain(fullTopic(topic));

    await ps.createTopic(topic);
    await settle(r, keyOf(Subscription, name));
    expect(conditionOf(await getMr(kube, Subscription, name), "Ready")?.status).toBe("True");
    expect(await subExists(name)).toBe(true);
  });

  it("reports a subscription with neither topic, topicRef nor topicSelector", async () => {
    const name = uniqueName("s-unset");
    const r = newReconciler(kube);
    await kube.create(Subscription, subObject(name, { ackDeadlineSeconds: 20 }));
    await settle(r, keyOf(Subscription, name), 1);
    expect(conditionOf(await getMr(kube, Subscription, name), "Synced")?.message).toContain(
      "spec.forProvider.topic is not set",
    );
  });

  it("names the ProviderConfig when its service-account key is malformed", async () => {
    const pc = uniqueName("pc-sub-bad");
    await createGcpProviderConfig(kube, pc, { credentials: "{ not json: secret-ish" });
    const topic = await newTopic();
    const name = uniqueName("s-badcreds");
    const r = newReconciler(kube);
    await kube.create(
      Subscription,
      subObject(name, { topic }, { providerConfig: pc, connectionSecret: false }),
    );
    await settle(r, keyOf(Subscription, name), 1);
    const synced = conditionOf(await getMr(kube, Subscription, name), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain(`ProviderConfig "${pc}"`);
    expect(synced?.message).not.toContain("secret-ish");
    expect(await subExists(name)).toBe(false);
  });
});
