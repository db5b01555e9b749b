// Cloud Audit Logs through the real Pub/Sub emulator: an out-of-band UpdateTopic on the emulator, the
// documented Admin Activity entry for it published to a work topic (as a log sink does), pulled and
// handed to handlePubSubPush in the push envelope Eventarc sends → the drift is corrected, no sweep.
// driftless's own write and an unknown topic are dropped: no reconcile, at most the one LIST.
import type { Message, PubSub } from "@google-cloud/pubsub";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Topic } from "../../../shared/api/gcp/pubsub.ts";
import { gcpKinds, gcpProviderConfigKinds } from "../../../shared/providers/gcp/kinds.ts";
import { noopLogger } from "../../../shared/reconciler/contract.ts";
import { handlePubSubPush, type PubSubPushResult } from "../../../shared/worker/pubsub.ts";
import { createWorker } from "../../../shared/worker/worker.ts";
import { ensureCrds } from "../../support/aws.ts";
import { fixture } from "../../support/cloud-events.ts";
import { managedObject } from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { createGcpProviderConfig, emulatorPubSub, gcpProject } from "../../support/gcp.ts";
import { keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { RecordingSink } from "../pipeline/helpers.ts";
import { listsPerUnmanagedEvent } from "./shapes.ts";

const kube = newKube();
const PC = uniqueName("pc-ce-gcp");
const managed = uniqueName("ce-topic");
let ps: PubSub;
let workTopic = "";
let workSub = "";

const workerKube = newKube();
const OWN_SA = "driftless-reconcile@demo-project.iam.gserviceaccount.com";
const worker = createWorker({
  kube: workerKube,
  kinds: gcpKinds,
  providerConfigKinds: gcpProviderConfigKinds,
  logger: noopLogger,
  rateLimit: false,
  // The reconcile function's service account (docs/deploy-gcp.md): its own writes are dropped by principal.
  ownPrincipals: [OWN_SA],
});

/** Where keys that ask to be looked at again go (the work topic, in a deployment). */
const followUps = new RecordingSink();

const cloudRetention = async (id: string) => (await ps.topic(id).getMetadata())[0].messageRetentionDuration;

/** The documented UpdateTopic entry about topic `id` of the emulator's project. */
const entryFor = (id: string, replace: Record<string, string> = {}) =>
  fixture("gcp-pubsub-update-topic.json", { "demo-project": gcpProject(), "orders-events": id, ...replace });

/** Publishes `data` to the work topic, pulls it, and pushes it to the handler as Eventarc does. */
async function deliver(data: string): Promise<PubSubPushResult> {
  const id = await ps.topic(workTopic).publishMessage({ data: Buffer.from(data) });
  const sub = ps.subscription(workSub);
  try {
    const message = await new Promise<Message>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no message pulled")), 20_000);
      sub.on("message", (m: Message) => {
        if (m.id !== id) return m.ack();
        clearTimeout(timer);
        resolve(m);
      });
    });
    workerKube.resetStats();
    const event = {
      specversion: "1.0",
      id: message.id,
      type: "google.cloud.pubsub.topic.v1.messagePublished",
      source: `//pubsub.googleapis.com/projects/${gcpProject()}/topics/${workTopic}`,
      data: {
        message: {
          data: message.data.toString("base64"),
          messageId: message.id,
          publishTime: message.publishTime.toISOString(),
          attributes: message.attributes,
        },
        subscription: `projects/${gcpProject()}/subscriptions/${workSub}`,
      },
    };
    // Acked whatever the outcome: a nack would bring it back into the next test's pull.
    message.ack();
    return await handlePubSubPush(
      {
        reconcile: worker.reconcile,
        cloudEvents: worker.cloudEvents,
        producer: followUps,
        logger: noopLogger,
      },
      event,
    );
  } finally {
    sub.removeAllListeners("message");
    await sub.close();
  }
}

beforeAll(async () => {
  await ensureCrds();
  await createGcpProviderConfig(kube, PC);
  ps = emulatorPubSub();
  workTopic = uniqueName("ce-sink");
  workSub = `${workTopic}-push`;
  await ps.createTopic(workTopic);
  await ps.topic(workTopic).createSubscription(workSub);
  await kube.create(
    Topic,
    managedObject(Topic, managed, PC, { forProvider: { messageRetentionDuration: "1200s" } }),
  );
  await settle(newReconciler(kube), keyOf(Topic, managed));
}, 120_000);

afterAll(async () => {
  await kube.delete(Topic, managed);
  await settle(newReconciler(kube), keyOf(Topic, managed)).catch(() => undefined);
  await ps?.close();
}, 60_000);

describe("cloud events: Cloud Audit Logs via a log sink on Pub/Sub", () => {
  it("an out-of-band UpdateTopic is corrected by its audit entry", async () => {
    // The emulator knows no `labels` update path; the retention period is changed instead.
    await ps.topic(managed).setMetadata({ messageRetentionDuration: { seconds: 3600 } });
    expect(await cloudRetention(managed)).toMatchObject({ seconds: "3600" });

    const res = await deliver(entryFor(managed));

    expect(res).toEqual({ outcome: "cloud-event", keys: 1 });
    expect(await cloudRetention(managed)).toMatchObject({ seconds: "1200" });
    // One label-selected LIST: the cluster-scoped shape finds it, so the namespaced (.m.) one is not asked.
    expect(workerKube.stats.lists).toBe(1);
    // The update's settle check goes back to the work topic as a key.
    expect(followUps.messages.map((m) => m.name)).toEqual([managed]);
  });

  it("driftless's own write (its service account) is dropped before any request to the API server", async () => {
    const res = await deliver(entryFor(managed, { "dana@example.com": OWN_SA }));
    expect(res).toEqual({ outcome: "cloud-event", keys: 0 });
    expect(workerKube.stats.lists + workerKube.stats.gets + workerKube.stats.writes).toBe(0);
  });

  it("an entry about a topic driftless does not manage costs one LIST per shape of the kind in use and nothing else", async () => {
    // Once per cluster, a shape without a mark is checked (any labelled object?) and the answer recorded;
    // a second event reads the marks again should that write have lost to another test's on this stack.
    for (let i = 0; i < 2; i++) await deliver(entryFor(uniqueName("not-ours")));
    const expected = await listsPerUnmanagedEvent(kube, Topic);
    const res = await deliver(entryFor(uniqueName("not-ours")));
    expect(res).toEqual({ outcome: "cloud-event", keys: 0 });
    // One label-selected LIST per shape of the kind in use: cluster-scoped, and namespaced (.m.) if in use.
    expect(workerKube.stats.lists).toBe(expected);
    // Nothing else: no write, and no GET but, at most, the one read of the shapes' marks whose 30 s cache
    // may run out during this test.
    const marksReads = workerKube.stats.byOperation["get ConfigMap"] ?? 0;
    expect(marksReads).toBeLessThanOrEqual(1);
    expect(workerKube.stats.gets - marksReads + workerKube.stats.writes).toBe(0);
  });
});
