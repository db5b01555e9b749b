import { z } from "zod";
import { defineManagedKind } from "../managed.ts";

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
});

export const BucketAtProvider = z.object({
  selfLink: z.string().optional().describe("The bucket's JSON API URL."),
  url: z.string().optional().describe("The bucket's gs:// URL."),
  locationType: z.string().optional().describe("region, dual-region or multi-region."),
  projectNumber: z.string().optional().describe("Number of the project that owns the bucket."),
});

export const Bucket = defineManagedKind({
  group: "storage.gcp",
  kind: "Bucket",
  cloud: "gcp",
  description: "A Google Cloud Storage bucket. The external name is the bucket name (globally unique).",
  forProvider: BucketForProvider,
  atProvider: BucketAtProvider,
  immutable: ["location"],
  connectionKeys: ["bucket", "url", "selfLink"],
});
