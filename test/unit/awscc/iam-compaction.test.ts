// The generated kinds' IAM as the role gets it, checked request by request against what the facts grant:
// each kind's own statements (handlerIam, unmerged) are the reference; the merged statements and the packed
// managed policies must allow exactly the same requests — every action of every kind, on a resource of each
// type the Service Authorization Reference names for it (in the stage's account and in another), with the
// kind's own ownership tag, another kind's, other tags or none, in the stage's region and in another.
import { beforeAll, describe, expect, it } from "vitest";
import { generateAwscc } from "../../../infra/gen-awscc.ts";
import { mergedStatements } from "../../../infra/gen-kinds.ts";
import {
  compactStatements,
  IAM_LIMITS,
  packPolicies,
  policySize,
  WORST_CASE_STAGE,
} from "../../../infra/iam-policies.ts";
import { loadAwsccCatalog, loadAwsccSpec } from "../../../shared/api/awscc/catalog.ts";
import type { AwsccKindSpec } from "../../../shared/api/awscc/spec.ts";
import { type IamStatement, withNamespacedVariants } from "../../../shared/api/external.ts";
import { DefaultTagKey } from "../../../shared/api/external-tags.ts";
import { handlerIam } from "../../../shared/providers/awscc/handler-iam.ts";
import { awsccProviders } from "../../../shared/providers/awscc/kinds.ts";
import { IamEvaluator, type IamRequest } from "../../support/iam-eval.ts";

let specs: AwsccKindSpec[];
beforeAll(() => {
  generateAwscc();
  specs = loadAwsccCatalog().kinds.map((e) => loadAwsccSpec(e));
}, 120_000);

const STAGE = WORST_CASE_STAGE;
const OTHER_ACCOUNT = "999999999999";
const OTHER_REGION = "us-west-2";
const RESOURCE_TAG = `aws:ResourceTag/${DefaultTagKey.kind}`;
const REQUEST_TAG = `aws:RequestTag/${DefaultTagKey.kind}`;

const serviceOf = (s: AwsccKindSpec) => s.typeName.split("::")[1] ?? "";
const generated = (chosen: readonly AwsccKindSpec[]) =>
  mergedStatements({ kinds: withNamespacedVariants(awsccProviders(chosen)), providerConfigKinds: [] });

/** An ARN pattern of a spec as one concrete ARN: the stage's region (or none), `x` for every name. */
function sampleArn(pattern: string, account: string): string {
  const [arn, partition, service, region, acct, ...rest] = pattern.split(":");
  return [arn, partition, service, region === "*" ? STAGE.region : region, acct, ...rest]
    .join(":")
    .replaceAll("*", "x")
    .replaceAll("{partition}", STAGE.partition)
    .replaceAll("{account}", account);
}

/** The ARNs an action of a kind acts on (the reference's types, in both accounts), or `*`. */
function resourcesOf(spec: AwsccKindSpec, action: string): string[] {
  const at = spec.iam?.actions[action];
  if (!Array.isArray(at)) return ["*"];
  return at.flatMap((i) =>
    [STAGE.account, OTHER_ACCOUNT].map((acct) => sampleArn(spec.iam?.arns[i] ?? "", acct)),
  );
}

/** The ownership tag value of a kind (the cluster-scoped shape's), as defaultTagsOf writes it. */
const tagOf = (s: AwsccKindSpec) => `${s.kind}.${s.group}.driftless.dev`.toLowerCase();

/**
 * Every request to check for `chosen`: each action of each kind on each of its resources, in the stage's
 * region and another, with no tags, with the kind's own tag, with `other`'s tag (another kind of the same
 * service where there is one), and with tags that are not the ownership tag.
 */
function requestsOf(chosen: readonly AwsccKindSpec[]): IamRequest[] {
  const byService = new Map<string, AwsccKindSpec[]>();
  for (const s of chosen) byService.set(serviceOf(s), [...(byService.get(serviceOf(s)) ?? []), s]);
  const seen = new Set<string>();
  const out: IamRequest[] = [];
  for (const spec of chosen) {
    const mates = byService.get(serviceOf(spec)) ?? [];
    const other = mates[(mates.indexOf(spec) + 1) % mates.length] ?? spec;
    const own = tagOf(spec);
    const foreign = tagOf(other);
    // The stage's region with no tags, each ownership tag on the resource or in the request, tags that
    // are not the ownership tag; another region with the kind's own tags.
    const contexts: Array<IamRequest["context"]> = [
      { "aws:RequestedRegion": STAGE.region },
      ...[own, foreign].flatMap((t) => [
        { "aws:RequestedRegion": STAGE.region, [RESOURCE_TAG]: t },
        { "aws:RequestedRegion": STAGE.region, [REQUEST_TAG]: t, "aws:TagKeys": [DefaultTagKey.kind] },
      ]),
      { "aws:RequestedRegion": STAGE.region, "aws:TagKeys": ["team"] },
      { "aws:RequestedRegion": OTHER_REGION },
      {
        "aws:RequestedRegion": OTHER_REGION,
        [RESOURCE_TAG]: own,
        [REQUEST_TAG]: own,
        "aws:TagKeys": [DefaultTagKey.kind],
      },
    ];
    for (const action of new Set(Object.values(spec.permissions).flat()))
      for (const resource of resourcesOf(spec, action))
        for (const context of contexts) {
          const req = { action, resource, context };
          const key = JSON.stringify(req);
          if (seen.has(key)) continue;
          seen.add(key);
          out.push(req);
        }
  }
  return out;
}

/** The requests on which `actual` and the reference (each kind's own statements) disagree. */
function disagreements(chosen: readonly AwsccKindSpec[], actual: readonly IamStatement[]) {
  const reference = new IamEvaluator(chosen.flatMap(handlerIam));
  const tried = new IamEvaluator(actual);
  const wrong: string[] = [];
  const requests = requestsOf(chosen);
  for (const req of requests) {
    const want = reference.allows(req);
    if (tried.allows(req) !== want) wrong.push(`${want ? "refused" : "allowed"}: ${JSON.stringify(req)}`);
  }
  return { wrong, requests: requests.length };
}

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
