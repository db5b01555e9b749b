import { z } from "zod";
import { optionalString } from "../fields.ts";
import { defineTaggedKind } from "../managed.ts";
import { AwsArn, AwsRegion, AwsTags } from "./fields.ts";

export const BucketForProvider = z.object({
  region: AwsRegion,
  versioning: z
    .enum(["Enabled", "Suspended"])
    .optional()
    .describe("Object versioning: Enabled or Suspended."),
  publicAccessBlock: z
    .object({
      blockPublicAcls: z.boolean().optional().describe("Reject requests that set public ACLs."),
      ignorePublicAcls: z.boolean().optional().describe("Ignore public ACLs on the bucket and its objects."),
      blockPublicPolicy: z.boolean().optional().describe("Reject bucket policies that grant public access."),
      restrictPublicBuckets: z
        .boolean()
        .optional()
        .describe("Allow only AWS services and the owner's account to reach a bucket with a public policy."),
    })
    .optional()
    .describe("The bucket's public access block."),
  tags: AwsTags.optional().describe("Tags on the bucket."),
});

export const BucketAtProvider = z.object({
  arn: AwsArn("bucket"),
  region: optionalString("The region the bucket lives in."),
});

export const Bucket = defineTaggedKind("tags", {
  group: "s3.aws",
  kind: "Bucket",
  description: "An Amazon S3 bucket. The external name is the bucket name (globally unique).",
  forProvider: BucketForProvider,
  atProvider: BucketAtProvider,
  immutable: ["region"],
  connectionKeys: ["bucket", "region", "endpoint"],
});
