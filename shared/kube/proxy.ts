// Which proxy a request to the API server goes through: the kubeconfig's `proxy-url` for its cluster,
// else HTTPS_PROXY / HTTP_PROXY unless NO_PROXY exempts the host — Go's httpproxy rules, which kubectl
// and client-go follow (loopback and `localhost` are never proxied by the environment).
import { BlockList, isIP } from "node:net";
import type { Env } from "./lookup.ts";

/** The proxy for `server` per the environment, or undefined for a direct connection. */
export function proxyFromEnvironment(server: string, env: Env = process.env): string | undefined {
  const url = new URL(server);
  const https = url.protocol === "https:";
  const proxy = https ? (env.HTTPS_PROXY ?? env.https_proxy) : (env.HTTP_PROXY ?? env.http_proxy);
  if (!proxy) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const port = url.port || (https ? "443" : "80");
  if (host === "localhost" || isLoopback(host)) return undefined;
  if (noProxyMatches(host, port, env.NO_PROXY ?? env.no_proxy ?? "")) return undefined;
  // Go accepts a bare host:port and means http.
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(proxy) ? proxy : `http://${proxy}`;
}

function isLoopback(host: string): boolean {
  const family = isIP(host);
  if (family === 4) return host.startsWith("127.");
  if (family === 6) return host === "::1";
  return false;
}

/** NO_PROXY: `*`, IPs, CIDRs, `name` (and its subdomains), `.name` (subdomains only), each with an optional port. */
function noProxyMatches(host: string, port: string, noProxy: string): boolean {
  for (const raw of noProxy.split(",")) {
    let entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry === "*") return true;
    if (entry.includes("/")) {
      if (cidrContains(entry, host)) return true;
      continue;
    }
    let entryPort: string | undefined;
    const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(entry);
    if (m?.[1] && m[2]) {
      entry = m[1];
      entryPort = m[2];
    }
    entry = entry.replace(/^\[|\]$/g, "");
    if (entryPort && entryPort !== port) continue;
    if (isIP(entry)) {
      if (entry === host) return true;
      continue;
    }
    if (entry.startsWith("*.")) entry = entry.slice(1);
    if (entry.startsWith(".")) {
      if (host.endsWith(entry)) return true;
    } else if (host === entry || host.endsWith(`.${entry}`)) return true;
  }
  return false;
}

function cidrContains(cidr: string, host: string): boolean {
  const family = isIP(host);
  const [net, bits] = cidr.split("/");
  if (!family || !net || !bits || isIP(net) !== family) return false;
  const list = new BlockList();
  list.addSubnet(net, Number(bits), family === 4 ? "ipv4" : "ipv6");
  return list.check(host, family === 4 ? "ipv4" : "ipv6");
}
