// 13. Generated Azure kinds (issue 30): what an Azure reconcile container carries and what its cold start
// costs with 0 and 50 generated kinds activated — activated at run time: the bundle holds no spec, the
// kinds are data beside it (azure/catalog.json and one spec per kind, infra/build/build.ts's
// copyAzureKindsData), and DRIFTLESS_ACTIVATE is read when the module loads. The bundle is
// bench/child/azure-kinds.ts (the worker core over the Azure registry; no Azure Functions trigger adapter
// exists yet). The 50 kinds are spread evenly over the catalog sorted by type, named by CRD name.
import path from "node:path";
import { buildBundle, coldImport, copyAzureKindsData } from "../../infra/build/build.ts";
import { generateAzure } from "../../infra/gen-azure.ts";
import { loadAzureCatalog } from "../../shared/api/azure-gen/catalog.ts";
import { coldImportRows, type Row } from "../lib/report.ts";
import { IMPORT_BUDGET_MS } from "./coldstart.ts";

const SECTION = "13 azure";
/** The targets: the Azure bundle with 50 activated kinds. */
export const AZURE_BUNDLE_BUDGET_BYTES = 2.5 * 1024 * 1024;
export const AZURE_KINDS = 50;

export async function measureAzure(ctx: { log: (s: string) => void; distDir: string }, samples = 7) {
  generateAzure();
  const sorted = [...loadAzureCatalog().kinds].sort((a, b) => a.type.localeCompare(b.type));
  const step = sorted.length / AZURE_KINDS;
  const fifty = Array.from({ length: AZURE_KINDS }, (_, i) => sorted[Math.floor(i * step)]).filter(
    (e) => e !== undefined,
  );
  const activate = fifty.map((e) => `${e.plural}.${e.group}.driftless.dev`).join(",");
  const bundle = await buildBundle(
    { name: "azure-kinds", entry: "bench/child/azure-kinds.ts", platform: "azure" },
    path.join(ctx.distDir, "azure-kinds.mjs"),
  );
  const dataBytes = copyAzureKindsData(ctx.distDir);
  // Round-robin, so a busy moment of the shared machine spreads over both points.
  const none: Array<{ wallMs: number; cpuMs: number }> = [];
  const some: Array<{ wallMs: number; cpuMs: number }> = [];
  for (let i = 0; i < samples; i++) {
    none.push(coldImport(bundle.file, 1));
    some.push(coldImport(bundle.file, 1, { DRIFTLESS_ACTIVATE: activate }));
  }
  ctx.log(
    `azure: bundle ${(bundle.bytes / 1024 ** 2).toFixed(2)} MB; cold import 0 kinds ${none.map((s) => s.wallMs.toFixed(0)).join(", ")} ms, ${AZURE_KINDS} kinds ${some.map((s) => s.wallMs.toFixed(0)).join(", ")} ms`,
  );
  const result = {
    catalogKinds: sorted.length,
    activated: fifty.map((e) => e.type),
    bundle: {
      bytes: bundle.bytes,
      gzipBytes: bundle.gzipBytes,
      contributors: bundle.contributors.slice(0, 10),
    },
    dataBytes,
    none,
    some,
  };
  return { rows: azureRows(result), result };
}

function azureRows(r: {
  bundle: { bytes: number; gzipBytes: number; contributors: [string, number][] };
  dataBytes: number;
  none: Array<{ wallMs: number; cpuMs: number }>;
  some: Array<{ wallMs: number; cpuMs: number }>;
}): Row[] {
  const mib = (b: number) => `${(b / 1024 ** 2).toFixed(2)} MB`;
  const top = r.bundle.contributors
    .slice(0, 3)
    .map(([p, b]) => `${p} ${mib(b)}`)
    .join(", ");
  const rows: Row[] = [
    {
      section: SECTION,
      metric: `Azure reconcile bundle (any number of generated kinds: none baked in; largest: ${top})`,
      value: `${mib(r.bundle.bytes)} (${Math.round(r.bundle.gzipBytes / 1024)} kB gzip)`,
      target: `≤ ${AZURE_BUNDLE_BUDGET_BYTES / 1024 ** 2} MB`,
      pass: r.bundle.bytes <= AZURE_BUNDLE_BUDGET_BYTES,
      range: "—",
    },
    {
      section: SECTION,
      metric: "the kinds as data beside it (catalog.json + one spec per kind, read only when activated)",
      value: mib(r.dataBytes),
      target: "—",
      pass: undefined,
      range: "—",
    },
  ];
  rows.push(...coldImportRows(SECTION, "", r, AZURE_KINDS, IMPORT_BUDGET_MS));
  return rows;
}
