// The batched drift check (observeMany) of the GCP and Azure kinds with list calls, against Google's
// Pub/Sub emulator, Azurite and the project's own GCS and ARM fakes: for a mix of resources (in sync,
// changed behind driftless's back, absent) each result equals what observe returns for it alone, and the
// list calls cost one request per page. Requests are counted twice: the rate-limit tokens the client
// takes (the engine's limit must count cloud calls) and what the wire saw (a private fake's counters, or
// a recording proxy in front of the Pub/Sub emulator's REST API and Azurite).
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname } from "node:path";
import type { NetworkManagementClient } from "@azure/arm-network";
import { PubSub } from "@google-cloud/pubsub";
import { Storage } from "@google-cloud/storage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeServer, startArmFake } from "../../../infra/local/fakes/arm-fake.ts";
import { startGcsFake } from "../../../infra/local/fakes/gcs-fake.ts";
import { ensureTls } from "../../../infra/local/tls.ts";
import { Subnet, VirtualNetwork } from "../../../shared/api/azure/network.ts";
import { ResourceGroup } from "../../../shared/api/azure/resources.ts";
import { Container } from "../../../shared/api/azure/storage.ts";
import type {
  ConnectContext,
  ExternalClient,
  ExternalObservation,
  ManagedKindProvider,
  ObserveManyItem,
} from "../../../shared/api/external.ts";
import { Subscription, Topic } from "../../../shared/api/gcp/pubsub.ts";
import { Bucket } from "../../../shared/api/gcp/storage.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import type { ResourceType } from "../../../shared/api/meta.ts";
import { type ProviderConfig, providerConfigs } from "../../../shared/api/provider-config.ts";
import { secretKeyValue } from "../../../shared/kube/client.ts";
import { containerProvider } from "../../../shared/providers/azure/container.ts";
import { resourceGroupProvider } from "../../../shared/providers/azure/resource-group.ts";
import { azureSubnetProvider } from "../../../shared/providers/azure/subnet.ts";
import { virtualNetworkProvider } from "../../../shared/providers/azure/virtual-network.ts";
import { subscriptionProvider } from "../../../shared/providers/gcp/pubsub-subscription.ts";
import { topicProvider } from "../../../shared/providers/gcp/pubsub-topic.ts";
import { gcsBucketProvider } from "../../../shared/providers/gcp/storage-bucket.ts";
import { ensureCrds } from "../../support/aws.ts";
import {
  AZURE_CLIENT_ID,
  AZURE_CLIENT_SECRET,
  armClient,
  armRequestsDuring,
  azuriteBlob,
  createAzureProviderConfig,
  networkClient,
} from "../../support/azure.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { createGcpProviderConfig, pubsubEmulatorHost } from "../../support/gcp.ts";
import { expectObserveManyMatchesObserve } from "../../support/observe-many.ts";

type Client = ExternalClient<Record<string, unknown>, Record<string, unknown>>;
type Item = ObserveManyItem<Record<string, unknown>, Record<string, unknown>>;
type Observation = ExternalObservation<Record<string, unknown>, Record<string, unknown>>;

const kube = newKube();
/** Items of Pub/Sub and Cloud Storage list pages (the most one request returns). */
const GCP_PAGE = 1000;
/** Items per list page of this suite's ARM fake: ARM chooses its page sizes, small ones make paging show. */
const ARM_PAGE = 2;

interface Connected {
  client: Client;
  /** Rate-limit tokens taken since the last reset: the client takes one before each cloud request. */
  tokens(): number;
  reset(): void;
}

/** The kind's client for a ProviderConfig, connected as the engine does, with a counting rate limit. */
async function connect(
  provider: ManagedKindProvider,
  pcType: ResourceType,
  pcName: string,
): Promise<Connected> {
  const providerConfig = await kube.get<ProviderConfig & { [k: string]: unknown }>(pcType, pcName);
  if (!providerConfig) throw new Error(`ProviderConfig ${pcName} not found`);
  let tokens = 0;
  const ctx: ConnectContext = {
    providerConfig,
    readSecretKey: async (ref) => {
      const found = secretKeyValue(await kube.getSecret(ref.namespace, ref.name), ref);
      if ("missing" in found) throw new Error(found.missing);
      return found.value;
    },
    rateLimit: async () => {
      tokens += 1;
    },
  };
  const client = await provider.connect(ctx);
  const reset = () => {
    tokens = 0;
  };
  return { client, tokens: () => tokens, reset };
}

/** A managed resource as the engine hands it to a client: only its kind and spec matter here. */
function mrOf(
  def: { apiVersion: string; kind: string },
  forProvider: Record<string, unknown>,
): ManagedResource {
  return {
    apiVersion: def.apiVersion,
    kind: def.kind,
    metadata: { name: uniqueName("om"), uid: randomBytes(8).toString("hex") },
    spec: { forProvider, providerConfigRef: { name: "unused" } },
  };
}

/** Creates each item's resource through the kind's own client, as the engine would. */
async function createAll(client: Client, items: readonly Item[]) {
  for (const { mr, externalName } of items) await client.create(mr, externalName);
}

/** `n` names `${prefix}-0000`…: more resources than one list page holds, made by another tool. */
const numbered = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(4, "0")}`);

/** Runs `fn` over `all`, fifty at a time. */
async function inBatches<T>(all: readonly T[], fn: (x: T) => Promise<unknown>) {
  for (let i = 0; i < all.length; i += 50) await Promise.all(all.slice(i, i + 50).map(fn));
}

const observation = (o: Observation | Error | undefined): Observation => {
  if (!o || o instanceof Error) throw new Error(`expected an observation, got ${String(o)}`);
  return o;
};

/** A recording HTTP proxy (in front of the Pub/Sub emulator's REST API, Azurite's Blob service): every request it forwards is recorded. */
async function httpRecorder(target: string) {
  const calls: Array<{ method: string; path: string; query: URLSearchParams }> = [];
  const to = new URL(target);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://proxy");
    calls.push({ method: req.method ?? "GET", path: url.pathname, query: url.searchParams });
    const up = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    /** The target URL with the proxy's host: same path, so the account name stays in it. */
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${to.pathname}`,
    calls,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

describe("GCP kinds: observeMany against the Pub/Sub emulator and a GCS fake", () => {
  // A project of this suite alone: its lists hold only what this suite made, so pages can be counted.
  const project = `driftless-om-${randomBytes(4).toString("hex")}`;
  const PC = uniqueName("pc-om-gcp");
  let gcs: FakeServer;
  let rest: Awaited<ReturnType<typeof httpRecorder>>;
  /** Requests of projects.<collection>.list of this suite's project since `since` were recorded. */
  const lists = (collection: string, since: number) =>
    rest.calls
      .slice(since)
      .filter((c) => c.method === "GET" && c.path === `/v1/projects/${project}/${collection}`).length;
  let ps: PubSub;
  let storage: Storage;

  beforeAll(async () => {
    await ensureCrds();
    gcs = await startGcsFake({ port: 0 });
    rest = await httpRecorder(`http://${pubsubEmulatorHost()}`);
    await createGcpProviderConfig(kube, PC, {
      endpoint: { pubsub: rest.url.replace(/^http:\/\//, "").replace(/\/$/, ""), storage: gcs.url },
    });
    await kube.patch(providerConfigs.gcp.type, PC, { spec: { projectID: project } });
    ps = new PubSub({ apiEndpoint: pubsubEmulatorHost(), projectId: project, emulatorMode: true });
    storage = new Storage({ apiEndpoint: gcs.url, projectId: project });
  });

  afterAll(async () => {
    // The emulator outlives the suite: leave its memory as it was.
    const [subscriptions] = await ps.getSubscriptions();
    await inBatches(subscriptions, (s) => s.delete());
    const [topics] = await ps.getTopics();
    await inBatches(topics, (t) => t.delete());
    await ps.close();
    rest.close();
    await gcs.close();
    await kube.delete(providerConfigs.gcp.type, PC);
  });

  it("Topic: projects.topics.list, one request per page, reads what topics.get reads", async () => {
    const { client, tokens, reset } = await connect(topicProvider, providerConfigs.gcp.type, PC);
    const items: Item[] = [
      { mr: mrOf(Topic, { labels: { team: "a" } }), externalName: "om-topic-labels" },
      { mr: mrOf(Topic, { messageRetentionDuration: "900s" }), externalName: "om-topic-retention" },
      { mr: mrOf(Topic, {}), externalName: "om-topic-plain" },
      { mr: mrOf(Topic, { messageRetentionDuration: "900s" }), externalName: "om-topic-drift" },
    ];
    await createAll(client, items);
    // Changed behind driftless's back.
    await ps.topic("om-topic-drift").setMetadata({ messageRetentionDuration: { seconds: 1800 } });
    const missing = { mr: mrOf(Topic, {}), externalName: "om-topic-missing" };
    const batch = [...items, missing];

    reset();
    const since = rest.calls.length;
    const many = await client.observeMany?.(batch);

    expect(tokens()).toBe(1);
    expect(lists("topics", since)).toBe(1);
    expect(rest.calls.length - since).toBe(1);
    await expectObserveManyMatchesObserve(client, batch);
    expect(observation(many?.[0]).observed).toMatchObject({ labels: { team: "a" } });
    expect(observation(many?.[3]).observed).toMatchObject({ messageRetentionDuration: "1800s" });
    expect(observation(many?.[3]).connectionDetails).toEqual({
      topic: `projects/${project}/topics/om-topic-drift`,
      projectID: project,
    });
    expect(many?.[4]).toEqual({ resourceExists: false });

    // More topics than one page holds: the list follows the page token, one request (and token) per page.
    const bulk = numbered("om-topic-bulk", GCP_PAGE);
    await inBatches(bulk, (id) => ps.createTopic(id));
    const onLastPage = { mr: mrOf(Topic, {}), externalName: bulk.at(-1) ?? "" };
    reset();
    const before = rest.calls.length;
    const paged = await client.observeMany?.([...batch, onLastPage]);

    expect(tokens()).toBe(2);
    expect(lists("topics", before)).toBe(2);
    expect(rest.calls.length - before).toBe(2);
    expect(paged).toEqual([...(many ?? []), await client.observe(onLastPage.mr, onLastPage.externalName)]);
    expect(observation(paged?.[5]).resourceExists).toBe(true);
  });

  it("Subscription: projects.subscriptions.list, one request per page, reads what subscriptions.get reads", async () => {
    const { client, tokens, reset } = await connect(subscriptionProvider, providerConfigs.gcp.type, PC);
    await ps.createTopic("om-sub-topic");
    await ps.createTopic("om-sub-topic-gone");
    const items: Item[] = [
      {
        mr: mrOf(Subscription, { topic: "om-sub-topic", ackDeadlineSeconds: 30, labels: { team: "a" } }),
        externalName: "om-sub-a",
      },
      {
        mr: mrOf(Subscription, {
          topic: `projects/${project}/topics/om-sub-topic`,
          retainAckedMessages: true,
          messageRetentionDuration: "1200s",
          retryPolicy: { minimumBackoff: "5s", maximumBackoff: "60s" },
        }),
        externalName: "om-sub-b",
      },
      {
        mr: mrOf(Subscription, { topic: "om-sub-topic", ackDeadlineSeconds: 20 }),
        externalName: "om-sub-drift",
      },
      { mr: mrOf(Subscription, { topic: "om-sub-topic-gone" }), externalName: "om-sub-orphan" },
    ];
    await createAll(client, items);
    // Changed behind driftless's back; and one subscription's topic deleted (Pub/Sub: _deleted-topic_).
    await ps.subscription("om-sub-drift").setMetadata({ ackDeadlineSeconds: 45 });
    await ps.topic("om-sub-topic-gone").delete();
    const missing = { mr: mrOf(Subscription, { topic: "om-sub-topic" }), externalName: "om-sub-missing" };
    const batch = [...items, missing];

    reset();
    const since = rest.calls.length;
    const many = await client.observeMany?.(batch);

    expect(tokens()).toBe(1);
    expect(lists("subscriptions", since)).toBe(1);
    expect(rest.calls.length - since).toBe(1);
    await expectObserveManyMatchesObserve(client, batch);
    expect(observation(many?.[1]).observed).toMatchObject({
      topic: `projects/${project}/topics/om-sub-topic`,
      retryPolicy: { minimumBackoff: "5s", maximumBackoff: "60s" },
    });
    expect(observation(many?.[2]).observed).toMatchObject({ ackDeadlineSeconds: 45 });
    expect(observation(many?.[3])).toMatchObject({ availability: "Unavailable" });
    expect(many?.[4]).toEqual({ resourceExists: false });

    // More subscriptions than one page holds: one request (and token) per page.
    const ids = numbered("om-sub-bulk", GCP_PAGE);
    await inBatches(ids, (id) => ps.topic("om-sub-topic").createSubscription(id));
    const onLastPage = { mr: mrOf(Subscription, { topic: "om-sub-topic" }), externalName: ids.at(-1) ?? "" };
    reset();
    const before = rest.calls.length;
    const paged = await client.observeMany?.([...batch, onLastPage]);

    expect(tokens()).toBe(2);
    expect(lists("subscriptions", before)).toBe(2);
    expect(rest.calls.length - before).toBe(2);
    expect(paged).toEqual([...(many ?? []), await client.observe(onLastPage.mr, onLastPage.externalName)]);
    expect(observation(paged?.[5]).resourceExists).toBe(true);
  });

  it("Bucket: buckets.list by the names' common prefix, one request per page; buckets.get only for a name not listed", async () => {
    const { client, tokens, reset } = await connect(gcsBucketProvider, providerConfigs.gcp.type, PC);
    const prefix = `om-${randomBytes(4).toString("hex")}`;
    const items: Item[] = [
      { mr: mrOf(Bucket, { location: "eu", labels: { team: "a" } }), externalName: `${prefix}-eu` },
      {
        mr: mrOf(Bucket, { storageClass: "NEARLINE", versioning: { enabled: true } }),
        externalName: `${prefix}-versioned`,
      },
      { mr: mrOf(Bucket, { labels: { team: "b" } }), externalName: `${prefix}-drift` },
    ];
    await createAll(client, items);
    // Changed behind driftless's back.
    await storage.bucket(`${prefix}-drift`).setMetadata({ labels: { team: "c" } });
    // Bucket names are global: an imported bucket of another project is there though its list lacks it.
    await new Storage({ apiEndpoint: gcs.url, projectId: `${project}-other` }).createBucket(
      `${prefix}-elsewhere`,
    );
    const elsewhere = { mr: mrOf(Bucket, {}), externalName: `${prefix}-elsewhere` };
    const missing = { mr: mrOf(Bucket, {}), externalName: `${prefix}-missing` };
    const batch = [...items, elsewhere, missing];

    reset();
    const before = (await gcsRequests(gcs.url)).list;
    const many = await client.observeMany?.(batch);
    const after = await gcsRequests(gcs.url);

    // One list page, then one get for each name the list lacks.
    expect(after.list - before).toBe(3);
    expect(tokens()).toBe(3);
    await expectObserveManyMatchesObserve(client, batch);
    expect(observation(many?.[0]).observed).toMatchObject({ location: "eu", labels: { team: "a" } });
    expect(observation(many?.[2]).observed).toMatchObject({ labels: { team: "c" } });
    expect(observation(many?.[3]).resourceExists).toBe(true);
    expect(many?.[4]).toEqual({ resourceExists: false });

    // More buckets under the prefix than one page holds: the list follows the page token.
    await inBatches(numbered(`${prefix}-bulk`, GCP_PAGE), (n) => storage.createBucket(n));
    reset();
    const start = (await gcsRequests(gcs.url)).list;
    const paged = await client.observeMany?.(items);
    expect((await gcsRequests(gcs.url)).list - start).toBe(2);
    expect(tokens()).toBe(2);
    expect(paged).toEqual(many?.slice(0, 3));
  });
});

/** The GET requests a private GCS fake served (its counter does not tell a list from a get). */
async function gcsRequests(url: string) {
  const stats = (await (await fetch(`${url}/__fake/stats`)).json()) as { requests: Record<string, number> };
  return { list: stats.requests["GET buckets"] ?? 0 };
}

describe("Azure kinds: observeMany against an ARM fake of this suite and Azurite", () => {
  const PC = uniqueName("pc-om-azure");
  // This suite's own ARM fake: small pages, and its counters see only this suite's requests.
  let fake: FakeServer;
  let blobProxy: Awaited<ReturnType<typeof httpRecorder>>;
  let network: NetworkManagementClient;

  beforeAll(async () => {
    await ensureCrds();
    const tls = await ensureTls(dirname(env("DRIFTLESS_CA_FILE")));
    fake = await startArmFake({
      port: 0,
      cert: tls.serverCert,
      key: tls.serverKey,
      clients: { [AZURE_CLIENT_ID]: AZURE_CLIENT_SECRET },
      lroMs: 500,
      listPageSize: ARM_PAGE,
    });
    blobProxy = await httpRecorder(env("AZURITE_BLOB_ENDPOINT"));
    await createAzureProviderConfig(kube, PC, { armEndpoint: fake.url });
    await kube.patch(providerConfigs.azure.type, PC, { spec: { endpoint: { blob: blobProxy.url } } });
    network = networkClient(fake.url);
  });

  afterAll(async () => {
    blobProxy.close();
    await fake.close();
    await kube.delete(providerConfigs.azure.type, PC);
  });

  it("ResourceGroup: Resource Groups - List, one request per page, reads what a GET reads", async () => {
    const { client, tokens, reset } = await connect(resourceGroupProvider, providerConfigs.azure.type, PC);
    const items: Item[] = [
      { mr: mrOf(ResourceGroup, { location: "West Europe", tags: { team: "a" } }), externalName: "om-rg-a" },
      { mr: mrOf(ResourceGroup, { location: "eastus" }), externalName: "om-rg-b" },
      { mr: mrOf(ResourceGroup, { location: "eastus", tags: { team: "c" } }), externalName: "om-rg-drift" },
    ];
    await createAll(client, items);
    // Changed behind driftless's back.
    await armClient(fake.url).resourceGroups.update("om-rg-drift", { tags: { team: "d" } });
    // ARM names are case-insensitive: a name spelled otherwise finds the same group.
    const otherCase = { mr: mrOf(ResourceGroup, { location: "eastus" }), externalName: "OM-RG-B" };
    const missing = { mr: mrOf(ResourceGroup, { location: "eastus" }), externalName: "om-rg-missing" };
    const batch = [...items, otherCase, missing];

    reset();
    let many: Array<Observation | Error> | undefined;
    const requests = await armRequestsDuring(fake.url, async () => {
      many = await client.observeMany?.(batch);
    });

    // Three groups, two a page.
    expect(requests).toEqual({ "GET resourcegroups": 2 });
    expect(tokens()).toBe(2);
    await expectObserveManyMatchesObserve(client, batch);
    expect(observation(many?.[0]).observed).toEqual({ location: "West Europe", tags: { team: "a" } });
    expect(observation(many?.[2]).observed).toMatchObject({ tags: { team: "d" } });
    expect(observation(many?.[3]).resourceExists).toBe(true);
    expect(many?.[4]).toEqual({ resourceExists: false });
  });

  it("VirtualNetwork: Virtual Networks - List per resource group, one request per page", async () => {
    const { client, tokens, reset } = await connect(virtualNetworkProvider, providerConfigs.azure.type, PC);
    const arm = armClient(fake.url);
    await arm.resourceGroups.createOrUpdate("om-net-1", { location: "eastus" });
    await arm.resourceGroups.createOrUpdate("om-net-2", { location: "eastus" });
    const vnet = (rg: string, prefix: string, extra: Record<string, unknown> = {}) =>
      mrOf(VirtualNetwork, {
        resourceGroupName: rg,
        location: "eastus",
        addressSpace: { addressPrefixes: [prefix] },
        ...extra,
      });
    const items: Item[] = [
      { mr: vnet("om-net-1", "10.1.0.0/16", { tags: { team: "a" } }), externalName: "om-vnet-a" },
      { mr: vnet("om-net-1", "10.2.0.0/16"), externalName: "om-vnet-b" },
      { mr: vnet("om-net-1", "10.3.0.0/16", { tags: { team: "c" } }), externalName: "om-vnet-drift" },
      { mr: vnet("OM-NET-2", "10.4.0.0/16"), externalName: "om-vnet-other-group" },
    ];
    await createAll(client, items);
    // Changed behind driftless's back.
    await network.virtualNetworks.updateTags("om-net-1", "om-vnet-drift", { tags: { team: "d" } });
    const missing = { mr: vnet("om-net-1", "10.9.0.0/16"), externalName: "om-vnet-missing" };
    const groupGone = { mr: vnet("om-net-gone", "10.9.0.0/16"), externalName: "om-vnet-a" };
    const batch = [...items, missing, groupGone];

    reset();
    let many: Array<Observation | Error> | undefined;
    const requests = await armRequestsDuring(fake.url, async () => {
      many = await client.observeMany?.(batch);
    });

    // om-net-1: three networks, two a page; om-net-2: one page; om-net-gone: one request, a 404.
    expect(requests).toEqual({ "GET Microsoft.Network/virtualNetworks (list)": 4 });
    expect(tokens()).toBe(4);
    await expectObserveManyMatchesObserve(client, batch);
    expect(observation(many?.[0]).observed).toMatchObject({ tags: { team: "a" } });
    expect(observation(many?.[2]).observed).toMatchObject({ tags: { team: "d" } });
    expect(observation(many?.[3]).observed).toMatchObject({ resourceGroupName: "OM-NET-2" });
    expect(many?.[4]).toEqual({ resourceExists: false });
    expect(many?.[5]).toEqual({ resourceExists: false });
  });

  it("Subnet: Subnets - List per virtual network, one request per page", async () => {
    const { client, tokens, reset } = await connect(azureSubnetProvider, providerConfigs.azure.type, PC);
    await armClient(fake.url).resourceGroups.createOrUpdate("om-subnets", { location: "eastus" });
    await network.virtualNetworks
      .createOrUpdate("om-subnets", "om-subnets-vnet", {
        location: "eastus",
        addressSpace: { addressPrefixes: ["10.0.0.0/16"] },
      })
      .submitted();
    const subnet = (prefix: string, vnet = "om-subnets-vnet") =>
      mrOf(Subnet, { resourceGroupName: "om-subnets", virtualNetworkName: vnet, addressPrefix: prefix });
    const items: Item[] = [
      { mr: subnet("10.0.1.0/24"), externalName: "om-subnet-a" },
      { mr: subnet("10.0.2.0/24"), externalName: "om-subnet-b" },
      { mr: subnet("10.0.3.0/24"), externalName: "om-subnet-drift" },
    ];
    await createAll(client, items);
    // Changed behind driftless's back.
    await network.subnets
      .createOrUpdate("om-subnets", "om-subnets-vnet", "om-subnet-drift", { addressPrefix: "10.0.30.0/24" })
      .submitted();
    const missing = { mr: subnet("10.0.9.0/24"), externalName: "om-subnet-missing" };
    const vnetGone = { mr: subnet("10.0.9.0/24", "om-subnets-gone"), externalName: "om-subnet-a" };
    const batch = [...items, missing, vnetGone];

    reset();
    let many: Array<Observation | Error> | undefined;
    const requests = await armRequestsDuring(fake.url, async () => {
      many = await client.observeMany?.(batch);
    });

    // Three subnets, two a page; the missing network: one request, a 404.
    expect(requests).toEqual({ "GET Microsoft.Network/virtualNetworks/subnets (list)": 3 });
    expect(tokens()).toBe(3);
    await expectObserveManyMatchesObserve(client, batch);
    expect(observation(many?.[0]).observed).toMatchObject({ addressPrefix: "10.0.1.0/24" });
    expect(observation(many?.[2]).observed).toMatchObject({ addressPrefix: "10.0.30.0/24" });
    expect(many?.[3]).toEqual({ resourceExists: false });
    expect(many?.[4]).toEqual({ resourceExists: false });
  });

  it("Container: List Containers with metadata by the names' common prefix, one request per page", async () => {
    const { client, tokens, reset } = await connect(containerProvider, providerConfigs.azure.type, PC);
    const prefix = `om-${randomBytes(4).toString("hex")}`;
    const items: Item[] = [
      { mr: mrOf(Container, { metadata: { Team: "a" } }), externalName: `${prefix}-meta` },
      { mr: mrOf(Container, { publicAccess: "Blob" }), externalName: `${prefix}-public` },
      { mr: mrOf(Container, { metadata: { team: "c" } }), externalName: `${prefix}-drift` },
    ];
    await createAll(client, items);
    // Changed behind driftless's back, with a name in a case of its own (names are case-insensitive).
    await azuriteBlob().getContainerClient(`${prefix}-drift`).setMetadata({ team: "d", Owner: "someone" });
    const missing = { mr: mrOf(Container, {}), externalName: `${prefix}-missing` };
    const batch = [...items, missing];

    reset();
    const since = blobProxy.calls.length;
    const many = await client.observeMany?.(batch);
    const calls = blobProxy.calls.slice(since);

    expect(
      calls.map((c) => `${c.method} comp=${c.query.get("comp")} prefix=${c.query.get("prefix")}`),
    ).toEqual([`GET comp=list prefix=${prefix}-`]);
    expect(tokens()).toBe(1);
    await expectObserveManyMatchesObserve(client, batch);
    expect(observation(many?.[0]).observed).toMatchObject({ metadata: { Team: "a" }, publicAccess: "None" });
    expect(observation(many?.[1]).observed).toMatchObject({ publicAccess: "Blob" });
    expect(observation(many?.[2]).observed).toMatchObject({ metadata: { team: "d", owner: "someone" } });
    expect(many?.[3]).toEqual({ resourceExists: false });
    // Azurite outlives the suite.
    for (const { mr, externalName } of items) await client.delete(mr, externalName);
  });
});
