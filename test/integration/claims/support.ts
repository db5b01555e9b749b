import { KubeConfig } from "@kubernetes/client-node";
import { PORTS, startExtraKubeApiserver, stopExtraKubeApiserver } from "../../../infra/local/stack.ts";
import type { Claim, ClaimKindDef } from "../../../shared/api/claims/claims.ts";
import type { ClassKindDef } from "../../../shared/api/claims/classes.ts";
import { DEFAULT_CLASS_ANNOTATION } from "../../../shared/api/claims/meta.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import type { ClaimResult } from "../../../shared/claims/reconciler.ts";
import { allCrds } from "../../../shared/crds.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { applyCrds } from "../../../shared/kube/crds.ts";
import { ensureNamespace } from "../../support/aws.ts";
import { env, freePort, sleep, uniqueName } from "../../support/env.ts";
import type { Reconciler } from "../../support/routed.ts";
import { ClaimReconciler } from "../../support/routed.ts";
import { tableRow } from "../../support/table.ts";

export type KubeClaim = Claim & { [k: string]: unknown };
export type KubeMr = ManagedResource & { [k: string]: unknown };

export const claimKey = (def: ClaimKindDef, namespace: string, name: string) => ({
  apiVersion: def.apiVersion,
  kind: def.kind,
  namespace,
  name,
});

/** A fresh namespace for one test: claims, Secrets and class allowances never overlap between tests. */
export async function newNamespace(kube: Kube, prefix: string): Promise<string> {
  const ns = uniqueName(prefix);
  await ensureNamespace(kube, ns);
  return ns;
}

export function claimObject(
  def: ClaimKindDef,
  namespace: string,
  name: string,
  spec: Record<string, unknown> = {},
  metadata: Record<string, unknown> = {},
): KubeClaim {
  return {
    apiVersion: def.apiVersion,
    kind: def.kind,
    metadata: { name, namespace, ...metadata },
    spec,
  } as KubeClaim;
}

/** A class; `isDefault` sets Crossplane's default-class annotation. */
export function classObject(
  def: ClassKindDef,
  name: string,
  spec: Record<string, unknown>,
  opts: { isDefault?: boolean; labels?: Record<string, string> } = {},
) {
  return {
    apiVersion: def.apiVersion,
    kind: def.kind,
    metadata: {
      name,
      ...(opts.labels ? { labels: opts.labels } : {}),
      ...(opts.isDefault ? { annotations: { [DEFAULT_CLASS_ANNOTATION]: "true" } } : {}),
    },
    spec,
  };
}

export const getClaim = (kube: Kube, def: ClaimKindDef, namespace: string, name: string) =>
  kube.get<KubeClaim>(def, name, namespace);

export const conditionOf = (
  o: { status?: { conditions?: Array<{ type: string }> } } | undefined,
  type: string,
) =>
  o?.status?.conditions?.find((c) => c.type === type) as
    | { type: string; status: string; reason: string; message?: string }
    | undefined;

export const isReady = (c: KubeClaim | undefined) => conditionOf(c, "Ready")?.status === "True";

export async function secretData(kube: Kube, namespace: string, name: string) {
  const secret = await kube.getSecret(namespace, name);
  if (!secret) return undefined;
  return Object.fromEntries(
    Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]),
  );
}

/**
 * Reconciles like the queue would: the claim, then every managed resource it is bound to (from its
 * status.resourceRefs), round after round, until `until` holds for the claim and the last claim result.
 */
export async function drive(o: {
  kube: Kube;
  claims: ClaimReconciler;
  mrs: Reconciler;
  def: ClaimKindDef;
  namespace: string;
  name: string;
  until: (claim: KubeClaim | undefined, last: ClaimResult) => boolean;
  timeoutMs?: number;
}): Promise<{ claim: KubeClaim | undefined; results: ClaimResult[] }> {
  const deadline = Date.now() + (o.timeoutMs ?? 30_000);
  const results: ClaimResult[] = [];
  let refs: Array<{ apiVersion: string; kind: string; name: string }> = [];
  for (;;) {
    const res = await o.claims.reconcile(claimKey(o.def, o.namespace, o.name));
    results.push(res);
    refs = (await getClaim(o.kube, o.def, o.namespace, o.name))?.status?.resourceRefs ?? refs;
    // The forwarder would send each resource's key after the claim changed its spec.
    for (const ref of refs) await o.mrs.reconcile(ref);
    const claim = await getClaim(o.kube, o.def, o.namespace, o.name);
    if (o.until(claim, res)) return { claim, results };
    if (Date.now() > deadline) {
      throw new Error(
        `claim ${o.namespace}/${o.name} did not settle: ${results.map((r) => r.outcome).join(", ")}; conditions ${JSON.stringify(claim?.status?.conditions)}`,
      );
    }
    await sleep(100);
  }
}

export const newClaimReconciler = (kube: Kube) => new ClaimReconciler(kube, { random: () => 0.5 });

/**
 * A second, isolated cluster: one more kube-apiserver on the stack's etcd under its own --etcd-prefix,
 * with driftless's CRDs (or only `opts.crds`). `stop()` stops it and deletes its keys from etcd.
 */
export async function startSecondCluster(opts: { crds?: ReturnType<typeof allCrds> } = {}): Promise<{
  kube: Kube;
  kubeConfig: KubeConfig;
  stop(): Promise<void>;
}> {
  const prefix = `/driftless-claims-${uniqueName("cluster")}`;
  const apiserver = await startExtraKubeApiserver(await freePort(), { etcdPrefix: prefix });
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "second", server: apiserver.server, caFile: env("DRIFTLESS_CA_FILE") }],
    users: [{ name: "admin", token: env("DRIFTLESS_KUBE_TOKEN") }],
    contexts: [{ name: "second", cluster: "second", user: "admin" }],
    currentContext: "second",
  });
  await applyCrds(kc, opts.crds ?? allCrds(), 60_000);
  return {
    kube: new Kube(kc),
    kubeConfig: kc,
    async stop() {
      await stopExtraKubeApiserver(apiserver.pid, "SIGTERM");
      await deleteEtcdPrefix(prefix);
    },
  };
}

/** Deletes every key under `prefix` through etcd's JSON gateway (what an API server wrote there). */
async function deleteEtcdPrefix(prefix: string) {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  // The range ["<prefix>/", "<prefix>0") is every key under the prefix ("0" follows "/").
  const res = await fetch(`http://127.0.0.1:${PORTS.etcd}/v3/kv/deleterange`, {
    method: "POST",
    body: JSON.stringify({ key: b64(`${prefix}/`), range_end: b64(`${prefix}0`) }),
  });
  if (!res.ok) throw new Error(`etcd deleterange ${prefix}: HTTP ${res.status}`);
}

/** What `kubectl get` shows for a claim: the server renders the printer columns as a Table. */
export async function claimTable(
  kube: Kube,
  def: ClaimKindDef,
  namespace: string,
  name: string,
): Promise<Record<string, unknown>> {
  return tableRow(
    kube.kubeConfig("a Table request"),
    `/apis/${def.group}/${def.version}/namespaces/${namespace}/${def.plural}/${name}`,
  );
}
