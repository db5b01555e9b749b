// The AWS functions' settings: the shared typed config plus what only Lambda needs, read once at the edge.
import { z } from "zod";
import { type Config, readConfig } from "../config.ts";

// Per-stage values in serverless.yml render unset options as "": treat them as absent.
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === "" ? undefined : v), schema.optional());

export const AwsFunctionEnv = z.object({
  DRIFTLESS_SQS_MAX_RECEIVE_COUNT: optional(z.coerce.number().int().min(1).max(1000)).describe(
    "The queue's RedrivePolicy maxReceiveCount: a requeue at the limit is re-sent instead of dead-lettered.",
  ),
  DRIFTLESS_KUBECONFIG_SECRET_ARN: optional(z.string()).describe(
    "Secrets Manager secret (ARN or name) or SSM parameter (arn:aws:ssm:… or ssm:/name) holding a kubeconfig.",
  ),
  DRIFTLESS_EKS_CLUSTER_NAME: optional(z.string()).describe("EKS cluster name (token header x-k8s-aws-id)."),
  DRIFTLESS_EKS_ENDPOINT: optional(z.url()).describe("EKS API server endpoint, https://…"),
  DRIFTLESS_EKS_CA_DATA: optional(z.string()).describe(
    "EKS cluster CA, base64 PEM (certificateAuthority.data).",
  ),
  DRIFTLESS_EKS_REGION: optional(z.string()).describe(
    "Region of the EKS cluster's STS endpoint; default AWS_REGION.",
  ),
  DRIFTLESS_LABEL_SELECTOR: optional(z.string()).describe(
    "Only sweep objects matching this label selector (several deployments sharing one cluster).",
  ),
  AWS_REGION: optional(z.string()),
});

export type AwsFunctionConfig = Config & z.infer<typeof AwsFunctionEnv>;

/** Reads the shared config and the AWS-only settings; a bad value fails fast with the variable's name. */
export function readAwsConfig(env: NodeJS.ProcessEnv = process.env): AwsFunctionConfig {
  const base = readConfig(env);
  const parsed = AwsFunctionEnv.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`invalid configuration: ${problems}`);
  }
  return { ...base, ...parsed.data };
}
