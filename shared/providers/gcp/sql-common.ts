import { SqlDatabasesServiceClient } from "@google-cloud/sql/build/src/v1beta4/sql_databases_service_client.js";
import { SqlInstancesServiceClient } from "@google-cloud/sql/build/src/v1beta4/sql_instances_service_client.js";
import { SqlOperationsServiceClient } from "@google-cloud/sql/build/src/v1beta4/sql_operations_service_client.js";
import { SqlUsersServiceClient } from "@google-cloud/sql/build/src/v1beta4/sql_users_service_client.js";
import { GoogleAuth } from "google-auth-library";
import { DRIFTLESS_USER_AGENT } from "../../api/cloud-events.ts";
import { GcpClientCache, GrpcCode, grpcCode, httpStatus } from "./config.ts";
import { authFor, type GcpNetworkingConfig } from "./google-rest.ts";

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

const clients = new GcpClientCache<SqlClients>((c) => {
  const o = sqlOptions(c as GcpNetworkingConfig);
  return {
    instances: new SqlInstancesServiceClient(o),
    databases: new SqlDatabasesServiceClient(o),
    users: new SqlUsersServiceClient(o),
    operations: new SqlOperationsServiceClient(o),
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
export async function unlessGone(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (err) {
    if (!isSqlNotFound(err)) throw err;
  }
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
