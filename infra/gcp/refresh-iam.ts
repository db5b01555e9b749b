// Refreshes infra/gcp/google-iam-permissions.json.gz: every IAM permission name Google's predefined roles
// include (each role as Google's IAM API `roles.get` returns it), as the iam-dataset project collects them
// (github.com/iann0036/iam-dataset, gcp/roles/*.json, MIT). The generated kinds' permissions are derived
// from Google's `service.resource.verb` naming and kept only where this list confirms them (gen-gcp.ts).
//
//   npm run refresh:gcp-iam                       clones iam-dataset (depth 1) into a temporary directory
//   npm run refresh:gcp-iam -- --from DIR         a checkout (its HEAD commit and date are read)
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { IAM_FILE, IAM_FORMAT, type IamBundle } from "./facts.ts";

const SOURCE = "https://github.com/iann0036/iam-dataset";

if (import.meta.main) {
  const { values } = parseArgs({ options: { from: { type: "string" } } });
  let from = values.from;
  if (!from) {
    from = mkdtempSync(join(tmpdir(), "iam-dataset-"));
    execFileSync("git", ["clone", "--depth", "1", "--quiet", SOURCE, from], { stdio: "inherit" });
  }
  const git = (...args: string[]) => execFileSync("git", ["-C", from, ...args], { encoding: "utf8" }).trim();
  const dir = join(from, "gcp/roles");
  const files = readdirSync(dir).filter((f) => f.endsWith(".json"));
  const names = new Set<string>();
  for (const f of files) {
    const role = JSON.parse(readFileSync(join(dir, f), "utf8")) as { includedPermissions?: unknown };
    for (const p of Array.isArray(role.includedPermissions) ? role.includedPermissions : [])
      if (typeof p === "string" && /^[a-z0-9]+(\.[A-Za-z0-9]+){2,}$/.test(p)) names.add(p);
  }
  if (names.size < 5000) throw new Error(`only ${names.size} permissions found: refusing to write`);
  const bundle: IamBundle = {
    format: IAM_FORMAT,
    origin: {
      source: SOURCE,
      path: "gcp/roles/*.json (each predefined role as Google's IAM API roles.get returns it: includedPermissions)",
      commit: git("rev-parse", "HEAD"),
      committed: git("log", "-1", "--format=%cs"),
      retrieved: new Date().toISOString().slice(0, 10),
      licence: "MIT (iann0036/iam-dataset LICENSE); the permission names are Google's",
      roles: files.length,
    },
    permissions: [...names].sort(),
  };
  writeFileSync(IAM_FILE, gzipSync(JSON.stringify(bundle), { level: 9 }));
  process.stdout.write(`${names.size} permissions of ${files.length} predefined roles → ${IAM_FILE}\n`);
}
