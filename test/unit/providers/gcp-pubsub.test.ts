// The Pub/Sub kinds over Pub/Sub's REST API, against a stub server that answers what the emulator cannot:
// Google's error bodies by canonical status, a redirect, a bare 404 of a server that is not Pub/Sub, and
// what an external name may turn into. The endpoint is a ProviderConfig author's choice: nothing it answers
// is followed elsewhere or copied into the resource's status, and a "not found" needs Pub/Sub to say so.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  CredentialsError,
  type ExternalClient,
  InvalidSpecError,
  ThrottledError,
} from "../../../shared/api/external.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import { subscriptionProvider } from "../../../shared/providers/gcp/pubsub-subscription.ts";
import { topicProvider } from "../../../shared/providers/gcp/pubsub-topic.ts";

const INTERNAL = "internal-admin-page: db password hunter2";
type Answer = { status: number; headers?: Record<string, string>; body?: string };
/** What the stub answers next (every request alike), and what it was asked. */
let answer: Answer = { status: 200, body: "{}" };
let seen: Array<{ method: string; url: string }> = [];
let elsewhereHits = 0;
let stub: Server;
let elsewhere: Server;
let host = "";
let elsewhereUrl = "";

const listen = async (s: Server) => {
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return `127.0.0.1:${(s.address() as AddressInfo).port}`;
};
const googleError = (code: number, status: string) => ({
  status: code,
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ error: { code, message: INTERNAL, status } }),
});

beforeAll(async () => {
  stub = createServer((req: IncomingMessage, res) => {
    seen.push({ method: req.method ?? "", url: req.url ?? "" });
    req.resume();
    res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? "");
  });
  elsewhere = createServer((_req, res) => {
    elsewhereHits++;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ name: INTERNAL }));
  });
  host = await listen(stub);
  elsewhereUrl = `http://${await listen(elsewhere)}`;
});
afterAll(async () => {
  await new Promise((r) => stub.close(r));
  await new Promise((r) => elsewhere.close(r));
});
beforeEach(() => {
  seen = [];
  elsewhereHits = 0;
});

const providerConfig = (generation: number) => ({
  apiVersion: "gcp.driftless.dev/v1alpha1",
  kind: "ProviderConfig" as const,
  metadata: { name: "pc-pubsub-stub", uid: "uid-pubsub-stub", generation },
  spec: { projectID: "p", credentials: { source: "InjectedIdentity" as const }, endpoint: { pubsub: host } },
});
type Client = ExternalClient<Record<string, unknown>, Record<string, unknown>>;
const connect = async (provider: typeof topicProvider | typeof subscriptionProvider): Promise<Client> =>
  (await provider.connect({
    providerConfig: providerConfig(1),
    readSecretKey: () => Promise.reject(new Error("no Secret is read")),
  })) as unknown as Client;
const mr = (forProvider: Record<string, unknown> = {}) =>
  ({ metadata: { name: "m" }, spec: { forProvider } }) as ManagedResource;
const failure = (p: Promise<unknown>) => p.then(() => undefined).catch((e: Error) => e);

describe("Pub/Sub kinds over REST: the endpoint's answers", () => {
  it("sends topics.get, topics.create (PUT), a PATCH with the update mask and DELETE to pubsub/v1 paths", async () => {
    const topics = await connect(topicProvider);
    answer = { status: 200, headers: { "content-type": "application/json" }, body: "{}" };
    await topics.create(mr({ messageRetentionDuration: "900s" }), "orders");
    await topics.update(mr({ messageRetentionDuration: "1200s" }), "orders", {
      resourceExists: true,
      observed: { messageRetentionDuration: "900s" },
    });
    await topics.delete(mr(), "projects/other/topics/orders");
    // A legacy domain-scoped project and an id with `%` (Pub/Sub allows it): each segment encoded.
    await topics.delete(mr(), "projects/example.com:legacy/topics/a%b");
    expect(seen).toEqual([
      { method: "PUT", url: "/v1/projects/p/topics/orders" },
      { method: "PATCH", url: "/v1/projects/p/topics/orders" },
      { method: "DELETE", url: "/v1/projects/other/topics/orders" },
      { method: "DELETE", url: "/v1/projects/example.com:legacy/topics/a%25b" },
    ]);
  });

  it("attack: a redirect is not followed; the error names spec.endpoint.pubsub, not the answer", async () => {
    answer = { status: 302, headers: { location: `${elsewhereUrl}/v1/projects/p/topics/t` }, body: INTERNAL };
    for (const [provider, call] of [
      [topicProvider, (c: Client) => c.observe(mr(), "topic-t")],
      [subscriptionProvider, (c: Client) => c.delete(mr(), "sub-s")],
    ] as const) {
      const err = await failure(call(await connect(provider)));
      expect(err).toBeInstanceOf(Error);
      expect(err?.message).toMatch(/answered a redirect \(HTTP 302.*which is not followed/);
      expect(err?.message).toContain("spec.endpoint.pubsub");
      expect(err?.message).not.toContain("hunter2");
    }
    expect(elsewhereHits).toBe(0);
  });

  it.each([
    [429, "RESOURCE_EXHAUSTED", ThrottledError],
    [403, "PERMISSION_DENIED", CredentialsError],
    [401, "UNAUTHENTICATED", CredentialsError],
    [400, "INVALID_ARGUMENT", InvalidSpecError],
    [400, "OUT_OF_RANGE", InvalidSpecError],
  ] as const)(
    "an HTTP %i %s is classified by its body's status, and Google's text of another host is not kept",
    async (code, status, cls) => {
      answer = googleError(code, status);
      const err = await failure((await connect(topicProvider)).observe(mr(), "topic-t"));
      expect(err).toBeInstanceOf(cls);
      expect(err?.message).toContain(status);
      expect(err?.message).toContain("cannot get topic projects/p/topics/topic-t");
      expect(err?.message).not.toContain("hunter2");
    },
  );

  it("a FAILED_PRECONDITION (HTTP 400) is the cloud's state, not a bad spec", async () => {
    answer = googleError(400, "FAILED_PRECONDITION");
    const err = await failure((await connect(topicProvider)).delete(mr(), "topic-t"));
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(InvalidSpecError);
    expect(err?.message).toContain("FAILED_PRECONDITION");
  });

  it("a 409 ABORTED on create is no 'already exists': the create fails", async () => {
    answer = googleError(409, "ABORTED");
    const topics = await connect(topicProvider);
    expect(await failure(topics.create(mr(), "topic-t"))).toBeInstanceOf(Error);
    answer = googleError(409, "ALREADY_EXISTS");
    expect(await failure(topics.create(mr(), "topic-t"))).toBeUndefined();
  });

  it("attack: a bare 404 of a server that is not Pub/Sub is no 'not found': observe and delete fail", async () => {
    // A wrong endpoint must not make driftless believe a topic is gone (drop its finalizer, create another).
    answer = { status: 404, body: "Not Found" };
    for (const provider of [topicProvider, subscriptionProvider]) {
      const client = await connect(provider);
      expect(await failure(client.observe(mr(), "name-x"))).toBeInstanceOf(Error);
      expect(await failure(client.delete(mr(), "name-x"))).toBeInstanceOf(Error);
    }
    answer = googleError(404, "NOT_FOUND");
    for (const provider of [topicProvider, subscriptionProvider]) {
      const client = await connect(provider);
      expect(await client.observe(mr(), "name-x")).toEqual({ resourceExists: false });
      expect(await failure(client.delete(mr(), "name-x"))).toBeUndefined();
    }
  });

  it("attack: an external name that would be another path of the API is refused before any request", async () => {
    const topics = await connect(topicProvider);
    for (const name of [
      "../../v1/projects/p/subscriptions/s",
      "projects/p/subscriptions/s",
      "a/b",
      "x?y",
      "topic t",
    ]) {
      const err = await failure(topics.observe(mr(), name));
      expect(err).toBeInstanceOf(InvalidSpecError);
      expect(err?.message).toContain("crossplane.io/external-name");
    }
    expect(seen).toEqual([]);
  });

  it("names the topics in a subscription create that finds no topic (NOT_FOUND is retried, not a bad spec)", async () => {
    answer = googleError(404, "NOT_FOUND");
    const err = await failure(
      (await connect(subscriptionProvider)).create(
        mr({ topic: "later", deadLetterPolicy: { deadLetterTopic: "dlq" } }),
        "sub-s",
      ),
    );
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(InvalidSpecError);
    expect(err?.message).toContain("topic projects/p/topics/later, dead-letter topic projects/p/topics/dlq");
  });
});
