import { GetQueueAttributesCommand, GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue as SqsQueue } from "../../../shared/api/aws/sqs.ts";
import { Bucket, Queue } from "../../../shared/api/claims/claims.ts";
import { SQSQueueClass } from "../../../shared/api/claims/classes.ts";
import { ClaimLabels } from "../../../shared/api/claims/meta.ts";
import {
  APIServiceExportTemplate,
  EXPORT_FINALIZER,
  ExportLabels,
  type ExportTemplate,
} from "../../../shared/api/export/template.ts";
import { agentKubeConfig, bindAppCluster } from "../../../shared/export/bind.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { coreApi } from "../../../shared/kube/core.ts";
import { createLogger } from "../../../shared/log.ts";
import { type Running, startRun } from "../../../shared/pipeline/run.ts";
import { managedKinds, providerConfigKinds } from "../../../shared/providers/index.ts";
import { pinAppCluster } from "../../support/app-cluster.ts";
import { createAwsProviderConfig, ensureNamespace, motoSqs } from "../../support/aws.ts";
import { eventually } from "../../support/env.ts";
import {
  claimObject,
  classObject,
  conditionOf,
  getClaim,
  isReady,
  type KubeClaim,
  type KubeMr,
  secretData,
} from "../claims/support.ts";
import { type Cluster, failsWith, startClusters } from "./support.ts";

const sqs = motoSqs();
const PC = "export-sqs";
const CLASS = "standard-sqs";
const TEMPLATE = "app-services";
// The same namespace and claim name in both app clusters: they must not meet on the control plane.
const NS = "shop";
const MANIFEST = claimObject(Queue, NS, "orders", {
  retentionSeconds: 3600,
  writeConnectionSecretToRef: { name: "orders-queue" },
});
const api = (def: { group: string; plural: string; version: string }) => ({
  group: def.group,
  resource: def.plural,
  version: def.version,
});

let cp: Cluster;
let alpha: Cluster;
let beta: Cluster;
let running: Running;
const urls: Record<string, string> = {};

const claimIn = (c: Cluster, name = "orders") => getClaim(c.kube, Queue, NS, name);
const readyIn = (c: Cluster, name = "orders") =>
  eventually(
    async () => {
      const claim = await claimIn(c, name);
      return isReady(claim) && claim;
    },
    { what: `claim ${NS}/${name} Ready in the app cluster`, timeoutMs: 60_000 },
  );
const queueGone = async (url: string) =>
  await sqs
    .send(new GetQueueUrlCommand({ QueueName: url.split("/").pop() ?? "" }))
    .then(() => false)
    .catch((e: Error) => e.name.includes("NonExistentQueue") || e.name.includes("QueueDoesNotExist"));

beforeAll(async () => {
  const clusters = await startClusters([
    { role: "cp", crds: true },
    { role: "alpha", crds: false },
    { role: "beta", crds: false },
  ]);
  [cp, alpha, beta] = clusters as [Cluster, Cluster, Cluster];
  await createAwsProviderConfig(cp.kube, PC);
  await cp.kube.create(
    SQSQueueClass,
    classObject(
      SQSQueueClass,
      CLASS,
      { providerConfigRef: { name: PC }, allowedNamespaces: ["app-alpha", "app-beta"] },
      { isDefault: true },
    ),
  );
  await cp.kube.create(APIServiceExportTemplate, {
    apiVersion: APIServiceExportTemplate.apiVersion,
    kind: APIServiceExportTemplate.kind,
    metadata: { name: TEMPLATE },
    spec: {
      apis: [api(Queue), api(Bucket)],
      permissionClaims: [{ resource: "secrets", selector: { owner: "Claim" } }],
    },
  });
  for (const [name, app] of [
    ["alpha", alpha],
    ["beta", beta],
  ] as const) {
    const res = await bindAppCluster({ controlPlane: cp.kubeConfig, app: app.kubeConfig, name });
    expect(res).toEqual({
      appCluster: name,
      namespace: `app-${name}`,
      templates: [TEMPLATE],
      kinds: ["Queue", "Bucket"],
    });
    await ensureNamespace(app.kube, NS);
  }
  // The control plane is ours alone: one-process mode serves everything on it, and both app clusters.
  running = await startRun({
    kubeConfig: cp.kubeConfig,
    logger: createLogger({ level: "silent" }),
    kinds: managedKinds,
    providerConfigKinds,
    sweepIntervalMs: 5_000,
    // Named by the control plane, as `driftless run --app-cluster alpha=… --app-cluster beta=…` does.
    appClusters: [pinAppCluster("alpha", alpha.kubeConfig), pinAppCluster("beta", beta.kubeConfig)],
  });
}, 180_000);

afterAll(async () => {
  await running?.stop();
  await Promise.all([cp, alpha, beta].map((c) => c?.stop()));
}, 60_000);

describe("service export: claims in app clusters, managed resources on the control plane", () => {
  it("binds validates the template and installs only the claim CRDs in the app cluster", async () => {
    const t = await cp.kube.get<ExportTemplate & { [k: string]: unknown }>(
      APIServiceExportTemplate,
      TEMPLATE,
    );
    expect(conditionOf(t, "Ready")).toMatchObject({ status: "True", reason: "Valid" });
    expect(t?.status?.offered).toEqual(["queues.claims.driftless.dev", "buckets.claims.driftless.dev"]);
    expect((await alpha.kube.list(Queue)).items).toEqual([]);
    // Classes and managed kinds stay on the control plane.
    expect(await failsWith(alpha.kube.list(SqsQueue))).toBe(404);
    expect(await failsWith(alpha.kube.list(SQSQueueClass))).toBe(404);
  });

  it("a Queue claim in an app cluster becomes Ready there, with its Secret, while the SQS queue is managed on the control plane", async () => {
    await alpha.kube.create(Queue, structuredClone(MANIFEST));
    const claim = await readyIn(alpha);

    expect(claim.metadata.finalizers).toContain(EXPORT_FINALIZER);
    expect(conditionOf(claim, "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
    expect(conditionOf(claim, "Bound")).toMatchObject({ status: "True" });
    expect(conditionOf(claim, "Exported")).toMatchObject({ status: "True", reason: "Exported" });

    const upstream = await getClaim(cp.kube, Queue, "app-alpha", `${NS}.orders`);
    expect(upstream?.metadata.labels).toMatchObject({
      [ExportLabels.appCluster]: "alpha",
      [ExportLabels.appNamespace]: NS,
      [ExportLabels.appUid]: claim.metadata.uid,
    });
    expect(upstream?.spec).toMatchObject({
      retentionSeconds: 3600,
      writeConnectionSecretToRef: { name: `${NS}.orders-queue` },
      classRef: { kind: "SQSQueueClass", name: CLASS },
    });
    const mrName = upstream?.status?.resourceRef?.name ?? "";
    expect(claim.status?.resourceRef).toEqual(upstream?.status?.resourceRef);
    const mr = await cp.kube.get<KubeMr>(SqsQueue, mrName);
    expect(mr?.metadata.labels).toMatchObject({
      [ClaimLabels.namespace]: "app-alpha",
      [ClaimLabels.uid]: upstream?.metadata.uid,
    });

    const data = await secretData(alpha.kube, NS, "orders-queue");
    expect(data).toMatchObject({ service: "sqs", url: expect.stringMatching(new RegExp(`/${mrName}$`)) });
    urls.alpha = data?.url ?? "";
    const secret = await alpha.kube.getSecret(NS, "orders-queue");
    expect(secret?.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: "Queue", name: "orders", uid: claim.metadata.uid, controller: true }),
    ]);
    const attrs = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: urls.alpha, AttributeNames: ["MessageRetentionPeriod"] }),
    );
    expect(attrs.Attributes?.MessageRetentionPeriod).toBe("3600");
  });

  it("a second app cluster with the same namespace and claim name gets its own queue", async () => {
    await beta.kube.create(Queue, structuredClone(MANIFEST));
    await readyIn(beta);
    urls.beta = (await secretData(beta.kube, NS, "orders-queue"))?.url ?? "";
    expect(urls.beta).not.toBe("");
    expect(urls.beta).not.toBe(urls.alpha);
    for (const url of [urls.alpha, urls.beta]) expect(await queueGone(url ?? "")).toBe(false);
    expect((await cp.kube.list(Queue, { namespace: "app-beta" })).items.map((c) => c.metadata.name)).toEqual([
      `${NS}.orders`,
    ]);
    // Each app cluster sees its own claim and Secret only.
    expect((await alpha.kube.list(Queue)).items).toHaveLength(1);
    expect((await beta.kube.list(Queue)).items).toHaveLength(1);
  });

  it("the agent's identity reaches its own control-plane namespace only: no other app cluster, no classes, no managed resources", async () => {
    const agent = new Kube(await agentKubeConfig(cp.kubeConfig, "alpha", 600));
    expect((await agent.list(Queue, { namespace: "app-alpha" })).items).toHaveLength(1);
    expect(await agent.getSecret("app-alpha", `${NS}.orders-queue`)).toBeDefined();

    // Another app cluster's claims and Secrets.
    expect(await failsWith(agent.list(Queue, { namespace: "app-beta" }))).toBe(403);
    expect(await failsWith(agent.get(Queue, `${NS}.orders`, "app-beta"))).toBe(403);
    expect(await failsWith(agent.create(Queue, claimObject(Queue, "app-beta", "x")))).toBe(403);
    expect(await failsWith(agent.getSecret("app-beta", `${NS}.orders-queue`))).toBe(403);
    expect(await failsWith(coreApi(agent).listNamespacedSecret({ namespace: "app-beta" }))).toBe(403);
    expect(await failsWith(agent.list(Queue))).toBe(403);
    // Platform objects: classes, managed resources, credentials, templates beyond reading its own.
    expect(await failsWith(agent.get(SQSQueueClass, CLASS))).toBe(403);
    expect(await failsWith(agent.patch(SQSQueueClass, CLASS, { spec: { allowedNamespaces: ["*"] } }))).toBe(
      403,
    );
    expect(await failsWith(agent.list(SqsQueue))).toBe(403);
    expect(
      await failsWith(
        agent.create(SqsQueue, {
          apiVersion: SqsQueue.apiVersion,
          kind: "Queue",
          metadata: { name: "direct" },
          spec: { forProvider: {}, providerConfigRef: { name: PC } },
        }),
      ),
    ).toBe(403);
    expect(await failsWith(coreApi(agent).listNamespacedSecret({ namespace: "driftless-system" }))).toBe(403);
    expect(await agent.get(APIServiceExportTemplate, TEMPLATE)).toBeDefined();
    expect(await failsWith(agent.list(APIServiceExportTemplate))).toBe(403);
    expect(await failsWith(agent.patch(APIServiceExportTemplate, TEMPLATE, { spec: { apis: [] } }))).toBe(
      403,
    );
    // The agent reads permission-claimed objects; it cannot write them on the control plane.
    expect(
      await failsWith(
        agent.createSecret({ metadata: { name: "x", namespace: "app-alpha" }, stringData: {} }),
      ),
    ).toBe(403);
  });

  it("deleting the claim in the app cluster deletes it upstream, the managed resource and the queue, then releases the claim", async () => {
    const mrName = (await claimIn(alpha))?.status?.resourceRef?.name ?? "";
    await alpha.kube.delete(Queue, "orders", NS);
    await eventually(async () => (await claimIn(alpha)) === undefined, {
      what: "the app-cluster claim gone",
      timeoutMs: 60_000,
    });
    expect(await getClaim(cp.kube, Queue, "app-alpha", `${NS}.orders`)).toBeUndefined();
    expect(await cp.kube.get(SqsQueue, mrName)).toBeUndefined();
    expect(await queueGone(urls.alpha ?? "")).toBe(true);
    expect(await alpha.kube.getSecret(NS, "orders-queue")).toBeUndefined();
    // The other app cluster's same-named claim is untouched.
    expect(isReady(await claimIn(beta))).toBe(true);
    expect(await queueGone(urls.beta ?? "")).toBe(false);
  });

  it("removing the export stops new bindings with a clear condition; bound claims keep working, and their deletion still propagates", async () => {
    await cp.kube.patch(APIServiceExportTemplate, TEMPLATE, { spec: { apis: [api(Bucket)] } });
    await beta.kube.create(Queue, claimObject(Queue, NS, "late", {}));
    const notExported = (c: KubeClaim | undefined) =>
      conditionOf(c, "Exported")?.reason === "NotExported" && conditionOf(c, "Synced")?.status === "False";
    const late = await eventually(
      async () => {
        const c = await claimIn(beta, "late");
        return notExported(c) && c;
      },
      { what: "the new claim refused as not exported", timeoutMs: 30_000 },
    );
    expect(conditionOf(late, "Synced")).toMatchObject({ reason: "NotExported" });
    expect(conditionOf(late, "Synced")?.message).toMatch(/is not exported to app cluster beta/);
    expect(conditionOf(late, "Ready")?.status).toBe("False");
    expect(late.metadata.finalizers ?? []).not.toContain(EXPORT_FINALIZER);
    expect(await getClaim(cp.kube, Queue, "app-beta", `${NS}.late`)).toBeUndefined();

    // The bound claim says so, and stays Ready.
    await running.agents[1]?.resyncNow();
    const orders = await eventually(
      async () => {
        const c = await claimIn(beta);
        return conditionOf(c, "Exported")?.status === "False" && c;
      },
      { what: "the bound claim told the export is gone", timeoutMs: 30_000 },
    );
    expect(conditionOf(orders, "Exported")?.message).toMatch(/keeps working/);
    expect(isReady(orders)).toBe(true);

    // Deleting the template altogether: the same.
    await cp.kube.delete(APIServiceExportTemplate, TEMPLATE);
    await running.agents[1]?.resyncNow();
    await new Promise((r) => setTimeout(r, 1_000));
    expect(notExported(await claimIn(beta, "late"))).toBe(true);
    expect(await getClaim(cp.kube, Queue, "app-beta", `${NS}.late`)).toBeUndefined();
    expect(isReady(await claimIn(beta))).toBe(true);

    // Deletion still goes upstream for the bound claim; the unbound one goes at once.
    await beta.kube.delete(Queue, "late", NS);
    await beta.kube.delete(Queue, "orders", NS);
    await eventually(
      async () => (await claimIn(beta)) === undefined && (await claimIn(beta, "late")) === undefined,
      {
        what: "both claims gone from the app cluster",
        timeoutMs: 60_000,
      },
    );
    expect(await getClaim(cp.kube, Queue, "app-beta", `${NS}.orders`)).toBeUndefined();
    expect(await queueGone(urls.beta ?? "")).toBe(true);
  });
});
