// TEST WRAPPER around moto, not a fake cloud: an HTTP proxy of the project's own that the providers reach
// through a ProviderConfig's `endpoint.url` (the real SDKs, unchanged; moto does the work). It records
// every request it sees (every SDK attempt, retries included) and injects the faults a real AWS account
// produces: throttling in each wire protocol's own shape, 429 and 503, added latency, dropped connections.
//
// Bounded: 127.0.0.1 only, bodies up to 8 MiB, at most 256 open connections, at most 100,000 recorded
// calls, and it stops itself after `lifetimeMs` (default 10 minutes) if a test forgets to.
import { createServer, type IncomingHttpHeaders, request, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** How the SDK talked: AWS JSON 1.0 (SQS), Query (STS, RDS, IAM), EC2 Query, or REST-XML (S3). */
export type WireProtocol = "json" | "query" | "ec2" | "rest-xml";

export interface FaultCall {
  /** `CreateQueue`, `DescribeVpcs`, … (for REST-XML: the HTTP method and path). */
  action: string;
  protocol: WireProtocol;
  /** The resource the call names, when the proxy can tell (queue name, DB instance id, VPC id). */
  subject?: string;
  at: number;
  /** What the proxy did: forwarded to moto, or the fault it injected. */
  outcome: "forwarded" | FaultKind;
  status: number;
}

export type FaultKind = "throttle" | "status" | "latency" | "drop" | "error";

export type Fault =
  /** The protocol's throttling error: JSON `__type …#ThrottlingException` (400), Query `Throttling` (400), EC2 `RequestLimitExceeded` (503), S3 `SlowDown` (503). `code` overrides the code. */
  | { kind: "throttle"; code?: string }
  /** A bare HTTP status (429, 503…) with the protocol's error body. */
  | { kind: "status"; status: number }
  /** Forwarded after this delay. */
  | { kind: "latency"; ms: number }
  /** The socket is destroyed without an answer (ECONNRESET at the client). */
  | { kind: "drop" }
  /**
   * A named error in the protocol's own shape, e.g. `QueueDoesNotExist` (400) or `InvalidVpcID.NotFound`
   * (400): an eventually consistent read that does not see a resource yet.
   */
  | { kind: "error"; status: number; code: string; message?: string };

export interface FaultRule {
  fault: Fault;
  /** Which calls it applies to; default every call. */
  match?: (call: Pick<FaultCall, "action" | "protocol" | "subject">) => boolean;
  /** Share of matching calls it hits, 0–1; default 1. */
  probability?: number;
  /** Hits before the rule retires; default unlimited. */
  times?: number;
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;
const MAX_CONNECTIONS = 256;
const MAX_RECORDED = 100_000;
const DEFAULT_LIFETIME_MS = 10 * 60_000;

export class FaultProxy {
  readonly calls: FaultCall[] = [];
  url = "";
  readonly #target: URL;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #rules: Array<FaultRule & { hits: number }> = [];
  #random: () => number;
  #lifetime: NodeJS.Timeout | undefined;
  #stopped = false;

  private constructor(target: string, random: () => number) {
    this.#target = new URL(target);
    this.#random = random;
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on("data", (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY_BYTES) {
          req.destroy();
          return;
        }
        chunks.push(c);
      });
      req.on("end", () => {
        void this.#handle(req.method ?? "POST", req.url ?? "/", req.headers, Buffer.concat(chunks), res);
      });
    });
    this.#server.maxConnections = MAX_CONNECTIONS;
    this.#server.on("connection", (s: Socket) => {
      this.#sockets.add(s);
      s.on("close", () => this.#sockets.delete(s));
    });
  }

  /** Starts a proxy in front of `target` (moto's URL) on a free 127.0.0.1 port. */
  static async start(
    target: string,
    opts: { lifetimeMs?: number; random?: () => number } = {},
  ): Promise<FaultProxy> {
    const p = new FaultProxy(target, opts.random ?? Math.random);
    await new Promise<void>((resolve) => p.#server.listen(0, "127.0.0.1", resolve));
    p.url = `http://127.0.0.1:${(p.#server.address() as AddressInfo).port}`;
    p.#lifetime = setTimeout(() => void p.stop(), opts.lifetimeMs ?? DEFAULT_LIFETIME_MS);
    p.#lifetime.unref();
    return p;
  }

  /** Replaces the active faults (first matching rule wins). */
  inject(...rules: FaultRule[]): void {
    this.#rules = rules.map((r) => ({ ...r, hits: 0 }));
  }

  /** Stops injecting: every call is forwarded from now on. */
  heal(): void {
    this.#rules = [];
  }

  /** Calls seen in [from, to) (epoch ms), optionally only those matching. */
  between(from: number, to: number, match?: (c: FaultCall) => boolean): FaultCall[] {
    return this.calls.filter((c) => c.at >= from && c.at < to && (!match || match(c)));
  }

  /** The most calls seen in any window of `windowMs` within [from, to). */
  peakRate(windowMs: number, from = 0, to = Number.POSITIVE_INFINITY): number {
    const times = this.calls
      .filter((c) => c.at >= from && c.at < to)
      .map((c) => c.at)
      .sort((a, b) => a - b);
    let peak = 0;
    let lo = 0;
    for (let hi = 0; hi < times.length; hi++) {
      while ((times[hi] ?? 0) - (times[lo] ?? 0) >= windowMs) lo++;
      peak = Math.max(peak, hi - lo + 1);
    }
    return peak;
  }

  stop(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    this.#stopped = true;
    clearTimeout(this.#lifetime);
    this.#rules = [];
    for (const s of this.#sockets) s.destroy();
    return new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #record(call: FaultCall) {
    if (this.calls.length < MAX_RECORDED) this.calls.push(call);
  }

  #pick(call: Pick<FaultCall, "action" | "protocol" | "subject">): Fault | undefined {
    for (const rule of this.#rules) {
      if (rule.times !== undefined && rule.hits >= rule.times) continue;
      if (rule.match && !rule.match(call)) continue;
      if (rule.probability !== undefined && this.#random() >= rule.probability) continue;
      rule.hits++;
      return rule.fault;
    }
    return undefined;
  }

  async #handle(
    method: string,
    url: string,
    headers: IncomingHttpHeaders,
    body: Buffer,
    res: ServerResponse,
  ) {
    const { action, protocol, subject } = describeCall(method, url, headers, body);
    const fault = this.#pick({ action, protocol, ...(subject ? { subject } : {}) });
    const at = Date.now();
    const seen = { action, protocol, at, ...(subject ? { subject } : {}) };
    if (fault?.kind === "drop") {
      this.#record({ ...seen, outcome: "drop", status: 0 });
      res.socket?.destroy();
      return;
    }
    if (fault?.kind === "throttle" || fault?.kind === "status" || fault?.kind === "error") {
      const e =
        fault.kind === "throttle"
          ? throttleError(protocol, fault.code)
          : fault.kind === "error"
            ? errorReply(protocol, fault.status, fault.code, fault.message ?? `injected ${fault.code}`)
            : { ...genericError(protocol, fault.status), status: fault.status };
      this.#record({ ...seen, outcome: fault.kind, status: e.status });
      res.writeHead(e.status, { ...e.headers, "content-length": Buffer.byteLength(e.body) });
      res.end(e.body);
      return;
    }
    if (fault?.kind === "latency") await new Promise((r) => setTimeout(r, fault.ms));
    try {
      const up = await this.#forward(method, url, headers, body);
      this.#record({ ...seen, outcome: fault ? "latency" : "forwarded", status: up.status });
      res.writeHead(up.status, up.headers);
      res.end(up.body);
    } catch (err) {
      this.#record({ ...seen, outcome: "forwarded", status: 502 });
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(String(err));
    }
  }

  #forward(
    method: string,
    url: string,
    headers: IncomingHttpHeaders,
    body: Buffer,
  ): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(headers)) {
        if (v === undefined || ["connection", "keep-alive", "transfer-encoding"].includes(k)) continue;
        out[k] = Array.isArray(v) ? v.join(", ") : v;
      }
      out["content-length"] = String(body.length);
      const req = request(
        {
          host: this.#target.hostname,
          port: this.#target.port,
          method,
          path: url,
          headers: out,
          timeout: 30_000,
        },
        (up) => {
          const chunks: Buffer[] = [];
          up.on("data", (c: Buffer) => chunks.push(c));
          up.on("end", () => {
            const h: Record<string, string> = {};
            for (const [k, v] of Object.entries(up.headers)) {
              if (v === undefined || ["connection", "keep-alive", "transfer-encoding"].includes(k)) continue;
              h[k] = Array.isArray(v) ? v.join(", ") : v;
            }
            const buf = Buffer.concat(chunks);
            h["content-length"] = String(buf.length);
            resolve({ status: up.statusCode ?? 502, headers: h, body: buf });
          });
          up.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error("moto did not answer in 30 s")));
      req.on("error", reject);
      req.end(body);
    });
  }
}

/** Which API call a request is, from the wire: X-Amz-Target (JSON), Action= (Query), else method + path. */
export function describeCall(
  method: string,
  url: string,
  headers: IncomingHttpHeaders,
  body: Buffer,
): { action: string; protocol: WireProtocol; subject?: string } {
  const target = headers["x-amz-target"];
  if (typeof target === "string") {
    let subject: string | undefined;
    try {
      const input = JSON.parse(body.toString("utf8")) as { QueueName?: string; QueueUrl?: string };
      subject = input.QueueName ?? input.QueueUrl?.split("/").pop();
    } catch {
      // not JSON: no subject
    }
    return { action: target.split(".").pop() ?? target, protocol: "json", ...(subject ? { subject } : {}) };
  }
  const type = String(headers["content-type"] ?? "");
  if (type.includes("x-www-form-urlencoded")) {
    const params = new URLSearchParams(body.toString("utf8"));
    const action = params.get("Action") ?? "";
    const subject = params.get("DBInstanceIdentifier") ?? params.get("VpcId.1") ?? params.get("VpcId");
    // EC2's Query dialect has its own error shape; its API version is the tell.
    return {
      action,
      protocol: params.get("Version") === "2016-11-15" ? "ec2" : "query",
      ...(subject ? { subject } : {}),
    };
  }
  return { action: `${method} ${url.split("?")[0]}`, protocol: "rest-xml" };
}

interface ErrorReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const requestId = () => `fault-${Math.random().toString(36).slice(2, 10)}`;

function errorReply(protocol: WireProtocol, status: number, code: string, message: string): ErrorReply {
  switch (protocol) {
    case "json":
      // SQS speaks JSON 1.0 with query compatibility: the SDK reads the code from x-amzn-query-error.
      return {
        status,
        headers: {
          "content-type": "application/x-amz-json-1.0",
          "x-amzn-requestid": requestId(),
          "x-amzn-query-error": `${code};Sender`,
        },
        body: JSON.stringify({ __type: `com.amazonaws.sqs#${code}`, message }),
      };
    case "ec2":
      return {
        status,
        headers: { "content-type": "text/xml" },
        body: `<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>${code}</Code><Message>${message}</Message></Error></Errors><RequestID>${requestId()}</RequestID></Response>`,
      };
    case "query":
      return {
        status,
        headers: { "content-type": "text/xml" },
        body: `<ErrorResponse><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>${requestId()}</RequestId></ErrorResponse>`,
      };
    default:
      return {
        status,
        headers: { "content-type": "application/xml" },
        body: `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message><RequestId>${requestId()}</RequestId></Error>`,
      };
  }
}

function throttleError(protocol: WireProtocol, code: string | undefined): ErrorReply {
  switch (protocol) {
    case "json":
      return errorReply(protocol, 400, code ?? "ThrottlingException", "Rate exceeded");
    case "ec2":
      return errorReply(protocol, 503, code ?? "RequestLimitExceeded", "Request limit exceeded.");
    case "query":
      return errorReply(protocol, 400, code ?? "Throttling", "Rate exceeded");
    default:
      return errorReply(protocol, 503, code ?? "SlowDown", "Please reduce your request rate.");
  }
}

function genericError(protocol: WireProtocol, status: number): ErrorReply {
  const code = status === 429 ? "TooManyRequestsException" : status >= 500 ? "ServiceUnavailable" : "Error";
  return errorReply(protocol, status, code, `injected HTTP ${status}`);
}
