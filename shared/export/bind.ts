// `driftless bind`: connects one app cluster to the control plane. Everything it makes is state in the
// two clusters (namespace, identity, RBAC, two ConfigMaps), so re-running it is harmless and an agent
// can (re)start from the clusters alone.

import { KubeConfig, type KubernetesObject, KubernetesObjectApi } from "@kubernetes/client-node";
import { type ClaimKindDef, claimKinds } from "../api/claims/claims.ts";
import { claimCrd } from "../api/claims/crd.ts";
import {
  APIServiceExportTemplate,
  type ExportedAPI,
  ExportLabels,
  ExportReason,
  type ExportTemplate,
  exportTemplateCrd,
} from "../api/export/template.ts";
import { Kube, statusOf } from "../kube/client.ts";
import { coreApi } from "../kube/core.ts";
import { applyCrds } from "../kube/crds.ts";
import { namedError } from "../named-error.ts";
import type { NewCondition } from "../reconciler/contract.ts";
import { Lifecycle } from "../reconciler/lifecycle.ts";
import {
  AGENT_IDENTITY,
  APP_BINDING_CONFIGMAP,
  APP_BINDING_NAMESPACE,
  BINDING_CONFIGMAP,
  controlPlaneNamespace,
  templateReaderName,
  validateAppClusterName,
} from "./naming.ts";

/** Agent tokens live this long by default; `driftless run` mints a new one well before expiry. */
export const DEFAULT_AGENT_TOKEN_SECONDS = 3600;
const MANAGED_BY = { "app.kubernetes.io/managed-by": "driftless" };

export class BindError extends namedError("BindError", Error) {}

/** The claim kind an exported API names, if driftless serves it. */
export function claimKindOf(api: ExportedAPI): ClaimKindDef | undefined {
  return claimKinds.find(
    (k) => k.group === api.group && k.plural === api.resource && k.version === api.version,
  );
}

/** Whether a template (live, not being deleted) offers this claim kind. */
export function offers(t: ExportTemplate | undefined, def: ClaimKindDef): boolean {
  return !!t && !t.metadata.deletionTimestamp && t.spec.apis.some((a) => claimKindOf(a) === def);
}

/** What an app cluster's agent may do on the control plane: its own namespace, and read its templates. */
export function agentRbac(appCluster: string, templates: readonly string[]): KubernetesObject[] {
  const namespace = controlPlaneNamespace(appCluster);
  const labels = { ...MANAGED_BY, [ExportLabels.appCluster]: appCluster };
  const rbac = "rbac.authorization.k8s.io/v1";
  const subject = { kind: "ServiceAccount", name: AGENT_IDENTITY, namespace };
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: AGENT_IDENTITY, namespace, labels } },
    {
      apiVersion: rbac,
      kind: "Role",
      metadata: { name: AGENT_IDENTITY, namespace, labels },
      rules: [
        // Claims of every kind, but only the copies in this app cluster's namespace.
        {
          apiGroups: [claimKinds[0]?.group ?? "claims.driftless.dev"],
          resources: claimKinds.map((k) => k.plural),
          verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
        },
        // Permission-claimed objects are read, never written, and only here.
        { apiGroups: [""], resources: ["secrets", "configmaps"], verbs: ["get", "list", "watch"] },
      ],
    },
    {
      apiVersion: rbac,
      kind: "RoleBinding",
      metadata: { name: AGENT_IDENTITY, namespace, labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: AGENT_IDENTITY },
      subjects: [subject],
    },
    {
      apiVersion: rbac,
      kind: "ClusterRole",
      metadata: { name: templateReaderName(appCluster), labels },
      rules: [
        {
          apiGroups: [APIServiceExportTemplate.group],
          resources: [APIServiceExportTemplate.plural],
          // resourceNames: the agent reads the templates it is bound to and cannot list the others.
          resourceNames: [...templates],
          verbs: ["get"],
        },
      ],
    },
    {
      apiVersion: rbac,
      kind: "ClusterRoleBinding",
      metadata: { name: templateReaderName(appCluster), labels },
      roleRef: {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        name: templateReaderName(appCluster),
      },
      subjects: [subject],
    },
  ] as KubernetesObject[];
}

/** Creates the object, or replaces it when it exists. */
export async function applyObject(api: KubernetesObjectApi, obj: KubernetesObject): Promise<void> {
  try {
    await api.create(obj);
  } catch (err) {
    if (statusOf(err) !== 409) throw err;
    const current = await api.read({
      apiVersion: obj.apiVersion ?? "",
      kind: obj.kind ?? "",
      metadata: {
        name: obj.metadata?.name ?? "",
        ...(obj.metadata?.namespace ? { namespace: obj.metadata.namespace } : {}),
      },
    });
    await api.replace({
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: current.metadata?.resourceVersion },
    });
  }
}

const ready = (status: "True" | "False", reason: string, message: string): NewCondition => ({
  type: "Ready",
  status,
  reason,
  message,
});

/** Checks a template's APIs and records the result in its status; returns the claim kinds it offers. */
export async function validateTemplate(kube: Kube, t: ExportTemplate): Promise<ClaimKindDef[]> {
  const unknown = t.spec.apis.filter((a) => !claimKindOf(a));
  const kinds = [...new Set(t.spec.apis.map(claimKindOf).filter((k): k is ClaimKindDef => !!k))];
  const condition =
    unknown.length === 0
      ? ready("True", ExportReason.Valid, `offers ${kinds.map((k) => k.kind).join(", ")}`)
      : ready(
          "False",
          ExportReason.InvalidAPI,
          `not a claim kind driftless serves: ${unknown.map((a) => `${a.resource}.${a.group}/${a.version}`).join(", ")}`,
        );
  const offered = kinds.map((k) => `${k.plural}.${k.group}`);
  await new Lifecycle(kube).writeStatus(
    APIServiceExportTemplate,
    t as ExportTemplate & { [k: string]: unknown },
    [condition],
    { offered },
    { exclusive: true },
  );
  return kinds;
}

export interface BindOptions {
  /** Control plane, as its administrator (makes namespaces, RBAC). */
  controlPlane: KubeConfig;
  /** The app cluster, as its administrator (installs the claim CRDs). */
  app: KubeConfig;
  name: string;
  /** Templates to bind; default every template on the control plane. */
  templates?: readonly string[];
}

export interface BindResult {
  appCluster: string;
  namespace: string;
  templates: string[];
  kinds: string[];
}

/** Connects an app cluster: control-plane namespace and agent identity, claim CRDs in the app cluster. */
export async function bindAppCluster(o: BindOptions): Promise<BindResult> {
  const appCluster = validateAppClusterName(o.name);
  const namespace = controlPlaneNamespace(appCluster);
  const cp = new Kube(o.controlPlane);
  await applyCrds(o.controlPlane, [exportTemplateCrd()]);
  const names =
    o.templates && o.templates.length > 0
      ? [...o.templates]
      : (await cp.list<ExportTemplate & { [k: string]: unknown }>(APIServiceExportTemplate)).items.map(
          (t) => t.metadata.name,
        );
  if (names.length === 0)
    throw new BindError("no APIServiceExportTemplate to bind: create one first, or name one with --export");
  const kinds = new Set<ClaimKindDef>();
  for (const n of names) {
    const t = await cp.get<ExportTemplate & { [k: string]: unknown }>(APIServiceExportTemplate, n);
    if (!t) throw new BindError(`APIServiceExportTemplate ${n} not found on the control plane`);
    for (const k of await validateTemplate(cp, t)) kinds.add(k);
  }

  const cpObjects = KubernetesObjectApi.makeApiClient(o.controlPlane);
  const labels = { ...MANAGED_BY, [ExportLabels.appCluster]: appCluster };
  await ensureOwnNamespace(o.controlPlane, namespace, appCluster, labels);
  for (const obj of agentRbac(appCluster, names)) await applyObject(cpObjects, obj);
  await applyObject(cpObjects, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: BINDING_CONFIGMAP, namespace, labels },
    data: { appCluster, templates: names.join(",") },
  } as KubernetesObject);

  // The app cluster gets the claim kinds (never classes or managed kinds: those stay on the control plane).
  await applyCrds(o.app, [...kinds].map(claimCrd));
  const appObjects = KubernetesObjectApi.makeApiClient(o.app);
  // Created when missing, never replaced: the app cluster's own labels on it stay.
  await coreApi(o.app)
    .createNamespace({ body: { metadata: { name: APP_BINDING_NAMESPACE } } })
    .catch((err: unknown) => {
      if (statusOf(err) !== 409) throw err;
    });
  await applyObject(appObjects, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: APP_BINDING_CONFIGMAP, namespace: APP_BINDING_NAMESPACE, labels: MANAGED_BY },
    data: { appCluster, controlPlaneNamespace: namespace },
  } as KubernetesObject);
  return { appCluster, namespace, templates: names, kinds: [...kinds].map((k) => k.kind) };
}

/**
 * Creates the app cluster's control-plane namespace, or accepts it when an earlier bind of this app
 * cluster made it (its labels, e.g. pod-security ones a platform team added, are left as they are). A
 * namespace of that name made by anyone else is refused: bind would hand it, and what is in it, to the
 * app cluster's agent.
 */
async function ensureOwnNamespace(
  controlPlane: KubeConfig,
  namespace: string,
  appCluster: string,
  labels: Record<string, string>,
): Promise<void> {
  const core = coreApi(controlPlane);
  const read = () =>
    core.readNamespace({ name: namespace }).catch((err: unknown) => {
      if (statusOf(err) === 404) return undefined;
      throw err;
    });
  let existing = await read();
  if (!existing) {
    try {
      await core.createNamespace({ body: { metadata: { name: namespace, labels } } });
      return;
    } catch (err) {
      // Made by someone else in between: judge it like any existing one.
      if (statusOf(err) !== 409) throw err;
      existing = await read();
      if (!existing) throw err;
    }
  }
  if (existing.metadata?.labels?.[ExportLabels.appCluster] !== appCluster)
    throw new BindError(
      `namespace ${namespace} already exists and was not made by driftless bind for app cluster ${appCluster} (no label ${ExportLabels.appCluster}=${appCluster}); bind would give its agent everything in it. Choose another --name, or delete or label the namespace if it really is this app cluster's`,
    );
  if (existing.metadata?.deletionTimestamp)
    throw new BindError(`namespace ${namespace} is being deleted; bind again once it is gone`);
}

/** The app cluster's name, as `driftless bind` recorded it in the app cluster (a hint: never trusted). */
export async function appClusterNameOf(app: KubeConfig): Promise<string> {
  const cm = await coreApi(app)
    .readNamespacedConfigMap({ namespace: APP_BINDING_NAMESPACE, name: APP_BINDING_CONFIGMAP })
    .catch((err: unknown) => {
      if (statusOf(err) === 404)
        throw new BindError(
          `the app cluster is not bound: run driftless bind --app-cluster <kubeconfig> --name <name> first`,
        );
      throw err;
    });
  return validateAppClusterName(cm.data?.appCluster ?? "");
}

/** The templates an app cluster is bound to, as recorded on the control plane (readable by its agent). */
export async function boundTemplates(cp: Kube, appCluster: string): Promise<string[]> {
  const cm = await coreApi(cp).readNamespacedConfigMap({
    namespace: controlPlaneNamespace(appCluster),
    name: BINDING_CONFIGMAP,
  });
  return (cm.data?.templates ?? "").split(",").filter((s) => s.length > 0);
}

/**
 * A kubeconfig for the control plane as the app cluster's agent: a ServiceAccount token from the
 * TokenRequest API (short-lived; mint a new one before it expires).
 */
export async function agentKubeConfig(
  controlPlane: KubeConfig,
  appCluster: string,
  expirationSeconds = DEFAULT_AGENT_TOKEN_SECONDS,
): Promise<KubeConfig> {
  const namespace = controlPlaneNamespace(appCluster);
  const res = await coreApi(controlPlane).createNamespacedServiceAccountToken({
    name: AGENT_IDENTITY,
    namespace,
    body: { spec: { audiences: [], expirationSeconds } },
  });
  const cluster = controlPlane.getCurrentCluster();
  if (!cluster) throw new BindError("no control-plane cluster in the kubeconfig");
  const user = `${AGENT_IDENTITY}-${appCluster}`;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ ...cluster, name: "control-plane" }],
    users: [{ name: user, token: res.status?.token ?? "" }],
    contexts: [{ name: user, cluster: "control-plane", user, namespace }],
    currentContext: user,
  });
  return kc;
}
