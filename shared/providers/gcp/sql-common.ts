// What the Cloud SQL kinds share: the Cloud SQL Admin clients (the real @google-cloud/sql, REST
// transport, imported per service so the bundle carries only their definitions), and the password kept
// in the connection Secret (generated, or taken from a Secret and rotated).
import { createHmac, randomBytes, randomInt } from "node:crypto";
import { SqlDatabasesServiceClient } from "@google-cloud/sql/build/src/v1beta4/sql_databases_service_client.js";
import { SqlInstancesServiceClient } from "@google-cloud/sql/build/src/v1beta4/sql_instances_service_client.js";
import { SqlOperationsServiceClient } from "@google-cloud/sql/build/src/v1beta4/sql_operations_service_client.js";
import { SqlUsersServiceClient } from "@google-cloud/sql/build/src/v1beta4/sql_users_service_client.js";
import { GoogleAuth } from "google-auth-library";
import { DRIFTLESS_USER_AGENT } from "../../api/cloud-events.ts";
import {
  type ConnectionDetails,
  CredentialsError,
  type ExternalObservation,
  InvalidSpecError,
} from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { SecretKeySelector } from "../../api/meta.ts";
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

/** The connection Secret key that holds a password. */
export const PASSWORD_KEY = "password";
const LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const ALPHANUMERIC = `${LETTERS}0123456789`;

/** A strong password PostgreSQL takes anywhere (letters and digits, a letter first), ~178 bits. */
export function generatePassword(): string {
  let pw = LETTERS.charAt(randomInt(LETTERS.length));
  while (pw.length < 30) pw += ALPHANUMERIC.charAt(randomInt(ALPHANUMERIC.length));
  return pw;
}

// Which password this process last set on which resource, as an HMAC under a key that never leaves
// memory: it only bridges the engine's Secret cache (stale for a short TTL) right after a rotation.
const PROCESS_KEY = randomBytes(32);
const passwordsSet = new Map<string, string>();
const fingerprint = (uid: string, password: string) =>
  createHmac("sha256", PROCESS_KEY).update(uid).update("\0").update(password).digest("hex");

/**
 * A password kept in the connection Secret: generated before create (published by the engine before
 * the create call, so it survives a crash), or taken from a Secret the user names and rotated when that
 * changes (compared with the connection Secret: nothing about it is stored anywhere else).
 */
export class ConnectionPassword<F, A> {
  readonly #read: (ref: SecretKeySelector) => Promise<string>;
  readonly #field: string;
  /** The password update() must set, handed over from observe() outside the observation's fields. */
  readonly #toSet = new WeakMap<ExternalObservation<F, A>, string>();
  constructor(read: (ref: SecretKeySelector) => Promise<string>, field: string) {
    this.#read = read;
    this.#field = field;
  }

  async #optional(ref: SecretKeySelector): Promise<string | undefined> {
    try {
      return await this.#read(ref);
    } catch (err) {
      if (err instanceof CredentialsError) return undefined;
      throw err;
    }
  }

  async #wanted(ref: SecretKeySelector): Promise<string> {
    const value = await this.#optional(ref);
    if (value === undefined)
      throw new Error(
        `cannot read the password: Secret ${ref.namespace}/${ref.name} or its key "${ref.key}" does not exist (spec.forProvider.${this.#field})`,
      );
    if (value.length === 0)
      throw new InvalidSpecError(
        `the password in Secret ${ref.namespace}/${ref.name} key "${ref.key}" is empty`,
      );
    return value;
  }

  #published(mr: ManagedResource<F, A>): SecretKeySelector | undefined {
    const ref = mr.spec.writeConnectionSecretToRef;
    return ref ? { namespace: ref.namespace, name: ref.name, key: PASSWORD_KEY } : undefined;
  }

  /** Details for a resource not created yet: a generated password, unless one is already published. */
  async beforeCreate(
    mr: ManagedResource<F, A>,
    ref: SecretKeySelector | undefined,
  ): Promise<ConnectionDetails | undefined> {
    const published = this.#published(mr);
    if (ref || !published || mr.metadata.deletionTimestamp) return undefined;
    // A password of an earlier, interrupted attempt is kept: it may already be the resource's.
    if ((await this.#optional(published)) !== undefined) return undefined;
    return { [PASSWORD_KEY]: generatePassword() };
  }

  /** The password to create with: the user's, or the generated one read back from the connection Secret. */
  async forCreate(mr: ManagedResource<F, A>, ref: SecretKeySelector | undefined): Promise<string> {
    if (ref) return this.#wanted(ref);
    const published = this.#published(mr);
    if (!published)
      throw new InvalidSpecError(
        `a generated password is kept only in the connection Secret: set spec.writeConnectionSecretToRef, or set spec.forProvider.${this.#field}`,
      );
    const password = await this.#optional(published);
    // Never create something whose password nobody could read back.
    if (password === undefined)
      throw new Error("the generated password is not in the connection Secret yet; retrying");
    return password;
  }

  /** Rotation: a user's password that differs from the published one makes the resource out of date. */
  async check(mr: ManagedResource<F, A>, ref: SecretKeySelector | undefined, obs: ExternalObservation<F, A>) {
    const published = this.#published(mr);
    if (!ref || !published) return;
    const wanted = await this.#wanted(ref);
    if ((await this.#optional(published)) === wanted) return;
    const uid = mr.metadata.uid ?? "";
    if (uid && passwordsSet.get(uid) === fingerprint(uid, wanted)) {
      // Set by this process already; the cached Secret read is older than that: publish, don't set again.
      obs.connectionDetails = { ...obs.connectionDetails, [PASSWORD_KEY]: wanted };
      return;
    }
    this.#toSet.set(obs, wanted);
    obs.resourceUpToDate = false;
  }

  /** The password observe() found to be set, if any. */
  toSet(obs: ExternalObservation<F, A>): string | undefined {
    return this.#toSet.get(obs);
  }

  remember(mr: ManagedResource<F, A>, password: string) {
    const uid = mr.metadata.uid;
    if (!uid) return;
    if (passwordsSet.size > 4096) passwordsSet.clear();
    passwordsSet.set(uid, fingerprint(uid, password));
  }
}
