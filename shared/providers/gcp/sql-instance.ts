import type { z } from "zod";
import { googleAuditEvents } from "../../api/cloud-events.ts";
import {
  type ConnectionDetails,
  DependencyNotReadyError,
  type ExternalClient,
  type ExternalListing,
  type ExternalObservation,
  InvalidSpecError,
} from "../../api/external.ts";
import { networkPathOf } from "../../api/gcp/compute.ts";
import {
  DatabaseInstance,
  type DatabaseInstanceAtProvider,
  type DatabaseInstanceForProvider,
} from "../../api/gcp/sql.ts";
import { defined } from "../../api/json.ts";
import type { ManagedResource } from "../../api/managed.ts";
import { availabilityTable } from "../availability.ts";
import { gcp, observedLabels, sameLabels } from "./config.ts";
import {
  ConnectionPassword,
  isPostgresPrimary,
  isSqlAlreadyExists,
  isSqlNotFound,
  NOT_PEERED_PHRASES,
  onInstance,
  PASSWORD_KEY,
  type SqlApi,
  type SqlInstance,
  type SqlSettings,
  sqlProvider,
  text,
  unlessGone,
} from "./sql-common.ts";

type F = z.infer<typeof DatabaseInstanceForProvider>;
type A = z.infer<typeof DatabaseInstanceAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;
type CloudInstance = SqlInstance;

/** PostgreSQL's superuser on Cloud SQL: rootPassword on insert sets its password. */
const ROOT_USER = "postgres";
const POSTGRES_PORT = "5432";
/** Cloud SQL's refusal of a private IP in a network not peered with service networking (yet). */
const notPeered = (message: string | undefined) => NOT_PEERED_PHRASES.some((p) => message?.includes(p));

const availabilityOf = availabilityTable(
  { RUNNABLE: "Available", PENDING_CREATE: "Creating", PENDING_DELETE: "Deleting" },
  (state) => ({ availability: "Unavailable", message: `Cloud SQL instance state is ${state ?? "unknown"}` }),
);

const ipOf = (inst: CloudInstance, type: string) =>
  text(inst.ipAddresses?.find((a) => a.type === type)?.ipAddress);

/** The cloud's settings in forProvider's shape; the spec's spelling kept where both mean the same. */
function observedOf(inst: CloudInstance, fp: F): Partial<F> {
  const s = inst.settings ?? {};
  const ip = s.ipConfiguration ?? {};
  const autoresize = s.storageAutoResize;
  const diskSize = s.dataDiskSizeGb === undefined ? undefined : Number(s.dataDiskSizeGb);
  const network = text(ip.privateNetwork);
  return defined({
    region: text(inst.region),
    databaseVersion: text(inst.databaseVersion),
    tier: text(s.tier),
    // A disk grown by autoresize beyond the spec is what the spec asked for, not drift to undo.
    diskSize:
      autoresize && fp.diskSize !== undefined && diskSize !== undefined && diskSize > fp.diskSize
        ? fp.diskSize
        : diskSize,
    diskType: text(s.dataDiskType) as F["diskType"],
    diskAutoresize: autoresize,
    availabilityType: text(s.availabilityType) as F["availabilityType"],
    activationPolicy: text(s.activationPolicy) as F["activationPolicy"],
    ipv4Enabled: ip.ipv4Enabled,
    privateNetwork:
      network && fp.privateNetwork && networkPathOf(fp.privateNetwork) === networkPathOf(network)
        ? fp.privateNetwork
        : network,
    sslMode: text(ip.sslMode) as F["sslMode"],
    deletionProtectionEnabled: s.deletionProtectionEnabled,
    userLabels: observedLabels(fp.userLabels, s.userLabels),
  });
}

function connectionOf(inst: CloudInstance): ConnectionDetails {
  return defined({
    privateIP: ipOf(inst, "PRIVATE"),
    publicIP: ipOf(inst, "PRIMARY"),
    port: POSTGRES_PORT,
    username: ROOT_USER,
    serverCACertificate: text(inst.serverCaCert?.cert),
    connectionName: text(inst.connectionName),
  }) as ConnectionDetails;
}

const blank = (v: string | null | undefined) => (v && !v.endsWith("_UNSPECIFIED") ? v : undefined);

class DatabaseInstanceClient implements ExternalClient<F, A> {
  readonly #sql: SqlApi;
  readonly #password: ConnectionPassword<F, A>;
  constructor(sql: SqlApi, password: ConnectionPassword<F, A>) {
    this.#sql = sql;
    this.#password = password;
  }

  async #get(name: string): Promise<CloudInstance | undefined> {
    try {
      return await this.#sql.getInstance(name);
    } catch (err) {
      if (isSqlNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Why a FAILED instance failed: the error of its latest operation (one more read, only then). */
  async #lastError(name: string): Promise<string | undefined> {
    const err = (await this.#sql.latestOperation(name))?.error?.errors?.[0];
    return err ? `${err.code ?? "error"}: ${err.message ?? ""}` : undefined;
  }

  async observe(mr: MR, name: string | undefined): Promise<Observation> {
    if (!name) return { resourceExists: false };
    const fp = mr.spec.forProvider;
    return gcp(async () => {
      const inst = await this.#get(name);
      if (!inst) {
        const details = await this.#password.absent(mr, fp.rootPasswordSecretRef);
        return { resourceExists: false, ...(details ? { connectionDetails: details } : {}) };
      }
      const state = blank(inst.state);
      const ready = availabilityOf(state);
      const why = state === "FAILED" ? await this.#lastError(name) : undefined;
      const obs: Observation = {
        resourceExists: true,
        observed: observedOf(inst, fp),
        atProvider: defined({
          state,
          connectionName: text(inst.connectionName),
          selfLink: text(inst.selfLink),
          privateIP: ipOf(inst, "PRIVATE"),
          publicIP: ipOf(inst, "PRIMARY"),
          databaseInstalledVersion: text(inst.databaseInstalledVersion),
          gceZone: text(inst.gceZone),
          serviceAccountEmailAddress: text(inst.serviceAccountEmailAddress),
        }),
        availability: ready.availability,
        ...(ready.message ? { message: why ? `${ready.message}: ${why}` : ready.message } : {}),
        connectionDetails: connectionOf(inst),
      };
      await this.#password.observe(mr, fp.rootPasswordSecretRef, obs);
      return obs;
    });
  }

  async create(mr: MR, name: string | undefined) {
    const fp = mr.spec.forProvider;
    if (!name) throw new Error("a Cloud SQL instance needs a name (crossplane.io/external-name)");
    if (!fp.tier)
      throw new InvalidSpecError("spec.forProvider.tier is required to create a Cloud SQL instance");
    if (!fp.databaseVersion)
      throw new InvalidSpecError(
        "spec.forProvider.databaseVersion is required to create a Cloud SQL instance, e.g. POSTGRES_16",
      );
    const password = await this.#password.forCreate(mr, fp.rootPasswordSecretRef);
    await gcp(async () => {
      try {
        await this.#sql.insertInstance({
          name,
          databaseVersion: fp.databaseVersion,
          rootPassword: password,
          ...defined({ region: fp.region }),
          settings: settingsOf(fp),
        });
      } catch (err) {
        if (notPeered((err as Error).message)) {
          // The private services connection is usually still being made: a wait, not a bad spec.
          throw new DependencyNotReadyError(
            `the network ${fp.privateNetwork} has no private services connection yet (a servicenetworking Connection over a VPC_PEERING GlobalAddress); Cloud SQL said: ${(err as Error).message}`,
            { cause: err },
          );
        }
        if (!isSqlAlreadyExists(err)) throw err;
        throw new Error(
          `Cloud SQL instance name "${name}" is taken in project ${this.#sql.project} (Google keeps a deleted instance's name reserved for up to a week): choose another name, or set crossplane.io/external-name to adopt an instance`,
          { cause: err },
        );
      }
    });
    this.#password.wasSet(mr, password);
    return { connectionDetails: { username: ROOT_USER, port: POSTGRES_PORT, [PASSWORD_KEY]: password } };
  }

  async update(mr: MR, name: string, obs: Observation) {
    const fp = mr.spec.forProvider;
    const seen = obs.observed ?? {};
    const state = obs.atProvider?.state;
    if (fp.diskSize !== undefined && seen.diskSize !== undefined && fp.diskSize < seen.diskSize)
      throw new InvalidSpecError(
        `Cloud SQL cannot shrink a disk: spec.forProvider.diskSize is ${fp.diskSize} GB, the instance has ${seen.diskSize} GB; set it to ${seen.diskSize} or more`,
      );
    const changed = settingsOf(fp, seen);
    const password = this.#password.pending(obs);
    if (Object.keys(changed).length === 0 && password === undefined) return {};
    if (state !== "RUNNABLE")
      throw new Error(
        `Cloud SQL instance ${name} is ${state ?? "not running"}: the change is sent once it is RUNNABLE`,
      );
    // One operation per reconcile: Cloud SQL refuses a second while the first runs. The password, if it
    // also changed, is still out of date at the next observe and set then.
    if (Object.keys(changed).length > 0) {
      await gcp(() => onInstance(name, () => this.#sql.patchInstance(name, { settings: changed })));
      return {};
    }
    if (password === undefined) return {};
    await gcp(() =>
      onInstance(name, () => this.#sql.updateUser(name, ROOT_USER, { name: ROOT_USER, password })),
    );
    this.#password.wasSet(mr, password);
    return { connectionDetails: { ...obs.connectionDetails, [PASSWORD_KEY]: password } };
  }

  async delete(_mr: MR, name: string) {
    await gcp(async () => {
      const inst = await this.#get(name);
      // Gone, or already being deleted: the engine observes until it is gone.
      if (!inst || inst.state === "PENDING_DELETE") return;
      await onInstance(name, () => unlessGone(this.#sql.deleteInstance(name)));
    });
  }

  /**
   * The project's PostgreSQL primaries (`driftless import`), page by page: the kind manages no replica,
   * nor MySQL or SQL Server. Their region is their home.
   */
  async list(): Promise<ExternalListing[]> {
    const instances = await gcp(() => this.#sql.listInstances());
    return instances.flatMap((inst) =>
      inst.name && isPostgresPrimary(inst)
        ? [{ externalName: inst.name, forProvider: defined({ region: text(inst.region) }) }]
        : [],
    );
  }
}

type Settings = SqlSettings;

/**
 * The settings block for insert (every field the spec sets), or for patch (only those that differ from
 * `seen`). JSON carries protobuf wrappers (BoolValue, Int64Value) as their plain value.
 */
function settingsOf(fp: F, seen?: Partial<F>): Settings {
  const differs = <K extends keyof F>(k: K) =>
    fp[k] !== undefined && (!seen || JSON.stringify(fp[k]) !== JSON.stringify(seen[k]));
  const s: Settings = {};
  if (differs("tier")) s.tier = fp.tier;
  if (differs("diskSize")) s.dataDiskSizeGb = String(fp.diskSize);
  if (differs("diskType")) s.dataDiskType = fp.diskType;
  if (differs("diskAutoresize")) s.storageAutoResize = fp.diskAutoresize;
  if (differs("availabilityType")) s.availabilityType = fp.availabilityType;
  if (differs("activationPolicy")) s.activationPolicy = fp.activationPolicy;
  if (differs("deletionProtectionEnabled")) s.deletionProtectionEnabled = fp.deletionProtectionEnabled;
  if (fp.userLabels !== undefined && (!seen || !sameLabels(fp.userLabels, seen.userLabels)))
    s.userLabels = fp.userLabels;
  const ip: NonNullable<Settings["ipConfiguration"]> = {};
  if (differs("ipv4Enabled")) ip.ipv4Enabled = fp.ipv4Enabled;
  if (differs("privateNetwork")) ip.privateNetwork = networkPathOf(fp.privateNetwork) ?? fp.privateNetwork;
  if (differs("sslMode")) ip.sslMode = fp.sslMode;
  if (Object.keys(ip).length > 0) s.ipConfiguration = ip;
  return s;
}

export const sqlInstanceProvider = sqlProvider(
  DatabaseInstance,
  (sql, ctx) =>
    new DatabaseInstanceClient(
      sql,
      new ConnectionPassword<F, A>((ref) => ctx.readSecretKey(ref), "rootPasswordSecretRef"),
    ),
  {
    cloudEvents: googleAuditEvents(
      "cloudsql.googleapis.com",
      ["cloudsql.instances.create", "cloudsql.instances.update", "cloudsql.instances.delete"],
      "instances",
    ),
  },
);
