import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type KubernetesObject, KubernetesObjectApi } from "@kubernetes/client-node";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { FORWARDER, NAMESPACE, RECONCILER, rbacObjects, rbacYaml } from "../../../infra/k8s/gen-rbac.ts";
import { REPO_ROOT } from "../../../infra/local/stack.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { Queue as QueueClaim } from "../../../shared/api/claims/claims.ts";
import { SQSQueueClass } from "../../../shared/api/claims/classes.ts";
import { EXTERNAL_KEY_LABEL, externalKeyOf } from "../../../shared/api/cloud-events.ts";
import { type KubeObject, statusOf } from "../../../shared/kube/client.ts";
import { coreApi } from "../../../shared/kube/core.ts";
import { Forwarder } from "../../../shared/pipeline/forwarder.ts";
import { SHAPE_MARKS, SHAPE_MARKS_REF, shapeKeyOf } from "../../../shared/reconciler/shape-marks.ts";
import { createAwsProviderConfig, ensureCrds } from "../../support/aws.ts";
import { eventually, kubeConfig, newKube, uniqueName } from "../../support/env.ts";
import { apply, kubeAs } from "../../support/rbac.ts";
import { conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { ClaimReconciler } from "../../support/routed.ts";
import {
  conditionOf as claimCondition,
  claimObject,
  classObject,
  drive,
  isReady,
  newNamespace,
} from "../claims/support.ts";
import { cleanup, queueObject, RecordingSink, TEST_LABEL } from "./helpers.ts";

const admin = newKube();
const created: string[] = [];
const manifests = (file: string) =>
  parseAllDocuments(readFileSync(join(REPO_ROOT, "infra/k8s", file), "utf8")).map(
    (d) => d.toJS() as KubernetesObject,
  );

beforeAll(async () => {
  await ensureCrds();
  const api = KubernetesObjectApi.makeApiClient(kubeConfig());
  const forwarderSa = manifests("forwarder.yaml").filter((o) => o.kind === "ServiceAccount");
  for (const obj of [...manifests("namespace.yaml"), ...forwarderSa, ...manifests("rbac.yaml")])
    await apply(api, obj);
});

afterEach(async () => {
  await cleanup(admin, created.splice(0));
});

describe("RBAC manifests (infra/k8s) on the real API server", () => {
  it("are what the generator produces from the kind registry", () => {
    expect(readFileSync(join(REPO_ROOT, "infra/k8s/rbac.yaml"), "utf8")).toBe(rbacYaml());
  });

  it("let the forwarder list and watch managed resources, and nothing more", async () => {
    const kube = await kubeAs(admin, FORWARDER);
    const label = uniqueName("rbac-fwd");
    const sink = new RecordingSink();
    const forwarder = new Forwarder({ kube, types: [Queue], sink, labelSelector: `${TEST_LABEL}=${label}` });
    await forwarder.start();
    try {
      const name = uniqueName("q-rbac");
      created.push(name);
      await admin.create<KubeObject>(Queue, queueObject(name, label));
      await eventually(async () => sink.for(name).length === 1, {
        what: "forwarded as the forwarder's ServiceAccount",
      });

      expect(
        statusOf(await kube.patch(Queue, name, { metadata: { labels: { x: "y" } } }).catch((e) => e)),
      ).toBe(403);
      expect(statusOf(await kube.getSecret("default", "anything").catch((e) => e))).toBe(403);
    } finally {
      await forwarder.stop();
    }
  });

  it("let the reconcile functions' identity reconcile a Queue end to end", async () => {
    const kube = await kubeAs(admin, RECONCILER);
    const pc = uniqueName("pc-rbac");
    await createAwsProviderConfig(admin, pc);
    const name = uniqueName("q-rbac-rec");
    created.push(name);
    await admin.create(Queue, {
      ...queueObject(name, "rbac"),
      spec: {
        forProvider: {},
        providerConfigRef: { name: pc },
        writeConnectionSecretToRef: { namespace: NAMESPACE, name: `${name}-conn` },
      },
    });

    const results = await settle(newReconciler(kube), keyOf(Queue, name));

    expect(results.map((r) => r.error?.message).filter(Boolean)).toEqual([]);
    expect(conditionOf(await getMr(admin, Queue, name), "Ready")?.status).toBe("True");
    expect(await admin.getSecret(NAMESPACE, `${name}-conn`)).toBeDefined();
    // The index label was written: the Role lets it read (and write) its shape's mark first.
    expect((await getMr(admin, Queue, name))?.metadata.labels?.[EXTERNAL_KEY_LABEL]).toBe(
      externalKeyOf(Queue, name),
    );
    const marks = await admin.get<KubeObject & { data?: Record<string, string> }>(
      SHAPE_MARKS,
      SHAPE_MARKS_REF.name,
      SHAPE_MARKS_REF.namespace,
    );
    expect(marks?.data?.[shapeKeyOf(Queue)]).toBe("in-use");
    // Secrets can be listed (the batched drift check's one LIST) only where the Role grants them.
    await expect(coreApi(kube).listNamespacedSecret({ namespace: NAMESPACE })).resolves.toBeDefined();
    expect(
      statusOf(
        await coreApi(kube)
          .listNamespacedSecret({ namespace: "kube-system" })
          .catch((e) => e),
      ),
    ).toBe(403);
    await settle(newReconciler(kube), keyOf(Queue, name));
    await admin.delete(Queue, name);
    await settle(newReconciler(kube), keyOf(Queue, name));
    expect(await admin.get(Queue, name)).toBeUndefined();
  });

  it("let the reconcile functions' identity bind a claim, make its managed resource and Secret, and release it", async () => {
    // Prepare: a class only this test's namespace may use, named by the claim (no defaults involved).
    const kube = await kubeAs(admin, RECONCILER);
    const pc = uniqueName("pc-rbac-claim");
    await createAwsProviderConfig(admin, pc);
    const namespace = await newNamespace(admin, "rbac-claims");
    // Onboard the claim namespace as docs/claims.md says: the generator's Secret Role for it.
    const api = KubernetesObjectApi.makeApiClient(kubeConfig());
    for (const obj of rbacObjects(undefined, undefined, { secretNamespaces: [namespace] }))
      if ((obj as KubernetesObject).kind === "Role" || (obj as KubernetesObject).kind === "RoleBinding")
        await apply(api, obj as KubernetesObject);
    const cls = uniqueName("rbac-sqs");
    await admin.create(
      SQSQueueClass,
      classObject(SQSQueueClass, cls, { providerConfigRef: { name: pc }, allowedNamespaces: [namespace] }),
    );
    const spec = {
      classRef: { kind: "SQSQueueClass", name: cls },
      writeConnectionSecretToRef: { name: "conn" },
    };
    await admin.create(QueueClaim, claimObject(QueueClaim, namespace, "q", spec));
    const claims = new ClaimReconciler(kube);
    const mrs = newReconciler(kube);
    const base = { kube: admin, claims, mrs, def: QueueClaim, namespace, name: "q" };

    try {
      // Act: the claim and its resource, reconciled as the generated ClusterRoles' identity only.
      const { claim, results } = await drive({ ...base, until: isReady });

      // Assess
      expect(results.map((r) => r.error?.message).filter(Boolean)).toEqual([]);
      expect(claimCondition(claim, "Synced")?.status).toBe("True");
      expect((await admin.getSecret(namespace, "conn"))?.data?.url).toBeDefined();
      const name = claim?.status?.resourceRef?.name ?? "";
      expect(conditionOf(await getMr(admin, Queue, name), "Ready")?.status).toBe("True");

      // The forwarder's identity watches claims and classes too (keys only).
      const forwarder = await kubeAs(admin, FORWARDER);
      expect((await forwarder.list(QueueClaim, { namespace })).items).toHaveLength(1);
      expect(await forwarder.get(SQSQueueClass, cls)).toBeDefined();
      expect(statusOf(await forwarder.delete(QueueClaim, "q", namespace).catch((e) => e))).toBe(403);

      // Act: delete the claim (reclaim policy Delete): the resource goes first, then the claim.
      await admin.delete(QueueClaim, "q", namespace);
      await drive({ ...base, until: (c) => c === undefined });

      // Assess
      expect(await admin.get(Queue, name)).toBeUndefined();
      expect(await admin.getSecret(namespace, "conn")).toBeUndefined();
      // Classes are read-only to driftless.
      expect(
        statusOf(await kube.patch(SQSQueueClass, cls, { metadata: { labels: { x: "y" } } }).catch((e) => e)),
      ).toBe(403);
    } finally {
      await admin.delete(SQSQueueClass, cls);
    }
  });
});
