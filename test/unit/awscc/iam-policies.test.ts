// The reconcile role's policy size with generated kinds activated, measured as IAM counts it, and the
// generated kinds' statements packed into managed policies that each fit IAM's 6,144-character limit:
// exactly the same permissions, the same packing every time, and a clear refusal past 20 policies.
import { beforeAll, describe, expect, it, vi } from "vitest";
import { generateAwscc } from "../../../infra/gen-awscc.ts";
import { accountPolicies, mergedStatements, roleGroups } from "../../../infra/gen-kinds.ts";
import { IAM_LIMITS, packPolicies, policySize } from "../../../infra/iam-policies.ts";
import { loadAwsccCatalog, loadAwsccSpec } from "../../../shared/api/awscc/catalog.ts";
import type { AwsccKindSpec } from "../../../shared/api/awscc/spec.ts";
import { type IamStatement, withNamespacedVariants } from "../../../shared/api/external.ts";
import { awsccProviders } from "../../../shared/providers/awscc/kinds.ts";
import { managedKinds, providerConfigKinds } from "../../../shared/providers/index.ts";

let specs: AwsccKindSpec[];
beforeAll(() => {
  generateAwscc();
  specs = loadAwsccCatalog().kinds.map((e) => loadAwsccSpec(e));
}, 120_000);

/** CloudFormation service names (`AWS::<service>::…`) a platform team commonly activates. */
const FOUR = ["DynamoDB", "SQS", "SNS", "Logs"];
const TWENTY = [
  ...FOUR,
  ...["Lambda", "ECR", "KMS", "IAM", "S3", "EC2", "RDS", "ECS", "EKS", "CloudWatch", "Events"],
  ...["StepFunctions", "ApiGateway", "SecretsManager", "SSM", "Route53"],
];
const of = (services: string[]) => specs.filter((s) => services.includes(s.typeName.split("::")[1] ?? ""));
const registries = (chosen: AwsccKindSpec[]) => ({
  kinds: [...managedKinds, ...withNamespacedVariants(awsccProviders(chosen))],
  providerConfigKinds,
});
const generatedStatements = (chosen: AwsccKindSpec[]) =>
  mergedStatements({ kinds: withNamespacedVariants(awsccProviders(chosen)), providerConfigKinds: [] });

/** A condition as its alternatives: one condition per choice of one value for each multi-valued key. */
function alternatives(condition: IamStatement["condition"]): string[] {
  let out: Array<Array<[string, string, string]>> = [[]];
  for (const [op, keys] of Object.entries(condition ?? {}))
    for (const [key, value] of Object.entries(keys)) {
      const values = Array.isArray(value) ? value : [value];
      out = out.flatMap((chosen) => values.map((v) => [...chosen, [op, key, v] as [string, string, string]]));
    }
  return out.map((c) => JSON.stringify(c.sort()));
}

/** What a set of statements allows, one line per action, resource and alternative of its condition. */
const grants = (statements: readonly IamStatement[]) =>
  new Set(
    statements.flatMap((s) =>
      s.actions.flatMap((a) =>
        s.resources.flatMap((r) => alternatives(s.condition).map((c) => `${a} ${r} ${c}`)),
      ),
    ),
  );

describe("the reconcile role's policy size", () => {
  it("fits the hand-written kinds inline, and outgrows the inline limit with four services' generated kinds", () => {
    const inline = mergedStatements({ kinds: managedKinds, providerConfigKinds });
    // Measured: 3,4xx characters of the inline 10,240 (serverless.yml's fixed statements come on top).
    expect(policySize(inline)).toBeLessThan(IAM_LIMITS.inlineRoleChars / 2);
    const four = generatedStatements(of(FOUR));
    expect(policySize(four)).toBeGreaterThan(IAM_LIMITS.inlineRoleChars);
  });

  it("packs the generated statements into managed policies of at most 6,144 characters, with exactly the same grants", () => {
    for (const services of [FOUR, ["IAM"]]) {
      const statements = generatedStatements(of(services));
      const docs = packPolicies(statements);
      for (const d of docs) expect(policySize(d)).toBeLessThanOrEqual(IAM_LIMITS.managedPolicyChars);
      expect(grants(docs.flat())).toEqual(grants(statements));
      // Sids stay unique inside each document, and the packing is the same every time.
      for (const d of docs) expect(new Set(d.map((s) => s.sid)).size).toBe(d.length);
      expect(packPolicies(statements)).toEqual(docs);
    }
    // A statement larger than a policy (EC2's scoped one) is split in parts that each fit.
    const ec2 = generatedStatements(of(["EC2"]));
    expect(Math.max(...ec2.map((s) => policySize([s])))).toBeGreaterThan(IAM_LIMITS.managedPolicyChars);
    expect(
      packPolicies(ec2)
        .flat()
        .some((s) => /P\d+$/.test(s.sid)),
    ).toBe(true);
  }, 120_000);

  it("gives the generated kinds roles of their own within IAM's default quota, and none when none is activated", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      for (const services of [FOUR, TWENTY]) {
        const groups = roleGroups(registries(of(services)));
        for (const g of groups)
          expect(g.policies.length).toBeLessThanOrEqual(IAM_LIMITS.managedPoliciesPerRole);
        // Each service in its catalog role (docs/adr/0014): four services take 3 roles; twenty common
        // services (263 kinds, 27 policies) take 12.
        expect(groups.length).toBe(services === FOUR ? 3 : 12);
      }
      expect(roleGroups({ kinds: managedKinds, providerConfigKinds })).toEqual([]);
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  }, 120_000);

  it("writes the same statements as policies for a role in another account: its account, partition and region in every ARN and condition", () => {
    const stage = {
      account: "210987654321",
      region: "eu-west-1",
      partition: "aws",
      namePrefix: "managed-prod-",
    };
    const docs = accountPolicies(stage, registries(of(FOUR))).flatMap((set) => set.policies);
    const text = JSON.stringify(docs);
    expect(text).not.toMatch(/\{(account|partition|region|namePrefix)\}/);
    const accounts = new Set(
      [...text.matchAll(/arn:aws:[a-z0-9-]*:[a-z0-9-*]*:(\d{12}):/g)].map((m) => m[1]),
    );
    expect([...accounts]).toEqual(["210987654321"]);
    expect(text).toContain('"aws:RequestedRegion":"eu-west-1"');
    for (const d of docs) expect(JSON.stringify(d).length).toBeLessThanOrEqual(IAM_LIMITS.managedPolicyChars);
    expect(() => accountPolicies({ ...stage, account: "2109" })).toThrow(/12-digit account id/);
  }, 120_000);
});
