// Address rules every host a tenant (a ProviderConfig author, an app team's kubeconfig) may name is held
// to: never a link-local address (the clouds' instance metadata services and ECS/EKS credential agents
// live there) nor a metadata host name, and plain http only to this machine (local development).
// Checked on the host as WHATWG URL parsed it (IPv4 normalised: 0xa9fea9fe → 169.254.169.254).
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";

/** Host names of metadata services (GCP, AWS), whatever address DNS gives them. */
const METADATA_NAMES = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
]);

const BLOCKED = new BlockList();
BLOCKED.addSubnet("169.254.0.0", 16, "ipv4"); // link-local: AWS, GCP, Azure metadata; ECS/EKS agents
BLOCKED.addSubnet("0.0.0.0", 8, "ipv4"); // "this host" on many stacks
BLOCKED.addAddress("100.100.100.200", "ipv4"); // Alibaba Cloud metadata
BLOCKED.addSubnet("fe80::", 10, "ipv6"); // link-local
BLOCKED.addAddress("::", "ipv6");
BLOCKED.addAddress("fd00:ec2::254", "ipv6"); // AWS metadata (IPv6)
BLOCKED.addAddress("fd00:ec2::23", "ipv6"); // AWS EKS Pod Identity agent (IPv6)

/** 127.0.0.0/8 (as WHATWG URL normalises it: 127.1, 0x7f.1 → 127.0.0.1), [::1], localhost. */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Whether a parsed host (URL.hostname, IPv6 in brackets) is link-local, unspecified or a metadata service. */
export function isLinkLocalOrMetadata(hostname: string): boolean {
  const host = hostname
    .toLowerCase()
    .replace(/\.$/, "")
    .replace(/^\[|\]$/g, "");
  if (METADATA_NAMES.has(host)) return true;
  const family = isIP(host);
  if (family === 4) return BLOCKED.check(host, "ipv4");
  if (family !== 6) return false;
  // IPv4-mapped (::ffff:a9fe:a9fe, as WHATWG URL writes ::ffff:169.254.169.254): the IPv4 address decides.
  const dotted = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(host);
  if (dotted?.[1]) return BLOCKED.check(dotted[1], "ipv4");
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (mapped?.[1] && mapped[2]) {
    const hi = Number.parseInt(mapped[1], 16);
    const lo = Number.parseInt(mapped[2], 16);
    return BLOCKED.check(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, "ipv4");
  }
  return BLOCKED.check(host, "ipv6");
}

/**
 * Why a URL a tenant gave cannot be connected to, or undefined: `what` names the field in the message.
 * http(s) only; no link-local or metadata host; plain http only to loopback.
 */
export function tenantAddressProblem(raw: string, what: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${what} is not a URL`;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return `${what} must be an http(s) URL`;
  const host = url.hostname.replace(/\.$/, "");
  if (isLinkLocalOrMetadata(host))
    return `${what} names ${host}, a link-local or metadata address: the control plane never connects there`;
  if (url.protocol === "http:" && !isLoopbackHost(host))
    return `${what} http://${url.host} is plain http to a host that is not loopback: use https (plain http is for local development on 127.0.0.1 / localhost only)`;
  return undefined;
}

/** The error a connection gets when the name it was given resolves to a refused address. */
export class RefusedAddressError extends Error {
  readonly code = "EDRIFTLESS_REFUSED_ADDRESS";
  constructor(hostname: string, address: string) {
    super(
      `${hostname} resolves to ${address}, a link-local or metadata address: the control plane never connects there`,
    );
    this.name = "RefusedAddressError";
  }
}

/**
 * The DNS lookup for connections to hosts a tenant named (`lookup` of an http(s) Agent or net.connect).
 * The checks above see the URL's host; a *name* can still resolve to a link-local address (a record the
 * tenant controls, or DNS rebinding between check and connect). This refuses such an answer at connect
 * time, on the address the socket would use, so no request (and no credential) is sent.
 */
export function guardedLookup(base: LookupFunction = dnsLookup as LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const all: LookupAddress[] = Array.isArray(address) ? address : [{ address, family: family ?? 0 }];
      const refused = all.find((a) => isLinkLocalOrMetadata(a.address));
      if (refused) return callback(new RefusedAddressError(hostname, refused.address), address, family);
      callback(null, address, family);
    });
  };
}
