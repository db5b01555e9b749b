// The compact, JSON form of one generated AWS kind (a CloudFormation resource type reconciled through
// Cloud Control): what infra/gen-awscc.ts writes per type from the CloudFormation registry schema (facts)
// and @aws-cdk/aws-service-spec (types, docs), what the CRD, the docs and the generic provider are built
// from, and all a function bundle carries of a type.
// Plain data on purpose: a kind is loaded on demand (one small file), never the whole schema database.

export const AWSCC_SPEC_VERSION = 2;
/** `<service>.awscc` + `.driftless.dev`: a group no hand-written kind (`<service>.aws`) can take. */
export const AWSCC_GROUP_SUFFIX = "awscc";

/** A value's shape, CloudFormation's type system reduced to what a structural CRD schema can hold. */
export type AwsccNode =
  | { t: "string" | "integer" | "number" | "boolean" | "json" }
  | { t: "array" | "map"; of: AwsccNode }
  /** An object type of the resource (its `defs` entry). */
  | { t: "ref"; ref: string }
  /** CloudFormation's `[{Key, Value}]` tag list: a `{key: value}` map in the spec, as Crossplane has it. */
  | { t: "tags" };

export interface AwsccProp {
  /** The CloudFormation (wire) name, e.g. `SSESpecification` for `sseSpecification`. */
  n: string;
  s: AwsccNode;
  /** Required by the type on create (checked on create: imports need not repeat them). */
  req?: true;
  /** An attribute whose value is a secret: published to the connection Secret, never to atProvider. */
  secret?: true;
  /** Allowed values, for the docs (not enforced: AWS adds values faster than a schema release). */
  enum?: Array<string | number>;
  doc?: string;
}

export interface AwsccObjectDef {
  name: string;
  props: Record<string, AwsccProp>;
}

/** A reference: `field` is filled from another managed kind (`<field>Ref` / `<field>Selector`). */
export interface AwsccReference {
  field: string;
  list?: true;
  /** A generated kind (CloudFormation type name) or a hand-written one (`<group>/<Kind>`, e.g. `ec2.aws/VPC`). */
  to: { type: string } | { handWritten: string };
  /** What is taken from the target: its external name, or an atProvider field (camelCase). */
  from: "externalName" | { atProvider: string };
}

export interface NestedReference {
  at: string;
  field: string;
  list?: true;
  kind: string;
  group: string;
}

export interface AwsccKindSpec {
  v: typeof AWSCC_SPEC_VERSION;
  /** CloudFormation type, e.g. AWS::DynamoDB::Table. */
  typeName: string;
  /** e.g. dynamodb.awscc (→ dynamodb.awscc.driftless.dev). */
  group: string;
  kind: string;
  plural: string;
  description: string;
  /** The type's writable properties, keyed by their camelCase name. */
  properties: Record<string, AwsccProp>;
  /** Read-only properties (attributes), keyed by camelCase name; `n` may be a dotted path (Endpoint.Address). */
  attributes: Record<string, AwsccProp>;
  defs: Record<string, AwsccObjectDef>;
  /** Cloud Control's primary identifier: CloudFormation property names, joined with `|` in identifiers. */
  primaryIdentifier: string[];
  /**
   * fromAnnotation: the identifier is one writable property (a name), taken from crossplane.io/external-name
   * and left out of forProvider. providerChosen: the cloud (or a composite of properties) makes it.
   */
  externalName: "fromAnnotation" | "providerChosen";
  /** The property the external name fills (fromAnnotation), camelCase. */
  identifierField?: string;
  tags?: { field: string; variant: "standard" | "map" | "asg" };
  references: AwsccReference[];
  /**
   * Reference fields below the top level: in every object at `at` (a field path, lists element-wise),
   * `<field>Ref` (`<one>Refs` for a list) and `<field>Selector` fill `field` from a `kind` of `group`.
   */
  nestedReferences?: NestedReference[];
  /**
   * The registry schema's createOnlyProperties at any depth, as field paths: camelCase names joined by
   * `.`, arrays without an index (`/properties/Users/<n>/Username` → `users.username`). Immutable.
   */
  createOnly: string[];
  /** writeOnlyProperties that are not secrets: sent on create, never read back, compared or re-sent. */
  writeOnly: string[];
  /**
   * Secret strings at any depth (write-only or named like a secret): read from a Secret key
   * (`<name>SecretRef`, lists `<name>SecretRefs`) when a request is made; never in spec, status or a message.
   */
  secrets: string[];
  /** Secret strings inside attributes (`verificationDetails.dnsTxt.token`): left out of atProvider. */
  attributeSecrets: string[];
  /** IAM actions of the type's handlers (tagging's own with create and update), as the registry lists them. */
  permissions: Partial<Record<"create" | "read" | "update" | "delete" | "list", string[]>>;
  /**
   * What AWS's Service Authorization Reference says each of those actions acts on
   * (infra/awscc/iam-facts.json.gz): the IAM statements scope by it. Absent: every action is `unlisted`.
   */
  iam?: AwsccIamScope;
  /**
   * The handlers the registry publishes for the type: no `update` is an IMMUTABLE type (every property is
   * create-only); `list` is what a batched drift check through ListResources needs.
   */
  handlers?: Array<"create" | "read" | "update" | "delete" | "list">;
  /**
   * The properties (camelCase) the list handler's handlerSchema requires in a ListResources ResourceModel
   * (a child type listed per parent, e.g. an API Gateway Resource per `restApiId`). A type with `list` and
   * without this is listed per account and region: its batched drift check is ListResources
   * (docs/adr/0012-awscc-batched-drift-checks.md); with it, or without `list`, one GetResource each.
   */
  listNeeds?: string[];
}

/**
 * The handler actions' IAM scope, from AWS's Service Authorization Reference. `arns`: Resource patterns
 * (placeholders `{partition}`, `{account}`, as IamStatement has them; region and names `*`), each once.
 * `actions`: per action, the indexes in `arns` of the resource types it acts on; `any`: it has no
 * resource-level permissions (only `"Resource": "*"` matches); `unlisted`: a wildcard or an action the
 * reference does not list. `owned`: actions only the delete handler makes, on this kind's own resource type
 * only, which supports `aws:ResourceTag`: held to resources carrying the kind's default tag.
 */
export interface AwsccIamScope {
  arns: string[];
  actions: Record<string, number[] | "any" | "unlisted">;
  owned?: string[];
  /**
   * Actions only the create handler makes, creating this kind's own resource type, that can carry request
   * tags, of a type that passes its tags to the create API (tagOnCreate): held to carrying the kind's
   * default tag (aws:RequestTag) or no tags at all.
   */
  created?: string[];
}

/** `a.b` is `path` or lies below it. */
export const pathWithin = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}.`);

/** One line of the catalog: enough to activate, list and find a kind without loading its spec. */
export interface AwsccCatalogEntry {
  typeName: string;
  group: string;
  kind: string;
  plural: string;
  /** Path of the kind's spec inside the generated directory. */
  file: string;
}

export interface AwsccCatalog {
  /** @aws-cdk/aws-service-spec version the kinds' types and docs come from. */
  source: string;
  /** The registry schemas the kinds' facts come from (infra/awscc/registry-schemas.json.gz's origin). */
  registry: { source: string; region: string; retrieved: string; licence: string };
  /** Where the handler facts (permissions, tagging) come from (infra/awscc/handler-facts.json.gz's origin). */
  handlers: { source: string; commit: string; committed: string; licence: string };
  generator: number;
  /** What the output was made from (package version, generator code): stale output is made again. */
  stamp: string;
  kinds: AwsccCatalogEntry[];
}

/**
 * CloudFormation's PascalCase to Crossplane's camelCase: a leading run of capitals is lowered except the
 * one that starts the next word (`SSESpecification` → `sseSpecification`, `KMSKeyId` → `kmsKeyId`,
 * `VpcId` → `vpcId`, `ID` → `id`).
 */
export function camelOf(name: string): string {
  const m = /^[A-Z0-9]+/.exec(name);
  if (!m) return name;
  const run = m[0];
  if (run.length === name.length) return name.toLowerCase();
  if (run.length === 1) return name[0]?.toLowerCase() + name.slice(1);
  const next = name[run.length] ?? "";
  const keep = /[a-z]/.test(next) ? 1 : 0;
  return (
    run.slice(0, run.length - keep).toLowerCase() + run.slice(run.length - keep) + name.slice(run.length)
  );
}

/** English plural of a lowercased kind, as CRD plurals are written (policy → policies, alias → aliases). */
export function pluralOf(kind: string): string {
  const k = kind.toLowerCase();
  if (/[^aeiou]y$/.test(k)) return `${k.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(k)) return `${k}es`;
  return `${k}s`;
}

/** `AWS::DynamoDB::Table` → { service: "dynamodb", kind: "Table" }; other vendors keep their prefix. */
export function partsOf(typeName: string): { service: string; kind: string } {
  const [vendor = "", service = "", kind = ""] = typeName.split("::");
  const s = service.toLowerCase().replace(/[^a-z0-9]/g, "");
  return { service: vendor === "AWS" ? s : `${vendor.toLowerCase()}-${s}`, kind };
}

/** The API group (without the domain) of a generated type. */
export const awsccGroupOf = (typeName: string) => `${partsOf(typeName).service}.${AWSCC_GROUP_SUFFIX}`;

/**
 * The short activation alias of a generated kind: `<service>.<kind>` lowercased (`dynamodb.table`), so
 * `--activate 'dynamodb.*'` reads like the CloudFormation type it stands for.
 */
export const awsccAliasOf = (e: { group: string; kind: string }) =>
  `${e.group.slice(0, -`.${AWSCC_GROUP_SUFFIX}`.length)}.${e.kind.toLowerCase()}`;
