// Cluster access from Cloud Functions: the platform glue around shared/kube/cluster-auth.ts. A kubeconfig
// stored in Secret Manager reaches the function as DRIFTLESS_KUBECONFIG_YAML through
// `gcloud functions deploy --set-secrets` (no client library needed); GKE tokens come from the
// function's service account via google-auth-library (which caches and refreshes them).
import { GoogleAuth } from "google-auth-library";
import { loadClusterAccess, type TokenSource } from "../../shared/kube/cluster-auth.ts";
import type { GcpFunctionConfig } from "./config.ts";

const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

function gkeTokenSource(): TokenSource {
  const auth = new GoogleAuth({ scopes: [CLOUD_PLATFORM_SCOPE] });
  return async () => {
    const token = await auth.getAccessToken();
    if (!token) throw new Error("no access token from the function's service account");
    return token;
  };
}

export function gcpClusterAccess(cfg: GcpFunctionConfig): ReturnType<typeof loadClusterAccess> {
  return loadClusterAccess({
    kubeconfigYaml: cfg.DRIFTLESS_KUBECONFIG_YAML,
    gke: cfg.DRIFTLESS_GKE_ENDPOINT
      ? {
          endpoint: cfg.DRIFTLESS_GKE_ENDPOINT,
          ...(cfg.DRIFTLESS_GKE_CA_DATA ? { caData: cfg.DRIFTLESS_GKE_CA_DATA } : {}),
        }
      : undefined,
    kubeconfigPath: cfg.KUBECONFIG,
    tokens: { gke: gkeTokenSource },
  });
}
