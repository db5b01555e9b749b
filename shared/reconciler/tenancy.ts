// Multi-tenancy of the namespaced (Crossplane v2) shape. A team that may create objects in its namespace
// must not be able to make driftless act with anyone else's cloud identity:
//  - a namespaced ProviderConfig may not use InjectedIdentity (the functions' own role, workload or
//    managed identity) unless the platform allows it for that namespace;
//  - its endpoint overrides may not reach link-local or cloud-metadata addresses, whatever name they use
//    (names are resolved): otherwise a request the SDK signs, or a token it fetches, would go to the
//    instance metadata service and its answer come back in a condition message. This is on top of the
//    platform's endpoint host list that every ProviderConfig obeys (shared/providers/endpoints.ts);
//  - a ClusterProviderConfig is usable only from the namespaces its spec.allowedNamespaces names (all when
//    unset: the platform's choice, made on the object the platform owns).
// References, connection Secrets and Secret references of namespaced objects never leave their namespace
// (withOwnNamespace in shared/api/managed.ts).

import { promises as dns } from "node:dns";
import { BlockList, isIP } from "node:net";
import { CredentialsError } from "../api/external.ts";
import { globMatcher } from "../api/glob.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import { namedError } from "../named-error.ts";

export interface TenancyOptions {
  /** Namespaces (names or globs) whose namespaced ProviderConfigs may use InjectedIdentity. Default none. */
  ambientIdentityNamespaces?: readonly string[];
  /** Resolves a host name to its addresses (tests); default the system resolver. */
  lookup?: (host: string) => Promise<string[]>;
}

/** A ProviderConfig a namespace may not use, or may not use this way: the message says which rule. */
export class TenancyError extends namedError("TenancyError", CredentialsError) {}

// Link-local (169.254/16 holds the AWS, GCP and Azure instance metadata services and the ECS task
// endpoint), Alibaba's metadata address, Azure's WireServer, AWS's IPv6 metadata address, "this network".
const FORBIDDEN = new BlockList();
FORBIDDEN.addSubnet("169.254.0.0", 16, "ipv4");
FORBIDDEN.addAddress("100.100.100.200", "ipv4");
FORBIDDEN.addAddress("168.63.129.16", "ipv4");
FORBIDDEN.addSubnet("0.0.0.0", 8, "ipv4");
FORBIDDEN.addSubnet("fe80::", 10, "ipv6");
FORBIDDEN.addAddress("fd00:ec2::254", "ipv6");
FORBIDDEN.addAddress("::", "ipv6");

const METADATA_HOSTS = new Set(["metadata", "metadata.google.internal", "metadata.goog", "instance-data"]);

/** Why an address may not be a tenant's endpoint, or undefined when it may. */
export function forbiddenAddress(address: string): string | undefined {
  let a = address.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (mapped) a = mapped[1] as string;
  const family = isIP(a) === 6 ? "ipv6" : "ipv4";
  if (FORBIDDEN.check(a, family)) return "a link-local or cloud-metadata address";
  return undefined;
}

/** The host of an endpoint value: a URL, or host:port as the Pub/Sub emulator setting is written. */
export function hostOf(value: string): string | undefined {
  try {
    const url = new URL(value.includes("://") ? value : `http://${value}`);
    return url.hostname.replace(/^\[(.*)\]$/, "$1") || undefined;
  } catch {
    return undefined;
  }
}

/** Every string under spec.endpoint: the overrides of each cloud's ProviderConfig. */
function endpointValues(spec: unknown, path = "spec", out: Array<{ path: string; value: string }> = []) {
  if (!spec || typeof spec !== "object") return out;
  for (const [k, v] of Object.entries(spec as Record<string, unknown>)) {
    const p = `${path}.${k}`;
    if (typeof v === "string" && p.startsWith("spec.endpoint")) out.push({ path: p, value: v });
    else if (v && typeof v === "object") endpointValues(v, p, out);
  }
  return out;
}

const systemLookup = async (host: string): Promise<string[]> =>
  (await dns.lookup(host, { all: true, verbatim: true })).map((r) => r.address);

/**
 * Refuses a namespaced ProviderConfig that would borrow the platform's identity or reach a metadata
 * service. Host names are resolved: a name that points at a forbidden address is refused like the address.
 */
export async function checkNamespacedProviderConfig(pc: ProviderConfig, opts: TenancyOptions): Promise<void> {
  const namespace = pc.metadata.namespace ?? "";
  const what = `ProviderConfig ${namespace}/${pc.metadata.name}`;
  const spec = (pc.spec ?? {}) as { credentials?: { source?: string } };
  if (spec.credentials?.source === "InjectedIdentity") {
    const allowed = (opts.ambientIdentityNamespaces ?? []).some((g) => globMatcher(g)(namespace));
    if (!allowed)
      throw new TenancyError(
        `${what} uses InjectedIdentity, the functions' own cloud identity: a namespaced ProviderConfig may not, unless the platform allows it for namespace "${namespace}" (DRIFTLESS_AMBIENT_IDENTITY_NAMESPACES); use credentials.source Secret, or a ClusterProviderConfig the platform provides`,
      );
  }
  const lookup = opts.lookup ?? systemLookup;
  for (const { path, value } of endpointValues(pc.spec)) {
    const host = hostOf(value);
    if (!host) throw new TenancyError(`${what}: ${path} is not a URL or host:port`);
    const refuse = (why: string) =>
      new TenancyError(
        `${what}: ${path} points at ${why} (${host}); a namespaced ProviderConfig's endpoints may not reach the platform's own network`,
      );
    if (METADATA_HOSTS.has(host.toLowerCase().replace(/\.$/, ""))) throw refuse("a cloud-metadata host name");
    const addresses = isIP(host) ? [host] : await lookup(host).catch(() => []);
    if (addresses.length === 0) throw new TenancyError(`${what}: ${path} host ${host} does not resolve`);
    for (const a of addresses) {
      const why = forbiddenAddress(a);
      if (why) throw refuse(why);
    }
  }
}

/** Refuses the use of a ClusterProviderConfig from a namespace its spec.allowedNamespaces leaves out. */
export function checkClusterProviderConfigUse(pc: ProviderConfig, namespace: string): void {
  const allowed = (pc.spec as { allowedNamespaces?: string[] } | undefined)?.allowedNamespaces;
  if (!allowed || allowed.some((g) => globMatcher(g)(namespace))) return;
  throw new TenancyError(
    `ClusterProviderConfig "${pc.metadata.name}" may not be used from namespace "${namespace}" (spec.allowedNamespaces: ${allowed.join(", ")})`,
  );
}

/**
 * A namespaced ProviderConfig with each Secret key selector in its spec (an object with a name and a key;
 * the namespaced schema gives them no namespace) completed with the ProviderConfig's own namespace.
 */
export function withProviderConfigNamespace<P extends ProviderConfig>(pc: P): P {
  const namespace = pc.metadata.namespace;
  if (!namespace) return pc;
  const spec = structuredClone(pc.spec) as Record<string, unknown>;
  const walk = (o: unknown) => {
    if (!o || typeof o !== "object") return;
    const r = o as Record<string, unknown>;
    if (typeof r.name === "string" && typeof r.key === "string") r.namespace = namespace;
    for (const v of Object.values(r)) walk(v);
  };
  walk(spec);
  return { ...pc, spec };
}
