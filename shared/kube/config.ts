import { KubeConfig } from "@kubernetes/client-node";

/**
 * Loads cluster access: a whole kubeconfig given as text (a function reads it from its platform's
 * secret store), else a kubeconfig file, else the default chain (in-cluster ServiceAccount, ~/.kube/config).
 */
export function loadKubeConfig(
  opts: { path?: string | undefined; yaml?: string | undefined } = {},
): KubeConfig {
  const kc = new KubeConfig();
  if (opts.yaml) kc.loadFromString(opts.yaml);
  else if (opts.path) kc.loadFromFile(opts.path);
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster())
    throw new Error("no Kubernetes cluster configured: set KUBECONFIG or run in a cluster");
  return kc;
}
