// Where a refresh command reads a public repository's files from: `--from DIR` (a checkout or a bare mirror),
// else a shallow clone with blobs fetched on demand. `git show HEAD:…` reads both alike (HEAD's tree).
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

/** `git -C <repo> …` over the repository the command line names (`--from`), or a fresh shallow clone of `source`. */
export function gitSource(source: string, prefix: string): (...args: string[]) => string {
  const { values } = parseArgs({ options: { from: { type: "string" } } });
  let from = values.from;
  if (!from) {
    from = mkdtempSync(join(tmpdir(), prefix));
    execFileSync(
      "git",
      ["clone", "--depth", "1", "--filter=blob:none", "--no-checkout", "--quiet", source, from],
      { stdio: "inherit" },
    );
  }
  const dir = from;
  return (...args) =>
    execFileSync("git", ["-C", dir, ...args], { encoding: "utf8", maxBuffer: 64 << 20 }).trim();
}
