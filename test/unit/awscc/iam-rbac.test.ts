// What a generated kind needs outside the cluster and inside it: IAM statements from its registry schema's
// handler permissions (one statement per service, however many kinds of it are activated), and RBAC rules
// for exactly the activated kinds, both shapes, by the generators the hand-written kinds use.
import { beforeAll, describe, expect, it } from "vitest";
import {
  loadHandlerFacts,
  loadRegistryBundle,
  permissionsOf,
  type RegistrySchema,
} from "../../../infra/awscc/registry.ts";
import { generateAwscc } from "../../../infra/gen-awscc.ts";
import { mergedStatements, statementYaml } from "../../../infra/gen-kinds.ts";
import { awsccRbacObjects, rbacObjects } from "../../../infra/k8s/gen-rbac.ts";
import { activatedAwsccEntries, loadAwsccCatalog, loadAwsccSpec } from "../../../shared/api/awscc/catalog.ts";
import type { AwsccKindSpec } from "../../../shared/api/awscc/spec.ts";
import { withNamespacedVariants } from "../../../shared/api/external.ts";
import { GLOBAL_SERVICES } from "../../../shared/providers/aws/global-services.ts";
import { handlerIam } from "../../../shared/providers/awscc/handler-iam.ts";
import { awsccProviders } from "../../../shared/providers/awscc/kinds.ts";

beforeAll(() => {
  generateAwscc();
}, 60_000);

const specOf = (typeName: string): AwsccKindSpec =>
  loadAwsccSpec(loadAwsccCatalog().kinds.find((k) => k.typeName === typeName) as never);

describe("IAM of generated kinds", () => {
  it("reads each handler's permissions from the registry schema, sorted and without repeats", () => {
    const schema: RegistrySchema = {
      typeName: "AWS::Example::Thing",
      handlers: {
        create: { permissions: ["example:CreateThing", "example:DescribeThing", "example:CreateThing"] },
        read: { permissions: ["example:DescribeThing"] },
        delete: { permissions: [] },
      },
    };
    expect(permissionsOf(schema)).toEqual({
      create: ["example:CreateThing", "example:DescribeThing"],
      read: ["example:DescribeThing"],
    });
    expect(permissionsOf({ typeName: "AWS::Example::Bare" })).toEqual({});
  });

  it("makes one statement per service and scope of the handlers' actions, merged across that service's kinds", () => {
    const table = {
      ...specOf("AWS::DynamoDB::Table"),
      permissions: { create: ["dynamodb:CreateTable", "kms:DescribeKey"], delete: ["dynamodb:DeleteTable"] },
    };
    const global = {
      ...specOf("AWS::DynamoDB::GlobalTable"),
      permissions: { create: ["dynamodb:CreateTable", "dynamodb:CreateTableReplica"] },
    };
    const topic = { ...specOf("AWS::SNS::Topic"), permissions: { create: ["sns:CreateTopic"] } };
    expect(handlerIam(table)).toEqual([
      expect.objectContaining({
        sid: "AwsccDynamodb",
        actions: ["dynamodb:CreateTable", "kms:DescribeKey"],
        resources: ["arn:{partition}:dynamodb:*:{account}:table/*", "arn:{partition}:kms:*:{account}:key/*"],
        condition: { StringEquals: { "aws:RequestedRegion": "{region}" } },
      }),
      expect.objectContaining({ sid: "AwsccDynamodbOwnedTable", actions: ["dynamodb:DeleteTable"] }),
    ]);
    const statements = mergedStatements({
      kinds: withNamespacedVariants(awsccProviders([table, global, topic])),
      providerConfigKinds: [],
    });
    expect(statements.map((s) => s.sid)).toEqual([
      "CloudControl",
      "AwsccDynamodb",
      "AwsccDynamodbOwnedTable",
      // CreateTopic carries the topic's tags (tagOnCreate): with the kind's tag, or with none.
      "AwsccSnsCreateTopic",
      "AwsccSnsCreateUntagged",
    ]);
    expect(statements.find((s) => s.sid === "AwsccDynamodb")?.actions.sort()).toEqual([
      "dynamodb:CreateTable",
      "dynamodb:CreateTableReplica",
      "kms:DescribeKey",
    ]);
  });

  it("adds no service statement for a kind whose schema copy has no handlers", () => {
    expect(handlerIam({ ...specOf("AWS::SNS::Topic"), permissions: {} })).toEqual([]);
  });

  it("adds the tagging permissions to the handlers that write tags", () => {
    const schema: RegistrySchema = {
      typeName: "AWS::Example::Thing",
      tagging: { taggable: true, permissions: ["example:TagResource", "example:UntagResource"] },
      handlers: {
        create: { permissions: ["example:CreateThing"] },
        read: { permissions: ["example:DescribeThing"] },
        delete: { permissions: ["example:DeleteThing"] },
      },
    };
    expect(permissionsOf(schema)).toEqual({
      create: ["example:CreateThing", "example:TagResource", "example:UntagResource"],
      read: ["example:DescribeThing"],
      delete: ["example:DeleteThing"],
    });
  });
});

describe("handler facts of every generated kind", () => {
  const facts = loadHandlerFacts();
  const catalog = () => loadAwsccCatalog();

  it("generates only types Cloud Control provisions: each has the published handlers and their permissions", () => {
    const problems: string[] = [];
    for (const e of catalog().kinds) {
      const spec = loadAwsccSpec(e);
      const f = facts.types[e.typeName];
      if (!f) {
        problems.push(`${e.typeName}: no published handlers`);
        continue;
      }
      expect(spec.handlers).toEqual(
        (["create", "read", "update", "delete", "list"] as const).filter((h) => f.handlers[h]),
      );
      for (const h of ["create", "read"] as const)
        if (!(spec.handlers ?? []).includes(h)) problems.push(`${e.typeName}: no ${h} handler`);
      if ((spec.permissions.create?.length ?? 0) === 0) problems.push(`${e.typeName}: no create permissions`);
      for (const h of spec.handlers ?? [])
        for (const a of f.handlers[h]?.permissions ?? [])
          if (!spec.permissions[h]?.includes(a)) problems.push(`${e.typeName} ${h}: ${a} missing`);
    }
    expect(catalog().kinds.length).toBeGreaterThan(1300);
    expect(problems).toEqual([]);
  });

  it("leaves out the registry's NON_PROVISIONABLE types (no handlers published): Cloud Control refuses them", () => {
    const { bundle } = loadRegistryBundle();
    const generated = new Set(catalog().kinds.map((k) => k.typeName));
    for (const t of [
      "AWS::CloudFormation::WaitConditionHandle",
      "AWS::IAM::AccessKey",
      "AWS::AppMesh::Mesh",
    ]) {
      expect(bundle.schemas[t]).toBeDefined();
      expect(facts.types[t]).toBeUndefined();
      expect(generated.has(t)).toBe(false);
    }
  });

  it("makes every type without an update handler (IMMUTABLE) create-only in every property", () => {
    const spec = specOf("AWS::EC2::SubnetRouteTableAssociation");
    expect(spec.handlers).not.toContain("update");
    expect(spec.createOnly.sort()).toEqual(Object.keys(spec.properties).sort());
  });

  it("every kind's generated IAM (the serverless.yml statements) covers all its handlers' permissions", {
    timeout: 300_000,
  }, () => {
    const specs = catalog().kinds.map((e) => loadAwsccSpec(e));
    const statements = mergedStatements({
      kinds: withNamespacedVariants(awsccProviders(specs)),
      providerConfigKinds: [],
    });
    const allowed = new Set(statements.flatMap((s) => s.actions));
    const missing = specs.flatMap((s) =>
      Object.values(s.permissions)
        .flat()
        .filter((a) => !allowed.has(a))
        .map((a) => `${s.typeName}: ${a}`),
    );
    expect(missing).toEqual([]);
    expect(allowed.has("cloudformation:CreateResource")).toBe(true);
    expect(allowed.has("dynamodb:CreateTable")).toBe(true);
  });

  it("holds every regional service's actions to the stage's region, and never a global service's", () => {
    const regional = { StringEquals: { "aws:RequestedRegion": "{region}" } };
    const specs = catalog().kinds.map((e) => loadAwsccSpec(e));
    const statements = mergedStatements({
      kinds: withNamespacedVariants(awsccProviders(specs)),
      providerConfigKinds: [],
    });
    const globalPrefixes = ["iam", "route53", "cloudfront", "organizations"];
    const isGlobal = (a: string) => GLOBAL_SERVICES.has(a.split(":")[0] ?? "");
    for (const s of statements) {
      if (s.actions.some(isGlobal)) {
        expect(s.actions.every(isGlobal), s.sid).toBe(true);
        expect(s.condition?.StringEquals?.["aws:RequestedRegion"], s.sid).toBeUndefined();
      } else expect(s.condition?.StringEquals, s.sid).toMatchObject(regional.StringEquals);
    }
    const inRegion = (s: (typeof statements)[number]) => s.condition?.StringEquals?.["aws:RequestedRegion"];
    const conditioned = new Set(statements.filter(inRegion).flatMap((s) => s.actions));
    const unconditioned = new Set(statements.filter((s) => !inRegion(s)).flatMap((s) => s.actions));
    for (const p of globalPrefixes) {
      expect(
        [...unconditioned].some((a) => a.startsWith(`${p}:`)),
        p,
      ).toBe(true);
      expect(
        [...conditioned].some((a) => a.startsWith(`${p}:`)),
        p,
      ).toBe(false);
    }
    expect(conditioned.has("dynamodb:CreateTable")).toBe(true);
    expect(conditioned.has("cloudformation:ListResources")).toBe(true);
    // serverless.yml writes the stage's region into the condition.
    const yaml = statementYaml(
      statements.find((s) => s.sid === "CloudControl") as (typeof statements)[number],
    );
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the Serverless variable serverless.yml holds
    expect(yaml.join("\n")).toContain('aws:RequestedRegion: "${self:custom.stage.region}"');
  }, 300_000);
});

describe("RBAC of generated kinds", () => {
  it("grants the reconciler exactly the activated generated kinds, both shapes", () => {
    const catalog = loadAwsccCatalog();
    const specs = activatedAwsccEntries(["dynamodb.table", "sns.topic"], catalog).map((e) =>
      loadAwsccSpec(e),
    );
    const managed = withNamespacedVariants(awsccProviders(specs)).map((k) => k.definition);
    const rules = awsccRbacObjects(managed).flatMap(
      (o) => (o as { rules?: Array<{ apiGroups: string[]; resources: string[] }> }).rules ?? [],
    );
    const awscc = rules
      .filter((r) => r.apiGroups.some((g) => g.includes(".awscc.")))
      .flatMap((r) => r.resources.map((res) => `${res}.${r.apiGroups[0]}`));
    expect([...new Set(awscc)].sort()).toEqual([
      "tables.dynamodb.awscc.driftless.dev",
      "tables.dynamodb.awscc.m.driftless.dev",
      "tables/status.dynamodb.awscc.driftless.dev",
      "tables/status.dynamodb.awscc.m.driftless.dev",
      "topics.sns.awscc.driftless.dev",
      "topics.sns.awscc.m.driftless.dev",
      "topics/status.sns.awscc.driftless.dev",
      "topics/status.sns.awscc.m.driftless.dev",
    ]);
    // Their own ClusterRoles, bound to the same identities: rbac.yaml (the default) never holds them.
    expect(awsccRbacObjects(managed).map((o) => (o as { metadata: { name: string } }).metadata.name)).toEqual(
      [
        "driftless-forwarder-awscc",
        "driftless-forwarder-awscc",
        "driftless-reconciler-awscc",
        "driftless-reconciler-awscc",
      ],
    );
    expect(JSON.stringify(rbacObjects())).not.toContain(".awscc.");
  });
});
