// The doorbell as a local HTTPS server (`driftless run --doorbell`, the integration tests, the bench):
// the same handleDoorbellHttp the Lambda Function URL and the Cloud Functions HTTP function call.
// HTTPS only — the API server calls webhooks over TLS and checks the certificate against the
// webhook's caBundle.
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { MAX_BODY_BYTES } from "./http.ts";
import type { Doorbell } from "./index.ts";

export interface DoorbellServerOptions {
  /** createDoorbell's function: the same one the Lambda and Cloud Functions adapters call. */
  handle: Doorbell;
  /** PEM serving certificate and key (signed by the CA the webhook's caBundle names). */
  cert: string | Buffer;
  key: string | Buffer;
  /** Default 0: any free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
}

export interface DoorbellServer {
  port: number;
  /** `https://<host>:<port>`: the base the routes' paths go after. */
  baseUrl: string;
  /** Requests answered, by status. */
  stats(): Record<number, number>;
  /** What the admission route did, by verdict (Doorbell.verdicts). */
  verdicts(): Record<string, number>;
  close(): Promise<void>;
}

export async function startDoorbellServer(opts: DoorbellServerOptions): Promise<DoorbellServer> {
  const host = opts.host ?? "127.0.0.1";
  const byStatus: Record<number, number> = {};
  const server: Server = createServer({ cert: opts.cert, key: opts.key }, (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(c);
    });
    req.on("end", () => {
      const reply = (status: number, headers: Record<string, string>, body: string) => {
        byStatus[status] = (byStatus[status] ?? 0) + 1;
        res.writeHead(status, headers).end(body);
      };
      if (tooLarge) return reply(413, { "content-type": "application/json" }, '{"error":"body too large"}');
      const path = (req.url ?? "/").split("?")[0] ?? "/";
      opts
        .handle({
          method: req.method ?? "GET",
          path,
          headers: { "webhook-request-origin": headerValue(req.headers["webhook-request-origin"]) },
          body: Buffer.concat(chunks).toString("utf8"),
        })
        .then(
          (out) => reply(out.status, out.headers, out.body),
          () => reply(500, { "content-type": "application/json" }, '{"error":"internal error"}'),
        );
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    baseUrl: `https://${host}:${port}`,
    stats: () => ({ ...byStatus }),
    verdicts: () => opts.handle.verdicts() as Record<string, number>,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const headerValue = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
