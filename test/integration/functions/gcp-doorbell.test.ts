// The GCP doorbell: functions/gcp/doorbell.ts as Cloud Run runs it (its own process, plain HTTP on
// $PORT). An AdmissionReview is answered "allowed" and the key lands on the work topic of the Pub/Sub
// emulator; a wrong secret is a bare 404 — answered before any of the body is read, as is a body
// announced over the limit (the Functions Framework read and parsed up to 32 MiB first).
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { request } from "node:http";
import path from "node:path";
import type { PubSub } from "@google-cloud/pubsub";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Topic } from "../../../shared/api/gcp/pubsub.ts";
import { decodeMessage } from "../../../shared/queue/message.ts";
import { admissionReview } from "../../support/admission.ts";
import { eventually, freePort, uniqueName } from "../../support/env.ts";
import { emulatorPubSub, gcpProject, pubsubEmulatorHost } from "../../support/gcp.ts";
import { ensurePubSubTopology, type PubSubTopology } from "../../support/queues.ts";

const SECRET = randomBytes(20).toString("hex");
let pubsub: PubSub;
let topology: PubSubTopology;
let child: ChildProcess;
let url: string;
let output = "";

const review = (name: string) =>
  admissionReview(Topic, {
    uid: "gcp-req-1",
    name,
    userInfo: { username: "bob" },
    object: { metadata: { name, resourceVersion: "12" }, spec: { forProvider: { labels: { a: "2" } } } },
    oldObject: { metadata: { name, resourceVersion: "12" }, spec: { forProvider: { labels: { a: "1" } } } },
  });

const post = (path: string, body: unknown) =>
  fetch(new URL(path, url), {
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
  const port = await freePort();
  // DRIFTLESS_TEST_GCP_BUNDLE=1 runs the built file (`npm run build:gcp` → dist/gcp/doorbell.mjs).
  const entry = process.env.DRIFTLESS_TEST_GCP_BUNDLE ? "dist/gcp/doorbell.mjs" : "functions/gcp/doorbell.ts";
  child = spawn(process.execPath, [path.join(process.cwd(), entry)], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS,
      NODE_NO_WARNINGS: "1",
      PORT: String(port),
      PUBSUB_EMULATOR_HOST: pubsubEmulatorHost(),
      GCP_PROJECT_ID: gcpProject(),
      LOG_LEVEL: "info",
      DRIFTLESS_QUEUE: "pubsub",
      DRIFTLESS_PUBSUB_TOPIC: topology.topic,
      DRIFTLESS_DOORBELL_SECRET: SECRET,
      // No KUBECONFIG: the doorbell never reaches the cluster.
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  url = `http://127.0.0.1:${port}/`;
  await eventually(async () => output.includes("doorbell serving"), {
    timeoutMs: 60_000,
    what: "the doorbell serving",
  }).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}:\n${output}`);
  });
}, 120_000);

afterAll(async () => {
  if (child && child.exitCode === null)
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
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

  it("answers a wrong secret, and a body announced over the limit, before reading any of the body", async () => {
    // 30 MiB announced, 1 KiB sent: a server that reads the body first never answers.
    const announceOnly = (p: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(new URL(p, url), {
          method: "POST",
          headers: { "content-type": "application/json", "content-length": String(30 * 1024 * 1024) },
        });
        req.on("response", (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
          req.destroy();
        });
        req.on("error", (err) => {
          if ((err as NodeJS.ErrnoException).code !== "ECONNRESET") reject(err);
        });
        req.setTimeout(10_000, () => reject(new Error(`no answer to ${p} before its body was sent`)));
        req.write(Buffer.alloc(1024, 0x20));
      });
    expect(await announceOnly(`/${"z".repeat(64)}/admit`)).toBe(404);
    expect(await announceOnly(`/${SECRET}/admit`)).toBe(413);
  });
});
