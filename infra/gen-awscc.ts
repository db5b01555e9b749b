// Generates the AWS kinds reconciled through Cloud Control: their facts (write-only, create-only and
// read-only properties at any depth, primary identifier, tagging, handler permissions) from the
// CloudFormation registry schemas (infra/awscc/registry-schemas.json.gz, refreshed by
// `npm run refresh:awscc-schemas`), their types, docs and relationships from @aws-cdk/aws-service-spec
// (pinned in package.json): one compact JSON spec per type plus a catalog,
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
import {
  actionIndex,
  IAM_FACTS_FILE,
  type IamFactsBundle,
  iamScopeOf,
  loadIamFacts,
} from "./awscc/iam-facts.ts";
import {
  HANDLER_FACTS_FILE,
  type HandlerName,
  loadHandlerFacts,
  loadRegistryBundle,
  permissionsOf,
  pointerNames,
  provisionableSchema,
  REGISTRY_BUNDLE_FILE,
  type RegistrySchema,
} from "./awscc/registry.ts";

const ROOT = resolve(import.meta.dirname, "..");
export const AWSCC_DIR = join(ROOT, ".generated/awscc");
const SPEC_PACKAGE = "@aws-cdk/aws-service-spec";
/** Bumped whenever the output format or a mapping rule changes: stale output is generated again. */
export const GENERATOR_VERSION = 3;

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

// Strings whose value is a secret, at any depth, whether the schema marks them write-only or not: they
// come from a Secret (`<name>SecretRef`), are never read back, compared or shown. Write-only alone does
// not make a secret (ClientToken, Subdirectory, Tags are write-only too), so names decide which are.
const SECRET_NAME =
  /(Password|Passwords|Passphrase|SecretString|SecretKey|SecretAccessKey|PrivateKey|PreSharedKey|Keytab|AuthToken|AccessToken|RefreshToken|OauthToken|IdToken|JwtToken|ApiToken|SecretToken|SasToken|HECToken|ClientSecret|SharedSecret|ApiKeyValue|ApiSecretKey|TokenValue|ActivationKey)$|^(Token|TokenKey|ApiKey|AccessKey)$/;
const NOT_SECRET = /^(Manage|Rotate|No|Generate|Use|Enable)|KmsKeyId$|Arn$|ARN$/;
// Members of a "units" object name what they measure (Cognito's tokenValidityUnits.accessToken: "hours").
const UNITS = /Units$/;

/** Whether a property or attribute name (CloudFormation's, any case of its first letter) is a secret's. */
export const secretNamed = (name: string) => {
  const n = name.charAt(0).toUpperCase() + name.slice(1);
  return SECRET_NAME.test(n) && !NOT_SECRET.test(n);
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
    Object.assign(def.props, this.props(raw.properties));
    return key;
  }

  props(raw: Record<string, RawProperty>): Record<string, AwsccProp> {
    const out: Record<string, AwsccProp> = {};
    for (const [name, p] of Object.entries(raw)) {
      if (p.deprecated === "IGNORE") continue;
      let key = camelOf(name);
      if (out[key]) key = name;
      const prop: AwsccProp = { n: name, s: this.node(p.type) };
      if (p.required) prop.req = true;
      const allowed = p.type.allowedValues;
      if (allowed && allowed.length > 0 && allowed.length <= 30) prop.enum = allowed;
      const doc = shortDoc(p.documentation);
      if (doc) prop.doc = doc;
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
  secrets: readonly string[],
): AwsccReference[] {
  const refs: AwsccReference[] = [];
  for (const [field, p] of Object.entries(props)) {
    const raw = r.properties[p.n];
    if (!raw || secrets.includes(field)) continue;
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

/** The fields (camelCase paths) and the node a property pointer names, as far as the spec's types go. */
function resolvePointer(
  properties: Record<string, AwsccProp>,
  defs: Record<string, AwsccObjectDef>,
  names: readonly string[],
): { path: string; node: AwsccNode | undefined } {
  const path: string[] = [];
  let props: Record<string, AwsccProp> | undefined = properties;
  let node: AwsccNode | undefined;
  for (const [i, name] of names.entries()) {
    const hit: [string, AwsccProp] | undefined = props
      ? Object.entries(props).find(([, p]) => p.n === name)
      : undefined;
    if (!hit) {
      // Below a free-form value: the path goes on in camelCase, as the engine names drifted fields.
      path.push(...names.slice(i).map(camelOf));
      return { path: path.join("."), node: undefined };
    }
    path.push(hit[0]);
    node = hit[1].s;
    let inner: AwsccNode = node;
    while (inner.t === "array" || inner.t === "map") inner = inner.of;
    props = inner.t === "ref" ? defs[inner.ref]?.props : undefined;
  }
  return { path: path.join("."), node };
}

const isStringy = (n: AwsccNode | undefined) =>
  n?.t === "string" || (n?.t === "array" && n.of.t === "string");

/** Every secret-named string below the properties, at any depth (each object type once per path). */
function secretPaths(properties: Record<string, AwsccProp>, defs: Record<string, AwsccObjectDef>): string[] {
  const out: string[] = [];
  const walk = (props: Record<string, AwsccProp>, prefix: string, seen: readonly string[]) => {
    for (const [k, p] of Object.entries(props)) {
      const path = prefix ? `${prefix}.${k}` : k;
      if (isStringy(p.s) && secretNamed(p.n) && !UNITS.test(prefix)) out.push(path);
      let inner: AwsccNode = p.s;
      while (inner.t === "array" || inner.t === "map") inner = inner.of;
      if (inner.t === "ref" && !seen.includes(inner.ref) && defs[inner.ref])
        walk(defs[inner.ref]?.props ?? {}, path, [...seen, inner.ref]);
    }
  };
  walk(properties, "", []);
  return out;
}

/** The registry schema's facts as field paths of the generated kind. */
function factsOf(
  reg: RegistrySchema,
  properties: Record<string, AwsccProp>,
  defs: Record<string, AwsccObjectDef>,
) {
  const resolve = (pointers: readonly string[] | undefined) =>
    (pointers ?? []).flatMap((p) => {
      const names = pointerNames(p);
      return names ? [resolvePointer(properties, defs, names)] : [];
    });
  const secrets = new Set(secretPaths(properties, defs));
  const writeOnly = new Set<string>();
  for (const w of resolve(reg.writeOnlyProperties)) {
    // A write-only string named like a secret is one; every other write-only value is an input.
    if (isStringy(w.node) && secretNamed(w.path.split(".").at(-1) ?? "")) secrets.add(w.path);
    else writeOnly.add(w.path);
  }
  const uniq = (xs: Iterable<string>) => [...new Set(xs)].sort();
  return {
    createOnly: uniq(resolve(reg.createOnlyProperties).map((c) => c.path)),
    writeOnly: uniq([...writeOnly].filter((w) => !secrets.has(w))),
    secrets: uniq(secrets),
    readOnly: new Set(resolve(reg.readOnlyProperties).map((r) => r.path)),
  };
}

/** One generated kind from one CloudFormation resource type and its registry schema. */
export function kindSpecOf(
  r: RawResource,
  reg: RegistrySchema,
  typeDefs: Map<string, RawTypeDef>,
  byType: Map<string, RawResource>,
  iam?: { facts: IamFactsBundle; index: ReturnType<typeof actionIndex> },
): AwsccKindSpec {
  const b = new KindBuilder(typeDefs);
  const { kind } = partsOf(r.cloudFormationType);
  const all = b.props(r.properties);
  const facts = factsOf(reg, all, b.defs);
  // A property the registry calls read-only is the cloud's to set: an attribute, not a forProvider field.
  const properties = Object.fromEntries(Object.entries(all).filter(([k]) => !facts.readOnly.has(k)));
  const attributes: Record<string, AwsccProp> = {};
  for (const [k, p] of Object.entries(all))
    if (facts.readOnly.has(k)) attributes[k] = { ...p, ...(secretNamed(p.n) ? { secret: true } : {}) };
  for (const [name, a] of Object.entries(r.attributes)) {
    if (r.properties[name]) continue; // a property CloudFormation also returns: it is in forProvider
    const key = camelOf(name.replace(/\.(\w)/g, (_, c: string) => c.toUpperCase()));
    const doc = shortDoc(a.documentation);
    attributes[key] = {
      n: name,
      s: b.node(a.type),
      ...(doc ? { doc } : {}),
      ...(secretNamed(name.split(".").at(-1) ?? "") ? { secret: true as const } : {}),
    };
  }
  const attributeSecrets = secretPaths(
    Object.fromEntries(Object.entries(attributes).filter(([, a]) => !a.secret)),
    b.defs,
  );
  const primaryIdentifier = (reg.primaryIdentifier ?? []).map((p) => pointerNames(p)?.join(".") ?? p);
  const id = identifierOf({ ...r, primaryIdentifier });
  const tagProperty =
    reg.tagging?.taggable === false ? undefined : pointerNames(reg.tagging?.tagProperty ?? "")?.[0];
  const tagName = tagProperty ?? r.tagInformation?.tagPropertyName;
  const tagField = tagName ? Object.entries(properties).find(([, p]) => p.n === tagName)?.[0] : undefined;
  const inForProvider = (path: string) => properties[path.split(".")[0] ?? ""] !== undefined;
  const identifierField = id.identifierField ? camelOf(id.identifierField) : undefined;
  const handlers = (["create", "read", "update", "delete", "list"] as const).filter((h) => reg.handlers?.[h]);
  const listNeeds = (reg.handlers?.list?.handlerSchema?.required ?? []).map(
    (n) => Object.entries(properties).find(([, p]) => p.n === n)?.[0] ?? camelOf(n),
  );
  // No update handler: the registry's IMMUTABLE provisioning type, every property is fixed at create.
  const createOnly = reg.handlers && !reg.handlers.update ? Object.keys(properties) : facts.createOnly;
  const permissions = permissionsOf(reg);
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
    primaryIdentifier,
    externalName: id.externalName,
    ...(identifierField ? { identifierField } : {}),
    ...(tagField ? { tags: { field: tagField, variant: r.tagInformation?.variant ?? "standard" } } : {}),
    references: referencesOf(r, properties, byType, facts.secrets),
    createOnly: [...new Set(createOnly)].sort().filter((p) => inForProvider(p) && p !== identifierField),
    writeOnly: facts.writeOnly.filter(inForProvider),
    secrets: facts.secrets.filter((p) => inForProvider(p) && p !== identifierField),
    attributeSecrets,
    permissions,
    ...(iam
      ? {
          iam: iamScopeOf(
            r.cloudFormationType,
            permissions,
            {
              updatable: tagField !== undefined && reg.tagging?.tagUpdatable !== false,
              onCreate: tagField !== undefined && reg.tagging?.tagOnCreate === true,
            },
            iam.facts,
            iam.index,
          ),
        }
      : {}),
    handlers: handlers as HandlerName[],
    ...(listNeeds.length > 0 ? { listNeeds } : {}),
  };
}

export interface GenerateResult {
  dir: string;
  kinds: number;
  ms: number;
  skipped: boolean;
}

/** The package version, the registry bundle and this generator's code: any change makes the output stale. */
function stampOf(version: string): string {
  const inputs = [
    import.meta.filename,
    join(ROOT, "shared/api/awscc/spec.ts"),
    join(ROOT, "infra/awscc/registry.ts"),
    REGISTRY_BUNDLE_FILE,
    HANDLER_FACTS_FILE,
    join(ROOT, "infra/awscc/iam-facts.ts"),
    IAM_FACTS_FILE,
  ].map((f) => readFileSync(f));
  const hash = createHash("sha256");
  for (const b of inputs) hash.update(b).update("\0");
  return `${version}/${GENERATOR_VERSION}/${hash.digest("hex").slice(0, 16)}`;
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
  const { bundle } = loadRegistryBundle();
  const facts = loadHandlerFacts();
  const iamFacts = loadIamFacts();
  const iam = { facts: iamFacts, index: actionIndex(iamFacts) };
  const db = JSON.parse(gunzipSync(readFileSync(pkg.db)).toString("utf8")) as RawDb;
  const typeDefs = new Map(db.schema.typeDefinition.entities.map((t) => [t.$id, t]));
  const resources = db.schema.resource.entities.filter((r) => !r.cloudFormationTransform);
  const byType = new Map(resources.map((r) => [r.cloudFormationType, r]));
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const { source, region, retrieved, licence } = bundle.origin;
  const catalog: AwsccCatalog = {
    source: pkg.version,
    registry: { source, region, retrieved, licence },
    handlers: {
      source: facts.origin.source,
      commit: facts.origin.commit,
      committed: facts.origin.committed,
      licence: facts.origin.licence,
    },
    generator: GENERATOR_VERSION,
    stamp: stampOf(pkg.version),
    kinds: [],
  };
  const names = new Set<string>();
  for (const r of resources) {
    // Only the registry's types that Cloud Control provisions: the rest are CloudFormation-only (no
    // registry schema) or NON_PROVISIONABLE (no handlers published), and Cloud Control refuses them.
    const schema = bundle.schemas[r.cloudFormationType];
    const reg = schema && provisionableSchema(schema, facts);
    if (!reg) continue;
    const spec = kindSpecOf(r, reg, typeDefs, byType, iam);
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
