import { ListQueuesCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue as SqsQueue } from "../../../shared/api/aws/sqs.ts";
import { Queue } from "../../../shared/api/claims/claims.ts";
import { PubSubQueueClass, SQSQueueClass } from "../../../shared/api/claims/classes.ts";
import { CLAIM_FINALIZER, ClaimAnnotations, ClaimLabels } from "../../../shared/api/claims/meta.ts";
import { Subscription, Topic } from "../../../shared/api/gcp/pubsub.ts";
import { createAwsProviderConfig, ensureCrds, motoSqs } from "../../support/aws.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { createGcpProviderConfig, emulatorPubSub } from "../../support/gcp.ts";
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
  newNamespace,
} from "./support.ts";

const kube = newKube();
const sqs = motoSqs();
const ps = emulatorPubSub();
const AWS_PC = uniqueName("pc-reclaim-aws");
const GCP_PC = uniqueName("pc-reclaim-gcp");
const DELETE = uniqueName("reclaim-delete");
const RETAIN = uniqueName("reclaim-retain");
const PUBSUB = uniqueName("reclaim-pubsub");

const queueExists = async (name: string) =>
  ((await sqs.send(new ListQueuesCommand({ QueueNamePrefix: name }))).QueueUrls ?? []).some((u) =>
    u.endsWith(`/${name}`),
  );

async function bindQueue(ns: string, name: string, classRef: { kind: string; name: string }) {
  await kube.create(
    Queue,
    claimObject(Queue, ns, name, { classRef, writeConnectionSecretToRef: { name: `${name}-conn` } }),
  );
  const { claim } = await drive({
    kube,
    claims: newClaimReconciler(kube),
    mrs: newReconciler(kube),
    def: Queue,
    namespace: ns,
    name,
    until: isReady,
  });
  return claim;
}

/** Deletes the claim and reconciles (claim and resources) until the claim is gone. */
async function deleteClaim(ns: string, name: string) {
  await kube.delete(Queue, name, ns);
  return drive({
    kube,
    claims: newClaimReconciler(kube),
    mrs: newReconciler(kube),
    def: Queue,
    namespace: ns,
    name,
    until: (c) => c === undefined,
  });
}

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, AWS_PC);
  await createGcpProviderConfig(kube, GCP_PC);
  const spec = (pc: string, reclaimPolicy: string) => ({ providerConfigRef: { name: pc }, reclaimPolicy });
  await kube.create(SQSQueueClass, classObject(SQSQueueClass, DELETE, spec(AWS_PC, "Delete")));
  await kube.create(SQSQueueClass, classObject(SQSQueueClass, RETAIN, spec(AWS_PC, "Retain")));
  await kube.create(PubSubQueueClass, classObject(PubSubQueueClass, PUBSUB, spec(GCP_PC, "Delete")));
});

afterAll(async () => {
  for (const [t, n] of [
    [SQSQueueClass, DELETE],
    [SQSQueueClass, RETAIN],
    [PubSubQueueClass, PUBSUB],
  ] as const)
    await kube.delete(t, n);
  await ps.close();
});

describe("deleting a claim honours its class's reclaim policy", () => {
  it("Delete: deletes the managed resource, which deletes the cloud queue, then the Secret and the claim", async () => {
    const ns = await newNamespace(kube, "reclaim-del");
    const claim = await bindQueue(ns, "gone", { kind: "SQSQueueClass", name: DELETE });
    const mrName = claim?.status?.resourceRef?.name ?? "";
    expect(await queueExists(mrName)).toBe(true);

    const claims = newClaimReconciler(kube);
    await kube.delete(Queue, "gone", ns);
    const first = await claims.reconcile({
      apiVersion: Queue.apiVersion,
      kind: "Queue",
      namespace: ns,
      name: "gone",
    });
    // The claim waits for its resource: the finalizer holds it until the cloud queue is gone.
    expect(first.outcome).toBe("deleting");
    const waiting = await getClaim(kube, Queue, ns, "gone");
    expect(waiting?.metadata.finalizers).toContain(CLAIM_FINALIZER);
    expect(conditionOf(waiting, "Ready")).toMatchObject({ status: "False", reason: "Deleting" });
    expect((await kube.get<KubeMr>(SqsQueue, mrName))?.metadata.deletionTimestamp).toBeDefined();

    const { results } = await deleteClaim(ns, "gone");

    expect(results.at(-1)?.outcome).toBe("deleted");
    expect(await kube.get(SqsQueue, mrName)).toBeUndefined();
    expect(await queueExists(mrName)).toBe(false);
    expect(await kube.getSecret(ns, "gone-conn")).toBeUndefined();
    expect(await kube.getSecret("driftless-system", `claim-${claim?.metadata.uid}`)).toBeUndefined();
  });

  it("Delete with Pub/Sub: both the subscription and the topic go", async () => {
    const ns = await newNamespace(kube, "reclaim-ps");
    const claim = await bindQueue(ns, "events", { kind: "PubSubQueueClass", name: PUBSUB });
    const mrName = claim?.status?.resourceRef?.name ?? "";
    expect((await ps.topic(mrName).exists())[0]).toBe(true);

    await deleteClaim(ns, "events");

    expect(await kube.get(Subscription, mrName)).toBeUndefined();
    expect(await kube.get(Topic, mrName)).toBeUndefined();
    expect((await ps.subscription(mrName).exists())[0]).toBe(false);
    expect((await ps.topic(mrName).exists())[0]).toBe(false);
  });

  it("Retain: keeps the managed resource and the cloud queue, released from the claim", async () => {
    const ns = await newNamespace(kube, "reclaim-ret");
    const claim = await bindQueue(ns, "kept", { kind: "SQSQueueClass", name: RETAIN });
    const mrName = claim?.status?.resourceRef?.name ?? "";
    expect(
      (await kube.get<KubeMr>(SqsQueue, mrName))?.metadata.annotations?.[ClaimAnnotations.reclaimPolicy],
    ).toBe("Retain");

    const { results } = await deleteClaim(ns, "kept");

    expect(results.at(-1)?.outcome).toBe("orphaned");
    const mr = await kube.get<KubeMr>(SqsQueue, mrName);
    expect(mr?.metadata.deletionTimestamp).toBeUndefined();
    expect(mr?.metadata.labels?.[ClaimLabels.uid]).toBeUndefined();
    expect(mr?.metadata.annotations?.[ClaimAnnotations.releasedFrom]).toBe(
      `${ns}/kept (${claim?.metadata.uid})`,
    );
    expect(await queueExists(mrName)).toBe(true);
    // The resource stays healthy and managed; only the claim's copy of its Secret went with the claim.
    const engine = newReconciler(kube);
    expect(
      (await engine.reconcile({ apiVersion: SqsQueue.apiVersion, kind: "Queue", name: mrName })).outcome,
    ).toBe("in-sync");
    expect(await kube.getSecret(ns, "kept-conn")).toBeUndefined();
    expect(await kube.getSecret("driftless-system", `claim-${claim?.metadata.uid}`)).toBeDefined();
  });

  it("a class's later template or reclaimPolicy change (or its deletion) does not change its existing claims", async () => {
    const ns = await newNamespace(kube, "reclaim-tmpl");
    const cls = uniqueName("reclaim-flip");
    await kube.create(
      SQSQueueClass,
      classObject(SQSQueueClass, cls, {
        providerConfigRef: { name: AWS_PC },
        reclaimPolicy: "Retain",
        forProvider: { delaySeconds: 5 },
      }),
    );
    const claim = await bindQueue(ns, "steady", { kind: "SQSQueueClass", name: cls });
    const mrName = claim?.status?.resourceRef?.name ?? "";

    // The class changes its template and its policy: the existing resource keeps what it was made with.
    await kube.patch(SQSQueueClass, cls, {
      spec: { reclaimPolicy: "Delete", forProvider: { delaySeconds: 30 } },
    });
    await drive({
      kube,
      claims: newClaimReconciler(kube),
      mrs: newReconciler(kube),
      def: Queue,
      namespace: ns,
      name: "steady",
      until: isReady,
    });
    expect((await kube.get<KubeMr>(SqsQueue, mrName))?.spec.forProvider).toMatchObject({ delaySeconds: 5 });

    // Even with the class gone, the bound claim stays in sync and keeps the policy it was bound with.
    await kube.delete(SQSQueueClass, cls);
    const res = await newClaimReconciler(kube).reconcile({
      apiVersion: Queue.apiVersion,
      kind: "Queue",
      namespace: ns,
      name: "steady",
    });
    expect(res.outcome).toBe("in-sync");
    expect(conditionOf(await getClaim(kube, Queue, ns, "steady"), "Synced")?.status).toBe("True");
    await deleteClaim(ns, "steady");

    expect(await queueExists(mrName)).toBe(true);
  });
});
