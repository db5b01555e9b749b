import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue as SqsQueue } from "../../../shared/api/aws/sqs.ts";
import { Queue } from "../../../shared/api/claims/claims.ts";
import { PubSubQueueClass, SQSQueueClass } from "../../../shared/api/claims/classes.ts";
import { ClaimAnnotations, ClaimLabels } from "../../../shared/api/claims/meta.ts";
import { Subscription, Topic } from "../../../shared/api/gcp/pubsub.ts";
import type { Kube } from "../../../shared/kube/client.ts";
import { coreApi } from "../../../shared/kube/core.ts";
import { createLogger } from "../../../shared/log.ts";
import { startRun } from "../../../shared/pipeline/run.ts";
import { managedKinds, providerConfigKinds } from "../../../shared/providers/index.ts";
import { createAwsProviderConfig, ensureCrds, motoSqs } from "../../support/aws.ts";
import { eventually, newKube, uniqueName } from "../../support/env.ts";
import { createGcpProviderConfig, emulatorPubSub, gcpProject } from "../../support/gcp.ts";
import { newReconciler } from "../../support/reconcile.ts";
import {
  claimObject,
  classObject,
  conditionOf,
  drive,
  getClaim,
  isReady,
  type KubeMr,
  newClaimReconciler,
  secretData,
  startSecondCluster,
} from "./support.ts";

const sqs = motoSqs();
const ps = emulatorPubSub();
const main = newKube();
const AWS_PC = uniqueName("pc-claims-sqs");
const GCP_PC = "claims-gcp";
// The very same manifest goes to both clusters: same namespace, same name, same portable fields.
const NAMESPACE = uniqueName("shop");
const MANIFEST = claimObject(Queue, NAMESPACE, "orders", {
  retentionSeconds: 3600,
  processingTimeoutSeconds: 45,
  writeConnectionSecretToRef: { name: "orders-queue" },
});

let second: Awaited<ReturnType<typeof startSecondCluster>>;

const sqsAttributes = async (url: string) =>
  (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }))).Attributes ??
  {};

beforeAll(async () => {
  // Cluster A is the stack's API server; its default is SQS, for this namespace only, so parallel
  // suites see no default class. Cluster B is a second, empty cluster whose default is Pub/Sub.
  const [cluster] = await Promise.all([startSecondCluster(), ensureCrds()]);
  second = cluster;
  await createAwsProviderConfig(main, AWS_PC);
  await coreApi(main).createNamespace({ body: { metadata: { name: NAMESPACE } } });
  await main.create(
    SQSQueueClass,
    classObject(
      SQSQueueClass,
      uniqueName("standard-sqs"),
      {
        providerConfigRef: { name: AWS_PC },
        allowedNamespaces: [NAMESPACE],
        forProvider: { tags: { via: "class" } },
      },
      { isDefault: true },
    ),
  );

  await createGcpProviderConfig(second.kube, GCP_PC);
  await coreApi(second.kube).createNamespace({ body: { metadata: { name: NAMESPACE } } });
  await second.kube.create(
    PubSubQueueClass,
    classObject(
      PubSubQueueClass,
      "standard-pubsub",
      { providerConfigRef: { name: GCP_PC }, subscription: { forProvider: { labels: { via: "class" } } } },
      { isDefault: true },
    ),
  );
}, 180_000);

afterAll(async () => {
  await second?.stop();
  await ps.close();
});

async function applyAndSettle(kube: Kube) {
  await kube.create(Queue, structuredClone(MANIFEST));
  const { claim } = await drive({
    kube,
    claims: newClaimReconciler(kube),
    mrs: newReconciler(kube),
    def: Queue,
    namespace: NAMESPACE,
    name: "orders",
    until: (c) => isReady(c),
  });
  return claim;
}

describe("one Queue claim manifest, two clusters with different default classes", () => {
  it("becomes an SQS queue where SQS is the default, with the queue's URL in the claim's Secret", async () => {
    const claim = await applyAndSettle(main);

    expect(conditionOf(claim, "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
    expect(conditionOf(claim, "Bound")).toMatchObject({ status: "True", reason: "Bound" });
    expect(claim?.spec.classRef?.kind).toBe("SQSQueueClass");
    const mrName = claim?.status?.resourceRef?.name ?? "";
    expect(mrName).toBe(`orders-${claim?.metadata.uid?.replaceAll("-", "").slice(0, 8)}`);
    expect(claim?.status?.resourceRef).toEqual({
      apiVersion: SqsQueue.apiVersion,
      kind: "Queue",
      name: mrName,
    });

    const mr = await main.get<KubeMr>(SqsQueue, mrName);
    expect(mr?.metadata.labels).toMatchObject({
      [ClaimLabels.namespace]: NAMESPACE,
      [ClaimLabels.name]: "orders",
      [ClaimLabels.uid]: claim?.metadata.uid,
    });
    expect(mr?.metadata.annotations?.[ClaimAnnotations.reclaimPolicy]).toBe("Delete");
    expect(mr?.spec.forProvider).toMatchObject({
      messageRetentionSeconds: 3600,
      visibilityTimeoutSeconds: 45,
      tags: { via: "class" },
    });
    expect(mr?.spec.writeConnectionSecretToRef).toEqual({
      namespace: "driftless-system",
      name: `claim-${claim?.metadata.uid}`,
    });

    const data = await secretData(main, NAMESPACE, "orders-queue");
    expect(data).toMatchObject({ service: "sqs", url: expect.stringMatching(new RegExp(`/${mrName}$`)) });
    const attrs = await sqsAttributes(data?.url ?? "");
    expect(attrs).toMatchObject({ VisibilityTimeout: "45", MessageRetentionPeriod: "3600" });
    const secret = await main.getSecret(NAMESPACE, "orders-queue");
    expect(secret?.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: "Queue", name: "orders", uid: claim?.metadata.uid, controller: true }),
    ]);
  });

  it("becomes a Pub/Sub topic and subscription in a cluster whose default is Pub/Sub, with both names in the Secret", async () => {
    const kube = second.kube;
    const claim = await applyAndSettle(kube);

    expect(claim?.spec.classRef).toEqual({ kind: "PubSubQueueClass", name: "standard-pubsub" });
    const mrName = claim?.status?.resourceRef?.name ?? "";
    expect(claim?.status?.resourceRef).toEqual({
      apiVersion: Subscription.apiVersion,
      kind: "Subscription",
      name: mrName,
    });
    expect(claim?.status?.resourceRefs?.map((r) => r.kind)).toEqual(["Topic", "Subscription"]);
    const sub = await kube.get<KubeMr>(Subscription, mrName);
    expect(sub?.spec.forProvider).toMatchObject({
      topicRef: { name: mrName },
      topic: mrName,
      ackDeadlineSeconds: 45,
      messageRetentionDuration: "3600s",
      labels: { via: "class" },
    });
    expect(await kube.get(Topic, mrName)).toBeDefined();

    const data = await secretData(kube, NAMESPACE, "orders-queue");
    expect(data).toEqual({
      service: "pubsub",
      topic: `projects/${gcpProject()}/topics/${mrName}`,
      subscription: `projects/${gcpProject()}/subscriptions/${mrName}`,
      projectID: gcpProject(),
    });
    const [meta] = await ps.subscription(mrName).getMetadata();
    expect(meta).toMatchObject({ ackDeadlineSeconds: 45, messageRetentionDuration: { seconds: "3600" } });
    // Cluster B never saw an SQS class: nothing was made in cluster A's cloud for it.
    expect(await main.get(SqsQueue, mrName)).toBeUndefined();
  });

  it("keeps the claim's fields on the bound resources and their status on the claim, in both clusters", async () => {
    for (const kube of [main, second.kube]) {
      await kube.patch(Queue, "orders", { spec: { processingTimeoutSeconds: 90 } }, { namespace: NAMESPACE });
      const claims = newClaimReconciler(kube);
      const mrs = newReconciler(kube);
      const first = await claims.reconcile({
        apiVersion: Queue.apiVersion,
        kind: "Queue",
        namespace: NAMESPACE,
        name: "orders",
      });
      expect(first.outcome).toBe("updated");
      const { claim } = await drive({
        kube,
        claims,
        mrs,
        def: Queue,
        namespace: NAMESPACE,
        name: "orders",
        until: (c, r) => isReady(c) && r.outcome === "in-sync",
      });
      const ref = claim?.status?.resourceRef;
      const primary = await kube.get<KubeMr>(
        ref?.kind === "Queue" ? SqsQueue : Subscription,
        ref?.name ?? "",
      );
      expect(primary?.spec.forProvider).toMatchObject(
        ref?.kind === "Queue" ? { visibilityTimeoutSeconds: 90 } : { ackDeadlineSeconds: 90 },
      );
    }
    const url = (await secretData(main, NAMESPACE, "orders-queue"))?.url ?? "";
    expect((await sqsAttributes(url)).VisibilityTimeout).toBe("90");
    const subName =
      (await getClaim(second.kube, Queue, NAMESPACE, "orders"))?.status?.resourceRef?.name ?? "";
    expect((await ps.subscription(subName).getMetadata())[0].ackDeadlineSeconds).toBe(90);

    // Resource → claim: a resource that cannot sync shows on the claim.
    const mrName = (await getClaim(main, Queue, NAMESPACE, "orders"))?.status?.resourceRef?.name ?? "";
    await main.patch(SqsQueue, mrName, { spec: { forProvider: { fifoQueue: true } } });
    const mrs = newReconciler(main);
    await mrs.reconcile({ apiVersion: SqsQueue.apiVersion, kind: "Queue", name: mrName });
    await newClaimReconciler(main).reconcile({
      apiVersion: Queue.apiVersion,
      kind: "Queue",
      namespace: NAMESPACE,
      name: "orders",
    });
    const synced = conditionOf(await getClaim(main, Queue, NAMESPACE, "orders"), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain(`Queue ${mrName}: cannot update immutable field(s) fifoQueue`);
    await main.patch(SqsQueue, mrName, { spec: { forProvider: { fifoQueue: false } } });
  });

  it("binds with no manual reconciles under driftless run (forwarder, queue and workers) in the second cluster", async () => {
    const kube = second.kube;
    // The second cluster is ours alone, so one-process mode may watch and reconcile everything in it.
    const running = await startRun({
      kubeConfig: second.kubeConfig,
      logger: createLogger({ level: "silent" }),
      kinds: managedKinds,
      providerConfigKinds,
      sweepIntervalMs: 5_000,
    });
    try {
      await kube.create(
        Queue,
        claimObject(Queue, NAMESPACE, "billing", { writeConnectionSecretToRef: { name: "billing-queue" } }),
      );
      const claim = await eventually(
        async () => {
          const c = await getClaim(kube, Queue, NAMESPACE, "billing");
          return isReady(c) && c;
        },
        { what: "the claim Ready under driftless run", timeoutMs: 45_000 },
      );
      expect(claim.status?.resourceRef?.kind).toBe("Subscription");
      expect((await secretData(kube, NAMESPACE, "billing-queue"))?.service).toBe("pubsub");

      await kube.delete(Queue, "billing", NAMESPACE);
      await eventually(async () => (await getClaim(kube, Queue, NAMESPACE, "billing")) === undefined, {
        what: "the claim and its resources deleted under driftless run",
        timeoutMs: 45_000,
      });
      expect(await kube.get(Subscription, claim.status?.resourceRef?.name ?? "")).toBeUndefined();
    } finally {
      await running.stop();
    }
  });
});
