// 16. The GCP reconcile function (issue 31): what its bundle carries and what its cold start costs with 0 and
// 50 generated Google kinds activated. Unlike the Azure and AWS generated kinds, the Google ones are baked
// into the bundle at build time (infra/build/build.ts's activation plugin reads DRIFTLESS_ACTIVATE), so the
// real gcp-reconcile entry is built twice: once with no activation, once with 50 kinds spread evenly over the
// catalog sorted by type and named by CRD name. gcp-sweep is built beside them for its size.
import path from "node:path";
import { BUNDLES, type BuiltBundle, buildBundle, coldImport } from "../../infra/build/build.ts";
import { generateGcp } from "../../infra/gen-gcp.ts";
import { loadGoogleCatalog } from "../../shared/api/googleapis/catalog.ts";
import { activatedGoogleSpecs } from "../../shared/providers/gcp/generic/activated.ts";
import { type Row, range } from "../lib/report.ts";
import { summarize } from "../lib/stats.ts";
import { IMPORT_BUDGET_MS } from "./coldstart.ts";

const SECTION = "16 gcp";
/** The issue's targets: the GCP reconcile bundle with 50 activated generated kinds (the build's MB = MiB). */
export const GCP_BUNDLE_BUDGET_BYTES = 3 * 1024 * 1024;
export const GCP_IMPORT_BUDGET_MS = IMPORT_BUDGET_MS;
export const GCP_KINDS = 50;

type Sample = { wallMs: number; cpuMs: number };

/** The spec of one of the build's bundles, by name. */
function bundleSpec(name: string) {
  const spec = BUNDLES.find((b) => b.name === name);
  if (!spec) throw new Error(`infra/build/build.ts has no bundle ${name}`);
  return spec;
}

/** `fn` with DRIFTLESS_ACTIVATE set to `activate` (unset for undefined) for its duration alone. */
async function activating<T>(activate: string | undefined, fn: () => T | Promise<T>): Promise<T> {
  const before = process.env.DRIFTLESS_ACTIVATE;
  if (activate === undefined) delete process.env.DRIFTLESS_ACTIVATE;
  else process.env.DRIFTLESS_ACTIVATE = activate;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.DRIFTLESS_ACTIVATE;
    else process.env.DRIFTLESS_ACTIVATE = before;
  }
}

/** Builds `name` into `file`, the build's activation plugin reading `activate`. */
const buildWith = (name: string, file: string, activate: string | undefined): Promise<BuiltBundle> =>
  activating(activate, () => buildBundle(bundleSpec(name), file));

export async function measureGcp(ctx: { log: (s: string) => void; distDir: string }, samples = 7) {
  generateGcp();
  const sorted = [...loadGoogleCatalog().kinds].sort((a, b) => a.typeName.localeCompare(b.typeName));
  const step = sorted.length / GCP_KINDS;
  const fifty = Array.from({ length: GCP_KINDS }, (_, i) => sorted[Math.floor(i * step)]).filter(
    (e) => e !== undefined,
  );
  const activate = fifty.map((e) => `${e.plural}.${e.group}.driftless.dev`).join(",");
  // The list must select exactly those kinds, or the figure would be of another bundle.
  const selected = await activating(activate, activatedGoogleSpecs);
  if (selected.length !== GCP_KINDS)
    throw new Error(
      `the activation list selects ${selected.length} generated Google kinds, not ${GCP_KINDS}`,
    );

  const none = await buildWith("gcp-reconcile", path.join(ctx.distDir, "gcp-reconcile-0.mjs"), undefined);
  const some = await buildWith("gcp-reconcile", path.join(ctx.distDir, "gcp-reconcile-50.mjs"), activate);
  const sweep = await buildWith("gcp-sweep", path.join(ctx.distDir, "gcp-sweep-0.mjs"), undefined);
  // Round-robin, so a busy moment of the shared machine spreads over both points. The activation list is
  // also given at run time, as a deployed function has it.
  const noneImports: Sample[] = [];
  const someImports: Sample[] = [];
  for (let i = 0; i < samples; i++) {
    noneImports.push(coldImport(none.file, 1));
    someImports.push(coldImport(some.file, 1, { DRIFTLESS_ACTIVATE: activate }));
  }
  const mb = (b: number) => (b / 1024 ** 2).toFixed(2);
  ctx.log(
    `gcp: gcp-reconcile ${mb(none.bytes)} MB (0 kinds), ${mb(some.bytes)} MB (${GCP_KINDS} kinds); cold import wall/CPU 0 kinds ${noneImports.map((s) => `${s.wallMs.toFixed(0)}/${s.cpuMs.toFixed(0)}`).join(", ")} ms, ${GCP_KINDS} kinds ${someImports.map((s) => `${s.wallMs.toFixed(0)}/${s.cpuMs.toFixed(0)}`).join(", ")} ms`,
  );
  const summary = (b: BuiltBundle) => ({
    bytes: b.bytes,
    gzipBytes: b.gzipBytes,
    contributors: b.contributors.slice(0, 10),
  });
  const result = {
    catalogKinds: sorted.length,
    activated: fifty.map((e) => e.typeName),
    reconcile0: summary(none),
    reconcile50: summary(some),
    sweep0: summary(sweep),
    none: noneImports,
    some: someImports,
  };
  return { rows: gcpRows(result), result };
}

type Summarised = { bytes: number; gzipBytes: number; contributors: [string, number][] };

function gcpRows(r: {
  reconcile0: Summarised;
  reconcile50: Summarised;
  sweep0: Summarised;
  none: Sample[];
  some: Sample[];
}): Row[] {
  const mib = (b: number) => `${(b / 1024 ** 2).toFixed(2)} MB`;
  const msf = (x: number) => `${Math.round(x)} ms`;
  const top = (s: Summarised) =>
    s.contributors
      .slice(0, 3)
      .map(([p, b]) => `${p} ${mib(b)}`)
      .join(", ");
  const bundleRow = (what: string, s: Summarised, target: boolean): Row => ({
    section: SECTION,
    metric: `${what} (largest: ${top(s)})`,
    value: `${mib(s.bytes)} (${Math.round(s.gzipBytes / 1024)} kB gzip)`,
    target: target ? `≤ ${GCP_BUNDLE_BUDGET_BYTES / 1024 ** 2} MB` : "—",
    pass: target ? s.bytes <= GCP_BUNDLE_BUDGET_BYTES : undefined,
    range: "—",
  });
  const rows: Row[] = [
    bundleRow("gcp-reconcile bundle, no generated kind", r.reconcile0, false),
    bundleRow(`gcp-reconcile bundle, ${GCP_KINDS} generated kinds baked in`, r.reconcile50, true),
    bundleRow("gcp-sweep bundle, no generated kind", r.sweep0, false),
  ];
  for (const [what, s, target] of [
    ["0 generated kinds", r.none, false],
    [`${GCP_KINDS} generated kinds activated`, r.some, true],
  ] as const) {
    const wall = summarize(s.map((x) => x.wallMs));
    const cpu = summarize(s.map((x) => x.cpuMs));
    // On a loaded machine the wall time is mostly the queue for a core: the CPU time stands beside it.
    rows.push({
      section: SECTION,
      metric: `gcp-reconcile cold import, ${what}: wall (CPU ${msf(cpu.median)}, ${range(cpu.min, cpu.max, msf)})`,
      value: msf(wall.median),
      target: target ? `≤ ${GCP_IMPORT_BUDGET_MS} ms` : "—",
      pass: target ? wall.median <= GCP_IMPORT_BUDGET_MS : undefined,
      range: range(wall.min, wall.max, msf),
    });
  }
  return rows;
}
