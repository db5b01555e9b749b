import { createHmac, randomBytes, randomInt } from "node:crypto";
import {
  type DBInstance as CloudDBInstance,
  CreateDBInstanceCommand,
  DeleteDBInstanceCommand,
  DescribeDBInstancesCommand,
  type DescribeDBInstancesCommandInput,
  type DescribeDBInstancesCommandOutput,
  ModifyDBInstanceCommand,
  type ModifyDBInstanceMessage,
  paginateDescribeDBInstances,
  type RDSClient,
} from "@aws-sdk/client-rds";
import type { z } from "zod";
import { DBInstance, type DBInstanceAtProvider, type DBInstanceForProvider } from "../../api/aws/rds.ts";
import {
  type ConnectionDetails,
  CredentialsError,
  type ExternalClient,
  type ExternalListing,
  type ExternalObservation,
  InvalidSpecError,
  type ObserveManyItem,
} from "../../api/external.ts";
import { defined } from "../../api/json.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { SecretKeySelector } from "../../api/meta.ts";
import { availabilityTable } from "../availability.ts";
import { awsErrorCode, regionOfArn } from "./config.ts";
import { observeEach, sameSet } from "./ec2-common.ts";
import { RdsKindClient, type RdsNamed, rdsProvider } from "./rds-common.ts";

type F = z.infer<typeof DBInstanceForProvider>;
type A = z.infer<typeof DBInstanceAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

/** The connection Secret key that holds the master password. */
const PASSWORD_KEY = "password";
/** 30 characters fit every engine's limit (Oracle 30, MySQL/MariaDB 41) and carry ~178 bits. */
const PASSWORD_LENGTH = 30;
const LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const ALPHANUMERIC = `${LETTERS}0123456789`;
/** Statuses in which RDS accepts ModifyDBInstance. */
const MODIFIABLE = new Set(["available", "storage-optimization"]);
/**
 * DB instances one batched observe covers: one DescribeDBInstances page (MaxRecords is 20–100) for a
 * db-instance-id filter of as many values. The RDS API documents no limit on filter values; a page is
 * what one request returns anyway.
 */
const MAX_RECORDS = 100;
/** A DB instance identifier: 1–63 letters, digits and hyphens, a letter first, no "--", no trailing "-". */
const IDENTIFIER = /^[a-z](?!.*--)[a-z0-9-]{0,62}(?<!-)$/i;

/** The DB instances as the RDS template (rds-common.ts) describes them. */
const INSTANCES: RdsNamed<CloudDBInstance, DescribeDBInstancesCommandOutput> = {
  describe: (name) => new DescribeDBInstancesCommand({ DBInstanceIdentifier: name }),
  first: (out) => out.DBInstances?.[0],
  notFound: ["DBInstanceNotFound", "DBInstanceNotFoundFault"],
};
const isAlreadyDeleting = (err: unknown) =>
  awsErrorCode(err) === "InvalidDBInstanceState" &&
  /already being deleted/i.test((err as Error).message ?? "");

/** A strong password RDS accepts for every engine: letters and digits, starting with a letter (Oracle). */
export function generatePassword(): string {
  let pw = LETTERS.charAt(randomInt(LETTERS.length));
  while (pw.length < PASSWORD_LENGTH) pw += ALPHANUMERIC.charAt(randomInt(ALPHANUMERIC.length));
  return pw;
}

// Which master password this process last set on which instance, as an HMAC under a key that never
// leaves memory: it only bridges the reconciler's Secret cache (stale for a short TTL) after a rotation.
const PROCESS_KEY = randomBytes(32);
const passwordsSet = new Map<string, string>();
const fingerprint = (uid: string, password: string) =>
  createHmac("sha256", PROCESS_KEY).update(uid).update("\0").update(password).digest("hex");
function rememberPasswordSet(mr: MR, password: string) {
  const uid = mr.metadata.uid;
  if (!uid) return;
  if (passwordsSet.size > 4096) passwordsSet.clear();
  passwordsSet.set(uid, fingerprint(uid, password));
}
const wasPasswordSet = (mr: MR, password: string) =>
  Boolean(mr.metadata.uid) &&
  passwordsSet.get(mr.metadata.uid ?? "") === fingerprint(mr.metadata.uid ?? "", password);

// The master password update() must set, handed over from observe() without ever entering the
// observation's serializable fields (the engine passes the very same observation object to update).
const passwordToSet = new WeakMap<Observation, string>();

const sameText = (a: string | undefined, b: string | undefined) =>
  a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();

/** "16" in the spec accepts the cloud's "16.4": report the user's value, so a prefix is no drift. */
function versionAsSpecified(specified: string | undefined, cloud: string | undefined) {
  if (specified && cloud && (cloud === specified || cloud.startsWith(`${specified}.`))) return specified;
  return cloud;
}

/** Orders two dotted versions segment by segment, numerically where both segments are numbers. */
function compareVersions(a: string, b: string): number {
  const pa = a.split(".");
  const pb = b.split(".");
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? "";
    const y = pb[i] ?? "";
    if (x === y) continue;
    if (x === "" || y === "") return x === "" ? -1 : 1;
    const byNumber = /^\d+$/.test(x) && /^\d+$/.test(y) ? Number(x) - Number(y) : x.localeCompare(y);
    if (byNumber !== 0) return byNumber;
  }
  return 0;
}

/**
 * The cloud's version is what the spec asks for: a prefix match ("16" ~ "16.4"), or a newer minor or
 * patch of the same major (AWS upgrades minor versions by itself; sending the older one would downgrade).
 */
function versionSatisfies(specified: string, cloud: string | undefined): boolean {
  if (cloud === undefined) return false;
  if (cloud === specified || cloud.startsWith(`${specified}.`)) return true;
  return specified.split(".")[0] === cloud.split(".")[0] && compareVersions(cloud, specified) >= 0;
}

function tagsOf(db: CloudDBInstance): Record<string, string> {
  return Object.fromEntries((db.TagList ?? []).filter((t) => t.Key).map((t) => [t.Key ?? "", t.Value ?? ""]));
}

/** The cloud's state in forProvider's shape; pending modifications count as done, so they are not re-sent. */
function observedOf(db: CloudDBInstance, fp: F, region: string): Partial<F> {
  const pending = db.PendingModifiedValues ?? {};
  const tags = tagsOf(db);
  const subnetGroup = pending.DBSubnetGroupName ?? db.DBSubnetGroup?.DBSubnetGroupName;
  // Security groups are a set; one being removed already counts as gone.
  const groups = (db.VpcSecurityGroups ?? []).flatMap((g) =>
    g.VpcSecurityGroupId && g.Status !== "removing" ? [g.VpcSecurityGroupId] : [],
  );
  return defined({
    region,
    engine: sameText(fp.engine, db.Engine) ? fp.engine : db.Engine,
    engineVersion: versionAsSpecified(fp.engineVersion, pending.EngineVersion ?? db.EngineVersion),
    dbInstanceClass: pending.DBInstanceClass ?? db.DBInstanceClass,
    allocatedStorage: pending.AllocatedStorage ?? db.AllocatedStorage,
    masterUsername: db.MasterUsername,
    dbName: db.DBName,
    port: pending.Port ?? db.Endpoint?.Port ?? (db.DbInstancePort || undefined),
    publiclyAccessible: db.PubliclyAccessible,
    backupRetentionPeriod: pending.BackupRetentionPeriod ?? db.BackupRetentionPeriod,
    // RDS lower-cases the maintenance window; the user's capitalisation is no drift.
    preferredMaintenanceWindow: sameText(fp.preferredMaintenanceWindow, db.PreferredMaintenanceWindow)
      ? fp.preferredMaintenanceWindow
      : db.PreferredMaintenanceWindow,
    preferredBackupWindow: db.PreferredBackupWindow,
    storageType: pending.StorageType ?? db.StorageType,
    storageEncrypted: db.StorageEncrypted,
    // RDS reports the key's ARN: the spec's key id names the same key.
    kmsKeyId: fp.kmsKeyId && db.KmsKeyId?.endsWith(`:key/${fp.kmsKeyId}`) ? fp.kmsKeyId : db.KmsKeyId,
    dbParameterGroupName: db.DBParameterGroups?.[0]?.DBParameterGroupName,
    // RDS stores subnet group names in lower case: the user's capitalisation is no drift.
    dbSubnetGroupName: sameText(fp.dbSubnetGroupName, subnetGroup) ? fp.dbSubnetGroupName : subnetGroup,
    vpcSecurityGroupIds:
      fp.vpcSecurityGroupIds && sameSet(fp.vpcSecurityGroupIds, groups)
        ? fp.vpcSecurityGroupIds
        : groups.length > 0 || fp.vpcSecurityGroupIds
          ? groups
          : undefined,
    tags: fp.tags !== undefined || Object.keys(tags).length > 0 ? tags : undefined,
  });
}

const availabilityOf = availabilityTable(
  { available: "Available", creating: "Creating", deleting: "Deleting" },
  (status) => ({ availability: "Unavailable", message: `DB instance status is ${status ?? "unknown"}` }),
);

function connectionOf(db: CloudDBInstance, fp: F): ConnectionDetails {
  const port = db.Endpoint?.Port ?? (db.DbInstancePort || undefined) ?? fp.port;
  const username = db.MasterUsername ?? fp.masterUsername;
  return defined({
    endpoint: db.Endpoint?.Address,
    port: port !== undefined ? String(port) : undefined,
    username,
  }) as ConnectionDetails;
}

/** What observe reports of an instance as DescribeDBInstances returned it, before the password check. */
function observationOf(db: CloudDBInstance, fp: F, region: string): Observation {
  const arn = db.DBInstanceArn ?? "";
  const status = db.DBInstanceStatus;
  const { availability, message } = availabilityOf(status);
  return {
    resourceExists: true,
    observed: observedOf(db, fp, regionOfArn(arn) ?? region),
    atProvider: defined({
      arn: arn || undefined,
      status,
      endpoint: db.Endpoint?.Address,
      port: db.Endpoint?.Port,
      resourceId: db.DbiResourceId,
      engineVersion: db.EngineVersion,
      allocatedStorage: db.AllocatedStorage,
    }),
    availability,
    ...(message ? { message } : {}),
    connectionDetails: connectionOf(db, fp),
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** forProvider field → ModifyDBInstance parameter, for the fields RDS can change in place. */
const MODIFIABLE_FIELDS = {
  dbInstanceClass: "DBInstanceClass",
  allocatedStorage: "AllocatedStorage",
  engineVersion: "EngineVersion",
  port: "DBPortNumber",
  publiclyAccessible: "PubliclyAccessible",
  backupRetentionPeriod: "BackupRetentionPeriod",
  preferredMaintenanceWindow: "PreferredMaintenanceWindow",
  preferredBackupWindow: "PreferredBackupWindow",
  storageType: "StorageType",
  dbParameterGroupName: "DBParameterGroupName",
  dbSubnetGroupName: "DBSubnetGroupName",
  vpcSecurityGroupIds: "VpcSecurityGroupIds",
} as const satisfies Partial<Record<keyof F, keyof ModifyDBInstanceMessage>>;

/** Reads Secret keys through the reconciler (cached per ProviderConfig TTL); never logs a value. */
class SecretReader {
  readonly #read: (ref: SecretKeySelector) => Promise<string>;
  constructor(read: (ref: SecretKeySelector) => Promise<string>) {
    this.#read = read;
  }

  /** undefined when the Secret or its key does not exist (the reader reports that as CredentialsError). */
  async optional(ref: SecretKeySelector): Promise<string | undefined> {
    try {
      return await this.#read(ref);
    } catch (err) {
      if (err instanceof CredentialsError) return undefined;
      throw err;
    }
  }

  async masterPassword(ref: SecretKeySelector): Promise<string> {
    const value = await this.optional(ref).catch((err: unknown) => {
      if (err instanceof InvalidSpecError)
        throw new InvalidSpecError(`${err.message} (spec.forProvider.masterPasswordSecretRef)`, {
          cause: err,
        });
      throw err;
    });
    if (value === undefined) {
      // Not a CredentialsError: this Secret is the resource's, not the ProviderConfig's.
      throw new Error(
        `cannot read the master password: Secret ${ref.namespace}/${ref.name} or its key "${ref.key}" does not exist (spec.forProvider.masterPasswordSecretRef)`,
      );
    }
    if (value.length === 0) {
      throw new InvalidSpecError(
        `the master password in Secret ${ref.namespace}/${ref.name} key "${ref.key}" is empty`,
      );
    }
    return value;
  }
}

class DBInstanceClient
  extends RdsKindClient<F, A, CloudDBInstance, DescribeDBInstancesCommandOutput>
  implements ExternalClient<F, A>
{
  readonly #secrets: SecretReader;
  constructor(client: RDSClient, region: string, secrets: SecretReader) {
    super(client, region, INSTANCES);
    this.#secrets = secrets;
  }

  /** Where the master password is published: the connection Secret's password key, if there is one. */
  #publishedPasswordRef(mr: MR): SecretKeySelector | undefined {
    const ref = mr.spec.writeConnectionSecretToRef;
    return ref ? { namespace: ref.namespace, name: ref.name, key: PASSWORD_KEY } : undefined;
  }

  /**
   * The instances a db-instance-id filter names, page by page, by lower-case identifier and ARN. RDS
   * keeps identifiers in lower case and filter values are case-sensitive, so identifiers go lower-cased.
   */
  async #describeMany(names: readonly string[]): Promise<Map<string, CloudDBInstance>> {
    const values = [...new Set(names.map((n) => (n.startsWith("arn:") ? n : n.toLowerCase())))];
    const found = new Map<string, CloudDBInstance>();
    for (let at = 0; at < values.length; at += MAX_RECORDS) {
      const Filters = [{ Name: "db-instance-id", Values: values.slice(at, at + MAX_RECORDS) }];
      for await (const out of this.#pages({ Filters }))
        for (const db of out.DBInstances ?? []) {
          if (db.DBInstanceIdentifier) found.set(db.DBInstanceIdentifier.toLowerCase(), db);
          if (db.DBInstanceArn) found.set(db.DBInstanceArn.toLowerCase(), db);
        }
    }
    return found;
  }

  /**
   * Every DB instance of the region, page by page (`driftless import`): its region, and the engine and
   * instance class the schema requires of every DBInstance, Observe-only or not (as described).
   */
  async list(): Promise<ExternalListing[]> {
    const out: ExternalListing[] = [];
    for await (const page of this.#pages({}))
      for (const db of page.DBInstances ?? [])
        if (db.DBInstanceIdentifier)
          out.push({
            externalName: db.DBInstanceIdentifier,
            forProvider: defined({
              region: this.region,
              engine: db.Engine,
              dbInstanceClass: db.DBInstanceClass,
            }),
          });
    return out;
  }

  /** DescribeDBInstances page by page (the SDK's paginator follows Marker). */
  #pages(input: DescribeDBInstancesCommandInput) {
    return paginateDescribeDBInstances({ client: this.rds, pageSize: MAX_RECORDS }, input);
  }

  /** An instance as described, or its absence, as observe reports it (the password checked). */
  protected async observed(mr: MR, db: CloudDBInstance | undefined): Promise<Observation> {
    if (!db) return this.#observeAbsent(mr);
    const obs = observationOf(db, mr.spec.forProvider, this.region);
    await this.#checkPassword(mr, obs);
    return obs;
  }

  /**
   * DescribeDBInstances with a db-instance-id filter (TagList included: nothing else is read from AWS).
   * A name that is neither an identifier nor an ARN is observed alone, so RDS says what is wrong with it.
   */
  async observeMany(items: ReadonlyArray<ObserveManyItem<F, A>>): Promise<Array<Observation | Error>> {
    const listable = (name: string) => IDENTIFIER.test(name) || name.startsWith("arn:");
    const found = await this.#describeMany(items.map((i) => i.externalName).filter(listable));
    return observeEach(items, ({ mr, externalName }) =>
      listable(externalName)
        ? this.observed(mr, found.get(externalName.toLowerCase()))
        : this.observe(mr, externalName),
    );
  }

  /**
   * Before create, a generated password goes into the connection details: the engine publishes the
   * observation's details before it calls create, so the password is stored before the instance exists
   * and survives a crash at any point after. create() reads it back from the Secret.
   */
  async #observeAbsent(mr: MR): Promise<Observation> {
    const published = this.#publishedPasswordRef(mr);
    if (mr.spec.forProvider.masterPasswordSecretRef || !published || mr.metadata.deletionTimestamp) {
      return { resourceExists: false };
    }
    // A password from an earlier, interrupted attempt is kept: it may already be the instance's.
    if ((await this.#secrets.optional(published)) !== undefined) return { resourceExists: false };
    return { resourceExists: false, connectionDetails: { [PASSWORD_KEY]: generatePassword() } };
  }

  /**
   * Rotation: the password in masterPasswordSecretRef is compared with the one in the connection
   * Secret (what was last set), so nothing about the password is stored anywhere else.
   */
  async #checkPassword(mr: MR, obs: Observation) {
    const ref = mr.spec.forProvider.masterPasswordSecretRef;
    const published = this.#publishedPasswordRef(mr);
    if (!ref || !published) return;
    const wanted = await this.#secrets.masterPassword(ref);
    const current = await this.#secrets.optional(published);
    if (current === wanted) return;
    if (wasPasswordSet(mr, wanted)) {
      // Set by this process already; the cached Secret read is older than that: publish, don't re-set.
      obs.connectionDetails = { ...obs.connectionDetails, [PASSWORD_KEY]: wanted };
      return;
    }
    passwordToSet.set(obs, wanted);
    obs.resourceUpToDate = false;
  }

  async #passwordForCreate(mr: MR): Promise<string> {
    const ref = mr.spec.forProvider.masterPasswordSecretRef;
    if (ref) return this.#secrets.masterPassword(ref);
    const published = this.#publishedPasswordRef(mr);
    if (!published) {
      throw new InvalidSpecError(
        "a generated master password is kept only in the connection Secret: set spec.writeConnectionSecretToRef, or set spec.forProvider.masterPasswordSecretRef",
      );
    }
    const password = await this.#secrets.optional(published);
    // Never create an instance whose password nobody could read back.
    if (password === undefined)
      throw new Error("the generated master password is not in the connection Secret yet; retrying");
    return password;
  }

  async create(mr: MR, name: string | undefined) {
    const fp = mr.spec.forProvider;
    if (!name) throw new Error("a DB instance needs a name (crossplane.io/external-name)");
    if (!fp.masterUsername)
      throw new InvalidSpecError("spec.forProvider.masterUsername is required to create a DB instance");
    const password = await this.#passwordForCreate(mr);
    const out = await this.rds.send(
      new CreateDBInstanceCommand({
        DBInstanceIdentifier: name,
        Engine: fp.engine,
        DBInstanceClass: fp.dbInstanceClass,
        MasterUsername: fp.masterUsername,
        MasterUserPassword: password,
        ...defined({
          EngineVersion: fp.engineVersion,
          AllocatedStorage: fp.allocatedStorage,
          DBName: fp.dbName,
          Port: fp.port,
          PubliclyAccessible: fp.publiclyAccessible,
          BackupRetentionPeriod: fp.backupRetentionPeriod,
          PreferredMaintenanceWindow: fp.preferredMaintenanceWindow,
          PreferredBackupWindow: fp.preferredBackupWindow,
          StorageType: fp.storageType,
          StorageEncrypted: fp.storageEncrypted,
          KmsKeyId: fp.kmsKeyId,
          DBParameterGroupName: fp.dbParameterGroupName,
          DBSubnetGroupName: fp.dbSubnetGroupName,
          VpcSecurityGroupIds: fp.vpcSecurityGroupIds,
        }),
        ...this.tagsOnCreate(mr),
      }),
    );
    rememberPasswordSet(mr, password);
    const details = out.DBInstance ? connectionOf(out.DBInstance, fp) : { username: fp.masterUsername };
    return { connectionDetails: { ...details, [PASSWORD_KEY]: password } };
  }

  protected async updateFields(mr: MR, name: string, obs: Observation) {
    const fp = mr.spec.forProvider;
    const observed = obs.observed ?? {};
    const params: Record<string, unknown> = {};
    const changed: string[] = [];
    for (const [field, param] of Object.entries(MODIFIABLE_FIELDS)) {
      const key = field as keyof typeof MODIFIABLE_FIELDS;
      const want = fp[key];
      // A field RDS did not report is sent too: absent is drift, like any other difference.
      if (want === undefined || same(want, observed[key])) continue;
      if (key === "engineVersion" && versionSatisfies(fp.engineVersion ?? "", observed.engineVersion))
        continue;
      params[param] = want;
      changed.push(field);
    }
    const input = { ...params, DBInstanceIdentifier: name } as ModifyDBInstanceMessage;
    // The user asked for this exact version; RDS needs consent for a major upgrade.
    if (input.EngineVersion) input.AllowMajorVersionUpgrade = true;
    const password = passwordToSet.get(obs);
    if (password !== undefined) {
      input.MasterUserPassword = password;
      changed.push("master password");
    }
    if (changed.length === 0) return {};
    const storage = observed.allocatedStorage;
    if (fp.allocatedStorage !== undefined && storage !== undefined && fp.allocatedStorage < storage) {
      throw new InvalidSpecError(
        `RDS cannot shrink storage: spec.forProvider.allocatedStorage is ${fp.allocatedStorage} GiB, the instance has ${storage} GiB (storage autoscaling may have grown it); set it to ${storage} or more`,
      );
    }

    const status = obs.atProvider?.status;
    if (status && !MODIFIABLE.has(status)) {
      throw new Error(
        `DB instance ${name} is ${status}: ${changed.join(", ")} will be changed once it is available`,
      );
    }
    await this.rds.send(
      new ModifyDBInstanceCommand({ ...input, ApplyImmediately: fp.applyImmediately ?? false }),
    );
    if (password === undefined) return {};
    rememberPasswordSet(mr, password);
    return { connectionDetails: { ...obs.connectionDetails, [PASSWORD_KEY]: password } };
  }

  async delete(mr: MR, name: string) {
    const fp = mr.spec.forProvider;
    const skip = fp.skipFinalSnapshot === true;
    try {
      await this.rds.send(
        new DeleteDBInstanceCommand({
          DBInstanceIdentifier: name,
          SkipFinalSnapshot: skip,
          ...(skip
            ? {}
            : { FinalDBSnapshotIdentifier: fp.finalDBSnapshotIdentifier ?? finalSnapshotName(mr, name) }),
        }),
      );
    } catch (err) {
      // Deleting is already under way (or done): the engine observes until the instance is gone.
      if (!this.isMissing(err) && !isAlreadyDeleting(err)) throw err;
    }
  }
}

/** Stable across retries of one delete, distinct across managed resources that reused the name. */
function finalSnapshotName(mr: MR, name: string): string {
  const uid = (mr.metadata.uid ?? "").replace(/[^0-9a-z]/gi, "").slice(0, 8);
  return uid ? `${name}-final-${uid}` : `${name}-final`;
}

export const dbInstanceProvider = rdsProvider(
  DBInstance,
  {
    events: ["CreateDBInstance", "DeleteDBInstance", "ModifyDBInstance", "StartDBInstance", "StopDBInstance"],
    nameParameter: "dBInstanceIdentifier",
    arnType: "db",
    // One statement with the subnet groups': an instance is created into a (prefixed) subnet group.
    actions: [
      "rds:CreateDBInstance",
      "rds:DeleteDBInstance",
      "rds:DescribeDBInstances",
      "rds:ModifyDBInstance",
    ],
    listAction: "rds:DescribeDBInstances",
    listComment:
      "The batched drift check describes DB instances by filter and DB subnet groups by listing them (no " +
      "filters there), naming none in the request: IAM checks such calls against every instance's or " +
      "group's ARN. Read-only.",
    observeMany: {
      calls: `DescribeDBInstances (db-instance-id filter, MaxRecords ${MAX_RECORDS})`,
      maxItems: MAX_RECORDS,
    },
  },
  (rds, region, ctx) => new DBInstanceClient(rds, region, new SecretReader((ref) => ctx.readSecretKey(ref))),
);
