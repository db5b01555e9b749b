// Every generated kind activated at once: the kinds partitioned by service into roles that each take IAM's
// default quotas (10 managed policies of 6,144 characters, a 64-character role name, a trust policy of
// 2,048 characters), and each role's packed policies allow exactly what its kinds' own statements allow —
// request by request (test/support/iam-eval.ts), every action of every kind of every service — so every
// handler action of every kind is allowed by the role its calls go out as (docs/adr/0014).
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { generateAwscc } from "../../../infra/gen-awscc.ts";
import {
  awsccRoleResource,
  generatedPoliciesSection,
  roleGroups,
  roleGroupsSource,
} from "../../../infra/gen-kinds.ts";
import { IAM_LIMITS, policySize } from "../../../infra/iam-policies.ts";
import { loadAwsccCatalog, loadAwsccSpec } from "../../../shared/api/awscc/catalog.ts";
import type { AwsccKindSpec } from "../../../shared/api/awscc/spec.ts";
import { withNamespacedVariants } from "../../../shared/api/external.ts";
import { DefaultTagKey } from "../../../shared/api/external-tags.ts";
import { groupRoleArn } from "../../../shared/providers/awscc/group-roles.ts";
import { awsccProviders } from "../../../shared/providers/awscc/kinds.ts";
import { managedKinds, providerConfigKinds } from "../../../shared/providers/index.ts";
import { IamEvaluator } from "../../support/iam-eval.ts";
import {
  disagreements,
  REQUEST_TAG,
  RESOURCE_TAG,
  resourcesOf,
  STAGE,
  tagOf,
} from "../../support/iam-requests.ts";

let specs: AwsccKindSpec[];
let all: ReturnType<typeof roleGroups>;
const registries = (chosen: readonly AwsccKindSpec[]) => ({
  kinds: [...managedKinds, ...withNamespacedVariants(awsccProviders(chosen))],
  providerConfigKinds,
});
beforeAll(() => {
  generateAwscc();
  specs = loadAwsccCatalog().kinds.map((e) => loadAwsccSpec(e));
  all = roleGroups(registries(specs));
}, 300_000);

const serviceOfSpec = (s: AwsccKindSpec) => s.group.split(".")[0] ?? "";

/** The longest role name a stage can give: serverless.yml's `<service>-<stage>-<region>-reconcile-awscc<n>`. */
const WORST_ROLE_NAME_PREFIX = `driftless-production-${STAGE.region}-reconcile-awscc`;

describe("the generated kinds' roles, every kind activated", () => {
  it("partition every service's kinds into roles that each fit IAM's default quotas, the same every time", () => {
    const services = [...new Set(specs.map(serviceOfSpec))].sort();
    // Each service in exactly one role, none left out.
    expect(all.flatMap((g) => g.services).sort()).toEqual(services);
    for (const g of all) {
      expect(g.policies.length).toBeGreaterThan(0);
      expect(g.policies.length).toBeLessThanOrEqual(IAM_LIMITS.managedPoliciesPerRole);
      for (const d of g.policies) expect(policySize(d)).toBeLessThanOrEqual(IAM_LIMITS.managedPolicyChars);
    }
    expect(`${WORST_ROLE_NAME_PREFIX}${all.length}`.length).toBeLessThanOrEqual(64);
    // Measured: 1,401 kinds of 259 services in 14 roles, 134 managed policies (10 at most each).
    expect(all.map((g) => g.role)).toEqual(Array.from({ length: 14 }, (_, n) => n + 1));
    expect(all.reduce((n, g) => n + g.policies.length, 0)).toBe(134);
    expect(roleGroups(registries(specs))).toEqual(all);
  }, 300_000);

  it("allow each kind's every request exactly as its own statements do, under its own role, for every service", () => {
    let requests = 0;
    for (const g of all) {
      const mine = specs.filter((s) => g.services.includes(serviceOfSpec(s)));
      const { wrong, requests: n } = disagreements(mine, g.policies.flat());
      requests += n;
      expect(wrong.slice(0, 5)).toEqual([]);
      // And every handler action is allowed at all: on its own resource types in the stage's account and
      // region, with the kind's ownership tag where a call is held to it.
      const role = new IamEvaluator(g.policies.flat());
      for (const spec of mine)
        for (const action of new Set(Object.values(spec.permissions).flat())) {
          // A resource of its first type in the stage's account (or `*`), without tags or with the kind's own.
          const resource = resourcesOf(spec, action)[0] ?? "*";
          const owned = {
            "aws:RequestedRegion": STAGE.region,
            [RESOURCE_TAG]: tagOf(spec),
            [REQUEST_TAG]: tagOf(spec),
            "aws:TagKeys": [DefaultTagKey.kind],
          };
          const allowed = [{ "aws:RequestedRegion": STAGE.region }, owned].some((context) =>
            role.allows({ action, resource, context }),
          );
          expect(allowed, `${spec.typeName} ${action}`).toBe(true);
        }
    }
    // Measured: 499,305 requests, ~37 s under load.
    expect(requests).toBeGreaterThan(400_000);
  }, 600_000);

  it("are assumed by the reconcile role alone, which may assume exactly them", () => {
    const four = registries(
      specs.filter((s) => ["dynamodb", "sqs", "sns", "logs"].includes(serviceOfSpec(s))),
    );
    const groups = roleGroups(four);
    const yaml = parse(generatedPoliciesSection(four)) as Record<
      string,
      { Type: string; Properties: Record<string, unknown> }
    >;
    const roles = groups.map((g) => awsccRoleResource(g.role));
    const assume = yaml.ReconcileAssumeAwsccRoles?.Properties as {
      Roles: unknown;
      PolicyDocument: { Statement: Array<{ Action: string; Resource: unknown[] }> };
    };
    expect(assume.Roles).toEqual([{ Ref: "ReconcileRole" }]);
    expect(assume.PolicyDocument.Statement).toHaveLength(1);
    expect(assume.PolicyDocument.Statement[0]?.Action).toBe("sts:AssumeRole");
    expect(assume.PolicyDocument.Statement[0]?.Resource).toEqual(
      roles.map((r) => ({ "Fn::GetAtt": [r, "Arn"] })),
    );
    for (const [n, role] of roles.entries()) {
      const p = yaml[role]?.Properties as { RoleName: string; AssumeRolePolicyDocument: unknown };
      expect(yaml[role]?.Type).toBe("AWS::IAM::Role");
      expect(p.RoleName).toBe(`\${self:custom.awsccRoleNamePrefix}${groups[n]?.role}`);
      const trust = JSON.stringify(p.AssumeRolePolicyDocument);
      expect(trust).toBe(
        JSON.stringify({
          Version: "2012-10-17",
          Statement: [
            {
              Effect: "Allow",
              Principal: { AWS: { "Fn::GetAtt": ["ReconcileRole", "Arn"] } },
              Action: "sts:AssumeRole",
            },
          ],
        }),
      );
      // The trust policy as IAM counts it, with the reconcile role's ARN in place: far below 2,048.
      expect(trust.length).toBeLessThan(2_048);
      const policies = Object.entries(yaml).filter(([k]) => k.startsWith(`${role}Policy`));
      expect(policies).toHaveLength(groups[n]?.policies.length ?? -1);
      for (const [, p] of policies) {
        expect(p.Type).toBe("AWS::IAM::ManagedPolicy");
        expect(p.Properties.Roles).toEqual([{ Ref: role }]);
      }
    }
    // Nothing generated activated: no role, no assume permission.
    expect(generatedPoliciesSection({ kinds: managedKinds, providerConfigKinds })).toBe("");
  }, 120_000);

  it("tell the functions each service's role: role n for the services of group n, none without the deployment's prefix", () => {
    const groups = all.map((g) => g.services);
    expect(roleGroupsSource(registries(specs))).toContain(
      `[${JSON.stringify(groups[0]).slice(1, 30).replaceAll(",", ", ")}`,
    );
    const env = {
      DRIFTLESS_AWSCC_ROLE_ARN_PREFIX: "arn:aws:iam::123456789012:role/d-prod-us-east-1-reconcile-awscc",
    };
    for (const [n, g] of groups.entries())
      for (const service of g)
        expect(groupRoleArn(service, env, groups)).toBe(`${env.DRIFTLESS_AWSCC_ROLE_ARN_PREFIX}${n + 1}`);
    expect(groupRoleArn("ec2", {}, groups)).toBeUndefined();
    expect(groupRoleArn("nosuchservice", env, groups)).toBeUndefined();
  });
});
