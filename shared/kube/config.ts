import { existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { type Env, KubeconfigError, noClusterError, SERVICE_ACCOUNT_DIR } from "./lookup.ts";

export interface LoadKubeConfigOptions {
  /** A kubeconfig file, or a KUBECONFIG-style list (`a:b`); default $KUBECONFIG. */
  path?: string | undefined;
  /** A whole kubeconfig as text; wins over everything else. */
  yaml?: string | undefined;
  /** The environment, home and ServiceAccount directory to look in (tests); default this process's. */
  env?: Env;
  homeDir?: string;
  serviceAccountDir?: string;
}

/** What the CLI can be given instead, for the error when nothing was found. */
const CLI_ADVICE =
  "Point driftless at a cluster with --kubeconfig FILE, KUBECONFIG=FILE or DRIFTLESS_KUBECONFIG_YAML, or run it in a Pod with a ServiceAccount.";

/**
 * Loads cluster access for the CLI and `driftless run` with client-node (exec plugins, OIDC: see
 * docs/adr/0001-kubernetes-access.md): a whole kubeconfig given as text, else a kubeconfig file or
 * KUBECONFIG list (missing files skipped, first-wins by name, as kubectl does), else ~/.kube/config, else
 * the in-cluster ServiceAccount — else an error that says where it looked. (client-node's own
 * loadFromDefault falls back to http://localhost:8080, which surfaces later as a TLS complaint.)
 */
export function loadKubeConfig(opts: LoadKubeConfigOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  const env = opts.env ?? process.env;
  const listed = opts.path ?? env.KUBECONFIG;
  if (opts.yaml) kc.loadFromString(opts.yaml);
  else if (listed) loadFiles(kc, listed);
  else {
    const home = opts.homeDir ?? env.HOME ?? homedir();
    const file = path.join(home, ".kube", "config");
    const saDir = opts.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
    if (isFile(file)) kc.loadFromFile(file);
    else if (existsSync(path.join(saDir, "token")) && env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster();
    else
      throw noClusterError(
        [
          "KUBECONFIG (not set)",
          `${file} (${describeMissing(file)})`,
          `the in-cluster ServiceAccount (${inClusterMissing(env, saDir)})`,
        ],
        CLI_ADVICE,
      );
  }
  if (!kc.getCurrentCluster())
    throw new KubeconfigError(
      "the kubeconfig names no cluster for its current context: set one (kubectl config use-context NAME)",
    );
  return kc;
}

/** A KUBECONFIG-style list the way kubectl reads it: missing files skipped, first entry by name wins. */
function loadFiles(kc: KubeConfig, list: string): void {
  const files = list.split(path.delimiter).filter(Boolean);
  const present = files.filter(isFile);
  if (present.length === 0)
    throw new KubeconfigError(
      `no kubeconfig found: ${files.map((f) => `${f} ${describeMissing(f)}`).join(", ")} (named by --kubeconfig or KUBECONFIG). ${CLI_ADVICE}`,
    );
  const configs = present.map((f) => {
    const one = new KubeConfig();
    one.loadFromFile(f);
    return one;
  });
  const firstByName = <T extends { name: string }>(lists: T[][]) => {
    const seen = new Map<string, T>();
    for (const item of lists.flat()) if (!seen.has(item.name)) seen.set(item.name, item);
    return [...seen.values()];
  };
  kc.loadFromOptions({
    clusters: firstByName(configs.map((c) => c.clusters)),
    users: firstByName(configs.map((c) => c.users)),
    contexts: firstByName(configs.map((c) => c.contexts)),
    currentContext: configs.map((c) => c.getCurrentContext()).find(Boolean) ?? "",
  });
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

const describeMissing = (file: string) => (existsSync(file) ? "is not a file" : "does not exist");

function inClusterMissing(env: Env, saDir: string): string {
  const token = path.join(saDir, "token");
  const reasons = [
    ...(env.KUBERNETES_SERVICE_HOST ? [] : ["KUBERNETES_SERVICE_HOST is not set"]),
    ...(existsSync(token) ? [] : [`${token} does not exist`]),
  ];
  return reasons.join(", ");
}
