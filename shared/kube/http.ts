// The wire under Kube: JSON over node:http(s) with one keep-alive pool per cluster. It imports nothing
// from @kubernetes/client-node, so a function bundle that only reads and patches objects does not carry
// the generated API classes, undici, ws and the proxy agents (about 2 MB minified, most of a Lambda
// bundle). Where the cluster and its credentials come from is a ClusterEndpoint: built from a full
// client-node KubeConfig (CLI, `driftless run`, forwarder — every auth method client-node has) or by
// shared/kube/kubeconfig.ts (functions: tokens, certificates, EKS/GKE tokens, in-cluster).
import http from "node:http";
import https from "node:https";

/** What one request needs: credentials (refreshed as needed) and the connection pool to send it on. */
export interface RequestAuth {
  /** A list sends the header once per value (Impersonate-Group with several groups). */
  headers: Record<string, string | string[]>;
  agent: http.Agent;
}

/** A cluster to talk to: its API server URL and how to authenticate each request. */
export interface ClusterEndpoint {
  /** e.g. `https://10.0.0.1:6443`; a path prefix (rancher-style proxies) is kept. */
  readonly server: string;
  /** Called before every request: a token source refreshes here, a client certificate is in the agent. */
  prepare(): Promise<RequestAuth>;
}

export class KubeError extends Error {
  override name = "KubeError";
  readonly status: number;
  /** The Status `reason` the API server gave (NotFound, AlreadyExists, Conflict, Invalid…). */
  readonly reason: string | undefined;
  constructor(message: string, status: number, options?: ErrorOptions & { reason?: string | undefined }) {
    super(message, options);
    this.status = status;
    this.reason = options?.reason;
  }
}
/** A resourceVersion precondition failed (409): someone else wrote first; re-read and retry. */
export class ConflictError extends KubeError {
  override name = "ConflictError";
}

export interface KubeRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Absolute API path, e.g. `/api/v1/namespaces/default/secrets/db`; segments already encoded. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Default `application/json`; merge patches pass `application/merge-patch+json`. */
  contentType?: string;
}

/** No answer within this long (connect, or between bytes) fails the request instead of hanging a worker. */
export const REQUEST_TIMEOUT_MS = 30_000;
const USER_AGENT = "driftless";
// Error codes that mean "the pooled connection was already closed by the server": safe to send again
// on a fresh connection, because the server never saw this request.
const STALE_SOCKET = new Set(["ECONNRESET", "EPIPE"]);

/** Encodes one path segment (names are DNS labels, but a label selector or a bad name must not escape). */
export const seg = (s: string) => encodeURIComponent(s);

export class KubeHttp {
  readonly endpoint: ClusterEndpoint;
  readonly #base: URL;
  readonly #timeoutMs: number;

  constructor(endpoint: ClusterEndpoint, opts: { timeoutMs?: number } = {}) {
    this.endpoint = endpoint;
    this.#base = new URL(endpoint.server);
    if (this.#base.protocol !== "https:" && this.#base.protocol !== "http:")
      throw new Error(`cluster server must be an http(s) URL, got ${endpoint.server}`);
    this.#timeoutMs = opts.timeoutMs ?? REQUEST_TIMEOUT_MS;
  }

  /** Sends one request; resolves the parsed JSON body (undefined when empty), rejects with KubeError on non-2xx. */
  async request<T>(req: KubeRequest): Promise<T> {
    const auth = await this.endpoint.prepare();
    try {
      return await this.#send<T>(req, auth);
    } catch (err) {
      if ((err as { retryable?: boolean }).retryable) return await this.#send<T>(req, auth);
      throw err;
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
        { method: req.method, headers, agent: auth.agent, timeout: this.#timeoutMs },
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
            reject(statusError(status, text));
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
}

/** The API server's Status message (what kubectl prints), else the HTTP status. */
function statusError(status: number, text: string): KubeError {
  let message = `HTTP ${status}`;
  let reason: string | undefined;
  try {
    const body = JSON.parse(text) as { message?: unknown; reason?: unknown };
    if (typeof body.message === "string" && body.message) message = body.message;
    if (typeof body.reason === "string") reason = body.reason;
  } catch {
    if (text && text.length < 200) message = `HTTP ${status}: ${text.trim()}`;
  }
  return status === 409
    ? new ConflictError(message, status, { reason })
    : new KubeError(message, status, { reason });
}

/** TLS material and credentials, as a kubeconfig states them (already read from files). */
export interface StaticEndpointInput {
  server: string;
  ca?: Buffer | undefined;
  cert?: Buffer | undefined;
  key?: Buffer | undefined;
  insecureSkipTlsVerify?: boolean | undefined;
  tlsServerName?: string | undefined;
  /** Headers for every request, e.g. Authorization or Impersonate-User; may be refreshed per call. */
  headers?: () => Promise<RequestAuth["headers"]> | RequestAuth["headers"];
}

/** TLS material for one cluster's connection pool; `rejectUnauthorized` unset leaves Node's default. */
export type PoolTls = Pick<https.AgentOptions, "ca" | "cert" | "key" | "servername" | "rejectUnauthorized">;

/** The keep-alive connection pool for a server: https with the cluster's TLS material, or plain http. */
export function keepAliveAgent(server: string, tls: PoolTls): http.Agent {
  if (new URL(server).protocol !== "https:") return new http.Agent({ keepAlive: true });
  return new https.Agent({
    keepAlive: true,
    ...(tls.ca ? { ca: tls.ca } : {}),
    ...(tls.cert ? { cert: tls.cert } : {}),
    ...(tls.key ? { key: tls.key } : {}),
    ...(tls.servername ? { servername: tls.servername } : {}),
    ...(tls.rejectUnauthorized !== undefined ? { rejectUnauthorized: tls.rejectUnauthorized } : {}),
  });
}

/** A ClusterEndpoint with one keep-alive pool for its lifetime. */
export function staticEndpoint(input: StaticEndpointInput): ClusterEndpoint {
  const agent = keepAliveAgent(input.server, {
    ca: input.ca,
    cert: input.cert,
    key: input.key,
    servername: input.tlsServerName,
    rejectUnauthorized: !input.insecureSkipTlsVerify,
  });
  return {
    server: input.server,
    async prepare() {
      return { headers: input.headers ? await input.headers() : {}, agent };
    },
  };
}
