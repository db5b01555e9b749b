// Published unit prices the cost model uses (AWS, us-east-1, on-demand, no free tier, no savings plans).
// Checked on 2026-11-22: the AWS pricing pages named in `source`, with the figures as quoted by 2026
// pricing write-ups (Lambda: cloudchipr.com; SQS: cloudburn.io, March 2026; Fargate: vantage.sh;
// m6g.large: the AWS on-demand list). Update the numbers and the date together.

export const PRICES_CHECKED = "2026-11-22";
export const HOURS_PER_MONTH = 730;

export const prices = {
  lambdaArmGbSecond: {
    usd: 0.0000133334,
    unit: "per GB-second (arm64, first 7.5 billion GB-s/month)",
    source: "AWS Lambda pricing, aws.amazon.com/lambda/pricing",
  },
  lambdaRequest: {
    usd: 0.2 / 1_000_000,
    unit: "per invocation ($0.20 per million)",
    source: "AWS Lambda pricing, aws.amazon.com/lambda/pricing",
  },
  sqsRequest: {
    usd: 0.4 / 1_000_000,
    unit: "per standard-queue request up to 64 KB ($0.40 per million; a batch of 10 is one request)",
    source: "Amazon SQS pricing, aws.amazon.com/sqs/pricing",
  },
  m6gLargeHour: {
    usd: 0.077,
    unit: "per hour, m6g.large (2 vCPU, 8 GiB), Linux on-demand",
    source: "Amazon EC2 On-Demand pricing, aws.amazon.com/ec2/pricing/on-demand",
  },
  fargateVcpuHour: {
    usd: 0.04048,
    unit: "per vCPU-hour, Fargate Linux/x86",
    source: "AWS Fargate pricing, aws.amazon.com/fargate/pricing",
  },
  fargateGbHour: {
    usd: 0.004445,
    unit: "per GB-hour, Fargate Linux/x86",
    source: "AWS Fargate pricing, aws.amazon.com/fargate/pricing",
  },
} as const;

/** m6g.large memory: a pod's share of the node is priced by its memory request. */
export const M6G_LARGE_GIB = 8;

/**
 * upjet's sizing guide (github.com/crossplane/upjet, docs/sizing-guide.md): average memory of the
 * provider pods in its end-to-end tests — provider-aws 1.1 GB (peak 3 GB, 8 cores avg), provider-azure
 * 1 GB, provider-gcp 750 MB.
 */
export const UPJET_SIZING = {
  source:
    "crossplane/upjet docs/sizing-guide.md (average over end-to-end tests provisioning and deleting many MRs)",
  providerAwsAvgGb: 1.1,
  providerAwsPeakGb: 3,
  providerAwsAvgCores: 8,
  providerAzureAvgGb: 1,
  providerGcpAvgGb: 0.75,
} as const;

/** Drift-detection defaults of the controllers driftless is compared with. */
export const DRIFT_DEFAULTS = [
  {
    who: "Crossplane managed reconciler (crossplane-runtime)",
    seconds: 60,
    note: "default poll interval 1 m",
  },
  { who: "upjet providers (--poll)", seconds: 600, note: "default 10 m (upjet sizing guide)" },
  {
    who: "AWS Controllers for Kubernetes (ACK)",
    seconds: 36_000,
    note: "default resync period 10 h (ACK runtime defaultResyncPeriod)",
  },
] as const;
