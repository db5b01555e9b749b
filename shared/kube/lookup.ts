// Where cluster access is looked for, and what is said when none is found: shared by the functions'
// loader (kubeconfig.ts) and the CLI's (config.ts), and small, so the CLI's does not pull in the other.
import { namedError } from "../named-error.ts";

/** Where the kubelet mounts a Pod's ServiceAccount token and the cluster CA. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

export type Env = Record<string, string | undefined>;

/** Cluster access cannot be set up from the configuration given; the message says what to change. */
export class KubeconfigError extends namedError("KubeconfigError", Error) {}

/** Nothing in the default chain: says where it looked and what else to set (the CLI and functions differ). */
export function noClusterError(looked: readonly string[], advice: string): KubeconfigError {
  return new KubeconfigError(
    `no Kubernetes cluster configured: set KUBECONFIG or run in a cluster. Looked at: ${looked.join("; ")}. ${advice}`,
  );
}
