// The Google JSON APIs' way to Google: where the Cloud SQL Admin, Compute Engine and Service Networking
// calls go (the ProviderConfig's endpoint overrides, checked), with which identity, and a small
// JSON-over-HTTPS client for Cloud SQL, Compute, Service Networking, Cloud Storage and the generic kinds
// (docs/adr/0002-gcp-rest-clients.md says why not their Node clients).

import { type AuthClient, GoogleAuth, JWT, PassThroughClient } from "google-auth-library";
import { DRIFTLESS_USER_AGENT } from "../../api/cloud-events.ts";
import type { ConnectContext } from "../../api/external.ts";
import type { GcpProviderConfigSpec } from "../../api/provider-config.ts";
import { namedError } from "../../named-error.ts";
import { endpointMismatch, isHtml } from "../answers.ts";
import { checkEndpoint } from "../endpoints.ts";
import {
  GcpClientCache,
  type GcpClientConfig,
  gcpClientConfig,
  isGoogleEndpoint,
  type ServiceAccountKey,
} from "./config.ts";

export const SQL_PRODUCTION_ENDPOINT = "https://sqladmin.googleapis.com";
export const COMPUTE_PRODUCTION_ENDPOINT = "https://compute.googleapis.com";
export const SERVICE_NETWORKING_PRODUCTION_ENDPOINT = "https://servicenetworking.googleapis.com";
export const STORAGE_PRODUCTION_ENDPOINT = "https://storage.googleapis.com";
const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

/** A GCP client configuration plus the base URLs of the APIs private networking uses. */
export interface GcpNetworkingConfig extends GcpClientConfig {
  sqlEndpoint: string;
  computeEndpoint: string;
  serviceNetworkingEndpoint: string;
}

/** The ProviderConfig's project, credentials and the three base URLs (checked, normalised). */
export async function gcpNetworkingConfig(
  ctx: ConnectContext<GcpProviderConfigSpec>,
): Promise<GcpNetworkingConfig> {
  const base = await gcpClientConfig(ctx);
  const endpoint = ctx.providerConfig.spec.endpoint;
  const checked = (field: "sql" | "compute" | "serviceNetworking", fallback: string) => {
    const raw = endpoint?.[field];
    return raw ? checkEndpoint("gcp", `spec.endpoint.${field}`, raw).url : fallback;
  };
  const sqlEndpoint = checked("sql", SQL_PRODUCTION_ENDPOINT);
  const computeEndpoint = checked("compute", COMPUTE_PRODUCTION_ENDPOINT);
  const serviceNetworkingEndpoint = checked("serviceNetworking", SERVICE_NETWORKING_PRODUCTION_ENDPOINT);
  return {
    ...base,
    sqlEndpoint,
    computeEndpoint,
    serviceNetworkingEndpoint,
    cacheKey: `${base.cacheKey}/${sqlEndpoint}/${computeEndpoint}/${serviceNetworkingEndpoint}`,
  };
}

/**
 * The REST clients of one private-networking API, one per configuration: its base URL (`endpoint`, checked
 * by gcpNetworkingConfig) plus the API's path, signed as authFor says.
 */
export function networkingClients(
  endpoint: "sqlEndpoint" | "computeEndpoint" | "serviceNetworkingEndpoint",
  path: string,
  opts?: GoogleRestOptions,
): GcpClientCache<GoogleRestClient> {
  return new GcpClientCache((c) => {
    const cfg = c as GcpNetworkingConfig;
    return new GoogleRestClient(`${cfg[endpoint]}${path}`, authFor(cfg[endpoint], cfg.credentials), opts);
  });
}

/**
 * Who signs requests to a base URL: nobody for a host that is not Google's (an emulator or fake never
 * sees the key or the ambient token, as with Pub/Sub and Storage), else the key or the ambient identity.
 */
export function authFor(
  endpoint: string,
  credentials: ServiceAccountKey | undefined,
): AuthClient | GoogleAuth {
  if (!isGoogleEndpoint(endpoint)) return new PassThroughClient();
  if (credentials)
    return new JWT({
      email: credentials.client_email,
      key: credentials.private_key,
      ...(credentials.private_key_id ? { keyId: credentials.private_key_id } : {}),
      scopes: [CLOUD_PLATFORM_SCOPE],
    });
  return new GoogleAuth({ scopes: [CLOUD_PLATFORM_SCOPE] });
}

/** google.rpc.Code's names: the only `error.status` an answer's status is kept as (never other text). */
export const GOOGLE_RPC_CODES = [
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
] as const;
export type GoogleRpcCode = (typeof GOOGLE_RPC_CODES)[number];
const isRpcCode = (x: unknown): x is GoogleRpcCode =>
  typeof x === "string" && (GOOGLE_RPC_CODES as readonly string[]).includes(x);

/** An HTTP error of a Google JSON API: `code` is the HTTP status, as config.ts's classification reads it. */
export class GoogleHttpError extends namedError("GoogleHttpError", Error) {
  readonly code: number;
  /** The first error's `reason` (alreadyExists, notFound, resourceInUseByAnotherResource …), or ErrorInfo's. */
  readonly reason: string | undefined;
  /** Google's canonical status (`error.status`: FAILED_PRECONDITION, ABORTED …), which the HTTP code does not tell. */
  readonly status: GoogleRpcCode | undefined;
  constructor(code: number, message: string, reason: string | undefined, status?: string) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.status = isRpcCode(status) ? status : undefined;
  }
}

type Json = Record<string, unknown>;

/** A reason Google's error body may carry: an identifier (alreadyExists, notFound), nothing longer. */
const REASON = /^[A-Za-z][A-Za-z0-9_.]{0,63}$/;

interface ErrorBody {
  error?: {
    message?: unknown;
    status?: unknown;
    errors?: Array<{ reason?: unknown }>;
    details?: Array<{ "@type"?: unknown; reason?: unknown }>;
  };
}

/**
 * An error answer: its status, content type, Google's canonical status and reason code (the v1 `errors[0]`
 * reason, else the google.rpc.ErrorInfo detail's, AIP-193). Google's own message is kept only for Google's
 * own hosts; the body of any other host (an endpoint a ProviderConfig author chose) is never copied, since
 * the error ends in the resource's status, which everyone who reads the resource sees.
 */
function errorOf(
  status: number,
  contentType: string | undefined,
  text: string,
  google: boolean,
  phrases: readonly string[],
) {
  let message: unknown;
  let reason: unknown;
  let rpc: unknown;
  try {
    const body = JSON.parse(text) as ErrorBody;
    message = body.error?.message;
    rpc = body.error?.status;
    reason =
      body.error?.errors?.[0]?.reason ??
      body.error?.details?.find((d) => d["@type"] === "type.googleapis.com/google.rpc.ErrorInfo")?.reason;
  } catch {
    // Not Google's error body: status and content type only.
  }
  const known = typeof reason === "string" && REASON.test(reason) ? reason : undefined;
  const canonical = isRpcCode(rpc) ? rpc : undefined;
  const said = [canonical, known].filter(Boolean).join(", ");
  // The API's own fixed phrases found in the text, never the text around them.
  const quoted = typeof message === "string" ? phrases.filter((p) => message.includes(p)) : [];
  const plain = `HTTP ${status} (${contentType ? `Content-Type ${contentType}` : "no Content-Type"})${said ? `: ${said}` : ""}${quoted.length ? `; it says ${quoted.join(", ")}` : ""}`;
  return new GoogleHttpError(
    status,
    google && typeof message === "string" ? message : plain,
    known,
    canonical,
  );
}

/** What a client's errors call its API and the ProviderConfig field that points to it. */
export interface GoogleRestOptions {
  /** The API an endpoint that answers otherwise does not speak ("Cloud Storage JSON API"). */
  api?: string;
  /** The field to fix ("spec.endpoint.storage"). */
  field?: string;
  timeoutMs?: number;
  /**
   * Fixed phrases the API is known to put in an error's message that a caller explains (Cloud SQL's
   * NETWORK_NOT_PEERED): from a host that is not Google's, those found pass into the error, nothing else.
   */
  knownPhrases?: readonly string[];
}

/**
 * JSON over HTTP(S) to one Google API: a path under the base URL, an optional body, the auth client's
 * headers, and a rate-limit token per request. Bounded by a timeout, so a silent endpoint cannot hang a
 * reconcile. Redirects are not followed; an answer's body reaches an error only when Google sent it.
 */
export class GoogleRestClient {
  /** Where every path goes, without a trailing slash. */
  readonly base: string;
  /** Who signs the requests (authFor): PassThroughClient sends no credentials. */
  readonly auth: AuthClient | GoogleAuth;
  readonly #timeoutMs: number;
  readonly #google: boolean;
  readonly #api: string;
  readonly #field: string;
  readonly #phrases: readonly string[];
  constructor(base: string, auth: AuthClient | GoogleAuth, opts: GoogleRestOptions = {}) {
    this.base = base.replace(/\/+$/, "");
    this.#google = isGoogleEndpoint(this.base);
    this.auth = auth;
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
    this.#api = opts.api ?? "Google Cloud REST API";
    this.#field = opts.field ?? "spec.endpoint (sql, compute, serviceNetworking)";
    this.#phrases = opts.knownPhrases ?? [];
  }

  async request<T = Json>(
    method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
    path: string,
    opts: {
      query?: Record<string, string>;
      body?: unknown;
      rateLimit?: (() => Promise<void>) | undefined;
    } = {},
  ): Promise<T> {
    await opts.rateLimit?.();
    const query = opts.query ? `?${new URLSearchParams(opts.query).toString()}` : "";
    const url = `${this.base}${path}${query}`;
    const headers = new Headers({ "user-agent": DRIFTLESS_USER_AGENT, accept: "application/json" });
    if (!(this.auth instanceof PassThroughClient)) {
      const auth = await this.auth.getRequestHeaders(url);
      for (const [k, v] of auth) headers.set(k, v);
    }
    if (opts.body !== undefined) headers.set("content-type", "application/json");
    const res = await fetch(url, {
      method,
      headers,
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      signal: AbortSignal.timeout(this.#timeoutMs),
      // A redirect would take the request (and its token) past the endpoint checks: never followed.
      redirect: "manual",
    });
    const text = await res.text();
    const contentType = res.headers.get("content-type") ?? undefined;
    // An HTML page (a web server, another emulator) is never Google's answer: a 404 of it is no "not found".
    if (contentType && isHtml({ contentType }))
      throw endpointMismatch(
        this.base,
        this.#api,
        { status: res.status, contentType, body: text },
        `the ProviderConfig's ${this.#field} must point to a server of that API, or be removed to reach Google itself`,
      );
    if (res.status >= 300 && res.status < 400)
      throw new GoogleHttpError(
        res.status,
        `the endpoint ${this.base} answered a redirect (HTTP ${res.status}, ${contentType ? `Content-Type ${contentType}` : "no Content-Type"}), which is not followed: the ProviderConfig's ${this.#field} must name the API's server itself`,
        undefined,
      );
    if (!res.ok) throw errorOf(res.status, contentType, text, this.#google, this.#phrases);
    return (text ? JSON.parse(text) : {}) as T;
  }
}
