import { z } from "zod";
import { optionalString } from "../fields.ts";

/** AWS tag limits (value ≤ 256 characters), enforced by the API server so a bad value never reaches the cloud. */
export const AwsTags = z.record(z.string(), z.string().max(256));

/** The region field of every regional AWS kind, hand-written or generated. */
export const AwsRegion = z
  .string()
  .min(1)
  .optional()
  .describe("AWS region; defaults to the ProviderConfig's region. Immutable.");

/** The ARN in a kind's atProvider: `arn: AwsArn("VPC")` ("The VPC's ARN."). */
export const AwsArn = (what: string) => optionalString(`The ${what}'s ARN.`);
