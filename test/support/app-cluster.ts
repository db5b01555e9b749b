// An app cluster for export tests: a KubeConfig the test built itself (a fresh API server's), pinned to
// the name the control plane serves it under — the product only ever reads app clusters from files.
import type { KubeConfig } from "@kubernetes/client-node";
import { AppClusterKubeConfig } from "../../shared/export/app-kubeconfig.ts";

export function pinAppCluster(appCluster: string, kc: KubeConfig): AppClusterKubeConfig {
  const out = new AppClusterKubeConfig(appCluster);
  out.loadFromOptions({
    clusters: kc.clusters,
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return out;
}
