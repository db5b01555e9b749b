import { z } from "zod";
import { optionalString } from "../fields.ts";
import { defineTaggedKind } from "../managed.ts";

export const StorageClass = z
  .enum([
    "STANDARD",
    "NEARLINE",
    "COLDLINE",
    "ARCHIVE",
    "MULTI_REGIONAL",
    "REGIONAL",
    "DURABLE_REDUCED_AVAILABILITY",
  ])
  .describe("Default storage class of new objects.");

export const BucketForProvider = z.object({
  location: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Where the bucket lives: a region (us-east1), dual-region (NAM4) or multi-region (US, EU, ASIA). Default US. Immutable.",
    ),
  storageClass: StorageClass.optional(),
  versioning: z
    .object({ enabled: z.boolean().describe("Keep noncurrent versions of overwritten and deleted objects.") })
    .optional()
    .describe("Object versioning."),
  labels: z
    .record(z.string(), z.string())
    .optional()
    .describe("Labels on the bucket (lower-case keys and values)."),
  uniformBucketLevelAccess: z
    .boolean()
    .optional()
    .describe(
      "Uniform bucket-level access: IAM alone governs access, object ACLs are off (iamConfiguration.uniformBucketLevelAccess.enabled). Once on for 90 days it cannot be turned off.",
    ),
  cors: z
    .array(
      z.object({
        origin: z
          .array(z.string())
          .optional()
          .describe('Origins allowed, e.g. "https://example.com" or "*".'),
        method: z.array(z.string()).optional().describe("HTTP methods allowed, e.g. GET, HEAD, PUT."),
        responseHeader: z
          .array(z.string())
          .optional()
          .describe("Response headers the browser may expose to the origin."),
        maxAgeSeconds: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe("How long a browser may cache the preflight answer, in seconds."),
      }),
    )
    .optional()
    .describe("Cross-origin resource sharing rules, compared as a whole list."),
  website: z
    .object({
      mainPageSuffix: optionalString("The object served for a directory, e.g. index.html."),
      notFoundPage: optionalString("The object served when none is found, e.g. 404.html."),
    })
    .optional()
    .describe("Static website settings."),
});

export const BucketAtProvider = z.object({
  selfLink: optionalString("The bucket's JSON API URL."),
  url: optionalString("The bucket's gs:// URL."),
  locationType: optionalString("region, dual-region or multi-region."),
  projectNumber: optionalString("Number of the project that owns the bucket."),
});

export const Bucket = defineTaggedKind("labels", {
  group: "storage.gcp",
  kind: "Bucket",
  description: "A Google Cloud Storage bucket. The external name is the bucket name (globally unique).",
  forProvider: BucketForProvider,
  atProvider: BucketAtProvider,
  immutable: ["location"],
  connectionKeys: ["bucket", "url", "selfLink"],
});
