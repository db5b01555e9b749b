import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue as SqsQueue } from "../../../shared/api/aws/sqs.ts";
import { Queue } from "../../../shared/api/claims/claims.ts";
import { PubSubQueueClass, SQSQueueClass } from "../../../shared/api/claims/classes.ts";
import { Subscription } from "../../../shared/api/gcp/pubsub.ts";
import { coreApi } from "../../../shared/kube/core.ts";
import { KubeEventRecorder } from "../../../shared/kube/events.ts";
import { createAwsProviderConfig, ensureCrds } from "../../support/aws.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { createGcpProviderConfig } from "../../support/gcp.ts";
import { newReconciler } from "../../support/reconcile.ts";
import { ClaimReconciler } from "../../support/routed.ts";
import {
  claimKey,
  claimObject,
  classObject,
  conditionOf,
  drive,
  getClaim,
  isReady,
  newClaimReconciler,
  newNamespace,
} from "./support.ts";

const kube = newKube();
const AWS_PC = uniqueName("pc-match-aws");
const GCP_PC = uniqueName("pc-match-gcp");
// Label values of this run only: classes other runs left behind never match.
const TIER = uniqueName("gold");
const RUN = uniqueName("match");

/** Both kinds of Queue class, usable from `namespace` only (parallel tests never see each other's). */
async function classes(namespace: string, opts: { sqs?: object; pubsub?: object } = {}) {
  const names = { sqs: uniqueName("sqs"), pubsub: uniqueName("pubsub") };
  await kube.create(
    SQSQueueClass,
    classObject(
      SQSQueueClass,
      names.sqs,
      { providerConfigRef: { name: AWS_PC }, allowedNamespaces: [namespace] },
      { labels: { tier: "standard", cloud: "aws", run: RUN }, ...opts.sqs },
    ),
  );
  await kube.create(
    PubSubQueueClass,
    classObject(
      PubSubQueueClass,
      names.pubsub,
      { providerConfigRef: { name: GCP_PC }, allowedNamespaces: [namespace] },
      { labels: { tier: "standard", cloud: "gcp", run: RUN }, ...opts.pubsub },
    ),
  );
  return names;
}

const settle = (namespace: string, name: string) =>
  drive({
    kube,
    claims: newClaimReconciler(kube),
    mrs: newReconciler(kube),
    def: Queue,
    namespace,
    name,
    until: (c) => isReady(c),
  });

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, AWS_PC);
  await createGcpProviderConfig(kube, GCP_PC);
});

afterAll(async () => {
  for (const t of [SQSQueueClass, PubSubQueueClass]) {
    const { items } = await kube.list(t, { labelSelector: `run=${RUN}` });
    for (const c of items) await kube.delete(t, c.metadata.name);
  }
});

describe("choosing a class for a claim", () => {
  it("classSelector picks the class whose labels match, across every class kind", async () => {
    const ns = await newNamespace(kube, "match-sel");
    const names = await classes(ns);
    await kube.create(
      Queue,
      claimObject(Queue, ns, "events", { classSelector: { matchLabels: { cloud: "gcp" } } }),
    );

    const { claim } = await settle(ns, "events");

    expect(claim?.spec.classRef).toEqual({ kind: "PubSubQueueClass", name: names.pubsub });
    expect(claim?.status?.resourceRef?.kind).toBe("Subscription");
    expect(conditionOf(claim, "ClassAmbiguous")).toBeUndefined();
  });

  it("classRef wins over a selector and over default classes", async () => {
    const ns = await newNamespace(kube, "match-ref");
    const names = await classes(ns, { pubsub: { isDefault: true } });
    await kube.create(
      Queue,
      claimObject(Queue, ns, "jobs", {
        classRef: { kind: "SQSQueueClass", name: names.sqs },
        classSelector: { matchLabels: { cloud: "gcp" } },
      }),
    );

    const { claim } = await settle(ns, "jobs");

    expect(claim?.spec.classRef).toEqual({ kind: "SQSQueueClass", name: names.sqs });
    expect(claim?.status?.resourceRef).toMatchObject({ apiVersion: SqsQueue.apiVersion, kind: "Queue" });
  });

  it("says clearly when no class matches, retries, and binds as soon as a class appears", async () => {
    const ns = await newNamespace(kube, "match-none");
    await kube.create(
      Queue,
      claimObject(Queue, ns, "later", { classSelector: { matchLabels: { tier: TIER } } }),
    );
    const claims = newClaimReconciler(kube);

    const first = await claims.reconcile(claimKey(Queue, ns, "later"));
    const again = await claims.reconcile(claimKey(Queue, ns, "later"));

    expect(first.outcome).toBe("blocked");
    expect(first.requeueAfterMs).toBeGreaterThan(0);
    expect(again.requeueAfterMs).toBeLessThanOrEqual(45_000);
    const waiting = await getClaim(kube, Queue, ns, "later");
    expect(conditionOf(waiting, "Synced")).toMatchObject({
      status: "False",
      reason: "ClassNotFound",
      message: expect.stringContaining(
        `no SQSQueueClass or PubSubQueueClass matches spec.classSelector {tier=${TIER}}`,
      ),
    });
    expect(conditionOf(waiting, "Bound")).toMatchObject({ status: "False", reason: "Unbound" });
    expect(conditionOf(waiting, "Ready")).toMatchObject({ status: "False" });
    expect(waiting?.spec.classRef).toBeUndefined();

    // The class appears: its own key (watched like any kind) binds the claims waiting for it.
    const gold = uniqueName("gold");
    await kube.create(
      SQSQueueClass,
      classObject(
        SQSQueueClass,
        gold,
        { providerConfigRef: { name: AWS_PC }, allowedNamespaces: [ns] },
        { labels: { tier: TIER, run: RUN } },
      ),
    );
    const woken = await claims.reconcile({
      apiVersion: SQSQueueClass.apiVersion,
      kind: SQSQueueClass.kind,
      name: gold,
    });
    expect(woken.outcome).toBe("in-sync");
    expect((await getClaim(kube, Queue, ns, "later"))?.spec.classRef).toEqual({
      kind: "SQSQueueClass",
      name: gold,
    });

    const { claim } = await settle(ns, "later");
    expect(conditionOf(claim, "Synced")).toMatchObject({ status: "True" });
    expect(conditionOf(claim, "Bound")).toMatchObject({ status: "True" });
  });

  it("names the missing class of a classRef", async () => {
    const ns = await newNamespace(kube, "match-refnone");
    await kube.create(
      Queue,
      claimObject(Queue, ns, "q", { classRef: { kind: "PubSubQueueClass", name: "nope" } }),
    );
    await kube.create(Queue, claimObject(Queue, ns, "k", { classRef: { kind: "S3BucketClass", name: "x" } }));
    const claims = newClaimReconciler(kube);

    await claims.reconcile(claimKey(Queue, ns, "q"));
    await claims.reconcile(claimKey(Queue, ns, "k"));

    expect(conditionOf(await getClaim(kube, Queue, ns, "q"), "Synced")).toMatchObject({
      reason: "ClassNotFound",
      message: 'PubSubQueueClass "nope" (spec.classRef) not found; binding is retried until it exists',
    });
    expect(conditionOf(await getClaim(kube, Queue, ns, "k"), "Synced")).toMatchObject({
      reason: "InvalidSpec",
      message: expect.stringContaining(
        '"S3BucketClass" does not serve Queue claims; use one of SQSQueueClass, PubSubQueueClass',
      ),
    });
  });

  it("with several default classes chooses the first by kind then name, and warns", async () => {
    const ns = await newNamespace(kube, "match-2def");
    const names = await classes(ns, { sqs: { isDefault: true }, pubsub: { isDefault: true } });
    await kube.create(Queue, claimObject(Queue, ns, "either"));
    const claims = new ClaimReconciler(kube, { events: new KubeEventRecorder(kube) });

    await claims.reconcile(claimKey(Queue, ns, "either"));

    const claim = await getClaim(kube, Queue, ns, "either");
    // "PubSubQueueClass" sorts before "SQSQueueClass".
    expect(claim?.spec.classRef).toEqual({ kind: "PubSubQueueClass", name: names.pubsub });
    expect(conditionOf(claim, "ClassAmbiguous")).toMatchObject({
      status: "True",
      reason: "SeveralDefaultClasses",
      message: expect.stringContaining(
        `2 default classes qualified (PubSubQueueClass/${names.pubsub}, SQSQueueClass/${names.sqs}); chose PubSubQueueClass/${names.pubsub}`,
      ),
    });
    const events = await coreApi(kube).listNamespacedEvent({ namespace: ns });
    expect(events.items.map((e) => [e.type, e.reason])).toContainEqual(["Warning", "SeveralDefaultClasses"]);
    // The choice is recorded: later reconciles keep it even if another default appears.
    await claims.reconcile(claimKey(Queue, ns, "either"));
    expect((await getClaim(kube, Queue, ns, "either"))?.status?.resourceRef?.kind).toBe(Subscription.kind);
  });
});
