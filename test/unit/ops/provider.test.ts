// Provider objects on an in-memory API server: the revision a starting function records, and the health
// the drift sweep writes from the pages it lists — with the number of writes each step may make.
import { describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { providerConfigType } from "../../../shared/api/managed.ts";
import type { Condition, ResourceType } from "../../../shared/api/meta.ts";
import { Provider, type ProviderObject, providerCrd } from "../../../shared/api/pkg/provider.ts";
import { doorbellWebhookConfiguration } from "../../../shared/doorbell/webhook.ts";
import { Kube, type KubeObject, type KubeTransport } from "../../../shared/kube/client.ts";
import type { KubeRequest } from "../../../shared/kube/http.ts";
import { undocumentedFields } from "../../../shared/ops/crd-docs.ts";
import {
  DRIFTLESS_VERSION,
  lambdaIdentity,
  providerName,
  registerProvider,
} from "../../../shared/ops/provider.ts";
import {
  checkProviderHealth,
  type ProviderHealthSetup,
  reportProviderHealth,
  startRunProviders,
  sweepWithProviderHealth,
} from "../../../shared/ops/provider-health.ts";
import { sweep } from "../../../shared/pipeline/sweep.ts";
import { awsKinds, awsProviderConfigKinds } from "../../../shared/providers/aws/kinds.ts";
import type { ReconcileMessage } from "../../../shared/queue/message.ts";
import { typesOf } from "../../../shared/worker/worker.ts";
import { MemoryApiServer, notFound } from "../../support/memory-apiserver.ts";

const PC = providerConfigType("aws");
const t0 = new Date("2026-11-23T10:00:00Z");
const later = (ms: number) => new Date(t0.getTime() + ms);
const MIN = 60_000;
const quiet = { info() {}, warn() {}, error() {}, debug() {} };

/** The memory API server behind a transport that also keeps each request's query (field managers). */
function server() {
  const api = new MemoryApiServer();
  const sent: KubeRequest[] = [];
  const transport: KubeTransport = {
    request: <T>(req: KubeRequest) => {
      sent.push(req);
      return api.request<T>(req);
    },
  };
  const kube = new Kube(transport);
  const providerWrites = () => api.writes().filter((r) => r.plural === "providers");
  const providerGets = () => api.requests.filter((r) => r.plural === "providers" && r.method === "GET");
  const provider = (name = "driftless-aws") => api.get<ProviderObject>(Provider, name);
  return { api, kube, sent, providerWrites, providerGets, provider };
}

const lambda = (version: string) =>
  lambdaIdentity({
    AWS_LAMBDA_FUNCTION_NAME: "driftless-prod-reconcile",
    AWS_LAMBDA_FUNCTION_VERSION: version,
  });

const cond = (
  type: string,
  status: Condition["status"],
  reason: string,
  at = t0,
  message?: string,
): Condition => ({
  type,
  status,
  reason,
  lastTransitionTime: at.toISOString(),
  ...(message ? { message } : {}),
});

function seedQueue(api: MemoryApiServer, name: string, synced: Condition["status"], reason: string, at = t0) {
  api.seed(Queue, {
    apiVersion: Queue.apiVersion,
    kind: Queue.kind,
    metadata: { name },
    spec: { forProvider: { region: "us-east-1" } },
    status: {
      conditions: [
        cond("Ready", synced, synced === "True" ? "Available" : "Unavailable", at),
        cond("Synced", synced, reason, at),
      ],
    },
  });
}

function seedProviderConfig(api: MemoryApiServer, name: string, ready: Condition | undefined) {
  api.seed(PC, {
    apiVersion: `${PC.group}/${PC.version}`,
    kind: "ProviderConfig",
    metadata: { name },
    spec: { credentials: { source: "InjectedIdentity" }, region: "us-east-1" },
    ...(ready ? { status: { conditions: [ready] } } : {}),
  });
}

/** Only the cluster-scoped Queue and Bucket kinds and the cluster-scoped ProviderConfig: a small deployment. */
const kinds = awsKinds.filter(
  (k) => ["Queue", "Bucket"].includes(k.definition.kind) && !k.definition.namespaced,
);
const pcKinds = awsProviderConfigKinds.filter(
  (k) => k.type.group === PC.group && k.type.kind === "ProviderConfig",
);
const types = typesOf(kinds, pcKinds);

const recordingSink = (into: ReconcileMessage[]) => ({
  send: async (m: readonly ReconcileMessage[]) => {
    into.push(...m);
    return { sent: m.length, failed: [] };
  },
});

/** One drift sweep with the Provider health riding along, as the sweep functions run it. */
async function sweepOnce(kube: Kube, now: Date, extra: Partial<ProviderHealthSetup> = {}) {
  const sent: ReconcileMessage[] = [];
  const setup: ProviderHealthSetup = {
    kinds,
    providerConfigKinds: pcKinds,
    logger: quiet,
    now: () => now,
    ...extra,
  };
  return sweepWithProviderHealth(kube, setup, (k) =>
    sweep({
      kube: k,
      types,
      sink: recordingSink(sent),
      now,
      scheduleMs: MIN,
      defaultPollMs: 5 * MIN,
    }),
  );
}

/** A deployment whose Bucket CRD is not installed (not activated): its lists answer 404. */
function withoutBuckets(api: MemoryApiServer) {
  api.inject((r) =>
    r.plural === "buckets" ? notFound("the server could not find the requested resource") : undefined,
  );
}

const condition = (p: ProviderObject | undefined, type: string) =>
  p?.status?.conditions?.find((c) => c.type === type);

describe("the Provider CRD", () => {
  it("is cluster-scoped in pkg.driftless.dev with Crossplane's columns and a short name of its own", () => {
    const crd = providerCrd();
    expect(crd.metadata.name).toBe("providers.pkg.driftless.dev");
    expect(crd.spec.scope).toBe("Cluster");
    expect(crd.spec.names).toMatchObject({
      kind: "Provider",
      plural: "providers",
      shortNames: ["dlprovider"],
    });
    const version = crd.spec.versions[0];
    expect(version?.subresources).toEqual({ status: {} });
    const columns = version?.additionalPrinterColumns.filter((c) => !("priority" in c)).map((c) => c.name);
    expect(columns).toEqual(["INSTALLED", "HEALTHY", "VERSION", "REVISION", "AGE"]);
    const status = version?.schema.openAPIV3Schema.properties.status as {
      properties: Record<string, unknown>;
    };
    expect(Object.keys(status.properties)).toEqual(
      expect.arrayContaining(["conditions", "currentRevision", "revisions", "activatedKinds", "deadLetters"]),
    );
    // kubectl explain has a text for every field (metadata's is the API server's own).
    expect(undocumentedFields(version?.schema.openAPIV3Schema)).toEqual(["metadata"]);
  });

  it("is named per cloud, and per shard for a deployment with a label selector", () => {
    expect(providerName("aws")).toBe("driftless-aws");
    expect(providerName("gcp", "")).toBe("driftless-gcp");
    expect(providerName("aws", "shard=Blue_1")).toBe("driftless-aws-blue-1");
    expect(providerName("aws", "driftless.dev/shard == eu")).toBe("driftless-aws-eu");
    const hashed = providerName("aws", "shard in (a,b)");
    expect(hashed).toMatch(/^driftless-aws-[0-9a-f]{8}$/);
    expect(providerName("aws", "shard in (a,b)")).toBe(hashed);
    expect(providerName("aws", "shard in (a,c)")).not.toBe(hashed);
  });

  it("is not something the doorbell serves: its webhook never names it", () => {
    const config = doorbellWebhookConfiguration({
      url: "https://doorbell.example/0123456789abcdef0123456789abcdef/admit",
      types: typesOf(awsKinds, awsProviderConfigKinds, { claims: true }),
    }) as { webhooks: Array<{ rules: Array<{ apiGroups: string[] }> }> };
    const groups = config.webhooks.flatMap((w) => w.rules.flatMap((r) => r.apiGroups));
    expect(groups.length).toBeGreaterThan(3);
    expect(groups).not.toContain(Provider.group);
  });
});

describe("registration at a function's start", () => {
  it("creates the Provider and records revision 1, as driftless's field manager", async () => {
    const { kube, sent, providerWrites, providerGets, provider } = server();
    const r = await registerProvider(kube, { cloud: "aws", identity: lambda("7"), now: t0 });
    expect(r).toEqual({ outcome: "created", name: "driftless-aws", revision: 1 });
    expect(providerGets()).toHaveLength(1);
    expect(providerWrites().map((w) => `${w.method} ${w.subresource ?? ""}`)).toEqual([
      "POST ",
      "PATCH status",
    ]);
    for (const req of sent.filter((s) => s.method !== "GET"))
      expect(req.query?.fieldManager).toBe("driftless");
    const p = provider();
    expect(p?.spec).toEqual({ cloud: "aws" });
    expect(p?.status).toMatchObject({
      currentRevision: 1,
      currentVersion: DRIFTLESS_VERSION,
      currentIdentifier: "aws-lambda driftless-prod-reconcile:7",
      revisions: [
        { revision: 1, identifier: "aws-lambda driftless-prod-reconcile:7", activatedAt: t0.toISOString() },
      ],
    });
    expect(condition(p, "Installed")).toMatchObject({ status: "True", reason: "ActiveRevision" });
    expect(condition(p, "Healthy")).toMatchObject({ status: "Unknown", reason: "AwaitingHealthCheck" });
  });

  it("a cold start of the same version makes one GET and no write", async () => {
    const { kube, providerWrites, providerGets } = server();
    await registerProvider(kube, { cloud: "aws", identity: lambda("7"), now: t0 });
    const before = { writes: providerWrites().length, gets: providerGets().length };
    const r = await registerProvider(kube, { cloud: "aws", identity: lambda("7"), now: later(MIN) });
    expect(r.outcome).toBe("unchanged");
    expect(providerWrites().length - before.writes).toBe(0);
    expect(providerGets().length - before.gets).toBe(1);
  });

  it("a new function version records a new revision, newest first, within the history limit", async () => {
    const { api, kube, providerWrites, provider } = server();
    await registerProvider(kube, { cloud: "aws", identity: lambda("7"), now: t0 });
    api.mutate(Provider, "driftless-aws", (o) => {
      (o.spec as { revisionHistoryLimit?: number }).revisionHistoryLimit = 2;
    });
    const writes = providerWrites().length;
    expect(await registerProvider(kube, { cloud: "aws", identity: lambda("8"), now: later(MIN) })).toEqual({
      outcome: "revision",
      name: "driftless-aws",
      revision: 2,
    });
    expect(providerWrites().length - writes).toBe(1);
    await registerProvider(kube, { cloud: "aws", identity: lambda("9"), now: later(2 * MIN) });
    const p = provider();
    expect(p?.status?.currentRevision).toBe(3);
    expect(p?.status?.revisions?.map((r) => [r.revision, r.identifier])).toEqual([
      [3, "aws-lambda driftless-prod-reconcile:9"],
      [2, "aws-lambda driftless-prod-reconcile:8"],
    ]);
    expect(condition(p, "Installed")?.message).toContain("revision 3");
  });

  it("a container of the previous version starting after the upgrade changes nothing", async () => {
    const { kube, providerWrites, provider } = server();
    await registerProvider(kube, { cloud: "aws", identity: lambda("7"), now: t0 });
    await registerProvider(kube, { cloud: "aws", identity: lambda("8"), now: later(MIN) });
    const writes = providerWrites().length;
    const r = await registerProvider(kube, { cloud: "aws", identity: lambda("7"), now: later(2 * MIN) });
    expect(r).toEqual({ outcome: "older", name: "driftless-aws", revision: 2 });
    expect(providerWrites().length).toBe(writes);
    expect(provider()?.status?.currentIdentifier).toBe("aws-lambda driftless-prod-reconcile:8");
  });

  it("containers of one new version starting at once record one revision", async () => {
    const { kube, provider } = server();
    await registerProvider(kube, { cloud: "aws", identity: lambda("7"), now: t0 });
    await Promise.all(
      [0, 1, 2].map(() => registerProvider(kube, { cloud: "aws", identity: lambda("8"), now: later(MIN) })),
    );
    expect(provider()?.status?.currentRevision).toBe(2);
    expect(provider()?.status?.revisions?.map((r) => r.revision)).toEqual([2, 1]);
  });

  it("without the Provider CRD: nothing written, the function goes on", async () => {
    const { api, kube } = server();
    api.inject((r) =>
      r.plural === "providers" ? notFound("the server could not find the requested resource") : undefined,
    );
    expect(await registerProvider(kube, { cloud: "aws", identity: lambda("7") })).toEqual({
      outcome: "no-crd",
      name: "driftless-aws",
    });
    expect(api.writes().filter((w) => w.method !== "POST")).toHaveLength(0);
  });
});

describe("health from the drift sweep", () => {
  /** A registered deployment with Queues installed (Buckets not) and a ProviderConfig that works. */
  async function deployment() {
    const s = server();
    withoutBuckets(s.api);
    await registerProvider(s.kube, { cloud: "aws", identity: lambda("7"), now: t0 });
    seedProviderConfig(s.api, "default", cond("Ready", "True", "Available", t0, "credentials accepted"));
    seedQueue(s.api, "orders", "True", "ReconcileSuccess", later(-5 * MIN));
    seedQueue(s.api, "billing", "True", "ReconcileSuccess", later(-2 * MIN));
    return s;
  }

  it("healthy deployment: Healthy=True with counts; a second sweep with nothing changed writes nothing", async () => {
    const { kube, provider, providerWrites, providerGets } = await deployment();
    let [writes, gets] = [providerWrites().length, providerGets().length];
    await sweepOnce(kube, later(MIN));
    expect(providerWrites().length - writes).toBe(1);
    expect(providerGets().length - gets).toBe(1);
    const p = provider();
    expect(condition(p, "Healthy")).toMatchObject({
      status: "True",
      reason: "HealthyDeployment",
      message: "2 of 2 managed resources synced; 1 of 1 ProviderConfigs ready",
    });
    expect(condition(p, "Installed")).toMatchObject({ status: "True", reason: "ActiveRevision" });
    expect(condition(p, "Installed")?.message).toContain("1 kinds activated");
    expect(p?.status?.activatedKinds).toEqual(["queues.sqs.aws.driftless.dev"]);
    expect(p?.status?.resources).toEqual({
      total: 2,
      synced: 2,
      failing: 0,
      paused: 0,
      lastSyncedTime: later(-2 * MIN).toISOString(),
    });
    expect(p?.status?.providerConfigs).toEqual({ total: 1, ready: 1 });
    expect(p?.status?.lastHealthCheckTime).toBe(later(MIN).toISOString());

    [writes, gets] = [providerWrites().length, providerGets().length];
    await sweepOnce(kube, later(2 * MIN));
    expect(providerWrites().length - writes).toBe(0);
    expect(providerGets().length - gets).toBe(1);
  });

  it("unhealthy when a ProviderConfig's credentials are refused, healthy again once they are accepted", async () => {
    const { api, kube, provider, providerWrites } = await deployment();
    seedProviderConfig(
      api,
      "team-b",
      cond("Ready", "False", "CredentialsRefused", t0, "credential check failed: InvalidClientTokenId"),
    );
    await sweepOnce(kube, later(MIN));
    const healthy = condition(provider(), "Healthy");
    expect(healthy).toMatchObject({ status: "False", reason: "ProviderConfigRefused" });
    expect(healthy?.message).toBe("ProviderConfig team-b: credential check failed: InvalidClientTokenId");
    expect(provider()?.status?.providerConfigs).toEqual({ total: 2, ready: 1, refused: ["team-b"] });

    api.mutate(PC, "team-b", (o) => {
      o.status = { conditions: [cond("Ready", "True", "Available", later(2 * MIN))] };
    });
    const writes = providerWrites().length;
    await sweepOnce(kube, later(3 * MIN));
    expect(providerWrites().length - writes).toBe(1);
    expect(condition(provider(), "Healthy")).toMatchObject({ status: "True", reason: "HealthyDeployment" });
    expect(provider()?.status?.providerConfigs).toEqual({ total: 2, ready: 2 });
  });

  it("a ProviderConfig waiting to be deleted (InUse) is not a credential problem", async () => {
    const { api, kube, provider } = await deployment();
    seedProviderConfig(api, "old", cond("Ready", "False", "InUse", t0, "deletion waits"));
    await sweepOnce(kube, later(MIN));
    expect(condition(provider(), "Healthy")?.status).toBe("True");
  });

  it("unhealthy while dead letters sit in the queue; healthy once it is empty", async () => {
    const { kube, provider, providerWrites } = await deployment();
    let depth = 3;
    const deadLetters = async () => depth;
    await sweepOnce(kube, later(MIN), { deadLetters });
    expect(condition(provider(), "Healthy")).toMatchObject({
      status: "False",
      reason: "DeadLetters",
      message: "3 dead-lettered messages",
    });
    expect(provider()?.status?.deadLetters).toBe(3);
    const writes = providerWrites().length;
    await sweepOnce(kube, later(2 * MIN), { deadLetters });
    expect(providerWrites().length - writes).toBe(0);
    depth = 0;
    await sweepOnce(kube, later(3 * MIN), { deadLetters });
    expect(condition(provider(), "Healthy")).toMatchObject({ status: "True", reason: "HealthyDeployment" });
    expect(condition(provider(), "Healthy")?.message).toContain("no dead letters");
    expect(provider()?.status?.deadLetters).toBe(0);
  });

  it("a dead-letter queue that cannot be read leaves the count out; the sweep is not failed by it", async () => {
    const { kube, provider } = await deployment();
    const result = await sweepOnce(kube, later(MIN), {
      deadLetters: async () => {
        throw new Error("AccessDenied: sqs:GetQueueAttributes");
      },
    });
    expect(result.listed).toBe(3);
    expect(condition(provider(), "Healthy")?.status).toBe("True");
    expect(provider()?.status?.deadLetters).toBeUndefined();
  });

  it("unhealthy when resources exist and every one fails; one failing resource among synced ones is its own problem", async () => {
    const { api, kube, provider } = await deployment();
    seedQueue(api, "broken", "False", "ReconcileError");
    await sweepOnce(kube, later(MIN));
    expect(condition(provider(), "Healthy")).toMatchObject({ status: "True" });
    expect(condition(provider(), "Healthy")?.message).toBe(
      "2 of 3 managed resources synced, 1 failing; 1 of 1 ProviderConfigs ready",
    );
    for (const name of ["orders", "billing"])
      api.mutate(Queue, name, (o) => {
        o.status = { conditions: [cond("Synced", "False", "ReconcileError", later(MIN), "boom")] };
      });
    await sweepOnce(kube, later(2 * MIN));
    expect(condition(provider(), "Healthy")).toMatchObject({
      status: "False",
      reason: "NoSuccessfulReconcile",
    });
  });

  it("paused resources are counted apart and never make it unhealthy", async () => {
    const { api, kube, provider } = await deployment();
    seedQueue(api, "frozen", "False", "ReconcilePaused");
    await sweepOnce(kube, later(MIN));
    expect(provider()?.status?.resources).toMatchObject({ total: 2, synced: 2, paused: 1, failing: 0 });
  });

  it("a sweep that fails is reported (SweepFailed) and rethrown; the counts are left as they were", async () => {
    const { api, kube, provider } = await deployment();
    await sweepOnce(kube, later(MIN));
    const before = provider()?.status?.resources;
    const remove = api.inject((r) =>
      r.plural === "queues" && r.method === "GET" ? new Error("connect ECONNREFUSED") : undefined,
    );
    await expect(sweepOnce(kube, later(2 * MIN))).rejects.toThrow(/drift sweep failed/);
    remove();
    const healthy = condition(provider(), "Healthy");
    expect(healthy).toMatchObject({ status: "False", reason: "SweepFailed" });
    expect(healthy?.message).toContain("ECONNREFUSED");
    expect(provider()?.status?.resources).toEqual(before);
  });

  it("nothing changed for the heartbeat interval: one write refreshes lastHealthCheckTime only", async () => {
    const { kube, provider, providerWrites, api } = await deployment();
    await sweepOnce(kube, later(MIN));
    const before = provider();
    const writes = providerWrites().length;
    await sweepOnce(kube, later(29 * MIN));
    expect(providerWrites().length).toBe(writes);
    await sweepOnce(kube, later(32 * MIN));
    const last = api
      .writes()
      .filter((r) => r.plural === "providers")
      .at(-1);
    expect(providerWrites().length - writes).toBe(1);
    expect(last?.body).toEqual({ status: { lastHealthCheckTime: later(32 * MIN).toISOString() } });
    expect(provider()?.status?.conditions).toEqual(before?.status?.conditions);
  });

  it("a changed message keeps the condition's transition time; a changed status moves it", async () => {
    const { api, kube, provider } = await deployment();
    await sweepOnce(kube, later(MIN));
    const first = condition(provider(), "Healthy")?.lastTransitionTime;
    seedQueue(api, "third", "True", "ReconcileSuccess");
    await sweepOnce(kube, later(2 * MIN));
    expect(condition(provider(), "Healthy")?.message).toContain("3 of 3");
    expect(condition(provider(), "Healthy")?.lastTransitionTime).toBe(first);
    await sweepOnce(kube, later(3 * MIN), { deadLetters: async () => 1 });
    expect(condition(provider(), "Healthy")?.lastTransitionTime).toBe(later(3 * MIN).toISOString());
  });

  it("no kind activated: Installed=False", async () => {
    const s = server();
    withoutBuckets(s.api);
    s.api.inject((r) =>
      r.plural === "queues" ? notFound("the server could not find the requested resource") : undefined,
    );
    await registerProvider(s.kube, { cloud: "aws", identity: lambda("7"), now: t0 });
    await sweepOnce(s.kube, later(MIN));
    expect(condition(s.provider(), "Installed")).toMatchObject({ status: "False", reason: "NoActiveKinds" });
  });

  it("a sweep before any function registered creates the Provider, its revision still unknown", async () => {
    const { api, kube, provider } = server();
    withoutBuckets(api);
    seedQueue(api, "orders", "True", "ReconcileSuccess");
    await sweepOnce(kube, later(MIN));
    expect(condition(provider(), "Installed")).toMatchObject({
      status: "Unknown",
      reason: "AwaitingRevision",
    });
    expect(condition(provider(), "Healthy")?.status).toBe("True");
    await registerProvider(kube, { cloud: "aws", identity: lambda("7"), now: later(2 * MIN) });
    expect(condition(provider(), "Installed")).toMatchObject({ status: "True", reason: "ActiveRevision" });
    expect(condition(provider(), "Installed")?.message).toContain("1 kinds activated");
  });

  it("a sharded deployment writes its own Provider, from its own objects only", async () => {
    const { api, kube, provider } = await deployment();
    api.seed(Queue, {
      apiVersion: Queue.apiVersion,
      kind: Queue.kind,
      metadata: { name: "eu-orders", labels: { shard: "eu" } },
      spec: { forProvider: {} },
      status: { conditions: [cond("Synced", "False", "ReconcileError")] },
    });
    const sent: ReconcileMessage[] = [];
    await sweepWithProviderHealth(
      kube,
      { kinds, providerConfigKinds: pcKinds, logger: quiet, labelSelector: "shard=eu" },
      (k) =>
        sweep({
          kube: k,
          types,
          sink: recordingSink(sent),
          now: later(MIN),
          scheduleMs: MIN,
          defaultPollMs: 5 * MIN,
          labelSelector: "shard=eu",
        }),
    );
    const shard = provider("driftless-aws-eu");
    expect(shard?.spec).toEqual({ cloud: "aws", labelSelector: "shard=eu" });
    expect(shard?.status?.resources).toMatchObject({ total: 1, synced: 0, failing: 1 });
    expect(condition(shard, "Healthy")).toMatchObject({ status: "False", reason: "NoSuccessfulReconcile" });
    expect(provider()?.status?.resources).toBeUndefined();
  });

  it("driftless run's own check lists by itself and reports the same", async () => {
    const { kube, provider } = await deployment();
    const [r] = await checkProviderHealth(kube, { kinds, providerConfigKinds: pcKinds, logger: quiet });
    expect(r).toMatchObject({ outcome: "written", name: "driftless-aws", healthy: "True" });
    expect(provider()?.status?.resources).toMatchObject({ total: 2, synced: 2 });
  });

  it("driftless run registers its version per served cloud and counts only dead letters since it started", async () => {
    const { kube, provider } = await deployment();
    const running = await startRunProviders({
      kube,
      kinds,
      providerConfigKinds: pcKinds,
      logger: quiet,
      deadLettered: () => 4,
    });
    await running.stop();
    const p = provider();
    expect(p?.status?.currentRevision).toBe(2);
    expect(p?.status?.currentIdentifier).toBe("driftless-run");
    expect(p?.status?.deadLetters).toBe(0);
    expect(condition(p, "Healthy")?.status).toBe("True");
    expect(provider("driftless-gcp")).toBeUndefined();
  });

  it("the tally lists through the client it wraps: a counting client (driftless sweep's progress) still counts", async () => {
    const { api, provider } = await deployment();
    class Counting extends Kube {
      pages = 0;
      override async list<T extends KubeObject>(t: ResourceType, opts: Parameters<Kube["list"]>[1] = {}) {
        this.pages++;
        return super.list<T>(t, opts);
      }
    }
    const counting = new Counting(api);
    await sweepOnce(counting, later(MIN));
    // One page per swept type: Queue, Bucket, ProviderConfig, Usage, ClusterUsage.
    expect(counting.pages).toBe(types.length);
    expect(types.length).toBe(5);
    expect(provider()?.status?.resources?.total).toBe(2);
  });

  it("a report without the Provider CRD writes nothing", async () => {
    const { api, kube } = server();
    api.inject((r) => (r.plural === "providers" ? notFound("no such resource") : undefined));
    const r = await reportProviderHealth(kube, {
      cloud: "aws",
      observation: {
        activatedKinds: [],
        resources: { total: 0, synced: 0, failing: 0, paused: 0 },
        providerConfigs: { total: 0, ready: 0, refused: [] },
        refusedDetails: [],
      },
    });
    expect(r).toEqual({ outcome: "no-crd", name: "driftless-aws" });
  });
});
