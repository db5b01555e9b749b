// 16. The GCP reconcile function (issue 31): what its bundle carries and what its cold start costs with 0 and
// 50 generated Google kinds activated — activated at run time, as a deployed function reads DRIFTLESS_ACTIVATE
// and the activation policies: the bundle holds no spec, the kinds are data beside it (gcp-kinds/: the
// catalog and one spec per kind, infra/build/build.ts's copyGoogleData). The real gcp-reconcile and gcp-sweep
// entries are built; the 50 kinds are spread evenly over the catalog sorted by type, named by CRD name.
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import {
  BUNDLES,
  type BuiltBundle,
  buildBundle,
  coldImport,
  copyGoogleData,
} from "../../infra/build/build.ts";
import { googleSpecsFor, loadGoogleCatalog } from "../../shared/api/googleapis/catalog.ts";
import { coldImportRows, type Row } from "../lib/report.ts";
import { IMPORT_BUDGET_MS } from "./coldstart.ts";

const SECTION = "16 gcp";
/** The issue's targets: the GCP reconcile bundle with 50 activated generated kinds (the build's MB = MiB). */
export const GCP_BUNDLE_BUDGET_BYTES = 3 * 1024 * 1024;
export const GCP_IMPORT_BUDGET_MS = IMPORT_BUDGET_MS;
export const GCP_KINDS = 50;

type Sample = { wallMs: number; cpuMs: number };

/** One of the build's bundles, built into `dir`. */
async function build(name: string, dir: string): Promise<BuiltBundle> {
  const spec = BUNDLES.find((b) => b.name === name);
  if (!spec) throw new Error(`infra/build/build.ts has no bundle ${name}`);
  return buildBundle(spec, path.join(dir, `${name}.mjs`));
}

export async function measureGcp(ctx: { log: (s: string) => void; distDir: string }, samples = 7) {
  const data = copyGoogleData(ctx.distDir);
  const sorted = [...loadGoogleCatalog().kinds].sort((a, b) => a.typeName.localeCompare(b.typeName));
  const step = sorted.length / GCP_KINDS;
  const fifty = Array.from({ length: GCP_KINDS }, (_, i) => sorted[Math.floor(i * step)]).filter(
    (e) => e !== undefined,
  );
  const activate = fifty.map((e) => `${e.plural}.${e.group}.driftless.dev`).join(",");
  // The list must select exactly those kinds, or the figure would be of other kinds.
  const selected = googleSpecsFor(activate.split(","));
  if (selected.length !== GCP_KINDS)
    throw new Error(
      `the activation list selects ${selected.length} generated Google kinds, not ${GCP_KINDS}`,
    );

  const reconcile = await build("gcp-reconcile", ctx.distDir);
  const sweep = await build("gcp-sweep", ctx.distDir);
  // Node's own start and an empty module's import, for scale: on the shared machine it moves with the load.
  const empty = path.join(ctx.distDir, "empty.mjs");
  writeFileSync(empty, "");
  // Round-robin, so a busy moment of the shared machine spreads over every point.
  const none: Sample[] = [];
  const some: Sample[] = [];
  const baseline: Sample[] = [];
  const loadBefore = loadavg();
  for (let i = 0; i < samples; i++) {
    baseline.push(coldImport(empty, 1));
    none.push(coldImport(reconcile.file, 1));
    some.push(coldImport(reconcile.file, 1, { DRIFTLESS_ACTIVATE: activate }));
  }
  const loadAfter = loadavg();
  const mb = (b: number) => (b / 1024 ** 2).toFixed(2);
  ctx.log(
    `gcp: gcp-reconcile ${mb(reconcile.bytes)} MB; cold import wall/CPU empty module ${baseline.map((s) => `${s.wallMs.toFixed(0)}/${s.cpuMs.toFixed(0)}`).join(", ")} ms, 0 kinds ${none.map((s) => `${s.wallMs.toFixed(0)}/${s.cpuMs.toFixed(0)}`).join(", ")} ms, ${GCP_KINDS} kinds ${some.map((s) => `${s.wallMs.toFixed(0)}/${s.cpuMs.toFixed(0)}`).join(", ")} ms`,
  );
  const summary = (b: BuiltBundle) => ({
    bytes: b.bytes,
    gzipBytes: b.gzipBytes,
    contributors: b.contributors.slice(0, 10),
  });
  const result = {
    catalogKinds: sorted.length,
    activated: fifty.map((e) => e.typeName),
    reconcile: summary(reconcile),
    sweep: summary(sweep),
    dataBytes: data.bytes,
    loadAverage: { before: loadBefore, after: loadAfter },
    baseline,
    none,
    some,
  };
  return { rows: gcpRows(result), result };
}

type Summarised = { bytes: number; gzipBytes: number; contributors: [string, number][] };

function gcpRows(r: {
  reconcile: Summarised;
  sweep: Summarised;
  dataBytes: number;
  loadAverage: { before: number[]; after: number[] };
  baseline: Sample[];
  none: Sample[];
  some: Sample[];
}): Row[] {
  const mib = (b: number) => `${(b / 1024 ** 2).toFixed(2)} MB`;
  const top = (s: Summarised) =>
    s.contributors
      .slice(0, 3)
      .map(([p, b]) => `${p} ${mib(b)}`)
      .join(", ");
  const rows: Row[] = [
    {
      section: SECTION,
      metric: `gcp-reconcile bundle (any number of generated kinds: none baked in; largest: ${top(r.reconcile)})`,
      value: `${mib(r.reconcile.bytes)} (${Math.round(r.reconcile.gzipBytes / 1024)} kB gzip)`,
      target: `≤ ${GCP_BUNDLE_BUDGET_BYTES / 1024 ** 2} MB`,
      pass: r.reconcile.bytes <= GCP_BUNDLE_BUDGET_BYTES,
      range: "—",
    },
    {
      section: SECTION,
      metric: `gcp-sweep bundle (largest: ${top(r.sweep)})`,
      value: `${mib(r.sweep.bytes)} (${Math.round(r.sweep.gzipBytes / 1024)} kB gzip)`,
      target: "—",
      pass: undefined,
      range: "—",
    },
    {
      section: SECTION,
      metric:
        "the kinds as data beside it (gcp-kinds/: catalog.json + one spec per kind, read only when activated)",
      value: mib(r.dataBytes),
      target: "—",
      pass: undefined,
      range: "—",
    },
  ];
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  const load = (l: number[]) => l.map((x) => x.toFixed(1)).join(" ");
  rows.push({
    section: SECTION,
    metric: `for scale: Node's cold import of an empty module, wall (CPU ${Math.round(med(r.baseline.map((x) => x.cpuMs)))} ms, Node's start included); load average ${load(r.loadAverage.before)} → ${load(r.loadAverage.after)}`,
    value: `${Math.round(med(r.baseline.map((x) => x.wallMs)))} ms`,
    target: "—",
    pass: undefined,
    range: "—",
  });
  rows.push(...coldImportRows(SECTION, "gcp-reconcile ", r, GCP_KINDS, GCP_IMPORT_BUDGET_MS));
  return rows;
}
