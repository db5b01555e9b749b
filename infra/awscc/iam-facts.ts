// What AWS's Service Authorization Reference says of the IAM actions the registry schemas' handler
// permissions name: per action, the resource types it acts on (with their ARN templates) and the condition
// keys it and they support (iam-facts.json.gz, made by refresh-iam.ts; see README.md). The generator
// (gen-awscc.ts) turns them into each kind's IAM scope; the tests check the statements against them.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { gunzipSync } from "node:zlib";
import type { AwsccIamScope } from "../../shared/api/awscc/spec.ts";

export const IAM_FACTS_FILE =
  process.env.DRIFTLESS_AWSCC_IAM ?? resolve(import.meta.dirname, "iam-facts.json.gz");
export const IAM_FACTS_FORMAT = 1;

/** One resource type an action acts on (its Service Authorization Reference row). */
export interface IamActionResource {
  /** The resource type's key in its service (`table`), as in `resourceTypes`' `<service>:<key>`. */
  name: string;
  /** Marked with `*` in the reference: every call of the action names one. */
  required: boolean;
  /** Condition keys this action supports for this resource type. */
  conditionKeys: string[];
}

export interface IamActionFacts {
  /** Empty: the action has no resource-level permissions (only `"Resource": "*"` matches it). */
  resourceTypes: IamActionResource[];
  /** Condition keys of the action itself (aws:RequestTag/${TagKey}, aws:TagKeys…). */
  conditionKeys: string[];
}

export interface IamResourceTypeFacts {
  /** The ARN template, `arn:${Partition}:dynamodb:${Region}:${Account}:table/${TableName}`. */
  arn: string;
  /** Condition keys the resource type supports (aws:ResourceTag/${TagKey}…). */
  conditionKeys: string[];
}

export interface IamFactsBundle {
  format: typeof IAM_FACTS_FORMAT;
  origin: {
    /** The package the facts were read from, its version, and the day its data was last updated. */
    source: string;
    version: string;
    updated: string;
    /** What the package's data is made from. */
    upstream: string;
    licence: string;
    /** The day the file was made (YYYY-MM-DD). */
    retrieved: string;
  };
  /** `<service>:<Action>` as the reference spells it (IAM matches actions case-insensitively). */
  actions: Record<string, IamActionFacts>;
  /** `<service>:<resource type key>`. */
  resourceTypes: Record<string, IamResourceTypeFacts>;
  /**
   * Handler permissions the reference does not name as one action: wildcards (`ec2:Describe*`) and
   * actions it does not list. They keep `"Resource": "*"`.
   */
  unlisted: string[];
}

export function loadIamFacts(file = IAM_FACTS_FILE): IamFactsBundle {
  const facts = JSON.parse(gunzipSync(readFileSync(file)).toString("utf8")) as IamFactsBundle;
  if (facts.format !== IAM_FACTS_FORMAT)
    throw new Error(`${file}: IAM facts format ${facts.format}, expected ${IAM_FACTS_FORMAT}`);
  return facts;
}

/** The facts' actions by lower-case name: handler permissions spell some differently (`Iam:PassRole`). */
export function actionIndex(facts: IamFactsBundle): Map<string, { name: string; facts: IamActionFacts }> {
  return new Map(Object.entries(facts.actions).map(([name, f]) => [name.toLowerCase(), { name, facts: f }]));
}

const norm = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, "");
// biome-ignore lint/suspicious/noTemplateCurlyInString: the condition key as the reference spells it
const RESOURCE_TAG = "aws:ResourceTag/${TagKey}";
// biome-ignore lint/suspicious/noTemplateCurlyInString: the condition key as the reference spells it
export const REQUEST_TAG = "aws:RequestTag/${TagKey}";
export const TAG_KEYS = "aws:TagKeys";

/**
 * A reference ARN template as a Resource pattern: the partition and account are the stage's (`{partition}`,
 * `{account}`, written as Refs into serverless.yml); the region is `*` — the statement's
 * aws:RequestedRegion condition holds the call to the stage's region, and a call there may name a resource
 * of another region (a DynamoDB replica); every name or id is `*`.
 */
export function arnPattern(template: string): string {
  return template
    .replace(/\$\{Partition\}/g, "{partition}")
    .replace(/\$\{Account\}/g, "{account}")
    .replace(/\$\{[A-Za-z0-9]+\}/g, "*");
}

/**
 * A resource type's ARN templates as Resource patterns: the reference lists several for some types, joined
 * by ", " (API Gateway's `…/apis/${ApiId}/authorizers, …/restapis/${RestApiId}/authorizers`, Lex's,
 * Greengrass's); as one pattern that string would match no ARN at all.
 */
export const arnPatterns = (template: string): string[] => template.split(/,\s*(?=arn:)/).map(arnPattern);

/**
 * The handler actions' scope for one type (AwsccIamScope). `tags.updatable`: the kind writes the default
 * tags (the registry's tagProperty) and the registry lets tags change after create (tagUpdatable), so every
 * resource it manages — an imported one after its first update — carries them. `tags.onCreate`: the kind
 * writes them and the registry says the type passes its tags to the create API (tagOnCreate).
 *
 * An action is `owned` only when all of these hold: it is in the delete handler and no other (a read or
 * update of an imported resource comes before its tags); every resource type it acts on is the type's own
 * (the reference's key, e.g. `table`, equals the type's name, `AWS::DynamoDB::Table`, letters and digits
 * compared in lower case, and the action's service prefix begins the type's service, `dynamodb`); each
 * supports aws:ResourceTag/${TagKey}. Anything else would hold a call on another resource (a KMS key, a
 * role, a subnet the user brought) to tags driftless never wrote.
 *
 * An action is `created` only when: `tags.onCreate`; it is in the create handler and no other; the
 * reference lets it carry request tags (aws:RequestTag/${TagKey} and aws:TagKeys among its own condition
 * keys or its own resource type's); the service prefix matches as above and every resource type it requires is the type's
 * own. Its calls are then held to carrying the kind's default tag, or no tags at all (the registry does not
 * say whether a handler tags in the create call or in a later TagResource, so an untagged create stays
 * allowed).
 */
export function iamScopeOf(
  typeName: string,
  permissions: Partial<Record<"create" | "read" | "update" | "delete" | "list", string[]>>,
  tags: { updatable: boolean; onCreate: boolean },
  facts: IamFactsBundle,
  index = actionIndex(facts),
): AwsccIamScope {
  const [, service = "", resource = ""] = typeName.split("::");
  const handlersBut = (but: "create" | "delete") =>
    new Set(
      (["create", "read", "update", "delete", "list"] as const)
        .filter((h) => h !== but)
        .flatMap((h) => permissions[h] ?? [])
        .map((a) => a.toLowerCase()),
    );
  const others = handlersBut("delete");
  const notCreate = handlersBut("create");
  const arns: string[] = [];
  const at = (pattern: string) => {
    if (!arns.includes(pattern)) arns.push(pattern);
    return arns.indexOf(pattern);
  };
  const scope: AwsccIamScope = { arns, actions: {} };
  const owned: string[] = [];
  const created: string[] = [];
  for (const action of [...new Set(Object.values(permissions).flat())].sort()) {
    const found = index.get(action.toLowerCase());
    const prefix = found?.name.split(":")[0] ?? "";
    const types = (found?.facts.resourceTypes ?? []).map((r) => ({
      r,
      t: facts.resourceTypes[`${prefix}:${r.name}`],
    }));
    // Not in the reference, or a type it names without an ARN: not a scope we can write, so as today.
    if (!found || types.some(({ t }) => !t)) {
      scope.actions[action] = "unlisted";
      continue;
    }
    if (types.length === 0) {
      scope.actions[action] = "any";
      continue;
    }
    scope.actions[action] = [...new Set(types.flatMap(({ t }) => arnPatterns(t?.arn ?? "").map(at)))].sort(
      (a, b) => a - b,
    );
    const own = (name: string) => norm(name) === norm(resource);
    if (
      tags.onCreate &&
      (permissions.create ?? []).includes(action) &&
      !notCreate.has(action.toLowerCase()) &&
      norm(service).startsWith(norm(prefix)) &&
      types.some(({ r }) => r.required && own(r.name)) &&
      types.every(({ r }) => !r.required || own(r.name)) &&
      [REQUEST_TAG, TAG_KEYS].every(
        (k) =>
          found.facts.conditionKeys.includes(k) ||
          types.some(({ r }) => own(r.name) && r.conditionKeys.includes(k)),
      )
    )
      created.push(action);
    if (
      tags.updatable &&
      (permissions.delete ?? []).includes(action) &&
      !others.has(action.toLowerCase()) &&
      norm(service).startsWith(norm(prefix)) &&
      types.every(
        ({ r, t }) =>
          norm(r.name) === norm(resource) &&
          (r.conditionKeys.includes(RESOURCE_TAG) || (t?.conditionKeys ?? []).includes(RESOURCE_TAG)),
      )
    )
      owned.push(action);
  }
  if (owned.length > 0) scope.owned = owned;
  if (created.length > 0) scope.created = created;
  return scope;
}
