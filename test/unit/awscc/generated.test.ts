// Every generated AWS kind (≈1,800 CloudFormation types) makes a valid structural CRD, offline; the
// activation rules select generated kinds only by name; the wire mapping and patches are exact.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadRegistryBundle } from "../../../infra/awscc/registry.ts";
import { awsccIsCurrent, generateAwscc } from "../../../infra/gen-awscc.ts";
import {
  activatedAwsccEntries,
  awsccPatternSelects,
  loadAwsccCatalog,
  loadAwsccSpec,
} from "../../../shared/api/awscc/catalog.ts";
import { awsccKindOf } from "../../../shared/api/awscc/kind.ts";
import { camelOf, pluralOf } from "../../../shared/api/awscc/spec.ts";
import { type JSONSchemaProps, managedCrd } from "../../../shared/api/crd.ts";
import { namespacedVariantOf } from "../../../shared/api/managed.ts";
import { allCrds } from "../../../shared/crds.ts";
import { desiredModel, observedOf, patchOf } from "../../../shared/providers/awscc/model.ts";
import { structuralProblems } from "../../support/structural.ts";

beforeAll(() => {
  generateAwscc();
}, 60_000);

describe("generated AWS kinds (Cloud Control)", () => {
  // 3,600 CRDs built and walked: minutes on a loaded 2-core machine, so a wider limit than the default.
  it("every generated CRD, both shapes, is a structural schema the API server accepts", {
    timeout: 300_000,
  }, () => {
    const catalog = loadAwsccCatalog();
    expect(catalog.kinds.length).toBeGreaterThan(1300);
    const problems: string[] = [];
    const names = new Set<string>();
    for (const e of catalog.kinds) {
      const def = awsccKindOf(loadAwsccSpec(e));
      for (const d of [def, namespacedVariantOf(def)]) {
        const crd = managedCrd(d);
        const name = crd.metadata.name;
        if (names.has(name)) problems.push(`${name}: twice`);
        names.add(name);
        if (name.length > 253 || name.split(".").some((l) => !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(l)))
          problems.push(`${name}: not a DNS subdomain`);
        const version = crd.spec.versions[0];
        if (!version?.additionalPrinterColumns.some((c) => c.name === "READY"))
          problems.push(`${name}: columns`);
        const schema = version?.schema.openAPIV3Schema as unknown as JSONSchemaProps;
        const meta = (schema.properties as Record<string, JSONSchemaProps>).metadata;
        if (Object.keys(meta ?? {}).join() !== "type") problems.push(`${name}: metadata has more than type`);
        structuralProblems(schema, name, problems);
        if (JSON.stringify(crd).length > 1_000_000) problems.push(`${name}: larger than 1 MB`);
      }
    }
    expect(problems.slice(0, 20)).toEqual([]);
  });

  it("records the registry schemas it was made from, and the data's README names the same origin", () => {
    const { bundle } = loadRegistryBundle();
    const { source, region, retrieved, licence } = bundle.origin;
    expect(loadAwsccCatalog().registry).toEqual({ source, region, retrieved, licence });
    expect(awsccIsCurrent()).toBe(true);
    // A refresh that leaves the README behind fails here: it must say which copy and which day.
    const readme = readFileSync(join(import.meta.dirname, "../../../infra/awscc/README.md"), "utf8");
    const version = /^(\S+ \S+)/.exec(source)?.[1] ?? source;
    expect(readme).toContain(version);
    expect(readme).toContain(retrieved);
    expect(readme).toContain(region);
  });

  it("no generated kind is in allCrds(): nothing is installed unless activated", () => {
    expect(allCrds().filter((c) => c.spec.group.includes(".awscc."))).toEqual([]);
  });

  it("activates generated kinds only by naming them", () => {
    const catalog = loadAwsccCatalog();
    const names = (p: string[]) => activatedAwsccEntries(p, catalog).map((e) => e.typeName);
    expect(names([])).toEqual([]);
    expect(names(["*"])).toEqual([]);
    expect(names(["*.aws.driftless.dev", "queues.sqs.aws.driftless.dev"])).toEqual([]);
    expect(names(["dynamodb.*"])).toEqual(["AWS::DynamoDB::GlobalTable", "AWS::DynamoDB::Table"]);
    expect(names(["dynamodb.table", "sns.topic"]).sort()).toEqual([
      "AWS::DynamoDB::Table",
      "AWS::SNS::Topic",
    ]);
    expect(names(["*.awscc.driftless.dev"]).length).toBe(catalog.kinds.length);
    const table = { group: "dynamodb.awscc", kind: "Table" };
    expect(
      awsccPatternSelects(
        "tables.dynamodb.awscc.driftless.dev",
        "tables.dynamodb.awscc.driftless.dev",
        table,
      ),
    ).toBe(true);
    expect(
      awsccPatternSelects(
        "tables.dynamodb.awscc.driftless.dev",
        "tables.dynamodb.awscc.m.driftless.dev",
        table,
      ),
    ).toBe(false);
    expect(awsccPatternSelects("dynamodb.*", "tables.dynamodb.awscc.m.driftless.dev", table)).toBe(true);
  });

  it("names fields as Crossplane does and pluralises kinds", () => {
    expect(["SSESpecification", "KMSKeyId", "VpcId", "ID", "TableName"].map(camelOf)).toEqual([
      "sseSpecification",
      "kmsKeyId",
      "vpcId",
      "id",
      "tableName",
    ]);
    expect(["Policy", "Alias", "Key", "Address"].map(pluralOf)).toEqual([
      "policies",
      "aliases",
      "keys",
      "addresses",
    ]);
  });

  it("maps forProvider to the wire and back, and patches only the drifted members", () => {
    const spec = loadAwsccSpec(
      loadAwsccCatalog().kinds.find((k) => k.typeName === "AWS::DynamoDB::Table") as never,
    );
    const forProvider = {
      keySchema: [{ attributeName: "id", keyType: "HASH" }],
      sseSpecification: { sseEnabled: true },
      tags: { team: "a" },
    };
    const wire = desiredModel(spec, { forProvider, externalName: "orders" });
    expect(wire).toEqual({
      TableName: "orders",
      KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
      SSESpecification: { SSEEnabled: true },
      Tags: [{ Key: "team", Value: "a" }],
    });
    expect(observedOf(spec, wire, "us-east-1")).toEqual({ region: "us-east-1", ...forProvider });
    const current = { ...wire, SSESpecification: { SSEEnabled: false, SSEType: "KMS" }, Tags: [] };
    expect(patchOf(spec, wire, current)).toEqual([
      { op: "add", path: "/SSESpecification/SSEEnabled", value: true },
      { op: "add", path: "/Tags", value: [{ Key: "team", Value: "a" }] },
    ]);
  });

  it("takes secrets from Secret references and never declares them comparable", () => {
    const spec = loadAwsccSpec(
      loadAwsccCatalog().kinds.find((k) => k.typeName === "AWS::RDS::DBCluster") as never,
    );
    const def = awsccKindOf(spec);
    expect(def.forProvider.shape).toHaveProperty("masterUserPasswordSecretRef");
    expect(def.forProvider.shape).not.toHaveProperty("masterUserPassword");
    expect(def.fields.masterUserPasswordSecretRef).toEqual({ writeOnly: true });
  });
});
