// Refreshes infra/awscc/registry-schemas.json.gz: the CloudFormation registry resource schemas (the
// resource provider schema format: writeOnlyProperties, createOnlyProperties, readOnlyProperties as JSON
// pointers at any depth, primaryIdentifier, tagging, and handlers.*.permissions where the copy keeps them)
// that infra/gen-awscc.ts reads the generated kinds' facts from. One command, two sources:
//
//   npm run refresh:awscc-schemas                    the copy cfn-lint ships (its us-east-1 provider list)
//   npm run refresh:awscc-schemas -- --from DIR --origin TEXT --licence TEXT [--region R]
//       a directory of schema files as AWS publishes them (CloudformationSchema.zip, extracted, or one
//       `aws cloudformation describe-type --query Schema` answer per file): these keep handler permissions
//   npm run refresh:awscc-schemas -- --handlers-from GITDIR [--rev REV]
//       only the facts cfn-lint drops (handlers: permissions, timeouts, the list handler's required
//       ResourceModel properties; tagging), into handler-facts.json.gz,
//       from a clone of hashicorp/terraform-provider-awscc (its copy of every us-east-1 schema Cloud Control
//       provisions: internal/service/cloudformation/schemas/, listed by the newest
//       internal/provider/generators/allschemas/available_schemas.<date>.hcl); combinable with the above
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { generateAwscc } from "../gen-awscc.ts";
import {
  HANDLER_FACTS_FILE,
  HANDLER_FACTS_FORMAT,
  type HandlerFacts,
  type HandlerFactsBundle,
  REGISTRY_BUNDLE_FILE as REGISTRY_BUNDLE,
  REGISTRY_BUNDLE_FORMAT,
  type RegistryBundle,
  type RegistrySchema,
} from "./registry.ts";

const TF_SCHEMAS = "internal/service/cloudformation/schemas";
const TF_LISTS = "internal/provider/generators/allschemas";

/**
 * The handler and tagging facts of every type the awscc Terraform provider's repository lists as
 * available to Cloud Control (its allschemas generator keeps the registry's FULLY_MUTABLE and IMMUTABLE
 * types): read from a git directory at `rev`, nothing else of the repository is taken.
 */
export function handlerFactsFromTerraform(gitDir: string, rev = "HEAD"): HandlerFactsBundle {
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", gitDir, ...args], { encoding: "utf8", maxBuffer: 1 << 30 });
  const [commit = "", committed = ""] = git("log", "-1", "--format=%H %cs", rev).trim().split(" ");
  const lists = git("ls-tree", "--name-only", rev, `${TF_LISTS}/`)
    .split("\n")
    .filter((f) => /available_schemas\.\d{4}-\d{2}-\d{2}\.hcl$/.test(f))
    .sort();
  const newest = lists.at(-1);
  if (!newest) throw new Error(`${gitDir}@${rev}: no ${TF_LISTS}/available_schemas.<date>.hcl`);
  const available = [
    ...git("show", `${rev}:${newest}`).matchAll(/cloudformation_type_name\s*=\s*"([^"]+)"/g),
  ].map((m) => m[1] ?? "");
  const types: Record<string, HandlerFacts> = {};
  const withoutSchema: string[] = [];
  // One `git cat-file --batch` for every schema file: 1,500 `git show`s take a minute.
  const paths = available.map((t) => `${rev}:${TF_SCHEMAS}/${t.replaceAll("::", "_")}.json`);
  const out = execFileSync("git", ["-C", gitDir, "cat-file", "--batch"], {
    input: `${paths.join("\n")}\n`,
    maxBuffer: 1 << 30,
  });
  let at = 0;
  for (const [i, typeName] of available.entries()) {
    const nl = out.indexOf(10, at);
    const header = out.subarray(at, nl).toString("utf8");
    if (header.endsWith(" missing")) {
      // Listed, but the repository has not downloaded its schema yet: no facts, said in the origin.
      withoutSchema.push(typeName);
      at = nl + 1;
      continue;
    }
    const size = Number(header.split(" ")[2]);
    const schema = JSON.parse(out.subarray(nl + 1, nl + 1 + size).toString("utf8")) as RegistrySchema;
    at = nl + 1 + size + 1;
    if (schema.typeName !== typeName)
      throw new Error(`${paths[i]} holds ${schema.typeName}, not ${typeName}`);
    if (!schema.handlers) throw new Error(`${paths[i]}: no handlers`);
    const handlers: HandlerFacts["handlers"] = {};
    for (const [h, v] of Object.entries(schema.handlers).sort(([a], [b]) => a.localeCompare(b)))
      handlers[h as keyof typeof handlers] = {
        permissions: [...(v?.permissions ?? [])],
        ...(v?.timeoutInMinutes ? { timeoutInMinutes: v.timeoutInMinutes } : {}),
        // Only what a ListResources call needs: the properties its ResourceModel must carry.
        ...(v?.handlerSchema?.required?.length
          ? { handlerSchema: { required: [...v.handlerSchema.required] } }
          : {}),
      };
    types[typeName] = { handlers, ...(schema.tagging ? { tagging: schema.tagging } : {}) };
  }
  return {
    format: HANDLER_FACTS_FORMAT,
    origin: {
      source: `https://github.com/hashicorp/terraform-provider-awscc ${TF_SCHEMAS}/ (the types listed in ${newest}): the CloudFormation registry schemas of us-east-1 as DescribeType returns them`,
      commit,
      committed,
      region: "us-east-1",
      licence:
        "facts from schemas AWS publishes through the CloudFormation registry (DescribeType); the repository holding the copy is MPL-2.0",
      retrieved: new Date().toISOString().slice(0, 10),
      listedWithoutSchema: withoutSchema,
    },
    types: Object.fromEntries(Object.entries(types).sort(([a], [b]) => a.localeCompare(b))),
  };
}

/** cfn-lint's schema data: one file per schema version, and per region a Python map of type → file. */
function fromCfnLint(region: string): RegistryBundle {
  const probe = execFileSync(
    "python3",
    [
      "-c",
      "import cfnlint, os, importlib.metadata as m; print(os.path.dirname(cfnlint.__file__)); print(m.version('cfn-lint'))",
    ],
    { encoding: "utf8" },
  ).trim();
  const [dir = "", version = ""] = probe.split("\n");
  const data = join(dir, "data/schemas");
  const list = readFileSync(join(data, "providers", `${region.replaceAll("-", "_")}.py`), "utf8");
  const schemas: Record<string, RegistrySchema> = {};
  for (const m of list.matchAll(/"([A-Za-z0-9]+::[A-Za-z0-9]+::[A-Za-z0-9]+)": "([0-9a-f]+)"/g)) {
    const [, typeName = "", file = ""] = m;
    schemas[typeName] = JSON.parse(readFileSync(join(data, "resources", `${file}.json`), "utf8"));
  }
  return {
    format: REGISTRY_BUNDLE_FORMAT,
    origin: {
      source: `cfn-lint ${version} (PyPI package cfn-lint, https://github.com/aws-cloudformation/cfn-lint), cfnlint/data/schemas: the CloudFormation registry resource schemas of ${region} with cfn-lint's schema patches, descriptions and handlers removed by cfn-lint`,
      region,
      licence: "MIT-0 (cfn-lint); the schemas are published by AWS through the CloudFormation registry",
      retrieved: new Date().toISOString().slice(0, 10),
      handlers: false,
    },
    schemas: sorted(schemas),
  };
}

/** A directory of registry schema files (any names; each file's typeName says which type it is). */
function fromDirectory(dir: string, origin: string, licence: string, region: string): RegistryBundle {
  const schemas: Record<string, RegistrySchema> = {};
  for (const f of readdirSync(dir).filter((n) => n.endsWith(".json"))) {
    const s = JSON.parse(readFileSync(join(dir, f), "utf8")) as RegistrySchema;
    if (typeof s.typeName === "string") schemas[s.typeName] = s;
  }
  const withHandlers = Object.values(schemas).some((s) => s.handlers);
  return {
    format: REGISTRY_BUNDLE_FORMAT,
    origin: {
      source: origin,
      region,
      licence,
      retrieved: new Date().toISOString().slice(0, 10),
      handlers: withHandlers,
    },
    schemas: sorted(schemas),
  };
}

const sorted = (o: Record<string, RegistrySchema>) =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      from: { type: "string" },
      origin: { type: "string" },
      licence: { type: "string" },
      region: { type: "string", default: "us-east-1" },
      out: { type: "string", default: REGISTRY_BUNDLE },
      "handlers-from": { type: "string" },
      rev: { type: "string", default: "HEAD" },
      "handlers-only": { type: "boolean", default: false },
    },
  });
  const handlersFrom = values["handlers-from"];
  if (handlersFrom) {
    const facts = handlerFactsFromTerraform(handlersFrom, values.rev);
    const n = Object.keys(facts.types).length;
    if (n < 1000)
      throw new Error(`only ${n} types with handlers found: refusing to replace the facts with so few`);
    writeFileSync(HANDLER_FACTS_FILE, gzipSync(JSON.stringify(facts), { level: 9 }));
    process.stdout.write(
      `wrote the handler facts of ${n} types to ${HANDLER_FACTS_FILE} (${facts.origin.commit})\n`,
    );
  }
  if (values["handlers-only"]) {
    const g = generateAwscc({ force: true });
    process.stdout.write(`generated ${g.kinds} awscc kinds in ${g.ms} ms\n`);
    process.exit(0);
  }
  const region = values.region ?? "us-east-1";
  if (values.from && (!values.origin || !values.licence))
    throw new Error("--from needs --origin (where the files come from, with a commit or date) and --licence");
  const bundle = values.from
    ? fromDirectory(values.from, values.origin ?? "", values.licence ?? "", region)
    : fromCfnLint(region);
  const n = Object.keys(bundle.schemas).length;
  if (n < 1000) throw new Error(`only ${n} schemas found: refusing to replace the bundle with so few`);
  const out = values.out ?? REGISTRY_BUNDLE;
  writeFileSync(out, gzipSync(JSON.stringify(bundle), { level: 9 }));
  process.stdout.write(`wrote ${n} registry schemas to ${out} (${bundle.origin.source})\n`);
  if (out === REGISTRY_BUNDLE) {
    const g = generateAwscc({ force: true });
    process.stdout.write(`generated ${g.kinds} awscc kinds from them in ${g.ms} ms\n`);
  }
}
