import { ListQueuesCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue as SqsQueue } from "../../../shared/api/aws/sqs.ts";
import { Queue } from "../../../shared/api/claims/claims.ts";
import { SQSQueueClass } from "../../../shared/api/claims/classes.ts";
import { CLAIM_FINALIZER, ClaimLabels } from "../../../shared/api/claims/meta.ts";
import { resourceName } from "../../../shared/claims/naming.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { createAwsProviderConfig, ensureCrds, motoSqs } from "../../support/aws.ts";
import { kubeConfig, newKube, uniqueName } from "../../support/env.ts";
import { newReconciler } from "../../support/reconcile.ts";
import {
  claimKey,
  claimObject,
  claimTable,
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
const PC = uniqueName("pc-bind");
const CLASS = uniqueName("bind-sqs");
const RESTRICTED = uniqueName("bind-restricted");
const namespaces: string[] = [];

/** Namespaces this suite's default class allows: "bind-*" style patterns would do too. */
async function allowedNamespace(prefix: string) {
  const ns = await newNamespace(kube, prefix);
  namespaces.push(ns);
  await kube.patch(SQSQueueClass, CLASS, { spec: { allowedNamespaces: namespaces } });
  return ns;
}

const mrsOf = async (uid: string) =>
  (await kube.list<KubeMr>(SqsQueue, { labelSelector: `${ClaimLabels.uid}=${uid}` })).items;
const cloudQueues = async (prefix: string) =>
  (await sqs.send(new ListQueuesCommand({ QueueNamePrefix: prefix }))).QueueUrls ?? [];

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
  await kube.create(
    SQSQueueClass,
    classObject(
      SQSQueueClass,
      CLASS,
      { providerConfigRef: { name: PC }, allowedNamespaces: ["none-yet"] },
      { labels: { suite: CLASS } },
    ),
  );
  await kube.create(
    SQSQueueClass,
    classObject(SQSQueueClass, RESTRICTED, {
      providerConfigRef: { name: PC },
      allowedNamespaces: ["platform-*"],
    }),
  );
});

afterAll(async () => {
  await kube.delete(SQSQueueClass, CLASS);
  await kube.delete(SQSQueueClass, RESTRICTED);
});

describe("binding a claim to exactly one managed resource", () => {
  it("gives two claims of the same name (in two namespaces) two resources, never one", async () => {
    const [a, b] = [await allowedNamespace("bind-a"), await allowedNamespace("bind-b")];
    const spec = {
      classSelector: { matchLabels: { suite: CLASS } },
      writeConnectionSecretToRef: { name: "q" },
    };
    await kube.create(Queue, claimObject(Queue, a, "work", spec));
    await kube.create(Queue, claimObject(Queue, b, "work", spec));
    const claims = newClaimReconciler(kube);
    const mrs = newReconciler(kube);

    const ca = (await drive({ kube, claims, mrs, def: Queue, namespace: a, name: "work", until: isReady }))
      .claim;
    const cb = (await drive({ kube, claims, mrs, def: Queue, namespace: b, name: "work", until: isReady }))
      .claim;

    expect(ca?.status?.resourceRef?.name).not.toBe(cb?.status?.resourceRef?.name);
    expect(await mrsOf(ca?.metadata.uid ?? "")).toHaveLength(1);
    expect(await mrsOf(cb?.metadata.uid ?? "")).toHaveLength(1);
    const urlA = (await kube.getSecret(a, "q"))?.data?.url;
    const urlB = (await kube.getSecret(b, "q"))?.data?.url;
    expect(urlA).toBeDefined();
    expect(urlA).not.toBe(urlB);
  });

  it("creates exactly one resource and one cloud queue when 10 reconciles of a new claim run at once", async () => {
    const ns = await allowedNamespace("bind-race");
    // Finalizer and classRef already set (as after a first reconcile): nothing serializes the ten creates.
    await kube.create(
      Queue,
      claimObject(
        Queue,
        ns,
        "burst",
        { classRef: { kind: "SQSQueueClass", name: CLASS } },
        { finalizers: [CLAIM_FINALIZER] },
      ),
    );
    // Ten workers, each with its own connections, as ten function instances would have.
    const workers = Array.from({ length: 10 }, () => newClaimReconciler(new Kube(kubeConfig())));

    const results = await Promise.all(workers.map((w) => w.reconcile(claimKey(Queue, ns, "burst"))));

    expect(results.filter((r) => r.outcome === "error")).toEqual([]);
    expect(results.filter((r) => r.outcome === "created")).toHaveLength(1);
    // The other nine met AlreadyExists, found the claim's uid on it, and adopted it.
    expect(results.filter((r) => r.outcome === "creating" || r.outcome === "conflict")).toHaveLength(9);
    const claim = await getClaim(kube, Queue, ns, "burst");
    const bound = await mrsOf(claim?.metadata.uid ?? "");
    expect(bound.map((m) => m.metadata.name)).toEqual([resourceName(claim?.metadata ?? { name: "" })]);

    // The managed reconcilers race too; the engine's create-pending guard makes one cloud queue.
    const engines = Array.from({ length: 10 }, () => newReconciler(new Kube(kubeConfig())));
    const key = { apiVersion: SqsQueue.apiVersion, kind: "Queue", name: bound[0]?.metadata.name ?? "" };
    await Promise.all(engines.map((e) => e.reconcile(key)));
    const { claim: settled } = await drive({
      kube,
      claims: workers[0]!,
      mrs: engines[0]!,
      def: Queue,
      namespace: ns,
      name: "burst",
      until: isReady,
    });
    expect(engines.reduce((n, e) => n + e.externalCalls.create, 0)).toBe(1);
    expect(await cloudQueues(settled?.status?.resourceRef?.name ?? "")).toHaveLength(1);
    expect(await mrsOf(claim?.metadata.uid ?? "")).toHaveLength(1);
  });

  it("never adopts a resource of the same name that belongs to another claim", async () => {
    const ns = await allowedNamespace("bind-taken");
    const created = await kube.create(
      Queue,
      claimObject(Queue, ns, "taken", { classRef: { kind: "SQSQueueClass", name: CLASS } }),
    );
    const name = resourceName(created.metadata);
    await kube.create(SqsQueue, {
      apiVersion: SqsQueue.apiVersion,
      kind: "Queue",
      metadata: { name, labels: { [ClaimLabels.uid]: "someone-else" } },
      spec: { forProvider: {}, providerConfigRef: { name: PC } },
    });

    const res = await newClaimReconciler(kube).reconcile(claimKey(Queue, ns, "taken"));

    expect(res.outcome).toBe("blocked");
    const synced = conditionOf(await getClaim(kube, Queue, ns, "taken"), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ResourceConflict" });
    expect(synced?.message).toContain(
      `Queue "${name}" already exists and belongs to another claim (uid someone-else)`,
    );
    expect((await kube.get<KubeMr>(SqsQueue, name))?.metadata.labels?.[ClaimLabels.uid]).toBe("someone-else");
  });

  it("refuses a class whose allowedNamespaces do not include the claim's namespace", async () => {
    const ns = await newNamespace(kube, "team-x");
    await kube.create(
      Queue,
      claimObject(Queue, ns, "sneaky", { classRef: { kind: "SQSQueueClass", name: RESTRICTED } }),
    );
    await kube.create(
      Queue,
      claimObject(Queue, ns, "any", { classSelector: { matchLabels: { suite: CLASS } } }),
    );
    const claims = newClaimReconciler(kube);

    expect((await claims.reconcile(claimKey(Queue, ns, "sneaky"))).outcome).toBe("blocked");
    expect((await claims.reconcile(claimKey(Queue, ns, "any"))).outcome).toBe("blocked");

    const sneaky = await getClaim(kube, Queue, ns, "sneaky");
    expect(conditionOf(sneaky, "Synced")).toMatchObject({
      status: "False",
      reason: "ClassNotAllowed",
      message: `SQSQueueClass "${RESTRICTED}" does not allow claims from namespace "${ns}" (its spec.allowedNamespaces); ask the platform team, or choose another class`,
    });
    expect(conditionOf(await getClaim(kube, Queue, ns, "any"), "Synced")).toMatchObject({
      reason: "ClassNotAllowed",
      message: expect.stringContaining(`SQSQueueClass/${CLASS} does not list it in spec.allowedNamespaces`),
    });
    const mrName = resourceName(sneaky?.metadata ?? { name: "" });
    expect(await kube.get(SqsQueue, mrName)).toBeUndefined();

    // A forged "bound" status (app teams get no RBAC on /status, but still) makes nothing either.
    await kube.patchStatus(
      Queue,
      "sneaky",
      { resourceRef: { apiVersion: SqsQueue.apiVersion, kind: "Queue", name: mrName } },
      { namespace: ns },
    );
    expect((await claims.reconcile(claimKey(Queue, ns, "sneaky"))).outcome).toBe("blocked");
    expect(await kube.get(SqsQueue, mrName)).toBeUndefined();
  });

  it("never overwrites a Secret the claim does not own", async () => {
    const ns = await allowedNamespace("bind-secret");
    await kube.createSecret({ metadata: { name: "app-config", namespace: ns }, stringData: { keep: "me" } });
    await kube.create(
      Queue,
      claimObject(Queue, ns, "q", {
        classRef: { kind: "SQSQueueClass", name: CLASS },
        writeConnectionSecretToRef: { name: "app-config" },
      }),
    );

    await drive({
      kube,
      claims: newClaimReconciler(kube),
      mrs: newReconciler(kube),
      def: Queue,
      namespace: ns,
      name: "q",
      until: (c) => conditionOf(c, "Synced")?.reason === "SecretConflict",
    });

    expect(conditionOf(await getClaim(kube, Queue, ns, "q"), "Synced")?.message).toBe(
      `Secret ${ns}/app-config already exists and does not belong to this claim: choose another spec.writeConnectionSecretToRef.name`,
    );
    expect((await kube.getSecret(ns, "app-config"))?.data).toEqual({
      keep: Buffer.from("me").toString("base64"),
    });
  });

  it("makes no API-server writes when a bound claim is in sync", async () => {
    const ns = await allowedNamespace("bind-quiet");
    await kube.create(
      Queue,
      claimObject(Queue, ns, "quiet", {
        classRef: { kind: "SQSQueueClass", name: CLASS },
        writeConnectionSecretToRef: { name: "quiet" },
      }),
    );
    await drive({
      kube,
      claims: newClaimReconciler(kube),
      mrs: newReconciler(kube),
      def: Queue,
      namespace: ns,
      name: "quiet",
      until: isReady,
    });

    const counted = new Kube(kubeConfig());
    const res = await newClaimReconciler(counted).reconcile(claimKey(Queue, ns, "quiet"));

    expect(res.outcome).toBe("in-sync");
    expect(res.requeueAfterMs).toBeUndefined();
    const claim = await getClaim(kube, Queue, ns, "quiet");
    expect(await claimTable(kube, Queue, ns, "quiet")).toMatchObject({
      Name: "quiet",
      READY: "True",
      SYNCED: "True",
      CLASS: CLASS,
      "CLASS-KIND": "SQSQueueClass",
      RESOURCE: claim?.status?.resourceRef?.name,
      AGE: expect.any(String),
    });
    expect(counted.stats.writes).toBe(0);
    // Claim, class, resource, the resource's Secret and the claim's Secret.
    expect(counted.stats.gets).toBe(5);
  });
});
