// A recording HTTP proxy in front of moto: the providers reach it through the ProviderConfig's endpoint
// (real SDKs, unchanged), moto does the work, and the proxy writes down every call as it crosses the wire
// — the action, the resource it names, when it arrived. "How many cloud calls does a reconcile make" and
// "when did the update reach the cloud" are then read off the wire, not off our own counters.
import { Agent, createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface WireCall {
  /** `SQS.GetQueueAttributes` (JSON protocol, X-Amz-Target) or the Query protocol's Action. */
  action: string;
  /** The QueueUrl (or QueueName) the call names, when it names one. */
  resource: string | undefined;
  /** Epoch ms when the request arrived at the proxy. */
  at: number;
  status: number;
  /** Round trip through moto, ms. */
  ms: number;
}

/**
 * A cloud's answer time per call, ms (the action names the call class). Set, the proxy holds each answer
 * until that long after the request arrived, whatever moto took: requests overlap as they would against
 * a cloud that answers concurrently, where moto alone serves one at a time.
 */
export type CloudLatency = (action: string) => number;

/**
 * Log-normal answer times with the given median and σ (p99 = median × e^(2.326σ)). The figures are
 * assumptions, not published per-call latencies — hence the sensitivity table at several medians.
 */
export function logNormalLatency(
  medianMs: number,
  sigma = 0.5,
  random: () => number = Math.random,
): CloudLatency {
  return () => {
    // Box–Muller: one standard normal sample.
    const u = Math.max(random(), Number.EPSILON);
    const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
    return medianMs * Math.exp(sigma * z);
  };
}

export class WireProxy {
  readonly calls: WireCall[] = [];
  /** When set, answers are held to this latency (see CloudLatency). */
  latency: CloudLatency | undefined;
  readonly #target: URL;
  readonly #server: Server;
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 64 });
  readonly #waiters = new Set<{ match: (c: WireCall) => boolean; resolve: (c: WireCall) => void }>();
  url = "";

  private constructor(target: string) {
    this.#target = new URL(target);
    this.#server = createServer((req, res) => {
      const at = Date.now();
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        const up = request(
          {
            host: this.#target.hostname,
            port: this.#target.port,
            method: req.method,
            path: req.url,
            headers: { ...req.headers, host: this.#target.host, "content-length": String(body.length) },
            agent: this.#agent,
          },
          (upRes: IncomingMessage) => {
            // moto's server closes every connection; the SDK's side stays keep-alive, as with real AWS.
            const headers = { ...upRes.headers };
            for (const h of HOP_BY_HOP) delete headers[h];
            const call = describe(req, body);
            const latency = this.latency;
            if (!latency) {
              res.writeHead(upRes.statusCode ?? 502, headers);
              upRes.pipe(res);
              upRes.on("end", () => this.#record(call, at, upRes.statusCode ?? 502));
              return;
            }
            // Held until the modelled answer time has passed since arrival (never shorter than moto took).
            const parts: Buffer[] = [];
            upRes.on("data", (c: Buffer) => parts.push(c));
            upRes.on("end", () => {
              const wait = Math.max(0, at + latency(call.action) - Date.now());
              setTimeout(() => {
                res.writeHead(upRes.statusCode ?? 502, headers);
                res.end(Buffer.concat(parts));
                this.#record(call, at, upRes.statusCode ?? 502);
              }, wait);
            });
          },
        );
        up.on("error", (err) => {
          res.writeHead(502, { "content-type": "text/plain" });
          res.end(String(err));
        });
        up.end(body);
      });
    });
    this.#server.keepAliveTimeout = 30_000;
  }

  static async start(target: string): Promise<WireProxy> {
    const p = new WireProxy(target);
    await new Promise<void>((resolve) => p.#server.listen(0, "127.0.0.1", resolve));
    p.url = `http://127.0.0.1:${(p.#server.address() as AddressInfo).port}`;
    return p;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#agent.destroy();
  }

  /** Index to pass to `countSince` later. */
  mark(): number {
    return this.calls.length;
  }

  /** Calls by action since `mark`. */
  countSince(mark: number): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const c of this.calls.slice(mark)) counts[c.action] = (counts[c.action] ?? 0) + 1;
    return counts;
  }

  /** Resolves with the first call (from now on, or already recorded after `since`) that matches. */
  waitFor(match: (c: WireCall) => boolean, since: number, timeoutMs: number): Promise<WireCall | undefined> {
    const seen = this.calls.slice(since).find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const w = {
        match,
        resolve: (c: WireCall | undefined) => {
          clearTimeout(timer);
          this.#waiters.delete(w);
          resolve(c);
        },
      };
      const timer = setTimeout(() => w.resolve(undefined), timeoutMs);
      this.#waiters.add(w);
    });
  }

  /** Forgets recorded calls (keeps memory flat over long runs). */
  clear(): void {
    this.calls.length = 0;
  }

  #record(d: { action: string; resource: string | undefined }, at: number, status: number) {
    const call: WireCall = { ...d, at, status, ms: Date.now() - at };
    this.calls.push(call);
    for (const w of this.#waiters) if (w.match(call)) w.resolve(call);
  }
}

const HOP_BY_HOP = ["connection", "keep-alive", "transfer-encoding", "proxy-connection", "upgrade"];

function describe(req: IncomingMessage, body: Buffer): { action: string; resource: string | undefined } {
  const target = req.headers["x-amz-target"];
  if (typeof target === "string") {
    // AWS JSON protocol: `AmazonSQS.GetQueueAttributes`.
    const [service = "", op = ""] = target.split(".");
    let resource: string | undefined;
    try {
      const json = JSON.parse(body.toString("utf8")) as { QueueUrl?: string; QueueName?: string };
      resource = json.QueueUrl ?? json.QueueName;
    } catch {
      resource = undefined;
    }
    return { action: `${service.replace(/^Amazon/, "")}.${op}`, resource };
  }
  const params = new URLSearchParams(body.toString("utf8"));
  return {
    action: params.get("Action") ?? `${req.method} ${req.url?.split("?")[0] ?? ""}`,
    resource: params.get("QueueUrl") ?? params.get("QueueName") ?? undefined,
  };
}
