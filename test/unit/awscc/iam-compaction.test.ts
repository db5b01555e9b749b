// The generated kinds' IAM as the role gets it, checked request by request against what the facts grant:
// each kind's own statements (handlerIam, unmerged) are the reference; the merged statements and the packed
// managed policies must allow exactly the same requests — every action of every kind, on a resource of each
// type the Service Authorization Reference names for it (in the stage's account and in another), with the
// kind's own ownership tag, another kind's, other tags or none, in the stage's region and in another.
import { beforeAll, describe, expect, it } from "vitest";
import { generateAwscc } from "../../../infra/gen-awscc.ts";
import { mergedStatements } from "../../../infra/gen-kinds.ts";
import { compactStatements, IAM_LIMITS, packPolicies, policySize } from "../../../infra/iam-policies.ts";
import { loadAwsccCatalog, loadAwsccSpec } from "../../../shared/api/awscc/catalog.ts";
import type { AwsccKindSpec } from "../../../shared/api/awscc/spec.ts";
import { withNamespacedVariants } from "../../../shared/api/external.ts";
import { handlerIam } from "../../../shared/providers/awscc/handler-iam.ts";
import { awsccProviders } from "../../../shared/providers/awscc/kinds.ts";
import { disagreements, RESOURCE_TAG, serviceOf } from "../../support/iam-requests.ts";

let specs: AwsccKindSpec[];
beforeAll(() => {
  generateAwscc();
  specs = loadAwsccCatalog().kinds.map((e) => loadAwsccSpec(e));
}, 120_000);

const generated = (chosen: readonly AwsccKindSpec[]) =>
  mergedStatements({ kinds: withNamespacedVariants(awsccProviders(chosen)), providerConfigKinds: [] });

/** Services whose kinds hold calls to their own tags, one with kinds of two services sharing an action. */
const SERVICES = ["SQS", "DynamoDB", "Logs", "ElasticLoadBalancingV2", "ElasticLoadBalancing"];

describe("the generated kinds' statements as the role gets them", () => {
  it("never allow one kind's tag-held call under another kind's ownership tag, merged or packed", () => {
    const chosen = specs.filter((s) => SERVICES.includes(serviceOf(s)));
    const merged = generated(chosen);
    const held = chosen.filter((s) => JSON.stringify(handlerIam(s)).includes(RESOURCE_TAG));
    expect(held.length).toBeGreaterThan(10);
    for (const statements of [merged, packPolicies(compactStatements(merged)).flat()]) {
      const { wrong, requests } = disagreements(chosen, statements);
      expect(requests).toBeGreaterThan(5_000);
      expect(wrong.slice(0, 5)).toEqual([]);
    }
  }, 300_000);

  it("packs every service's kinds, alone, into the managed policies one role takes by default", () => {
    const counts = new Map<string, number>();
    for (const service of new Set(specs.map(serviceOf))) {
      const docs = packPolicies(compactStatements(generated(specs.filter((s) => serviceOf(s) === service))));
      for (const d of docs) expect(policySize(d)).toBeLessThanOrEqual(IAM_LIMITS.managedPolicyChars);
      counts.set(service, docs.length);
    }
    // Measured: EC2 needs 8 (20 before compaction), no other service more than 4.
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(IAM_LIMITS.managedPoliciesPerRole);
    expect(counts.get("EC2")).toBeLessThanOrEqual(8);
  }, 300_000);
});
