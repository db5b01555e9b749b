// Which hosts a ProviderConfig's endpoint overrides may send credentials to. A ProviderConfig author
// chooses the endpoints, the platform chooses the credentials (its Secrets, its ambient identity): an
// override must never turn into a way to hand those credentials to a host the author controls.
//
// Hosts are compared after parsing (WHATWG URL: lowercased, IP literals normalised), and the SDKs get the
// normalised URL we checked, never the raw text, so a parser difference cannot smuggle in another host.
import { isLinkLocalOrMetadata, isLoopbackHost } from "../api/addresses.ts";
import { CredentialsError } from "../api/external.ts";

export type Cloud = "aws" | "gcp" | "azure";

/**
 * Hosts each cloud's own APIs answer on (`*.` = any subdomain). Only these ever get an ambient identity
 * (Lambda role, workload identity, managed identity). AWS has none: `endpoint.url` replaces the endpoint
 * of every AWS service at once, so it is an emulator or a proxy, never one of AWS's own hosts (and
 * `*.amazonaws.com` includes hosts anyone can own: load balancers, API Gateway, EC2 public names).
 */
export const CLOUD_API_HOSTS: Readonly<Record<Cloud, readonly string[]>> = {
  aws: [],
  gcp: ["googleapis.com", "*.googleapis.com"],
  azure: [
    // Microsoft Entra ID authorities (public, US Government, China).
    "login.microsoftonline.com",
    "login.microsoftonline.us",
    "login.chinacloudapi.cn",
    "login.partner.microsoftonline.cn",
    // Resource Manager.
    "management.azure.com",
    "management.usgovcloudapi.net",
    "management.chinacloudapi.cn",
    // Blob service endpoints of storage accounts.
    "*.blob.core.windows.net",
    "*.blob.core.usgovcloudapi.net",
    "*.blob.core.chinacloudapi.cn",
    "*.blob.storage.azure.net",
  ],
};

/** In a platform list: 127.0.0.0/8, ::1 and localhost (local emulators, the project's local stack). */
export const LOOPBACK = "loopback";
/** The platform's extra hosts when it configures none: loopback only, for local emulators. */
export const DEFAULT_EXTRA_HOSTS: readonly string[] = [LOOPBACK];
/** Environment variables (comma-separated host patterns) a platform sets to change the extra hosts. */
export const ENDPOINT_HOSTS_ENV: Readonly<Record<Cloud, string>> = {
  aws: "DRIFTLESS_AWS_ENDPOINT_HOSTS",
  gcp: "DRIFTLESS_GCP_ENDPOINT_HOSTS",
  azure: "DRIFTLESS_AZURE_ENDPOINT_HOSTS",
};

/**
 * Hosts besides the cloud's own that endpoint overrides may name, per cloud: exact hosts, `*.suffix`,
 * or `loopback`. They may receive a ProviderConfig's Secret credentials (AWS: signed requests; Azure:
 * the client secret and tokens; GCP sends none to a host that is not Google's), never an ambient identity.
 */
export type EndpointPolicy = Readonly<Record<Cloud, readonly string[]>>;

/** Reads the policy from the environment: unset → DEFAULT_EXTRA_HOSTS; empty or `none` → no extra host. */
export function endpointPolicyFromEnv(env: Record<string, string | undefined>): EndpointPolicy {
  const read = (cloud: Cloud) => {
    const v = env[ENDPOINT_HOSTS_ENV[cloud]];
    if (v === undefined) return DEFAULT_EXTRA_HOSTS;
    const hosts = v
      .split(",")
      .map((h) => h.trim().toLowerCase().replace(/\.$/, ""))
      .filter((h) => h && h !== "none");
    for (const h of hosts)
      if (!/^(\*\.)?[a-z0-9.:[\]-]+$/.test(h))
        throw new Error(`${ENDPOINT_HOSTS_ENV[cloud]}: "${h}" is not a host, *.domain or loopback`);
    return hosts;
  };
  return { aws: read("aws"), gcp: read("gcp"), azure: read("azure") };
}

/** A policy that allows only the clouds' own hosts. */
export const NO_EXTRA_HOSTS: EndpointPolicy = { aws: [], gcp: [], azure: [] };

let parsed: { from: Array<string | undefined>; policy: EndpointPolicy } | undefined;
const POLICY_ENV = Object.values(ENDPOINT_HOSTS_ENV);

/** The policy in force: this process's environment, parsed again only when its three settings change. */
export function endpointPolicy(): EndpointPolicy {
  // Compared setting by setting (every client configuration asks: no string built per call).
  const from = POLICY_ENV.map((name) => process.env[name]);
  if (!parsed || from.some((v, i) => v !== parsed?.from[i]))
    parsed = { from, policy: endpointPolicyFromEnv(process.env) };
  return parsed.policy;
}

/** Whose host an endpoint names: the cloud's own, one the platform listed, or this machine (an emulator). */
export type EndpointTrust = "cloud" | "listed" | "loopback";

export interface CheckedEndpoint {
  /** What the SDK gets: scheme (if given), host, port and path; no userinfo, query or fragment. */
  url: string;
  /** The parsed, lowercased host without a trailing dot. */
  host: string;
  /** The port, when given (or implied by an explicit scheme). */
  port: string | undefined;
  /** Whether the text named a scheme (`host:port` endpoints need not). */
  scheme: "http" | "https" | undefined;
  trust: EndpointTrust;
}

const matches = (host: string, pattern: string) =>
  pattern.startsWith("*.")
    ? host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1
    : host === pattern;

/** Trust of a parsed host under a policy, or undefined when no rule allows it. */
export function trustOf(cloud: Cloud, host: string, policy: EndpointPolicy = endpointPolicy()) {
  if (CLOUD_API_HOSTS[cloud].some((p) => matches(host, p))) return "cloud" as const;
  const extra = policy[cloud];
  if (isLoopbackHost(host)) return extra.includes(LOOPBACK) ? ("loopback" as const) : undefined;
  return extra.some((p) => p !== LOOPBACK && matches(host, p)) ? ("listed" as const) : undefined;
}

/**
 * Checks one endpoint override of a ProviderConfig. `field` names it in errors (the spec path). Errors
 * name the host (the spec is not secret) and where the platform's list is configured.
 */
export function checkEndpoint(
  cloud: Cloud,
  field: string,
  raw: string,
  opts: { hostPort?: boolean; policy?: EndpointPolicy } = {},
): CheckedEndpoint {
  // A pure function of its inputs: an endpoint accepted under this policy is accepted again, unparsed
  // (every SDK client configuration checks its ProviderConfig's endpoint). Refusals are not remembered.
  const policy = opts.policy ?? endpointPolicy();
  const key = `${cloud}\0${field}\0${opts.hostPort ? 1 : 0}\0${raw}`;
  const seen = accepted.get(key);
  if (seen?.policy === policy) return seen.checked;
  const checked = checkEndpointUnder(cloud, field, raw, opts.hostPort ?? false, policy);
  if (accepted.size >= MAX_ACCEPTED) accepted.clear();
  accepted.set(key, { policy, checked: Object.freeze(checked) });
  return checked;
}

const accepted = new Map<string, { policy: EndpointPolicy; checked: CheckedEndpoint }>();
const MAX_ACCEPTED = 256;

function checkEndpointUnder(
  cloud: Cloud,
  field: string,
  raw: string,
  hostPort: boolean,
  policy: EndpointPolicy,
): CheckedEndpoint {
  const refuse = (why: string) => new CredentialsError(`${field}: ${why}`);
  // Characters parsers disagree on (\ is / to WHATWG URL, text to others), or that only hide a host.
  const unclear = (c: string) => c === "\\" || c.charCodeAt(0) <= 0x20 || c.charCodeAt(0) === 0x7f;
  if ([...raw].some(unclear) || /\s/.test(raw))
    throw refuse("the endpoint holds a backslash, space or control character");
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw);
  if (!hasScheme && !hostPort) throw refuse("the endpoint must be an https:// URL");
  let url: URL;
  try {
    url = new URL(hasScheme ? raw : `http://${raw}`);
  } catch {
    throw refuse("the endpoint is not a valid URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw refuse("the endpoint must be an http(s) URL");
  if (url.username || url.password || raw.includes("@"))
    throw refuse("the endpoint must not hold a user name or password (user@host)");
  if (raw.includes("?") || raw.includes("#"))
    throw refuse("the endpoint must not hold a query (?) or fragment (#)");
  if (!hasScheme && url.pathname !== "/") throw refuse("the endpoint must be host:port, without a path");
  const host = url.hostname.replace(/\.$/, "");
  // Not even a platform's list makes these an endpoint: instance metadata hands out the platform's identity.
  if (isLinkLocalOrMetadata(host))
    throw refuse(`host ${host} is a link-local or metadata address, never an endpoint`);
  const trust = trustOf(cloud, host, policy);
  if (!trust)
    throw refuse(
      `host ${host} is not one of ${cloud.toUpperCase()}'s own API hosts nor allowed by the platform (${ENDPOINT_HOSTS_ENV[cloud]}): driftless sends credentials there, so the platform must list it`,
    );
  const scheme = hasScheme ? (url.protocol === "https:" ? "https" : "http") : undefined;
  if (scheme === "http" && trust === "cloud") throw refuse(`host ${host} must be reached over https`);
  const impliedPort = scheme === "https" ? "443" : scheme === "http" || /:80$/.test(raw) ? "80" : undefined;
  const port = url.port || impliedPort;
  const path = url.pathname.replace(/\/+$/, "");
  const hostText = `${url.hostname.replace(/\.$/, "")}${url.port ? `:${url.port}` : ""}`;
  return {
    url: scheme ? `${scheme}://${hostText}${path}` : hostText,
    host,
    port,
    scheme,
    trust,
  };
}

/** An ambient identity (no key in a Secret) goes only to the cloud's own hosts. */
export function refuseAmbientOffCloud(cloud: Cloud, field: string, endpoint: CheckedEndpoint): void {
  if (endpoint.trust !== "cloud")
    throw new CredentialsError(
      `${field}: credentials.source InjectedIdentity sends the platform's own identity, which goes only to ${cloud.toUpperCase()}'s own API hosts, not to ${endpoint.host}; use credentials.source Secret for an emulator or a listed endpoint`,
    );
}
