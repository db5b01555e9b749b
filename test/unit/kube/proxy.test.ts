// Proxies: which one a request takes (kubeconfig proxy-url, else HTTPS_PROXY / HTTP_PROXY unless NO_PROXY
// or loopback), and that requests really go through a CONNECT tunnel, one per pooled connection. The
// proxy and the "API server" are local node:http servers; the server's name does not resolve, so only
// the tunnel can reach it.
import http from "node:http";
import type net from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { KubeHttp, staticEndpoint } from "../../../shared/kube/http.ts";
import { endpointFromKubeconfig, parseKubeconfig } from "../../../shared/kube/kubeconfig.ts";
import { proxyFromEnvironment } from "../../../shared/kube/proxy.ts";
import { connectProxy } from "../../support/connect-proxy.ts";

const servers: net.Server[] = [];
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((r) => {
          if (s instanceof http.Server) s.closeAllConnections();
          s.close(() => r());
        }),
    ),
  );
});

async function listen<T extends net.Server>(server: T): Promise<number> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return (server.address() as AddressInfo).port;
}

/** A fake API server, and a CONNECT proxy that tunnels every target to it; both count what they see. */
async function apiBehindProxy() {
  const seen = { requests: 0, connects: [] as string[] };
  const api = http.createServer((_req, res) => {
    seen.requests++;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ ok: true }));
  });
  const apiPort = await listen(api);
  const proxy = await connectProxy(() => ({ host: "127.0.0.1", port: apiPort }));
  closers.push(proxy.close);
  seen.connects = proxy.connects;
  return { seen, proxyUrl: proxy.url };
}

describe("which proxy", () => {
  const env = { HTTPS_PROXY: "http://proxy:3128", HTTP_PROXY: "proxy:8080" };
  const cases: Array<[string, Record<string, string>, string | undefined]> = [
    ["https://k8s.example.com:6443", env, "http://proxy:3128"],
    ["http://k8s.example.com", env, "http://proxy:8080"],
    ["https://k8s.example.com", { https_proxy: "http://low:1" }, "http://low:1"],
    ["https://k8s.example.com", {}, undefined],
    ["https://127.0.0.1:6443", env, undefined],
    ["https://localhost:6443", env, undefined],
    ["https://[::1]:6443", env, undefined],
    ["https://k8s.example.com", { ...env, NO_PROXY: "*" }, undefined],
    ["https://k8s.example.com", { ...env, NO_PROXY: "other.com, example.com" }, undefined],
    ["https://k8s.example.com", { ...env, NO_PROXY: ".example.com" }, undefined],
    ["https://example.com", { ...env, NO_PROXY: ".example.com" }, "http://proxy:3128"],
    ["https://notexample.com", { ...env, no_proxy: "example.com" }, "http://proxy:3128"],
    ["https://10.1.2.3:6443", { ...env, NO_PROXY: "10.0.0.0/8" }, undefined],
    ["https://11.1.2.3:6443", { ...env, NO_PROXY: "10.0.0.0/8" }, "http://proxy:3128"],
    ["https://10.1.2.3:6443", { ...env, NO_PROXY: "10.1.2.3:6443" }, undefined],
    ["https://10.1.2.3:443", { ...env, NO_PROXY: "10.1.2.3:6443" }, "http://proxy:3128"],
  ];
  it.each(cases)("%s with %j → %s", (server, e, expected) => {
    expect(proxyFromEnvironment(server, e)).toBe(expected);
  });
});

describe("through the proxy", () => {
  it("tunnels every request of a kubeconfig with proxy-url over one CONNECT", async () => {
    // Prepare
    const { seen, proxyUrl } = await apiBehindProxy();
    const kc =
      parseKubeconfig(`clusters: [{name: c, cluster: {server: "http://kube.invalid:6443", insecure-skip-tls-verify: true, proxy-url: "${proxyUrl}"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x`);
    const client = new KubeHttp(endpointFromKubeconfig(kc, { env: {} }).endpoint);
    // Act
    for (let i = 0; i < 3; i++) await client.request({ method: "GET", path: "/api" });
    // Assess
    expect(seen.requests).toBe(3);
    expect(seen.connects).toEqual(["kube.invalid:6443"]);
  });

  it("takes HTTP(S)_PROXY from the environment, and goes direct for a NO_PROXY host", async () => {
    const { seen, proxyUrl } = await apiBehindProxy();
    const env = { HTTP_PROXY: proxyUrl };
    const proxied = new KubeHttp(staticEndpoint({ server: "http://kube.invalid:80", env }));
    await expect(proxied.request({ method: "GET", path: "/api" })).resolves.toEqual({ ok: true });
    expect(seen.connects).toEqual(["kube.invalid:80"]);

    const direct = new KubeHttp(
      staticEndpoint({ server: "http://kube.invalid:80", env: { ...env, NO_PROXY: "kube.invalid" } }),
    );
    await expect(direct.request({ method: "GET", path: "/api" })).rejects.toThrow(/ENOTFOUND|EAI_AGAIN/);
    expect(seen.connects).toHaveLength(1);
  });

  it("refuses a proxy-url that is not http(s)", () => {
    const kc =
      parseKubeconfig(`clusters: [{name: c, cluster: {server: "https://k.invalid", proxy-url: "socks5://p:1080"}}]
contexts: [{name: x, context: {cluster: c}}]
current-context: x`);
    expect(() => endpointFromKubeconfig(kc)).toThrow(
      'cluster "c": proxy-url must be an http:// or https:// proxy (socks5 is not supported)',
    );
  });
});
