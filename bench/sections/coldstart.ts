// 5. Cold start: what each function's bundle weighs (minified and gzip; split bundles count the chunks
// loaded at start) and what importing it costs in a fresh Node process — infra/build/build.ts's own
// build and measurement, into dist/bench/ so the deploy artifacts in dist/ are left alone.
import path from "node:path";
import {
  AWS_RECONCILE_BUDGET_BYTES,
  BUNDLES,
  type BuiltBundle,
  buildBundle,
  coldImportMs,
} from "../../infra/build/build.ts";
import type { BenchContext } from "../lib/context.ts";
import type { Row } from "../lib/report.ts";
import { type Summary, summarize } from "../lib/stats.ts";

export const FUNCTION_BUNDLES = ["aws-reconcile", "aws-sweep", "forwarder", "gcp-reconcile", "gcp-sweep"];
export const IMPORT_BUDGET_MS = 350;

export interface Built {
  bundles: BuiltBundle[];
  /** The benchmark's own Lambda-container harness (bench/child/worker.ts). */
  worker: BuiltBundle;
}

export async function buildAll(ctx: BenchContext): Promise<Built> {
  const bundles: BuiltBundle[] = [];
  // Quick mode builds only what it measures against a target or runs (the others have no target).
  const wanted = ctx.quick ? ["aws-reconcile", "forwarder"] : FUNCTION_BUNDLES;
  for (const spec of BUNDLES.filter((b) => wanted.includes(b.name))) {
    bundles.push(await buildBundle(spec, path.join(ctx.distDir, `${spec.name}.mjs`)));
  }
  const worker = await buildBundle(
    { name: "bench-worker", entry: "bench/child/worker.ts", platform: "aws" },
    path.join(ctx.distDir, "bench-worker.mjs"),
  );
  return { bundles, worker };
}

const mbOf = (bytes: number) => bytes / 1024 / 1024;
const size = (b: BuiltBundle) =>
  `${mbOf(b.bytes).toFixed(2)} MB (${(b.gzipBytes / 1024).toFixed(0)} kB gzip${b.chunks ? `, +${b.chunks} chunks` : ""})`;

export function measureColdStart(ctx: BenchContext, built: Built) {
  const imports = new Map<string, { samples: number[]; summary: Summary }>();
  const wanted = (name: string) =>
    name === "aws-reconcile" ? ctx.sizes.importSamples : Math.ceil(ctx.sizes.importSamples / 2);
  // Round-robin over the bundles, so a busy moment of the machine spreads over all of them.
  for (let i = 0; i < ctx.sizes.importSamples; i++) {
    for (const b of built.bundles) {
      if (i >= wanted(b.name)) continue;
      const entry = imports.get(b.name) ?? { samples: [], summary: summarize([]) };
      entry.samples.push(coldImportMs(b.file, 1));
      imports.set(b.name, entry);
    }
  }
  for (const [name, entry] of imports) {
    entry.summary = summarize(entry.samples);
    ctx.log(`cold import ${name}: ${entry.samples.map((x) => x.toFixed(0)).join(", ")} ms`);
  }
  const rows: Row[] = [];
  for (const b of built.bundles) {
    const imp = imports.get(b.name)?.summary ?? summarize([]);
    const isTarget = b.name === "aws-reconcile";
    rows.push({
      section: "5 cold start",
      metric: `${b.name} bundle, minified`,
      value: size(b),
      target: isTarget ? `≤ ${mbOf(AWS_RECONCILE_BUDGET_BYTES)} MB` : "—",
      pass: isTarget ? b.bytes <= AWS_RECONCILE_BUDGET_BYTES : undefined,
      range: "—",
    });
    rows.push({
      section: "5 cold start",
      metric: `${b.name} cold import (median of ${imports.get(b.name)?.samples.length ?? 0} fresh processes)`,
      value: `${Math.round(imp.median)} ms`,
      target: isTarget ? `≤ ${IMPORT_BUDGET_MS} ms` : "—",
      pass: isTarget ? imp.median <= IMPORT_BUDGET_MS : undefined,
      range: `${Math.round(imp.min)}–${Math.round(imp.max)} ms`,
    });
  }
  return {
    rows,
    result: built.bundles.map((b) => ({
      name: b.name,
      bytes: b.bytes,
      gzipBytes: b.gzipBytes,
      chunks: b.chunks ?? 0,
      importMs: imports.get(b.name)?.summary,
      importSamplesMs: imports.get(b.name)?.samples,
    })),
  };
}
