// What the own HTTP client retries, and how often: one retry with refreshed credentials after a 401,
// waits the server asks for with 429 / 503 + Retry-After (capped, twice at most). Against a local
// node:http server; tests count requests and the waits asked for, never time.
import { mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import { cachedTokenSource } from "../../../shared/kube/cluster-auth.ts";
import {
  KubeError,
  KubeHttp,
  MAX_RETRY_AFTER_MS,
  type PrepareOptions,
  staticEndpoint,
} from "../../../shared/kube/http.ts";
import { endpointFromKubeconfig, parseKubeconfig } from "../../../shared/kube/kubeconfig.ts";
import { endpointFromKubeConfig } from "../../../shared/kube/kubeconfig-endpoint.ts";

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

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

/** A local server that counts requests; `handler` gets the request's 1-based number. */
async function serve(handler: (n: number, req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const seen = { requests: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => handler(++seen.requests, req, res));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const answer = (res: http.ServerResponse, status: number, headers: http.OutgoingHttpHeaders = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(status < 300 ? { ok: true } : { kind: "Status", message: `status ${status}` }));
};

/** Answers 200 only to `Bearer <token>`, else 401. */
const acceptOnly =
  (token: string): Handler =>
  (req, res) =>
    answer(res, req.headers.authorization === `Bearer ${token}` ? 200 : 401);

describe("401: one retry with refreshed credentials", () => {
  it("asks the endpoint to refresh, sends once more, and succeeds with the new token", async () => {
    // Prepare
    const { base, seen } = await serve((_n, req, res) => acceptOnly("new")(req, res));
    const asked: PrepareOptions[] = [];
    let token = "old";
    const client = new KubeHttp(
      staticEndpoint({
        server: base,
        headers: (opts) => {
          asked.push(opts);
          if (opts.refresh) token = "new";
          return { Authorization: `Bearer ${token}` };
        },
      }),
    );
    // Act
    const out = await client.request({ method: "GET", path: "/api" });
    // Assess
    expect(out).toEqual({ ok: true });
    expect(seen.requests).toBe(2);
    expect(asked).toEqual([{}, { refresh: true }]);
  });

  it("returns a second 401 as the error", async () => {
    const { base, seen } = await serve((_n, _req, res) => answer(res, 401));
    const client = new KubeHttp(staticEndpoint({ server: base, headers: () => ({}) }));
    const err = await client.request({ method: "GET", path: "/api" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeError);
    expect(err).toMatchObject({ status: 401 });
    expect(seen.requests).toBe(2);
  });

  it("re-reads a kubeconfig tokenFile at once (not after its minute) when the token was refused", async () => {
    // Prepare: the token file rotates while the client still holds the old token.
    const dir = mkdtempSync(path.join(tmpdir(), "driftless-401-"));
    writeFileSync(path.join(dir, "token"), "old\n");
    const { base, seen } = await serve((_n, req, res) => acceptOnly("rotated")(req, res));
    const kc = parseKubeconfig(
      `clusters: [{name: c, cluster: {server: "${base}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {tokenFile: token}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x`,
      { dir },
    );
    const client = new KubeHttp(endpointFromKubeconfig(kc, { now: () => 0 }).endpoint);
    await expect(client.request({ method: "GET", path: "/a" })).rejects.toMatchObject({ status: 401 });
    expect(seen.requests).toBe(2);
    writeFileSync(path.join(dir, "token"), "rotated\n");
    // Act
    const out = await client.request({ method: "GET", path: "/b" });
    // Assess: the clock never moved, so only the 401 made it read the file again.
    expect(out).toEqual({ ok: true });
    expect(seen.requests).toBe(4);
  });

  it("mints a new built-in (EKS/GKE) token on refresh, one at a time", async () => {
    let minted = 0;
    const source = cachedTokenSource(async () => ({
      token: `t${++minted}`,
      expiresAt: new Date(Date.now() + 3_600_000),
    }));
    expect(await source()).toBe("t1");
    expect(await source()).toBe("t1");
    const [a, b] = await Promise.all([source({ refresh: true }), source({ refresh: true })]);
    expect([a, b]).toEqual(["t2", "t2"]);
    expect(minted).toBe(2);
  });

  it("runs a client-node exec plugin again (KubeConfig adapter)", async () => {
    // Prepare: a plugin that counts its runs in a file and returns token t<runs>, valid for an hour.
    const dir = mkdtempSync(path.join(tmpdir(), "driftless-exec-"));
    const counter = path.join(dir, "runs");
    writeFileSync(counter, "0");
    const script = `const fs=require("fs");const n=Number(fs.readFileSync(${JSON.stringify(counter)},"utf8"))+1;fs.writeFileSync(${JSON.stringify(counter)},String(n));console.log(JSON.stringify({apiVersion:"client.authentication.k8s.io/v1",kind:"ExecCredential",status:{token:"t"+n,expirationTimestamp:new Date(Date.now()+3600000).toISOString()}}))`;
    const { base, seen } = await serve((_n, req, res) => acceptOnly("t2")(req, res));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "c", server: base, skipTLSVerify: true }],
      users: [
        {
          name: "u",
          exec: {
            apiVersion: "client.authentication.k8s.io/v1",
            command: process.execPath,
            args: ["-e", script],
            interactiveMode: "Never",
          },
        },
      ],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    const client = new KubeHttp(endpointFromKubeConfig(kc));
    // Act
    const out = await client.request({ method: "GET", path: "/api" });
    // Assess
    expect(out).toEqual({ ok: true });
    expect(seen.requests).toBe(2);
  });
});

describe("429 and 503 with Retry-After", () => {
  const client = (base: string, waits: number[]) =>
    new KubeHttp(staticEndpoint({ server: base }), {
      sleep: async (ms) => {
        waits.push(ms);
      },
    });

  it("waits what a 429 asks, then succeeds", async () => {
    const { base, seen } = await serve((n, _req, res) =>
      n === 1 ? answer(res, 429, { "retry-after": "3" }) : answer(res, 200),
    );
    const waits: number[] = [];
    await expect(
      client(base, waits).request({ method: "POST", path: "/x", body: { a: 1 } }),
    ).resolves.toEqual({ ok: true });
    expect(seen.requests).toBe(2);
    expect(waits).toEqual([3_000]);
  });

  it("caps a long Retry-After and gives up after two retries with the server's error", async () => {
    const { base, seen } = await serve((_n, _req, res) => answer(res, 429, { "retry-after": "120" }));
    const waits: number[] = [];
    const err = await client(base, waits)
      .request({ method: "GET", path: "/x" })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 429, retryAfterSeconds: 120 });
    expect(seen.requests).toBe(3);
    expect(waits).toEqual([MAX_RETRY_AFTER_MS, MAX_RETRY_AFTER_MS]);
  });

  it("retries a 503 only when it carries Retry-After; other errors are not retried", async () => {
    const plain = await serve((_n, _req, res) => answer(res, 503));
    const waits: number[] = [];
    await expect(client(plain.base, waits).request({ method: "GET", path: "/x" })).rejects.toMatchObject({
      status: 503,
    });
    expect(plain.seen.requests).toBe(1);

    const asked = await serve((n, _req, res) =>
      n === 1 ? answer(res, 503, { "retry-after": "1" }) : answer(res, 200),
    );
    await expect(client(asked.base, waits).request({ method: "GET", path: "/x" })).resolves.toEqual({
      ok: true,
    });
    expect(asked.seen.requests).toBe(2);

    const broken = await serve((_n, _req, res) => answer(res, 500, { "retry-after": "1" }));
    await expect(client(broken.base, waits).request({ method: "GET", path: "/x" })).rejects.toMatchObject({
      status: 500,
    });
    expect(broken.seen.requests).toBe(1);
    expect(waits).toEqual([1_000]);
  });
});
