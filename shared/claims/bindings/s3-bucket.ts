import { Bucket as S3Bucket } from "../../api/aws/s3.ts";
import { S3BucketClass } from "../../api/claims/classes.ts";
import type { ClassBinding } from "../binding.ts";

/** Bucket claims as Amazon S3 buckets. */
export const s3BucketBinding: ClassBinding = {
  class: S3BucketClass,
  parts: [
    {
      role: "bucket",
      type: S3Bucket,
      primary: true,
      portable: ({ claim, current }) => ({
        // A bucket that never had versioning stays without it; once set, false means Suspended.
        versioning:
          claim.versioning === true
            ? "Enabled"
            : claim.versioning === false && current?.versioning !== undefined
              ? "Suspended"
              : undefined,
      }),
      labelsField: "tags",
    },
  ],
  connection: () => ({ service: "s3" }),
};
