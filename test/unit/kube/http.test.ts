// The transport's own edge cases, against a local node:http server (a fake API server, for speed and for
// failures the real one will not produce on demand). test/integration/kube/http.test.ts covers the same
// client against the real kube-apiserver.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ConflictError, KubeError, KubeHttp, staticEndpoint } from "../../../shared/kube/http.ts";

type Handler = (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((r) => {
          s.closeAllConnections();
          s.close(() => r());
        }),
    ),
  );
});

async function serve(handler: Handler, opts: { keepAliveTimeout?: number } = {}): Promise<string> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => handler(req, Buffer.concat(chunks).toString("utf8"), res));
  });
  if (opts.keepAliveTimeout !== undefined) server.keepAliveTimeout = opts.keepAliveTimeout;
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

describe("KubeHttp", () => {
  it("sends JSON with the endpoint's headers, keeps the server's path prefix and encodes the query", async () => {
    let seen: {
      url?: string;
      method?: string;
      headers?: http.IncomingHttpHeaders;
      distinct?: NodeJS.Dict<string[]>;
      body?: string;
    } = {};
    const base = await serve((req, body, res) => {
      seen = { url: req.url, method: req.method, headers: req.headers, distinct: req.headersDistinct, body };
      json(res, 200, { ok: true });
    });
    const client = new KubeHttp(
      staticEndpoint({
        server: `${base}/k8s/clusters/c-1/`,
        headers: () => ({ Authorization: "Bearer t0k", "Impersonate-Group": ["a", "b"] }),
      }),
    );
    const out = await client.request({
      method: "PATCH",
      path: "/apis/g.dev/v1/namespaces/a/things/b",
      query: { labelSelector: "app in (x,y)", limit: 5, continue: undefined },
      body: { spec: { n: 1 } },
      contentType: "application/merge-patch+json",
    });
    expect(out).toEqual({ ok: true });
    expect(seen.method).toBe("PATCH");
    expect(seen.url).toBe(
      "/k8s/clusters/c-1/apis/g.dev/v1/namespaces/a/things/b?labelSelector=app+in+%28x%2Cy%29&limit=5",
    );
    expect(seen.headers?.authorization).toBe("Bearer t0k");
    expect(seen.distinct?.["impersonate-group"]).toEqual(["a", "b"]);
    expect(seen.headers?.["content-type"]).toBe("application/merge-patch+json");
    expect(JSON.parse(seen.body ?? "")).toEqual({ spec: { n: 1 } });
  });

  it("turns a Status answer into KubeError with the server's message and reason; 409 is a ConflictError", async () => {
    const base = await serve((req, _body, res) => {
      if (req.url?.endsWith("/conflict"))
        json(res, 409, { kind: "Status", reason: "Conflict", message: "the object has been modified" });
      else if (req.url?.endsWith("/html")) {
        res.writeHead(502);
        res.end("bad gateway");
      } else if (req.url?.endsWith("/garbled")) {
        res.writeHead(200);
        res.end("{not json");
      } else json(res, 404, { kind: "Status", reason: "NotFound", message: 'things "b" not found' });
    });
    const client = new KubeHttp(staticEndpoint({ server: base }));
    const err = (path: string) => client.request({ method: "GET", path }).catch((e: unknown) => e);

    const missing = await err("/missing");
    expect(missing).toBeInstanceOf(KubeError);
    expect(missing).toMatchObject({ status: 404, reason: "NotFound", message: 'things "b" not found' });
    const conflict = await err("/conflict");
    expect(conflict).toBeInstanceOf(ConflictError);
    expect(conflict).toMatchObject({ status: 409, reason: "Conflict" });
    expect(await err("/html")).toMatchObject({ status: 502, message: "HTTP 502: bad gateway" });
    expect(await err("/garbled")).toMatchObject({
      status: 200,
      message: "the API server answered 200 with a body that is not JSON",
    });
  });

  it("reuses one connection, and sends once more when the server closed the pooled one under it", async () => {
    let connections = 0;
    const perSocket = new WeakMap<object, number>();
    const base = await serve((req, _body, res) => {
      const n = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, n);
      // The race a keep-alive client meets: the server closes the connection as the next request goes out.
      if (req.url === "/drop" && n > 1) return req.socket.destroy();
      json(res, 200, { connections });
    });
    servers[0]?.on("connection", () => connections++);
    const client = new KubeHttp(staticEndpoint({ server: base }));
    for (let i = 0; i < 5; i++) await client.request({ method: "GET", path: "/x" });
    expect(connections).toBe(1);
    await expect(client.request({ method: "GET", path: "/drop" })).resolves.toEqual({ connections: 2 });
    // A fresh connection that fails is not retried: the error reaches the caller.
    const dropAlways = await serve((req) => req.socket.destroy());
    await expect(
      new KubeHttp(staticEndpoint({ server: dropAlways })).request({ method: "GET", path: "/" }),
    ).rejects.toThrow(/socket hang up|ECONNRESET/);
  });

  it("gives up on a server that does not answer, naming the host and the wait", async () => {
    const base = await serve(() => {
      // never answers
    });
    const client = new KubeHttp(staticEndpoint({ server: base }), { timeoutMs: 100 });
    await expect(client.request({ method: "GET", path: "/slow" })).rejects.toThrow(
      /no answer from 127\.0\.0\.1:\d+ within 100 ms/,
    );
  });

  it("refuses a server URL that is not http(s)", () => {
    expect(
      () =>
        new KubeHttp({
          server: "unix:///var/run/k8s.sock",
          prepare: async () => ({ headers: {}, agent: new http.Agent() }),
        }),
    ).toThrow(/must be an http\(s\) URL/);
  });
});
