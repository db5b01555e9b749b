// The operator docs stay true to the code: every engine error message has a troubleshooting entry, and
// every relative link in docs/ and README.md points at a file that exists.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { Msg } from "../../../shared/reconciler/reconciler.ts";

const ROOT = resolve(import.meta.dirname, "../../..");

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? markdownFiles(p) : f.endsWith(".md") ? [p] : [];
  });
}

describe("docs", () => {
  it("troubleshooting.md explains every error message of the engine", () => {
    const text = readFileSync(join(ROOT, "docs/troubleshooting.md"), "utf8");
    const missing = Object.entries(Msg)
      // The observe-only message is long; its first clause is what users search for.
      .map(([k, v]) => [k, v.split(";")[0] ?? v] as const)
      .filter(([, v]) => !text.includes(v));
    expect(missing).toEqual([]);
  });

  it("links only to files that exist", () => {
    const broken: string[] = [];
    for (const file of [join(ROOT, "README.md"), ...markdownFiles(join(ROOT, "docs"))]) {
      const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (!target || /^(https?:|mailto:|#)/.test(target)) continue;
        const path = target.split("#")[0] ?? "";
        if (!existsSync(resolve(dirname(file), path)))
          broken.push(`${file.slice(ROOT.length + 1)} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("README links every operator doc", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    for (const doc of [
      "getting-started.md",
      "concepts.md",
      "kinds/README.md",
      "cli.md",
      "operations.md",
      "security.md",
      "migrating-from-crossplane.md",
      "troubleshooting.md",
      "deploy-aws.md",
      "deploy-gcp.md",
    ]) {
      expect(readme, doc).toContain(`(docs/${doc})`);
    }
  });
});
