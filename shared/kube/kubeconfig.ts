// A kubeconfig loader for functions, without @kubernetes/client-node (its KubeConfig alone is most of a
// Lambda bundle: see http.ts). It covers what a function can use — tokens, token files, client
// certificates, basic auth, impersonation, in-cluster ServiceAccounts, and the EKS/GKE exec plugins
// replaced by built-in tokens, http(s) proxies — and refuses the rest (other exec plugins, auth
// providers, socks proxies) with an error that says what to configure instead. The CLI keeps client-node's
// KubeConfig for human kubeconfigs (docs/adr/0001-kubernetes-access.md).
//
// Semantics follow kubectl/client-go where client-node differs: relative paths are relative to the
// kubeconfig's directory (tokenFile too), several KUBECONFIG files merge first-wins by name and the
// first current-context counts, a token wins over an exec plugin, in-cluster is always https.

import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { isIPv6 } from "node:net";
import { homedir } from "node:os";
import path from "node:path";
import { parseDocument } from "yaml";
import { z } from "zod";
import { tenantAddressProblem } from "../api/addresses.ts";
import { namedError } from "../named-error.ts";
import { type ClusterEndpoint, staticEndpoint } from "./http.ts";
import { type Env, KubeconfigError, noClusterError, SERVICE_ACCOUNT_DIR } from "./lookup.ts";

export { type Env, KubeconfigError, SERVICE_ACCOUNT_DIR } from "./lookup.ts";

/**
 * The kubeconfig needs what only client-node provides (an exec plugin, an auth provider, a socks proxy):
 * a process that may load client-node (the forwarder) falls back to it on this error, functions cannot.
 */
export class KubeconfigUnsupportedError extends namedError("KubeconfigUnsupportedError", KubeconfigError) {}

/** Token files (projected ServiceAccount tokens rotate) are re-read when the copy in memory is older. */
export const TOKEN_FILE_MAX_AGE_MS = 60_000;
/** What to use instead of a credential plugin a function cannot run. */
const FUNCTION_AUTH_ADVICE =
  "use a token, a client certificate, or the DRIFTLESS_EKS_* / DRIFTLESS_GKE_* settings instead";

// ---------------------------------------------------------------------------------------------------
// The file format (the fields a function can act on; anything else is ignored)

// kubectl writes unset fields as "" or null: both mean absent.
const optionalText = z
  .string()
  .nullish()
  .transform((v) => v || undefined);
const list = <T extends z.ZodType>(item: T) =>
  z
    .array(item)
    .nullish()
    .transform((v): z.output<T>[] => v ?? []);

const ClusterEntry = z
  .object({
    name: z.string().min(1),
    cluster: z.object({
      server: z.string().min(1),
      "certificate-authority": optionalText,
      "certificate-authority-data": optionalText,
      "insecure-skip-tls-verify": z.boolean().nullish(),
      "tls-server-name": optionalText,
      "proxy-url": optionalText,
    }),
  })
  .transform(({ name, cluster: c }) => ({
    name,
    server: c.server.replace(/\/$/, ""),
    certificateAuthority: c["certificate-authority"],
    certificateAuthorityData: c["certificate-authority-data"],
    insecureSkipTlsVerify: c["insecure-skip-tls-verify"] === true,
    tlsServerName: c["tls-server-name"],
    proxyUrl: c["proxy-url"],
  }));
export type Cluster = z.output<typeof ClusterEntry>;

const ExecConfig = z.object({
  command: z.string().min(1),
  args: list(z.string()),
  env: list(z.object({ name: z.string(), value: z.string() })),
  apiVersion: optionalText,
});
export type ExecConfig = z.output<typeof ExecConfig>;

const UserEntry = z
  .object({
    name: z.string().min(1),
    user: z
      .object({
        token: optionalText,
        tokenFile: optionalText,
        // client-node's spelling; client-go's is tokenFile.
        "token-file": optionalText,
        "client-certificate": optionalText,
        "client-certificate-data": optionalText,
        "client-key": optionalText,
        "client-key-data": optionalText,
        username: optionalText,
        password: optionalText,
        as: optionalText,
        "as-uid": optionalText,
        "as-groups": list(z.string()),
        "as-user-extra": z.record(z.string(), list(z.string())).nullish(),
        exec: ExecConfig.nullish(),
        "auth-provider": z
          .object({ name: z.string().min(1), config: z.record(z.string(), z.string()).nullish() })
          .nullish(),
      })
      .nullish(),
  })
  .transform(({ name, user }) => {
    const u: Partial<NonNullable<typeof user>> = user ?? {};
    return {
      name,
      token: u.token,
      tokenFile: u.tokenFile ?? u["token-file"],
      clientCertificate: u["client-certificate"],
      clientCertificateData: u["client-certificate-data"],
      clientKey: u["client-key"],
      clientKeyData: u["client-key-data"],
      username: u.username,
      password: u.password,
      as: u.as,
      asUid: u["as-uid"],
      asGroups: u["as-groups"] ?? [],
      asUserExtra: u["as-user-extra"] ?? {},
      exec: u.exec ?? undefined,
      authProvider: u["auth-provider"]
        ? { name: u["auth-provider"].name, config: u["auth-provider"].config ?? {} }
        : undefined,
    };
  });

/**
 * Returns a valid bearer token, fetching a new one only when needed (and once, however many ask);
 * `refresh` drops the cached one first (the API server refused it with 401).
 */
export type TokenSource = (opts?: { refresh?: boolean }) => Promise<string>;

/** A kubeconfig user; `tokenSource` is set by replaceExecUsers, never read from a file. */
export type User = z.output<typeof UserEntry> & { tokenSource?: TokenSource | undefined };

const ContextEntry = z
  .object({
    name: z.string().min(1),
    context: z.object({ cluster: z.string().min(1), user: optionalText, namespace: optionalText }),
  })
  .transform(({ name, context }) => ({ name, ...context }));
export type Context = z.output<typeof ContextEntry>;

const KubeconfigFile = z
  .object({
    clusters: list(ClusterEntry),
    users: list(UserEntry),
    contexts: list(ContextEntry),
    "current-context": optionalText,
  })
  .nullish()
  .transform((f) => ({
    clusters: f?.clusters ?? [],
    users: f?.users ?? [],
    contexts: f?.contexts ?? [],
    currentContext: f?.["current-context"],
  }));

export interface Kubeconfig {
  clusters: Cluster[];
  users: User[];
  contexts: Context[];
  currentContext: string | undefined;
}

/**
 * Parses kubeconfig text. Relative file paths are resolved against `dir` (the kubeconfig file's
 * directory); `source` names the text in errors. Errors never quote the text (it holds credentials).
 */
export function parseKubeconfig(text: string, opts: { dir?: string; source?: string } = {}): Kubeconfig {
  const where = opts.source ? `kubeconfig ${opts.source}` : "the kubeconfig";
  const doc = parseDocument(text);
  const yamlError = doc.errors[0];
  if (yamlError) {
    const at = yamlError.linePos?.[0];
    throw new KubeconfigError(
      `${where} is not valid YAML (${at ? `line ${at.line}, column ${at.col}: ` : ""}${yamlError.code})`,
    );
  }
  const parsed = KubeconfigFile.safeParse(doc.toJS());
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${issuePath(i.path)}: ${i.message}`).join("; ");
    throw new KubeconfigError(`${where} is not a valid kubeconfig: ${problems}`);
  }
  const kc = parsed.data;
  const dir = opts.dir;
  if (!dir) return kc;
  const abs = (p: string | undefined) => (p && !path.isAbsolute(p) ? path.join(dir, p) : p);
  return {
    ...kc,
    clusters: kc.clusters.map((c) => ({ ...c, certificateAuthority: abs(c.certificateAuthority) })),
    users: kc.users.map((u) => ({
      ...u,
      tokenFile: abs(u.tokenFile),
      clientCertificate: abs(u.clientCertificate),
      clientKey: abs(u.clientKey),
    })),
  };
}

const issuePath = (p: readonly PropertyKey[]) =>
  p.map((k, i) => (typeof k === "number" ? `[${k}]` : `${i > 0 ? "." : ""}${String(k)}`)).join("") ||
  "(top level)";

/** Reads one kubeconfig file; its relative paths are relative to its directory. */
export function readKubeconfigFile(file: string): Kubeconfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (cause) {
    throw new KubeconfigError(`cannot read kubeconfig ${file}: ${errorCode(cause)}`, { cause });
  }
  return parseKubeconfig(text, { dir: path.dirname(path.resolve(file)), source: file });
}

/**
 * Reads a KUBECONFIG-style list (`a:b`, or an array) the way kubectl does: files that do not exist are
 * skipped, clusters/users/contexts merge first-wins by name, the first current-context counts.
 */
export function readKubeconfigFiles(files: string | readonly string[]): Kubeconfig {
  const names = (typeof files === "string" ? files.split(path.delimiter) : [...files]).filter(Boolean);
  const present = names.filter((f) => existsSync(f));
  if (present.length === 0)
    throw new KubeconfigError(`no kubeconfig found: none of ${names.join(", ") || "(empty list)"} exists`);
  return mergeKubeconfigs(present.map(readKubeconfigFile));
}

/** Merges kubeconfigs in order: the first entry with a name wins, the first current-context counts. */
export function mergeKubeconfigs(configs: readonly Kubeconfig[]): Kubeconfig {
  const firstByName = <T extends { name: string }>(lists: T[][]): T[] => {
    const seen = new Map<string, T>();
    for (const item of lists.flat()) if (!seen.has(item.name)) seen.set(item.name, item);
    return [...seen.values()];
  };
  return {
    clusters: firstByName(configs.map((c) => c.clusters)),
    users: firstByName(configs.map((c) => c.users)),
    contexts: firstByName(configs.map((c) => c.contexts)),
    currentContext: configs.find((c) => c.currentContext)?.currentContext,
  };
}

// ---------------------------------------------------------------------------------------------------
// Exec plugins a function cannot run, but whose token it can make itself

/** What an exec plugin in a kubeconfig was for, when it is one a function cannot run. */
export type ExecReplacement = { cloud: "eks"; clusterName: string; region?: string } | { cloud: "gke" };

/** Recognises `aws eks get-token`, `aws-iam-authenticator token` and `gke-gcloud-auth-plugin`. */
export function execReplacement(user: {
  exec?: { command: string; args?: readonly string[] } | undefined;
}): ExecReplacement | undefined {
  const exec = user.exec;
  if (!exec) return undefined;
  const command = exec.command.slice(exec.command.lastIndexOf("/") + 1).replace(/\.exe$/, "");
  const args = exec.args ?? [];
  const flag = (...names: string[]) => {
    for (let i = 0; i < args.length; i++) {
      const a = args[i] ?? "";
      for (const n of names) {
        if (a === n) return args[i + 1];
        if (a.startsWith(`${n}=`)) return a.slice(n.length + 1);
      }
    }
    return undefined;
  };
  if (command === "gke-gcloud-auth-plugin") return { cloud: "gke" };
  const isAwsCli = command === "aws" && args.includes("eks") && args.includes("get-token");
  const isAuthenticator = command === "aws-iam-authenticator" && args.includes("token");
  if (!isAwsCli && !isAuthenticator) return undefined;
  const clusterName = isAwsCli ? flag("--cluster-name") : flag("-i", "--cluster-id");
  if (!clusterName) return undefined;
  const region = flag("--region");
  return { cloud: "eks", clusterName, ...(region ? { region } : {}) };
}

/** How the adapter makes tokens for the clouds it runs on (only the one it has credentials for). */
export interface TokenMakers {
  eks?: (clusterName: string, region: string | undefined) => TokenSource;
  gke?: () => TokenSource;
}

/**
 * Gives users whose exec plugin cannot run in a function a built-in token source instead. Users with a
 * token keep it (a token wins over a plugin, as in client-go); plugins without a maker here stay, and
 * endpointFromKubeconfig refuses them with advice.
 */
export function replaceExecUsers(
  kc: Kubeconfig,
  makers: TokenMakers,
): { kubeconfig: Kubeconfig; replaced: string[] } {
  const replaced: string[] = [];
  const users = kc.users.map((user): User => {
    if (user.token || user.tokenFile || user.tokenSource) return user;
    const r = execReplacement(user);
    const source =
      r?.cloud === "eks"
        ? makers.eks?.(r.clusterName, r.region)
        : r?.cloud === "gke"
          ? makers.gke?.()
          : undefined;
    if (!source) return user;
    replaced.push(user.name);
    return { ...user, exec: undefined, tokenSource: source };
  });
  return { kubeconfig: { ...kc, users }, replaced };
}

// ---------------------------------------------------------------------------------------------------
// From a kubeconfig to a ClusterEndpoint

export interface EndpointOptions {
  /** A context other than current-context. */
  context?: string | undefined;
  tokens?: TokenMakers | undefined;
  /** Clock for token-file ages (tests). */
  now?: () => number;
  /** Where HTTPS_PROXY / NO_PROXY are read; default this process's environment. */
  env?: Env;
}

export interface KubeconfigEndpoint {
  endpoint: ClusterEndpoint;
  /** Users whose exec plugin was replaced by a built-in token (for the cold-start log line). */
  replacedUsers: string[];
}

/** The endpoint for the current context (or `opts.context`): its cluster, its user's credentials. */
export function endpointFromKubeconfig(kc: Kubeconfig, opts: EndpointOptions = {}): KubeconfigEndpoint {
  const names = (xs: { name: string }[]) => xs.map((x) => x.name).join(", ") || "none";
  const contextName = opts.context ?? kc.currentContext;
  if (!contextName)
    throw new KubeconfigError(
      `the kubeconfig has no current-context: set one (kubectl config use-context NAME; contexts: ${names(kc.contexts)})`,
    );
  const context = kc.contexts.find((c) => c.name === contextName);
  if (!context)
    throw new KubeconfigError(
      `context "${contextName}" is not in the kubeconfig (contexts: ${names(kc.contexts)})`,
    );
  const cluster = kc.clusters.find((c) => c.name === context.cluster);
  if (!cluster)
    throw new KubeconfigError(
      `context "${context.name}" names cluster "${context.cluster}", which is not in the kubeconfig (clusters: ${names(kc.clusters)})`,
    );
  let user: User | undefined;
  let replacedUsers: string[] = [];
  if (context.user) {
    const found = kc.users.find((u) => u.name === context.user);
    if (!found)
      throw new KubeconfigError(
        `context "${context.name}" names user "${context.user}", which is not in the kubeconfig (users: ${names(kc.users)})`,
      );
    const r = replaceExecUsers({ ...kc, users: [found] }, opts.tokens ?? {});
    user = r.kubeconfig.users[0];
    replacedUsers = r.replaced;
  }
  return { endpoint: clusterEndpoint(cluster, user, opts), replacedUsers };
}

/**
 * An untrusted kubeconfig's addresses (an app team's cluster): `server` and `proxy-url` under the rules a
 * ProviderConfig's endpoint overrides follow (shared/api/addresses.ts) — no link-local or metadata
 * address, plain http only to loopback — so a kubeconfig is no blind SSRF from the control plane.
 */
export function checkUntrustedAddresses(cluster: Pick<Cluster, "server" | "proxyUrl">, where: string): void {
  for (const [what, raw] of [
    ["server", cluster.server],
    ["proxy-url", cluster.proxyUrl],
  ] as const) {
    const problem = raw === undefined ? undefined : tenantAddressProblem(raw, what);
    if (problem) throw new KubeconfigError(`${where}: ${problem}`);
  }
}

/** Checks a server URL the way the transport will use it; the URL's user-info is never echoed. */
export function checkServer(server: string, opts: { insecureSkipTlsVerify?: boolean; where: string }): URL {
  const notHttp = () =>
    new KubeconfigError(`${opts.where}: server is not an http(s) URL (expected https://host:port)`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw notHttp();
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw notHttp();
  if (url.protocol === "http:" && !opts.insecureSkipTlsVerify)
    throw new KubeconfigError(
      `${opts.where}: server http://${url.host}${url.pathname === "/" ? "" : url.pathname} is plain http; use https, or set insecure-skip-tls-verify: true to accept an unencrypted connection`,
    );
  return url;
}

function clusterEndpoint(cluster: Cluster, user: User | undefined, opts: EndpointOptions): ClusterEndpoint {
  const where = `cluster "${cluster.name}"`;
  checkServer(cluster.server, { insecureSkipTlsVerify: cluster.insecureSkipTlsVerify, where });
  if (cluster.proxyUrl && !/^https?:\/\//i.test(cluster.proxyUrl))
    throw new KubeconfigUnsupportedError(
      `${where}: proxy-url must be an http:// or https:// proxy (${cluster.proxyUrl.split(":")[0]} is not supported)`,
    );
  const ca = fileOrData(
    cluster.certificateAuthority,
    cluster.certificateAuthorityData,
    `${where}: certificate-authority`,
  );
  if (!user) return staticEndpoint({ ...tlsOf(cluster), ca, env: opts.env });

  const who = `kubeconfig user "${user.name}"`;
  // A built-in token is the function's own cloud identity (an STS-presigned URL, a Google access token):
  // good for any cluster that identity may reach, so it goes only to a server whose certificate is verified.
  if (user.tokenSource && !user.token && !user.tokenFile) {
    const plainHttp = new URL(cluster.server).protocol === "http:";
    const weakness = plainHttp
      ? `reaches the server over plain http (${cluster.server})`
      : "sets insecure-skip-tls-verify";
    if (cluster.insecureSkipTlsVerify || plainHttp)
      throw new KubeconfigError(
        `${who}: the built-in EKS/GKE token (replacing its exec plugin) carries the function's cloud identity and is sent only over verified TLS, but ${where} ${weakness}: use https and remove insecure-skip-tls-verify (give certificate-authority or certificate-authority-data if the CA is private)`,
      );
  }
  const token = user.token;
  const bearer: TokenSource | undefined = token
    ? async () => token
    : user.tokenFile
      ? fileTokenSource(user.tokenFile, { now: opts.now, what: `${who}: tokenFile` })
      : user.tokenSource;
  if (!bearer && user.exec)
    throw new KubeconfigUnsupportedError(
      `${who} gets its credentials from the exec plugin "${user.exec.command}", which cannot run in a function: ${FUNCTION_AUTH_ADVICE}`,
    );
  if (!bearer && user.authProvider)
    throw new KubeconfigUnsupportedError(
      `${who} uses the auth-provider "${user.authProvider.name}", which is not supported in functions: ${FUNCTION_AUTH_ADVICE}`,
    );
  const cert = fileOrData(user.clientCertificate, user.clientCertificateData, `${who}: client-certificate`);
  const key = fileOrData(user.clientKey, user.clientKeyData, `${who}: client-key`);
  if (Boolean(cert) !== Boolean(key))
    throw new KubeconfigError(
      `${who} has a client ${cert ? "certificate but no client-key" : "key but no client-certificate"}: a client certificate needs both`,
    );
  const basic = user.username
    ? `Basic ${Buffer.from(`${user.username}:${user.password ?? ""}`, "utf8").toString("base64")}`
    : undefined;
  const fixed = impersonationHeaders(user, who);
  return staticEndpoint({
    ...tlsOf(cluster),
    env: opts.env,
    ca,
    cert,
    key,
    headers: async ({ refresh }) => {
      const authorization = bearer ? `Bearer ${await bearer(refresh ? { refresh } : undefined)}` : basic;
      return authorization ? { ...fixed, Authorization: authorization } : { ...fixed };
    },
  });
}

const tlsOf = (cluster: Cluster) => ({
  server: cluster.server,
  insecureSkipTlsVerify: cluster.insecureSkipTlsVerify,
  tlsServerName: cluster.tlsServerName,
  proxyUrl: cluster.proxyUrl,
});

/** Impersonate-* headers (kubectl --as, --as-group, --as-uid); a list is one header line per value. */
function impersonationHeaders(user: User, who: string): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  if (!user.as && (user.asUid || user.asGroups.length > 0 || Object.keys(user.asUserExtra).length > 0))
    throw new KubeconfigError(
      `${who} sets as-uid, as-groups or as-user-extra without as: impersonation needs a user`,
    );
  if (user.as) headers["Impersonate-User"] = user.as;
  if (user.asUid) headers["Impersonate-Uid"] = user.asUid;
  if (user.asGroups.length > 0) headers["Impersonate-Group"] = user.asGroups;
  for (const [k, v] of Object.entries(user.asUserExtra))
    if (v.length > 0) headers[`Impersonate-Extra-${encodeURIComponent(k)}`] = v;
  return headers;
}

/** A file (read now) or base64 data, as kubeconfig fields come in pairs; the file wins, as in client-node. */
function fileOrData(file: string | undefined, data: string | undefined, what: string): Buffer | undefined {
  if (file) {
    try {
      return readFileSync(file);
    } catch (cause) {
      throw new KubeconfigError(`${what}: cannot read ${file}: ${errorCode(cause)}`, { cause });
    }
  }
  return data ? Buffer.from(data, "base64") : undefined;
}

const errorCode = (err: unknown) => (err as NodeJS.ErrnoException)?.code ?? "unreadable";

/**
 * A token read from a file, re-read when the copy in memory is older than `maxAgeMs` (projected
 * ServiceAccount tokens rotate). If a re-read fails, the last token is used until the file is back.
 */
export function fileTokenSource(
  file: string,
  opts: { now?: (() => number) | undefined; maxAgeMs?: number; what?: string } = {},
): TokenSource {
  const now = opts.now ?? Date.now;
  const maxAge = opts.maxAgeMs ?? TOKEN_FILE_MAX_AGE_MS;
  const what = opts.what ?? "token file";
  try {
    accessSync(file, constants.R_OK);
  } catch (cause) {
    throw new KubeconfigError(`${what}: cannot read ${file}: ${errorCode(cause)}`, { cause });
  }
  let token: string | undefined;
  let readAt = 0;
  let inFlight: Promise<string> | undefined;
  const read = async (): Promise<string> => {
    let text: string;
    try {
      text = (await readFile(file, "utf8")).trim();
    } catch (cause) {
      if (token !== undefined) return token;
      throw new KubeconfigError(`${what}: cannot read ${file}: ${errorCode(cause)}`, { cause });
    }
    if (!text) {
      if (token !== undefined) return token;
      throw new KubeconfigError(`${what}: ${file} is empty`);
    }
    token = text;
    readAt = now();
    return text;
  };
  return async (ask) => {
    if (token !== undefined && now() - readAt < maxAge && !ask?.refresh) return token;
    inFlight ??= read().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
}

// ---------------------------------------------------------------------------------------------------
// In-cluster and the default chain

export interface InClusterOptions {
  env?: Env;
  /** Where the token and ca.crt are; default SERVICE_ACCOUNT_DIR. */
  serviceAccountDir?: string;
  now?: () => number;
}

/** The Pod's own ServiceAccount: KUBERNETES_SERVICE_HOST/PORT, its token (re-read each minute) and CA. */
export function inClusterEndpoint(opts: InClusterOptions = {}): ClusterEndpoint {
  const env = opts.env ?? process.env;
  const dir = opts.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port)
    throw new KubeconfigError(
      "not running in a Kubernetes cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set",
    );
  const token = fileTokenSource(path.join(dir, "token"), {
    now: opts.now,
    what: "in-cluster ServiceAccount token",
  });
  const ca = fileOrData(path.join(dir, "ca.crt"), undefined, "in-cluster CA");
  return staticEndpoint({
    server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
    ca,
    env,
    headers: async ({ refresh }) => ({
      Authorization: `Bearer ${await token(refresh ? { refresh } : undefined)}`,
    }),
  });
}

export interface DefaultChainOptions extends EndpointOptions, InClusterOptions {
  /** Home directory for ~/.kube/config; default $HOME, else the OS's. */
  homeDir?: string;
}

/**
 * client-node's loadFromDefault order: the KUBECONFIG list, else ~/.kube/config if it exists, else the
 * in-cluster ServiceAccount, else an error that says what to set.
 */
export function defaultEndpoint(opts: DefaultChainOptions = {}): KubeconfigEndpoint {
  const env = opts.env ?? process.env;
  if (env.KUBECONFIG) return endpointFromKubeconfig(readKubeconfigFiles(env.KUBECONFIG), opts);
  const home = opts.homeDir ?? env.HOME ?? homedir();
  const file = path.join(home, ".kube", "config");
  if (home && existsSync(file)) return endpointFromKubeconfig(readKubeconfigFile(file), opts);
  const dir = opts.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  if (env.KUBERNETES_SERVICE_HOST || existsSync(path.join(dir, "token")))
    return { endpoint: inClusterEndpoint(opts), replacedUsers: [] };
  throw noClusterError(
    [
      "KUBECONFIG (not set)",
      `${file} (${existsSync(file) ? "not readable" : "does not exist"})`,
      `the in-cluster ServiceAccount (KUBERNETES_SERVICE_HOST is not set, ${path.join(dir, "token")} does not exist)`,
    ],
    "A function can also be given DRIFTLESS_KUBECONFIG_YAML, or the DRIFTLESS_EKS_* / DRIFTLESS_GKE_* settings.",
  );
}
