import type http from "node:http";
import type https from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import { type ClusterEndpoint, keepAliveAgent } from "./http.ts";

/**
 * A ClusterEndpoint over a client-node KubeConfig: every auth method client-node has (tokens, token
 * files, client certificates, exec plugins, OIDC, impersonation, basic auth) is applied per request by
 * the KubeConfig itself; connections are pooled — one keep-alive agent per endpoint, built from the first
 * request's TLS material (client-node builds an agent without keep-alive, so each call paid a handshake).
 * A cluster behind `proxy-url` uses client-node's proxy agent.
 */
export function endpointFromKubeConfig(kc: KubeConfig): ClusterEndpoint {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error("no Kubernetes cluster configured in the kubeconfig");
  let agent: http.Agent | undefined;
  return {
    server: cluster.server,
    async prepare() {
      const opts: https.RequestOptions & { headers: Record<string, string> } = { headers: {} };
      await kc.applyToHTTPSOptions(opts);
      const headers = { ...opts.headers };
      if (typeof opts.auth === "string" && !headers.Authorization)
        headers.Authorization = `Basic ${Buffer.from(opts.auth, "utf8").toString("base64")}`;
      agent ??= cluster.proxyUrl ? (opts.agent as http.Agent) : keepAliveAgent(cluster.server, opts);
      return { headers, agent };
    },
  };
}
