// The `driftless` launcher (package.json "bin"): runs the built CLI, or the sources in a clone without a
// build, and refuses an old Node with a clear message instead of a syntax error.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/driftless.mjs");
const run = (node: string, bin: string, args: string[]) =>
  spawnSync(node, [bin, ...args], {
    encoding: "utf8",
    timeout: 60_000,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
  });

/** A Node older than 22 on this machine (the system one), if there is one. */
const oldNode = ["/usr/bin/node", "/usr/local/bin/node"].find((p) => {
  if (!existsSync(p)) return false;
  const v = spawnSync(p, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.trim();
  return Number(v.split(".")[0]) < 22;
});

const temp: string[] = [];
afterAll(() => {
  for (const dir of temp) rmSync(dir, { recursive: true, force: true });
});

describe("bin/driftless.mjs", () => {
  it("starts with a node shebang", () => {
    expect(readFileSync(BIN, "utf8").split("\n")[0]).toBe("#!/usr/bin/env node");
  });

  it("prints the help with Node 22 and exits 0", () => {
    const res = run(process.execPath, BIN, ["--help"]);
    expect(res.stderr).toBe("");
    expect(res.status).toBe(0);
    expect(res.stdout).toMatch(/^Usage: driftless /);
  });

  it("runs the TypeScript sources when there is no build (a clone)", () => {
    // The launcher beside the repo's sources, without dist/: it imports functions/cli/main.ts.
    const dir = mkdtempSync(join(tmpdir(), "driftless-bin-"));
    temp.push(dir);
    cpSync(BIN, join(dir, "bin/driftless.mjs"));
    symlinkSync(join(ROOT, "functions"), join(dir, "functions"));

    const res = run(process.execPath, join(dir, "bin/driftless.mjs"), ["--version"]);

    expect(res.stderr).toBe("");
    expect(res.status).toBe(0);
    expect(res.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const bad = run(process.execPath, join(dir, "bin/driftless.mjs"), ["get", "--nope"]);
    expect(bad.status).toBe(2); // the CLI's own exit code comes through
  });

  it.skipIf(!oldNode)("refuses Node < 22 with a clear message (exit 1)", () => {
    const res = run(oldNode ?? "", BIN, ["--help"]);
    expect(res.status).toBe(1);
    expect(res.stdout).toBe("");
    expect(res.stderr).toMatch(/^driftless needs Node\.js 22 or newer; this is Node\.js 2\d\./);
  });
});
