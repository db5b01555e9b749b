import { generateKeyPairSync, verify } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { JWT, PassThroughClient } from "google-auth-library";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { CredentialsError, InvalidSpecError, ThrottledError } from "../../../shared/api/external.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import type { GcpProviderConfigSpec, ProviderConfig } from "../../../shared/api/provider-config.ts";
import {
  checkGcpCredentials,
  classifyGcpError,
  durationProto,
  durationText,
  GcpClientCache,
  gcpClientConfig,
  isGoogleEndpoint,
  observedDuration,
  parseServiceAccountKey,
} from "../../../shared/providers/gcp/config.ts";
import type { GoogleRestClient } from "../../../shared/providers/gcp/google-rest.ts";
import { pubsubApi } from "../../../shared/providers/gcp/pubsub-api.ts";
import { gcsBucketProvider, storageApi } from "../../../shared/providers/gcp/storage-bucket.ts";

const { privateKey, publicKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});
const EMAIL = "driftless@unit-project.iam.gserviceaccount.com";
const keyJson = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: "service_account",
    client_email: EMAIL,
    private_key: privateKey,
    private_key_id: "k1",
    ...extra,
  });

function ctxOf(
  spec: Partial<GcpProviderConfigSpec>,
  secret?: string,
  meta: { generation?: number; resourceVersion?: string } = {},
) {
  const providerConfig: ProviderConfig<GcpProviderConfigSpec> = {
    apiVersion: "gcp.driftless.dev/v1alpha1",
    kind: "ProviderConfig",
    metadata: {
      name: "unit",
      uid: "uid-1",
      generation: meta.generation ?? 1,
      resourceVersion: meta.resourceVersion ?? "10",
    },
    spec: {
      projectID: "unit-project",
      credentials:
        secret === undefined
          ? { source: "InjectedIdentity" }
          : { source: "Secret", secretRef: { namespace: "ns", name: "s", key: "k" } },
      ...spec,
    },
  };
  return {
    providerConfig,
    readSecretKey: async () => {
      if (secret === undefined) throw new Error("no secret");
      return secret;
    },
  };
}

/** The URL and Authorization header of the one request a GET of `path` sends (fetch stubbed: no network). */
async function sentBy(api: GoogleRestClient, path: string) {
  const seen: Array<{ url: string; authorization: string | null }> = [];
  vi.stubGlobal("fetch", async (url: string, init: RequestInit) => {
    seen.push({ url, authorization: new Headers(init.headers).get("authorization") });
    return new Response(JSON.stringify({ name: "b" }), {
      headers: { "content-type": "application/json" },
    });
  });
  try {
    await api.request("GET", path);
  } finally {
    vi.unstubAllGlobals();
  }
  expect(seen).toHaveLength(1);
  return seen[0] as { url: string; authorization: string | null };
}

/** Whether a bearer token is a self-signed JWT of the test key (kid k1, iss EMAIL, RS256 by its private key). */
function signedByKey(authorization: string | null): boolean {
  const [header, claims, signature] = (authorization ?? "").replace(/^Bearer /, "").split(".");
  expect(JSON.parse(Buffer.from(header ?? "", "base64url").toString())).toMatchObject({ kid: "k1" });
  expect(JSON.parse(Buffer.from(claims ?? "", "base64url").toString())).toMatchObject({ iss: EMAIL });
  return verify(
    "sha256",
    Buffer.from(`${header}.${claims}`),
    publicKey,
    Buffer.from(signature ?? "", "base64url"),
  );
}

describe("GCP service-account keys", () => {
  it("reads the fields the SDKs need", () => {
    expect(parseServiceAccountKey(keyJson())).toEqual({
      client_email: EMAIL,
      private_key: privateKey,
      private_key_id: "k1",
    });
  });

  it.each([
    ['{"private_key": "-----BEGIN PRIVATE KEY-----\\nsecret-ish', "it is not valid JSON"],
    ['["secret-ish"]', "it is not a JSON object"],
    [
      JSON.stringify({ type: "authorized_user", refresh_token: "secret-ish" }),
      "only service_account keys are supported",
    ],
    [JSON.stringify({ private_key: privateKey }), "client_email is missing"],
    [JSON.stringify({ client_email: EMAIL }), "private_key is missing"],
    [
      JSON.stringify({ client_email: EMAIL, private_key: "secret-ish" }),
      "private_key is not a PEM-encoded private key",
    ],
  ])("refuses %s with a message that never quotes it", (text, says) => {
    const err = (() => {
      try {
        parseServiceAccountKey(text);
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err).toBeInstanceOf(CredentialsError);
    expect(err?.message).toContain(says);
    expect(err?.message).not.toContain("secret-ish");
    expect(err?.message).not.toContain("PRIVATE KEY");
  });
});

describe("GCP client configuration", () => {
  it("needs a secretRef with source Secret", async () => {
    const ctx = ctxOf({ credentials: { source: "Secret" } }, keyJson());
    await expect(gcpClientConfig(ctx)).rejects.toThrow(/secretRef is not set/);
  });

  it("keys the client cache on generation, endpoints and credentials, not on resourceVersion", async () => {
    const a = await gcpClientConfig(ctxOf({}, keyJson(), { generation: 1, resourceVersion: "10" }));
    const statusWrite = await gcpClientConfig(ctxOf({}, keyJson(), { generation: 1, resourceVersion: "11" }));
    const newGeneration = await gcpClientConfig(ctxOf({}, keyJson(), { generation: 2 }));
    const otherKey = await gcpClientConfig(ctxOf({}, keyJson({ private_key_id: "k2" })));
    const otherEndpoint = await gcpClientConfig(ctxOf({ endpoint: { pubsub: "127.0.0.1:1" } }, keyJson()));
    expect(statusWrite.cacheKey).toBe(a.cacheKey);
    for (const b of [newGeneration, otherKey, otherEndpoint]) expect(b.cacheKey).not.toBe(a.cacheKey);
    expect(a.cacheKey).not.toContain(privateKey.slice(40, 80));
  });

  it("sends Pub/Sub to production unless the ProviderConfig names an endpoint, whatever PUBSUB_EMULATOR_HOST says", async () => {
    const saved = process.env.PUBSUB_EMULATOR_HOST;
    process.env.PUBSUB_EMULATOR_HOST = "127.0.0.1:1";
    try {
      const prod = pubsubApi(await gcpClientConfig(ctxOf({}, keyJson())));
      expect(prod.base).toBe("https://pubsub.googleapis.com");
      expect(prod.auth).toBeInstanceOf(JWT);
      // host:port of an emulator: plain HTTP (it serves REST on its gRPC port), no credentials at all.
      const emu = pubsubApi(
        await gcpClientConfig(ctxOf({ endpoint: { pubsub: "localhost:8085" } }, keyJson())),
      );
      expect(emu.base).toBe("http://localhost:8085");
      expect(emu.auth).toBeInstanceOf(PassThroughClient);
      // Google's host:port (a private or regional endpoint): HTTPS with the key.
      const regional = pubsubApi(
        await gcpClientConfig(
          ctxOf({ endpoint: { pubsub: "europe-west3-pubsub.googleapis.com:443" } }, keyJson()),
        ),
      );
      expect(regional.base).toBe("https://europe-west3-pubsub.googleapis.com:443");
      expect(regional.auth).toBeInstanceOf(JWT);
    } finally {
      if (saved === undefined) delete process.env.PUBSUB_EMULATOR_HOST;
      else process.env.PUBSUB_EMULATOR_HOST = saved;
    }
  });

  it("hands the service-account key to the Pub/Sub client, which signs with it", async () => {
    const ps = pubsubApi(await gcpClientConfig(ctxOf({}, keyJson())));
    const jwt = ps.auth as JWT;
    expect(jwt.email).toBe(EMAIL);
    jwt.useJWTAccessWithScope = true;
    const { url, authorization } = await sentBy(ps, "/v1/projects/p/topics/t");
    expect(url).toBe("https://pubsub.googleapis.com/v1/projects/p/topics/t");
    expect(signedByKey(authorization)).toBe(true);
  });

  it("hands the service-account key to the Storage client, which signs with it; emulators get no credentials", async () => {
    const sent = (api: GoogleRestClient) => sentBy(api, "/storage/v1/b/b");
    const fake = storageApi(
      await gcpClientConfig(ctxOf({ endpoint: { storage: "http://127.0.0.1:1" } }, keyJson())),
    );
    expect(fake.base).toBe("http://127.0.0.1:1");
    expect(fake.auth).toBeInstanceOf(PassThroughClient);
    expect(await sent(fake)).toEqual({ url: "http://127.0.0.1:1/storage/v1/b/b", authorization: null });

    const regional = storageApi(
      await gcpClientConfig(
        ctxOf({ endpoint: { storage: "https://storage.europe-west3.rep.googleapis.com" } }, keyJson()),
      ),
    );
    expect(regional.base).toBe("https://storage.europe-west3.rep.googleapis.com");
    expect(regional.auth).toBeInstanceOf(JWT);
    const jwt = regional.auth as JWT;
    expect(jwt.email).toBe(EMAIL);
    // A self-signed JWT instead of a token exchange, so the key's own signature reaches the stubbed wire.
    jwt.useJWTAccessWithScope = true;
    const { url, authorization } = await sent(regional);
    expect(url).toBe("https://storage.europe-west3.rep.googleapis.com/storage/v1/b/b");
    expect(signedByKey(authorization)).toBe(true);

    // No endpoint: Google's own, with the key.
    const prod = storageApi(await gcpClientConfig(ctxOf({}, keyJson())));
    expect(prod.base).toBe("https://storage.googleapis.com");
    expect(prod.auth).toBeInstanceOf(JWT);
  });

  it("tells Google's own hosts from emulators", () => {
    expect(isGoogleEndpoint(undefined)).toBe(true);
    expect(isGoogleEndpoint("pubsub.googleapis.com:443")).toBe(true);
    expect(isGoogleEndpoint("https://storage.googleapis.com")).toBe(true);
    expect(isGoogleEndpoint("127.0.0.1:8085")).toBe(false);
    expect(isGoogleEndpoint("http://localhost:4443/storage")).toBe(false);
    expect(isGoogleEndpoint("https://googleapis.com.evil.example")).toBe(false);
  });

  it("caches one client per configuration and closes the ones it forgets", async () => {
    const closed: number[] = [];
    let made = 0;
    const cache = new GcpClientCache(
      () => ++made,
      (n) => closed.push(n),
    );
    const cfg = (k: string) => ({ projectId: "p", cacheKey: k });
    expect(cache.get(cfg("a"))).toBe(cache.get(cfg("a")));
    for (let i = 0; i < 70; i++) cache.get(cfg(`k${i}`));
    expect(closed.length).toBeGreaterThan(0);
    expect(cache.size).toBeLessThanOrEqual(65);
  });
});

describe("GCP credential check", () => {
  it("proves the key signs when every endpoint is an emulator, and says Google was not asked", async () => {
    const emulators = {
      pubsub: "127.0.0.1:8085",
      storage: "http://127.0.0.1:4443",
      sql: "http://127.0.0.1:14480",
      compute: "http://127.0.0.1:14481",
      serviceNetworking: "http://127.0.0.1:14482",
    };
    const who = await checkGcpCredentials(ctxOf({ endpoint: emulators }, keyJson()));
    expect(who).toContain(`service account ${EMAIL} in project unit-project`);
    expect(who).toContain("not verified with Google");
    // One API left at Google's own endpoint (Cloud SQL here) is enough for the key to need Google's word.
    const { sql: _, ...withoutSql } = emulators;
    await expect(checkGcpCredentials(ctxOf({ endpoint: withoutSql }, keyJson()))).rejects.toThrow();
  });

  it("refuses a malformed key before any network call", async () => {
    await expect(
      checkGcpCredentials(ctxOf({ endpoint: { pubsub: "127.0.0.1:8085" } }, '{"private_key": "secret-ish"')),
    ).rejects.toBeInstanceOf(CredentialsError);
  });
});

describe("GCP error classification", () => {
  const grpc = (code: number, details = "x") =>
    Object.assign(new Error(`${code} STATUS: ${details}`), { code, details, metadata: {} });
  const http = (code: number, message = "x") => Object.assign(new Error(message), { code, errors: [] });

  it.each([
    [grpc(8), ThrottledError],
    [http(429), ThrottledError],
    [http(503), ThrottledError],
    [grpc(16), CredentialsError],
    [grpc(7), CredentialsError],
    [http(401), CredentialsError],
    [http(403), CredentialsError],
    [grpc(14, "Getting metadata from plugin failed with error: invalid_grant"), CredentialsError],
    [new Error("Could not load the default credentials. Browse to …"), CredentialsError],
    [
      Object.assign(new Error("invalid_grant"), {
        status: 400,
        response: { status: 400, data: { error: "invalid_grant" } },
      }),
      CredentialsError,
    ],
    [grpc(3), InvalidSpecError],
    [http(400), InvalidSpecError],
  ])("classifies %o", (err, cls) => {
    const out = classifyGcpError(err);
    expect(out).toBeInstanceOf(cls);
    expect(out.cause).toBe(err);
  });

  it("leaves not-found, conflicts and connection failures unclassified", () => {
    for (const err of [grpc(5), grpc(6), grpc(14, "No connection established"), http(404), http(409)]) {
      const out = classifyGcpError(err);
      expect(out).not.toBeInstanceOf(ThrottledError);
      expect(out).not.toBeInstanceOf(CredentialsError);
      expect(out).not.toBeInstanceOf(InvalidSpecError);
    }
  });

  it("prefixes HTTP errors with their status", () => {
    expect(classifyGcpError(http(400, "Invalid bucket name")).message).toBe("HTTP 400: Invalid bucket name");
    // The REST client's own text for a host that is not Google's already starts with it: not twice.
    const plain = "HTTP 400 (Content-Type application/json): invalid";
    expect(classifyGcpError(http(400, plain)).message).toBe(plain);
  });
});

describe("durations", () => {
  it("round-trips between the spec's text and protobuf Durations", () => {
    expect(durationText({ seconds: "600", nanos: 0 })).toBe("600s");
    expect(durationText({ seconds: 10, nanos: 500_000_000 })).toBe("10.5s");
    expect(durationText({ seconds: "0", nanos: 0 })).toBe("0s");
    expect(durationText(null)).toBeUndefined();
    expect(durationText(30)).toBe("30s");
    expect(durationProto("10.5s")).toEqual({ seconds: 10, nanos: 500_000_000 });
    expect(durationProto("600s")).toEqual({ seconds: 600, nanos: 0 });
    expect(() => durationProto("10m")).toThrow(InvalidSpecError);
    // The JSON form the REST APIs answer with (pubsub/v1 writes nanos as three, six or nine digits).
    expect(durationText("604800s")).toBe("604800s");
    expect(durationText("10.500s")).toBe("10.5s");
    expect(durationText("0.000000001s")).toBe("0.000000001s");
  });

  it("reports the cloud's value in the spec's spelling when they are the same time", () => {
    expect(observedDuration("10.500s", { seconds: 10, nanos: 500_000_000 })).toBe("10.500s");
    expect(observedDuration("11s", { seconds: 10, nanos: 0 })).toBe("10s");
    expect(observedDuration(undefined, { seconds: 10 })).toBe("10s");
    expect(observedDuration("10.5s", "10.500s")).toBe("10.5s");
    expect(observedDuration("11s", "10.500s")).toBe("10.5s");
  });
});

describe("GCS answers the fake cannot give", () => {
  // The GCS fake has no caller identity, so it can neither refuse a read of another project's bucket
  // (403) nor make a create of a name taken elsewhere answer 409: a stub server can.
  let server: Server;
  const lists: Array<Record<string, string>> = [];
  let url = "";
  beforeAll(async () => {
    server = createServer((req, res) => {
      res.setHeader("content-type", "application/json");
      if (req.method === "GET" && req.url?.includes("/b/forbidden")) {
        res.statusCode = 403;
        return res.end(
          JSON.stringify({ error: { code: 403, message: "x does not have storage.buckets.get access" } }),
        );
      }
      if (req.method === "GET" && req.url?.startsWith("/storage/v1/b?")) {
        // buckets.list of the ProviderConfig's project: our earlier create left "mine-1" in it.
        const q = new URL(req.url, "http://x").searchParams;
        lists.push(Object.fromEntries(q));
        const ours = q.get("project") === "unit-project" ? ["mine-1", "mine-10"] : [];
        const items = ours.filter((n) => n.startsWith(q.get("prefix") ?? "")).map((name) => ({ name }));
        return res.end(JSON.stringify({ kind: "storage#buckets", items }));
      }
      if (req.method === "GET") {
        res.statusCode = 404;
        return res.end(
          JSON.stringify({ error: { code: 404, message: "The specified bucket does not exist." } }),
        );
      }
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => {
        res.statusCode = 409;
        // Google's two wordings: the client must not need them (a host that is not Google's keeps none).
        const mine = !JSON.parse(body).name.includes("taken");
        const message = mine
          ? "Your previous request to create the named bucket succeeded and you already own it."
          : "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.";
        res.end(JSON.stringify({ error: { code: 409, message, errors: [{ reason: "conflict" }] } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const mr = (name: string) =>
    ({
      apiVersion: "storage.gcp.driftless.dev/v1alpha1",
      kind: "Bucket",
      metadata: { name },
      spec: { forProvider: {} },
    }) as ManagedResource;

  it("explains a name taken by another project, and treats our own earlier create as done", async () => {
    const client = await gcsBucketProvider.connect(ctxOf({ endpoint: { storage: url } }, keyJson()));
    expect((await client.observe(mr("taken-1"), "taken-1")).resourceExists).toBe(false);
    lists.length = 0;
    await expect(client.create(mr("taken-1"), "taken-1")).rejects.toThrow(/taken by another project/);
    await expect(client.create(mr("mine-1"), "mine-1")).resolves.toMatchObject({
      connectionDetails: { bucket: "mine-1", url: "gs://mine-1" },
    });
    // Decided by the project's own list, narrowed to the name: never by the 409's wording.
    expect(lists).toEqual([
      { project: "unit-project", maxResults: "1000", prefix: "taken-1" },
      { project: "unit-project", maxResults: "1000", prefix: "mine-1" },
    ]);
  });

  it("does not take a bucket that merely shares the name's prefix for ours", async () => {
    const client = await gcsBucketProvider.connect(ctxOf({ endpoint: { storage: url } }, keyJson()));
    await expect(client.create(mr("mine"), "mine")).rejects.toThrow(/taken by another project/);
  });

  it("reports a bucket it may not read as a credentials problem that mentions global names", async () => {
    const client = await gcsBucketProvider.connect(ctxOf({ endpoint: { storage: url } }, keyJson()));
    const err = await client.observe(mr("forbidden"), "forbidden").catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(CredentialsError);
    expect((err as Error).message).toContain("bucket names are global");
  });
});
