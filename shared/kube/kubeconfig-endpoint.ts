import type http from "node:http";
import type https from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import {
  type ClusterEndpoint,
  keepAliveAgent,
  type PoolTls,
  type PrepareOptions,
  tlsOptions,
} from "./http.ts";
import { proxyFromEnvironment } from "./proxy.ts";

/**
 * A ClusterEndpoint over a client-node KubeConfig: every auth method client-node has (tokens, token
 * files, client certificates, exec plugins, OIDC, impersonation, basic auth) is applied per request by
 * the KubeConfig itself; connections are pooled — one keep-alive agent per endpoint, built from the first
 * request's TLS material (client-node builds an agent without keep-alive, so each call paid a handshake).
 * A cluster behind `proxy-url` uses client-node's proxy agent; else HTTPS_PROXY / NO_PROXY apply.
 */
export function endpointFromKubeConfig(kc: KubeConfig): ClusterEndpoint {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error("no Kubernetes cluster configured in the kubeconfig");
  let agent: http.Agent | undefined;
  let tls: PoolTls | undefined;
  let auth = kc;
  const envProxy = cluster.proxyUrl ? undefined : proxyFromEnvironment(cluster.server);
  return {
    server: cluster.server,
    async prepare({ refresh }: PrepareOptions = {}) {
      // client-node caches exec-plugin and token-file credentials in the KubeConfig's authenticators:
      // a copy has empty caches, so the next request runs the plugin or reads the file again.
      if (refresh) auth = freshCopy(kc);
      const opts: https.RequestOptions & { headers: Record<string, string> } = { headers: {} };
      await auth.applyToHTTPSOptions(opts);
      const headers = { ...opts.headers };
      if (typeof opts.auth === "string" && !headers.Authorization)
        headers.Authorization = `Basic ${Buffer.from(opts.auth, "utf8").toString("base64")}`;
      tls ??= tlsOptions(opts);
      agent ??= cluster.proxyUrl ? (opts.agent as http.Agent) : keepAliveAgent(cluster.server, tls, envProxy);
      return envProxy ? { headers, agent, tls } : { headers, agent };
    },
  };
}

/** Through the instance's own class: a value import of client-node here would put it in every bundle. */
function freshCopy(kc: KubeConfig): KubeConfig {
  const copy = new (kc.constructor as new () => KubeConfig)();
  copy.loadFromOptions({
    clusters: kc.clusters,
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.getCurrentContext(),
  });
  return copy;
}
