// A host *name* a tenant gives (an endpoint override, an app cluster's server or proxy) passes the URL
// checks whatever it resolves to; the lookup the connections use must refuse a link-local answer.

// A host *name* a tenant gives (an endpoint override, an app cluster's server or proxy) passes the URL
// checks whatever it resolves to; the lookup the connections use must refuse a link-local answer.
import http, { createServer, type Server } from "node:http";
import type { AddressInfo, LookupFunction } from "node:net";
import { GetQueueUrlCommand, SQSClient } from "@aws-sdk/client-sqs";
import {
  createEmptyPipeline,
  createHttpHeaders,
  type HttpClient,
  type PipelineRequest,
} from "@azure/core-rest-pipeline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardedLookup, RefusedAddressError } from "../../../shared/api/addresses.ts";
import { keepAliveAgent } from "../../../shared/kube/http.ts";
import { sdkOptions } from "../../../shared/providers/aws/config.ts";
import { ArmRest } from "../../../shared/providers/azure/arm-rest.ts";

/** A resolver that answers every name with the given address (a record the tenant controls). */
const answering =
  (address: string, family = address.includes(":") ? 6 : 4): LookupFunction =>
  (_host, options, cb) =>
    options.all ? cb(null, [{ address, family }]) : cb(null, address, family);

const resolve = (lookup: LookupFunction, host: string, all: boolean) =>
  new Promise<unknown>((res, rej) =>
    lookup(host, { all }, (err, address) => (err ? rej(err) : res(address))),
  );

describe("guardedLookup", () => {
  it.each([
    ["169.254.169.254"],
    ["169.254.170.2"],
    ["fe80::1"],
    ["::ffff:169.254.169.254"],
    ["fd00:ec2::254"],
    ["0.0.0.0"],
  ])("attack: a name that resolves to %s is refused, in both lookup forms", async (address) => {
    for (const all of [false, true]) {
      const err = await resolve(guardedLookup(answering(address)), "rebind.example.com", all).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(RefusedAddressError);
      expect((err as Error).message).toContain("rebind.example.com resolves to");
      expect((err as Error).message).toContain("link-local or metadata");
    }
  });

  it("refuses when any of several answers is link-local", async () => {
    const mixed: LookupFunction = (_h, _o, cb) =>
      cb(null, [
        { address: "203.0.113.7", family: 4 },
        { address: "169.254.169.254", family: 4 },
      ]);
    await expect(resolve(guardedLookup(mixed), "mixed.example.com", true)).rejects.toBeInstanceOf(
      RefusedAddressError,
    );
  });

  it("passes other answers through unchanged", async () => {
    expect(await resolve(guardedLookup(answering("127.0.0.1")), "localhost", false)).toBe("127.0.0.1");
    expect(await resolve(guardedLookup(answering("10.0.0.5")), "api.internal", true)).toEqual([
      { address: "10.0.0.5", family: 4 },
    ]);
  });
});

describe("connections through a guarded agent", () => {
  let server: Server;
  let port: number;
  let requests = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      requests++;
      res.end("{}");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const get = (agent: http.Agent, host: string) =>
    new Promise<number>((res, rej) =>
      http
        .get({ host, port, path: "/", agent }, (r) => {
          r.resume();
          res(r.statusCode ?? 0);
        })
        .on("error", rej),
    );

  it("attack: no request reaches a host whose name resolved to a link-local address", async () => {
    const before = requests;
    const agent = new http.Agent({ lookup: guardedLookup(answering("169.254.169.254")) });
    await expect(get(agent, "rebind.example.com")).rejects.toBeInstanceOf(RefusedAddressError);
    expect(requests).toBe(before);
    agent.destroy();
  });

  it("connects when the name resolves elsewhere", async () => {
    const agent = new http.Agent({ lookup: guardedLookup(answering("127.0.0.1")) });
    expect(await get(agent, "api.example.com")).toBe(200);
    agent.destroy();
  });

  it("every app-cluster and kube connection pool uses the guarded lookup", async () => {
    for (const agent of [
      keepAliveAgent("https://api.example.com", {}),
      keepAliveAgent("http://127.0.0.1:8080", {}),
      keepAliveAgent("https://api.example.com", {}, "http://127.0.0.1:3128"),
    ]) {
      const lookup = agent as unknown as {
        options?: { lookup?: LookupFunction };
        connectOpts?: { lookup?: LookupFunction };
      };
      const fn = lookup.options?.lookup ?? lookup.connectOpts?.lookup;
      expect(fn, agent.constructor.name).toBeTypeOf("function");
      // dns.lookup answers an address literal with itself: the guard sees what a socket would use.
      await expect(resolve(fn as LookupFunction, "169.254.169.254", false)).rejects.toBeInstanceOf(
        RefusedAddressError,
      );
      agent.destroy();
    }
  });

  it("every Resource Manager request's pools use the guarded lookup", async () => {
    // The requests ArmRest sends, over https and over http (an endpoint override), as the HTTP client gets them.
    const sent: PipelineRequest[] = [];
    const client: HttpClient = {
      sendRequest: async (request) => {
        sent.push(request);
        return { request, status: 200, headers: createHttpHeaders(), bodyAsText: "{}" };
      },
    };
    for (const endpoint of ["https://management.example.com", "http://127.0.0.1:8080"])
      await new ArmRest(createEmptyPipeline(), client, endpoint, "sub").send("GET", "/x", "2025-04-01");
    expect(sent.map((r) => new URL(r.url).protocol)).toEqual(["https:", "http:"]);
    for (const agent of sent.map((r) => r.agent)) {
      const fn = (agent as unknown as { options: { lookup?: LookupFunction } }).options.lookup;
      await expect(resolve(fn as LookupFunction, "169.254.169.254", false)).rejects.toBeInstanceOf(
        RefusedAddressError,
      );
    }
  });

  it("an AWS endpoint override's SDK client connects through the guarded pools", async () => {
    const opts = sdkOptions({
      region: "us-east-1",
      endpoint: `http://localhost:${port}`,
      credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
      cacheKey: "test",
    });
    const handler = opts.requestHandler as { httpAgent: http.Agent; httpsAgent: http.Agent };
    for (const agent of [handler.httpAgent, handler.httpsAgent]) {
      const fn = (agent as unknown as { options: { lookup?: LookupFunction } }).options.lookup;
      await expect(resolve(fn as LookupFunction, "169.254.169.254", false)).rejects.toBeInstanceOf(
        RefusedAddressError,
      );
    }
    const client = new SQSClient(opts);
    const before = requests;
    await client.send(new GetQueueUrlCommand({ QueueName: "q" })).catch(() => undefined);
    // The request went out through this handler's agent (localhost is resolved by the guarded lookup).
    expect(requests).toBeGreaterThan(before);
    expect(
      Object.keys(handler.httpAgent.freeSockets).length + Object.keys(handler.httpAgent.sockets).length,
    ).toBeGreaterThan(0);
    client.destroy();
  });
});
