import { SqlDatabasesServiceClient } from "@google-cloud/sql/build/src/v1beta4/sql_databases_service_client.js";
import { SqlInstancesServiceClient } from "@google-cloud/sql/build/src/v1beta4/sql_instances_service_client.js";
import { SqlOperationsServiceClient } from "@google-cloud/sql/build/src/v1beta4/sql_operations_service_client.js";
import { SqlUsersServiceClient } from "@google-cloud/sql/build/src/v1beta4/sql_users_service_client.js";
import { GoogleAuth } from "google-auth-library";
import type { z } from "zod";
import { DRIFTLESS_USER_AGENT } from "../../api/cloud-events.ts";
import {
  type ConnectContext,
  defineProvider,
  type ExternalClient,
  type ExternalCreation,
  type ExternalObservation,
  type ExternalUpdate,
  InvalidSpecError,
} from "../../api/external.ts";
import type { AnyObjectSchema, ManagedKindDef, ManagedResource } from "../../api/managed.ts";
import type { GcpProviderConfigSpec } from "../../api/provider-config.ts";
import { deleted } from "../deleted.ts";
import { GcpClientCache, GrpcCode, gcp, grpcCode, httpStatus, isGoogleEndpoint } from "./config.ts";
import { authFor, type GcpNetworkingConfig, GOOGLE_RPC_CODES, gcpNetworkingConfig } from "./google-rest.ts";

export interface SqlClients {
  instances: SqlInstancesServiceClient;
  databases: SqlDatabasesServiceClient;
  users: SqlUsersServiceClient;
  operations: SqlOperationsServiceClient;
}

/** The client options of one base URL: REST (`fallback`), host, port and scheme from the checked URL. */
function sqlOptions(c: GcpNetworkingConfig) {
  const url = new URL(c.sqlEndpoint);
  const https = url.protocol === "https:";
  const auth = authFor(c.sqlEndpoint, c.credentials);
  return {
    fallback: true,
    apiEndpoint: url.hostname,
    port: Number(url.port || (https ? 443 : 80)),
    protocol: https ? "https" : "http",
    projectId: c.projectId,
    ...(auth instanceof GoogleAuth ? { auth } : { authClient: auth }),
  };
}

/** A reason Google's error may carry: an identifier (instanceDoesNotExist), nothing longer. */
const REASON = /^[A-Za-z][A-Za-z0-9_.]{0,63}$/;

/**
 * An error of a Cloud SQL call to a host that is not Google's (an endpoint a ProviderConfig author chose):
 * a redirect, or an answer gax cannot decode (it quotes a web server's or a redirect's body), keeps its
 * HTTP status, gRPC code and reason, never its text: the error ends in the resource's status, which
 * everyone who reads the resource sees.
 */
function withoutForeignText(err: unknown, endpoint: string): unknown {
  if (!(err instanceof Error)) return err;
  const { code, reason, httpStatusCode } = err as Error & {
    code?: unknown;
    reason?: unknown;
    httpStatusCode?: unknown;
  };
  const redirected = typeof httpStatusCode === "number" && httpStatusCode >= 300 && httpStatusCode < 400;
  // gax says so when an answer was not Google's JSON error document, and quotes it: that text never passes.
  // A JSON error's own `message` (an emulator's, or a fake's, words in Google's error shape) does.
  if (!redirected && !/could not be decoded/.test(err.message)) return err;
  const rpc = typeof code === "number" ? (GOOGLE_RPC_CODES[code - 1] ?? `code ${code}`) : "an error";
  const http = typeof httpStatusCode === "number" ? `HTTP ${httpStatusCode}, ` : "";
  const known = typeof reason === "string" && REASON.test(reason) ? reason : undefined;
  const redirect = redirected
    ? ": a redirect, which is not followed; spec.endpoint.sql must name the API's server itself"
    : "";
  const safe = new Error(
    `the Cloud SQL endpoint ${endpoint} answered ${http}${rpc}${known ? ` (${known})` : ""}${redirect}`,
  );
  return Object.assign(safe, { code, ...(known ? { reason: known } : {}) });
}

/** A client whose calls' errors quote no redirect or undecodable answer of a host that is not Google's. */
function foreignSafe<C extends object>(client: C, endpoint: string): C {
  if (isGoogleEndpoint(endpoint)) return client;
  return new Proxy(client, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver) as unknown;
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        const out = (v as (...a: unknown[]) => unknown).apply(target, args);
        return out instanceof Promise
          ? out.catch((err: unknown) => {
              throw withoutForeignText(err, endpoint);
            })
          : out;
      };
    },
  });
}

const clients = new GcpClientCache<SqlClients>((c) => {
  const cfg = c as GcpNetworkingConfig;
  const o = sqlOptions(cfg);
  return {
    instances: foreignSafe(new SqlInstancesServiceClient(o), cfg.sqlEndpoint),
    databases: foreignSafe(new SqlDatabasesServiceClient(o), cfg.sqlEndpoint),
    users: foreignSafe(new SqlUsersServiceClient(o), cfg.sqlEndpoint),
    operations: foreignSafe(new SqlOperationsServiceClient(o), cfg.sqlEndpoint),
  };
});

export const sqlClients = (c: GcpNetworkingConfig): SqlClients => clients.get(c);

/**
 * Call options of every write: the user agent Cloud Audit Logs record (callerSuppliedUserAgent), by which
 * the cloud-event path drops driftless's own writes (docs/cloud-events.md).
 */
export const WRITE = { otherArgs: { headers: { "User-Agent": DRIFTLESS_USER_AGENT } } };

/** Cloud SQL's not-found (404 instanceDoesNotExist, notFound). */
export const isSqlNotFound = (err: unknown) =>
  grpcCode(err) === GrpcCode.NOT_FOUND || httpStatus(err) === 404;
/** Another write runs on the instance (409 operationInProgress): not a failure, a wait. */
export const isOperationInProgress = (err: unknown) =>
  grpcCode(err) === 10 /* ABORTED */ || /operation.*in progress/i.test((err as Error)?.message ?? "");

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
      {
        cause: err,
      },
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
  protected readonly sql: SqlClients;
  protected readonly project: string;
  /** "database", "user": for messages. */
  protected abstract readonly what: string;
  constructor(sql: SqlClients, project: string) {
    this.sql = sql;
    this.project = project;
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
}

/** A Cloud SQL child kind's provider: its client, made on the ProviderConfig's Cloud SQL clients. */
export function sqlChildProvider<FS extends AnyObjectSchema, AS extends AnyObjectSchema>(
  definition: ManagedKindDef<FS, AS>,
  client: (
    sql: SqlClients,
    project: string,
    ctx: ConnectContext<GcpProviderConfigSpec>,
  ) => SqlChildClient<z.infer<FS>, z.infer<AS>>,
) {
  return defineProvider({
    definition,
    async connect(ctx: ConnectContext<GcpProviderConfigSpec>) {
      const cfg = await gcpNetworkingConfig(ctx);
      return client(sqlClients(cfg), cfg.projectId, ctx);
    },
  });
}

/** A protobuf wrapper (`{value}`) or plain value as the REST client hands it over → the plain value. */
export function unwrap<T>(v: T | { value?: T | null } | null | undefined): T | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === "object" && v !== null && "value" in (v as object))
    return ((v as { value?: T | null }).value ?? undefined) as T | undefined;
  return v as T;
}

/** A non-empty string, or undefined (the client fills unset strings with ""). */
export const text = (v: string | null | undefined) => (v ? v : undefined);

export const defined = <T extends Record<string, unknown>>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

// The password kept in the connection Secret (generated before create, or the user's, rotated) is the
// cloud-neutral one every database kind shares.
export { ConnectionPassword, PASSWORD_KEY } from "../connection-password.ts";
