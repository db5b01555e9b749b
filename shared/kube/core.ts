import {
  CoreV1Api,
  createConfiguration,
  type KubeConfig,
  type RequestContext,
  type SecurityAuthentication,
  ServerConfiguration,
  setHeaderMiddleware,
} from "@kubernetes/client-node";
import type { Kube } from "./client.ts";

const apis = new WeakMap<KubeConfig, CoreV1Api>();

/**
 * client-node's generated core/v1 API for the cluster a Kube talks to, for the CLI, the export agent and
 * tests (ServiceAccount tokens, ConfigMaps, namespaces…). The reconcile path does not use it: Kube's own
 * calls stay free of the generated client (see http.ts). Needs a Kube built from a KubeConfig.
 */
export function coreApi(kube: Kube | KubeConfig): CoreV1Api {
  const config = "http" in kube ? kube.config : kube;
  if (!config)
    throw new Error("this Kube was built from a cluster endpoint, not a kubeconfig: no core/v1 client");
  let api = apis.get(config);
  if (!api) {
    api = new CoreV1Api(pooledApiConfiguration(config));
    apis.set(config, api);
  }
  return api;
}

/**
 * What `config.makeApiClient` builds, with one change: client-node 2.0 makes a new undici Agent for
 * every request (KubeConfig.applySecurityAuthentication), so each API call paid a new TLS handshake
 * (bench: 3–5× the time and CPU of a GET). Auth still runs per request (tokens re-read, exec plugins
 * refreshed); every request goes through the first request's Agent — one keep-alive pool per KubeConfig.
 */
function pooledApiConfiguration(config: KubeConfig) {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error("no Kubernetes cluster configured in the kubeconfig");
  let dispatcher: ReturnType<RequestContext["getDispatcher"]>;
  const auth: SecurityAuthentication = {
    getName: () => "kubeconfig, one connection pool",
    async applySecurityAuthentication(context: RequestContext) {
      await config.applySecurityAuthentication(context);
      dispatcher ??= context.getDispatcher();
      if (dispatcher) context.setDispatcher(dispatcher);
    },
  };
  return createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: auth },
    middleware: [setHeaderMiddleware("User-Agent", "driftless (kubernetes-client-javascript)")],
  });
}
