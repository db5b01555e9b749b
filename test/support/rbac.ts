// Applying RBAC manifests and acting as the identities they bind, on the real (RBAC-on) API server.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type KubernetesObject, KubernetesObjectApi } from "@kubernetes/client-node";
import { expect } from "vitest";
import { parseAllDocuments } from "yaml";
import { FORWARDER, NAMESPACE, RECONCILER } from "../../infra/k8s/gen-rbac.ts";
import { REPO_ROOT } from "../../infra/local/stack.ts";
import type { ResourceType } from "../../shared/api/meta.ts";
import { Kube, statusOf } from "../../shared/kube/client.ts";
import { coreApi } from "../../shared/kube/core.ts";
import { env, eventually, kubeConfig, kubeConfigFor } from "./env.ts";

/** Create-or-replace, tolerant of parallel runs applying the same cluster-scoped objects. */
export async function apply(api: KubernetesObjectApi, obj: KubernetesObject) {
  for (let attempt = 0; ; attempt++) {
    try {
      const current = await api.read({
        apiVersion: obj.apiVersion!,
        kind: obj.kind!,
        metadata: { name: obj.metadata!.name!, namespace: obj.metadata?.namespace },
      });
      await api.replace({
        ...obj,
        metadata: { ...obj.metadata, resourceVersion: current.metadata?.resourceVersion },
      });
      return;
    } catch (err) {
      const code = statusOf(err);
      if (code === 404) {
        try {
          await api.create(obj);
          return;
        } catch (createErr) {
          if (statusOf(createErr) !== 409 || attempt > 3) throw createErr;
          continue;
        }
      }
      if (code !== 409 || attempt > 3) throw err;
    }
  }
}

/** Applies objects with the admin kubeconfig. */
export async function applyAll(objects: readonly object[]) {
  const api = KubernetesObjectApi.makeApiClient(kubeConfig());
  for (const o of objects) await apply(api, o as KubernetesObject);
}

/** A client authenticated as a ServiceAccount of driftless-system, with a short-lived TokenRequest token. */
export async function kubeAs(admin: Kube, serviceAccount: string): Promise<Kube> {
  const res = await coreApi(admin).createNamespacedServiceAccountToken({
    name: serviceAccount,
    namespace: NAMESPACE,
    body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  const kc = kubeConfigFor(env("DRIFTLESS_KUBE_SERVER"));
  kc.loadFromOptions({
    clusters: kc.clusters,
    users: [{ name: serviceAccount, token: res.status?.token ?? "" }],
    contexts: [{ name: "sa", cluster: kc.clusters[0]!.name, user: serviceAccount }],
    currentContext: "sa",
  });
  return new Kube(kc);
}

/** The objects of a checked-in manifest of infra/k8s. */
export const manifests = (file: string) =>
  parseAllDocuments(readFileSync(join(REPO_ROOT, "infra/k8s", file), "utf8")).map(
    (d) => d.toJS() as KubernetesObject,
  );

/** What every deployment applies: the namespace, the forwarder's ServiceAccount and rbac.yaml (hand-written kinds). */
export const applyBaseRbac = () =>
  applyAll([
    ...manifests("namespace.yaml"),
    ...manifests("forwarder.yaml").filter((o) => o.kind === "ServiceAccount"),
    ...manifests("rbac.yaml"),
  ]);

const CLUSTER_RBAC = ["ClusterRole", "ClusterRoleBinding"].map((kind) => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind,
  plural: `${kind.toLowerCase()}s`,
  group: "rbac.authorization.k8s.io",
  version: "v1",
  namespaced: false,
}));

/** Deletes a generated family's ClusterRoles and bindings (`driftless-forwarder-<family>`, `driftless-reconciler-<family>`). */
export async function removeGeneratedRbac(admin: Kube, family: "awscc" | "googleapis" | "azure-gen") {
  for (const t of CLUSTER_RBAC)
    for (const name of [`${FORWARDER}-${family}`, `${RECONCILER}-${family}`])
      await admin.delete(t, name).catch(() => undefined);
}

type Family = Parameters<typeof removeGeneratedRbac>[1];

/** rbac.yaml alone (a family's generated rules removed): a client acting as the reconcile functions' identity. */
export async function reconcilerWithoutGeneratedRbac(admin: Kube, family: Family): Promise<Kube> {
  await applyBaseRbac();
  await removeGeneratedRbac(admin, family);
  return kubeAs(admin, RECONCILER);
}

/** Applies a family's generated rules and waits until the reconciler's identity reads `name` of `t` with them. */
export async function applyGeneratedRbac(reconciler: Kube, objects: object[], t: ResourceType, name: string) {
  await applyAll(objects);
  await eventually(async () => (await reconciler.get(t, name).catch(() => undefined)) !== undefined, {
    what: "the generated rules in force",
  });
}

/** Exactly the activated kinds: another generated kind stays refused to both identities; the forwarder writes nothing. */
export async function expectOnlyActivated(
  admin: Kube,
  reconciler: Kube,
  activated: ResourceType,
  notActivated: ResourceType,
) {
  expect(statusOf(await reconciler.list(notActivated).catch((e) => e))).toBe(403);
  const forwarder = await kubeAs(admin, FORWARDER);
  await expect(forwarder.list(activated)).resolves.toBeDefined();
  expect(statusOf(await forwarder.list(notActivated).catch((e) => e))).toBe(403);
  expect(
    statusOf(await forwarder.patch(activated, "x", { metadata: { labels: { a: "b" } } }).catch((e) => e)),
  ).toBe(403);
}
