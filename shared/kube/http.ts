// The wire under Kube: JSON over node:http(s) with one keep-alive pool per cluster. It imports nothing
// from @kubernetes/client-node, so a function bundle that only reads and patches objects does not carry
// the generated API classes, undici and ws (about 2 MB minified, most of a Lambda bundle); proxies go
// through https-proxy-agent (~20 kB). Where the cluster and its credentials come from is a ClusterEndpoint: built from a full
// client-node KubeConfig (CLI, `driftless run` — every auth method client-node has) or by
// shared/kube/kubeconfig.ts (functions: tokens, certificates, EKS/GKE tokens, in-cluster). Requests and
// watches both go through here: see docs/adr/0001-kubernetes-access.md.

import http from "node:http";
import https from "node:https";
import { HttpsProxyAgent } from "https-proxy-agent";
import { guardedLookup } from "../api/addresses.ts";
import { namedError } from "../named-error.ts";
import { proxyFromEnvironment } from "./proxy.ts";

/** What one request needs: credentials (refreshed as needed) and the connection pool to send it on. */
export interface RequestAuth {
  /** A list sends the header once per value (Impersonate-Group with several groups). */
  headers: Record<string, string | string[]>;
  agent: http.Agent;
  /** The cluster's TLS material per request: a proxy agent takes it from the request, not the pool. */
  tls?: PoolTls | undefined;
}

/** `refresh`: the server refused the last credentials (401): drop cached ones and get new ones. */
export interface PrepareOptions {
  refresh?: boolean;
}

/** A cluster to talk to: its API server URL and how to authenticate each request. */
export interface ClusterEndpoint {
  /** e.g. `https://10.0.0.1:6443`; a path prefix (rancher-style proxies) is kept. */
  readonly server: string;
  /** Called before every request: a token source refreshes here, a client certificate is in the agent. */
  prepare(opts?: PrepareOptions): Promise<RequestAuth>;
}

export class KubeError extends namedError("KubeError", Error) {
  readonly status: number;
  /** The Status `reason` the API server gave (NotFound, AlreadyExists, Conflict, Invalid…). */
  readonly reason: string | undefined;
  /** The server's Retry-After, in seconds, when it sent one (429, 503). */
  readonly retryAfterSeconds: number | undefined;
  constructor(
    message: string,
    status: number,
    options?: ErrorOptions & { reason?: string | undefined; retryAfterSeconds?: number | undefined },
  ) {
    super(message, options);
    this.status = status;
    this.reason = options?.reason;
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}
/** A resourceVersion precondition failed (409): someone else wrote first; re-read and retry. */
export class ConflictError extends namedError("ConflictError", KubeError) {}

export interface KubeRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Absolute API path, e.g. `/api/v1/namespaces/default/secrets/db`; segments already encoded. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Default `application/json`; merge patches pass `application/merge-patch+json`. */
  contentType?: string;
}

/** One event of a watch stream (ADDED, MODIFIED, DELETED, BOOKMARK, or ERROR with a Status object). */
export interface WatchEvent {
  type: string;
  object: unknown;
}

/** An open stream: `ended` resolves when the server closes it or it is aborted, rejects when it breaks. */
export interface OpenStream {
  ended: Promise<void>;
}

/** No answer within this long (connect, or between bytes) fails the request instead of hanging a worker. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** Retries after 429 (or 503 with Retry-After): the server asked us to wait, twice at most. */
export const MAX_THROTTLE_RETRIES = 2;
/** The longest Retry-After honoured; a longer one is cut to this (a worker must not sleep for minutes). */
export const MAX_RETRY_AFTER_MS = 10_000;
/** The wait after a 429 that gave no Retry-After. */
const DEFAULT_RETRY_AFTER_MS = 1_000;
const USER_AGENT = "driftless";
// Error codes that mean "the pooled connection was already closed by the server": safe to send again
// on a fresh connection, because the server never saw this request.
const STALE_SOCKET = new Set(["ECONNRESET", "EPIPE"]);

/** Encodes one path segment (names are DNS labels, but a label selector or a bad name must not escape). */
export const seg = (s: string) => encodeURIComponent(s);

export interface KubeHttpOptions {
  timeoutMs?: number;
  /** How a Retry-After wait is spent; injected by tests. */
  sleep?: (ms: number) => Promise<void>;
}

const realSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class KubeHttp {
  readonly endpoint: ClusterEndpoint;
  readonly #base: URL;
  readonly #timeoutMs: number;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(endpoint: ClusterEndpoint, opts: KubeHttpOptions = {}) {
    this.endpoint = endpoint;
    this.#base = new URL(endpoint.server);
    if (this.#base.protocol !== "https:" && this.#base.protocol !== "http:")
      throw new Error(`cluster server must be an http(s) URL, got ${endpoint.server}`);
    this.#timeoutMs = opts.timeoutMs ?? REQUEST_TIMEOUT_MS;
    this.#sleep = opts.sleep ?? realSleep;
  }

  /** Sends one request; resolves the parsed JSON body (undefined when empty), rejects with KubeError on non-2xx. */
  request<T>(req: KubeRequest): Promise<T> {
    return this.#withRetries((auth) => this.#send<T>(req, auth));
  }

  /**
   * Opens a newline-delimited JSON stream (a watch): resolves once the server answered 2xx, then calls
   * `onEvent` per line until the server ends the stream or `signal` aborts it. A refusal (non-2xx) rejects
   * with KubeError, after the same 401 and Retry-After handling as `request`.
   */
  stream(
    req: KubeRequest,
    onEvent: (event: WatchEvent) => void,
    opts: { signal?: AbortSignal; idleTimeoutMs?: number } = {},
  ): Promise<OpenStream> {
    return this.#withRetries((auth) => this.#open(req, auth, onEvent, opts));
  }

  /**
   * One request with the retries that cannot do harm: once more on a fresh connection when the pooled one
   * was closed under it; once with refreshed credentials after 401; after 429 (or 503 with Retry-After)
   * up to MAX_THROTTLE_RETRIES times, waiting what the server asked (capped).
   */
  async #withRetries<T>(send: (auth: RequestAuth) => Promise<T>): Promise<T> {
    let auth = await this.endpoint.prepare();
    let refreshed = false;
    let throttled = 0;
    for (;;) {
      try {
        try {
          return await send(auth);
        } catch (err) {
          if ((err as { retryable?: boolean }).retryable) return await send(auth);
          throw err;
        }
      } catch (err) {
        if (!(err instanceof KubeError)) throw err;
        if (err.status === 401 && !refreshed) {
          refreshed = true;
          auth = await this.endpoint.prepare({ refresh: true });
          continue;
        }
        const waitMs = throttleWaitMs(err);
        if (waitMs === undefined || throttled >= MAX_THROTTLE_RETRIES) throw err;
        throttled++;
        await this.#sleep(waitMs);
        // Credentials may have aged while waiting; the endpoint hands out current ones (cached if valid).
        auth = await this.endpoint.prepare();
      }
    }
  }

  #url(req: KubeRequest): URL {
    const prefix = this.#base.pathname.replace(/\/+$/, "");
    const url = new URL(`${prefix}${req.path}`, this.#base);
    for (const [k, v] of Object.entries(req.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    return url;
  }

  #send<T>(req: KubeRequest, auth: RequestAuth): Promise<T> {
    const url = this.#url(req);
    const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body), "utf8");
    const headers: http.OutgoingHttpHeaders = {
      Accept: "application/json",
      "User-Agent": USER_AGENT,
      ...auth.headers,
      ...(payload
        ? { "Content-Type": req.contentType ?? "application/json", "Content-Length": payload.length }
        : {}),
    };
    const send = url.protocol === "https:" ? https.request : http.request;
    return new Promise<T>((resolve, reject) => {
      const r = send(
        url,
        { ...auth.tls, method: req.method, headers, agent: auth.agent, timeout: this.#timeoutMs },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) {
              try {
                resolve((text ? JSON.parse(text) : undefined) as T);
              } catch {
                reject(
                  new KubeError(`the API server answered ${status} with a body that is not JSON`, status),
                );
              }
              return;
            }
            reject(statusError(status, text, res.headers["retry-after"]));
          });
        },
      );
      r.on("timeout", () => r.destroy(new Error(`no answer from ${url.host} within ${this.#timeoutMs} ms`)));
      r.on("error", (err: NodeJS.ErrnoException) => {
        // A kept-alive connection the server closed meanwhile: send once more on a new one.
        if (r.reusedSocket && err.code && STALE_SOCKET.has(err.code)) Object.assign(err, { retryable: true });
        reject(err);
      });
      r.end(payload);
    });
  }

  #open(
    req: KubeRequest,
    auth: RequestAuth,
    onEvent: (event: WatchEvent) => void,
    opts: { signal?: AbortSignal; idleTimeoutMs?: number },
  ): Promise<OpenStream> {
    const url = this.#url(req);
    const headers: http.OutgoingHttpHeaders = {
      Accept: "application/json",
      "User-Agent": USER_AGENT,
      ...auth.headers,
    };
    const send = url.protocol === "https:" ? https.request : http.request;
    const idleMs = opts.idleTimeoutMs ?? this.#timeoutMs;
    return new Promise<OpenStream>((resolve, reject) => {
      if (opts.signal?.aborted) return resolve({ ended: Promise.resolve() });
      let opened = false;
      let endStream: (err?: unknown) => void = () => {};
      const ended = new Promise<void>((res, rej) => {
        endStream = (err) => (err ? rej(err) : res());
      });
      const fail = (err: unknown) => {
        if (opts.signal?.aborted) endStream();
        else if (opened) endStream(err);
        else reject(err);
      };
      const r = send(
        url,
        { ...auth.tls, method: req.method, headers, agent: auth.agent, timeout: idleMs },
        (res) => {
          const status = res.statusCode ?? 0;
          res.setEncoding("utf8");
          if (status < 200 || status >= 300) {
            let text = "";
            res.on("data", (c: string) => {
              text += c;
            });
            res.on("error", reject);
            res.on("end", () => reject(statusError(status, text, res.headers["retry-after"])));
            return;
          }
          opened = true;
          resolve({ ended });
          let buffered = "";
          res.on("data", (chunk: string) => {
            buffered += chunk;
            let nl = buffered.indexOf("\n");
            while (nl !== -1) {
              const line = buffered.slice(0, nl).trim();
              buffered = buffered.slice(nl + 1);
              nl = buffered.indexOf("\n");
              if (!line) continue;
              let event: WatchEvent;
              try {
                event = JSON.parse(line) as WatchEvent;
              } catch {
                r.destroy(new KubeError("the API server sent a watch event that is not JSON", status));
                return;
              }
              onEvent(event);
              // An event handler that aborted (ERROR, a restart) gets nothing more from this stream.
              if (opts.signal?.aborted) return;
            }
          });
          res.on("error", fail);
          res.on("close", () => endStream());
          res.on("end", () => endStream());
        },
      );
      const abort = () => r.destroy();
      opts.signal?.addEventListener("abort", abort, { once: true });
      r.on("close", () => {
        opts.signal?.removeEventListener("abort", abort);
        endStream();
      });
      r.on("timeout", () => r.destroy(new Error(`no data from ${url.host} within ${idleMs} ms`)));
      r.on("error", (err: NodeJS.ErrnoException) => {
        if (!opened && r.reusedSocket && err.code && STALE_SOCKET.has(err.code))
          Object.assign(err, { retryable: true });
        fail(err);
      });
      r.end();
    });
  }
}

/** How long to wait before retrying a throttled request; undefined when the answer is not one to retry. */
function throttleWaitMs(err: KubeError): number | undefined {
  const after = err.retryAfterSeconds;
  if (err.status === 429)
    return Math.min(after === undefined ? DEFAULT_RETRY_AFTER_MS : after * 1000, MAX_RETRY_AFTER_MS);
  if (err.status === 503 && after !== undefined) return Math.min(after * 1000, MAX_RETRY_AFTER_MS);
  return undefined;
}

/** Retry-After as seconds (an integer, or an HTTP date); undefined when absent or unreadable. */
function retryAfterSeconds(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** The API server's Status message (what kubectl prints), else the HTTP status. */
function statusError(status: number, text: string, retryAfter?: string | string[]): KubeError {
  let message = `HTTP ${status}`;
  let reason: string | undefined;
  try {
    const body = JSON.parse(text) as { message?: unknown; reason?: unknown };
    if (typeof body.message === "string" && body.message) message = body.message;
    if (typeof body.reason === "string") reason = body.reason;
  } catch {
    if (text && text.length < 200) message = `HTTP ${status}: ${text.trim()}`;
  }
  const opts = { reason, retryAfterSeconds: retryAfterSeconds(retryAfter) };
  return status === 409 ? new ConflictError(message, status, opts) : new KubeError(message, status, opts);
}

/** TLS material and credentials, as a kubeconfig states them (already read from files). */
export interface StaticEndpointInput {
  server: string;
  ca?: Buffer | undefined;
  cert?: Buffer | undefined;
  key?: Buffer | undefined;
  insecureSkipTlsVerify?: boolean | undefined;
  tlsServerName?: string | undefined;
  /**
   * Headers for every request, e.g. Authorization or Impersonate-User; may be refreshed per call, and
   * must be (cached credentials dropped) when `refresh` is set: the server refused the last ones.
   */
  headers?: (opts: PrepareOptions) => Promise<RequestAuth["headers"]> | RequestAuth["headers"];
  /** The kubeconfig's proxy-url for this cluster (http or https proxy). */
  proxyUrl?: string | undefined;
  /** Where HTTPS_PROXY / NO_PROXY are read; default this process's environment. */
  env?: Record<string, string | undefined> | undefined;
}

/** TLS material for one cluster's connection pool; `rejectUnauthorized` unset leaves Node's default. */
export type PoolTls = Pick<https.AgentOptions, "ca" | "cert" | "key" | "servername" | "rejectUnauthorized">;

/** The keep-alive connection pool for a server: https with the cluster's TLS material, or plain http. */
export function keepAliveAgent(server: string, tls: PoolTls, proxyUrl?: string): http.Agent {
  const own = tlsOptions(tls);
  // A name that resolves to a link-local address is refused when the socket connects (../api/addresses.ts).
  const lookup = guardedLookup();
  // CONNECT through the proxy, then TLS (or plain http) to the API server over the tunnel.
  if (proxyUrl) return new HttpsProxyAgent(proxyUrl, { keepAlive: true, lookup });
  if (new URL(server).protocol !== "https:") return new http.Agent({ keepAlive: true, lookup });
  return new https.Agent({ keepAlive: true, lookup, ...own });
}

/** Only the TLS fields that are set; `rejectUnauthorized` unset leaves Node's default (verify). */
export function tlsOptions(tls: PoolTls): PoolTls {
  return {
    ...(tls.ca ? { ca: tls.ca } : {}),
    ...(tls.cert ? { cert: tls.cert } : {}),
    ...(tls.key ? { key: tls.key } : {}),
    ...(tls.servername ? { servername: tls.servername } : {}),
    ...(tls.rejectUnauthorized !== undefined ? { rejectUnauthorized: tls.rejectUnauthorized } : {}),
  };
}

/**
 * A ClusterEndpoint with one keep-alive pool for its lifetime, through `proxyUrl` if given, else through
 * the proxy HTTPS_PROXY / NO_PROXY name for the server (see proxy.ts).
 */
export function staticEndpoint(input: StaticEndpointInput): ClusterEndpoint {
  const tls = tlsOptions({
    ca: input.ca,
    cert: input.cert,
    key: input.key,
    servername: input.tlsServerName,
    rejectUnauthorized: !input.insecureSkipTlsVerify,
  });
  const proxy = input.proxyUrl ?? proxyFromEnvironment(input.server, input.env);
  const agent = keepAliveAgent(input.server, tls, proxy);
  return {
    server: input.server,
    async prepare(opts: PrepareOptions = {}) {
      const headers = input.headers ? await input.headers(opts) : {};
      return proxy ? { headers, agent, tls } : { headers, agent };
    },
  };
}
