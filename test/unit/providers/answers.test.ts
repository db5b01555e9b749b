// Endpoints that answer, but not in the API's language, are named as such for Azure Resource Manager, Azure
// Blob, the Google REST APIs, Cloud Storage and Pub/Sub (REST) (the AWS SDKs' case is in aws-home.test.ts): an HTML
// 404 must never read as "not found", nor an HTML 200 as "exists".
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createDefaultHttpClient, createPipelineRequest } from "@azure/core-rest-pipeline";
import { PassThroughClient } from "google-auth-library";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import { EndpointMismatchError } from "../../../shared/providers/answers.ts";
import { armAnswers } from "../../../shared/providers/azure/answers.ts";
import { armPipeline } from "../../../shared/providers/azure/arm-rest.ts";
import { blobService } from "../../../shared/providers/azure/config.ts";
import { GoogleRestClient } from "../../../shared/providers/gcp/google-rest.ts";
import { topicProvider } from "../../../shared/providers/gcp/pubsub-topic.ts";
import { gcsBucketProvider } from "../../../shared/providers/gcp/storage-bucket.ts";

/** A Blob ProviderConfig with an account key (shared-key signing works over plain http) at `endpoint`. */
const blobContext = (endpoint: string, generation: number) => ({
  providerConfig: {
    apiVersion: "azure.driftless.dev/v1alpha1",
    kind: "ProviderConfig" as const,
    metadata: { name: "pc", uid: "u", generation },
    spec: {
      tenantID: "t",
      subscriptionID: "s",
      clientID: "c",
      credentials: { source: "Secret" as const, secretRef: { namespace: "n", name: "s", key: "k" } },
      storage: { accountName: "acct", accountKeySecretRef: { namespace: "n", name: "s", key: "a" } },
      endpoint: { blob: endpoint },
    },
  },
  readSecretKey: async () => Buffer.from("key").toString("base64"),
});

let server: Server;
let url = "";
/** The status the page answers with: 404, or 200 (the case that would read as "it exists"). */
let status = 404;
beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(status, { "content-type": "text/html" }).end("<!DOCTYPE html><title>Not Found</title>");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

describe("an endpoint that does not speak the API", () => {
  it("Google REST: an HTML 404 is an EndpointMismatchError naming the endpoint, not a not-found", async () => {
    const client = new GoogleRestClient(url, new PassThroughClient());
    const err = await client
      .request("GET", "/compute/v1/projects/p/global/networks/n")
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(EndpointMismatchError);
    expect((err as Error).message).toBe(
      `the endpoint ${url} does not speak the Google Cloud REST API: it answered HTTP 404, Content-Type text/html; the ProviderConfig's spec.endpoint (sql, compute, serviceNetworking) must point to a server of that API, or be removed to reach Google itself`,
    );
  });

  it("Azure Resource Manager: the pipeline policy refuses an HTML answer and passes JSON through", async () => {
    const { policy } = armAnswers("https://127.0.0.1:9443");
    const answer = (contentType: string, bodyAsText: string) => async () => ({
      status: 404,
      headers: { get: (n: string) => (n === "content-type" ? contentType : undefined) },
      bodyAsText,
    });
    const err = await policy
      .sendRequest({}, answer("text/html; charset=utf-8", "<html>nginx</html>"))
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(EndpointMismatchError);
    expect((err as Error).message).toContain(
      "the endpoint https://127.0.0.1:9443 does not speak the Azure Resource Manager API",
    );
    expect((err as Error).message).toContain("HTTP 404, Content-Type text/html; charset=utf-8");
    expect((err as Error).message).toContain("spec.endpoint.resourceManager must point to Resource Manager");
    const json = await policy.sendRequest(
      {},
      answer("application/json", '{"error":{"code":"ResourceNotFound"}}'),
    );
    expect(json.status).toBe(404);
  });

  it.each([404, 200])(
    "Azure Blob: an HTML %i never reads as a container missing or present",
    async (code) => {
      status = code;
      const { client } = await blobService(blobContext(`${url}/acct`, code));
      const err = await client
        .getContainerClient("c")
        .exists()
        .catch((e: Error) => e);
      expect(err).toBeInstanceOf(EndpointMismatchError);
      expect((err as Error).message).toContain(
        `the endpoint ${url}/acct does not speak the Azure Blob Storage API`,
      );
      expect((err as Error).message).toContain("spec.endpoint.blob must point to");
    },
  );

  it.each([404, 200])(
    "Cloud Storage: an HTML %i never reads as a bucket missing or present",
    async (code) => {
      status = code;
      const client = await gcsBucketProvider.connect({
        providerConfig: {
          apiVersion: "gcp.driftless.dev/v1alpha1",
          kind: "ProviderConfig",
          metadata: { name: "pc", uid: "u", generation: code },
          spec: { projectID: "p", credentials: { source: "InjectedIdentity" }, endpoint: { storage: url } },
        },
        readSecretKey: () => Promise.reject(new Error("no Secret is read")),
      });
      const bucket = { metadata: { name: "b" }, spec: { forProvider: {} } } as ManagedResource;
      const err = await client.observe(bucket, "b").catch((e: Error) => e);
      expect(err).toBeInstanceOf(EndpointMismatchError);
      expect((err as Error).message).toContain(
        `the endpoint ${url} does not speak the Cloud Storage JSON API`,
      );
      expect((err as Error).message).toContain(`HTTP ${code}, Content-Type text/html`);
      expect((err as Error).message).toContain("spec.endpoint.storage must point to");
    },
  );

  it.each([404, 200])("Pub/Sub: an HTML %i never reads as a topic missing or present", async (code) => {
    status = code;
    const host = url.replace("http://", "");
    const client = await topicProvider.connect({
      providerConfig: {
        apiVersion: "gcp.driftless.dev/v1alpha1",
        kind: "ProviderConfig",
        metadata: { name: "pc", uid: "u", generation: code },
        spec: { projectID: "p", credentials: { source: "InjectedIdentity" }, endpoint: { pubsub: host } },
      },
      readSecretKey: () => Promise.reject(new Error("no Secret is read")),
    });
    const topic = { metadata: { name: "t" }, spec: { forProvider: {} } } as ManagedResource;
    const err = await client.observe(topic, "topic-t").catch((e: Error) => e);
    expect(err).toBeInstanceOf(EndpointMismatchError);
    expect((err as Error).message).toContain(`the endpoint ${url} does not speak the Pub/Sub REST API`);
    expect((err as Error).message).toContain(`HTTP ${code}, Content-Type text/html`);
    expect((err as Error).message).toContain("spec.endpoint.pubsub must point to");
  });
});

describe("a redirect from a tenant's endpoint is never followed", () => {
  // The endpoint answers 307 to another server: following it would take the request (and its credentials)
  // past the endpoint checks, to a host nobody allowed.
  let target: Server;
  let redirector: Server;
  let hits = 0;
  let from = "";
  /** Where the redirector sends: another server, or a path of its own (same origin). */
  let sameOrigin = false;
  beforeAll(async () => {
    target = createServer((_req, res) => {
      hits++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    await new Promise<void>((r) => target.listen(0, "127.0.0.1", r));
    const to = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    redirector = createServer((req, res) => {
      if (req.url?.startsWith("/elsewhere")) {
        hits++;
        return void res.writeHead(200, { "content-type": "application/json" }).end("{}");
      }
      res.writeHead(307, { location: `${sameOrigin ? "" : to}/elsewhere${req.url ?? "/"}` }).end();
    });
    await new Promise<void>((r) => redirector.listen(0, "127.0.0.1", r));
    from = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => target.close(r));
    await new Promise((r) => redirector.close(r));
  });

  it.each([false, true])(
    "Azure Resource Manager (the one pipeline of every Azure kind): a 307 (same origin: %s) is an EndpointMismatchError, 0 requests elsewhere",
    async (same) => {
      hits = 0;
      sameOrigin = same;
      const token = { getToken: async () => ({ token: "t", expiresOnTimestamp: Date.now() + 3_600_000 }) };
      const pipeline = armPipeline(token, from);
      // The bearer policy refuses plain http before anything is sent: this redirector speaks http.
      pipeline.removePolicy({ name: "bearerTokenAuthenticationPolicy" });
      const err = await pipeline
        .sendRequest(
          createDefaultHttpClient(),
          createPipelineRequest({
            url: `${from}/subscriptions/s/resourcegroups/rg`,
            allowInsecureConnection: true,
          }),
        )
        .catch((e: Error) => e);
      expect(hits).toBe(0);
      expect(err).toBeInstanceOf(EndpointMismatchError);
      expect((err as Error).message).toContain(
        `the endpoint ${from} does not speak the Azure Resource Manager API`,
      );
      expect((err as Error).message).toContain("HTTP 307");
    },
  );

  it.each([false, true])(
    "Azure Blob: a 307 (same origin: %s) is an EndpointMismatchError, 0 requests elsewhere",
    async (same) => {
      hits = 0;
      sameOrigin = same;
      const { client } = await blobService(blobContext(`${from}/acct`, same ? 308 : 307));
      const err = await client
        .getContainerClient("c")
        .exists()
        .catch((e: Error) => e);
      expect(hits).toBe(0);
      expect(err).toBeInstanceOf(EndpointMismatchError);
      expect((err as Error).message).toContain("HTTP 307");
    },
  );
});
