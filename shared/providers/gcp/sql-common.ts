// Cloud SQL over the Cloud SQL Admin API (sqladmin v1beta4) with the project's GoogleRestClient, not
// @google-cloud/sql: no redirect is followed, and an error names only the endpoint, the HTTP status and
// Google's code, with Google's own message only from Google's hosts (docs/adr/0002-gcp-rest-clients.md).
// Every write answers a `sql#operation`; Cloud SQL runs one at a time per instance. Nothing waits for
// one here: the next observe reads the instance (its state, and its latest operation's error when it
// FAILED), so a reconcile never holds the function while Cloud SQL works.
import type { z } from "zod";
import {
  type ConnectContext,
  defineProvider,
  type ExternalClient,
  type ExternalCreation,
  type ExternalListing,
  type ExternalObservation,
  type ExternalUpdate,
  InvalidSpecError,
  type ManagedKindProvider,
} from "../../api/external.ts";
import type { AnyObjectSchema, ManagedKindDef, ManagedResource } from "../../api/managed.ts";
import type { GcpProviderConfigSpec } from "../../api/provider-config.ts";
import { deleted } from "../deleted.ts";
import { gcp, httpStatus, isAlreadyExists } from "./config.ts";
import {
  type GcpNetworkingConfig,
  GoogleHttpError,
  type GoogleRestClient,
  gcpNetworkingConfig,
  networkingClients,
} from "./google-rest.ts";

/**
 * Cloud SQL's words for a private IP in a network not peered with service networking (yet): the one
 * refusal a kind explains, so these phrases pass even from a host that is not Google's (the fake's).
 */
export const NOT_PEERED_PHRASES = [
  "Incorrect Service Networking config",
  "NETWORK_NOT_PEERED",
  "SERVICE_NETWORKING_NOT_ENABLED",
] as const;

/** A `sql#operation`: what every write answers. */
export interface SqlOperation {
  name?: string;
  operationType?: string;
  status?: string;
  error?: { errors?: Array<{ code?: string; message?: string }> };
}

/** A `sql#instance` (v1beta4 DatabaseInstance): the fields the kinds read or write. */
export interface SqlInstance {
  name?: string;
  region?: string;
  databaseVersion?: string;
  databaseInstalledVersion?: string;
  instanceType?: string;
  state?: string;
  connectionName?: string;
  selfLink?: string;
  gceZone?: string;
  serviceAccountEmailAddress?: string;
  ipAddresses?: Array<{ type?: string; ipAddress?: string }>;
  serverCaCert?: { cert?: string };
  settings?: SqlSettings;
}

/** A `sql#settings` block. JSON carries int64 as a string and protobuf wrappers as their plain value. */
export interface SqlSettings {
  tier?: string;
  dataDiskSizeGb?: string | number;
  dataDiskType?: string;
  storageAutoResize?: boolean;
  availabilityType?: string;
  activationPolicy?: string;
  deletionProtectionEnabled?: boolean;
  userLabels?: Record<string, string>;
  ipConfiguration?: { ipv4Enabled?: boolean; privateNetwork?: string; sslMode?: string };
}

export interface SqlDatabase {
  name?: string;
  charset?: string;
  collation?: string;
  selfLink?: string;
}

export interface SqlUser {
  name?: string;
  host?: string;
  type?: string;
  password?: string;
}

/** Instances per instances.list page: the API's maximum (maxResults caps at 1,000). */
const LIST_PAGE_SIZE = 1000;

/**
 * The Cloud SQL Admin API of one project: instances, their databases and users, and their operations,
 * one request each. PostgreSQL users live on host "" (the host is MySQL's).
 */
export class SqlApi {
  readonly #api: GoogleRestClient;
  readonly project: string;
  constructor(api: GoogleRestClient, project: string) {
    this.#api = api;
    this.project = project;
  }

  #instance(name: string) {
    return `/projects/${encodeURIComponent(this.project)}/instances/${encodeURIComponent(name)}`;
  }

  getInstance(name: string) {
    return this.#api.request<SqlInstance>("GET", this.#instance(name));
  }
  /** Every instance of the project, page by page. */
  async listInstances(): Promise<SqlInstance[]> {
    const out: SqlInstance[] = [];
    let pageToken: string | undefined;
    do {
      const page = await this.#api.request<{ items?: SqlInstance[]; nextPageToken?: string }>(
        "GET",
        `/projects/${encodeURIComponent(this.project)}/instances`,
        { query: { maxResults: String(LIST_PAGE_SIZE), ...(pageToken ? { pageToken } : {}) } },
      );
      out.push(...(page.items ?? []));
      pageToken = page.nextPageToken || undefined;
    } while (pageToken);
    return out;
  }
  insertInstance(body: SqlInstance & { rootPassword?: string }) {
    return this.#api.request<SqlOperation>(
      "POST",
      `/projects/${encodeURIComponent(this.project)}/instances`,
      {
        body,
      },
    );
  }
  patchInstance(name: string, body: SqlInstance) {
    return this.#api.request<SqlOperation>("PATCH", this.#instance(name), { body });
  }
  deleteInstance(name: string) {
    return this.#api.request<SqlOperation>("DELETE", this.#instance(name));
  }
  /** The instance's latest operation (operations.list, newest first). */
  async latestOperation(instance: string): Promise<SqlOperation | undefined> {
    const list = await this.#api.request<{ items?: SqlOperation[] }>(
      "GET",
      `/projects/${encodeURIComponent(this.project)}/operations`,
      { query: { instance, maxResults: "1" } },
    );
    return list.items?.[0];
  }

  getDatabase(instance: string, name: string) {
    return this.#api.request<SqlDatabase>(
      "GET",
      `${this.#instance(instance)}/databases/${encodeURIComponent(name)}`,
    );
  }
  async listDatabases(instance: string): Promise<SqlDatabase[]> {
    const list = await this.#api.request<{ items?: SqlDatabase[] }>(
      "GET",
      `${this.#instance(instance)}/databases`,
    );
    return list.items ?? [];
  }
  insertDatabase(instance: string, body: SqlDatabase) {
    return this.#api.request<SqlOperation>("POST", `${this.#instance(instance)}/databases`, { body });
  }
  deleteDatabase(instance: string, name: string) {
    return this.#api.request<SqlOperation>(
      "DELETE",
      `${this.#instance(instance)}/databases/${encodeURIComponent(name)}`,
    );
  }

  getUser(instance: string, name: string) {
    return this.#api.request<SqlUser>(
      "GET",
      `${this.#instance(instance)}/users/${encodeURIComponent(name)}`,
      {
        query: { host: "" },
      },
    );
  }
  async listUsers(instance: string): Promise<SqlUser[]> {
    const list = await this.#api.request<{ items?: SqlUser[] }>("GET", `${this.#instance(instance)}/users`);
    return list.items ?? [];
  }
  insertUser(instance: string, body: SqlUser) {
    return this.#api.request<SqlOperation>("POST", `${this.#instance(instance)}/users`, { body });
  }
  /** users.update: the user named in the query (name, host), its new password in the body. */
  updateUser(instance: string, name: string, body: SqlUser) {
    return this.#api.request<SqlOperation>("PUT", `${this.#instance(instance)}/users`, {
      query: { name, host: "" },
      body,
    });
  }
  deleteUser(instance: string, name: string) {
    return this.#api.request<SqlOperation>("DELETE", `${this.#instance(instance)}/users`, {
      query: { name, host: "" },
    });
  }
}

const clients = networkingClients("sqlEndpoint", "/sql/v1beta4", {
  api: "Cloud SQL Admin API",
  field: "spec.endpoint.sql",
  knownPhrases: NOT_PEERED_PHRASES,
});

/** The Cloud SQL Admin API of a configuration's project (one HTTP client per configuration). */
export const sqlApi = (c: GcpNetworkingConfig): SqlApi => new SqlApi(clients.get(c), c.projectId);

/** Cloud SQL's not-found (404 instanceDoesNotExist, notFound). */
export const isSqlNotFound = (err: unknown) => httpStatus(err) === 404;
/** Another write runs on the instance (409 operationInProgress, ABORTED): not a failure, a wait. */
export const isOperationInProgress = (err: unknown) =>
  err instanceof GoogleHttpError && (err.reason === "operationInProgress" || err.status === "ABORTED");
/** A 409 that says the name is taken (alreadyExists, instanceAlreadyExists), not that an operation runs. */
export const isSqlAlreadyExists = (err: unknown) => isAlreadyExists(err) && !isOperationInProgress(err);

/** An instance the DatabaseInstance kind manages: a PostgreSQL primary (no replica, no MySQL or SQL Server). */
export const isPostgresPrimary = (inst: SqlInstance) =>
  /^POSTGRES_/.test(inst.databaseVersion ?? "") &&
  (inst.instanceType === undefined || inst.instanceType === "CLOUD_SQL_INSTANCE");

/**
 * Runs a write on an instance (or its databases or users). Cloud SQL runs one operation per instance at a
 * time and refuses the next with 409 operationInProgress: that is a wait, said plainly, not a failure.
 */
export async function onInstance<T>(instance: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (!isOperationInProgress(err)) throw err;
    throw new Error(
      `an operation is running on Cloud SQL instance ${instance}; the change is sent once it is done`,
      { cause: err },
    );
  }
}

/** A delete whose target is already gone has done its work. */
export const unlessGone = (call: Promise<unknown>): Promise<void> => deleted(() => call, isSqlNotFound);

type InstanceChild = { instance?: string };

/**
 * The template of a Cloud SQL instance's child (database, user): found in the instance the spec names
 * (none named: nothing to find, nor was anything made), every write waits while another operation runs
 * on the instance, and deleting what is gone (with its instance) has done its work. A kind supplies
 * its read, insert, update and remove.
 */
export abstract class SqlChildClient<F extends InstanceChild, A> implements ExternalClient<F, A> {
  protected readonly sql: SqlApi;
  /** "database", "user": for messages. */
  protected abstract readonly what: string;
  constructor(sql: SqlApi) {
    this.sql = sql;
  }

  /** The child's observation; throws Cloud SQL's not-found when it (or its instance) is missing. */
  protected abstract read(
    mr: ManagedResource<F, A>,
    instance: string,
    name: string,
  ): Promise<ExternalObservation<F, A>>;
  /** What observe reports when there is no child. */
  protected async absent(_mr: ManagedResource<F, A>): Promise<ExternalObservation<F, A>> {
    return { resourceExists: false };
  }
  /** Inserts the child through write(); an insert an earlier attempt made is adopted. */
  protected abstract insert(
    mr: ManagedResource<F, A>,
    instance: string,
    name: string,
  ): Promise<ExternalCreation>;
  protected abstract remove(instance: string, name: string): Promise<unknown>;
  /** The names of the instance's children this kind manages (databases.list, users.list). */
  protected abstract names(instance: string): Promise<string[]>;
  abstract update(
    mr: ManagedResource<F, A>,
    name: string,
    obs: ExternalObservation<F, A>,
  ): Promise<ExternalUpdate>;

  /** Runs a write on the child's instance: errors classified, a running operation said to be a wait. */
  protected write<T>(instance: string, call: () => Promise<T>): Promise<T> {
    return gcp(() => onInstance(instance, call));
  }

  async observe(mr: ManagedResource<F, A>, name: string | undefined): Promise<ExternalObservation<F, A>> {
    const instance = mr.spec.forProvider.instance;
    if (!name || !instance) return { resourceExists: false };
    return gcp(async () => {
      try {
        return await this.read(mr, instance, name);
      } catch (err) {
        // The instance itself may be gone (404 instanceDoesNotExist): its children went with it.
        if (isSqlNotFound(err)) return this.absent(mr);
        throw err;
      }
    });
  }

  async create(mr: ManagedResource<F, A>, name: string | undefined) {
    if (!name) throw new Error(`a ${this.what} needs a name (crossplane.io/external-name)`);
    const instance = mr.spec.forProvider.instance;
    if (!instance)
      throw new InvalidSpecError(
        `spec.forProvider.instance (or instanceRef) is required to create a ${this.what}`,
      );
    return this.insert(mr, instance, name);
  }

  async delete(mr: ManagedResource<F, A>, name: string) {
    const instance = mr.spec.forProvider.instance;
    if (!instance) return;
    await this.write(instance, () => unlessGone(this.remove(instance, name)));
  }

  /**
   * Every child of the project's running PostgreSQL instances (`driftless import`), instance by instance:
   * its name, and its instance as the parent (a name is unique only within one instance). An instance
   * gone between the two lists has none to show.
   */
  async list(): Promise<ExternalListing[]> {
    return gcp(async () => {
      const out: ExternalListing[] = [];
      for (const inst of await this.sql.listInstances()) {
        if (!inst.name || !isPostgresPrimary(inst) || inst.state !== "RUNNABLE") continue;
        const instance = inst.name;
        const names = await this.names(instance).catch((err: unknown) => {
          if (isSqlNotFound(err)) return [];
          throw err;
        });
        for (const externalName of names)
          out.push({ externalName, forProvider: { instance }, parent: "instance" });
      }
      return out;
    });
  }
}

/**
 * A Cloud SQL kind's provider (the instance, its children): its client, made on the ProviderConfig's Cloud
 * SQL Admin API; `o` says the rest of the provider (cloud events, homes).
 */
export function sqlProvider<FS extends AnyObjectSchema, AS extends AnyObjectSchema>(
  definition: ManagedKindDef<FS, AS>,
  client: (
    sql: SqlApi,
    ctx: ConnectContext<GcpProviderConfigSpec>,
  ) => ExternalClient<z.infer<FS>, z.infer<AS>>,
  o: Pick<ManagedKindProvider, "cloudEvents" | "homeParents">,
) {
  return defineProvider({
    definition,
    ...o,
    async connect(ctx: ConnectContext<GcpProviderConfigSpec>) {
      return client(sqlApi(await gcpNetworkingConfig(ctx)), ctx);
    },
  });
}

/** A Cloud SQL child kind's provider: its name is built under the instance its spec names (its home). */
export const sqlChildProvider = <FS extends AnyObjectSchema, AS extends AnyObjectSchema>(
  definition: ManagedKindDef<FS, AS>,
  client: (
    sql: SqlApi,
    ctx: ConnectContext<GcpProviderConfigSpec>,
  ) => SqlChildClient<z.infer<FS>, z.infer<AS>>,
) => sqlProvider(definition, client, { homeParents: { instance: "instance" } });

/** A non-empty string, or undefined (an API may answer "" for a field not set). */
export const text = (v: string | null | undefined) => (v ? v : undefined);

// The password kept in the connection Secret (generated before create, or the user's, rotated) is the
// cloud-neutral one every database kind shares.
export { ConnectionPassword, PASSWORD_KEY } from "../connection-password.ts";
