import { z } from "zod";
import { DBInstanceForProvider } from "../aws/rds.ts";
import { BucketForProvider as S3BucketForProvider } from "../aws/s3.ts";
import { QueueForProvider } from "../aws/sqs.ts";
import { FlexibleServerForProvider } from "../azure/dbforpostgresql.ts";
import { ContainerForProvider } from "../azure/storage.ts";
import { SubscriptionForProvider, TopicForProvider } from "../gcp/pubsub.ts";
import { DatabaseInstanceForProvider } from "../gcp/sql.ts";
import { BucketForProvider as GcsBucketForProvider } from "../gcp/storage.ts";
import type { AnyObjectSchema } from "../managed.ts";
import type { ObjectMeta, ResourceType } from "../meta.ts";
import { Bucket, type ClaimKindDef, PostgreSQLInstance, PostgreSQLSize, Queue } from "./claims.ts";
import { CLAIMS_VERSION, CLASSES_GROUP, classSpecFields, type ReclaimPolicy } from "./meta.ts";

export interface ClassKindDef extends ResourceType {
  apiVersion: string;
  cloud: "aws" | "gcp" | "azure";
  /** The claim kind this class serves. */
  claim: ClaimKindDef;
  description: string;
  spec: AnyObjectSchema;
  shortNames: string[];
}

function defineClassKind(o: {
  kind: string;
  cloud: ClassKindDef["cloud"];
  claim: ClaimKindDef;
  shortNames: string[];
  description: string;
  template: Record<string, z.ZodType>;
}): ClassKindDef {
  return {
    group: CLASSES_GROUP,
    version: CLAIMS_VERSION,
    kind: o.kind,
    plural: `${o.kind.toLowerCase()}es`,
    namespaced: false,
    apiVersion: `${CLASSES_GROUP}/${CLAIMS_VERSION}`,
    cloud: o.cloud,
    claim: o.claim,
    description: o.description,
    spec: z.object({ ...classSpecFields, ...o.template }),
    shortNames: o.shortNames,
  };
}

// Every template field is optional, so an empty template is a valid default.
const template = <S extends AnyObjectSchema>(s: S, what: string) =>
  s
    .default(() => ({}) as z.core.util.NoUndefined<z.output<S>>)
    .describe(`Template of the ${what} managed resource's forProvider; the claim's fields override it.`);

export const SQSQueueClass = defineClassKind({
  kind: "SQSQueueClass",
  cloud: "aws",
  claim: Queue,
  shortNames: ["sqsclass"],
  description:
    "Serves Queue claims with an Amazon SQS queue (sqs.aws Queue). retentionSeconds → messageRetentionSeconds, processingTimeoutSeconds → visibilityTimeoutSeconds.",
  template: { forProvider: template(QueueForProvider.omit({ fifoQueue: true }), "SQS Queue") },
});

// A Pub/Sub queue is a topic plus one subscription to it; the subscription's topic is filled by the claim.
export const PubSubQueueClass = defineClassKind({
  kind: "PubSubQueueClass",
  cloud: "gcp",
  claim: Queue,
  shortNames: ["pubsubclass"],
  description:
    "Serves Queue claims with a Google Cloud Pub/Sub topic and a subscription to it (pubsub.gcp Topic + Subscription). retentionSeconds → the subscription's messageRetentionDuration, processingTimeoutSeconds → ackDeadlineSeconds.",
  template: {
    topic: z
      .object({ forProvider: template(TopicForProvider, "Topic") })
      .default({ forProvider: {} })
      .describe("The topic."),
    subscription: z
      .object({
        forProvider: template(
          SubscriptionForProvider.omit({ topic: true, topicRef: true, topicSelector: true }),
          "Subscription",
        ),
      })
      .default({ forProvider: {} })
      .describe("The subscription to the topic."),
  },
});

export const S3BucketClass = defineClassKind({
  kind: "S3BucketClass",
  cloud: "aws",
  claim: Bucket,
  shortNames: ["s3class"],
  description:
    "Serves Bucket claims with an Amazon S3 bucket (s3.aws Bucket). versioning → Enabled/Suspended, labels → tags.",
  template: { forProvider: template(S3BucketForProvider, "S3 Bucket") },
});

export const GCSBucketClass = defineClassKind({
  kind: "GCSBucketClass",
  cloud: "gcp",
  claim: Bucket,
  shortNames: ["gcsclass"],
  description:
    "Serves Bucket claims with a Google Cloud Storage bucket (storage.gcp Bucket). versioning → versioning.enabled, labels → labels.",
  template: { forProvider: template(GcsBucketForProvider, "Cloud Storage Bucket") },
});

export const AzureContainerClass = defineClassKind({
  kind: "AzureContainerClass",
  cloud: "azure",
  claim: Bucket,
  shortNames: ["azblobclass"],
  description:
    "Serves Bucket claims with an Azure Blob Storage container (storage.azure Container); set resourceGroupNameRef in the template. labels → metadata; versioning is not offered.",
  template: { forProvider: template(ContainerForProvider, "Azure Container") },
});

export const RDSSizes = z
  .object({
    small: z.string().min(1).default("db.t3.micro").describe("Instance class for size small."),
    medium: z.string().min(1).default("db.t3.medium").describe("Instance class for size medium."),
    large: z.string().min(1).default("db.m5.large").describe("Instance class for size large."),
  })
  .default({ small: "db.t3.micro", medium: "db.t3.medium", large: "db.m5.large" })
  .describe("The RDS instance class (dbInstanceClass) of each portable size.");

// Claims are written by app teams: the class, written by the platform team, bounds what they may cost.
export const RDSLimits = z
  .object({
    maxStorageGB: z
      .number()
      .int()
      .min(20)
      .max(65536)
      .optional()
      .describe("The most storage (GiB) a claim may ask for; a claim over it is refused, nothing is made."),
    allowedSizes: z
      .array(PostgreSQLSize)
      .min(1)
      .optional()
      .describe("The sizes a claim may ask for (default: all); a claim asking for another is refused."),
  })
  .describe("What claims of this class may ask for at most. Unset: only the claim kind's own bounds apply.");

export const RDSInstanceClass = defineClassKind({
  kind: "RDSInstanceClass",
  cloud: "aws",
  claim: PostgreSQLInstance,
  shortNames: ["rdsclass"],
  description:
    "Serves PostgreSQLInstance claims with an Amazon RDS DB instance, engine postgres (rds.aws DBInstance). version → engineVersion, storageGB → allocatedStorage, size → dbInstanceClass via sizes. Each claim gets its own generated master password.",
  template: {
    // The engine is the claim's, and a shared master password would let one tenant log in to another's.
    forProvider: template(
      DBInstanceForProvider.omit({ engine: true, masterPasswordSecretRef: true }).partial(),
      "RDS DBInstance",
    ),
    sizes: RDSSizes,
    limits: RDSLimits.optional(),
  },
});

export const CloudSQLSizes = z
  .object({
    small: z.string().min(1).default("db-custom-1-3840").describe("Machine tier for size small."),
    medium: z.string().min(1).default("db-custom-2-7680").describe("Machine tier for size medium."),
    large: z.string().min(1).default("db-custom-4-15360").describe("Machine tier for size large."),
  })
  .default({ small: "db-custom-1-3840", medium: "db-custom-2-7680", large: "db-custom-4-15360" })
  .describe("The Cloud SQL machine tier (tier) of each portable size.");

export const CloudSQLInstanceClass = defineClassKind({
  kind: "CloudSQLInstanceClass",
  cloud: "gcp",
  claim: PostgreSQLInstance,
  shortNames: ["cloudsqlclass"],
  description:
    "Serves PostgreSQLInstance claims with a Cloud SQL for PostgreSQL instance (sql.gcp DatabaseInstance). version → databaseVersion (POSTGRES_<major>), storageGB → diskSize, size → tier via sizes. Set privateNetworkRef in the template for a private IP. Each claim gets its own generated postgres password.",
  template: {
    // The version is the claim's, and a shared root password would let one tenant log in to another's.
    forProvider: template(
      DatabaseInstanceForProvider.omit({ databaseVersion: true, rootPasswordSecretRef: true }).partial(),
      "Cloud SQL DatabaseInstance",
    ),
    sizes: CloudSQLSizes,
    limits: RDSLimits.optional(),
  },
});

const AzureSku = z.object({
  name: z.string().min(1).describe("Compute size, e.g. Standard_B1ms."),
  tier: z.enum(["Burstable", "GeneralPurpose", "MemoryOptimized"]).describe("The tier the size belongs to."),
});

export const AzurePostgreSQLSizes = z
  .object({
    small: AzureSku.default({ name: "Standard_B1ms", tier: "Burstable" }).describe("Sku for size small."),
    medium: AzureSku.default({ name: "Standard_D2ds_v5", tier: "GeneralPurpose" }).describe(
      "Sku for size medium.",
    ),
    large: AzureSku.default({ name: "Standard_D4ds_v5", tier: "GeneralPurpose" }).describe(
      "Sku for size large.",
    ),
  })
  .default({
    small: { name: "Standard_B1ms", tier: "Burstable" },
    medium: { name: "Standard_D2ds_v5", tier: "GeneralPurpose" },
    large: { name: "Standard_D4ds_v5", tier: "GeneralPurpose" },
  })
  .describe("The flexible server sku (name and tier) of each portable size.");

export const AzurePostgreSQLClass = defineClassKind({
  kind: "AzurePostgreSQLClass",
  cloud: "azure",
  claim: PostgreSQLInstance,
  shortNames: ["azpgclass"],
  description:
    "Serves PostgreSQLInstance claims with an Azure Database for PostgreSQL flexible server (dbforpostgresql.azure FlexibleServer). version → version (major), storageGB → storageSizeGB (rounded up to a size Azure offers, at least 32), size → sku via sizes. Set resourceGroupNameRef and location in the template, and delegatedSubnetIdRef for private access. Each claim gets its own generated administrator password.",
  template: {
    // The version is the claim's, and a shared administrator password would let one tenant log in to another's.
    forProvider: template(
      FlexibleServerForProvider.omit({ version: true, administratorPasswordSecretRef: true }).partial(),
      "Azure FlexibleServer",
    ),
    sizes: AzurePostgreSQLSizes,
    limits: RDSLimits.optional(),
  },
});

export const classKinds: readonly ClassKindDef[] = [
  SQSQueueClass,
  PubSubQueueClass,
  S3BucketClass,
  GCSBucketClass,
  AzureContainerClass,
  RDSInstanceClass,
  CloudSQLInstanceClass,
  AzurePostgreSQLClass,
];

/** A class as read from the API server. */
export interface ResourceClass {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: {
    reclaimPolicy?: ReclaimPolicy;
    allowedNamespaces?: string[];
    providerConfigRef?: { name: string };
    [field: string]: unknown;
  };
}
