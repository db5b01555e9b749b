import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  AddTagsToResourceCommand,
  type DBInstance as CloudDBInstance,
  CreateDBInstanceCommand,
  DeleteDBInstanceCommand,
  DeleteDBSnapshotCommand,
  DescribeDBInstancesCommand,
  DescribeDBSnapshotsCommand,
  ModifyDBInstanceCommand,
  RDSClient,
} from "@aws-sdk/client-rds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DBInstance } from "../../../shared/api/aws/rds.ts";
import { Annotations, MANAGED_FINALIZER } from "../../../shared/api/meta.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { Kube, KubeError, type KubeObject } from "../../../shared/kube/client.ts";
import { coreApi } from "../../../shared/kube/core.ts";
import { KubeEventRecorder } from "../../../shared/kube/events.ts";
import { createAwsProviderConfig, ensureCrds } from "../../support/aws.ts";
import { env, kubeConfig, newKube, uniqueName } from "../../support/env.ts";
import { captureLogger, conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

/**
 * TEST WRAPPER around moto, not a fake cloud: a tiny HTTP proxy the provider reaches through the
 * ProviderConfig's endpoint (the provider still uses the real SDK; moto still does the work). moto makes
 * DB instances `available` at once and deletes them at once; for the instances a test names, the wrapper
 * replays RDS's slower lifecycle: `creating` for the first N DescribeDBInstances answers, and `deleting`
 * for N answers after DeleteDBInstance (a repeated DeleteDBInstance then gets RDS's "already being
 * deleted" error). It also records every call (tests count them) and can fail one call on request.
 */
class RdsLifecycleWrapper {
  readonly calls: Array<{ action: string; id: string | undefined; params: URLSearchParams; at: number }> = [];
  readonly #target: string;
  readonly #server: Server;
  readonly #creating = new Map<string, number>();
  readonly #deleting = new Map<string, number>();
  readonly #replayingDelete = new Set<string>();
  readonly #lastDescribe = new Map<string, string>();
  readonly #failures = new Map<string, { code: string; message: string }>();
  url = "";

  private constructor(target: string) {
    this.#target = target.replace(/\/$/, "");
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        this.#handle(req.method ?? "POST", req.url ?? "/", req.headers, Buffer.concat(chunks))
          .then(({ status, body, contentType }) => {
            res.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body) });
            res.end(body);
          })
          .catch((err: unknown) => {
            res.writeHead(502, { "content-type": "text/plain" });
            res.end(String(err));
          });
      });
    });
  }

  static async start(target: string): Promise<RdsLifecycleWrapper> {
    const w = new RdsLifecycleWrapper(target);
    await new Promise<void>((resolve) => w.#server.listen(0, "127.0.0.1", resolve));
    w.url = `http://127.0.0.1:${(w.#server.address() as AddressInfo).port}`;
    return w;
  }

  stop() {
    return new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The next `answers` DescribeDBInstances answers for `id` say `creating`. */
  simulateCreating(id: string, answers: number) {
    this.#creating.set(id, answers);
  }

  /** After DeleteDBInstance of `id`, `answers` DescribeDBInstances answers still show it, `deleting`. */
  simulateDeleting(id: string, answers: number) {
    this.#deleting.set(id, answers);
  }

  /** The next `action` on `id` fails with an RDS error (a non-retryable 400). */
  failNext(action: string, id: string, code: string, message: string) {
    this.#failures.set(`${action}/${id}`, { code, message });
  }

  callsFor(id: string, action?: string) {
    return this.calls.filter((c) => c.id === id && (!action || c.action === action));
  }

  async #handle(method: string, url: string, headers: IncomingHttpHeaders, body: Buffer) {
    const params = new URLSearchParams(body.toString("utf8"));
    const action = params.get("Action") ?? "";
    // Tag calls name the instance by ARN (arn:aws:rds:region:account:db:<id>).
    const id = (
      params.get("DBInstanceIdentifier") ?? params.get("ResourceName")?.split(":db:")[1]
    )?.toLowerCase();
    this.calls.push({ action, id, params, at: Date.now() });

    const failure = this.#failures.get(`${action}/${id}`);
    if (failure) {
      this.#failures.delete(`${action}/${id}`);
      return rdsError(failure.code, failure.message);
    }
    if (id && this.#replayingDelete.has(id)) {
      const left = this.#deleting.get(id) ?? 0;
      if (action === "DeleteDBInstance")
        return rdsError("InvalidDBInstanceState", `Instance ${id} is already being deleted.`);
      if (action === "DescribeDBInstances" && left > 0) {
        this.#deleting.set(id, left - 1);
        if (left === 1) this.#replayingDelete.delete(id);
        const last = this.#lastDescribe.get(id) ?? "";
        return { status: 200, body: withStatus(last, "deleting"), contentType: "text/xml" };
      }
    }

    const forwarded: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) {
      if (
        v === undefined ||
        ["host", "connection", "content-length", "transfer-encoding", "expect"].includes(k)
      )
        continue;
      forwarded[k] = Array.isArray(v) ? v.join(", ") : v;
    }
    const upstream = await fetch(`${this.#target}${url}`, {
      method,
      headers: forwarded,
      ...(method === "GET" || method === "HEAD" ? {} : { body }),
    });
    let text = await upstream.text();
    if (action === "DescribeDBInstances" && id && upstream.ok) {
      const left = this.#creating.get(id) ?? 0;
      if (left > 0) {
        this.#creating.set(id, left - 1);
        text = text.replace(
          "<DBInstanceStatus>available</DBInstanceStatus>",
          "<DBInstanceStatus>creating</DBInstanceStatus>",
        );
      }
      this.#lastDescribe.set(id, text);
    }
    if (action === "DeleteDBInstance" && id && upstream.ok && (this.#deleting.get(id) ?? 0) > 0) {
      this.#replayingDelete.add(id);
    }
    return {
      status: upstream.status,
      body: text,
      contentType: upstream.headers.get("content-type") ?? "text/xml",
    };
  }
}

const withStatus = (xml: string, status: string) =>
  xml.replace(
    /<DBInstanceStatus>[^<]*<\/DBInstanceStatus>/,
    `<DBInstanceStatus>${status}</DBInstanceStatus>`,
  );

function rdsError(code: string, message: string) {
  const body =
    `<ErrorResponse xmlns="http://rds.amazonaws.com/doc/2014-10-31/"><Error><Type>Sender</Type>` +
    `<Code>${code}</Code><Message>${message}</Message></Error><RequestId>wrapper</RequestId></ErrorResponse>`;
  return { status: 400, body, contentType: "text/xml" };
}

const rds = new RDSClient({
  region: "us-east-1",
  endpoint: env("AWS_ENDPOINT_URL"),
  credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
});
const kube = newKube();
const PC = uniqueName("pc-rds");
let wrapper: RdsLifecycleWrapper;

/** A small postgres instance; skipFinalSnapshot keeps moto free of snapshots unless a test wants one. */
function dbObject(
  name: string,
  forProvider: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  return {
    apiVersion: DBInstance.apiVersion,
    kind: DBInstance.kind,
    metadata: { name, ...((extra.metadata as object) ?? {}) },
    spec: {
      forProvider: {
        engine: "postgres",
        dbInstanceClass: "db.t3.micro",
        allocatedStorage: 20,
        masterUsername: "dbadmin",
        skipFinalSnapshot: true,
        ...forProvider,
      },
      providerConfigRef: { name: PC },
      writeConnectionSecretToRef: { namespace: "default", name: `${name}-conn` },
      ...((extra.spec as object) ?? {}),
    },
  };
}

const describeDb = async (id: string): Promise<CloudDBInstance | undefined> => {
  try {
    return (await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))).DBInstances?.[0];
  } catch (err) {
    if ((err as Error).name === "DBInstanceNotFoundFault") return undefined;
    throw err;
  }
};
const secretData = async (name: string) => {
  const secret = await kube.getSecret("default", name);
  return Object.fromEntries(
    Object.entries(secret?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]),
  );
};
/** Every place besides the connection Secret where a value could leak: the whole MR and its events. */
async function everythingButTheSecret(name: string, logLines: string[]) {
  const mr = await getMr(kube, DBInstance, name);
  const events = await coreApi(kube).listNamespacedEvent({ namespace: "default" });
  const mine = events.items.filter((e) => e.involvedObject.name === name);
  return { text: [JSON.stringify(mr), JSON.stringify(mine), ...logLines].join("\n"), events: mine.length };
}
/** Secrets in the namespace whose data holds `value` (base64, as stored). */
async function secretsHolding(value: string) {
  const encoded = Buffer.from(value).toString("base64");
  const list = await coreApi(kube).listNamespacedSecret({ namespace: "default" });
  return list.items.filter((s) => Object.values(s.data ?? {}).includes(encoded)).map((s) => s.metadata?.name);
}
const passwordSentOn = (id: string, action: string) =>
  wrapper
    .callsFor(id, action)
    .map((c) => c.params.get("MasterUserPassword"))
    .filter((p) => p !== null);

beforeAll(async () => {
  await ensureCrds();
  wrapper = await RdsLifecycleWrapper.start(env("AWS_ENDPOINT_URL"));
  await createAwsProviderConfig(kube, PC);
  // The provider reaches moto through the test wrapper: only the ProviderConfig's endpoint differs.
  await kube.patch(providerConfigs.aws.type, PC, { spec: { endpoint: { url: wrapper.url } } });
});

afterAll(async () => {
  await wrapper?.stop();
});

describe("RDS DBInstance against the real API server and moto", () => {
  it("creates the instance, reports Ready and Synced, and writes endpoint, port, username and password", async () => {
    const name = uniqueName("rds-create");
    const r = newReconciler(kube);
    await kube.create(DBInstance, dbObject(name, { dbName: "app", tags: { team: "a" } }));

    await settle(r, keyOf(DBInstance, name));

    const mr = await getMr(kube, DBInstance, name);
    expect(conditionOf(mr, "Ready")).toMatchObject({ status: "True", reason: "Available" });
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
    expect(mr?.metadata.annotations?.[Annotations.externalName]).toBe(name);
    expect(mr?.metadata.finalizers).toContain(MANAGED_FINALIZER);
    expect(mr?.status?.atProvider).toMatchObject({
      arn: `arn:aws:rds:us-east-1:123456789012:db:${name}`,
      status: "available",
      endpoint: `${name}.aaaaaaaaaa.us-east-1.rds.amazonaws.com`,
      port: 5432,
      resourceId: expect.any(String),
    });
    const db = await describeDb(name);
    expect(db).toMatchObject({
      Engine: "postgres",
      DBInstanceClass: "db.t3.micro",
      DBName: "app",
      MasterUsername: "dbadmin",
    });
    expect(db?.TagList).toEqual([{ Key: "team", Value: "a" }]);

    const data = await secretData(`${name}-conn`);
    expect(Object.keys(data).sort()).toEqual(["endpoint", "password", "port", "username"]);
    expect(data).toMatchObject({ endpoint: db?.Endpoint?.Address, port: "5432", username: "dbadmin" });
    // Generated: strong, and the very password RDS was given.
    expect(data.password).toMatch(/^[A-Za-z][A-Za-z0-9]{29}$/);
    expect(passwordSentOn(name, "CreateDBInstance")).toEqual([data.password]);
    const secret = await kube.getSecret("default", `${name}-conn`);
    expect(secret?.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: "DBInstance",
      name,
      uid: mr?.metadata.uid,
    });
  });

  it("keeps a generated password only in the connection Secret: never in the spec, annotations, status, events or logs", async () => {
    const name = uniqueName("rds-pwscan");
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger, events: new KubeEventRecorder(kube) });
    await kube.create(DBInstance, dbObject(name, { backupRetentionPeriod: 2 }));
    await settle(r, keyOf(DBInstance, name));
    // An update and an immutable-field error make more events and log lines to scan.
    await kube.patch(DBInstance, name, { spec: { forProvider: { backupRetentionPeriod: 4 } } });
    await settle(r, keyOf(DBInstance, name));
    await kube.patch(DBInstance, name, { spec: { forProvider: { masterUsername: "someoneelse" } } });
    await settle(r, keyOf(DBInstance, name), 1);

    const { password } = await secretData(`${name}-conn`);
    expect(password).toHaveLength(30);
    const scanned = await everythingButTheSecret(name, lines);
    expect(scanned.events).toBeGreaterThan(0);
    expect(scanned.text).not.toContain(password);
    expect(scanned.text).not.toContain(Buffer.from(password ?? "").toString("base64"));
    expect(scanned.text).not.toContain("testing-secret-value"); // the ProviderConfig's credentials
    expect(await secretsHolding(password ?? "")).toEqual([`${name}-conn`]);
  });

  it("stores a generated password before CreateDBInstance, so a crash right after the create loses nothing", async () => {
    const name = uniqueName("rds-crash");
    await kube.create(DBInstance, dbObject(name));
    // The API server refuses every write after CreateDBInstance: the state a crash at that point leaves.
    class CrashAfterCreate extends Kube {
      override async patch<T extends KubeObject>(...args: Parameters<Kube["patch"]>): Promise<T> {
        const annotations = (args[2].metadata as { annotations?: Record<string, string> } | undefined)
          ?.annotations;
        if (annotations?.[Annotations.createSucceeded]) throw new KubeError("injected crash", 503);
        return super.patch<T>(...args);
      }
    }
    const crashing = newReconciler(new CrashAfterCreate(kubeConfig()));
    const first = await crashing.reconcile(keyOf(DBInstance, name));
    expect(first.outcome).toBe("error");
    expect(crashing.externalCalls.create).toBe(1);
    const [sentToRds] = passwordSentOn(name, "CreateDBInstance");
    expect(sentToRds).toBeDefined();
    expect((await secretData(`${name}-conn`)).password).toBe(sentToRds);

    const restarted = newReconciler(kube);
    await settle(restarted, keyOf(DBInstance, name));

    expect(restarted.externalCalls.create).toBe(0);
    expect(conditionOf(await getMr(kube, DBInstance, name), "Ready")?.status).toBe("True");
    expect((await secretData(`${name}-conn`)).password).toBe(sentToRds);
    expect(passwordSentOn(name, "ModifyDBInstance")).toEqual([]);
  });

  it("retries a failed create with the same stored password", async () => {
    const name = uniqueName("rds-retry");
    wrapper.failNext("CreateDBInstance", name, "InsufficientDBInstanceCapacity", "no capacity right now");
    const r = newReconciler(kube);
    await kube.create(DBInstance, dbObject(name));

    const [failed] = await settle(r, keyOf(DBInstance, name), 1);
    expect(failed?.outcome).toBe("error");
    expect(conditionOf(await getMr(kube, DBInstance, name), "Synced")?.message).toContain(
      "no capacity right now",
    );
    await settle(r, keyOf(DBInstance, name));

    const sent = passwordSentOn(name, "CreateDBInstance");
    expect(sent).toHaveLength(2);
    expect(sent[1]).toBe(sent[0]);
    expect((await secretData(`${name}-conn`)).password).toBe(sent[0]);
    expect(conditionOf(await getMr(kube, DBInstance, name), "Ready")?.status).toBe("True");
  });

  it("uses the password from masterPasswordSecretRef and rotates it when that Secret changes", async () => {
    const name = uniqueName("rds-userpw");
    const pwSecret = `${name}-master`;
    await kube.createSecret({
      metadata: { name: pwSecret, namespace: "default" },
      stringData: { pw: "Initial-Passw0rd" },
    });
    const { lines, logger } = captureLogger();
    const events = new KubeEventRecorder(kube);
    const r = newReconciler(kube, { logger, events });
    await kube.create(
      DBInstance,
      dbObject(name, { masterPasswordSecretRef: { namespace: "default", name: pwSecret, key: "pw" } }),
    );

    await settle(r, keyOf(DBInstance, name));
    expect(passwordSentOn(name, "CreateDBInstance")).toEqual(["Initial-Passw0rd"]);
    expect((await secretData(`${name}-conn`)).password).toBe("Initial-Passw0rd");
    expect(conditionOf(await getMr(kube, DBInstance, name), "Ready")?.status).toBe("True");

    await kube.replaceSecret({
      metadata: { name: pwSecret, namespace: "default" },
      data: { pw: Buffer.from("Rotated-Passw0rd").toString("base64") },
    });
    // A fresh worker (no cached Secret reads), as the next Lambda container would be.
    const r2 = newReconciler(kube, { logger, events });
    const results = await settle(r2, keyOf(DBInstance, name));

    expect(results.map((x) => x.outcome)).toContain("updated");
    expect(passwordSentOn(name, "ModifyDBInstance")).toEqual(["Rotated-Passw0rd"]);
    expect(wrapper.callsFor(name, "ModifyDBInstance")[0]?.params.get("ApplyImmediately")).toBe("false");
    expect((await secretData(`${name}-conn`)).password).toBe("Rotated-Passw0rd");
    const mr = await getMr(kube, DBInstance, name);
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True" });

    // Neither worker sets it again, though their cached Secret reads lag behind.
    await r2.reconcile(keyOf(DBInstance, name));
    await r.reconcile(keyOf(DBInstance, name));
    expect(wrapper.callsFor(name, "ModifyDBInstance")).toHaveLength(1);
    const scanned = await everythingButTheSecret(name, lines);
    for (const pw of ["Initial-Passw0rd", "Rotated-Passw0rd"]) expect(scanned.text).not.toContain(pw);
  });

  it("reports a missing masterPasswordSecretRef Secret clearly, without blaming the ProviderConfig", async () => {
    const name = uniqueName("rds-nopw");
    const r = newReconciler(kube);
    await kube.create(
      DBInstance,
      dbObject(name, {
        masterPasswordSecretRef: { namespace: "default", name: `${name}-absent`, key: "pw" },
      }),
    );
    const [res] = await settle(r, keyOf(DBInstance, name), 1);

    expect(res?.outcome).toBe("error");
    const message = conditionOf(await getMr(kube, DBInstance, name), "Synced")?.message ?? "";
    expect(message).toContain(`Secret default/${name}-absent`);
    expect(message).toContain("masterPasswordSecretRef");
    expect(message).not.toContain("ProviderConfig");
    expect(await describeDb(name)).toBeUndefined();
  });

  it("refuses to generate a password that could be kept nowhere (no connection Secret)", async () => {
    const name = uniqueName("rds-nowhere");
    const r = newReconciler(kube);
    await kube.create(DBInstance, {
      ...dbObject(name),
      spec: { ...dbObject(name).spec, writeConnectionSecretToRef: undefined },
    });
    const [res] = await settle(r, keyOf(DBInstance, name), 1);

    expect(res?.outcome).toBe("error");
    expect(conditionOf(await getMr(kube, DBInstance, name), "Synced")?.message).toContain(
      "set spec.writeConnectionSecretToRef",
    );
    expect(wrapper.callsFor(name, "CreateDBInstance")).toHaveLength(0);
    expect(await describeDb(name)).toBeUndefined();
  });

  it("reports Creating (Ready=False) while RDS says creating, then Available", async () => {
    const name = uniqueName("rds-creating");
    wrapper.simulateCreating(name, 3);
    const r = newReconciler(kube);
    await kube.create(DBInstance, dbObject(name));

    await r.reconcile(keyOf(DBInstance, name)); // create
    const second = await r.reconcile(keyOf(DBInstance, name));
    expect(second.outcome).toBe("in-sync");
    expect(second.requeueAfterMs).toBeGreaterThan(0); // Creating is looked at again soon
    let mr = await getMr(kube, DBInstance, name);
    expect(conditionOf(mr, "Ready")).toMatchObject({ status: "False", reason: "Creating" });
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True" });
    expect(mr?.status?.atProvider?.status).toBe("creating");
    expect((await secretData(`${name}-conn`)).password).toBeDefined();

    await settle(r, keyOf(DBInstance, name));
    mr = await getMr(kube, DBInstance, name);
    expect(conditionOf(mr, "Ready")).toMatchObject({ status: "True", reason: "Available" });
    expect(mr?.status?.atProvider?.status).toBe("available");
    expect(wrapper.callsFor(name, "CreateDBInstance")).toHaveLength(1);
  });

  it("makes zero API-server writes and one cloud read when the resource is in sync", async () => {
    const name = uniqueName("rds-insync");
    const r = newReconciler(kube);
    await kube.create(DBInstance, dbObject(name, { tags: { a: "b" } }));
    await settle(r, keyOf(DBInstance, name));

    const counted = new Kube(kubeConfig());
    const r2 = newReconciler(counted);
    await r2.reconcile(keyOf(DBInstance, name)); // warms the ProviderConfig/credentials cache
    counted.resetStats();
    const before = wrapper.calls.length;
    const res = await r2.reconcile(keyOf(DBInstance, name));

    expect(res.outcome).toBe("in-sync");
    expect(counted.stats.writes).toBe(0);
    // The object, and its connection Secret: read every time, so one deleted by hand is repaired.
    expect(counted.stats.gets).toBe(2);
    expect(wrapper.calls.slice(before).map((c) => c.action)).toEqual(["DescribeDBInstances"]);
    expect(r2.externalCalls).toMatchObject({ create: 0, update: 0, delete: 0 });
  });

  it("applies a spec change with ModifyDBInstance (ApplyImmediately per spec) and tag calls", async () => {
    const name = uniqueName("rds-update");
    const r = newReconciler(kube);
    await kube.create(DBInstance, dbObject(name, { tags: { team: "a", old: "x" } }));
    await settle(r, keyOf(DBInstance, name));

    await kube.patch(DBInstance, name, {
      spec: {
        forProvider: {
          dbInstanceClass: "db.t3.small",
          allocatedStorage: 40,
          engineVersion: "9.4.1",
          backupRetentionPeriod: 7,
          preferredBackupWindow: "03:00-03:30",
          preferredMaintenanceWindow: "Sun:05:00-Sun:05:30",
          applyImmediately: true,
          tags: { team: "b", env: "dev", old: null },
        },
      },
    });
    const results = await settle(r, keyOf(DBInstance, name));

    expect(results.map((x) => x.outcome)).toContain("updated");
    const db = await describeDb(name);
    expect(db).toMatchObject({
      DBInstanceClass: "db.t3.small",
      AllocatedStorage: 40,
      EngineVersion: "9.4.1",
      BackupRetentionPeriod: 7,
      PreferredBackupWindow: "03:00-03:30",
      PreferredMaintenanceWindow: "sun:05:00-sun:05:30",
    });
    expect(Object.fromEntries((db?.TagList ?? []).map((t) => [t.Key, t.Value]))).toEqual({
      team: "b",
      env: "dev",
    });
    const [modify] = wrapper.callsFor(name, "ModifyDBInstance");
    expect(modify?.params.get("ApplyImmediately")).toBe("true");
    expect(modify?.params.get("AllowMajorVersionUpgrade")).toBe("true");
    expect(modify?.params.get("MasterUserPassword")).toBeNull();
    expect(wrapper.callsFor(name, "RemoveTagsFromResource")).toHaveLength(1);
    expect(wrapper.callsFor(name, "AddTagsToResource")).toHaveLength(1);
    expect(r.externalCalls.update).toBe(1);
    // The RDS-lowercased window is not drift against the user's capitalisation: nothing more to do.
    expect((await r.reconcile(keyOf(DBInstance, name))).outcome).toBe("in-sync");
  });

  it("corrects an out-of-band change in the cloud on the next reconcile", async () => {
    const name = uniqueName("rds-drift");
    const r = newReconciler(kube);
    await kube.create(DBInstance, dbObject(name, { backupRetentionPeriod: 5, tags: { owner: "me" } }));
    await settle(r, keyOf(DBInstance, name));
    const arn = (await describeDb(name))?.DBInstanceArn;

    await rds.send(
      new ModifyDBInstanceCommand({
        DBInstanceIdentifier: name,
        BackupRetentionPeriod: 12,
        DBInstanceClass: "db.m5.large",
      }),
    );
    await rds.send(
      new AddTagsToResourceCommand({ ResourceName: arn, Tags: [{ Key: "intruder", Value: "1" }] }),
    );
    await settle(r, keyOf(DBInstance, name));

    const db = await describeDb(name);
    expect(db).toMatchObject({ BackupRetentionPeriod: 5, DBInstanceClass: "db.t3.micro" });
    expect(db?.TagList).toEqual([{ Key: "owner", Value: "me" }]);
  });

  it("late-initializes cloud defaults into the spec and never overwrites a user value", async () => {
    const name = uniqueName("rds-lateinit");
    const r = newReconciler(kube);
    await kube.create(DBInstance, dbObject(name, { backupRetentionPeriod: 3 }));
    await settle(r, keyOf(DBInstance, name));

    const mr = await getMr<Record<string, unknown>>(kube, DBInstance, name);
    expect(mr?.spec.forProvider).toMatchObject({
      backupRetentionPeriod: 3,
      preferredMaintenanceWindow: "wed:06:38-wed:07:08",
      preferredBackupWindow: "13:14-13:44",
      port: 5432,
      storageType: "gp2",
      region: "us-east-1",
    });
    // AWS upgrades minor versions by itself: the version it picked never becomes the spec's.
    expect(mr?.spec.forProvider).not.toHaveProperty("engineVersion");
    expect(mr?.spec.forProvider).not.toHaveProperty("masterPasswordSecretRef");
    expect(mr?.spec.forProvider).not.toHaveProperty("password");
  });

  it("reports an immutable field change in Synced and leaves the cloud untouched", async () => {
    const name = uniqueName("rds-immutable");
    const r = newReconciler(kube);
    await kube.create(DBInstance, dbObject(name, { dbName: "app" }));
    await settle(r, keyOf(DBInstance, name));

    await kube.patch(DBInstance, name, {
      spec: { forProvider: { engine: "mysql", masterUsername: "root2", backupRetentionPeriod: 9 } },
    });
    const [res] = await settle(r, keyOf(DBInstance, name), 1);

    expect(res?.outcome).toBe("error");
    const mr = await getMr(kube, DBInstance, name);
    const synced = conditionOf(mr, "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain(
      'cannot update immutable field(s) engine (spec: "mysql", cloud: "postgres")',
    );
    expect(synced?.message).toContain("masterUsername");
    expect(synced?.message).toContain("left unchanged");
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    expect(await describeDb(name)).toMatchObject({
      Engine: "postgres",
      MasterUsername: "dbadmin",
      BackupRetentionPeriod: 1,
    });
    expect(wrapper.callsFor(name, "ModifyDBInstance")).toHaveLength(0);
    expect(wrapper.callsFor(name, "CreateDBInstance")).toHaveLength(1); // never recreated
    expect(r.externalCalls.update).toBe(0);
  });

  it("makes no cloud calls at all while paused", async () => {
    const name = uniqueName("rds-paused");
    const r = newReconciler(kube);
    await kube.create(
      DBInstance,
      dbObject(name, {}, { metadata: { annotations: { [Annotations.paused]: "true" } } }),
    );

    const res = await r.reconcile(keyOf(DBInstance, name));

    expect(res.outcome).toBe("paused");
    expect(r.externalCalls).toEqual({ observe: 0, create: 0, update: 0, delete: 0 });
    expect(wrapper.callsFor(name)).toHaveLength(0);
    expect(conditionOf(await getMr(kube, DBInstance, name), "Synced")).toMatchObject({
      status: "False",
      reason: "ReconcilePaused",
    });
    expect(await describeDb(name)).toBeUndefined();
  });

  it("imports an existing instance observe-only: fills the spec ([Observe, LateInitialize]), never modifies or deletes it", async () => {
    const cloudName = uniqueName("rds-import-cloud");
    await rds.send(
      new CreateDBInstanceCommand({
        DBInstanceIdentifier: cloudName,
        Engine: "mysql",
        DBInstanceClass: "db.t3.micro",
        AllocatedStorage: 30,
        MasterUsername: "legacy",
        MasterUserPassword: "Legacy-Passw0rd",
        BackupRetentionPeriod: 6,
      }),
    );
    const name = uniqueName("rds-import");
    const r = newReconciler(kube);
    await kube.create(DBInstance, {
      apiVersion: DBInstance.apiVersion,
      kind: DBInstance.kind,
      metadata: { name, annotations: { [Annotations.externalName]: cloudName } },
      spec: {
        forProvider: { engine: "mysql", dbInstanceClass: "db.t3.micro" },
        managementPolicies: ["Observe", "LateInitialize"],
        providerConfigRef: { name: PC },
        writeConnectionSecretToRef: { namespace: "default", name: `${name}-conn` },
      },
    });

    await settle(r, keyOf(DBInstance, name));
    const mr = await getMr<Record<string, unknown>>(kube, DBInstance, name);
    expect(mr?.spec.forProvider).toMatchObject({
      masterUsername: "legacy",
      backupRetentionPeriod: 6,
      port: 3306,
    });
    // Values AWS changes by itself (minor upgrades, storage autoscaling) are shown in the cloud, not pinned in spec.
    expect(mr?.spec.forProvider).not.toHaveProperty("engineVersion");
    expect(mr?.spec.forProvider).not.toHaveProperty("allocatedStorage");
    expect(mr?.status?.atProvider).toMatchObject({ engineVersion: "5.6.21", allocatedStorage: 30 });
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    const data = await secretData(`${name}-conn`);
    expect(data).toMatchObject({ username: "legacy", port: "3306" });
    expect(data.password).toBeUndefined(); // unknown to driftless, and never reset by an import

    await kube.patch(DBInstance, name, { spec: { forProvider: { backupRetentionPeriod: 1 } } });
    await settle(r, keyOf(DBInstance, name));
    expect((await describeDb(cloudName))?.BackupRetentionPeriod).toBe(6);

    await kube.delete(DBInstance, name);
    await settle(r, keyOf(DBInstance, name));
    expect(await getMr(kube, DBInstance, name)).toBeUndefined();
    expect(await describeDb(cloudName)).toBeDefined();
    expect(r.externalCalls).toMatchObject({ create: 0, update: 0, delete: 0 });
    expect(new Set(wrapper.callsFor(cloudName).map((c) => c.action))).toEqual(
      new Set(["DescribeDBInstances"]),
    );
    await rds.send(new DeleteDBInstanceCommand({ DBInstanceIdentifier: cloudName, SkipFinalSnapshot: true }));
  });

  it("names the cloud resource after the external-name annotation", async () => {
    const name = uniqueName("rds-extname");
    const cloudName = uniqueName("rds-cloud-name");
    const r = newReconciler(kube);
    await kube.create(
      DBInstance,
      dbObject(name, {}, { metadata: { annotations: { [Annotations.externalName]: cloudName } } }),
    );
    await settle(r, keyOf(DBInstance, name));
    expect(await describeDb(cloudName)).toBeDefined();
    expect(await describeDb(name)).toBeUndefined();
    expect((await secretData(`${name}-conn`)).endpoint).toBe(
      `${cloudName}.aaaaaaaaaa.us-east-1.rds.amazonaws.com`,
    );
  });

  it("deletes the instance (Ready=False Deleting until it is gone), then removes the finalizer", async () => {
    const name = uniqueName("rds-delete");
    const r = newReconciler(kube);
    await kube.create(DBInstance, dbObject(name));
    await settle(r, keyOf(DBInstance, name));
    expect(await kube.getSecret("default", `${name}-conn`)).toBeDefined();
    wrapper.simulateDeleting(name, 2);

    await kube.delete(DBInstance, name);
    expect((await r.reconcile(keyOf(DBInstance, name))).outcome).toBe("deleting");
    expect((await r.reconcile(keyOf(DBInstance, name))).outcome).toBe("deleting"); // RDS still says deleting
    const mid = await getMr(kube, DBInstance, name);
    expect(mid?.metadata.finalizers).toContain(MANAGED_FINALIZER);
    expect(conditionOf(mid, "Ready")).toMatchObject({ status: "False", reason: "Deleting" });
    expect(conditionOf(mid, "Synced")).toMatchObject({ status: "True" }); // "already being deleted" is no error
    const results = await settle(r, keyOf(DBInstance, name));

    expect(results.at(-1)?.outcome).toBe("deleted");
    expect(await describeDb(name)).toBeUndefined();
    expect(await getMr(kube, DBInstance, name)).toBeUndefined();
    expect(await kube.getSecret("default", `${name}-conn`)).toBeUndefined();
    expect(wrapper.callsFor(name, "DeleteDBInstance")[0]?.params.get("SkipFinalSnapshot")).toBe("true");
  });

  it("takes a final snapshot on delete unless skipFinalSnapshot is true", async () => {
    const name = uniqueName("rds-snapshot");
    const r = newReconciler(kube);
    await kube.create(DBInstance, dbObject(name, { skipFinalSnapshot: false }));
    await settle(r, keyOf(DBInstance, name));
    const uid = (await getMr(kube, DBInstance, name))?.metadata.uid ?? "";

    await kube.delete(DBInstance, name);
    await settle(r, keyOf(DBInstance, name));

    expect(await getMr(kube, DBInstance, name)).toBeUndefined();
    expect(await describeDb(name)).toBeUndefined();
    const snapshotId = `${name}-final-${uid.replace(/-/g, "").slice(0, 8)}`;
    const snapshots = (await rds.send(new DescribeDBSnapshotsCommand({ DBSnapshotIdentifier: snapshotId })))
      .DBSnapshots;
    expect(snapshots).toHaveLength(1);
    expect(snapshots?.[0]).toMatchObject({ DBInstanceIdentifier: name, SnapshotType: "manual" });

    // An explicit name is used as given.
    const named = uniqueName("rds-snapnamed");
    await kube.create(
      DBInstance,
      dbObject(named, { skipFinalSnapshot: false, finalDBSnapshotIdentifier: `${named}-last` }),
    );
    await settle(r, keyOf(DBInstance, named));
    await kube.delete(DBInstance, named);
    await settle(r, keyOf(DBInstance, named));
    const last = (await rds.send(new DescribeDBSnapshotsCommand({ DBSnapshotIdentifier: `${named}-last` })))
      .DBSnapshots;
    expect(last?.[0]?.DBInstanceIdentifier).toBe(named);

    for (const id of [snapshotId, `${named}-last`])
      await rds.send(new DeleteDBSnapshotCommand({ DBSnapshotIdentifier: id }));
  });

  it("keeps the cloud resource with deletionPolicy Orphan", async () => {
    const name = uniqueName("rds-orphan");
    const r = newReconciler(kube);
    await kube.create(DBInstance, dbObject(name, {}, { spec: { deletionPolicy: "Orphan" } }));
    await settle(r, keyOf(DBInstance, name));

    await kube.delete(DBInstance, name);
    const results = await settle(r, keyOf(DBInstance, name));

    expect(results.at(-1)?.outcome).toBe("orphaned");
    expect(await getMr(kube, DBInstance, name)).toBeUndefined();
    expect(await describeDb(name)).toBeDefined();
    expect(wrapper.callsFor(name, "DeleteDBInstance")).toHaveLength(0);
    await rds.send(new DeleteDBInstanceCommand({ DBInstanceIdentifier: name, SkipFinalSnapshot: true }));
  });

  it("calls CreateDBInstance exactly once for 20 concurrent reconciles, with the password the Secret holds", async () => {
    const name = uniqueName("rds-concurrent");
    await kube.create(DBInstance, dbObject(name));
    const workers = Array.from({ length: 20 }, () => newReconciler(new Kube(kubeConfig())));

    await Promise.all(workers.map((w) => w.reconcile(keyOf(DBInstance, name))));
    await Promise.all(workers.map((w) => settle(w, keyOf(DBInstance, name))));

    expect(workers.reduce((n, w) => n + w.externalCalls.create, 0)).toBe(1);
    expect(conditionOf(await getMr(kube, DBInstance, name), "Ready")?.status).toBe("True");
    expect((await secretData(`${name}-conn`)).password).toBe(passwordSentOn(name, "CreateDBInstance")[0]);
  });

  it("names the ProviderConfig when it is missing or its credentials are bad", async () => {
    const missing = uniqueName("rds-nopc");
    const r = newReconciler(kube);
    await kube.create(
      DBInstance,
      dbObject(missing, {}, { spec: { providerConfigRef: { name: "does-not-exist" } } }),
    );
    await settle(r, keyOf(DBInstance, missing), 1);
    const m1 = conditionOf(await getMr(kube, DBInstance, missing), "Synced")?.message;
    expect(m1).toContain('ProviderConfig "does-not-exist"');
    expect(m1).toContain("not found");

    const badPc = uniqueName("pc-rds-bad");
    await createAwsProviderConfig(kube, badPc, { credentials: "[default]\naws_access_key_id = only-half\n" });
    const bad = uniqueName("rds-badcreds");
    await kube.create(DBInstance, dbObject(bad, {}, { spec: { providerConfigRef: { name: badPc } } }));
    await settle(r, keyOf(DBInstance, bad), 1);
    const m2 = conditionOf(await getMr(kube, DBInstance, bad), "Synced")?.message;
    expect(m2).toContain(`ProviderConfig "${badPc}"`);
    expect(m2).toContain("aws_secret_access_key");
    expect(m2).not.toContain("only-half");
    expect(await describeDb(bad)).toBeUndefined();
    expect(await describeDb(missing)).toBeUndefined();
  });

  it("rejects a spec without the required engine at the API server", async () => {
    const name = uniqueName("rds-invalid");
    const obj = dbObject(name);
    const { engine: _engine, ...withoutEngine } = obj.spec.forProvider;
    const err = await kube
      .create(DBInstance, { ...obj, spec: { ...obj.spec, forProvider: withoutEngine } })
      .catch((e) => e);
    expect(err).toBeInstanceOf(KubeError);
    expect((err as KubeError).status).toBe(422);
    expect((err as Error).message).toContain("spec.forProvider.engine");
  });
});
