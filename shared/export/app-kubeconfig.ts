// App clusters' kubeconfigs come from app teams, so they are untrusted input to the control plane's
// process: read with the project's own parser (shared/kube/kubeconfig.ts), never with client-node's
// loader, which runs exec plugins and auth-provider commands and reads any file a kubeconfig names.
// Only inline credentials pass; local file references need the operator's per-cluster opt-in. The
// result is a client-node KubeConfig (the agent watches the app cluster) built from the checked fields
// only, carrying the app cluster's name as the control plane gave it — never as the app cluster says.
import { readFileSync } from "node:fs";
import { KubeConfig } from "@kubernetes/client-node";
import {
  type Cluster,
  checkServer,
  checkUntrustedAddresses,
  KubeconfigError,
  readKubeconfigFile,
  type User,
} from "../kube/kubeconfig.ts";
import { validateAppClusterName } from "./naming.ts";

/** The `driftless run` option that lets one app cluster's kubeconfig name local files. */
export const LOCAL_FILES_FLAG = "--app-cluster-local-files";

/** A KubeConfig of an app cluster, with the name the control plane serves it under. */
export class AppClusterKubeConfig extends KubeConfig {
  readonly appCluster: string;
  constructor(appCluster: string) {
    super();
    this.appCluster = validateAppClusterName(appCluster);
  }
}

export interface AppKubeconfigOptions {
  /** The operator trusts this kubeconfig's file references (token-file, certificate and key paths). */
  allowLocalFiles?: boolean;
  /** A context other than current-context. */
  context?: string;
}

/** `NAME=KUBECONFIG`, as `driftless run --app-cluster` takes it. */
export function parseAppClusterFlag(value: string): { name: string; path: string } {
  const at = value.indexOf("=");
  if (at < 0)
    throw new KubeconfigError(
      `--app-cluster ${value}: give the app cluster's name too, e.g. --app-cluster alpha=${value} (the name decides which control-plane namespace its agent acts in, so the control plane sets it; it is never read from the app cluster)`,
    );
  const name = validateAppClusterName(value.slice(0, at));
  const path = value.slice(at + 1);
  if (!path) throw new KubeconfigError(`--app-cluster ${value}: no kubeconfig file after "${name}="`);
  return { name, path };
}

/**
 * Reads an app cluster's kubeconfig file. Refuses exec plugins and auth providers (they run commands),
 * impersonation client-node cannot carry (groups, uid, extra), and — unless `allowLocalFiles` — every
 * local file reference. Errors name the file and the field, never a credential.
 */
export function loadAppClusterKubeConfig(
  file: string,
  appCluster: string,
  opts: AppKubeconfigOptions = {},
): AppClusterKubeConfig {
  const name = validateAppClusterName(appCluster);
  const kc = readKubeconfigFile(file);
  const where = `app cluster ${name} (kubeconfig ${file})`;
  const contextName = opts.context ?? kc.currentContext;
  const context = kc.contexts.find((c) => c.name === contextName);
  if (!context)
    throw new KubeconfigError(`${where}: no context ${contextName ? `"${contextName}"` : "is current"}`);
  const cluster = kc.clusters.find((c) => c.name === context.cluster);
  if (!cluster) throw new KubeconfigError(`${where}: context "${context.name}" names no known cluster`);
  const user = context.user ? kc.users.find((u) => u.name === context.user) : undefined;
  if (context.user && !user)
    throw new KubeconfigError(`${where}: context "${context.name}" names no known user`);
  checkServer(cluster.server, { insecureSkipTlsVerify: cluster.insecureSkipTlsVerify, where });
  checkUntrustedAddresses(cluster, where);
  if (user) refuseCode(user, where);

  const files = [
    ...(cluster.certificateAuthority ? ["certificate-authority"] : []),
    ...(user?.tokenFile ? ["tokenFile"] : []),
    ...(user?.clientCertificate ? ["client-certificate"] : []),
    ...(user?.clientKey ? ["client-key"] : []),
  ];
  if (files.length > 0 && !opts.allowLocalFiles)
    throw new KubeconfigError(
      `${where} names local files (${files.join(", ")}): an app team's kubeconfig may not make driftless read files on this machine. Inline them (certificate-authority-data, client-certificate-data, client-key-data, token), or, if this file is yours, allow it with ${LOCAL_FILES_FLAG} ${name}`,
    );

  const out = new AppClusterKubeConfig(name);
  out.loadFromOptions({
    clusters: [clusterOf(cluster)],
    users: [userOf(user, where)],
    contexts: [{ name: "app", cluster: cluster.name, user: user?.name ?? "none" }],
    currentContext: "app",
  });
  return out;
}

function refuseCode(user: User, where: string) {
  const advice = "give a token or a client certificate inline instead";
  if (user.exec)
    throw new KubeconfigError(
      `${where}: user "${user.name}" gets credentials from the exec plugin "${user.exec.command}"; commands from an app team's kubeconfig are not run for app clusters: ${advice}`,
    );
  if (user.authProvider)
    throw new KubeconfigError(
      `${where}: user "${user.name}" uses the auth-provider "${user.authProvider.name}"; auth providers (and their cmd-path) are not run for app clusters: ${advice}`,
    );
  const extra = [
    ...(user.asUid ? ["as-uid"] : []),
    ...(user.asGroups.length > 0 ? ["as-groups"] : []),
    ...(Object.keys(user.asUserExtra).length > 0 ? ["as-user-extra"] : []),
  ];
  if (extra.length > 0)
    throw new KubeconfigError(
      `${where}: user "${user.name}" sets ${extra.join(", ")}, which app-cluster access cannot carry; impersonate a user (as) only, or give that identity's own token`,
    );
}

function clusterOf(c: Cluster) {
  return {
    name: c.name,
    server: c.server,
    skipTLSVerify: c.insecureSkipTlsVerify,
    ...(c.certificateAuthority ? { caFile: c.certificateAuthority } : {}),
    ...(c.certificateAuthorityData ? { caData: c.certificateAuthorityData } : {}),
    ...(c.tlsServerName ? { tlsServerName: c.tlsServerName } : {}),
    ...(c.proxyUrl ? { proxyUrl: c.proxyUrl } : {}),
  };
}

function userOf(u: User | undefined, where: string) {
  if (!u) return { name: "none" };
  return {
    name: u.name,
    // Read once, as client-node did: reached only with the operator's opt-in (checked above).
    ...(u.token ? { token: u.token } : u.tokenFile ? { token: readToken(u.tokenFile, where) } : {}),
    ...(u.clientCertificate ? { certFile: u.clientCertificate } : {}),
    ...(u.clientCertificateData ? { certData: u.clientCertificateData } : {}),
    ...(u.clientKey ? { keyFile: u.clientKey } : {}),
    ...(u.clientKeyData ? { keyData: u.clientKeyData } : {}),
    ...(u.username ? { username: u.username, password: u.password ?? "" } : {}),
    ...(u.as ? { impersonateUser: u.as } : {}),
  };
}

function readToken(file: string, where: string): string {
  try {
    return readFileSync(file, "utf8").trim();
  } catch (cause) {
    throw new KubeconfigError(
      `${where}: cannot read tokenFile ${file}: ${(cause as NodeJS.ErrnoException)?.code ?? "unreadable"}`,
      { cause },
    );
  }
}
