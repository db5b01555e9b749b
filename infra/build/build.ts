// Builds one minified ESM bundle per function with esbuild, checks each bundle's import graph (one cloud's
// SDK never in the other cloud's bundle), assembles dist/gcp/ for `gcloud functions deploy`, and prints
// a table: bundle, minified size, gzip size, cold import time (median of fresh Node processes).
//
//   node infra/build/build.ts                       every bundle, measured
//   node infra/build/build.ts --only aws-reconcile,aws-sweep,aws-doorbell --no-measure
//   node infra/build/build.ts --only gcp-reconcile,gcp-sweep,gcp-doorbell --gcp-package
//   node infra/build/build.ts --why                 also what each package adds to each bundle
//
// Fails when aws-reconcile exceeds its budget (AWS_RECONCILE_BUDGET_BYTES) or a bundle imports what
// its platform must not carry.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { build, type Metafile } from "esbuild";
import { AWSCC_DIR, generateAwscc } from "../gen-awscc.ts";
import { GCP_GEN_DIR, generateGcp } from "../gen-gcp.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const DIST = path.join(ROOT, "dist");
export const AWS_RECONCILE_BUDGET_BYTES = 2.5 * 1024 * 1024;
const IMPORT_SAMPLES = 5;

type Platform = "aws" | "gcp" | "azure" | "any";

interface BundleSpec {
  name: string;
  entry: string;
  platform: Platform;
  /** Packages resolved at run time instead of bundled. */
  external?: string[];
  /**
   * Dynamic imports become chunks beside the bundle (dist/<name>-chunks/), loaded only when reached: the
   * forwarder loads either the SQS or the Pub/Sub adapter, and its pod has 128 MiB.
   */
  split?: boolean;
  /** Serves the generated AWS kinds: dist/awscc is copied beside it (copyAwsccData). */
  awsccData?: boolean;
  /** Serves the generated Google kinds: dist/gcp-kinds is copied beside it (copyGoogleData). */
  googleData?: boolean;
}

// Cloud Functions loads the function through its own copy of the framework: registering with a bundled
// copy would be invisible to it, so the framework stays external (dist/gcp/package.json depends on it).
const FUNCTIONS_FRAMEWORK = "@google-cloud/functions-framework";

/**
 * The generated AWS kinds as data beside the bundles that serve AWS (dist/awscc: the catalog and one small
 * JSON file per kind, ~13 MB, ~1.6 MB compressed): a function reads which kinds are activated at run time
 * (DRIFTLESS_ACTIVATE, the cluster's activation policies) and loads only those kinds' specs, so a kind
 * activated later is served without a rebuild (docs/awscc.md).
 */
export function copyAwsccData(dist = DIST): { dir: string; files: number; bytes: number } {
  generateAwscc(); // current already: nothing (a clone has it from `npm ci`)
  return copyData(AWSCC_DIR, path.join(dist, "awscc"));
}

/** A generated directory copied whole to `to` (replaced), with what it holds. */
function copyData(from: string, to: string): { dir: string; files: number; bytes: number } {
  rmSync(to, { recursive: true, force: true });
  cpSync(from, to, { recursive: true });
  let files = 0;
  let bytes = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const f = path.join(d, e.name);
      if (e.isDirectory()) walk(f);
      else {
        files++;
        bytes += statSync(f).size;
      }
    }
  };
  walk(to);
  return { dir: to, files, bytes };
}

/**
 * The generated Google kinds as data beside the bundles that serve Google Cloud (dist/gcp-kinds: the catalog
 * and one spec per kind; dist/gcp is the Cloud Functions source folder, which gets its own copy): like the
 * AWS kinds, the activated ones are chosen at run time (DRIFTLESS_ACTIVATE, the activation policies).
 */
export function copyGoogleData(dist = DIST): { dir: string; files: number; bytes: number } {
  generateGcp(); // current already: nothing (a clone has it from `npm ci`)
  return copyData(GCP_GEN_DIR, path.join(dist, "gcp-kinds"));
}

export const BUNDLES: BundleSpec[] = [
  { name: "aws-reconcile", entry: "functions/aws/reconcile.ts", platform: "aws", awsccData: true },
  { name: "aws-sweep", entry: "functions/aws/sweep.ts", platform: "aws", awsccData: true },
  { name: "aws-doorbell", entry: "functions/aws/doorbell.ts", platform: "aws" },
  {
    name: "gcp-reconcile",
    entry: "functions/gcp/reconcile.ts",
    platform: "gcp",
    external: [FUNCTIONS_FRAMEWORK],
    googleData: true,
  },
  {
    name: "gcp-sweep",
    entry: "functions/gcp/sweep.ts",
    platform: "gcp",
    external: [FUNCTIONS_FRAMEWORK],
    googleData: true,
  },
  // Its own server on Cloud Run (no Functions Framework: it would read every body before our code runs).
  { name: "gcp-doorbell", entry: "functions/gcp/doorbell.ts", platform: "gcp", googleData: true },
  { name: "forwarder", entry: "functions/forwarder.ts", platform: "any", split: true },
  { name: "cli", entry: "functions/cli/main.ts", platform: "any" },
];

/** Packages that must never be in a bundle of the given platform (checked in esbuild's metafile). */
// Function bundles reach the cluster through shared/kube/http.ts: client-node (its generated API, undici,
// ws, the proxy agents: ~2 MB minified) stays in the forwarder and the CLI, which watch and need every
// kubeconfig auth method.
const KUBE_CLIENT = [/node_modules\/@kubernetes\/client-node\//, /node_modules\/undici\//];
const FORBIDDEN: Record<Platform, RegExp[]> = {
  aws: [
    /node_modules\/@google-cloud\//,
    /node_modules\/google-gax\//,
    /node_modules\/@azure\//,
    ...KUBE_CLIENT,
  ],
  gcp: [/node_modules\/@aws-sdk\//, /node_modules\/@azure\//, ...KUBE_CLIENT],
  azure: [
    /node_modules\/@aws-sdk\//,
    /node_modules\/@google-cloud\//,
    /node_modules\/google-gax\//,
    ...KUBE_CLIENT,
  ],
  any: [],
};

// ESM has no require/__filename/__dirname; bundled CommonJS (google-gax, protobufjs…) needs them.
const BANNER = [
  'import { createRequire as __driftlessCreateRequire } from "node:module";',
  'import { fileURLToPath as __driftlessFileURLToPath } from "node:url";',
  'import { dirname as __driftlessDirname } from "node:path";',
  "const require = __driftlessCreateRequire(import.meta.url);",
  "const __filename = __driftlessFileURLToPath(import.meta.url);",
  "const __dirname = __driftlessDirname(__filename);",
].join("\n");

export class BundleGraphError extends Error {
  override name = "BundleGraphError";
}

/** The first forbidden input of a bundle with the chain that brought it in, or undefined. */
export function forbiddenInput(
  metafile: Metafile,
  platform: Platform,
): { input: string; via: string[] } | undefined {
  const patterns = FORBIDDEN[platform];
  const inputs = Object.keys(metafile.inputs);
  const bad = inputs.find((i) => patterns.some((p) => p.test(i)));
  if (!bad) return undefined;
  // Walk importers back to an entry point, so the message names the file to fix.
  const importers = new Map<string, string>();
  for (const [file, info] of Object.entries(metafile.inputs)) {
    for (const imp of info.imports) if (!importers.has(imp.path)) importers.set(imp.path, file);
  }
  const via: string[] = [];
  for (let at = importers.get(bad); at && via.length < 20; at = importers.get(at)) {
    via.push(at);
    if (!at.includes("node_modules")) break;
  }
  return { input: bad, via };
}

export interface BuiltBundle {
  name: string;
  file: string;
  bytes: number;
  gzipBytes: number;
  /** Chunks loaded with the entry (split bundles); the on-demand ones are not counted. */
  chunks?: number;
  importMs?: number;
  /** Bytes each package (or our own top-level folder) adds to the eager output, largest first. */
  contributors: [string, number][];
  /** Every file esbuild read to make it (paths relative to the repository), to tell when it is stale. */
  inputs: string[];
}

export async function buildBundle(spec: BundleSpec, outfile: string): Promise<BuiltBundle> {
  const chunkDir = path.join(path.dirname(outfile), `${spec.name}-chunks`);
  if (spec.split) rmSync(chunkDir, { recursive: true, force: true });
  const result = await build({
    ...(spec.split
      ? {
          entryPoints: { [path.basename(outfile, ".mjs")]: path.join(ROOT, spec.entry) },
          outdir: path.dirname(outfile),
          splitting: true,
          chunkNames: `${spec.name}-chunks/[name]-[hash]`,
          outExtension: { ".js": ".mjs" },
        }
      : { entryPoints: [path.join(ROOT, spec.entry)], outfile }),
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node22",
    minify: true,
    // Maps let Lambda (NODE_OPTIONS=--enable-source-maps) and Cloud Logging show file:line; without the
    // sources embedded they stay a fraction of the bundle's size.
    sourcemap: "linked",
    sourcesContent: false,
    legalComments: "none",
    metafile: true,
    logLevel: "warning",
    absWorkingDir: ROOT,
    banner: { js: BANNER },
    // The generated kinds a function serves are data beside the bundle, chosen at run time
    // (copyAwsccData, copyGoogleData): no spec is bundled.
    external: spec.external ?? [],
    // Prefer ES module builds (tree-shaking), as Node would resolve them for an import.
    mainFields: ["module", "main"],
    conditions: ["module", "import", "node"],
  });
  const found = forbiddenInput(result.metafile, spec.platform);
  if (found) {
    rmSync(outfile, { force: true });
    throw new BundleGraphError(
      `${spec.name}: ${found.input} must not be in a ${spec.platform.toUpperCase()} bundle; imported via ${found.via.join(" ← ")}`,
    );
  }
  // What loading the bundle reads: the entry and the chunks it imports statically (not the on-demand ones).
  const files = eagerOutputs(result.metafile, path.relative(ROOT, outfile));
  const code = Buffer.concat(files.map((f) => readFileSync(path.join(ROOT, f))));
  return {
    name: spec.name,
    file: outfile,
    bytes: code.length,
    gzipBytes: gzipSync(code).length,
    ...(files.length > 1 ? { chunks: files.length - 1 } : {}),
    contributors: contributors(result.metafile, files),
    inputs: Object.keys(result.metafile.inputs),
  };
}

/** What each package (`@aws-sdk/client-ec2`) or source folder (`shared/providers`) adds to the given outputs. */
export function contributors(metafile: Metafile, outputs: string[]): [string, number][] {
  const by = new Map<string, number>();
  for (const out of outputs) {
    for (const [input, info] of Object.entries(metafile.outputs[out]?.inputs ?? {})) {
      const pkg = packageOf(input);
      by.set(pkg, (by.get(pkg) ?? 0) + info.bytesInOutput);
    }
  }
  return [...by].sort((a, b) => b[1] - a[1]);
}

/** The package (`@aws-sdk/client-ec2`) or source folder (`shared/providers`) a bundle input comes from. */
export function packageOf(input: string): string {
  return /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ?? input.split("/").slice(0, 2).join("/");
}

/** The output file and every chunk it imports statically, transitively. */
export function eagerOutputs(metafile: Metafile, entry: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const imp of metafile.outputs[file]?.imports ?? []) {
      if (imp.kind === "import-statement" && !imp.external) visit(imp.path);
    }
  };
  visit(entry);
  return [...seen];
}

/** Median wall time of `await import(bundle)` in fresh Node processes (what a cold start pays to load code). */
export function coldImportMs(file: string, samples = IMPORT_SAMPLES): number {
  return coldImport(file, samples).wallMs;
}

/**
 * Medians of `await import(bundle)` in fresh Node processes: wall time, and the CPU time the process spent
 * (user + system) — on a loaded machine the wall time mostly measures the queue for a core. `env` adds to
 * the clean environment (an activation list read at run time).
 */
export function coldImport(
  file: string,
  samples = IMPORT_SAMPLES,
  env: Record<string, string> = {},
): { wallMs: number; cpuMs: number } {
  const script = [
    "const t = performance.now();",
    `await import(${JSON.stringify(`file://${file}`)});`,
    "const cpu = process.cpuUsage();",
    'process.stdout.write("\\ncold-import-ms=" + (performance.now() - t) + " cpu-ms=" + (cpu.user + cpu.system) / 1000 + "\\n");',
    "process.exit(0);",
  ].join("\n");
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < samples; i++) {
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: ROOT,
      // A clean environment: module scope reads config, and must not reach any real endpoint.
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "error", ...env },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 60_000,
    });
    // Module scope may log (a missing cluster at cold start): the marker line carries the times.
    const m = /cold-import-ms=([\d.]+) cpu-ms=([\d.]+)/.exec(out);
    wall.push(Number(m?.[1] ?? Number.NaN));
    cpu.push(Number(m?.[2] ?? Number.NaN));
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  return { wallMs: median(wall), cpuMs: median(cpu) };
}

/**
 * The generated Azure kinds as data beside a bundle (`<dir>/azure/`: catalog.json and one small spec per
 * kind), where shared/api/azure-gen/catalog.ts's azureGenDir() looks: a bundle carries no spec, the
 * activation list is read at run time and only the activated kinds' files are read. Returns the bytes copied.
 */
export function copyAzureKindsData(dir: string): number {
  return copyData(path.join(ROOT, ".generated/azure"), path.join(dir, "azure")).bytes;
}

/** dist/gcp: one source folder for every Cloud Function; index.mjs loads only the target's bundle. */
export function assembleGcpPackage(built: BuiltBundle[]): string {
  const dir = path.join(DIST, "gcp");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const targets: string[] = [];
  for (const b of built.filter((x) => x.name.startsWith("gcp-"))) {
    const target = b.name.slice("gcp-".length);
    targets.push(target);
    writeFileSync(path.join(dir, `${target}.mjs`), readFileSync(b.file));
    writeFileSync(path.join(dir, `${target}.mjs.map`), readFileSync(`${b.file}.map`));
  }
  const rootPkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
    version: string;
    dependencies: Record<string, string>;
  };
  const pkg = {
    name: "driftless-gcp-functions",
    version: rootPkg.version,
    private: true,
    type: "module",
    main: "index.mjs",
    engines: { node: ">=22" },
    dependencies: { [FUNCTIONS_FRAMEWORK]: rootPkg.dependencies[FUNCTIONS_FRAMEWORK] },
  };
  writeFileSync(path.join(dir, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  const index = [
    "// Cloud Functions entry: loads only the bundle of the function this instance serves.",
    "// FUNCTION_TARGET is the --entry-point; each bundle registers itself with the Functions Framework.",
    "const loaders = {",
    // The doorbell is not a function: Cloud Run runs doorbell.mjs itself (GOOGLE_ENTRYPOINT, deploy-gcp.md).
    ...targets
      .filter((t) => t !== "doorbell")
      .map((t) => `  ${JSON.stringify(t)}: () => import(${JSON.stringify(`./${t}.mjs`)}),`),
    "};",
    'const target = process.env.FUNCTION_TARGET ?? "reconcile";',
    "const load = loaders[target];",
    'if (!load) throw new Error("unknown FUNCTION_TARGET " + target + "; expected one of " + Object.keys(loaders).join(", "));',
    "await load();",
    "",
  ].join("\n");
  writeFileSync(path.join(dir, "index.mjs"), index);
  writeFileSync(path.join(dir, ".gcloudignore"), "node_modules/\n");
  copyGoogleData(dir);
  return dir;
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(2)} MB` : `${(n / 1024).toFixed(0)} kB`;
}

function printTable(rows: BuiltBundle[]): void {
  const header = ["bundle", "minified", "gzip", "cold import (median)"];
  const lines = rows.map((r) => [
    `dist/${path.basename(r.file)}${r.chunks ? ` (+${r.chunks} chunks)` : ""}`,
    formatBytes(r.bytes),
    formatBytes(r.gzipBytes),
    r.importMs === undefined ? "—" : `${r.importMs.toFixed(0)} ms`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? "").length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ");
  process.stdout.write(`${fmt(header)}\n${fmt(widths.map((w) => "-".repeat(w)))}\n`);
  for (const l of lines) process.stdout.write(`${fmt(l)}\n`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      only: { type: "string" },
      "gcp-package": { type: "boolean", default: false },
      "no-measure": { type: "boolean", default: false },
      why: { type: "boolean", default: false },
    },
  });
  const wanted = values.only ? new Set(values.only.split(",")) : undefined;
  const specs = BUNDLES.filter((b) => !wanted || wanted.has(b.name));
  if (wanted && specs.length !== wanted.size) {
    throw new Error(`unknown bundle in --only; known: ${BUNDLES.map((b) => b.name).join(", ")}`);
  }
  mkdirSync(DIST, { recursive: true });
  const built: BuiltBundle[] = [];
  for (const spec of specs) built.push(await buildBundle(spec, path.join(DIST, `${spec.name}.mjs`)));
  if (specs.some((s) => s.awsccData)) {
    const data = copyAwsccData();
    process.stdout.write(
      `generated AWS kinds' data: ${path.relative(ROOT, data.dir)}/ (${data.files} files, ${formatBytes(data.bytes)})\n`,
    );
  }
  if (specs.some((s) => s.googleData)) {
    const data = copyGoogleData();
    process.stdout.write(
      `generated Google kinds' data: ${path.relative(ROOT, data.dir)}/ (${data.files} files, ${formatBytes(data.bytes)})\n`,
    );
  }
  if (values["gcp-package"]) {
    const dir = assembleGcpPackage(built);
    process.stdout.write(`Cloud Functions source folder: ${path.relative(ROOT, dir)}/\n`);
  }
  if (!values["no-measure"]) for (const b of built) b.importMs = coldImportMs(b.file);
  printTable(built);
  if (values.why) {
    for (const b of built) {
      process.stdout.write(`\n${b.name}: largest contributors\n`);
      for (const [pkg, bytes] of b.contributors.slice(0, 15))
        process.stdout.write(`  ${formatBytes(bytes).padStart(9)}  ${pkg}\n`);
    }
  }
  const awsReconcile = built.find((b) => b.name === "aws-reconcile");
  if (awsReconcile && awsReconcile.bytes > AWS_RECONCILE_BUDGET_BYTES) {
    throw new Error(
      `aws-reconcile is ${formatBytes(awsReconcile.bytes)}, over its ${formatBytes(AWS_RECONCILE_BUDGET_BYTES)} budget (node infra/build/build.ts prints what each package adds with --why)`,
    );
  }
  for (const b of built) statSync(b.file);
}

if (import.meta.main) {
  main().catch((err: unknown) => {
    process.stderr.write(`build failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
