// 12. Generated AWS kinds (issue 20): what the generator costs, what their CRDs cost an API server, and what
// activated kinds add to the aws-reconcile bundle.
// - generation: infra/gen-awscc.ts over the whole schema database, forced, into a directory of its own
//   (the repository's .generated/awscc, which tests read, is left alone); the check that skips it too;
// - CRDs: 0, 50 and 500 generated kinds spread evenly over the catalog sorted by type name, in the
//   cluster-scoped shape (one CRD per kind; an alias such as `dynamodb.*` installs both shapes, twice as
//   many), planned and installed the way `driftless crds apply --activate <crd names>` does it
//   (activationPlan, which always adds the ProviderConfigs, claims and classes — the 0 point holds just
//   those — then applyCrds), each on a fresh API server of its own (bench/lib/fresh-apiserver.ts);
// - bundle: aws-reconcile built by infra/build/build.ts (the generated kinds are data beside it, dist/awscc,
//   chosen at run time) and what a cold start pays to load 50 activated kinds' specs from that data.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { activationPlan } from "../../functions/cli/commands/crds.ts";
import { AWS_RECONCILE_BUDGET_BYTES, BUNDLES, buildBundle, copyAwsccData } from "../../infra/build/build.ts";
import { awsccIsCurrent, generateAwscc } from "../../infra/gen-awscc.ts";
import { loadAwsccCatalog } from "../../shared/api/awscc/catalog.ts";
import { type AwsccCatalogEntry, awsccAliasOf } from "../../shared/api/awscc/spec.ts";
import { generatedCrdNames } from "../../shared/api/generated-catalog.ts";
import type { ActivationPoint } from "../lib/fresh-apiserver.ts";
import { measureCrdLoad } from "../lib/fresh-apiserver.ts";
import { mb, ms, type Row, range } from "../lib/report.ts";
import { round, summarize } from "../lib/stats.ts";

/** Generated kinds installed per point, measured by `--only awscc`. */
export const AWSCC_KINDS = [0, 50, 500];
/** The full run's points: 500 kinds take ~2.5 min more (install and settling), only with --only awscc. */
export const AWSCC_KINDS_FULL_RUN = [0, 50];
/** Kinds whose specs a cold start loads in the bundle measurement. */
export const BUNDLE_KINDS = 50;
const GENERATION_REPS = 3;
const LOAD = {
  // As section 11: under 10% of a core over 2 s, or a minute after the last CRD was Established.
  quiet: { maxCpu: 0.1, quietMs: 2_000, timeoutMs: 60_000 },
  rssSamples: 7,
  rssIntervalMs: 500,
  installTimeoutMs: 600_000,
};

const GROUP = /\.awscc(\.m)?\.driftless\.dev$/;
const SECTION = "12 awscc";

/** `n` entries spread evenly over `sorted` (the same ones every run for the same catalog). */
export function spreadSample<T>(sorted: readonly T[], n: number): T[] {
  if (n <= 0) return [];
  const step = sorted.length / Math.min(n, sorted.length);
  return Array.from({ length: Math.min(n, sorted.length) }, (_, i) => sorted[Math.floor(i * step)] as T);
}

interface AwsccPoint extends ActivationPoint {
  kinds: number;
  /** activationPlan for these kinds: catalog → specs → zod → CRDs. */
  planMs: number;
  crdBytes: number;
}

function measureGeneration(log: (msg: string) => void) {
  const dir = mkdtempSync(path.join(tmpdir(), "driftless-awscc-gen-"));
  try {
    const runs = Array.from({ length: GENERATION_REPS }, () =>
      generateAwscc({ dir: path.join(dir, "awscc"), force: true }),
    );
    const t = performance.now();
    const current = awsccIsCurrent(path.join(dir, "awscc"));
    const checkMs = performance.now() - t;
    const genMs = runs.map((r) => r.ms);
    log(`awscc: generated ${runs[0]?.kinds} kinds in ${genMs.join(", ")} ms; current check ${ms(checkMs)}`);
    return { kinds: runs[0]?.kinds ?? 0, ms: genMs, checkMs, current };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The aws-reconcile bundle (built with no activation list: the generated kinds are data beside it, chosen at
 * run time), the data's size, and what a cold start pays to pick and load `entries`' specs from that data
 * (a fresh Node process: catalog read, patterns matched, spec files read; median of 5).
 */
async function measureBundles(distDir: string, entries: readonly AwsccCatalogEntry[]) {
  const spec = BUNDLES.find((b) => b.name === "aws-reconcile");
  if (!spec) throw new Error("no aws-reconcile bundle in infra/build/build.ts");
  const activate = entries.map(awsccAliasOf);
  mkdirSync(distDir, { recursive: true });
  const none = await buildBundle(spec, path.join(distDir, "aws-reconcile-awscc.mjs"));
  const data = copyAwsccData(distDir);
  const catalogTs = path.resolve(import.meta.dirname, "../../shared/api/awscc/catalog.ts");
  const script = [
    `const { awsccSpecsFor } = await import(${JSON.stringify(catalogTs)});`,
    "const t = performance.now();",
    `const specs = awsccSpecsFor(${JSON.stringify(activate)}, ${JSON.stringify(data.dir)});`,
    'process.stdout.write("load-ms=" + (performance.now() - t) + " specs=" + specs.length + "\\n");',
  ].join("\n");
  const loads: number[] = [];
  let specs = 0;
  for (let i = 0; i < 5; i++) {
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    loads.push(Number(/load-ms=([\d.]+)/.exec(out)?.[1] ?? Number.NaN));
    specs = Number(/specs=(\d+)/.exec(out)?.[1] ?? 0);
  }
  return {
    activate,
    none: { bytes: none.bytes, gzipBytes: none.gzipBytes },
    data: { files: data.files, bytes: data.bytes },
    activated: { kinds: entries.length, specs, loadMs: summarize(loads).median },
  };
}

export async function measureAwscc(
  ctx: { log(msg: string): void; distDir: string },
  kindCounts: readonly number[],
) {
  const generation = measureGeneration(ctx.log);
  const catalog = loadAwsccCatalog();
  const sorted = [...catalog.kinds].sort((a, b) => a.typeName.localeCompare(b.typeName));
  const points: AwsccPoint[] = [];
  for (const n of kindCounts) {
    const entries = spreadSample(sorted, n);
    const t = performance.now();
    // No list would mean every hand-written kind: the 0 point plans one generated kind and drops it,
    // which leaves the CRDs that are always installed.
    const names = (n > 0 ? entries : spreadSample(sorted, 1)).map((e) => generatedCrdNames(e)[0] as string);
    const planned = (await activationPlan({ activate: names })).install;
    const install = n > 0 ? planned : planned.filter((c) => !GROUP.test(c.spec.group));
    const planMs = performance.now() - t;
    const generated = install.filter((c) => GROUP.test(c.spec.group));
    const crdBytes = generated.reduce((s, c) => s + JSON.stringify(c).length, 0) / Math.max(1, n);
    ctx.log(`awscc: ${n} generated kinds → ${install.length} CRDs (planned in ${ms(planMs)}), installing …`);
    const p = await measureCrdLoad(`${n} generated kinds`, install, LOAD);
    ctx.log(
      `awscc: ${n} kinds: ${p.crds} CRDs in ${ms(p.installMs)}, ${p.settled ? "settled" : "still busy"} after ${ms(p.settleMs)}, RSS ${mb(summarize(p.rssMb).median)}, live heap ${mb(p.liveHeapMb)}`,
    );
    points.push({ ...p, kinds: n, planMs, crdBytes: round(crdBytes, 0) });
  }
  const bundles = await measureBundles(ctx.distDir, spreadSample(sorted, BUNDLE_KINDS));
  ctx.log(
    `awscc: aws-reconcile ${mib(bundles.none.bytes)}, data ${mib(bundles.data.bytes)}; ${BUNDLE_KINDS} kinds' specs loaded at cold start in ${ms(bundles.activated.loadMs)}`,
  );
  const result = {
    source: catalog.source,
    catalogKinds: catalog.kinds.length,
    generation,
    quiet: LOAD.quiet,
    points,
    bundles,
  };
  return { rows: awsccRows(result), result };
}

const mib = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(2)} MB`;
const rssOf = (p: ActivationPoint) => summarize(p.rssMb).median;

function awsccRows(r: {
  catalogKinds: number;
  generation: ReturnType<typeof measureGeneration>;
  points: AwsccPoint[];
  bundles: Awaited<ReturnType<typeof measureBundles>>;
}): Row[] {
  const gen = summarize(r.generation.ms);
  const rows: Row[] = [
    {
      section: SECTION,
      metric: `generation: ${r.catalogKinds} kinds from the schema database (forced; the up-to-date check ${ms(r.generation.checkMs)})`,
      value: ms(gen.median),
      target: "—",
      pass: undefined,
      range: range(gen.min, gen.max, ms),
    },
  ];
  const base = r.points.find((p) => p.kinds === 0);
  for (const p of r.points) {
    const rss = summarize(p.rssMb);
    const extra = base ? p.crds - base.crds : 0;
    const per =
      base && extra > 0
        ? `; per generated CRD ${((rssOf(p) - rssOf(base)) / extra).toFixed(2)} MB RSS, ${((p.liveHeapMb - base.liveHeapMb) / extra).toFixed(2)} MB heap`
        : "";
    rows.push({
      section: SECTION,
      metric: `kube-apiserver RSS, ${p.kinds} generated kinds: ${p.crds} CRDs${p.kinds > 0 ? ` (~${Math.round(p.crdBytes / 1024)} KB each)` : ""} installed in ${ms(p.installMs)} (live heap ${mb(p.liveHeapMb)}; peak ${mb(p.peakMb)}${p.settled ? "" : `; still busy after ${ms(p.settleMs)}`})`,
      value: mb(rss.median),
      target: "—",
      pass: undefined,
      range: `${range(rss.min, rss.max, mb)}${per}`,
    });
  }
  const bundle = (what: string, b: { bytes: number; gzipBytes: number }) => ({
    section: SECTION,
    metric: `aws-reconcile bundle, ${what}`,
    value: `${mib(b.bytes)} (${Math.round(b.gzipBytes / 1024)} kB gzip)`,
    target: `≤ ${AWS_RECONCILE_BUDGET_BYTES / 1024 ** 2} MB`,
    pass: b.bytes <= AWS_RECONCILE_BUDGET_BYTES,
    range: "—",
  });
  rows.push(bundle("the generated kinds as data beside it (never in the code)", r.bundles.none));
  rows.push({
    section: SECTION,
    metric: `cold start: ${r.bundles.activated.kinds} activated kinds' specs (${r.bundles.activated.specs} with both shapes' kinds) picked and read from dist/awscc (${r.bundles.data.files} files, ${mib(r.bundles.data.bytes)})`,
    value: ms(r.bundles.activated.loadMs),
    target: "—",
    pass: undefined,
    range: "median of 5 fresh processes",
  });
  return rows;
}
