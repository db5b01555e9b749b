// A generated AWS kind's zod schemas are built on the kind's first use, not when it is activated (the AWS
// functions' cold start), and every path still validates with the kind's one schema: the facts the
// registry reads at start are there without them, and the schema built lazily is the one built eagerly.
// The activated kinds are built once per process: the registry's and the served kinds' are the same.
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { servedAwsKinds } from "../../../functions/aws/kinds.ts";
import { generateAwscc } from "../../../infra/gen-awscc.ts";
import { loadAwsccCatalog, loadAwsccSpec } from "../../../shared/api/awscc/catalog.ts";
import { awsccKindOf, awsccSchemas } from "../../../shared/api/awscc/kind.ts";
import type { AwsccKindSpec } from "../../../shared/api/awscc/spec.ts";
import { localizeSecretRefs, namespacedVariantOf } from "../../../shared/api/managed.ts";
import { activatedAwsccKinds } from "../../../shared/providers/awscc/kinds.ts";
import { built, expectActivatedBuiltOnce } from "../../support/lazy-kinds.ts";

const spec = (typeName: string): AwsccKindSpec => {
  const e = loadAwsccCatalog().kinds.find((k) => k.typeName === typeName);
  if (!e) throw new Error(`${typeName} is not generated`);
  return loadAwsccSpec(e);
};

beforeAll(() => {
  generateAwscc();
}, 120_000);

describe("generated AWS kinds build their schemas on first use", () => {
  it("defining a kind builds no zod schema; its references, immutable and write-only fields are there", () => {
    const s = spec("AWS::Amplify::App");
    const def = awsccKindOf(s);
    const ns = namespacedVariantOf(def);
    for (const d of [def, ns])
      for (const key of ["forProvider", "atProvider", "spec", "status"] as const)
        expect(built(d, key), `${d.group} ${key}`).toBe(false);
    expect(def.references.map((r) => r.refField)).toEqual(["iamServiceRoleRef"]);
    expect(def.immutable[0]).toBe("region");
    expect(def.fields.accessTokenSecretRef).toEqual({ writeOnly: true });
    const first = def.forProvider;
    expect(def.forProvider).toBe(first);
    expect(Object.keys(first.shape)).toEqual(
      expect.arrayContaining([
        "region",
        "accessTokenSecretRef",
        "iamServiceRoleRef",
        "iamServiceRoleSelector",
      ]),
    );
  });

  it("the schemas built lazily are the ones built eagerly, in both shapes", () => {
    for (const type of ["AWS::AmazonMQ::Broker", "AWS::Amplify::Branch", "AWS::EC2::Subnet"]) {
      const s = spec(type);
      const def = awsccKindOf(s);
      const eager = awsccSchemas(s);
      expect(z.toJSONSchema(def.forProvider)).toEqual(z.toJSONSchema(eager.forProvider));
      expect(z.toJSONSchema(def.atProvider)).toEqual(z.toJSONSchema(eager.atProvider));
      const local = localizeSecretRefs(eager.forProvider);
      const ns = namespacedVariantOf(def);
      expect(z.toJSONSchema(ns.forProvider)).toEqual(z.toJSONSchema(local.schema));
      expect(ns.secretRefPaths).toEqual(local.paths);
      // Every reference the facts name has its Ref and Selector in the schema.
      for (const r of def.references)
        expect(Object.keys(def.forProvider.shape)).toEqual(
          expect.arrayContaining([r.refField, r.selectorField]),
        );
    }
  });

  it("the activated kinds are built once: the registry's and the served kinds' are the same definitions", async () => {
    const entry = loadAwsccCatalog().kinds.find((k) => k.typeName === "AWS::Logs::LogGroup");
    if (!entry) throw new Error("AWS::Logs::LogGroup is not generated");
    await expectActivatedBuiltOnce({ entry, activated: activatedAwsccKinds, served: servedAwsKinds });
  });
});
