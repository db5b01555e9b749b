// Refreshes infra/migrate/upjet-kinds.json.gz: what `driftless migrate` needs to know of the Upjet providers'
// kinds to map them onto driftless's generated kinds — per Upjet kind its Terraform resource type and its
// external-name configuration (config/externalname.go, as written), and the awscc Terraform provider's
// Terraform resource name → CloudFormation type list. Facts only, read from git directories:
//
//   npm run refresh:upjet-kinds -- --aws GITDIR --azure GITDIR --gcp GITDIR --awscc GITDIR [--rev REV]
//
// (clones of crossplane-contrib/provider-upjet-{aws,azure,gcp} and hashicorp/terraform-provider-awscc;
// `git clone --bare --filter=blob:none URL` is enough). Nothing of the repositories' code is taken.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import {
  UPJET_FACTS_FILE,
  UPJET_FACTS_FORMAT,
  type UpjetCloud,
  type UpjetFacts,
  type UpjetOrigin,
} from "../../shared/ops/migrate-upjet-facts.ts";

const gitOf = (gitDir: string) => (args: string[], input?: string) =>
  execFileSync("git", ["-C", gitDir, ...args], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
    ...(input === undefined ? {} : { input }),
  });

function originOf(gitDir: string, repo: string, rev: string, licence: string): UpjetOrigin {
  const [commit = "", committed = ""] = gitOf(gitDir)(["log", "-1", "--format=%H %cs", rev])
    .trim()
    .split(" ");
  return { source: `https://github.com/${repo}`, commit, committed, licence };
}

/**
 * Every kind of an Upjet provider: its v1 group (`sqs.aws.upbound.io`; the namespaced `.m.` groups hold the
 * same kinds), kind, Terraform resource type (zz_<kind>_terraformed.go) and external-name expression.
 */
function upjetKinds(gitDir: string, rev: string, prefix: string): Record<string, [string, string]> {
  const git = gitOf(gitDir);
  const groups = new Map<string, string>();
  // CRDGroup per package directory (apis/cluster/<svc>/<version>/).
  for (const line of git(["grep", "-e", 'CRDGroup   = "', rev, "--", "apis/cluster/"]).split("\n")) {
    const m = /^[^:]+:(apis\/cluster\/[^/]+\/[^/]+)\/[^:]+:\s*CRDGroup\s*=\s*"([^"]+)"/.exec(line);
    if (m?.[1] && m[2]) groups.set(m[1], m[2]);
  }
  const ext = externalNames(gitDir, rev, prefix);
  const out: Record<string, [string, string]> = {};
  const lines = git([
    "grep",
    "-A1",
    "-e",
    "GetTerraformResourceType() string",
    rev,
    "--",
    "apis/cluster/",
  ]).split("\n");
  for (let i = 0; i < lines.length; i++) {
    const head = /^[^:]+:(apis\/cluster\/[^/]+\/[^/]+)\/[^:]+:func \(mg \*(\w+)\)/.exec(lines[i] ?? "");
    const tf = /return "([^"]+)"/.exec(lines[i + 1] ?? "");
    if (!head?.[1] || !head[2] || !tf?.[1]) continue;
    const group = groups.get(head[1]);
    if (!group) throw new Error(`${head[1]}: no CRDGroup`);
    out[`${group}/${head[2]}`] = [tf[1], ext[tf[1]] ?? ""];
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** config/externalname*.go: `"<tf type>": <expression>,` on one line, the expression as written. */
function externalNames(gitDir: string, rev: string, prefix: string): Record<string, string> {
  const git = gitOf(gitDir);
  const files = git(["ls-tree", "--name-only", rev, "config/"])
    .split("\n")
    .filter((f) => /^config\/externalname[a-z]*\.go$/.test(f) && !f.endsWith("_test.go"));
  const out: Record<string, string> = {};
  for (const f of files)
    for (const m of git(["show", `${rev}:${f}`]).matchAll(
      new RegExp(`^\\s*"(${prefix}_[a-z0-9_]+)":\\s*(.+?),?\\s*$`, "gm"),
    ))
      if (m[1] && m[2] && !(m[1] in out)) out[m[1]] = m[2].replace(/,$/, "");
  return out;
}

/** The awscc provider's newest available_schemas.<date>.hcl: `resource_schema "aws_x_y"` → CloudFormation type. */
function awsccTypes(gitDir: string, rev: string): { file: string; types: Record<string, string> } {
  const git = gitOf(gitDir);
  const dir = "internal/provider/generators/allschemas/";
  const file = git(["ls-tree", "--name-only", rev, dir])
    .split("\n")
    .filter((f) => /available_schemas\.\d{4}-\d{2}-\d{2}\.hcl$/.test(f))
    .sort()
    .at(-1);
  if (!file) throw new Error(`${gitDir}: no ${dir}available_schemas.<date>.hcl`);
  const types: Record<string, string> = {};
  for (const m of git(["show", `${rev}:${file}`]).matchAll(
    /resource_schema "([a-z0-9_]+)" \{\s*cloudformation_type_name\s*=\s*"([^"]+)"/g,
  ))
    if (m[1] && m[2]) types[m[1]] = m[2];
  return { file, types };
}

export function upjetFacts(dirs: Record<UpjetCloud | "awscc", string>, rev = "HEAD"): UpjetFacts {
  const awscc = awsccTypes(dirs.awscc, rev);
  return {
    format: UPJET_FACTS_FORMAT,
    retrieved: new Date().toISOString().slice(0, 10),
    origin: {
      aws: originOf(dirs.aws, "crossplane-contrib/provider-upjet-aws", rev, "Apache-2.0"),
      azure: originOf(dirs.azure, "crossplane-contrib/provider-upjet-azure", rev, "Apache-2.0"),
      gcp: originOf(dirs.gcp, "crossplane-contrib/provider-upjet-gcp", rev, "Apache-2.0"),
      awscc: {
        ...originOf(dirs.awscc, "hashicorp/terraform-provider-awscc", rev, "MPL-2.0"),
        file: awscc.file,
      },
    },
    kinds: {
      aws: upjetKinds(dirs.aws, rev, "aws"),
      azure: upjetKinds(dirs.azure, rev, "azurerm"),
      gcp: upjetKinds(dirs.gcp, rev, "google"),
    },
    awsccTypes: awscc.types,
  };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      aws: { type: "string" },
      azure: { type: "string" },
      gcp: { type: "string" },
      awscc: { type: "string" },
      rev: { type: "string", default: "HEAD" },
    },
  });
  const { aws, azure, gcp, awscc } = values;
  if (!aws || !azure || !gcp || !awscc)
    throw new Error(
      "usage: refresh-upjet.ts --aws GITDIR --azure GITDIR --gcp GITDIR --awscc GITDIR [--rev REV]",
    );
  const facts = upjetFacts({ aws, azure, gcp, awscc }, values.rev);
  writeFileSync(UPJET_FACTS_FILE, gzipSync(JSON.stringify(facts), { level: 9 }));
  const n = (c: UpjetCloud) => Object.keys(facts.kinds[c]).length;
  console.log(
    `${UPJET_FACTS_FILE}: aws ${n("aws")}, azure ${n("azure")}, gcp ${n("gcp")} Upjet kinds; ${Object.keys(facts.awsccTypes).length} awscc types`,
  );
}
