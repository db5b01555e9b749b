// Applying RBAC manifests and acting as the identities they bind, on the real (RBAC-on) API server.
import { type KubernetesObject, KubernetesObjectApi } from "@kubernetes/client-node";
import { NAMESPACE } from "../../infra/k8s/gen-rbac.ts";
import { Kube, statusOf } from "../../shared/kube/client.ts";
import { coreApi } from "../../shared/kube/core.ts";
import { env, kubeConfig, kubeConfigFor } from "./env.ts";

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
