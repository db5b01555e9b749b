import { z } from "zod";
import type { AnyObjectSchema } from "../managed.ts";
import type { Condition, ObjectMeta, ResourceType } from "../meta.ts";
import {
  CLAIMS_GROUP,
  CLAIMS_VERSION,
  ClaimStatus,
  type ClassReference,
  type ClassSelector,
  claimSpecFields,
  type ResourceReference,
} from "./meta.ts";

export interface ClaimKindOptions<P extends AnyObjectSchema> {
  kind: string;
  plural?: string;
  shortNames: string[];
  description: string;
  /** The portable fields: what an app team may ask for, whichever cloud serves it. */
  portable: P;
  /** Keys every class of this claim writes to the claim's Secret, whatever the cloud. */
  connectionKeys: string[];
}

export interface ClaimKindDef<P extends AnyObjectSchema = AnyObjectSchema> extends ResourceType {
  apiVersion: string;
  description: string;
  portable: P;
  spec: AnyObjectSchema;
  status: AnyObjectSchema;
  shortNames: string[];
  connectionKeys: string[];
}

export function defineClaimKind<P extends AnyObjectSchema>(o: ClaimKindOptions<P>): ClaimKindDef<P> {
  return {
    group: CLAIMS_GROUP,
    version: CLAIMS_VERSION,
    kind: o.kind,
    plural: o.plural ?? `${o.kind.toLowerCase()}s`,
    namespaced: true,
    apiVersion: `${CLAIMS_GROUP}/${CLAIMS_VERSION}`,
    description: o.description,
    portable: o.portable,
    spec: o.portable.extend(claimSpecFields),
    status: ClaimStatus,
    shortNames: o.shortNames,
    connectionKeys: o.connectionKeys,
  };
}

// Portable label keys and values fit every cloud: GCS label rules, and C# identifiers for Azure metadata.
const PortableLabels = z
  .record(
    z.string().regex(/^[a-z][a-z0-9_]{0,62}$/, "label keys: a lower-case letter, then letters, digits or _"),
    z.string().regex(/^[a-z0-9_-]{0,63}$/, "label values: lower-case letters, digits, _ and -"),
  )
  .describe(
    "Labels on the cloud resource (S3 and GCS labels or tags, Azure container metadata). Keys: lower-case letters, digits and _; values also -.",
  );

export const QueuePortable = z.object({
  retentionSeconds: z
    .number()
    .int()
    .min(600)
    .max(604800)
    .optional()
    .describe("How long an unconsumed message is kept, seconds (10 minutes to 7 days)."),
  processingTimeoutSeconds: z
    .number()
    .int()
    .min(10)
    .max(600)
    .optional()
    .describe(
      "How long a consumer has to finish (acknowledge or delete) a message before it is delivered again, seconds: SQS visibility timeout, Pub/Sub ack deadline.",
    ),
});

export const Queue = defineClaimKind({
  kind: "Queue",
  shortNames: ["queueclaim", "qclaim"],
  description:
    "A message queue, served by whichever class the cluster offers (SQS, Pub/Sub). Its Secret holds the queue's address and a `service` key naming the cloud service.",
  portable: QueuePortable,
  connectionKeys: ["service"],
});

export const BucketPortable = z.object({
  versioning: z
    .boolean()
    .optional()
    .describe("Keep earlier versions of overwritten and deleted objects (not offered by Azure containers)."),
  labels: PortableLabels.optional(),
});

export const Bucket = defineClaimKind({
  kind: "Bucket",
  shortNames: ["bucketclaim", "bclaim"],
  description:
    "An object storage bucket, served by whichever class the cluster offers (S3, Cloud Storage, Azure Blob). Its Secret holds `bucket`, `endpoint` and `service`.",
  portable: BucketPortable,
  connectionKeys: ["service", "bucket", "endpoint"],
});

export const PostgreSQLSize = z
  .enum(["small", "medium", "large"])
  .describe("Compute size; each class maps it to an instance type.");

export const PostgreSQLInstancePortable = z.object({
  version: z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'a PostgreSQL version, e.g. "16" or "16.4"')
    .optional()
    .describe(
      'PostgreSQL version: a major ("16", any 16.x the cloud picks) or major.minor. Raising it upgrades.',
    ),
  storageGB: z.number().int().min(20).max(65536).default(20).describe("Storage size, GiB; may only grow."),
  size: PostgreSQLSize.default("small"),
});

export const PostgreSQLInstance = defineClaimKind({
  kind: "PostgreSQLInstance",
  shortNames: ["pgclaim", "pginstance"],
  description:
    "A PostgreSQL server, served by whichever class the cluster offers (RDS, Cloud SQL, Azure Database for PostgreSQL). Its Secret holds host, port, username and password on every cloud, plus the cloud's own keys.",
  portable: PostgreSQLInstancePortable,
  connectionKeys: ["service", "host", "port", "username", "password", "endpoint"],
});

export const claimKinds: readonly ClaimKindDef[] = [Queue, Bucket, PostgreSQLInstance];

/** A claim as read from the API server. */
export interface Claim<P = Record<string, unknown>> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: P & {
    classRef?: ClassReference;
    classSelector?: ClassSelector;
    writeConnectionSecretToRef?: { name: string };
  };
  status?: {
    conditions?: Condition[];
    resourceRef?: ResourceReference;
    resourceRefs?: ResourceReference[];
  };
}
