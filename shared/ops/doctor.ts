// `driftless doctor`: checks, in order, everything driftless needs, and says for each failure what is
// wrong and how to fix it. Checks are yielded as they finish, so the CLI can print them as they come.
//
// 1. the kubeconfig loads; 2. the API server answers; 3. the CRDs are installed and equal to the generated
// ones; 4. RBAC: the current identity may do what driftless does (SelfSubjectAccessReview per verb);
// 5. the configured queue answers; 6. every ProviderConfig's credentials are accepted by its cloud.

import { AuthorizationV1Api, CustomObjectsApi, type KubeConfig, VersionApi } from "@kubernetes/client-node";
import type { ProviderConfigKind } from "../api/external.ts";
import type { ResourceType } from "../api/meta.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import { type ClaimKinds, claimKindsOf } from "../claims/kinds.ts";
import { isNotFound, Kube, statusOf } from "../kube/client.ts";
import { namedError } from "../named-error.ts";
import { SHAPE_MARKS_REF } from "../reconciler/shape-marks.ts";
import {
  checkNamespacedProviderConfig,
  type TenancyOptions,
  withProviderConfigNamespace,
} from "../reconciler/tenancy.ts";
import { checkQueue, type QueueSettings } from "./queue.ts";

export const DEFAULT_CHECK_TIMEOUT_MS = 15_000;
const SSAR_CONCURRENCY = 10;
const CREDENTIAL_CHECK_CONCURRENCY = 8;

/** Runs at most `n` of the functions given to it at once. */
function limiter(n: number) {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    while (running >= n) await new Promise<void>((r) => waiting.push(r));
    running++;
    try {
      return await fn();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

export type CheckStatus = "ok" | "fail" | "warn" | "skip";

export interface DoctorCheck {
  /** Short name of what was checked: kubeconfig, api-server, crds, rbac, queue, providerconfig/… */
  name: string;
  status: CheckStatus;
  /** What was found, or what is wrong. */
  detail: string;
  /** How to fix it (failures and warnings). */
  fix?: string;
}

export interface DoctorInput {
  /** Loads cluster access; a throw is the first failure. */
  loadKubeConfig: () => KubeConfig;
  queue: QueueSettings;
  /** Every managed kind driftless serves. */
  managed: readonly ResourceType[];
  providerConfigKinds: readonly ProviderConfigKind[];
  /** The CRDs as generated from the schemas (allCrds()). */
  crds: readonly GeneratedCrd[];
  timeoutMs?: number;
  /** Only ProviderConfigs matching this label selector. */
  providerConfigSelector?: string;
  /** The deployment's tenancy settings, so namespaced ProviderConfigs are judged as the engine judges them. */
  tenancy?: TenancyOptions;
}

export interface GeneratedCrd {
  metadata: { name: string };
  spec: {
    names: Record<string, unknown>;
    scope: string;
    versions: Array<{ name: string; schema?: unknown; additionalPrinterColumns?: unknown[] }>;
  };
}

/** One permission driftless needs, as a SelfSubjectAccessReview asks it. */
export interface Access {
  group: string;
  resource: string;
  subresource?: string;
  /** Asked in this namespace (Secrets are granted per namespace); cluster-wide when absent. */
  namespace?: string;
  /** Asked of this one object (a Role's resourceNames). */
  name?: string;
  verb: string;
  /** Why driftless needs it (shown when it is missing). */
  why: string;
}

/**
 * What `driftless run` (forwarder + reconciler + claim reconciler) does in the cluster; infra/k8s/rbac.yaml
 * grants it. `claims`: the claim, class and made kinds (default: every class binding).
 */
export function requiredAccess(
  managed: readonly ResourceType[],
  providerConfigs: readonly ResourceType[],
  claims: ClaimKinds = claimKindsOf(),
): Access[] {
  const out: Access[] = [];
  const allow = (t: ResourceType, verbs: readonly string[], why: string, subresource?: string) => {
    for (const verb of verbs)
      out.push({ group: t.group, resource: t.plural, ...(subresource ? { subresource } : {}), verb, why });
  };
  const readAndPatch = ["get", "list", "watch", "patch"];
  for (const t of managed) {
    allow(t, readAndPatch, "read and annotate managed resources");
    allow(t, ["patch"], "write Ready and Synced conditions", "status");
  }
  for (const t of providerConfigs) {
    allow(t, readAndPatch, "read credentials, keep the in-use finalizer");
    allow(t, ["patch"], "report ProviderConfig health", "status");
  }
  for (const t of claims.claims) {
    allow(t, readAndPatch, "bind claims to classes");
    allow(t, ["patch"], "write claims' Ready, Synced and Bound conditions", "status");
  }
  for (const t of claims.classes) allow(t, ["get", "list", "watch"], "choose a class for each claim");
  for (const t of claims.made)
    allow(t, ["create", "delete"], "make and delete the managed resources claims bind to");
  for (const verb of ["get", "create", "update", "delete"]) {
    out.push({
      group: "",
      resource: "secrets",
      namespace: "driftless-system",
      verb,
      why: "read credentials, write connection Secrets and claims' copies",
    });
  }
  for (const verb of ["create", "patch"]) {
    out.push({ group: "", resource: "events", verb, why: "record Events on managed resources" });
  }
  for (const verb of ["get", "patch", "create"]) {
    out.push({
      group: "",
      resource: "configmaps",
      namespace: SHAPE_MARKS_REF.namespace,
      ...(verb === "create" ? {} : { name: SHAPE_MARKS_REF.name }),
      verb,
      why: "mark kinds' shapes in use so a cloud event costs one LIST",
    });
  }
  return out;
}

const accessLabel = (a: Access) =>
  `${a.verb} ${a.resource}${a.group ? `.${a.group}` : ""}${a.subresource ? `/${a.subresource}` : ""}${a.name ? ` ${a.name}` : ""}${a.namespace ? ` in ${a.namespace}` : ""}`;

class TimeoutError extends namedError("TimeoutError", Error) {}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new TimeoutError(`${what}: no answer after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Runs every check; yields each result as soon as it is known. */
export async function* doctor(input: DoctorInput): AsyncGenerator<DoctorCheck> {
  const timeoutMs = input.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;

  // 1. kubeconfig
  let kc: KubeConfig | undefined;
  try {
    kc = input.loadKubeConfig();
    const cluster = kc.getCurrentCluster();
    yield {
      name: "kubeconfig",
      status: "ok",
      detail: `context "${kc.getCurrentContext()}", server ${cluster?.server}, user "${kc.getCurrentUser()?.name ?? "?"}"`,
    };
  } catch (err) {
    yield {
      name: "kubeconfig",
      status: "fail",
      detail: `cannot load a kubeconfig: ${errText(err)}`,
      fix: "set KUBECONFIG (or --kubeconfig) to a kubeconfig file, or DRIFTLESS_KUBECONFIG_YAML to its text; in a cluster, run with a ServiceAccount",
    };
  }

  // 2. API server
  let reachable = false;
  if (kc) {
    const server = kc.getCurrentCluster()?.server ?? "?";
    try {
      const v = await withTimeout(kc.makeApiClient(VersionApi).getCode(), timeoutMs, "GET /version");
      reachable = true;
      yield { name: "api-server", status: "ok", detail: `${server} answers (Kubernetes ${v.gitVersion})` };
    } catch (err) {
      const status = statusOf(err);
      yield {
        name: "api-server",
        status: "fail",
        detail: `${server} ${status ? `answered HTTP ${status}` : `does not answer: ${errText(err)}`}`,
        fix:
          status === 401
            ? "the kubeconfig's credentials were refused: refresh the token (aws eks update-kubeconfig / gcloud container clusters get-credentials) or use another user"
            : "check the server address in the kubeconfig, the network path to it (VPN, private endpoint) and its CA; `kubectl version` should answer too",
      };
    }
  }

  if (!kc || !reachable) {
    for (const name of ["crds", "rbac"]) {
      yield { name, status: "skip", detail: "skipped: the API server is not reachable" };
    }
  } else {
    // 3. CRDs
    yield await withTimeout(checkCrds(kc, input.crds), timeoutMs * 2, "reading CRDs").catch(
      (err: unknown): DoctorCheck => ({
        name: "crds",
        status: "fail",
        detail: `cannot read CRDs: ${errText(err)}`,
        fix: "the identity needs get on customresourcedefinitions.apiextensions.k8s.io (or run `driftless crds apply` as an admin)",
      }),
    );

    // 4. RBAC
    yield await withTimeout(
      checkRbac(
        kc,
        requiredAccess(
          input.managed,
          input.providerConfigKinds.map((k) => k.type),
        ),
      ),
      timeoutMs * 2,
      "SelfSubjectAccessReviews",
    ).catch(
      (err: unknown): DoctorCheck => ({
        name: "rbac",
        status: "fail",
        detail: `cannot ask the API server what this identity may do: ${errText(err)}`,
        fix: "the identity needs create on selfsubjectaccessreviews.authorization.k8s.io (every authenticated user has it by default)",
      }),
    );
  }

  // 5. queue
  try {
    const checks = await withTimeout(checkQueue(input.queue), timeoutMs, "queue check");
    for (const c of checks) {
      yield {
        name: "queue",
        status: c.ok ? "ok" : "fail",
        detail: c.detail,
        ...(c.fix ? { fix: c.fix } : {}),
      };
      if (c.ok && c.warning) yield { name: "queue", status: "warn", detail: c.warning };
    }
  } catch (err) {
    yield {
      name: "queue",
      status: "fail",
      detail: `${input.queue.queue} queue: ${errText(err)}`,
      fix: "check the queue settings (DRIFTLESS_QUEUE and its URL/topic) and the credentials of this process",
    };
  }

  // 6. ProviderConfigs
  if (!kc || !reachable) {
    yield { name: "providerconfigs", status: "skip", detail: "skipped: the API server is not reachable" };
    return;
  }
  const kube = new Kube(kc);
  let found = 0;
  for (const kind of input.providerConfigKinds) {
    let items: ProviderConfig[] = [];
    try {
      const page = await withTimeout(
        kube.list<ProviderConfig & { [k: string]: unknown }>(kind.type, {
          limit: 500,
          ...(input.providerConfigSelector ? { labelSelector: input.providerConfigSelector } : {}),
        }),
        timeoutMs,
        `list ${kind.cloud} ProviderConfigs`,
      );
      items = page.items;
    } catch (err) {
      if (isNotFound(err)) continue; // CRD missing: already reported by the CRD check
      yield {
        name: `providerconfig.${kind.cloud}`,
        status: "fail",
        detail: `cannot list ${kind.cloud} ProviderConfigs: ${errText(err)}`,
        fix: `grant list on providerconfigs.${kind.type.group}`,
      };
      continue;
    }
    found += items.length;
    // Each check is a network round trip to the cloud: a few at once, reported in list order.
    const limit = limiter(CREDENTIAL_CHECK_CONCURRENCY);
    const results = items.map((pc) =>
      limit(() => checkProviderConfig(kube, kind, pc, timeoutMs, input.tenancy ?? {})),
    );
    for (const r of results) yield await r;
  }
  if (found === 0) {
    yield {
      name: "providerconfigs",
      status: "warn",
      detail: input.providerConfigSelector
        ? `no ProviderConfig matches ${input.providerConfigSelector}`
        : 'no ProviderConfig exists: every managed resource would fail with ProviderConfig "default" not found',
      fix: "create one per cloud you use (examples/aws.yaml, examples/gcp.yaml, examples/azure.yaml show them)",
    };
  }
}

interface StoredCrd {
  spec?: GeneratedCrd["spec"];
  status?: { conditions?: Array<{ type: string; status: string }>; storedVersions?: string[] };
}

/** JSON with object keys sorted: the API server returns keys in its own order. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, value: unknown) =>
    value && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(
          Object.entries(value as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)),
        )
      : value,
  );
}

const columns = (cols: unknown[] | undefined) =>
  canonicalJson(
    (cols ?? []).map((c) => {
      const col = c as { name?: string; type?: string; jsonPath?: string };
      return [col.name, col.type, col.jsonPath];
    }),
  );

/** Every generated CRD exists, is Established, and serves the generated schema and printer columns. */
async function checkCrds(kc: KubeConfig, crds: readonly GeneratedCrd[]): Promise<DoctorCheck> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const missing: string[] = [];
  const outdated: string[] = [];
  const notEstablished: string[] = [];
  for (const crd of crds) {
    let stored: StoredCrd;
    try {
      stored = (await api.getClusterCustomObject({
        group: "apiextensions.k8s.io",
        version: "v1",
        plural: "customresourcedefinitions",
        name: crd.metadata.name,
      })) as StoredCrd;
    } catch (err) {
      if (statusOf(err) === 404) {
        missing.push(crd.metadata.name);
        continue;
      }
      throw err;
    }
    const want = crd.spec.versions[0];
    const have = stored.spec?.versions.find((v) => v.name === want?.name);
    if (
      !have ||
      canonicalJson(have.schema) !== canonicalJson(want?.schema) ||
      columns(have.additionalPrinterColumns) !== columns(want?.additionalPrinterColumns) ||
      stored.spec?.scope !== crd.spec.scope
    ) {
      outdated.push(crd.metadata.name);
    }
    if (!stored.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")) {
      notEstablished.push(crd.metadata.name);
    }
  }
  if (missing.length + outdated.length + notEstablished.length === 0) {
    return {
      name: "crds",
      status: "ok",
      detail: `all ${crds.length} CRDs installed, established and current`,
    };
  }
  const parts = [
    missing.length ? `${missing.length} missing (${missing.join(", ")})` : "",
    outdated.length
      ? `${outdated.length} differ from this version's generated CRDs (${outdated.join(", ")})`
      : "",
    notEstablished.length ? `${notEstablished.length} not established (${notEstablished.join(", ")})` : "",
  ].filter(Boolean);
  return {
    name: "crds",
    status: "fail",
    detail: `CRDs: ${parts.join("; ")}`,
    fix: "run `driftless crds apply` (or `driftless crds print | kubectl apply -f -`) with an identity that may write CRDs",
  };
}

/** Asks one SelfSubjectAccessReview per permission: cluster-wide, Secrets in driftless-system (per-namespace Roles). */
async function checkRbac(kc: KubeConfig, needed: readonly Access[]): Promise<DoctorCheck> {
  const api = kc.makeApiClient(AuthorizationV1Api);
  const denied: Access[] = [];
  const queue = [...needed];
  const lanes = Array.from({ length: Math.min(SSAR_CONCURRENCY, queue.length) }, async () => {
    for (let a = queue.shift(); a; a = queue.shift()) {
      const res = await api.createSelfSubjectAccessReview({
        body: {
          spec: {
            resourceAttributes: {
              group: a.group,
              resource: a.resource,
              verb: a.verb,
              ...(a.subresource ? { subresource: a.subresource } : {}),
              ...(a.namespace ? { namespace: a.namespace } : {}),
              ...(a.name ? { name: a.name } : {}),
            },
          },
        },
      });
      if (!res.status?.allowed) denied.push(a);
    }
  });
  await Promise.all(lanes);
  const user = kc.getCurrentUser()?.name ?? "the current user";
  if (denied.length === 0) {
    return {
      name: "rbac",
      status: "ok",
      detail: `"${user}" may do all ${needed.length} things driftless does (managed kinds, status, ProviderConfigs, claims, classes, Secrets, Events)`,
    };
  }
  const byWhy = new Map<string, string[]>();
  for (const a of denied.sort((x, y) => accessLabel(x).localeCompare(accessLabel(y)))) {
    byWhy.set(a.why, [...(byWhy.get(a.why) ?? []), accessLabel(a)]);
  }
  const shown = [...byWhy]
    .map(
      ([why, labels]) =>
        `${labels.slice(0, 6).join(", ")}${labels.length > 6 ? ` and ${labels.length - 6} more` : ""} (to ${why})`,
    )
    .join("; ");
  return {
    name: "rbac",
    status: "fail",
    detail: `"${user}" is missing ${denied.length} of ${needed.length} permissions: ${shown}`,
    fix: "apply infra/k8s/rbac.yaml and bind its ClusterRoles driftless-reconciler and driftless-forwarder to this identity, e.g. `kubectl create clusterrolebinding driftless-me --clusterrole=driftless-reconciler --user=<user>` (or --serviceaccount=<ns>:<name>)",
  };
}

async function checkProviderConfig(
  kube: Kube,
  kind: ProviderConfigKind,
  pc: ProviderConfig,
  timeoutMs: number,
  tenancy: TenancyOptions,
): Promise<DoctorCheck> {
  const ns = pc.metadata.namespace;
  const label = `${kind.type.kind} "${ns ? `${ns}/` : ""}${pc.metadata.name}"${kind.type.group.includes(".m.") ? ` (${kind.type.group})` : ""}`;
  const name = `${kind.type.kind.toLowerCase()}.${kind.cloud}/${ns ? `${ns}/` : ""}${pc.metadata.name}`;
  // A namespaced ProviderConfig names its Secrets without a namespace: they are in its own.
  pc = withProviderConfigNamespace(pc);
  const spec = pc.spec as {
    credentials?: { source?: string; secretRef?: { namespace: string; name: string; key: string } };
  };
  const ref = spec.credentials?.secretRef;
  try {
    if (kind.type.namespaced) await checkNamespacedProviderConfig(pc, tenancy);
    const identity = await withTimeout(
      kind.check({
        providerConfig: pc,
        readSecretKey: async (r) => {
          const secret = await kube.getSecret(r.namespace, r.name);
          const value = secret?.data?.[r.key];
          if (value === undefined) {
            throw new Error(
              `Secret ${r.namespace}/${r.name} ${secret ? `has no key "${r.key}"` : "not found"}`,
            );
          }
          return Buffer.from(value, "base64").toString("utf8");
        },
      }),
      timeoutMs,
      "credential check",
    );
    return {
      name,
      status: "ok",
      detail: `${label} (${kind.cloud}): credentials accepted (${identity})`,
    };
  } catch (err) {
    const where =
      spec.credentials?.source === "Secret" && ref
        ? `the key "${ref.key}" of Secret ${ref.namespace}/${ref.name}`
        : `the identity this process runs as (credentials source ${spec.credentials?.source ?? "?"})`;
    return {
      name,
      status: "fail",
      detail: `${label} (${kind.cloud}): credentials refused: ${errText(err)}`,
      fix: `put valid ${kind.cloud.toUpperCase()} credentials in ${where}; driftless re-checks the ProviderConfig within 30 s (or: driftless trigger providerconfig.${kind.cloud}/${pc.metadata.name})`,
    };
  }
}
