// The Google REST client talks to an endpoint a ProviderConfig author may choose (spec.endpoint, within
// the platform's host list): it must not be a way to reach another host (a redirect) nor to copy what a
// host answered into the resource's status (conditions are readable by everyone who reads the resource).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThroughClient } from "google-auth-library";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import type { GcpProviderConfigSpec, ProviderConfig } from "../../../shared/api/provider-config.ts";
import { GoogleHttpError, GoogleRestClient } from "../../../shared/providers/gcp/google-rest.ts";
import { sqlInstanceProvider } from "../../../shared/providers/gcp/sql-instance.ts";
import { gcsBucketProvider } from "../../../shared/providers/gcp/storage-bucket.ts";

const INTERNAL = "internal-admin-page: db password hunter2";
let target: Server;
let targetHits = 0;
let endpoint: Server;
let endpointUrl = "";

const listen = async (s: Server) => {
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
};

beforeAll(async () => {
  // Stands for a host the tenant may not name (the metadata server, an internal service).
  target = createServer((_req, res) => {
    targetHits++;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ secret: INTERNAL }));
  });
  const targetUrl = await listen(target);
  endpoint = createServer((req, res) => {
    if (req.url?.startsWith("/peered") || (req.method === "POST" && req.url?.startsWith("/sql/"))) {
      // Cloud SQL's refusal of an unpeered network, in a message that also carries what must not pass.
      const message = `${INTERNAL}: Incorrect Service Networking config for instance: p:i:NETWORK_NOT_PEERED.`;
      res
        .writeHead(400, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { code: 400, message, errors: [{ reason: "invalid" }] } }));
    } else if (
      req.url?.startsWith("/redirect") ||
      req.url?.startsWith("/storage/v1/b/") ||
      req.url?.startsWith("/sql/")
    ) {
      res.writeHead(302, { location: `${targetUrl}/computeMetadata/v1/`, "content-type": "text/plain" });
      res.end(`moved to ${INTERNAL}`);
    } else if (req.url?.startsWith("/text")) {
      res.writeHead(500, { "content-type": "text/plain" }).end(INTERNAL);
    } else if (req.url?.startsWith("/html")) {
      res.writeHead(404, { "content-type": "text/html" }).end(`<!DOCTYPE html><p>${INTERNAL}</p>`);
    } else if (req.url?.startsWith("/status")) {
      // Google's error body (AIP-193): canonical status, and the reason in an ErrorInfo detail.
      const details = [
        { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "SERVICE_NOT_READY", domain: "x" },
        { "@type": "type.googleapis.com/google.rpc.Help", links: [{ url: INTERNAL }] },
      ];
      res
        .writeHead(400, { "content-type": "application/json" })
        .end(
          JSON.stringify({ error: { code: 400, message: INTERNAL, status: "FAILED_PRECONDITION", details } }),
        );
    } else if (req.url?.startsWith("/badstatus")) {
      res
        .writeHead(400, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { code: 400, message: INTERNAL, status: INTERNAL } }));
    } else {
      res
        .writeHead(409, { "content-type": "application/json" })
        .end(
          JSON.stringify({ error: { code: 409, message: INTERNAL, errors: [{ reason: "alreadyExists" }] } }),
        );
    }
  });
  endpointUrl = await listen(endpoint);
});
afterAll(async () => {
  await new Promise((r) => endpoint.close(r));
  await new Promise((r) => target.close(r));
});

const failure = (path: string) =>
  new GoogleRestClient(endpointUrl, new PassThroughClient()).request("GET", path).catch((e: Error) => e);

describe("Google REST client boundary", () => {
  it("attack: a redirect is not followed; the error names the status and content type only", async () => {
    const err = await failure("/redirect");
    expect(err).toBeInstanceOf(Error);
    expect(targetHits).toBe(0);
    const msg = (err as Error).message;
    expect(msg).toContain("HTTP 302");
    expect(msg).toContain("text/plain");
    expect(msg).not.toContain("hunter2");
    expect(msg).not.toContain("computeMetadata");
  });

  it("attack: a non-JSON error answer is not copied into the message", async () => {
    const err = await failure("/text");
    expect(err).toBeInstanceOf(GoogleHttpError);
    expect((err as GoogleHttpError).code).toBe(500);
    expect((err as Error).message).not.toContain("hunter2");
    expect((err as Error).message).toContain("text/plain");
  });

  it("attack: an HTML page is named by status and content type, not by its first bytes", async () => {
    const err = await failure("/html");
    expect((err as Error).message).toContain("HTTP 404, Content-Type text/html");
    expect((err as Error).message).not.toContain("hunter2");
  });

  it("attack: a JSON error of a host that is not Google's keeps its status and reason, not its message", async () => {
    const err = await failure("/json");
    expect(err).toBeInstanceOf(GoogleHttpError);
    expect((err as GoogleHttpError).code).toBe(409);
    expect((err as GoogleHttpError).reason).toBe("alreadyExists");
    expect((err as Error).message).not.toContain("hunter2");
  });

  it("keeps Google's canonical status and the ErrorInfo reason, nothing else of the body", async () => {
    const err = await failure("/status");
    expect(err).toBeInstanceOf(GoogleHttpError);
    expect((err as GoogleHttpError).status).toBe("FAILED_PRECONDITION");
    expect((err as GoogleHttpError).reason).toBe("SERVICE_NOT_READY");
    expect((err as Error).message).toContain("FAILED_PRECONDITION");
    expect((err as Error).message).not.toContain("hunter2");
  });

  it("attack: of a host that is not Google's, only the API's known phrases pass, not the text around them", async () => {
    const err = await new GoogleRestClient(endpointUrl, new PassThroughClient(), {
      knownPhrases: ["NETWORK_NOT_PEERED", "SERVICE_NETWORKING_NOT_ENABLED"],
    })
      .request("GET", "/peered")
      .catch((e: Error) => e);
    expect((err as GoogleHttpError).code).toBe(400);
    expect((err as Error).message).toContain("it says NETWORK_NOT_PEERED");
    expect((err as Error).message).not.toContain("SERVICE_NETWORKING_NOT_ENABLED");
    expect((err as Error).message).not.toContain("hunter2");
    expect((err as Error).message).not.toContain("p:i");
  });

  it("attack: a status that is not one of google.rpc.Code's names is not copied", async () => {
    const err = await failure("/badstatus");
    expect((err as GoogleHttpError).status).toBeUndefined();
    expect((err as Error).message).not.toContain("hunter2");
  });
});

describe("Cloud Storage bucket boundary", () => {
  const providerConfig = (storage: string): ProviderConfig<GcpProviderConfigSpec> => ({
    apiVersion: "gcp.driftless.dev/v1alpha1",
    kind: "ProviderConfig",
    metadata: { name: "redirecting", uid: "uid-redirect", generation: 1 },
    spec: { projectID: "p", credentials: { source: "InjectedIdentity" }, endpoint: { storage } },
  });
  const bucket = {
    apiVersion: "storage.gcp.driftless.dev/v1alpha1",
    kind: "Bucket",
    metadata: { name: "b" },
    spec: { forProvider: {} },
  } as ManagedResource;

  it("attack: a Storage endpoint that redirects the bucket read elsewhere is not followed", async () => {
    targetHits = 0;
    const client = await gcsBucketProvider.connect({
      providerConfig: providerConfig(endpointUrl),
      readSecretKey: () => Promise.reject(new Error("no Secret is read")),
    });
    const err = await client.observe(bucket, "redirected-bucket").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/answered a redirect \(HTTP 302.*which is not followed/);
    expect((err as Error).message).toContain("spec.endpoint.storage");
    expect((err as Error).message).not.toContain("hunter2");
    expect(targetHits).toBe(0);
  });
});

describe("Cloud SQL boundary", () => {
  /** The DatabaseInstance client of a ProviderConfig whose spec.endpoint.sql is the test's endpoint. */
  const sqlClient = (name: string) =>
    sqlInstanceProvider.connect({
      providerConfig: {
        apiVersion: "gcp.driftless.dev/v1alpha1",
        kind: "ProviderConfig",
        metadata: { name, uid: `uid-${name}`, generation: 1 },
        spec: { projectID: "p", credentials: { source: "InjectedIdentity" }, endpoint: { sql: endpointUrl } },
      },
      // The root password a spec names (rootPasswordSecretRef): the only Secret read.
      readSecretKey: () => Promise.resolve("a-Root-passw0rd"),
    });
  const instance = (forProvider: Record<string, unknown>) =>
    ({
      apiVersion: "sql.gcp.driftless.dev/v1alpha1",
      kind: "DatabaseInstance",
      metadata: { name: "i", annotations: {} },
      spec: { forProvider: { databaseVersion: "POSTGRES_16", tier: "db-f1-micro", ...forProvider } },
    }) as ManagedResource;

  it("attack: a Cloud SQL endpoint that redirects the instance read elsewhere is not followed", async () => {
    targetHits = 0;
    const client = await sqlClient("redirecting-sql");
    const err = await client
      .observe(instance({ region: "europe-west1" }), "redirected-instance")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain("HTTP 302");
    expect((err as Error).message).toContain("not followed");
    expect((err as Error).message).not.toContain("hunter2");
    expect(targetHits).toBe(0);
  });

  it("attack: a Cloud SQL endpoint's error text is not copied; Cloud SQL's own refusal of an unpeered network is still explained", async () => {
    const client = await sqlClient("foreign-sql");
    const unpeered = instance({
      rootPasswordSecretRef: { name: "root", namespace: "default", key: "password" },
      privateNetwork: "projects/p/global/networks/n",
    });
    const err = await client.create(unpeered, "i").catch((e: unknown) => e);
    expect((err as Error).message).toContain("has no private services connection yet");
    expect((err as Error).message).toContain("NETWORK_NOT_PEERED");
    expect((err as Error).message).not.toContain("hunter2");
  });
});
