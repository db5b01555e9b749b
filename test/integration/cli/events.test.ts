// Kubernetes Events on managed resources, written by the engine through KubeEventRecorder against the
// real API server: create, update, delete and error each leave an Event; a repeated error is one Event
// with a growing count; no Event carries a secret. `driftless describe` shows them (and Secret keys only).
import { beforeAll, describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { CHANGE_LOG_REASON, type ChangeRecord, parseChangeRecord } from "../../../shared/api/change-log.ts";
import { KubeEventRecorder } from "../../../shared/kube/events.ts";
import { type EventSummary, eventsFor } from "../../../shared/ops/inspect.ts";
import { createAwsProviderConfig, ensureCrds } from "../../support/aws.ts";
import { eventually, newKube, uniqueName } from "../../support/env.ts";
import { captureLogger, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { cli } from "./helpers.ts";

const kube = newKube();
const PC = uniqueName("pc-cli-events");
const BAD_PC = uniqueName("pc-cli-events-bad");
const SECRET_TEXT = "not-an-ini-file-secret-9f3b";

const queue = (name: string, forProvider: Record<string, unknown>, pc = PC) => ({
  apiVersion: Queue.apiVersion,
  kind: Queue.kind,
  metadata: { name },
  spec: {
    forProvider,
    providerConfigRef: { name: pc },
    writeConnectionSecretToRef: { namespace: "default", name: `${name}-conn` },
  },
});

const eventsOf = async (name: string): Promise<EventSummary[]> => {
  const mr = await getMr(kube, Queue, name);
  return eventsFor(kube, mr?.metadata.uid ?? "none");
};

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
  await createAwsProviderConfig(kube, BAD_PC, { credentials: SECRET_TEXT });
});

describe("Events on managed resources (engine + KubeEventRecorder, real API server)", {
  timeout: 180_000,
}, () => {
  it("records create, update, a repeated error once with a count, and delete", async () => {
    // Prepare
    const name = uniqueName("cli-ev-q");
    const r = newReconciler(kube, { events: new KubeEventRecorder(kube) });
    await kube.create(Queue, queue(name, { visibilityTimeoutSeconds: 30 }));

    // Act: create
    await settle(r, keyOf(Queue, name));
    // Act: update
    await kube.patch(Queue, name, { spec: { forProvider: { visibilityTimeoutSeconds: 60 } } });
    await settle(r, keyOf(Queue, name));
    // Act: the same error three times (fifoQueue is immutable)
    await kube.patch(Queue, name, { spec: { forProvider: { fifoQueue: true } } });
    for (let i = 0; i < 3; i++) await r.reconcile(keyOf(Queue, name));
    const uid = (await getMr(kube, Queue, name))?.metadata.uid ?? "";
    // Act: delete
    await kube.patch(Queue, name, { spec: { forProvider: { fifoQueue: false } } });
    await kube.delete(Queue, name);
    await settle(r, keyOf(Queue, name));

    // Assess
    const events = await eventually(
      async () => {
        const list = await eventsFor(kube, uid);
        return list.some((e) => e.reason === "DeletedExternalResource") ? list : undefined;
      },
      { what: "DeletedExternalResource event" },
    );
    const by = (reason: string) => events.filter((e) => e.reason === reason);
    expect(by("CreatedExternalResource")).toEqual([
      expect.objectContaining({ type: "Normal", count: 1, source: "driftless" }),
    ]);
    expect(by("CreatedExternalResource")[0]?.message).toContain(name);
    expect(by("UpdatedExternalResource")[0]).toMatchObject({ type: "Normal" });
    expect(by("UpdatedExternalResource")[0]?.message).toContain("visibilityTimeoutSeconds");
    const errors = by("CannotUpdateExternalResource");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ type: "Warning", count: 3 });
    expect(errors[0]?.message).toContain("cannot update immutable field(s) fifoQueue");
    expect(by("DeletedExternalResource")).toHaveLength(1);
  });

  it("names the ProviderConfig in a credentials error and never carries the Secret's content", async () => {
    // Prepare
    const name = uniqueName("cli-ev-bad");
    const r = newReconciler(kube, { events: new KubeEventRecorder(kube) });
    await kube.create(Queue, queue(name, {}, BAD_PC));

    // Act
    await r.reconcile(keyOf(Queue, name));
    await r.reconcile(keyOf(Queue, name));

    // Assess
    const events = await eventually(async () => {
      const list = await eventsOf(name);
      return list.length > 0 ? list : undefined;
    });
    expect(events).toHaveLength(1);
    // Bad credentials now show on connect: the client's home asks STS who they are before any read (issue 36).
    expect(events[0]).toMatchObject({ type: "Warning", reason: "CannotConnectToProvider", count: 2 });
    expect(events[0]?.message).toContain(`ProviderConfig "${BAD_PC}"`);
    expect(JSON.stringify(events)).not.toContain(SECRET_TEXT);
  });

  it("driftless describe lists the Events and the connection Secret's keys, never its values", async () => {
    // Prepare: a Ready queue, plus a key with a secret-looking value in its connection Secret
    const name = uniqueName("cli-ev-desc");
    const r = newReconciler(kube, { events: new KubeEventRecorder(kube) });
    await kube.create(Queue, queue(name, {}));
    await settle(r, keyOf(Queue, name));
    await settle(r, keyOf(Queue, name));
    const secret = await kube.getSecret("default", `${name}-conn`);
    expect(secret).toBeTruthy();
    const value = "s3cr3t-connection-value-71d2";
    await kube.replaceSecret({
      ...secret,
      data: { ...secret?.data, token: Buffer.from(value).toString("base64") },
    });

    // Act
    const text = await cli(["describe", `queue/${name}`]);
    const json = await cli(["describe", `queue.sqs.aws/${name}`, "-o", "json"]);

    // Assess
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Conditions:$/m);
    expect(text.stdout).toMatch(/Ready\s+True\s+Available/);
    expect(text.stdout).toMatch(/Synced\s+True\s+ReconcileSuccess/);
    expect(text.stdout).toContain(`Name: default/${name}-conn`);
    expect(text.stdout).toContain("Keys: arn, token, url (values are never shown)");
    expect(text.stdout).toMatch(/Normal\s+CreatedExternalResource/);
    expect(text.stdout).toContain(`External name:        ${name}`);
    for (const out of [text.stdout, json.stdout]) {
      expect(out).not.toContain(value);
      expect(out).not.toContain(Buffer.from(value).toString("base64"));
    }
    const d = JSON.parse(json.stdout) as { connectionSecret: { keys: string[] }; events: EventSummary[] };
    expect(d.connectionSecret.keys).toEqual(["arn", "token", "url"]);
    expect(d.events.map((e) => e.reason)).toContain("CreatedExternalResource");
  });

  it("keeps a change log: each create, update and delete with the cloud's request id; describe shows the records", async () => {
    // Prepare
    const name = uniqueName("cli-ev-log");
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { events: new KubeEventRecorder(kube), logger });
    await kube.create(Queue, queue(name, { visibilityTimeoutSeconds: 30 }));

    // Act: create, update
    await settle(r, keyOf(Queue, name));
    await kube.patch(Queue, name, { spec: { forProvider: { visibilityTimeoutSeconds: 60 } } });
    await settle(r, keyOf(Queue, name));
    const text = await cli(["describe", `queue/${name}`]);
    const json = await cli(["describe", `queue/${name}`, "-o", "json"]);

    // Assess: one log line and one record per change, each with moto's request id (x-amzn-RequestId)
    const logged = lines
      .map((l) => JSON.parse(l) as { changeLog?: boolean; verb?: string; requestIds?: string[] })
      .filter((l) => l.changeLog);
    expect(logged.map((l) => l.verb)).toEqual(["create", "update"]);
    for (const l of logged) expect(l.requestIds?.length ?? 0).toBeGreaterThan(0);
    const d = JSON.parse(json.stdout) as { changeLog: ChangeRecord[]; events: EventSummary[] };
    expect(d.changeLog.map((c) => c.verb)).toEqual(["create", "update"]);
    expect(d.changeLog[0]).toMatchObject({ trigger: "not found in the cloud", externalName: name });
    expect(d.changeLog[0]?.requestIds).toEqual(logged[0]?.requestIds);
    expect(d.changeLog[1]).toMatchObject({
      trigger: "spec change",
      changes: [{ field: "visibilityTimeoutSeconds", before: 30, after: 60 }],
    });
    expect(text.stdout).toMatch(/^Change log:$/m);
    expect(text.stdout).toMatch(/update\s+spec change\s+\S+\s+\S+\s+visibilityTimeoutSeconds: 30 → 60/);
    expect(text.stdout).toContain(logged[1]?.requestIds?.[0] ?? "no request id");

    // Act: delete; the record outlives the object (as long as the API server keeps Events)
    const uid = (await getMr(kube, Queue, name))?.metadata.uid ?? "";
    await kube.delete(Queue, name);
    await settle(r, keyOf(Queue, name));
    const records = await eventually(async () => {
      const list = (await eventsFor(kube, uid)).filter((e) => e.reason === CHANGE_LOG_REASON);
      return list.length === 3 ? list : undefined;
    });
    const verbs = records
      .map((e) => parseChangeRecord(e.message))
      .sort((a, b) => (a?.at ?? "").localeCompare(b?.at ?? ""));
    expect(verbs.map((c) => c?.verb)).toEqual(["create", "update", "delete"]);
  });
});
