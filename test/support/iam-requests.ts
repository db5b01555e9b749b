// The requests that tell two sets of IAM statements apart for the generated kinds (used with iam-eval.ts):
// every action of every kind, on a resource of each type the Service Authorization Reference names for it
// (in the stage's account and in another), with the kind's own ownership tag, another kind's, other tags or
// none, in the stage's region and in another — and the requests on which a set disagrees with each kind's
// own statements (handlerIam, unmerged).
import { WORST_CASE_STAGE } from "../../infra/iam-policies.ts";
import type { AwsccKindSpec } from "../../shared/api/awscc/spec.ts";
import type { IamStatement } from "../../shared/api/external.ts";
import { DefaultTagKey } from "../../shared/api/external-tags.ts";
import { handlerIam } from "../../shared/providers/awscc/handler-iam.ts";
import { IamEvaluator, type IamRequest } from "./iam-eval.ts";

export const STAGE = WORST_CASE_STAGE;
const OTHER_ACCOUNT = "999999999999";
const OTHER_REGION = "us-west-2";
export const RESOURCE_TAG = `aws:ResourceTag/${DefaultTagKey.kind}`;
export const REQUEST_TAG = `aws:RequestTag/${DefaultTagKey.kind}`;

export const serviceOf = (s: AwsccKindSpec) => s.typeName.split("::")[1] ?? "";

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
export function resourcesOf(spec: AwsccKindSpec, action: string): string[] {
  const at = spec.iam?.actions[action];
  if (!Array.isArray(at)) return ["*"];
  return at.flatMap((i) =>
    [STAGE.account, OTHER_ACCOUNT].map((acct) => sampleArn(spec.iam?.arns[i] ?? "", acct)),
  );
}

/** The ownership tag value of a kind (the cluster-scoped shape's), as defaultTagsOf writes it. */
export const tagOf = (s: AwsccKindSpec) => `${s.kind}.${s.group}.driftless.dev`.toLowerCase();

/**
 * Every request to check for `chosen`: each action of each kind on each of its resources, in the stage's
 * region and another, with no tags, with the kind's own tag, with `other`'s tag (another kind of the same
 * service where there is one), and with tags that are not the ownership tag.
 */
export function requestsOf(chosen: readonly AwsccKindSpec[]): IamRequest[] {
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
export function disagreements(chosen: readonly AwsccKindSpec[], actual: readonly IamStatement[]) {
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
