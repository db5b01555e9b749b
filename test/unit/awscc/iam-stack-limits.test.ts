// The generated kinds' roles in the stack and outside it: their share of serverless.yml's CloudFormation
// template within CloudFormation's quotas (the template osls uploads is compact JSON, at most 1 MB from S3;
// at most 500 resources), each service's role the same whatever else is activated, and the policies for a
// Secret ProviderConfig's principal split the same way, one named set per role (docs/adr/0014).
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { generateAwscc } from "../../../infra/gen-awscc.ts";
import {
  accountPolicies,
  CFN_LIMITS,
  generatedPoliciesSection,
  generatedPoliciesWithinQuotas,
  generatedTemplateShare,
  roleGroups,
  roleGroupsSource,
  TEMPLATE_RESERVE,
} from "../../../infra/gen-kinds.ts";
import { IAM_LIMITS } from "../../../infra/iam-policies.ts";
import { loadAwsccCatalog, loadAwsccSpec } from "../../../shared/api/awscc/catalog.ts";
import type { AwsccKindSpec } from "../../../shared/api/awscc/spec.ts";
import { withNamespacedVariants } from "../../../shared/api/external.ts";
import { groupRoleArn } from "../../../shared/providers/awscc/group-roles.ts";
import { awsccProviders } from "../../../shared/providers/awscc/kinds.ts";
import { managedKinds, providerConfigKinds } from "../../../shared/providers/index.ts";

let specs: AwsccKindSpec[];
beforeAll(() => {
  generateAwscc();
  specs = loadAwsccCatalog().kinds.map((e) => loadAwsccSpec(e));
}, 300_000);

const TWENTY = [
  ...["DynamoDB", "SQS", "SNS", "Logs", "Lambda", "ECR", "KMS", "IAM", "S3", "EC2", "RDS", "ECS", "EKS"],
  ...["CloudWatch", "Events", "StepFunctions", "ApiGateway", "SecretsManager", "SSM", "Route53"],
];
const of = (services: string[]) => specs.filter((s) => services.includes(s.typeName.split("::")[1] ?? ""));
const registries = (chosen: readonly AwsccKindSpec[]) => ({
  kinds: [...managedKinds, ...withNamespacedVariants(awsccProviders(chosen))],
  providerConfigKinds,
});
interface Policy {
  PolicyDocument: {
    Statement: Array<{ Sid: string; Resource: string | Array<string | { "Fn::Sub": string }> }>;
  };
}
const roleOf = (groups: ReturnType<typeof roleGroups>) =>
  new Map(groups.flatMap((g) => g.services.map((s) => [s, g.role] as const)));

describe("the generated kinds' roles in serverless.yml's stack", () => {
  it("fit one CloudFormation stack with every kind activated: template bytes and resources within the quotas", () => {
    const measured = [
      ["EC2 alone", of(["EC2"])],
      ["20 common services", of(TWENTY)],
      ["every kind", specs],
    ] as const;
    const shares = measured.map(([, chosen]) => generatedTemplateShare(registries(chosen)));
    for (const share of shares) {
      expect(share.bytes + TEMPLATE_RESERVE.bytes).toBeLessThanOrEqual(CFN_LIMITS.templateBytesFromS3);
      expect(share.resources + TEMPLATE_RESERVE.resources).toBeLessThanOrEqual(CFN_LIMITS.resources);
    }
    // Measured (compact JSON, serverless variables unresolved — longer than any value they take): EC2 alone
    // 1 role, 8 policies, 52,924 bytes; 20 common services 12 roles, 27 policies, 149,094 bytes; every kind
    // 14 roles, 134 policies, 875,508 bytes (941,811 with each ARN an Fn::Join, as the inline policy writes
    // them: past the quota with the reserve).
    expect(shares.map((s) => s.resources)).toEqual([10, 40, 149]);
    expect(shares.map((s) => s.bytes)).toEqual([52_924, 149_094, 875_508]);
    // Each ARN's Fn::Sub is the statement's pattern: CloudFormation's pseudo parameters where the packed
    // statements have their placeholders, nothing else.
    const chosen = registries(of(["EC2"]));
    const yaml = parse(generatedPoliciesSection(chosen)) as Record<
      string,
      { Type: string; Properties: Policy }
    >;
    const written = Object.values(yaml)
      .filter((r) => r.Type === "AWS::IAM::ManagedPolicy")
      .flatMap((r) => r.Properties.PolicyDocument.Statement)
      .map((st) => ({
        sid: st.Sid,
        resources: (Array.isArray(st.Resource) ? st.Resource : [st.Resource]).map((r) =>
          typeof r === "string"
            ? r
            : r["Fn::Sub"].replace(/\$\{AWS::(Partition|AccountId)\}/g, (_, p: string) =>
                p === "Partition" ? "{partition}" : "{account}",
              ),
        ),
      }));
    const packed = roleGroups(chosen).flatMap((g) => g.policies.flat());
    expect(written).toEqual(packed.map((st) => ({ sid: st.sid, resources: st.resources })));
    expect(JSON.stringify(written)).toContain("{account}");
    // Past the quota, the generator refuses with the figures rather than writing a stack that fails.
    expect(generatedPoliciesWithinQuotas(chosen)).toBe(generatedPoliciesSection(chosen));
    expect(() =>
      generatedPoliciesWithinQuotas(chosen, { templateBytesFromS3: 90_000, resources: 500 }),
    ).toThrow(
      /take 52924 bytes and 10 resources .* past CloudFormation's 90000 bytes or 500 resources; activate fewer kinds/,
    );
    // Nothing generated activated: no share at all.
    expect(generatedTemplateShare({ kinds: managedKinds, providerConfigKinds })).toEqual({
      bytes: 0,
      resources: 0,
    });
  }, 300_000);
});

describe("a service's role", () => {
  it("is the same whatever else is activated: its role in the catalog's partition", () => {
    const all = roleOf(roleGroups(registries(specs)));
    for (const chosen of [of(["EC2"]), of(TWENTY), of([...TWENTY, "ACMPCA", "AppSync", "Batch"])]) {
      const groups = roleGroups(registries(chosen));
      for (const g of groups) {
        expect(g.policies.length).toBeLessThanOrEqual(IAM_LIMITS.managedPoliciesPerRole);
        for (const s of g.services) {
          expect(all.get(s), s).toBeGreaterThan(0);
          expect(g.role, s).toBe(all.get(s));
        }
      }
    }
    // EC2 alone keeps the role number it has with everything activated (not role 1).
    expect(roleGroups(registries(of(["EC2"])))[0]?.role).toBe(all.get("ec2"));
    expect(roleGroups(registries(of(["EC2"])))[0]?.role).not.toBe(1);
    // The functions' list has an empty entry for each role not created, so role n stays at index n - 1.
    const ec2 = all.get("ec2") ?? 0;
    expect(roleGroupsSource(registries(of(["EC2"])))).toContain(
      `= [\n${"  [],\n".repeat(ec2 - 1)}  ["ec2"],\n];`,
    );
    const groups = [...Array.from({ length: ec2 - 1 }, () => []), ["ec2"]];
    const env = { DRIFTLESS_AWSCC_ROLE_ARN_PREFIX: "arn:aws:iam::123456789012:role/d-reconcile-awscc" };
    expect(groupRoleArn("ec2", env, groups)).toBe(`${env.DRIFTLESS_AWSCC_ROLE_ARN_PREFIX}${ec2}`);
  }, 300_000);
});

describe("--account-policies", () => {
  it("prints one named set of at most 10 policies per role, and one for the hand-written kinds", () => {
    const stage = { account: "210987654321", region: "eu-west-1", partition: "aws", namePrefix: "managed-" };
    const chosen = of(TWENTY);
    const sets = accountPolicies(stage, registries(chosen));
    const groups = roleGroups(registries(chosen));
    expect(sets.map((s) => s.name)).toEqual([
      "driftless-kinds",
      ...groups.map((g) => `driftless-awscc${g.role}`),
    ]);
    for (const set of sets) {
      expect(set.policies.length).toBeGreaterThan(0);
      expect(set.policies.length).toBeLessThanOrEqual(IAM_LIMITS.managedPoliciesPerRole);
      for (const d of set.policies)
        expect(JSON.stringify(d).length).toBeLessThanOrEqual(IAM_LIMITS.managedPolicyChars);
    }
    expect(sets.slice(1).map((s) => s.services)).toEqual(groups.map((g) => g.services));
    expect(JSON.stringify(sets)).not.toMatch(/\{(account|partition|region|namePrefix)\}/);
  }, 300_000);
});
