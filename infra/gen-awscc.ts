// Generates the AWS kinds reconciled through Cloud Control from the CloudFormation resource schemas in
// @aws-cdk/aws-service-spec (pinned in package.json): one compact JSON spec per type plus a catalog,
// into .generated/awscc/ (git-ignored). Run by `npm run gen:awscc`, by `prepare` after `npm ci`, by
// `pretest`, and by tests that need it (ensureAwsccGenerated); skipped when the output is current.
//
//   node infra/gen-awscc.ts            generate if stale
//   node infra/gen-awscc.ts --force    generate again
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { gunzipSync } from "node:zlib";
import {
  AWSCC_SPEC_VERSION,
  type AwsccCatalog,
  type AwsccKindSpec,
  type AwsccNode,
  type AwsccObjectDef,
  type AwsccProp,
  type AwsccReference,
  awsccGroupOf,
  camelOf,
  partsOf,
  pluralOf,
} from "../shared/api/awscc/spec.ts";

const ROOT = resolve(import.meta.dirname, "..");
export const AWSCC_DIR = join(ROOT, ".generated/awscc");
const SPEC_PACKAGE = "@aws-cdk/aws-service-spec";
/** Bumped whenever the output format or a mapping rule changes: stale output is generated again. */
export const GENERATOR_VERSION = 1;

// --- the package's data (its db.json.gz: entities and relations, as @cdklabs/tskb saves them) -------

interface RawType {
  type: string;
  element?: RawType;
  types?: RawType[];
  reference?: { $ref: string };
  allowedValues?: Array<string | number>;
}
interface RawProperty {
  type: RawType;
  documentation?: string;
  required?: boolean;
  causesReplacement?: "yes" | "no" | "maybe";
  deprecated?: string;
  relationshipRefs?: Array<{ cloudFormationType: string; propertyName: string }>;
}
interface RawResource {
  $id: string;
  cloudFormationType: string;
  name: string;
  documentation?: string;
  primaryIdentifier?: string[];
  properties: Record<string, RawProperty>;
  attributes: Record<string, { type: RawType; documentation?: string }>;
  tagInformation?: { tagPropertyName: string; variant: "standard" | "map" | "asg" };
  cloudFormationTransform?: string;
}
interface RawTypeDef {
  $id: string;
  name: string;
  documentation?: string;
  properties: Record<string, RawProperty>;
}
interface RawDb {
  schema: {
    resource: { entities: RawResource[] };
    typeDefinition: { entities: RawTypeDef[] };
  };
}

function specPackage(): { version: string; db: string } {
  const require = createRequire(import.meta.url);
  const pkgJson = require.resolve(`${SPEC_PACKAGE}/package.json`);
  const version = (JSON.parse(readFileSync(pkgJson, "utf8")) as { version: string }).version;
  return { version, db: join(dirname(pkgJson), "db.json.gz") };
}

// --- mapping rules ------------------------------------------------------------------------------

// Top-level string properties whose value is a secret: they come from a Secret (`<name>SecretRef`), are
// never read back and never compared. The schema data carries no writeOnlyProperties, so names decide.
const SECRET_NAME =
  /(Password|Passphrase|SecretString|SecretKey|PrivateKey|AuthToken|ClientSecret|AccessToken|OauthToken|SharedSecret)$|^(Token|TokenKey)$/;
const NOT_SECRET = /^(Manage|Rotate|No|Generate)|KmsKeyId$|Arn$/;

// Inputs CloudFormation's schemas declare writeOnly that are not secrets: sent on create/update, never
// read back, so never compared (docs/awscc.md lists the rule).
const INPUT_ONLY: Record<string, string[]> = {
  "AWS::Lambda::Function": ["Code", "SnapStart"],
  "AWS::SecretsManager::Secret": ["GenerateSecretString"],
  "AWS::KMS::Key": ["PendingWindowInDays", "BypassPolicyLockoutSafetyCheck"],
  "AWS::DynamoDB::Table": ["ImportSourceSpecification"],
  "AWS::ECR::Repository": ["EmptyOnDelete"],
  "AWS::Route53::HostedZone": ["HostedZoneConfig"],
  "AWS::IAM::Role": ["PermissionsBoundary"],
  "AWS::EFS::FileSystem": ["BypassPolicyLockoutSafetyCheck"],
  "AWS::Kinesis::Stream": ["DesiredShardLevelMetrics"],
};

// The common identifiers that point at hand-written kinds: their external name is the id a property holds.
const HAND_WRITTEN: Record<string, { kind: string; properties: string[] }> = {
  "AWS::EC2::VPC": { kind: "ec2.aws/VPC", properties: ["VpcId", "Id"] },
  "AWS::EC2::Subnet": { kind: "ec2.aws/Subnet", properties: ["SubnetId", "Id"] },
  "AWS::EC2::SecurityGroup": { kind: "ec2.aws/SecurityGroup", properties: ["GroupId", "Id"] },
};

// Properties named like the common identifiers but without relationship data in the schema.
const BY_NAME: Array<{ name: RegExp; type: string; property: string }> = [
  { name: /^VpcId$/, type: "AWS::EC2::VPC", property: "VpcId" },
  { name: /^SubnetIds?$/, type: "AWS::EC2::Subnet", property: "SubnetId" },
  { name: /^SecurityGroupIds?$/, type: "AWS::EC2::SecurityGroup", property: "GroupId" },
  {
    name: /^(Role|RoleArn|ExecutionRoleArn|ServiceRoleArn|ServiceRole)$/,
    type: "AWS::IAM::Role",
    property: "Arn",
  },
  {
    name: /^(KmsKeyId|KmsKeyArn|KMSKeyId|KMSKeyArn|KmsMasterKeyId)$/,
    type: "AWS::KMS::Key",
    property: "Arn",
  },
];

const MAX_DOC = 300;

/** The first paragraph of a CloudFormation doc string, short: CRDs with whole docs cost API-server memory. */
function shortDoc(doc: string | undefined, max = MAX_DOC): string | undefined {
  if (!doc) return undefined;
  const para = (doc.split(/\n\s*\n/)[0] ?? "").replace(/\s+/g, " ").trim();
  if (!para) return undefined;
  return para.length <= max ? para : `${para.slice(0, max - 1).replace(/\s+\S*$/, "")}…`;
}

class KindBuilder {
  readonly defs: Record<string, AwsccObjectDef> = {};
  readonly #defKeys = new Map<string, string>();
  readonly #typeDefs: Map<string, RawTypeDef>;
  constructor(typeDefs: Map<string, RawTypeDef>) {
    this.#typeDefs = typeDefs;
  }

  node(t: RawType): AwsccNode {
    switch (t.type) {
      case "string":
      case "date-time":
        return { t: "string" };
      case "integer":
      case "number":
      case "boolean":
        return { t: t.type };
      case "json":
      case "null":
        return { t: "json" };
      case "tag":
        return { t: "tags" };
      case "array": {
        const el = t.element ?? { type: "json" };
        if (el.type === "tag" || this.#isKeyValue(el)) return { t: "tags" };
        return { t: "array", of: this.node(el) };
      }
      case "map":
        return { t: "map", of: this.node(t.element ?? { type: "json" }) };
      case "union": {
        // A structural schema holds one type per field: the most specific alternative wins.
        const alts = (t.types ?? []).filter((x) => x.type !== "json" && x.type !== "null");
        const pick = alts.find((x) => x.type === "array" || x.type === "ref" || x.type === "map") ?? alts[0];
        return pick ? this.node(pick) : { t: "json" };
      }
      case "ref":
        return { t: "ref", ref: this.#def(t.reference?.$ref ?? "") };
      default:
        return { t: "json" };
    }
  }

  /** A `[{Key, Value}]` list written as its own type (not the builtin tag): a tag list all the same. */
  #isKeyValue(t: RawType): boolean {
    if (t.type !== "ref") return false;
    const def = this.#typeDefs.get(t.reference?.$ref ?? "");
    const keys = Object.keys(def?.properties ?? {}).sort();
    return keys.length === 2 && keys[0] === "Key" && keys[1] === "Value";
  }

  #def(id: string): string {
    const known = this.#defKeys.get(id);
    if (known) return known;
    const raw = this.#typeDefs.get(id);
    if (!raw) throw new Error(`type definition ${id} not found`);
    let key = raw.name;
    if (this.defs[key]) key = `${raw.name}_${id}`;
    this.#defKeys.set(id, key);
    const def: AwsccObjectDef = { name: raw.name, props: {} };
    this.defs[key] = def;
    Object.assign(def.props, this.props(raw.properties, ""));
    return key;
  }

  props(raw: Record<string, RawProperty>, typeName: string): Record<string, AwsccProp> {
    const out: Record<string, AwsccProp> = {};
    for (const [name, p] of Object.entries(raw)) {
      if (p.deprecated === "IGNORE") continue;
      let key = camelOf(name);
      if (out[key]) key = name;
      const prop: AwsccProp = { n: name, s: this.node(p.type) };
      if (p.required) prop.req = true;
      if (p.causesReplacement === "yes") prop.co = true;
      const allowed = p.type.allowedValues;
      if (allowed && allowed.length > 0 && allowed.length <= 30) prop.enum = allowed;
      const doc = shortDoc(p.documentation);
      if (doc) prop.doc = doc;
      if (typeName) {
        if (prop.s.t === "string" && SECRET_NAME.test(name) && !NOT_SECRET.test(name)) prop.wo = "secret";
        else if (INPUT_ONLY[typeName]?.includes(name)) prop.wo = "input";
      }
      out[key] = prop;
    }
    return out;
  }
}

function identifierOf(r: RawResource) {
  const id = r.primaryIdentifier ?? [];
  const only = id.length === 1 ? id[0] : undefined;
  if (only && r.properties[only] && !only.includes("/")) {
    return { externalName: "fromAnnotation" as const, identifierField: only };
  }
  return { externalName: "providerChosen" as const };
}

function referencesOf(
  r: RawResource,
  props: Record<string, AwsccProp>,
  byType: Map<string, RawResource>,
): AwsccReference[] {
  const refs: AwsccReference[] = [];
  for (const [field, p] of Object.entries(props)) {
    const raw = r.properties[p.n];
    if (!raw || p.wo) continue;
    const list = p.s.t === "array" && p.s.of.t === "string";
    if (p.s.t !== "string" && !list) continue;
    const candidates = [
      ...(raw.relationshipRefs ?? []).map((x) => ({ type: x.cloudFormationType, property: x.propertyName })),
      ...BY_NAME.filter((b) => b.name.test(p.n)).map((b) => ({ type: b.type, property: b.property })),
    ];
    for (const c of candidates) {
      if (c.type === r.cloudFormationType) continue;
      const hand = HAND_WRITTEN[c.type];
      if (hand?.properties.includes(c.property)) {
        refs.push({
          field,
          ...(list ? { list: true } : {}),
          to: { handWritten: hand.kind },
          from: "externalName",
        });
        break;
      }
      const target = byType.get(c.type);
      if (!target) continue;
      const ids = target.primaryIdentifier ?? [];
      const attr = target.attributes[c.property];
      let from: AwsccReference["from"] | undefined;
      if (ids.length === 1 && ids[0] === c.property) from = "externalName";
      else if (attr && !c.property.includes(".")) from = { atProvider: camelOf(c.property) };
      if (!from) continue;
      refs.push({ field, ...(list ? { list: true } : {}), to: { type: c.type }, from });
      break;
    }
  }
  return refs;
}

/** One generated kind from one CloudFormation resource type. */
export function kindSpecOf(
  r: RawResource,
  typeDefs: Map<string, RawTypeDef>,
  byType: Map<string, RawResource>,
): AwsccKindSpec {
  const b = new KindBuilder(typeDefs);
  const { kind } = partsOf(r.cloudFormationType);
  const properties = b.props(r.properties, r.cloudFormationType);
  const attributes: Record<string, AwsccProp> = {};
  for (const [name, a] of Object.entries(r.attributes)) {
    if (r.properties[name]) continue; // a property CloudFormation also returns: it is in forProvider
    const key = camelOf(name.replace(/\.(\w)/g, (_, c: string) => c.toUpperCase()));
    const doc = shortDoc(a.documentation);
    attributes[key] = { n: name, s: b.node(a.type), ...(doc ? { doc } : {}) };
  }
  const id = identifierOf(r);
  const tagInfo = r.tagInformation;
  const tagField = tagInfo
    ? Object.entries(properties).find(([, p]) => p.n === tagInfo.tagPropertyName)?.[0]
    : undefined;
  const intro = shortDoc(r.documentation, 400) ?? r.cloudFormationType;
  return {
    v: AWSCC_SPEC_VERSION,
    typeName: r.cloudFormationType,
    group: awsccGroupOf(r.cloudFormationType),
    kind,
    plural: pluralOf(kind),
    description: `${intro} (CloudFormation type ${r.cloudFormationType}, reconciled through the AWS Cloud Control API.)`,
    properties,
    attributes,
    defs: b.defs,
    primaryIdentifier: r.primaryIdentifier ?? [],
    externalName: id.externalName,
    ...(id.identifierField ? { identifierField: camelOf(id.identifierField) } : {}),
    ...(tagInfo && tagField ? { tags: { field: tagField, variant: tagInfo.variant } } : {}),
    references: referencesOf(r, properties, byType),
  };
}

export interface GenerateResult {
  dir: string;
  kinds: number;
  ms: number;
  skipped: boolean;
}

/** The package version and this generator's own code: either changing makes the output stale. */
function stampOf(version: string): string {
  const code = [import.meta.filename, join(ROOT, "shared/api/awscc/spec.ts")].map((f) =>
    readFileSync(f, "utf8"),
  );
  return `${version}/${GENERATOR_VERSION}/${createHash("sha256").update(code.join("\0")).digest("hex").slice(0, 16)}`;
}

/** Whether `dir` holds the output of this generator for the installed package version. */
export function awsccIsCurrent(dir = AWSCC_DIR): boolean {
  const catalog = join(dir, "catalog.json");
  if (!existsSync(catalog)) return false;
  try {
    const c = JSON.parse(readFileSync(catalog, "utf8")) as AwsccCatalog;
    return c.stamp === stampOf(specPackage().version);
  } catch {
    return false;
  }
}

/** Generates every kind into `dir` (written beside it, then renamed into place: readers never see half). */
export function generateAwscc(opts: { dir?: string; force?: boolean } = {}): GenerateResult {
  const dir = opts.dir ?? AWSCC_DIR;
  const started = performance.now();
  if (!opts.force && awsccIsCurrent(dir)) return { dir, kinds: 0, ms: 0, skipped: true };
  const pkg = specPackage();
  const db = JSON.parse(gunzipSync(readFileSync(pkg.db)).toString("utf8")) as RawDb;
  const typeDefs = new Map(db.schema.typeDefinition.entities.map((t) => [t.$id, t]));
  const resources = db.schema.resource.entities.filter((r) => !r.cloudFormationTransform);
  const byType = new Map(resources.map((r) => [r.cloudFormationType, r]));
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const catalog: AwsccCatalog = {
    source: pkg.version,
    generator: GENERATOR_VERSION,
    stamp: stampOf(pkg.version),
    kinds: [],
  };
  const names = new Set<string>();
  for (const r of resources) {
    const spec = kindSpecOf(r, typeDefs, byType);
    const crdName = `${spec.plural}.${spec.group}`;
    if (names.has(crdName)) throw new Error(`two CloudFormation types make the CRD ${crdName}`);
    names.add(crdName);
    const file = `kinds/${spec.group.split(".")[0]}/${spec.kind}.json`;
    mkdirSync(dirname(join(tmp, file)), { recursive: true });
    writeFileSync(join(tmp, file), JSON.stringify(spec));
    catalog.kinds.push({
      typeName: spec.typeName,
      group: spec.group,
      kind: spec.kind,
      plural: spec.plural,
      file,
    });
  }
  writeFileSync(join(tmp, "catalog.json"), JSON.stringify(catalog));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dirname(dir), { recursive: true });
  renameSync(tmp, dir);
  return { dir, kinds: catalog.kinds.length, ms: Math.round(performance.now() - started), skipped: false };
}

if (import.meta.main) {
  let r: GenerateResult;
  try {
    r = generateAwscc({ force: process.argv.includes("--force") });
  } catch (err) {
    // A production install (--omit=dev) has no schema package: the hand-written kinds need nothing.
    if ((err as { code?: string }).code !== "MODULE_NOT_FOUND") throw err;
    process.stdout.write(`${SPEC_PACKAGE} is not installed: no generated AWS kinds\n`);
    process.exit(0);
  }
  process.stdout.write(
    r.skipped
      ? `awscc kinds are current (${r.dir})\n`
      : `generated ${r.kinds} awscc kinds into ${r.dir} in ${r.ms} ms\n`,
  );
}
