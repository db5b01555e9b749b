// AWS services whose API is global (one endpoint for the partition, not one per region): a request to them
// is not in the stage's region, so an `aws:RequestedRegion` condition must not be put on their actions.
// Data, not a guess: the services that botocore's endpoints.json (botocore 1.43.11, data/endpoints.json,
// partition "aws") marks `"isRegionalized": false`, as their IAM action prefixes. Retrieved 2026-11-27;
// the endpoint data is AWS's, published in botocore under the Apache-2.0 licence.
export const GLOBAL_SERVICES: ReadonlySet<string> = new Set([
  "account",
  "billingconductor",
  "budgets",
  "ce",
  "chime",
  "cloudfront",
  "codecatalyst",
  "health",
  "iam",
  "importexport",
  "mturk-requester",
  "networkmanager",
  "notifications-contacts",
  "organizations",
  "route53",
  "savingsplans",
  "shield",
  "tax",
  "waf",
]);

/** An IAM condition that holds a statement to the stage's region (`{region}` is filled in serverless.yml). */
export const IN_STAGE_REGION = { StringEquals: { "aws:RequestedRegion": "{region}" } };

/** Whether an IAM action (`service:Action`) is of a global service. */
export const isGlobalAction = (action: string) => GLOBAL_SERVICES.has(action.split(":")[0] ?? "");
