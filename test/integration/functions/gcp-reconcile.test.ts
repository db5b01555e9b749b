// The GCP path end to end on the local stack: a Topic managed resource in the real API server → the
// forwarder (Pub/Sub producer) or the sweep function → the Pub/Sub emulator → each message POSTed, as
// Eventarc pushes it (a binary-mode CloudEvent), to a Functions Framework server running
// functions/gcp/reconcile.ts → Ready. 2xx acks; any other status nacks, so the emulator redelivers.
import type { PubSub } from "@google-cloud/pubsub";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningForwarder } from "../../../functions/forwarder.ts";
import { Topic } from "../../../shared/api/gcp/pubsub.ts";
import { encodeMessage } from "../../../shared/queue/message.ts";
import { PUBSUB_DLQ_ERROR_ATTRIBUTE } from "../../../shared/queue/pubsub.ts";
import { ensureCrds } from "../../support/aws.ts";
import { eventually, newKube, uniqueName } from "../../support/env.ts";
import {
  createGcpProviderConfig,
  emulatorPubSub,
  gcpProject,
  pubsubEmulatorHost,
} from "../../support/gcp.ts";
import { ensurePubSubTopology, type PubSubTopology } from "../../support/queues.ts";
import { captureLogger, conditionOf, getMr } from "../../support/reconcile.ts";
import { TEST_LABEL } from "../pipeline/helpers.ts";
import { type FunctionsFrameworkServer, relayToFunction, startFunctionsFramework } from "./support.ts";

const kube = newKube();
const PC = uniqueName("pc-fn-gcp");
const FORWARDED = uniqueName("fn-gcp-fwd");
const SWEPT = uniqueName("fn-gcp-sweep");
let pubsub: PubSub;
let topology: PubSubTopology;
let reconcileServer: FunctionsFrameworkServer;
let sweepServer: FunctionsFrameworkServer;
let relay: ReturnType<typeof relayToFunction>;
let forwarder: RunningForwarder | undefined;

const topicObject = (name: string, label: string) => ({
  apiVersion: Topic.apiVersion,
  kind: Topic.kind,
  metadata: { name, labels: { [TEST_LABEL]: label } },
  spec: { forProvider: {}, providerConfigRef: { name: PC } },
});

function functionEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    KUBECONFIG: process.env.KUBECONFIG,
    NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS,
    PUBSUB_EMULATOR_HOST: pubsubEmulatorHost(),
    GCP_PROJECT_ID: gcpProject(),
    LOG_LEVEL: "info",
    DRIFTLESS_QUEUE: "pubsub",
    DRIFTLESS_PUBSUB_TOPIC: topology.topic,
    ...extra,
  };
}

beforeAll(async () => {
  await ensureCrds();
  await createGcpProviderConfig(kube, PC);
  pubsub = emulatorPubSub();
  const base = uniqueName("fn-gcp");
  // Unordered, with a short retry backoff: the emulator applies backoff (and dead-lettering) there.
  topology = await ensurePubSubTopology(pubsub, {
    topic: `${base}-work`,
    subscription: `${base}-eventarc`,
    ordering: false,
    maxDeliveryAttempts: 5,
    minimumBackoffSeconds: 0,
    maximumBackoffSeconds: 1,
  });
  [reconcileServer, sweepServer] = await Promise.all([
    startFunctionsFramework({
      target: "reconcile",
      source: "functions/gcp/reconcile.ts",
      env: functionEnv({
        DRIFTLESS_PUBSUB_DLQ_TOPIC: topology.deadLetterTopic,
        DRIFTLESS_PUBSUB_MAX_DELIVERY_ATTEMPTS: "5",
      }),
    }),
    startFunctionsFramework({
      target: "sweep",
      source: "functions/gcp/sweep.ts",
      env: functionEnv({
        DRIFTLESS_LABEL_SELECTOR: `${TEST_LABEL}=${SWEPT}`,
        DRIFTLESS_SWEEP_INTERVAL: "1m",
      }),
    }),
  ]);
  relay = relayToFunction(pubsub.subscription(topology.subscription), reconcileServer.url, topology.topic);
  const { readForwarderConfig, startForwarder } = await import("../../../functions/forwarder.ts");
  process.env.PUBSUB_EMULATOR_HOST = pubsubEmulatorHost();
  forwarder = await startForwarder(
    readForwarderConfig({
      ...process.env,
      DRIFTLESS_QUEUE: "pubsub",
      DRIFTLESS_PUBSUB_TOPIC: topology.topic,
      GCP_PROJECT_ID: gcpProject(),
      DRIFTLESS_LABEL_SELECTOR: `${TEST_LABEL}=${FORWARDED}`,
    }),
    captureLogger().logger,
  );
}, 120_000);

afterAll(async () => {
  await forwarder?.stop();
  await relay?.stop();
  await Promise.all([reconcileServer?.stop(), sweepServer?.stop()]);
  await pubsub?.close();
});

const ready = async (name: string) => conditionOf(await getMr(kube, Topic, name), "Ready")?.status === "True";

describe("GCP: Pub/Sub → CloudEvent → Cloud Functions handler", () => {
  it("reconciles a Topic forwarded from a watch event to Ready (the requeue after create is a nack)", async () => {
    const name = uniqueName("fn-topic");
    await kube.create(Topic, topicObject(name, FORWARDED));

    await eventually(() => ready(name), { timeoutMs: 60_000, what: `${name} Ready` }).catch((err: Error) => {
      throw new Error(`${err.message}\nfunction logs:\n${reconcileServer.logs()}`);
    });

    expect(conditionOf(await getMr(kube, Topic, name), "Synced")).toMatchObject({ status: "True" });
    expect((await pubsub.topic(name).exists())[0]).toBe(true);
    // Created → requeue → non-2xx → redelivered by the emulator → in sync → 2xx.
    expect(relay.statuses.some((s) => s.status >= 500)).toBe(true);
    expect(relay.statuses.some((s) => s.status === 204)).toBe(true);
    expect(reconcileServer.logs()).toContain("RequeueError");
  }, 90_000);

  it("sweeps on a scheduler tick and reconciles what the sweep enqueued", async () => {
    const name = uniqueName("fn-swept");
    await kube.create(Topic, topicObject(name, SWEPT));

    // Cloud Scheduler → tick topic → Eventarc: the tick's content does not matter, its time does.
    const status = await fetch(sweepServer.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "ce-id": uniqueName("tick"),
        "ce-specversion": "1.0",
        "ce-type": "google.cloud.pubsub.topic.v1.messagePublished",
        "ce-source": "//pubsub.googleapis.com/projects/p/topics/driftless-sweep-tick",
        "ce-time": new Date().toISOString(),
      },
      body: JSON.stringify({
        message: { data: "", messageId: uniqueName("tick") },
        subscription: "tick-sub",
      }),
    }).then((r) => r.status);

    expect(status).toBe(204);
    await eventually(() => ready(name), { timeoutMs: 60_000, what: `${name} Ready` }).catch((err: Error) => {
      throw new Error(
        `${err.message}\nsweep logs:\n${sweepServer.logs()}\nfunction logs:\n${reconcileServer.logs()}`,
      );
    });
    expect(sweepServer.logs()).toContain('"enqueued":1');
  }, 90_000);

  it("copies a malformed message to the dead-letter topic and acks it", async () => {
    const dlq = pubsub.subscription(topology.deadLetterSubscription);
    const seen: Array<{ data: string; attributes: Record<string, string> }> = [];
    dlq.on("message", (m) => {
      seen.push({ data: m.data.toString(), attributes: m.attributes });
      m.ack();
    });
    const poison = `${encodeMessage({ v: 1, apiVersion: "x/v1", kind: "X", name: "n", reason: "watch", at: new Date().toISOString() }).slice(0, -5)}`;
    const id = await pubsub.topic(topology.topic).publishMessage({ data: Buffer.from(poison) });

    await eventually(async () => seen.some((s) => s.data === poison), {
      timeoutMs: 30_000,
      what: "dead letter",
    });
    await dlq.close();

    const copy = seen.find((s) => s.data === poison);
    expect(copy?.attributes[PUBSUB_DLQ_ERROR_ATTRIBUTE]).toBe("body is not JSON");
    expect(copy?.attributes["driftless-source-message-id"]).toBe(id);
    expect(relay.statuses.filter((s) => s.id === id).map((s) => s.status)).toEqual([204]);
    expect(reconcileServer.logs()).not.toContain(poison);
  }, 60_000);
});
