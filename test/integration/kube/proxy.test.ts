// The own client through an HTTP CONNECT proxy to the real kube-apiserver (TLS with the stack's CA inside
// the tunnel): the stack's kubeconfig with proxy-url added; requests and a watch both go through it.
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import type { ResourceType } from "../../../shared/api/meta.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { endpointFromKubeconfig, readKubeconfigFile } from "../../../shared/kube/kubeconfig.ts";
import { env } from "../../support/env.ts";

const Namespace: ResourceType = {
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
};

const connects: string[] = [];
const proxy = http.createServer((_req, res) => {
  res.writeHead(405);
  res.end();
});
const tunnels = new Set<net.Socket>();
proxy.on("connect", (req: http.IncomingMessage, client: net.Socket) => {
  connects.push(req.url ?? "");
  const [host, port] = (req.url ?? "").split(":");
  const upstream = net.connect(Number(port), host ?? "", () => {
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    upstream.pipe(client);
    client.pipe(upstream);
  });
  tunnels.add(client);
  const close = () => {
    upstream.destroy();
    client.destroy();
  };
  upstream.on("error", close);
  client.on("error", close);
  client.on("close", close);
});

afterAll(async () => {
  for (const t of tunnels) t.destroy();
  await new Promise<void>((r) => proxy.close(() => r()));
});

describe("through an HTTP proxy, real API server", () => {
  it("reads, lists and watches over CONNECT tunnels, one per pooled connection", async () => {
    // Prepare
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", () => r()));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const kc = readKubeconfigFile(env("KUBECONFIG"));
    const withProxy = { ...kc, clusters: kc.clusters.map((c) => ({ ...c, proxyUrl })) };
    const { endpoint } = endpointFromKubeconfig(withProxy, { env: {} });
    const kube = new Kube(endpoint);
    const apiHost = new URL(endpoint.server).host;
    // Act
    const first = await kube.get(Namespace, "default");
    const again = await kube.get(Namespace, "kube-system");
    const events: string[] = [];
    const watching = await kube.watch(Namespace, { timeoutSeconds: 1 }, (type, obj) =>
      events.push(`${type} ${obj.metadata.name}`),
    );
    await watching.ended;
    // Assess
    expect(first?.metadata.name).toBe("default");
    expect(again?.metadata.name).toBe("kube-system");
    expect(events).toContain("ADDED default");
    expect(connects.length).toBeGreaterThanOrEqual(1);
    expect(connects.length).toBeLessThanOrEqual(2);
    expect(new Set(connects)).toEqual(new Set([apiHost]));
  });
});
