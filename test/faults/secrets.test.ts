// Area 7 — secret hygiene. Everything cheap to run, at LOG_LEVEL=debug, through the real pieces of
// `driftless run` (forwarder → queue → reconcilers, plus a drift sweep): an SQS Queue, an RDS DBInstance
// with a generated password and one with a user password in another namespace's Secret (then rotated), an
// Azure Container with a SAS, and ProviderConfig checks with bad credentials (a wrong key name, malformed
// JSON whose parse error would quote the key, a refused client secret) — each created, updated and
// deleted. Collected: every log line (pino into memory), every Event in the cluster, every object's
// spec/status/annotations at each phase, every queue message sent. Scanned for every secret value that
// existed (raw and base64): zero hits.

import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DBInstance } from "../../shared/api/aws/rds.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import { ResourceGroup } from "../../shared/api/azure/resources.ts";
import { Container } from "../../shared/api/azure/storage.ts";
import type { ManagedKindDef } from "../../shared/api/managed.ts";
import type { ResourceType } from "../../shared/api/meta.ts";
import { providerConfigs } from "../../shared/api/provider-config.ts";
import type { KubeObject } from "../../shared/kube/client.ts";
import { coreApi } from "../../shared/kube/core.ts";
import { KubeEventRecorder } from "../../shared/kube/events.ts";
import { Forwarder } from "../../shared/pipeline/forwarder.ts";
import { sweep } from "../../shared/pipeline/sweep.ts";
import { managedKinds, providerConfigKinds } from "../../shared/providers/index.ts";
import { MemoryQueue, makeMessage, type ReconcileMessage } from "../../shared/queue/index.ts";
import type { SendOptions } from "../../shared/queue/port.ts";
import { ProviderConfigReconciler } from "../../shared/reconciler/provider-config.ts";
import { KindRegistry } from "../../shared/reconciler/registry.ts";
import { contextLogger } from "../../shared/worker/context.ts";
import { Router } from "../../shared/worker/core.ts";
import { reconcileHandler } from "../../shared/worker/memory.ts";
import { TEST_LABEL } from "../integration/pipeline/helpers.ts";
import { createAwsProviderConfig, ensureCrds, ensureNamespace } from "../support/aws.ts";
import { AZURE_CLIENT_ID, createAzureProviderConfig, startPrivateArmFake } from "../support/azure.ts";
import { env, eventually, newKube, uniqueName } from "../support/env.ts";
import { conditionOf, getMr } from "../support/reconcile.ts";
import { Reconciler } from "../support/routed.ts";
import { bufferLogger, forceDelete, Tally } from "./support.ts";

const kube = newKube();
const tally = new Tally("7 secret hygiene");
const LABEL = uniqueName("fsec");
const rand = () => randomBytes(9).toString("base64url");
const NS = uniqueName("fsec-ns");

// Every secret value this file creates or learns; scanned for at the end.
const secrets = new Map<string, string>();
const AWS_ACCESS_KEY = `AKIAFAULT${randomBytes(6).toString("hex").toUpperCase()}`;
secrets.set("AWS secret access key", `fault-aws-secret-${rand()}`);
secrets.set("AWS secret access key of the bad ProviderConfig", `fault-bad-aws-${rand()}`);
secrets.set("Azure client secret", `fault-az-secret-${rand()}`);
secrets.set("wrong Azure client secret", `fault-bad-az-${rand()}`);
secrets.set("user master password", `Pw1-${rand()}`);
// Short and unquoted in malformed JSON: JSON.parse's own error would quote it whole (10 characters of
// context either side of the fault).
const MALFORMED_JSON_SECRET = `Q${randomBytes(6).toString("hex").slice(0, 9)}`;
secrets.set("AWS secret access key in malformed JSON", MALFORMED_JSON_SECRET);
secrets.set("rotated master password", `Pw2-${rand()}`);

const PC_AWS = uniqueName("pc-sec-aws");
const PC_AWS_BAD = uniqueName("pc-sec-aws-bad");
const PC_AWS_JSON = uniqueName("pc-sec-aws-json");
const PC_AZ = uniqueName("pc-sec-az");
const PC_AZ_BAD = uniqueName("pc-sec-az-bad");
const names = {
  queue: uniqueName("fsec-q"),
  queueBad: uniqueName("fsec-qbad"),
  queueJson: uniqueName("fsec-qjson"),
  dbGenerated: uniqueName("fsec-dbgen"),
  dbUser: uniqueName("fsec-dbusr"),
  container: uniqueName("fsec-c"),
  groupBad: uniqueName("fsec-rgbad"),
};
const objects: Array<[ManagedKindDef, string]> = [
  [Queue, names.queue],
  [Queue, names.queueBad],
  [Queue, names.queueJson],
  [DBInstance, names.dbGenerated],
  [DBInstance, names.dbUser],
  [Container, names.container],
  [ResourceGroup, names.groupBad],
];

/** Where each value (raw, base64 or URL-encoded) occurs among the places. */
function scan(values: Array<[string, string]>, where: Array<[string, string]>): string[] {
  const hits: string[] = [];
  for (const [what, value] of values) {
    const forms = [value, Buffer.from(value).toString("base64"), encodeURIComponent(value)];
    for (const [place, text] of where)
      if (forms.some((f) => text.includes(f))) hits.push(`${what} in ${place}`);
  }
  return hits;
}

/** Places scanned: label → text. */
const places: Array<[string, string]> = [];
const messages: ReconcileMessage[] = [];

const labels = { [TEST_LABEL]: LABEL };
const mr = (
  def: ManagedKindDef,
  name: string,
  pc: string,
  forProvider: Record<string, unknown>,
  conn = true,
) => ({
  apiVersion: def.apiVersion,
  kind: def.kind,
  metadata: { name, labels },
  spec: {
    forProvider,
    providerConfigRef: { name: pc },
    ...(conn ? { writeConnectionSecretToRef: { namespace: NS, name: `${name}-conn` } } : {}),
  },
});
const db = (extra: Record<string, unknown> = {}) => ({
  engine: "postgres",
  dbInstanceClass: "db.t3.micro",
  allocatedStorage: 20,
  masterUsername: "dbadmin",
  skipFinalSnapshot: true,
  ...extra,
});

async function connection(name: string): Promise<Record<string, string>> {
  const s = await kube.getSecret(NS, `${name}-conn`);
  return Object.fromEntries(
    Object.entries(s?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]),
  );
}

/** Snapshots every object of this file (spec, annotations, status) as a place to scan. */
async function snapshot(phase: string) {
  for (const [def, name] of objects) {
    const o = await kube.get(def, name);
    if (o) places.push([`${phase}: ${def.kind}/${name}`, JSON.stringify(o)]);
  }
  for (const pc of [PC_AWS, PC_AWS_BAD, PC_AWS_JSON]) {
    const o = await kube.get(providerConfigs.aws.type, pc);
    if (o) places.push([`${phase}: aws ProviderConfig/${pc}`, JSON.stringify(o)]);
  }
  for (const pc of [PC_AZ, PC_AZ_BAD]) {
    const o = await kube.get(providerConfigs.azure.type, pc);
    if (o) places.push([`${phase}: azure ProviderConfig/${pc}`, JSON.stringify(o)]);
  }
}

let armFake: Awaited<ReturnType<typeof startPrivateArmFake>> | undefined;

beforeAll(async () => {
  process.env.LOG_LEVEL = "debug";
  await ensureCrds();
  await ensureNamespace(kube, NS);
  const awsCreds = (secret: string) =>
    `[default]\naws_access_key_id = ${AWS_ACCESS_KEY}\naws_secret_access_key = ${secret}\n`;
  await createAwsProviderConfig(kube, PC_AWS, {
    credentials: awsCreds(secrets.get("AWS secret access key") ?? ""),
  });
  // Malformed: the secret is under a key name AWS does not know, so the credentials cannot be parsed.
  await createAwsProviderConfig(kube, PC_AWS_BAD, {
    credentials: `[default]\naws_access_key_id = ${AWS_ACCESS_KEY}\naws_secret_key = ${secrets.get("AWS secret access key of the bad ProviderConfig")}\n`,
  });
  // Malformed JSON (an unquoted value): the parse error must not quote the text around the fault.
  await createAwsProviderConfig(kube, PC_AWS_JSON, {
    credentials: `{"aws_access_key_id": "${AWS_ACCESS_KEY}", "aws_secret_access_key": ${MALFORMED_JSON_SECRET}}`,
  });
  await createAzureProviderConfig(kube, PC_AZ, { clientSecret: secrets.get("Azure client secret") ?? "" });
  // A private ARM fake that checks client secrets: the wrong one is refused at the token endpoint.
  armFake = await startPrivateArmFake({ [AZURE_CLIENT_ID]: `right-${rand()}` });
  await createAzureProviderConfig(kube, PC_AZ_BAD, {
    clientSecret: secrets.get("wrong Azure client secret") ?? "",
    armEndpoint: armFake.url,
  });
  for (const pc of [PC_AWS, PC_AWS_BAD, PC_AWS_JSON])
    await kube.patch(providerConfigs.aws.type, pc, { metadata: { labels } });
  for (const pc of [PC_AZ, PC_AZ_BAD])
    await kube.patch(providerConfigs.azure.type, pc, { metadata: { labels } });
  await kube.createSecret({
    metadata: { name: "fsec-master", namespace: NS },
    stringData: { password: secrets.get("user master password") ?? "" },
  });
});

afterAll(async () => {
  for (const [def, name] of objects) await forceDelete(kube, def, [name]);
  await coreApi(kube)
    .deleteNamespace({ name: NS })
    .catch(() => undefined);
  await armFake?.close();
  tally.report();
  expect(tally.lost).toBe(0);
});

describe("secret hygiene at LOG_LEVEL=debug", () => {
  it("no secret value reaches a log line, an Event, an object's spec or status, or a queue message", async () => {
    const mine = tally.scope("secrets#1");
    const { logger, lines } = bufferLogger("debug");
    const registry = new KindRegistry(managedKinds);
    const events = new KubeEventRecorder(kube);
    const reconciler = new Reconciler(kube, registry, { logger: contextLogger(logger), events });
    const pcs = new ProviderConfigReconciler(kube, registry, providerConfigKinds);
    const queue = new MemoryQueue({ workers: 6, onEvent: ({ level, msg, ...f }) => logger[level](f, msg) });
    queue.start(reconcileHandler({ reconcile: new Router([pcs, reconciler]).reconcile }));
    // The sink every producer sends through: recorded, then queued.
    const sink = {
      send: async (batch: readonly ReconcileMessage[], opts?: SendOptions) => {
        messages.push(...batch);
        return queue.send(batch, opts);
      },
    };
    const types: ResourceType[] = [
      ...managedKinds.map((k) => k.definition),
      ...providerConfigKinds.map((k) => k.type),
    ];
    const forwarder = new Forwarder({ kube, types, sink, logger, labelSelector: `${TEST_LABEL}=${LABEL}` });
    await forwarder.start();
    const ready = (def: ManagedKindDef, name: string) =>
      eventually(
        async () => conditionOf(await getMr(kube, def, name), "Ready")?.status === "True" || undefined,
        {
          timeoutMs: 40_000,
          what: `${def.kind}/${name} Ready`,
        },
      );
    const failing = (def: ManagedKindDef, name: string) =>
      eventually(
        async () => conditionOf(await getMr(kube, def, name), "Synced")?.status === "False" || undefined,
        {
          timeoutMs: 30_000,
          what: `${def.kind}/${name} Synced=False`,
        },
      );
    const manual = (def: ManagedKindDef, name: string) =>
      sink.send([makeMessage({ apiVersion: def.apiVersion, kind: def.kind, name }, "manual")]);
    try {
      // Create.
      await kube.create(Queue, mr(Queue, names.queue, PC_AWS, { visibilityTimeoutSeconds: 30 }));
      await kube.create(Queue, mr(Queue, names.queueBad, PC_AWS_BAD, {}));
      await kube.create(Queue, mr(Queue, names.queueJson, PC_AWS_JSON, {}));
      await kube.create(DBInstance, mr(DBInstance, names.dbGenerated, PC_AWS, db()));
      await kube.create(
        DBInstance,
        mr(
          DBInstance,
          names.dbUser,
          PC_AWS,
          db({ masterPasswordSecretRef: { namespace: NS, name: "fsec-master", key: "password" } }),
        ),
      );
      await kube.create(Container, mr(Container, names.container, PC_AZ, {}));
      // ARM checks the client secret at its token endpoint (Blob uses the account key instead).
      await kube.create(
        ResourceGroup,
        mr(ResourceGroup, names.groupBad, PC_AZ_BAD, { location: "westeurope" }, false),
      );
      await Promise.all([
        ready(Queue, names.queue),
        ready(DBInstance, names.dbGenerated),
        ready(DBInstance, names.dbUser),
        ready(Container, names.container),
        failing(Queue, names.queueBad),
        failing(Queue, names.queueJson),
        failing(ResourceGroup, names.groupBad),
      ]);
      // The forwarder forwards the (labelled) ProviderConfigs too: their checks run from the queue.
      const pcReady = async (t: ResourceType, name: string) =>
        (
          (await kube.get<KubeObject>(t, name))?.status as
            | { conditions?: Array<{ type: string; status: string }> }
            | undefined
        )?.conditions?.find((c) => c.type === "Ready")?.status;
      await eventually(
        async () =>
          ((await pcReady(providerConfigs.aws.type, PC_AWS_BAD)) === "False" &&
            (await pcReady(providerConfigs.aws.type, PC_AWS_JSON)) === "False" &&
            (await pcReady(providerConfigs.azure.type, PC_AZ_BAD)) === "False") ||
          undefined,
        { timeoutMs: 30_000, what: "the bad ProviderConfigs reported unready" },
      );
      const generated = (await connection(names.dbGenerated)).password ?? "";
      const sas = await connection(names.container);
      secrets.set("generated master password", generated);
      secrets.set("SAS token", sas.sasToken ?? "");
      secrets.set("SAS signature", new URLSearchParams(sas.sasToken ?? "").get("sig") ?? "");
      secrets.set("Azure storage account key", env("AZURITE_ACCOUNT_KEY"));
      await snapshot("created");

      // Update: spec changes, and the user's master password rotated in its Secret.
      await kube.patch(Queue, names.queue, { spec: { forProvider: { visibilityTimeoutSeconds: 45 } } });
      await kube.patch(DBInstance, names.dbGenerated, {
        spec: { forProvider: { backupRetentionPeriod: 3 } },
      });
      await kube.patch(Container, names.container, {
        spec: { forProvider: { metadata: { team: "faults" } } },
      });
      await kube.replaceSecret({
        metadata: { name: "fsec-master", namespace: NS },
        data: { password: Buffer.from(secrets.get("rotated master password") ?? "").toString("base64") },
      });
      await manual(DBInstance, names.dbUser);
      await eventually(
        async () =>
          (await connection(names.dbUser)).password === secrets.get("rotated master password") || undefined,
        { timeoutMs: 30_000, what: "the rotated password published" },
      );
      await sweep({
        kube,
        types,
        sink,
        scheduleMs: 60_000,
        defaultPollMs: 1,
        logger,
        labelSelector: `${TEST_LABEL}=${LABEL}`,
      });
      await queue.idle(2_000);
      await snapshot("updated");

      // Delete.
      for (const [def, name] of objects) await kube.delete(def, name);
      await eventually(
        async () => {
          for (const [def, name] of objects) if (await kube.get(def, name)) return undefined;
          return true;
        },
        { timeoutMs: 40_000, what: "every object deleted" },
      ).catch(() => undefined);
      await snapshot("deleting");
    } finally {
      await forwarder.stop();
      await queue.stop();
    }

    // Collect the remaining places: logs, every Event in the cluster, every queue message.
    for (const [i, l] of lines().entries()) places.push([`log line ${i + 1}`, l]);
    const allEvents = await coreApi(kube).listEventForAllNamespaces();
    for (const e of allEvents.items)
      places.push([`Event ${e.metadata?.namespace}/${e.metadata?.name}`, JSON.stringify(e)]);
    for (const [i, m] of messages.entries()) places.push([`queue message ${i + 1}`, JSON.stringify(m)]);

    const values = [...secrets.entries()].filter(([, v]) => v.length >= 8);
    const hits = scan(values, places);
    // A control: the same scan finds a value planted in a place, in each encoding.
    const [what, planted] = values[0] ?? ["", ""];
    const control = scan(
      [[what, planted]],
      [
        ["planted raw", `{"msg":"x ${planted} y"}`],
        ["planted base64", `{"data":"${Buffer.from(planted).toString("base64")}"}`],
        ["planted URL-encoded", `https://x/?sig=${encodeURIComponent(planted)}`],
      ],
    );
    mine.record(
      "control: the scanner finds a planted value (raw, base64, URL-encoded)",
      control.length === 3,
      control.join("; "),
    );
    const logLines = lines().length;
    const eventCount = allEvents.items.length;
    mine.record(
      `${values.length} secret values × ${places.length} places (${logLines} debug log lines, ${eventCount} Events, ${messages.length} queue messages, objects at 3 phases): no hit`,
      hits.length === 0 && values.length >= 10,
      hits.slice(0, 10).join("; ") || `values: ${values.map(([w]) => w).join(", ")}`,
    );
    // The access key id is an identifier, not a secret; report where it shows up, if anywhere.
    const idHits = places.filter(([, t]) => t.includes(AWS_ACCESS_KEY)).map(([w]) => w);
    if (idHits.length)
      tally.note(`the AWS access key id (not a secret) appears in: ${idHits.slice(0, 5).join(", ")}`);
    // The behaviours really ran: the bad credentials were reported, the rotation happened.
    const pcBad = await kube.get<KubeObject>(providerConfigs.aws.type, PC_AWS_BAD);
    const azBad = await kube.get<KubeObject>(providerConfigs.azure.type, PC_AZ_BAD);
    const pcJson = await kube.get<KubeObject>(providerConfigs.aws.type, PC_AWS_JSON);
    const condition = (o: KubeObject | undefined) =>
      (
        (o?.status as { conditions?: Array<{ type: string; status: string; message?: string }> } | undefined)
          ?.conditions ?? []
      ).find((c) => c.type === "Ready");
    mine.record(
      "bad AWS credentials reported without the value",
      condition(pcBad)?.status === "False",
      condition(pcBad)?.message,
    );
    mine.record(
      "malformed JSON credentials reported without any of the text",
      condition(pcJson)?.status === "False" && /malformed JSON/.test(condition(pcJson)?.message ?? ""),
      condition(pcJson)?.message,
    );
    mine.record(
      "wrong Azure client secret reported without the value",
      condition(azBad)?.status === "False",
      condition(azBad)?.message,
    );
    process.stdout.write(
      `[faults] secret hygiene: scanned ${values.length} values (raw, base64, URL-encoded) in ${places.length} places: ${logLines} log lines, ${eventCount} Events, ${messages.length} queue messages, ${places.filter(([w]) => /: (Queue|DBInstance|Container|aws|azure)/.test(w)).length} object snapshots\n`,
    );
    expect(hits).toEqual([]);
  }, 150_000);
});
