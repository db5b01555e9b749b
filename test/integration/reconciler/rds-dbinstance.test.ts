import {
  AddTagsToResourceCommand,
  type DBInstance as CloudDBInstance,
  CreateDBInstanceCommand,
  CreateDBParameterGroupCommand,
  DeleteDBInstanceCommand,
  DeleteDBSnapshotCommand,
  DescribeDBInstancesCommand,
  DescribeDBSnapshotsCommand,
  ModifyDBInstanceCommand,
  RDSClient,
} from "@aws-sdk/client-rds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DBInstance } from "../../../shared/api/aws/rds.ts";
import { MANAGED_FINALIZER } from "../../../shared/api/meta.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { coreApi } from "../../../shared/kube/core.ts";
import { KubeEventRecorder } from "../../../shared/kube/events.ts";
import { createAwsProviderConfig, motoOptions } from "../../support/aws.ts";
import {
  CrashBeforeSucceeded,
  connectionData,
  describeManagedKind,
  expectAvailable,
  expectSecretOwnedBy,
  type MrOptions,
  managedObject,
  useProviderConfig,
} from "../../support/conformance.ts";
import { defaultTags } from "../../support/default-tags.ts";
import { env, kubeConfig, newKube, uniqueName } from "../../support/env.ts";
import { MotoProxy, type ProxiedResponse, queryError } from "../../support/moto-proxy.ts";
import { captureLogger, conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

/** The DB instance a call names; tag calls name it by ARN (arn:aws:rds:region:account:db:<id>). */
const instanceOf = (params: URLSearchParams) =>
  (params.get("DBInstanceIdentifier") ?? params.get("ResourceName")?.split(":db:")[1])?.toLowerCase();

/**
 * RDS's slower lifecycle, replayed on the moto proxy (which records every call; tests count them). moto
 * makes DB instances `available` at once and deletes them at once; for the instances a test names, this
 * replays `creating` for the first N DescribeDBInstances answers, and `deleting` for N answers after
 * DeleteDBInstance (a repeated DeleteDBInstance then gets RDS's "already being deleted" error). It can
 * also fail one call on request.
 */
class RdsLifecycle {
  readonly #creating = new Map<string, number>();
  readonly #deleting = new Map<string, number>();
  readonly #replayingDelete = new Set<string>();
  readonly #lastDescribe = new Map<string, string>();
  readonly #failures = new Map<string, { code: string; message: string }>();
  proxy!: MotoProxy;

  static async start(target: string): Promise<RdsLifecycle> {
    const l = new RdsLifecycle();
    l.proxy = await MotoProxy.start(target, {
      answer: (action, params) => l.#answer(action, instanceOf(params)),
      rewrite: (action, params, res) => l.#rewrite(action, instanceOf(params), res),
    });
    return l;
  }

  get url() {
    return this.proxy.url;
  }
  get calls() {
    return this.proxy.calls;
  }
  stop() {
    return this.proxy.stop();
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
    return this.proxy.calls.filter((c) => instanceOf(c.params) === id && (!action || c.action === action));
  }

  #answer(action: string, id: string | undefined): ProxiedResponse | undefined {
    const failure = this.#failures.get(`${action}/${id}`);
    if (failure) {
      this.#failures.delete(`${action}/${id}`);
      return rdsError(failure.code, failure.message);
    }
    if (!id || !this.#replayingDelete.has(id)) return undefined;
    const left = this.#deleting.get(id) ?? 0;
    if (action === "DeleteDBInstance")
      return rdsError("InvalidDBInstanceState", `Instance ${id} is already being deleted.`);
    if (action === "DescribeDBInstances" && left > 0) {
      this.#deleting.set(id, left - 1);
      if (left === 1) this.#replayingDelete.delete(id);
      const last = this.#lastDescribe.get(id) ?? "";
      return { status: 200, body: withStatus(last, "deleting"), contentType: "text/xml" };
    }
    return undefined;
  }

  #rewrite(action: string, id: string | undefined, res: ProxiedResponse): ProxiedResponse {
    const ok = res.status >= 200 && res.status < 300;
    if (!id || !ok) return res;
    let body = res.body;
    if (action === "DescribeDBInstances") {
      const left = this.#creating.get(id) ?? 0;
      if (left > 0) {
        this.#creating.set(id, left - 1);
        body = body.replace(
          "<DBInstanceStatus>available</DBInstanceStatus>",
          "<DBInstanceStatus>creating</DBInstanceStatus>",
        );
      }
      this.#lastDescribe.set(id, body);
    }
    if (action === "DeleteDBInstance" && (this.#deleting.get(id) ?? 0) > 0) this.#replayingDelete.add(id);
    return { ...res, body };
  }
}

const withStatus = (xml: string, status: string) =>
  xml.replace(
    /<DBInstanceStatus>[^<]*<\/DBInstanceStatus>/,
    `<DBInstanceStatus>${status}</DBInstanceStatus>`,
  );

const rdsError = (code: string, message: string) =>
  queryError(code, message, "http://rds.amazonaws.com/doc/2014-10-31/");

const rds = new RDSClient(motoOptions());
const kube = newKube();
const PC = useProviderConfig("aws", "pc-rds");
const tagMapOf = (tags: Array<{ Key?: string; Value?: string }> | undefined) =>
  Object.fromEntries((tags ?? []).map((t) => [t.Key, t.Value]));
let wrapper: RdsLifecycle;

/** A small postgres instance; skipFinalSnapshot keeps moto free of snapshots unless a test wants one. */
const dbDefaults = {
  engine: "postgres",
  dbInstanceClass: "db.t3.micro",
  allocatedStorage: 20,
  masterUsername: "dbadmin",
  skipFinalSnapshot: true,
};
const { engine: _engine, ...withoutEngine } = dbDefaults;
const dbObject = (name: string, forProvider: Record<string, unknown> = {}, o: MrOptions = {}) =>
  managedObject(DBInstance, name, PC, { forProvider: { ...dbDefaults, ...forProvider }, ...o });

const describeDb = async (id: string): Promise<CloudDBInstance | undefined> => {
  try {
    return (await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))).DBInstances?.[0];
  } catch (err) {
    if ((err as Error).name === "DBInstanceNotFoundFault") return undefined;
    throw err;
  }
};
const secretData = (mrName: string) => connectionData(kube, mrName);
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
const dropInstance = (id: string) =>
  rds.send(new DeleteDBInstanceCommand({ DBInstanceIdentifier: id, SkipFinalSnapshot: true }));

beforeAll(async () => {
  wrapper = await RdsLifecycle.start(env("AWS_ENDPOINT_URL"));
  // The provider reaches moto through the test wrapper: only the ProviderConfig's endpoint differs.
  await kube.patch(providerConfigs.aws.type, PC, { spec: { endpoint: { url: wrapper.url } } });
});

afterAll(async () => {
  await wrapper?.stop();
});

/** The wrapper's calls (action → count) while `fn` runs; tests in a file run one at a time. */
async function rdsCallsDuring(fn: () => Promise<unknown>) {
  const before = wrapper.calls.length;
  await fn();
  const counts: Record<string, number> = {};
  for (const c of wrapper.calls.slice(before)) counts[c.action] = (counts[c.action] ?? 0) + 1;
  return counts;
}

describeManagedKind({
  type: DBInstance,
  cloud: "moto",
  prefix: "rds",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: (b) => (b === "inSync" ? { ...dbDefaults, tags: { a: "b" } } : dbDefaults),
  invalidSpec: { forProvider: withoutEngine, field: "spec.forProvider.engine" }, // engine is required
  exists: async (id) => (await describeDb(id)) !== undefined,
  requests: { during: rdsCallsDuring, isRead: (action) => action.startsWith("Describe") },
  inSyncRequests: { DescribeDBInstances: 1 },
  cleanup: async (id) => {
    await dropInstance(id);
  },
  import: {
    arrange: async (cloudName) => {
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
    },
    forProvider: { engine: "mysql", dbInstanceClass: "db.t3.micro" },
    expectSpec: (forProvider) => {
      expect(forProvider).toMatchObject({ masterUsername: "legacy", backupRetentionPeriod: 6, port: 3306 });
      // Values AWS changes by itself (minor upgrades, storage autoscaling) are shown in the cloud, not pinned in spec.
      expect(forProvider).not.toHaveProperty("engineVersion");
      expect(forProvider).not.toHaveProperty("allocatedStorage");
    },
    change: { backupRetentionPeriod: 1 },
    expectUnchanged: async (cloudName) =>
      expect((await describeDb(cloudName))?.BackupRetentionPeriod).toBe(6),
    after: async ({ cloudName }) => {
      expect(new Set(wrapper.callsFor(cloudName).map((c) => c.action))).toEqual(
        new Set(["DescribeDBInstances"]),
      );
      await dropInstance(cloudName);
    },
  },
  checks: {
    import: async ({ name }) => {
      const mr = await getMr(kube, DBInstance, name);
      expect(mr?.status?.atProvider).toMatchObject({ engineVersion: "5.6.21", allocatedStorage: 30 });
      const data = await secretData(name);
      expect(data).toMatchObject({ username: "legacy", port: "3306" });
      expect(data.password).toBeUndefined(); // unknown to driftless, and never reset by an import
    },
    externalName: async ({ name, cloudName }) =>
      expect((await secretData(name)).endpoint).toBe(`${cloudName}.aaaaaaaaaa.us-east-1.rds.amazonaws.com`),
    orphan: async ({ name }) => expect(wrapper.callsFor(name, "DeleteDBInstance")).toHaveLength(0),
    // The password in the Secret is the one the single CreateDBInstance sent.
    concurrentCreate: async ({ name }) =>
      expect((await secretData(name)).password).toBe(passwordSentOn(name, "CreateDBInstance")[0]),
  },
  ownTests: { delete: "RDS deletes slowly: proved below with its deleting state replayed" },
});

describe("RDS DBInstance field mapping and quirks against the real API server and moto", () => {
  it("creates the instance, reports Ready and Synced, and writes endpoint, port, username and password", async () => {
    const name = uniqueName("rds-create");
    const r = newReconciler(kube);
    await kube.create(DBInstance, dbObject(name, { dbName: "app", tags: { team: "a" } }));

    await settle(r, keyOf(DBInstance, name));

    const mr = await getMr(kube, DBInstance, name);
    expectAvailable(mr, name);
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
    expect(tagMapOf(db?.TagList)).toEqual({ ...defaultTags(DBInstance, name, PC), team: "a" });

    const data = await secretData(name);
    expect(Object.keys(data).sort()).toEqual(["endpoint", "password", "port", "username"]);
    expect(data).toMatchObject({ endpoint: db?.Endpoint?.Address, port: "5432", username: "dbadmin" });
    // Generated: strong, and the very password RDS was given.
    expect(data.password).toMatch(/^[A-Za-z][A-Za-z0-9]{29}$/);
    expect(passwordSentOn(name, "CreateDBInstance")).toEqual([data.password]);
    await expectSecretOwnedBy(kube, mr);
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

    const { password } = await secretData(name);
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
    // The API server refuses the write that records success: the state a crash right after the create leaves.
    const crashing = newReconciler(new CrashBeforeSucceeded(kubeConfig()), { retryBaseMs: 1 });
    const first = await crashing.reconcile(keyOf(DBInstance, name));
    expect(first.outcome).toBe("error");
    expect(crashing.externalCalls.create).toBe(1);
    const [sentToRds] = passwordSentOn(name, "CreateDBInstance");
    expect(sentToRds).toBeDefined();
    expect((await secretData(name)).password).toBe(sentToRds);

    const restarted = newReconciler(kube);
    await settle(restarted, keyOf(DBInstance, name));

    expect(restarted.externalCalls.create).toBe(0);
    expect(conditionOf(await getMr(kube, DBInstance, name), "Ready")?.status).toBe("True");
    expect((await secretData(name)).password).toBe(sentToRds);
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
    expect((await secretData(name)).password).toBe(sent[0]);
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
    expect((await secretData(name)).password).toBe("Initial-Passw0rd");
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
    expect((await secretData(name)).password).toBe("Rotated-Passw0rd");
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
    await kube.create(DBInstance, dbObject(name, {}, { connectionSecret: false }));
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
    expect((await secretData(name)).password).toBeDefined();

    await settle(r, keyOf(DBInstance, name));
    mr = await getMr(kube, DBInstance, name);
    expect(conditionOf(mr, "Ready")).toMatchObject({ status: "True", reason: "Available" });
    expect(mr?.status?.atProvider?.status).toBe("available");
    expect(wrapper.callsFor(name, "CreateDBInstance")).toHaveLength(1);
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
    expect(tagMapOf(db?.TagList)).toEqual({
      ...defaultTags(DBInstance, name, PC),
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

  it("creates an encrypted instance with its KMS key and parameter group, then moves it to another group", async () => {
    // Prepare: two parameter groups, and a key named by id (RDS reports its ARN)
    const name = uniqueName("rds-enc");
    const [pgA, pgB] = [uniqueName("pg-a"), uniqueName("pg-b")];
    for (const group of [pgA, pgB]) {
      await rds.send(
        new CreateDBParameterGroupCommand({
          DBParameterGroupName: group,
          DBParameterGroupFamily: "postgres13",
          Description: "driftless test",
        }),
      );
    }
    const keyId = "1234abcd-12ab-34cd-56ef-1234567890ab";
    const r = newReconciler(kube);

    // Act
    await kube.create(
      DBInstance,
      dbObject(name, { storageEncrypted: true, kmsKeyId: keyId, dbParameterGroupName: pgA }),
    );
    await settle(r, keyOf(DBInstance, name));

    // Assess: created with all three; the key id is no drift against the ARN RDS reports
    const created = wrapper.callsFor(name, "CreateDBInstance")[0]?.params;
    expect(created?.get("StorageEncrypted")).toBe("true");
    expect(created?.get("KmsKeyId")).toBe(keyId);
    expect(created?.get("DBParameterGroupName")).toBe(pgA);
    expect(await describeDb(name)).toMatchObject({ StorageEncrypted: true });
    expect((await r.reconcile(keyOf(DBInstance, name))).outcome).toBe("in-sync");

    // Act: another parameter group
    await kube.patch(DBInstance, name, { spec: { forProvider: { dbParameterGroupName: pgB } } });
    await settle(r, keyOf(DBInstance, name));

    // Assess
    expect(wrapper.callsFor(name, "ModifyDBInstance")[0]?.params.get("DBParameterGroupName")).toBe(pgB);
    expect((await describeDb(name))?.DBParameterGroups?.[0]?.DBParameterGroupName).toBe(pgB);
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
    expect(tagMapOf(db?.TagList)).toEqual({ ...defaultTags(DBInstance, name, PC), owner: "me" });
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

  it("names the ProviderConfig when its credentials are bad", async () => {
    const r = newReconciler(kube);
    const badPc = uniqueName("pc-rds-bad");
    await createAwsProviderConfig(kube, badPc, { credentials: "[default]\naws_access_key_id = only-half\n" });
    const bad = uniqueName("rds-badcreds");
    await kube.create(DBInstance, dbObject(bad, {}, { providerConfig: badPc }));
    await settle(r, keyOf(DBInstance, bad), 1);
    const m2 = conditionOf(await getMr(kube, DBInstance, bad), "Synced")?.message;
    expect(m2).toContain(`ProviderConfig "${badPc}"`);
    expect(m2).toContain("aws_secret_access_key");
    expect(m2).not.toContain("only-half");
    expect(await describeDb(bad)).toBeUndefined();
  });
});
