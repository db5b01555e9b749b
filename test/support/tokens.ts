// Acting as another identity on the real API server (RBAC on): the token kube-controller-manager minted
// for a ServiceAccount, and a Kube client that authenticates with it.
import { Kube } from "../../shared/kube/client.ts";
import { coreApi } from "../../shared/kube/core.ts";
import { env, eventually, kubeConfigFor } from "./env.ts";

/** A client authenticated by a bearer token (a ServiceAccount's, or one the TokenRequest API issued). */
export function kubeWithToken(token: string, user: string): Kube {
  const kc = kubeConfigFor(env("DRIFTLESS_KUBE_SERVER"));
  kc.loadFromOptions({
    clusters: kc.clusters,
    users: [{ name: user, token }],
    contexts: [{ name: user, cluster: kc.clusters[0]?.name ?? "extra", user }],
    currentContext: user,
  });
  return new Kube(kc);
}

/** The token Secret kube-controller-manager minted for a ServiceAccount (the current one, by uid). */
export async function tokenSecretOf(admin: Kube, namespace: string, serviceAccount: string): Promise<string> {
  return eventually(
    async () => {
      const sa = await coreApi(admin).readNamespacedServiceAccount({ name: serviceAccount, namespace });
      const list = await coreApi(admin).listNamespacedSecret({
        namespace,
        fieldSelector: "type=kubernetes.io/service-account-token",
      });
      const secret = list.items.find(
        (s) =>
          s.metadata?.annotations?.["kubernetes.io/service-account.name"] === serviceAccount &&
          s.metadata?.annotations?.["kubernetes.io/service-account.uid"] === sa.metadata?.uid &&
          s.data?.token,
      );
      return secret?.data?.token ? Buffer.from(secret.data.token, "base64").toString("utf8") : undefined;
    },
    { timeoutMs: 30_000, what: `a token Secret for ${namespace}/${serviceAccount}` },
  );
}
