// 11. Activation (issue 21): what each CRD costs the API server. Every configuration gets a fresh, empty
// cluster of its own (etcd + kube-apiserver with the stack's flags, on ports and in a directory apart from
// the stack), one after the other: no driftless CRDs, only an activated set, every generated CRD, and N
// synthetic copies of one generated CRD under fake groups (the per-CRD slope). CRDs are installed the way
// `driftless crds apply --activate <glob>` installs them (activationPlan, then applyCrds, which waits until
// each is Established); then the server settles and its RSS is the median of several /proc samples, and its
// Go live heap is read from /metrics after a GC the server is asked for (/debug/pprof/heap?gc=1).

import { activationPlan } from "../../functions/cli/commands/crds.ts";
import { managedKinds } from "../../shared/providers/index.ts";
import { syntheticCrds } from "../lib/apiserver.ts";
import type { BenchContext } from "../lib/context.ts";
import { type ActivationPoint, measureCrdLoad } from "../lib/fresh-apiserver.ts";
import { mb, ms, type Row, range } from "../lib/report.ts";
import { round, summarize } from "../lib/stats.ts";

/** A platform team that uses SQS queues only — in both shapes, cluster-scoped and namespaced (`.m.`). */
export const ACTIVATE = ["*.sqs.aws.*"];
/**
 * Settled: the server used under 10% of a core over 2 s after the last CRD was Established. It keeps working
 * after that (OpenAPI, discovery): at 300 CRDs Kubernetes 1.20 was still busy minutes later, hence a cap.
 */
const QUIET = { maxCpu: 0.1, quietMs: 2_000, timeoutMs: 60_000 };
const RSS_SAMPLES = 7;
const RSS_INTERVAL_MS = 500;
/**
 * Synthetic CRDs per point, measured by `--only activation` (~3.5 min more): the full run keeps to the three
 * real configurations (~1 min), its budget.
 */
export const SYNTHETIC = [100, 300];
const INSTALL_TIMEOUT_MS = 300_000;

const rssOf = (p: ActivationPoint) => summarize(p.rssMb).median;

async function measurePoint(name: string, crds: readonly object[], log: (msg: string) => void) {
  const point = await measureCrdLoad(name, crds, {
    quiet: QUIET,
    rssSamples: RSS_SAMPLES,
    rssIntervalMs: RSS_INTERVAL_MS,
    installTimeoutMs: INSTALL_TIMEOUT_MS,
  });
  log(
    `activation: ${name}: ${crds.length} CRDs in ${ms(point.installMs)}, ${point.settled ? "settled" : "still busy"} after ${ms(point.settleMs)}, RSS ${mb(rssOf(point))}, live heap ${mb(point.liveHeapMb)}`,
  );
  return point;
}

export async function measureActivation(ctx: Pick<BenchContext, "log">, synthetic: readonly number[]) {
  const { install } = await activationPlan({ activate: ACTIVATE });
  const { install: every } = await activationPlan({ activate: ["*"] });
  const managedNames = new Set(managedKinds.map((k) => `${k.definition.plural}.${k.definition.group}`));
  const managed = every.filter((c) => managedNames.has(c.metadata.name));
  const bytes = (c: object) => JSON.stringify(c).length;
  // The median-sized managed kind's CRD stands for a typical one in the synthetic points.
  const bySize = [...managed].sort((a, b) => bytes(a) - bytes(b));
  const template = bySize[Math.floor(bySize.length / 2)];
  if (!template) throw new Error("no generated CRDs");
  ctx.log(
    `activation: ${every.length} generated CRDs, ${install.length} with --activate ${ACTIVATE.join(" ")}${synthetic.length > 0 ? `; ${synthetic.join(", ")} synthetic copies of ${template.metadata.name}` : ""}`,
  );
  const none = await measurePoint("no driftless CRDs", [], ctx.log);
  const activated = await measurePoint(`activated (${ACTIVATE.join(" ")})`, install, ctx.log);
  const all = await measurePoint("every driftless CRD", every, ctx.log);
  const copies: ActivationPoint[] = [];
  for (const n of synthetic)
    copies.push(await measurePoint(`${n} synthetic CRDs`, syntheticCrds(template, n), ctx.log));
  const result = {
    activate: ACTIVATE,
    installed: { activated: install.map((c) => c.metadata.name), every: every.length },
    crdBytes: {
      mean: round(every.reduce((s, c) => s + bytes(c), 0) / every.length, 0),
      syntheticTemplate: { name: template.metadata.name, bytes: bytes(template) },
    },
    quiet: QUIET,
    points: [none, activated, all, ...copies],
  };
  return { rows: activationRows(result.points, copies), result };
}

/** Per CRD over the empty server: (value with the CRDs − value without) / number of CRDs. */
const perCrd = (p: ActivationPoint, none: ActivationPoint, v: (p: ActivationPoint) => number) =>
  (v(p) - v(none)) / p.crds;
const heapOf = (p: ActivationPoint) => p.liveHeapMb;

function activationRows(points: ActivationPoint[], synthetic: readonly ActivationPoint[]): Row[] {
  const [none, activated, all] = points;
  if (!none || !activated || !all) return [];
  const rows: Row[] = points.map((p) => {
    const rss = summarize(p.rssMb);
    const per =
      p.crds > 0
        ? `; per CRD ${perCrd(p, none, rssOf).toFixed(2)} MB RSS, ${perCrd(p, none, heapOf).toFixed(2)} MB heap`
        : "";
    return {
      section: "11 activation",
      metric: `kube-apiserver RSS, ${p.name}: ${p.crds} CRDs${p.crds > 0 ? ` installed in ${ms(p.installMs)}` : ""} (live heap ${mb(p.liveHeapMb)}${p.settled ? "" : `; still busy after ${ms(p.settleMs)}`})`,
      value: mb(rss.median),
      target: "—",
      pass: undefined,
      range: `${range(rss.min, rss.max, mb)}${per}`,
    };
  });
  rows.push({
    section: "11 activation",
    metric: `activated instead of every CRD: ${all.crds - activated.crds} CRDs fewer, RSS (live heap) saved`,
    value: `${mb(rssOf(all) - rssOf(activated))} (${mb(all.liveHeapMb - activated.liveHeapMb)})`,
    target: "—",
    pass: undefined,
    range: `install ${ms(activated.installMs)} instead of ${ms(all.installMs)}`,
  });
  const [a, b] = synthetic;
  if (a && b) {
    const n = b.crds - a.crds;
    rows.push({
      section: "11 activation",
      metric: `slope from ${a.crds} to ${b.crds} synthetic CRDs, per CRD: RSS (live heap)`,
      value: `${((rssOf(b) - rssOf(a)) / n).toFixed(2)} MB (${((b.liveHeapMb - a.liveHeapMb) / n).toFixed(2)} MB)`,
      target: "—",
      pass: undefined,
      range: `install ${ms(a.installMs)} → ${ms(b.installMs)}; Crossplane quotes ~3 MiB per CRD`,
    });
  }
  return rows;
}
