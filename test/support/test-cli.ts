// The CLI the integration tests spawn: the bundle `npm run build` ships as dist/cli.mjs (the same esbuild
// spec), built once per test run from the current sources by the global setup, not Node stripping the
// types of ~130 source files in every one of the ~130 processes the tests start. Measured on the 2-core
// machine: `driftless get` 2.3 s of CPU from the sources, 0.8 s from the bundle (0.25 s for --version with
// the compile cache below). It lives two folders below the repository, as dist/cli.mjs does, so it finds
// .generated/ and infra/migrate/ where the sources would.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { BUNDLES, buildBundle } from "../../infra/build/build.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const DIR = join(ROOT, ".build/test-cli");
/** The bundle every spawned `driftless` runs (test/integration/cli/helpers.ts). */
export const TEST_CLI = join(DIR, "cli.mjs");
/** Where the spawned CLIs share V8's compiled code (NODE_COMPILE_CACHE): each one compiles only what changed. */
export const TEST_CLI_COMPILE_CACHE = join(DIR, "compile-cache");
/** Each input's size and mtime when the bundle was built: any difference (sources, an npm ci) rebuilds it. */
const MANIFEST = join(DIR, "inputs.json");
// Not esbuild inputs, but they change what it builds: the spec and the installed packages.
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

function current(): boolean {
  if (!existsSync(TEST_CLI) || !existsSync(MANIFEST)) return false;
  const recorded = JSON.parse(readFileSync(MANIFEST, "utf8")) as Stamps;
  return Object.entries(recorded).every(([file, was]) => stamp(file) === was);
}

/** Builds the test CLI unless the one there was built from the same files; returns whether it built. */
export async function ensureTestCli(): Promise<boolean> {
  if (current()) return false;
  const spec = BUNDLES.find((b) => b.name === "cli");
  if (!spec) throw new Error("infra/build/build.ts has no cli bundle");
  mkdirSync(DIR, { recursive: true });
  // Built beside, then renamed: a test run's projects may each ask, and a spawned CLI never reads half a file.
  const tmp = join(DIR, `build-${process.pid}`);
  try {
    const built = await buildBundle(spec, join(tmp, "cli.mjs"));
    const stamps: Stamps = {};
    for (const f of [...built.inputs, ...ALSO]) stamps[f] = stamp(f);
    renameSync(join(tmp, "cli.mjs.map"), `${TEST_CLI}.map`);
    renameSync(join(tmp, "cli.mjs"), TEST_CLI);
    writeFileSync(MANIFEST, JSON.stringify(stamps));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return true;
}
