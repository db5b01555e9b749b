// What a generated kind needs outside the cluster and inside it: IAM statements from its registry schema's
// handler permissions (one statement per service, however many kinds of it are activated), and RBAC rules
// for exactly the activated kinds, both shapes, by the generators the hand-written kinds use.
import { beforeAll, describe, expect, it } from "vitest";
import { permissionsOf, type RegistrySchema } from "../../../infra/awscc/registry.ts";
import { generateAwscc } from "../../../infra/gen-awscc.ts";
import { mergedStatements } from "../../../infra/gen-kinds.ts";
import { rbacObjects } from "../../../infra/k8s/gen-rbac.ts";
import { activatedAwsccEntries, loadAwsccCatalog, loadAwsccSpec } from "../../../shared/api/awscc/catalog.ts";
import type { AwsccKindSpec } from "../../../shared/api/awscc/spec.ts";
import { withNamespacedVariants } from "../../../shared/api/external.ts";
import { handlerIam } from "../../../shared/providers/awscc/cloudcontrol.ts";
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

  it("makes one statement per service of the handlers' actions, merged across that service's kinds", () => {
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
        actions: ["dynamodb:CreateTable", "dynamodb:DeleteTable", "kms:DescribeKey"],
        resources: ["*"],
      }),
    ]);
    const statements = mergedStatements({
      kinds: withNamespacedVariants(awsccProviders([table, global, topic])),
      providerConfigKinds: [],
    });
    expect(statements.map((s) => s.sid)).toEqual(["CloudControl", "AwsccDynamodb", "AwsccSns"]);
    expect(statements.find((s) => s.sid === "AwsccDynamodb")?.actions.sort()).toEqual([
      "dynamodb:CreateTable",
      "dynamodb:CreateTableReplica",
      "dynamodb:DeleteTable",
      "kms:DescribeKey",
    ]);
  });

  it("adds no service statement for a kind whose schema copy has no handlers", () => {
    expect(handlerIam({ ...specOf("AWS::SNS::Topic"), permissions: {} })).toEqual([]);
  });
});

describe("RBAC of generated kinds", () => {
  it("grants the reconciler exactly the activated generated kinds, both shapes", () => {
    const catalog = loadAwsccCatalog();
    const specs = activatedAwsccEntries(["dynamodb.table", "sns.topic"], catalog).map((e) =>
      loadAwsccSpec(e),
    );
    const managed = withNamespacedVariants(awsccProviders(specs)).map((k) => k.definition);
    const rules = rbacObjects(managed, []).flatMap(
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
  });
});
