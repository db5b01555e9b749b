import { createHash, createPrivateKey, createPublicKey, sign, verify } from "node:crypto";
import { GoogleAuth, JWT } from "google-auth-library";
import {
  type ConnectContext,
  CredentialsError,
  InvalidSpecError,
  ThrottledError,
} from "../../api/external.ts";
import type { GcpProviderConfigSpec } from "../../api/provider-config.ts";
import { checkEndpoint, NO_EXTRA_HOSTS } from "../endpoints.ts";

/** The two fields of a service-account key the SDKs need to sign their tokens. */
export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
}

/** What every Google Cloud SDK client of a managed kind is built from. */
export interface GcpClientConfig {
  projectId: string;
  /** Absent: the ambient identity (Application Default Credentials, e.g. workload identity). */
  credentials?: ServiceAccountKey;
  /** Pub/Sub host:port, checked and normalised (see ../endpoints.ts); absent: the production API. */
  pubsubEndpoint?: string;
  /** Cloud Storage base URL, checked and normalised; absent: the production API. */
  storageEndpoint?: string;
  /** Cache key: same ProviderConfig generation, endpoints and credentials → same SDK client. */
  cacheKey: string;
}

export const PUBSUB_PRODUCTION_ENDPOINT = "pubsub.googleapis.com";
const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

const keyError = (why: string) =>
  new CredentialsError(`credentials must be a service-account key JSON (as downloaded from IAM): ${why}`);

/**
 * Reads a service-account key JSON, the way Crossplane's GCP provider stores it in a Secret. Error
 * messages never quote the input: it is a secret.
 */
export function parseServiceAccountKey(text: string): ServiceAccountKey {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSON.parse's own message quotes the text around the fault, i.e. part of the key.
    throw keyError("it is not valid JSON");
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    throw keyError("it is not a JSON object");
  }
  const k = json as Record<string, unknown>;
  if (k.type !== undefined && k.type !== "service_account") {
    // The value is not quoted: it is text from the Secret.
    throw keyError("its type is not service_account; only service_account keys are supported");
  }
  if (typeof k.client_email !== "string" || !k.client_email.includes("@")) {
    throw keyError("client_email is missing");
  }
  if (typeof k.private_key !== "string" || k.private_key === "") throw keyError("private_key is missing");
  try {
    createPrivateKey(k.private_key);
  } catch {
    throw keyError("private_key is not a PEM-encoded private key");
  }
  return {
    client_email: k.client_email,
    private_key: k.private_key,
    ...(typeof k.private_key_id === "string" ? { private_key_id: k.private_key_id } : {}),
  };
}

const fingerprint = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 16);

export async function gcpClientConfig(ctx: ConnectContext<GcpProviderConfigSpec>): Promise<GcpClientConfig> {
  const pc = ctx.providerConfig;
  const spec = pc.spec;
  let credentials: ServiceAccountKey | undefined;
  let secretPrint = "ambient";
  if (spec.credentials.source === "Secret") {
    if (!spec.credentials.secretRef) {
      throw new CredentialsError("credentials.source is Secret but credentials.secretRef is not set");
    }
    const text = await ctx.readSecretKey(spec.credentials.secretRef);
    credentials = parseServiceAccountKey(text);
    secretPrint = fingerprint(text);
  }
  // Checked before use: only Google's own hosts get a token (authFor in google-rest.ts);
  // anything else must be loopback or listed by the platform, and the clients get the normalised text.
  const pubsubEndpoint = spec.endpoint?.pubsub
    ? checkEndpoint("gcp", "spec.endpoint.pubsub", spec.endpoint.pubsub, { hostPort: true }).url
    : undefined;
  const storageEndpoint = spec.endpoint?.storage
    ? checkEndpoint("gcp", "spec.endpoint.storage", spec.endpoint.storage).url
    : undefined;
  // generation, not resourceVersion: status writes (users count) must not churn clients.
  const generation = pc.metadata.generation ?? pc.metadata.resourceVersion;
  return {
    projectId: spec.projectID,
    ...(credentials ? { credentials } : {}),
    ...(pubsubEndpoint ? { pubsubEndpoint } : {}),
    ...(storageEndpoint ? { storageEndpoint } : {}),
    cacheKey: `${pc.metadata.uid}/${generation}/${spec.projectID}/${pubsubEndpoint}/${storageEndpoint}/${secretPrint}`,
  };
}

const jwtOf = (key: ServiceAccountKey) =>
  new JWT({
    email: key.client_email,
    key: key.private_key,
    ...(key.private_key_id ? { keyId: key.private_key_id } : {}),
    scopes: [CLOUD_PLATFORM_SCOPE],
  });

/**
 * Whether an endpoint override is one of Google's own hosts (private or regional endpoints) rather than
 * an emulator: only Google's hosts get TLS and credentials (google-rest.ts's authFor, pubsub-api.ts).
 */
export function isGoogleEndpoint(endpoint: string | undefined): boolean {
  if (endpoint === undefined) return true;
  try {
    // With no extra host allowed, only Google's own hosts pass.
    return (
      checkEndpoint("gcp", "endpoint", endpoint, { hostPort: true, policy: NO_EXTRA_HOSTS }).trust === "cloud"
    );
  } catch {
    return false;
  }
}

/** SDK clients are made once per container and configuration, as Cloud Functions guidance says. */
export class GcpClientCache<T> {
  readonly #clients = new Map<string, T>();
  readonly #make: (c: GcpClientConfig) => T;
  readonly #close: ((client: T) => unknown) | undefined;
  constructor(make: (c: GcpClientConfig) => T, close?: (client: T) => unknown) {
    this.#make = make;
    this.#close = close;
  }
  get(c: GcpClientConfig): T {
    let client = this.#clients.get(c.cacheKey);
    if (!client) {
      client = this.#make(c);
      // One ProviderConfig generation needs few clients; forget old generations rather than grow.
      if (this.#clients.size > 64) {
        for (const old of this.#clients.values())
          void Promise.resolve(this.#close?.(old)).catch(() => undefined);
        this.#clients.clear();
      }
      this.#clients.set(c.cacheKey, client);
    }
    return client;
  }
  get size() {
    return this.#clients.size;
  }
}

// gRPC status codes (google.rpc.Code) the classification needs.
export const GrpcCode = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  OUT_OF_RANGE: 11,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

interface GoogleErrorShape {
  code?: unknown;
  status?: unknown;
  details?: unknown;
  message?: unknown;
  response?: { status?: unknown; data?: unknown };
}

/** The gRPC status code of a Pub/Sub (google-gax) error. */
export function grpcCode(err: unknown): number | undefined {
  const e = err as GoogleErrorShape;
  // gax errors carry `details` and `metadata`; a small integer code without them is an HTTP-less gRPC code too.
  return typeof e?.code === "number" && e.code >= 0 && e.code <= 16 ? e.code : undefined;
}

/** The HTTP status of a Google JSON API error (GoogleHttpError's `code`, a GaxiosError's `status`). */
export function httpStatus(err: unknown): number | undefined {
  const e = err as GoogleErrorShape;
  for (const v of [e?.code, e?.status, e?.response?.status])
    if (typeof v === "number" && v >= 100 && v < 600) return v;
  return undefined;
}

export const isNotFound = (err: unknown) => grpcCode(err) === GrpcCode.NOT_FOUND || httpStatus(err) === 404;
export const isAlreadyExists = (err: unknown) =>
  grpcCode(err) === GrpcCode.ALREADY_EXISTS || httpStatus(err) === 409;

const messageOf = (err: unknown) => {
  const m = (err as GoogleErrorShape)?.message;
  return typeof m === "string" ? m : String(err);
};

/** An OAuth token endpoint's refusal ({error: "invalid_grant", …}), as opposed to an API error body. */
const isTokenError = (err: unknown) => {
  const data = (err as GoogleErrorShape)?.response?.data;
  return typeof data === "object" && data !== null && typeof (data as { error?: unknown }).error === "string";
};

/** Maps a Google Cloud SDK error (gRPC or HTTP) onto our error classes (the engine branches on them). */
export function classifyGcpError(err: unknown): Error {
  if (err instanceof ThrottledError || err instanceof CredentialsError || err instanceof InvalidSpecError) {
    return err;
  }
  const code = grpcCode(err);
  const status = code === undefined ? httpStatus(err) : undefined;
  const message = messageOf(err);
  const text =
    status !== undefined && !message.startsWith(String(status)) && !message.startsWith(`HTTP ${status}`)
      ? `HTTP ${status}: ${message}`
      : message;
  if (code === GrpcCode.RESOURCE_EXHAUSTED || status === 429 || status === 503) {
    return new ThrottledError(`throttled by Google Cloud (${text})`, { cause: err });
  }
  if (
    code === GrpcCode.UNAUTHENTICATED ||
    code === GrpcCode.PERMISSION_DENIED ||
    status === 401 ||
    status === 403 ||
    isTokenError(err) ||
    // gRPC reports a failure to mint a token (refused key, no ambient identity) as UNAVAILABLE.
    (code === GrpcCode.UNAVAILABLE && message.includes("Getting metadata from plugin failed")) ||
    message.includes("Could not load the default credentials")
  ) {
    return new CredentialsError(text, { cause: err });
  }
  if (code === GrpcCode.INVALID_ARGUMENT || code === GrpcCode.OUT_OF_RANGE || status === 400) {
    return new InvalidSpecError(text, { cause: err });
  }
  // UNAVAILABLE stays a plain error: it also means "cannot connect", which backing off as throttling would hide.
  return err instanceof Error ? err : new Error(text);
}

/** Runs an SDK call, classifying its error. */
export async function gcp<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw classifyGcpError(err);
  }
}

/**
 * A protobuf Duration as the SDKs hand it over: `{seconds, nanos}` (seconds may be a string or Long), or
 * seconds; or its JSON form as the REST APIs answer it ("600s", "10.500s").
 */
export type ProtoDuration = { seconds?: unknown; nanos?: unknown } | number | string | null | undefined;

/** Protobuf Duration (the SDK's `{seconds, nanos}`, or JSON's "10.500s") → "600s" / "10.5s". */
export function durationText(d: ProtoDuration): string | undefined {
  if (d === null || d === undefined) return undefined;
  if (typeof d === "number") return `${d}s`;
  if (typeof d === "string") {
    const m = /^(\d+)(?:\.(\d{1,9}))?s$/.exec(d);
    return m ? durationText({ seconds: m[1], nanos: Number((m[2] ?? "").padEnd(9, "0")) }) : d;
  }
  const seconds = BigInt(String(d.seconds ?? 0));
  const nanos = Number(d.nanos ?? 0);
  const fraction = nanos > 0 ? `.${String(nanos).padStart(9, "0").replace(/0+$/, "")}` : "";
  return `${seconds}${fraction}s`;
}

/** "600s" / "3.5s" → protobuf Duration. */
export function durationProto(text: string): { seconds: number; nanos: number } {
  const m = /^(\d+)(?:\.(\d{1,9}))?s$/.exec(text);
  if (!m) {
    throw new InvalidSpecError(`invalid duration ${JSON.stringify(text)}: use seconds with an "s" suffix`);
  }
  return { seconds: Number(m[1]), nanos: Number((m[2] ?? "").padEnd(9, "0")) };
}

/** Labels the cloud reports, for comparison: only when the spec manages them or the cloud has some. */
export function observedLabels(
  spec: Record<string, string> | undefined,
  cloud: Record<string, string> | null | undefined,
) {
  const labels = cloud ?? {};
  return spec !== undefined || Object.keys(labels).length > 0 ? { ...labels } : undefined;
}

/** The cloud's duration as the spec spells it when they mean the same time ("600.500s" = "600.5s"). */
export function observedDuration(spec: string | undefined, cloud: ProtoDuration): string | undefined {
  const text = durationText(cloud);
  if (text === undefined || spec === undefined) return text;
  try {
    const a = durationProto(spec);
    const b = durationProto(text);
    return a.seconds === b.seconds && a.nanos === b.nanos ? spec : text;
  } catch {
    return text;
  }
}

/** Order-insensitive equality of two label maps. */
export function sameLabels(
  a: Record<string, string> | undefined,
  b: Record<string, string> | undefined,
): boolean {
  const ak = Object.keys(a ?? {});
  return ak.length === Object.keys(b ?? {}).length && ak.every((k) => a?.[k] === b?.[k]);
}

/** The cloud's list in the spec's order when both hold the same items (the cloud may reorder). */
export function observedSet(spec: string[] | undefined, cloud: string[]): string[] {
  if (spec && spec.length === cloud.length && spec.every((x) => cloud.includes(x))) return [...spec];
  return [...cloud];
}

/**
 * The ProviderConfig's credential check: an access token from Google's token endpoint. When every
 * endpoint is an emulator, no token is ever used and Google cannot be asked offline, so the key is
 * only proven to sign locally, and the answer says so.
 */
export async function checkGcpCredentials(ctx: ConnectContext<GcpProviderConfigSpec>): Promise<string> {
  const cfg = await gcpClientConfig(ctx);
  const who = cfg.credentials ? `service account ${cfg.credentials.client_email}` : "the injected identity";
  // Every API a GCP kind calls: an endpoint left unset is Google's own.
  const rest = ctx.providerConfig.spec.endpoint ?? {};
  const others = [rest.sql, rest.compute, rest.serviceNetworking];
  // Cloud Asset (`driftless orphans`), when set, is asked too.
  if (
    !isGoogleEndpoint(cfg.pubsubEndpoint) &&
    !isGoogleEndpoint(cfg.storageEndpoint) &&
    others.every((e) => e !== undefined && !isGoogleEndpoint(e)) &&
    (rest.cloudAsset === undefined || !isGoogleEndpoint(rest.cloudAsset))
  ) {
    if (cfg.credentials) {
      const probe = Buffer.from("driftless credential check");
      const signature = sign("sha256", probe, cfg.credentials.private_key);
      if (!verify("sha256", probe, createPublicKey(cfg.credentials.private_key), signature)) {
        throw new CredentialsError("the service-account key cannot sign");
      }
    }
    return `${who} in project ${cfg.projectId}; not verified with Google: every endpoint is an emulator, which accepts any credentials`;
  }
  await gcp<unknown>(() =>
    cfg.credentials
      ? jwtOf(cfg.credentials).getAccessToken()
      : new GoogleAuth({ scopes: [CLOUD_PLATFORM_SCOPE] }).getAccessToken(),
  );
  return `${who} in project ${cfg.projectId}`;
}
