// The doorbell against the real kube-apiserver: a ValidatingWebhookConfiguration (objectSelector: this
// test's label, so no other test's writes ring) points at a local HTTPS endpoint running the same
// handler code as the functions, signed by the local stack's CA. No forwarder runs: creates, spec
// changes and deletes converge in moto from the doorbell alone; with the endpoint gone (refused, or
// hanging past the webhook's timeout) writes still succeed, and a sweep catches up.
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { dirname } from "node:path";
import { GetQueueAttributesCommand, GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { awsKinds, awsProviderConfigKinds } from "../../../functions/aws/kinds.ts";
import { ensureTls } from "../../../infra/local/tls.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { doorbellPath } from "../../../shared/doorbell/http.ts";
import { createDoorbell } from "../../../shared/doorbell/index.ts";
import { startDoorbellServer } from "../../../shared/doorbell/server.ts";
import {
  applyWebhookConfiguration,
  deleteWebhookConfiguration,
  doorbellWebhookConfiguration,
} from "../../../shared/doorbell/webhook.ts";
import { createLogger } from "../../../shared/log.ts";
import type { Running } from "../../../shared/pipeline/run.ts";
import { typesOf } from "../../../shared/worker/worker.ts";
import { createAwsProviderConfig, ensureCrds, motoSqs } from "../../support/aws.ts";
import { startDoorbellRun, untilProbeRings, untilRinging } from "../../support/doorbell-run.ts";
import { env, eventually, newKube, uniqueName } from "../../support/env.ts";
import { conditionOf, getMr } from "../../support/reconcile.ts";
import { RecordingSink, TEST_LABEL } from "../pipeline/helpers.ts";

const kube = newKube();
const sqs = motoSqs();
const label = uniqueName("doorbell");
const PC = uniqueName("pc-doorbell");
const webhookName = `driftless-doorbell-${label}`;
const secret = randomBytes(24).toString("hex");
const names: string[] = [];
let run: Running;
let caPem: string;
let probe: string;

const queueObject = (name: string, forProvider: Record<string, unknown> = {}, annotations = {}) => ({
  apiVersion: Queue.apiVersion,
  kind: Queue.kind,
  metadata: { name, labels: { [TEST_LABEL]: label }, annotations },
  spec: { forProvider, providerConfigRef: { name: PC } },
});

const isReady = async (name: string) =>
  conditionOf(await getMr(kube, Queue, name), "Ready")?.status === "True";
async function cloudAttribute(name: string, attribute: string): Promise<string | undefined> {
  try {
    const url = (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
    const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }));
    return (out.Attributes as Record<string, string> | undefined)?.[attribute];
  } catch {
    return undefined;
  }
}
const answered = () => Object.values(run.doorbell?.stats() ?? {}).reduce((a, b) => a + b, 0);

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
  ({ run, caPem } = await startDoorbellRun(kube, { label, secret, webhookName, name: "doorbell-test" }));
  probe = uniqueName("doorbell-probe");
  names.push(probe);
  await untilRinging(kube, run, { name: probe, label, providerConfig: PC });
}, 120_000);

afterAll(async () => {
  await run?.stop();
  await deleteWebhookConfiguration(kube, webhookName).catch(() => {});
  for (const n of names) {
    await kube.patch(Queue, n, { metadata: { finalizers: null } }).catch(() => {});
    await kube.delete(Queue, n).catch(() => {});
  }
});

describe("doorbell mode on the real API server", () => {
  it("creates, changes and deletes converge in the cloud with no forwarder and no sweep", async () => {
    expect(run.forwarder).toBeUndefined();
    const verdicts0 = run.doorbell?.verdicts() ?? {};
    const name = uniqueName("doorbell-q");
    names.push(name);
    await kube.create(Queue, queueObject(name, { visibilityTimeoutSeconds: 30 }));
    await eventually(() => isReady(name), { timeoutMs: 30_000, what: "Ready from the create's doorbell" });
    expect(await cloudAttribute(name, "VisibilityTimeout")).toBe("30");

    await kube.patch(Queue, name, { spec: { forProvider: { visibilityTimeoutSeconds: 45 } } });
    await eventually(async () => (await cloudAttribute(name, "VisibilityTimeout")) === "45", {
      timeoutMs: 30_000,
      what: "the spec change applied in moto",
    });

    await kube.delete(Queue, name);
    await eventually(
      async () => !(await getMr(kube, Queue, name)) && (await cloudAttribute(name, "QueueArn")) === undefined,
      {
        timeoutMs: 30_000,
        what: "the queue deleted in moto and the object gone",
      },
    );
    // The user's three writes rang; driftless's own (finalizer, annotations, its removal) were dropped.
    const verdicts = run.doorbell?.verdicts() ?? {};
    const delta = (v: string) => (verdicts[v] ?? 0) - (verdicts0[v] ?? 0);
    expect(delta("enqueued") + delta("delayed")).toBe(3);
    expect(delta("own-write")).toBeGreaterThanOrEqual(3);
    expect(delta("send-failed")).toBe(0);
  });

  it("a burst of creates: every one rings once, none is refused or fails", async () => {
    const before = run.doorbell?.stats()[200] ?? 0;
    const burst = Array.from({ length: 40 }, (_, i) => `${label}-burst-${i}`);
    names.push(...burst);
    // Paused: the reconcile only reads them; the point is the API server's calls.
    await Promise.all(
      burst.map((n) => kube.create(Queue, queueObject(n, {}, { "crossplane.io/paused": "true" }))),
    );
    await eventually(async () => (run.doorbell?.stats()[200] ?? 0) - before >= burst.length, {
      timeoutMs: 20_000,
      what: "one admission call per create",
    });
    // Each create was answered, and nothing else was refused or failed.
    expect(Object.keys(run.doorbell?.stats() ?? {}).sort()).toEqual(["200"]);
  });

  it("endpoint gone: writes still succeed (refused and hanging endpoints), and a sweep catches up", async () => {
    const live = uniqueName("doorbell-live");
    names.push(live);
    await kube.create(Queue, queueObject(live, { visibilityTimeoutSeconds: 30 }));
    await eventually(() => isReady(live), { timeoutMs: 30_000, what: "Ready before the endpoint goes" });

    try {
      // 1. Refused: point the webhook at a port nothing listens on (and wait until the API server uses it).
      const closed = await freePortUrl();
      await applyWebhookConfiguration(
        kube,
        webhookFor(`https://127.0.0.1:${closed}${doorbellPath(secret, "admit")}`),
      );
      await untilProbeRings(kube, run, probe, false);
      const refused = uniqueName("doorbell-refused");
      names.push(refused);
      await eventually(
        async () => {
          await kube.create(Queue, queueObject(refused, { visibilityTimeoutSeconds: 30 }));
          return true;
        },
        { timeoutMs: 10_000, what: "a create while the endpoint refuses" },
      );
      // 2. Hanging: a server that accepts and never answers; the API server gives up after the timeout.
      const hang = await hangingServer();
      try {
        await applyWebhookConfiguration(
          kube,
          webhookFor(`https://127.0.0.1:${hang.port}${doorbellPath(secret, "admit")}`),
        );
        await untilHanging(hang);
        await kube.patch(Queue, live, { spec: { forProvider: { visibilityTimeoutSeconds: 50 } } });
      } finally {
        const closed = new Promise<void>((r) => hang.server.close(() => r()));
        for (const s of hang.sockets) s.destroy();
        await closed;
      }
      const ringsBefore = answered();
      // Neither write rang the real endpoint; nothing changes in the cloud until the sweep.
      expect(await cloudAttribute(live, "VisibilityTimeout")).toBe("30");
      expect(await cloudAttribute(refused, "QueueArn")).toBeUndefined();
      await run.sweepNow();
      await eventually(async () => (await cloudAttribute(live, "VisibilityTimeout")) === "50", {
        timeoutMs: 30_000,
        what: "the lost spec change applied after the sweep",
      });
      await eventually(() => isReady(refused), {
        timeoutMs: 30_000,
        what: "the lost create Ready after the sweep",
      });
      expect(answered()).toBe(ringsBefore);
    } finally {
      // Back to the running endpoint for the tests after this one, whatever happened above.
      await applyWebhookConfiguration(
        kube,
        webhookFor(`${run.doorbell?.baseUrl}${doorbellPath(secret, "admit")}`),
      );
      await untilProbeRings(kube, run, probe, true);
    }
  });
});

describe("connection Secrets", () => {
  it("a connection Secret edited by hand rings its owner; driftless's own Secret writes do not", async () => {
    // A second endpoint that only records, with only the connection-Secret webhook (no selector: a
    // Secret does not carry its owner's labels, so other tests' Secrets may ring it too — recorded only).
    const sink = new RecordingSink();
    const tls = await ensureTls(dirname(env("DRIFTLESS_CA_FILE")), { name: "doorbell" });
    const ring = createDoorbell({
      secret,
      producer: sink,
      types: typesOf(awsKinds, awsProviderConfigKinds),
      logger: createLogger({ level: "silent", name: "doorbell-secrets" }),
    });
    const server = await startDoorbellServer({
      cert: await readFile(tls.serverCert),
      key: await readFile(tls.serverKey),
      handle: ring,
    });
    const full = doorbellWebhookConfiguration({
      url: `${server.baseUrl}${doorbellPath(secret, "admit")}`,
      types: typesOf(awsKinds, awsProviderConfigKinds),
      caBundlePem: caPem,
      name: `${webhookName}-secrets`,
    }) as { webhooks: Array<{ name: string }> };
    const secretsOnly = {
      ...full,
      webhooks: full.webhooks.filter((w) => w.name.startsWith("connection-secrets")),
    };
    const name = uniqueName("doorbell-conn");
    names.push(name);
    const secretName = `${name}-conn`;
    try {
      await kube.create(Queue, {
        ...queueObject(name),
        spec: {
          forProvider: {},
          providerConfigRef: { name: PC },
          writeConnectionSecretToRef: { name: secretName, namespace: "default" },
        },
      });
      await applyWebhookConfiguration(kube, secretsOnly);
      await eventually(async () => (await isReady(name)) && (await kube.getSecret("default", secretName)), {
        timeoutMs: 30_000,
        what: "Ready with its connection Secret",
      });
      // driftless wrote the Secret (and may have updated it) under its field manager: nothing rang.
      expect(sink.for(name)).toEqual([]);
      await eventually(
        async () => {
          const current = await kube.getSecret("default", secretName);
          if (current) {
            current.data = { ...current.data, url: Buffer.from(`edited-${Date.now()}`).toString("base64") };
            await kube.replaceSecret(current).catch(() => undefined);
          }
          return sink.for(name).length > 0;
        },
        { timeoutMs: 30_000, intervalMs: 500, what: "the Secret's edit ringing its owner" },
      );
      expect(sink.for(name)[0]).toMatchObject({ kind: "Queue", name, reason: "watch" });
    } finally {
      await deleteWebhookConfiguration(kube, `${webhookName}-secrets`).catch(() => {});
      await server.close();
    }
  });
});

function webhookFor(url: string) {
  return doorbellWebhookConfiguration({
    url,
    types: typesOf(awsKinds, awsProviderConfigKinds, { claims: true }),
    caBundlePem: caPem,
    name: webhookName,
    labelSelector: `${TEST_LABEL}=${label}`,
  });
}

async function freePortUrl(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Touches the probe until the API server calls the hanging endpoint (it waits out the webhook's timeout). */
async function untilHanging(hang: { sockets: Set<unknown> }): Promise<void> {
  await eventually(
    async () => {
      await kube.patch(Queue, probe, { metadata: { annotations: { "test/touch": String(Date.now()) } } });
      return hang.sockets.size > 0;
    },
    { timeoutMs: 30_000, intervalMs: 300, what: "the API server calling the hanging endpoint" },
  );
}

async function hangingServer(): Promise<{
  server: Server;
  port: number;
  sockets: Set<import("node:net").Socket>;
}> {
  const sockets = new Set<import("node:net").Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on("error", () => {});
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { server, port: (server.address() as { port: number }).port, sockets };
}
