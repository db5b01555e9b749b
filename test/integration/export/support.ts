import { KubeConfig } from "@kubernetes/client-node";
import { PORTS, startExtraKubeApiserver, stopExtraKubeApiserver } from "../../../infra/local/stack.ts";
import { allCrds } from "../../../shared/crds.ts";
import { Kube, statusOf } from "../../../shared/kube/client.ts";
import { applyCrds } from "../../../shared/kube/crds.ts";
import { env, freePort, uniqueName } from "../../support/env.ts";

export interface Cluster {
  kube: Kube;
  kubeConfig: KubeConfig;
  stop(): Promise<void>;
}

/**
 * An isolated cluster: one more kube-apiserver on the stack's etcd under its own prefix. A control
 * plane gets every driftless CRD; an app cluster starts empty (`driftless bind` installs the claim CRDs).
 */
export async function startCluster(role: string, opts: { crds: boolean }): Promise<Cluster> {
  const prefix = `/driftless-export-${uniqueName(role)}`;
  const apiserver = await startExtraKubeApiserver(await freePort(), { etcdPrefix: prefix });
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: role, server: apiserver.server, caFile: env("DRIFTLESS_CA_FILE") }],
    users: [{ name: "admin", token: env("DRIFTLESS_KUBE_TOKEN") }],
    contexts: [{ name: role, cluster: role, user: "admin" }],
    currentContext: role,
  });
  const stop = async () => {
    await stopExtraKubeApiserver(apiserver.pid, "SIGTERM");
    await deleteEtcdPrefix(prefix);
  };
  try {
    if (opts.crds) await applyCrds(kc, allCrds(), 60_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return { kube: new Kube(kc), kubeConfig: kc, stop };
}

/** Deletes every key under `prefix` through etcd's JSON gateway (what an API server wrote there). */
async function deleteEtcdPrefix(prefix: string) {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  const res = await fetch(`http://127.0.0.1:${PORTS.etcd}/v3/kv/deleterange`, {
    method: "POST",
    body: JSON.stringify({ key: b64(`${prefix}/`), range_end: b64(`${prefix}0`) }),
  });
  if (!res.ok) throw new Error(`etcd deleterange ${prefix}: HTTP ${res.status}`);
}

/** The HTTP status a request failed with (undefined when it succeeded). */
export const failsWith = async (p: Promise<unknown>) =>
  statusOf(
    await p.then(
      () => undefined,
      (e: unknown) => e,
    ),
  );

/** Starts several clusters at once; if one fails, stops the others (no API server is left behind). */
export async function startClusters(
  specs: ReadonlyArray<{ role: string; crds: boolean }>,
): Promise<Cluster[]> {
  const settled = await Promise.allSettled(specs.map((s) => startCluster(s.role, { crds: s.crds })));
  const ok = settled.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) {
    await Promise.all(ok.map((c) => c.stop()));
    throw failed.reason;
  }
  return ok;
}
