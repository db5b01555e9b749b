// What a set of CRDs costs a fresh, empty API server (etcd + kube-apiserver of its own, apart from the
// stack): the install the way `driftless crds apply` does it (applyCrds, which waits until each CRD is
// Established), then — once the server has settled — its RSS (median of /proc samples), its Go live heap
// from /metrics after a GC it is asked for (/debug/pprof/heap?gc=1), and its high-water mark.
import { applyCrds } from "../../shared/kube/crds.ts";
import { startFreshKube } from "../../test/support/fresh-kube.ts";
import { getText, promValue, waitUntilQuiet } from "./apiserver.ts";
import { statusKb } from "./children.ts";
import { sleep } from "./stats.ts";

export interface ActivationPoint {
  name: string;
  crds: number;
  /** From the first create to the last CRD Established (applyCrds). */
  installMs: number;
  /** From Established to quiet (QUIET), or to its timeout. */
  settleMs: number;
  settled: boolean;
  /** kube-apiserver VmRSS samples once settled, MB; their median is the figure. */
  rssMb: number[];
  /** Go heap still allocated after a GC the server was asked for (go_memstats_heap_alloc_bytes), MB. */
  liveHeapMb: number;
  /** kube-apiserver's high-water mark (VmHWM) since it started, MB: the install's peak. */
  peakMb: number;
  etcdRssMb: number;
  /** From spawn to /readyz, ms. */
  startMs: number;
}

export interface CrdLoadOptions {
  /** When the server counts as settled (see waitUntilQuiet). */
  quiet: { maxCpu: number; quietMs: number; timeoutMs: number };
  rssSamples: number;
  rssIntervalMs: number;
  installTimeoutMs: number;
}

export async function measureCrdLoad(
  name: string,
  crds: readonly object[],
  o: CrdLoadOptions,
): Promise<ActivationPoint> {
  const fresh = await startFreshKube("bench-crds");
  const { kube } = fresh;
  try {
    const t = performance.now();
    if (crds.length > 0) await applyCrds(fresh.kc, [...crds], o.installTimeoutMs);
    const installMs = crds.length > 0 ? performance.now() - t : 0;
    const settleMs = await waitUntilQuiet(kube.pids.apiserver, o.quiet);
    const rssMb: number[] = [];
    for (let i = 0; i < o.rssSamples; i++) {
      if (i > 0) await sleep(o.rssIntervalMs);
      rssMb.push(statusKb(kube.pids.apiserver, "VmRSS") / 1024);
    }
    await getText(kube.server, "/debug/pprof/heap?gc=1", kube);
    const metrics = await getText(kube.server, "/metrics", kube);
    return {
      name,
      crds: crds.length,
      installMs,
      settleMs,
      settled: settleMs < o.quiet.timeoutMs,
      rssMb,
      liveHeapMb: promValue(metrics, "go_memstats_heap_alloc_bytes") / 1024 ** 2,
      peakMb: statusKb(kube.pids.apiserver, "VmHWM") / 1024,
      etcdRssMb: statusKb(kube.pids.etcd, "VmRSS") / 1024,
      startMs: fresh.startMs,
    };
  } finally {
    await fresh.stop();
  }
}
