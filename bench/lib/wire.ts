// A recording HTTP proxy in front of moto: the providers reach it through the ProviderConfig's endpoint
// (real SDKs, unchanged), moto does the work, and the proxy writes down every call as it crosses the wire
// — the action, the resource it names, when it arrived. "How many cloud calls does a reconcile make" and
// "when did the update reach the cloud" are then read off the wire, not off our own counters.
import { Agent, createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { isMainThread, type MessagePort, parentPort, Worker, workerData } from "node:worker_threads";

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
  const sample = () => {
    // Box–Muller: one standard normal sample.
    const u = Math.max(random(), Number.EPSILON);
    const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
    return medianMs * Math.exp(sigma * z);
  };
  // Described, so a proxy in its own thread can draw the same distribution there.
  return Object.assign(sample, { logNormal: { medianMs, sigma } });
}

/** What a worker-thread proxy and the main thread say to each other. */
type ToProxy =
  | { latency: { medianMs: number; sigma: number } | undefined }
  | { ping: number }
  | { cpu: number };
type FromProxy = { url: string } | { call: WireCall } | { pong: number } | { cpu: number; ms: number };

export class WireProxy {
  readonly calls: WireCall[] = [];
  #latency: CloudLatency | undefined;
  readonly #target: URL;
  readonly #server: Server | undefined;
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 64 });
  readonly #waiters = new Set<{ match: (c: WireCall) => boolean; resolve: (c: WireCall) => void }>();
  /** Set when the proxy serves from a worker thread (startThreaded). */
  #thread: Worker | undefined;
  #replies = new Map<number, (ms: number) => void>();
  #seq = 0;
  url = "";

  /** When set, answers are held to this latency (see CloudLatency). */
  get latency(): CloudLatency | undefined {
    return this.#latency;
  }
  set latency(l: CloudLatency | undefined) {
    this.#latency = l;
    if (!this.#thread) return;
    const described = (l as { logNormal?: { medianMs: number; sigma: number } } | undefined)?.logNormal;
    if (l && !described) throw new Error("a proxy in its own thread takes logNormalLatency(…) only");
    this.#thread.postMessage({ latency: described } satisfies ToProxy);
  }

  private constructor(target: string, threaded = false) {
    this.#target = new URL(target);
    if (threaded) return;
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
            const latency = this.#latency;
            if (!latency) {
              res.writeHead(upRes.statusCode ?? 502, headers);
              upRes.pipe(res);
              upRes.on("end", () => this.#record(callOf(call, at, upRes.statusCode ?? 502)));
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
                this.#record(callOf(call, at, upRes.statusCode ?? 502));
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
    const server = p.#server as Server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    p.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return p;
  }

  /**
   * The same proxy serving from a worker thread of its own: its CPU — parsing each request and answer
   * twice, and a new connection to moto per call (moto closes every one) — is not the measured thread's,
   * so `process.cpuUsage()` minus `cpuMs()` is what the reconcile function itself spent. Calls are
   * recorded here as the thread reports them: `settled()` before reading counts after a piece of work.
   */
  static async startThreaded(target: string): Promise<WireProxy> {
    const p = new WireProxy(target, true);
    const thread = new Worker(new URL(import.meta.url), { workerData: { wireProxyTarget: target } });
    p.#thread = thread;
    thread.unref();
    await new Promise<void>((resolve, reject) => {
      thread.once("error", reject);
      thread.on("message", (m: FromProxy) => {
        if ("url" in m) {
          p.url = m.url;
          resolve();
        } else if ("call" in m) p.#record(m.call);
        else if ("pong" in m) p.#replies.get(m.pong)?.(0);
        else p.#replies.get(m.cpu)?.(m.ms);
      });
    });
    return p;
  }

  #ask(message: (n: number) => ToProxy): Promise<number> {
    const thread = this.#thread;
    if (!thread) return Promise.resolve(0);
    const n = ++this.#seq;
    return new Promise((resolve) => {
      this.#replies.set(n, (ms) => {
        this.#replies.delete(n);
        resolve(ms);
      });
      thread.postMessage(message(n));
    });
  }

  /** Resolves once every call the thread answered so far is in `calls` (at once when in-process). */
  async settled(): Promise<void> {
    await this.#ask((ping) => ({ ping }));
  }

  /** CPU the proxy's own thread has used so far, ms (0 in-process: there it is the caller's). */
  cpuMs(): Promise<number> {
    return this.#ask((cpu) => ({ cpu }));
  }

  async stop(): Promise<void> {
    if (this.#thread) {
      await this.#thread.terminate();
      return;
    }
    const server = this.#server as Server;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
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

  #record(call: WireCall) {
    this.calls.push(call);
    for (const w of this.#waiters) if (w.match(call)) w.resolve(call);
    // A proxy in a worker thread tells the main thread of each call.
    threadPort?.postMessage({ call } satisfies FromProxy);
  }
}

/** Set in the worker thread of WireProxy.startThreaded: where its proxy reports each call. */
let threadPort: MessagePort | undefined;

// The worker thread of WireProxy.startThreaded: an in-process proxy whose calls go to the main thread.
if (!isMainThread && parentPort && (workerData as { wireProxyTarget?: string })?.wireProxyTarget) {
  const port = parentPort;
  threadPort = port;
  const proxy = await WireProxy.start((workerData as { wireProxyTarget: string }).wireProxyTarget);
  port.on("message", (m: ToProxy) => {
    if ("latency" in m)
      proxy.latency = m.latency ? logNormalLatency(m.latency.medianMs, m.latency.sigma) : undefined;
    else if ("ping" in m) port.postMessage({ pong: m.ping } satisfies FromProxy);
    else {
      const used = process.threadCpuUsage();
      port.postMessage({ cpu: m.cpu, ms: (used.user + used.system) / 1000 } satisfies FromProxy);
    }
  });
  port.postMessage({ url: proxy.url } satisfies FromProxy);
}

const callOf = (
  d: { action: string; resource: string | undefined },
  at: number,
  status: number,
): WireCall => ({
  ...d,
  at,
  status,
  ms: Date.now() - at,
});

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
