// Refreshes infra/awscc/registry-schemas.json.gz: the CloudFormation registry resource schemas (the
// resource provider schema format: writeOnlyProperties, createOnlyProperties, readOnlyProperties as JSON
// pointers at any depth, primaryIdentifier, tagging, and handlers.*.permissions where the copy keeps them)
// that infra/gen-awscc.ts reads the generated kinds' facts from. One command, two sources:
//
//   npm run refresh:awscc-schemas                    the copy cfn-lint ships (its us-east-1 provider list)
//   npm run refresh:awscc-schemas -- --from DIR --origin TEXT --licence TEXT [--region R]
//       a directory of schema files as AWS publishes them (CloudformationSchema.zip, extracted, or one
//       `aws cloudformation describe-type --query Schema` answer per file): these keep handler permissions
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { generateAwscc } from "../gen-awscc.ts";
import {
  REGISTRY_BUNDLE_FILE as REGISTRY_BUNDLE,
  REGISTRY_BUNDLE_FORMAT,
  type RegistryBundle,
  type RegistrySchema,
} from "./registry.ts";

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
    },
  });
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
