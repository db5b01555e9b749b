import { GCSBucketClass } from "../../api/claims/classes.ts";
import { Bucket as GcsBucket } from "../../api/gcp/storage.ts";
import type { ClassBinding } from "../binding.ts";

/** Bucket claims as Google Cloud Storage buckets. */
export const gcsBucketBinding: ClassBinding = {
  class: GCSBucketClass,
  parts: [
    {
      role: "bucket",
      type: GcsBucket,
      primary: true,
      portable: ({ claim }) => ({
        versioning: typeof claim.versioning === "boolean" ? { enabled: claim.versioning } : undefined,
      }),
      labelsField: "labels",
    },
  ],
  connection: (d) => ({
    service: "gcs",
    ...(d.selfLink || d.url ? { endpoint: d.selfLink ?? d.url ?? "" } : {}),
  }),
};
