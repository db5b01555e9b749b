// Kube.watch over the own HTTP client: a newline-delimited JSON stream, against a local node:http server
// (test/integration/pipeline/forwarder.test.ts watches the real kube-apiserver through the forwarder).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { ResourceType } from "../../../shared/api/meta.ts";
import { Kube, KubeError } from "../../../shared/kube/client.ts";
import { staticEndpoint } from "../../../shared/kube/http.ts";

const Thing: ResourceType = {
  group: "g.dev",
  version: "v1",
  kind: "Thing",
  plural: "things",
  namespaced: true,
};

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

async function serve(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const line = (type: string, object: unknown) => `${JSON.stringify({ type, object })}\n`;
const thing = (name: string, rv: string) => ({ metadata: { name, namespace: "a", resourceVersion: rv } });

describe("Kube.watch", () => {
  it("sends the watch query, delivers events split across chunks, BOOKMARK and ERROR, and ends with the stream", async () => {
    // Prepare
    let url = "";
    const { base } = await serve((req, res) => {
      url = req.url ?? "";
      res.writeHead(200, { "content-type": "application/json" });
      const added = line("ADDED", thing("x", "5"));
      res.write(added.slice(0, 10));
      setTimeout(() => {
        res.write(added.slice(10) + line("MODIFIED", thing("x", "6")).trimEnd());
        res.write(`\n${line("BOOKMARK", { metadata: { resourceVersion: "9" } })}`);
        res.end(line("ERROR", { kind: "Status", code: 410, message: "too old resource version" }));
      }, 5);
    });
    const kube = new Kube(staticEndpoint({ server: base }));
    const events: Array<[string, unknown]> = [];
    // Act
    const watching = await kube.watch(
      Thing,
      { resourceVersion: "4", labelSelector: "a=b", timeoutSeconds: 20, allowWatchBookmarks: true },
      (type, obj) => events.push([type, obj]),
    );
    await watching.ended;
    // Assess
    expect(url).toBe(
      "/apis/g.dev/v1/things?watch=true&resourceVersion=4&labelSelector=a%3Db&timeoutSeconds=20&allowWatchBookmarks=true",
    );
    expect(events).toEqual([
      ["ADDED", thing("x", "5")],
      ["MODIFIED", thing("x", "6")],
      ["BOOKMARK", { metadata: { resourceVersion: "9" } }],
      ["ERROR", { kind: "Status", code: 410, message: "too old resource version" }],
    ]);
    expect(kube.stats.byOperation["watch Thing"]).toBe(1);
  });

  it("stops on abort: the stream ends quietly and the server sees the connection close", async () => {
    let closed = 0;
    const { base } = await serve((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(line("ADDED", thing("y", "1")));
      req.socket.on("close", () => closed++);
    });
    const kube = new Kube(staticEndpoint({ server: base }));
    const abort = new AbortController();
    const events: string[] = [];
    const watching = await kube.watch(Thing, {}, (type) => events.push(type), abort.signal);
    await new Promise<void>((r) => {
      const poll = () => (events.length > 0 ? r() : setTimeout(poll, 2));
      poll();
    });
    abort.abort();
    await expect(watching.ended).resolves.toBeUndefined();
    await new Promise<void>((r) => {
      const poll = () => (closed > 0 ? r() : setTimeout(poll, 2));
      poll();
    });
    expect(events).toEqual(["ADDED"]);
    expect(closed).toBe(1);
  });

  it("rejects a refused watch with KubeError (404 for a CRD that is not installed), after one 401 refresh", async () => {
    const seen: string[] = [];
    const { base } = await serve((req, res) => {
      seen.push(req.headers.authorization ?? "");
      const status = req.headers.authorization === "Bearer fresh" ? 404 : 401;
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ kind: "Status", code: status, message: "the server could not find it" }));
    });
    const kube = new Kube(
      staticEndpoint({
        server: base,
        headers: ({ refresh }) => ({ Authorization: `Bearer ${refresh ? "fresh" : "stale"}` }),
      }),
    );
    const err = await kube.watch(Thing, {}, () => {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeError);
    expect(err).toMatchObject({ status: 404, message: "watch Thing: the server could not find it" });
    expect(seen).toEqual(["Bearer stale", "Bearer fresh"]);
  });

  it("fails the stream when a line is not JSON", async () => {
    const { base } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("{garbled\n");
    });
    const kube = new Kube(staticEndpoint({ server: base }));
    const watching = await kube.watch(Thing, {}, () => {});
    await expect(watching.ended).rejects.toThrow(
      "watch Thing: the API server sent a watch event that is not JSON",
    );
  });
});
