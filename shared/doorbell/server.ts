// The doorbell as an HTTP server: HTTPS for `driftless run --doorbell`, the integration tests and the bench
// (the API server calls webhooks over TLS and checks the certificate against the webhook's caBundle), and
// plain HTTP behind a platform that terminates TLS (Cloud Run: functions/gcp/doorbell.ts). The same
// handleDoorbellHttp the Lambda Function URL calls.
//
// Nothing is read before the path is known: a wrong or missing secret is a bare 404 and an announced
// body over the route's limit a 413, both answered before a byte of the body is read, and a body that
// grows past the limit stops being read at the limit.
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Doorbell } from "./index.ts";

export interface DoorbellServerOptions {
  /** createDoorbell's function: the same one the Lambda adapter calls. */
  handle: Doorbell;
  /** PEM serving certificate and key (signed by the CA the webhook's caBundle names); without: plain HTTP. */
  cert?: string | Buffer | undefined;
  key?: string | Buffer | undefined;
  /** Default 0: any free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
}

export interface DoorbellServer {
  port: number;
  /** `https://<host>:<port>` (or http://): the base the routes' paths go after. */
  baseUrl: string;
  /** Requests answered, by status. */
  stats(): Record<number, number>;
  /** Body bytes read, over all requests (a refused request reads none). */
  bodyBytesRead(): number;
  /** What the admission route did, by verdict (Doorbell.verdicts). */
  verdicts(): Record<string, number>;
  close(): Promise<void>;
}

const JSON_TYPE = { "content-type": "application/json" };

export async function startDoorbellServer(opts: DoorbellServerOptions): Promise<DoorbellServer> {
  const host = opts.host ?? "127.0.0.1";
  const byStatus: Record<number, number> = {};
  let bytesRead = 0;
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    const reply = (status: number, headers: Record<string, string>, body: string, close = false) => {
      byStatus[status] = (byStatus[status] ?? 0) + 1;
      // A body left unread: the connection is closed after the answer rather than drained.
      res.writeHead(status, close ? { ...headers, connection: "close" } : headers).end(body);
    };
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const limit = opts.handle.bodyLimit(path);
    if (limit === undefined) return reply(404, JSON_TYPE, '{"error":"not found"}', true);
    const announced = Number(req.headers["content-length"] ?? 0);
    if (announced > limit) return reply(413, JSON_TYPE, '{"error":"body too large"}', true);
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      bytesRead += c.length;
      if (size <= limit) return void chunks.push(c);
      req.off("data", onData);
      req.off("end", onEnd);
      req.pause();
      reply(413, JSON_TYPE, '{"error":"body too large"}', true);
    };
    const onEnd = () => {
      opts
        .handle({
          method: req.method ?? "GET",
          path,
          headers: { "webhook-request-origin": headerValue(req.headers["webhook-request-origin"]) },
          body: Buffer.concat(chunks).toString("utf8"),
        })
        .then(
          (out) => reply(out.status, out.headers, out.body),
          () => reply(500, JSON_TYPE, '{"error":"internal error"}'),
        );
    };
    req.on("data", onData);
    req.on("end", onEnd);
  };
  const tls = opts.cert !== undefined && opts.key !== undefined;
  const server = tls
    ? createHttpsServer({ cert: opts.cert as string | Buffer, key: opts.key as string | Buffer }, serve)
    : createHttpServer(serve);
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
    baseUrl: `${tls ? "https" : "http"}://${host}:${port}`,
    stats: () => ({ ...byStatus }),
    bodyBytesRead: () => bytesRead,
    verdicts: () => opts.handle.verdicts() as Record<string, number>,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const headerValue = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
