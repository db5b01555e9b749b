// The programs the tests spawn by the hundred, bundled once per change of their sources by the global setup
// (esbuild, as `npm run build` builds dist/cli.mjs), instead of Node stripping the types of every source
// file again in every process. Measured on the 2-core machine: `driftless get` 2.3 s of CPU from the
// sources, 0.8 s from the bundle; a crash-test worker 1.5 s to start, 0.25 s. They live two folders below
// the repository, as dist/cli.mjs does, so they find .generated/ and infra/migrate/ where the sources would.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { BUNDLES, buildBundle } from "../../infra/build/build.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const DIR = join(ROOT, ".build/test-bundles");
const cli = BUNDLES.find((b) => b.name === "cli");
if (!cli) throw new Error("infra/build/build.ts has no cli bundle");
const SPECS = [
  // The CLI exactly as it ships (test/integration/cli/helpers.ts).
  cli,
  // The crash tests' worker (test/faults/crash.test.ts): two processes per scenario.
  { name: "worker-child", entry: "test/faults/worker-child.ts", platform: "any" as const },
];
export type TestBundle = (typeof SPECS)[number]["name"];

/** The bundle of `name`, for `node <it> args…`. */
export function testBundle(name: TestBundle): string {
  const file = join(DIR, `${name}.mjs`);
  if (!existsSync(file)) {
    throw new Error(`${file} is missing: the global setup (test/support/global-stack.ts) builds it`);
  }
  return file;
}

/** Where the spawned bundles share V8's compiled code (NODE_COMPILE_CACHE): each compiles only what changed. */
export const TEST_COMPILE_CACHE = join(DIR, "compile-cache");

// Not esbuild inputs, but they change what it builds: the build spec and the installed packages.
const ALSO = ["infra/build/build.ts", "node_modules/.package-lock.json"];

type Stamps = Record<string, string>;

const stamp = (file: string): string => {
  try {
    const s = statSync(resolve(ROOT, file));
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return "missing";
  }
};

/** Each input's size and mtime when the bundle was built: any difference (sources, an npm ci) rebuilds it. */
const manifest = (name: string) => join(DIR, `${name}.inputs.json`);

function current(name: string): boolean {
  if (!existsSync(join(DIR, `${name}.mjs`)) || !existsSync(manifest(name))) return false;
  const recorded = JSON.parse(readFileSync(manifest(name), "utf8")) as Stamps;
  return Object.entries(recorded).every(([file, was]) => stamp(file) === was);
}

async function build(spec: (typeof SPECS)[number]): Promise<void> {
  // Built beside, then renamed: a test run's projects may each ask, and a spawned one never reads half a file.
  const tmp = join(DIR, `build-${spec.name}-${process.pid}`);
  try {
    const built = await buildBundle(spec, join(tmp, `${spec.name}.mjs`));
    const stamps: Stamps = {};
    for (const f of [...built.inputs, ...ALSO]) stamps[f] = stamp(f);
    for (const f of [`${spec.name}.mjs.map`, `${spec.name}.mjs`]) renameSync(join(tmp, f), join(DIR, f));
    writeFileSync(manifest(spec.name), JSON.stringify(stamps));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Builds the bundles whose inputs changed since they were built; returns their names. */
export async function ensureTestBundles(): Promise<string[]> {
  const stale = SPECS.filter((s) => !current(s.name));
  mkdirSync(DIR, { recursive: true });
  await Promise.all(stale.map(build));
  return stale.map((s) => s.name);
}
