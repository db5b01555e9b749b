// A scratch googleapis tree for extractor tests: one `google/demo/v1/demo.proto` per case, removed after the file.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

/** Writes a case's proto under its own directory and answers the tree's root, for `extract(root)`. */
export function demoProtos(prefix: string): (dir: string, proto: string) => string {
  const root = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  return (dir, proto) => {
    mkdirSync(join(root, dir, "google/demo/v1"), { recursive: true });
    writeFileSync(join(root, dir, "google/demo/v1/demo.proto"), proto);
    return join(root, dir);
  };
}
