// The GCP doorbell: the `doorbell` entry point served by the real Functions Framework as an HTTP
// function, as `gcloud functions deploy --trigger-http` runs it. An AdmissionReview is answered
// "allowed" and the key lands on the work topic of the Pub/Sub emulator; a wrong secret is a bare 404.
import { randomBytes } from "node:crypto";
import type { PubSub } from "@google-cloud/pubsub";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Topic } from "../../../shared/api/gcp/pubsub.ts";
import { decodeMessage } from "../../../shared/queue/message.ts";
import { admissionReview } from "../../support/admission.ts";
import { eventually, uniqueName } from "../../support/env.ts";
import { emulatorPubSub, gcpProject, pubsubEmulatorHost } from "../../support/gcp.ts";
import { ensurePubSubTopology, type PubSubTopology } from "../../support/queues.ts";
import { type FunctionsFrameworkServer, startFunctionsFramework } from "./support.ts";

const SECRET = randomBytes(20).toString("hex");
let pubsub: PubSub;
let topology: PubSubTopology;
let server: FunctionsFrameworkServer;

const review = (name: string) =>
  admissionReview(Topic, {
    uid: "gcp-req-1",
    name,
    userInfo: { username: "bob" },
    object: { metadata: { name, resourceVersion: "12" }, spec: { forProvider: { labels: { a: "2" } } } },
    oldObject: { metadata: { name, resourceVersion: "12" }, spec: { forProvider: { labels: { a: "1" } } } },
  });

const post = (path: string, body: unknown) =>
  fetch(new URL(path, server.url), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  pubsub = emulatorPubSub();
  const base = uniqueName("fn-gcp-bell");
  topology = await ensurePubSubTopology(pubsub, {
    topic: `${base}-work`,
    subscription: `${base}-sub`,
    ordering: false,
    maxDeliveryAttempts: 5,
    minimumBackoffSeconds: 0,
    maximumBackoffSeconds: 1,
  });
  server = await startFunctionsFramework({
    target: "doorbell",
    source: "functions/gcp/reconcile.ts",
    signatureType: "http",
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS,
      PUBSUB_EMULATOR_HOST: pubsubEmulatorHost(),
      GCP_PROJECT_ID: gcpProject(),
      LOG_LEVEL: "warn",
      DRIFTLESS_QUEUE: "pubsub",
      DRIFTLESS_PUBSUB_TOPIC: topology.topic,
      DRIFTLESS_DOORBELL_SECRET: SECRET,
      // No KUBECONFIG: the doorbell never reaches the cluster.
    },
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await pubsub?.close();
});

describe("GCP: HTTP doorbell → Pub/Sub", () => {
  it("allows, and publishes the key to the work topic; a wrong secret is a bare 404", async () => {
    const name = uniqueName("fn-gcp-bell-t");
    const wrong = await post(`/${"y".repeat(40)}/admit`, review(name));
    expect(wrong.status).toBe(404);
    const res = await post(`/${SECRET}/admit`, review(name));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "gcp-req-1", allowed: true },
    });
    const received: string[] = [];
    const sub = pubsub.subscription(topology.subscription);
    sub.on("message", (m) => {
      received.push(m.data.toString("utf8"));
      m.ack();
    });
    try {
      await eventually(async () => received.length > 0, {
        timeoutMs: 20_000,
        what: "the key on the work topic",
      });
    } finally {
      await sub.close();
    }
    expect(received).toHaveLength(1);
    const decoded = decodeMessage(received[0] ?? "");
    expect(decoded.ok && decoded.message).toMatchObject({
      apiVersion: Topic.apiVersion,
      kind: "Topic",
      name,
      admitted: { before: "12" },
    });
  });
});
