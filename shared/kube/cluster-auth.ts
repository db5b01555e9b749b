// Reaching the cluster from a function: no kubectl, no `aws` CLI, no gcloud — only what a Lambda or a Cloud
// Function has (its role's credentials and its environment).
//
// Where the cluster access comes from, first match wins:
// 1. a whole kubeconfig as text (`DRIFTLESS_KUBECONFIG_YAML`, or read once per cold start from a secret
//    store by the platform adapter);
// 2. EKS: endpoint + CA + cluster name; the bearer token is built the way aws-iam-authenticator builds
//    it (a presigned STS GetCallerIdentity URL), from the function role's own credentials;
// 3. GKE: endpoint + CA; the bearer token is the function's OAuth2 access token (cloud-platform scope;
//    google-auth-library caches and refreshes it);
// 4. a kubeconfig file, else the default chain (KUBECONFIG, ~/.kube/config, in-cluster ServiceAccount).
//
// A kubeconfig whose user runs an exec plugin that cannot exist in a function (`aws eks get-token`,
// `aws-iam-authenticator token`, `gke-gcloud-auth-plugin`) gets the equivalent built-in token instead.
// Tokens are cached and refreshed before they expire, one refresh at a time.
//
// This file imports no cloud SDK and not @kubernetes/client-node (kubeconfigs are read by ./kubeconfig.ts):
// credentials, access tokens and secret reads are passed in by the platform adapter, so an AWS bundle
// never carries Google's auth library and the other way round.
import { createHash, createHmac, type Hash, type Hmac } from "node:crypto";
import { SignatureV4 } from "@smithy/signature-v4";
import type { AwsCredentialIdentity, HttpRequest, Provider } from "@smithy/types";
import { type ClusterEndpoint, staticEndpoint } from "./http.ts";
import {
  checkServer,
  type DefaultChainOptions,
  defaultEndpoint,
  type EndpointOptions,
  endpointFromKubeconfig,
  type KubeconfigEndpoint,
  parseKubeconfig,
  readKubeconfigFiles,
  type TokenMakers,
  type TokenSource,
} from "./kubeconfig.ts";

export {
  type ExecReplacement,
  execReplacement,
  replaceExecUsers,
  type TokenMakers,
  type TokenSource,
} from "./kubeconfig.ts";

/** Prefix of an EKS bearer token (aws-iam-authenticator's token format v1). */
export const EKS_TOKEN_PREFIX = "k8s-aws-v1.";
/** The header that binds a presigned GetCallerIdentity URL to one cluster. */
export const EKS_CLUSTER_ID_HEADER = "x-k8s-aws-id";
/** Lifetime of the presigned URL itself (what aws-iam-authenticator and `aws eks get-token` use). */
export const EKS_PRESIGN_EXPIRES_SECONDS = 60;
/** EKS accepts a token for 15 minutes after it was signed; `aws eks get-token` reports 14. */
export const EKS_TOKEN_LIFETIME_MS = 14 * 60_000;
/** Refresh this long before a cached token's expiry (clock skew, request latency). */
export const TOKEN_REFRESH_MARGIN_MS = 60_000;

const STS_API_VERSION = "2011-06-15";

export interface Token {
  token: string;
  /** When the token stops being accepted; the cache refreshes TOKEN_REFRESH_MARGIN_MS earlier. */
  expiresAt: Date;
}

/** Caches a fetched token until shortly before it expires; `refresh` (after a 401) fetches a new one. */
export function cachedTokenSource(
  fetch: () => Promise<Token>,
  opts: { now?: () => number; refreshMarginMs?: number } = {},
): TokenSource {
  const now = opts.now ?? Date.now;
  const margin = opts.refreshMarginMs ?? TOKEN_REFRESH_MARGIN_MS;
  let current: Token | undefined;
  let inFlight: Promise<Token> | undefined;
  return async (ask) => {
    if (ask?.refresh) current = undefined;
    if (current && current.expiresAt.getTime() - margin > now()) return current.token;
    inFlight ??= fetch().finally(() => {
      inFlight = undefined;
    });
    current = await inFlight;
    return current.token;
  };
}

// ---------------------------------------------------------------------------------------------------
// EKS

export interface EksTokenInput {
  clusterName: string;
  region: string;
  credentials: AwsCredentialIdentity | Provider<AwsCredentialIdentity>;
  /** STS host; default the regional endpoint `sts.<region>.amazonaws.com` (`.cn` in China regions). */
  stsHost?: string;
  now?: Date;
}

/**
 * An EKS bearer token, as aws-iam-authenticator makes it: a GetCallerIdentity request presigned for 60 s
 * with the signed header `x-k8s-aws-id: <cluster>`, encoded as `k8s-aws-v1.` + base64url (no padding) of
 * the URL. The API server's authenticator calls STS with it to learn the caller's IAM identity.
 */
export async function eksToken(input: EksTokenInput): Promise<Token> {
  const now = input.now ?? new Date();
  const hostname = input.stsHost ?? stsHostFor(input.region);
  const signer = new SignatureV4({
    service: "sts",
    region: input.region,
    credentials: input.credentials,
    sha256: NodeSha256,
  });
  const request: HttpRequest = {
    method: "GET",
    protocol: "https:",
    hostname,
    path: "/",
    query: { Action: "GetCallerIdentity", Version: STS_API_VERSION },
    headers: { host: hostname, [EKS_CLUSTER_ID_HEADER]: input.clusterName },
  };
  const signed = await signer.presign(request, {
    expiresIn: EKS_PRESIGN_EXPIRES_SECONDS,
    signingDate: now,
  });
  const url = `https://${hostname}/?${queryString(signed.query)}`;
  return {
    token: `${EKS_TOKEN_PREFIX}${Buffer.from(url, "utf8").toString("base64url")}`,
    expiresAt: new Date(now.getTime() + EKS_TOKEN_LIFETIME_MS),
  };
}

export function stsHostFor(region: string): string {
  return region.startsWith("cn-") ? `sts.${region}.amazonaws.com.cn` : `sts.${region}.amazonaws.com`;
}

type SourceData = string | ArrayBuffer | ArrayBufferView;
const toBuffer = (data: SourceData): Buffer =>
  typeof data === "string"
    ? Buffer.from(data, "utf8")
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

/** SHA-256 / HMAC-SHA-256 for the SigV4 signer, from node:crypto (no extra crypto package). */
class NodeSha256 {
  readonly #hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.#hash = secret === undefined ? createHash("sha256") : createHmac("sha256", toBuffer(secret));
  }
  update(data: SourceData): void {
    this.#hash.update(toBuffer(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
}

/** RFC 3986 query encoding (what SigV4 canonicalises), keys sorted. */
function queryString(query: HttpRequest["query"] = {}): string {
  const enc = (s: string) =>
    encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return Object.keys(query)
    .sort()
    .flatMap((k) => {
      const v = query[k];
      const values = Array.isArray(v) ? v : [v];
      return values.filter((x): x is string => typeof x === "string").map((x) => `${enc(k)}=${enc(x)}`);
    })
    .join("&");
}

// ---------------------------------------------------------------------------------------------------
// Token endpoints

/** A cluster whose bearer token comes from `source`, asked before every request (it caches). */
export function tokenEndpoint(input: {
  server: string;
  /** Base64 PEM, as in a kubeconfig's certificate-authority-data. */
  caData?: string;
  source: TokenSource;
  /** Names the cluster in errors. */
  name?: string;
}): ClusterEndpoint {
  const name = input.name ?? "driftless";
  checkServer(input.server, { where: `cluster "${name}"` });
  return staticEndpoint({
    server: input.server,
    ca: input.caData ? Buffer.from(input.caData, "base64") : undefined,
    headers: async ({ refresh }) => {
      try {
        return { Authorization: `Bearer ${await input.source(refresh ? { refresh } : undefined)}` };
      } catch (cause) {
        throw new Error(`cannot get a bearer token for cluster "${name}"`, { cause });
      }
    },
  });
}

// ---------------------------------------------------------------------------------------------------
// Putting it together

export interface ClusterAccessInput {
  /** A whole kubeconfig as text. */
  kubeconfigYaml?: string | undefined;
  /** Where a kubeconfig is stored (Secrets Manager ARN, SSM parameter…): read with `readSecret`. */
  kubeconfigSecret?: string | undefined;
  readSecret?: (id: string) => Promise<string>;
  /** EKS: endpoint + CA + cluster name; the token is made with `tokens.eks`. */
  eks?: { clusterName: string; endpoint: string; caData?: string; region?: string } | undefined;
  /** GKE: endpoint + CA; the token is made with `tokens.gke`. */
  gke?: { endpoint: string; caData?: string } | undefined;
  /** A kubeconfig file (or a KUBECONFIG-style list); without any of the above, the default chain. */
  kubeconfigPath?: string | undefined;
  tokens?: TokenMakers;
  /** The default chain's environment, home and ServiceAccount directory (tests); default this process's. */
  defaults?: Pick<DefaultChainOptions, "env" | "homeDir" | "serviceAccountDir" | "now">;
}

export type ClusterAccessSource = "yaml" | "secret" | "eks" | "gke" | "file" | "default";

export interface ClusterAccess extends KubeconfigEndpoint {
  source: ClusterAccessSource;
}

/** Builds the endpoint a function talks to its cluster with (see the order at the top of this file). */
export async function loadClusterAccess(input: ClusterAccessInput): Promise<ClusterAccess> {
  const opts: EndpointOptions = { tokens: input.tokens ?? {}, now: input.defaults?.now };
  const fromText = (yaml: string, source: ClusterAccessSource): ClusterAccess => {
    const kc = parseKubeconfig(yaml, { source: source === "secret" ? "from the secret" : "given as text" });
    return { ...endpointFromKubeconfig(kc, opts), source };
  };
  if (input.kubeconfigYaml) return fromText(input.kubeconfigYaml, "yaml");
  if (input.kubeconfigSecret) {
    if (!input.readSecret)
      throw new Error("a kubeconfig secret is configured but this platform cannot read it");
    let text: string;
    try {
      text = await input.readSecret(input.kubeconfigSecret);
    } catch (cause) {
      throw new Error("cannot read the kubeconfig secret", { cause });
    }
    return fromText(text, "secret");
  }
  // A managed cluster's endpoint and CA with the platform's token for it.
  const viaToken = (
    cluster: { endpoint: string; caData?: string },
    source: "eks" | "gke",
    tokens: TokenSource,
    name: string,
  ): ClusterAccess => ({
    endpoint: tokenEndpoint({
      server: cluster.endpoint,
      ...(cluster.caData ? { caData: cluster.caData } : {}),
      source: tokens,
      name,
    }),
    source,
    replacedUsers: [],
  });
  if (input.eks) {
    if (!opts.tokens?.eks)
      throw new Error("EKS access is configured but this platform cannot make EKS tokens");
    const { clusterName, region } = input.eks;
    return viaToken(input.eks, "eks", opts.tokens.eks(clusterName, region), clusterName);
  }
  if (input.gke) {
    if (!opts.tokens?.gke)
      throw new Error("GKE access is configured but this platform cannot make GKE tokens");
    return viaToken(input.gke, "gke", opts.tokens.gke(), "gke");
  }
  if (input.kubeconfigPath)
    return { ...endpointFromKubeconfig(readKubeconfigFiles(input.kubeconfigPath), opts), source: "file" };
  return { ...defaultEndpoint({ ...input.defaults, ...opts }), source: "default" };
}
