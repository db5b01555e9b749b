// The plumbing the Google API wire fakes share (Cloud SQL Admin, Compute, Service Networking): a plain
// node:http server on loopback, Google's JSON error body, request counters, and failures or delays on
// demand. Each fake keeps its own state and routes; nothing here knows a resource type.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { FakeAsset } from "./gcp-assets.ts";

export type Json = Record<string, unknown>;

/**
 * Google's error body: `{error: {code, message, errors: [{message, domain, reason}], status, details?}}`, the
 * details google.rpc's typed messages (`type.googleapis.com/google.rpc.BadRequest` with `fieldViolations`).
 */
export class GoogleApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly status: string;
  readonly details: Json[] | undefined;
  constructor(code: number, reason: string, message: string, status?: string, details?: Json[]) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.status = status ?? STATUS_OF[code] ?? "UNKNOWN";
    this.details = details;
  }
  body(): Json {
    return {
      error: {
        code: this.code,
        message: this.message,
        errors: [{ message: this.message, domain: "global", reason: this.reason }],
        status: this.status,
        ...(this.details ? { details: this.details } : {}),
      },
    };
  }
}

/** A REQUIRED field missing: 400 INVALID_ARGUMENT with google.rpc.BadRequest naming the field. */
export const fieldRequired = (field: string) =>
  new GoogleApiError(400, "badRequest", `Field violation: '${field}' is required.`, "INVALID_ARGUMENT", [
    {
      "@type": "type.googleapis.com/google.rpc.BadRequest",
      fieldViolations: [{ field, description: `Required field '${field}' not specified` }],
    },
  ]);

const STATUS_OF: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ALREADY_EXISTS",
  412: "FAILED_PRECONDITION",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
};

/** The quota error Google APIs answer when a per-minute request quota is spent. */
export const rateLimited = (service: string) =>
  new GoogleApiError(
    429,
    "rateLimitExceeded",
    `Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user' of service '${service}'.`,
    "RESOURCE_EXHAUSTED",
  );

/** A request as a fake's router sees it. */
export interface FakeRequest {
  method: string;
  /** Path segments after the API's prefix, URL-decoded. */
  seg: string[];
  query: URLSearchParams;
  body: Json;
}

/** Decides a request's fate before the router: an error to answer with, or undefined to go on. */
export type FakeFault = (key: string, req: FakeRequest) => GoogleApiError | undefined;

export interface FakeHttpOptions {
  port?: number;
  host?: string;
  /** Stripped from the path before routing (the first that matches), e.g. "/sql/v1beta4". */
  prefixes: string[];
  /** The counter key of a request, e.g. "GET instances" (tests count calls by it). */
  keyOf: (req: FakeRequest) => string;
  route: (req: FakeRequest) => Json | undefined | Promise<Json | undefined>;
  name: string;
  /** What the fake holds, as Cloud Asset indexes it: answered at `/__fake/assets` (gcp-assets.ts). */
  assets?: () => FakeAsset[];
}

export interface FakeHttpServer {
  url: string;
  /** Requests served, by key. */
  readonly counters: Record<string, number>;
  /** Fails the next `times` requests whose key matches with `error` (quota, 5xx, 403 …). */
  failNext(match: string | RegExp, error: () => GoogleApiError, times?: number): void;
  /**
   * Serves the next `times` requests whose key matches and then drops the connection unanswered: the
   * request took effect, its answer is lost (a timeout, a crash between the call and its answer).
   */
  loseAnswerNext(match: string | RegExp, times?: number): void;
  /** Every answer waits this long first (a slow cloud); 0 = none. */
  delayMs: number;
  /** The User-Agent of every write (non-GET request) served, in order. */
  readonly writeAgents: string[];
  /** Requests since `reset`, as a copy. */
  stats(): Record<string, number>;
  reset(): void;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  try {
    const v: unknown = JSON.parse(text);
    if (v !== null && typeof v === "object" && !Array.isArray(v)) return v as Json;
  } catch {
    // answered below
  }
  throw new GoogleApiError(400, "parseError", "Invalid JSON payload received.");
}

const send = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=UTF-8",
    "content-length": String(Buffer.byteLength(text)),
  });
  res.end(text);
};

export async function startFakeHttp(opts: FakeHttpOptions): Promise<FakeHttpServer> {
  const host = opts.host ?? "127.0.0.1";
  let counters: Record<string, number> = {};
  const writeAgents: string[] = [];
  const faults: Array<{ match: string | RegExp; error: () => GoogleApiError; left: number }> = [];
  const losses: Array<{ match: string | RegExp; left: number }> = [];
  const matches = (m: string | RegExp, key: string) => (typeof m === "string" ? m === key : m.test(key));
  const state = { delayMs: 0 };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(`http://fake${req.url ?? "/"}`);
    const method = req.method ?? "GET";
    let path = url.pathname;
    for (const p of opts.prefixes) {
      if (path === p || path.startsWith(`${p}/`)) {
        path = path.slice(p.length);
        break;
      }
    }
    const seg = path.split("/").filter(Boolean).map(decodeURIComponent);
    if (seg[0] === "__fake" && seg[1] === "stats") return send(res, 200, { requests: counters });
    if (seg[0] === "__fake" && seg[1] === "assets" && opts.assets)
      return send(res, 200, { assets: opts.assets() });
    const request: FakeRequest = { method, seg, query: url.searchParams, body: await readBody(req) };
    const key = opts.keyOf(request);
    counters[key] = (counters[key] ?? 0) + 1;
    if (method !== "GET") writeAgents.push(String(req.headers["user-agent"] ?? ""));
    if (state.delayMs > 0) await new Promise((r) => setTimeout(r, state.delayMs));
    const fault = faults.find((f) => f.left > 0 && matches(f.match, key));
    if (fault) {
      fault.left--;
      throw fault.error();
    }
    const out = await opts.route(request);
    if (out === undefined) {
      throw new GoogleApiError(
        404,
        "notFound",
        `The ${opts.name} fake does not implement ${method} ${url.pathname}.`,
      );
    }
    const loss = losses.find((l) => l.left > 0 && matches(l.match, key));
    if (loss) {
      loss.left--;
      return void res.destroy();
    }
    send(res, 200, out);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy();
      if (err instanceof GoogleApiError) return send(res, err.code, err.body());
      send(res, 500, new GoogleApiError(500, "backendError", String(err)).body());
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    get counters() {
      return counters;
    },
    writeAgents,
    failNext(match, error, times = 1) {
      faults.push({ match, error, left: times });
    },
    loseAnswerNext(match, times = 1) {
      losses.push({ match, left: times });
    },
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(ms: number) {
      state.delayMs = ms;
    },
    stats: () => ({ ...counters }),
    reset() {
      counters = {};
      faults.length = 0;
      losses.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A counter that answers "is it done yet?" by how many times it was asked: operations progress by polls. */
export class Countdown {
  #left: number;
  constructor(polls: number) {
    this.#left = Math.max(0, polls);
  }
  /** One more look; true once the count is spent. */
  tick(): boolean {
    if (this.#left > 0) this.#left--;
    return this.#left === 0;
  }
  get done() {
    return this.#left === 0;
  }
}

/** RFC 3339 with milliseconds, as Google APIs write times. */
export const now = () => new Date().toISOString();
