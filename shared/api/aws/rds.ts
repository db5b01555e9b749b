import { z } from "zod";
import { optionalString } from "../fields.ts";
import { defineTaggedKind } from "../managed.ts";
import { SecretKeySelector } from "../meta.ts";
import { listReferenceTo, referenceTo } from "../reference.ts";
import { SecurityGroup, Subnet } from "./ec2.ts";
import { AwsArn, AwsRegion, AwsTags } from "./fields.ts";

const subnetReference = listReferenceTo("subnetId", Subnet, { fills: "id" });

export const DBSubnetGroupForProvider = z.object({
  region: AwsRegion,
  description: z
    .string()
    .min(1)
    .optional()
    .describe('Description of the DB subnet group; default "Managed by driftless".'),
  subnetIds: z
    .array(z.string().min(1))
    .optional()
    .describe(
      "Subnets (subnet-…) of one VPC, in at least two availability zones; compared as a set. Required to create.",
    ),
  ...subnetReference.fields,
  tags: AwsTags.optional().describe("Tags on the DB subnet group."),
});

export const DBSubnetGroupAtProvider = z.object({
  arn: AwsArn("DB subnet group"),
  vpcId: optionalString("The VPC of the group's subnets."),
  status: optionalString("The group status as RDS reports it, e.g. Complete."),
});

export const DBSubnetGroup = defineTaggedKind("tags", {
  group: "rds.aws",
  kind: "DBSubnetGroup",
  description:
    "An Amazon RDS DB subnet group: the subnets a DB instance may be placed in. The external name is the group name (RDS stores it in lower case).",
  forProvider: DBSubnetGroupForProvider,
  atProvider: DBSubnetGroupAtProvider,
  immutable: ["region"],
  connectionKeys: ["name", "arn"],
  // The reference fields are inputs of driftless itself: no cloud reports them.
  references: [subnetReference.def],
});

const subnetGroupReference = referenceTo("dbSubnetGroupName", DBSubnetGroup, { fills: "name" });
const securityGroupReference = listReferenceTo("vpcSecurityGroupId", SecurityGroup, { fills: "id" });

export const DBInstanceForProvider = z.object({
  region: AwsRegion,
  engine: z
    .string()
    .min(1)
    .describe("Database engine, e.g. postgres, mysql, mariadb, oracle-se2, sqlserver-ex. Immutable."),
  engineVersion: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Engine version. A prefix such as "16" accepts any 16.x the cloud picks, and a newer minor version than asked for (AWS upgrades minor versions itself) is no drift; never filled in from the cloud. Changing it upgrades the instance.',
    ),
  dbInstanceClass: z.string().min(1).describe("Compute and memory class, e.g. db.t3.micro."),
  allocatedStorage: z
    .number()
    .int()
    .min(5)
    .max(65536)
    .optional()
    .describe(
      "Storage size, GiB. Never filled in from the cloud (storage autoscaling changes it); RDS cannot shrink storage.",
    ),
  masterUsername: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .describe("Name of the master user. Required to create. Immutable."),
  masterPasswordSecretRef: SecretKeySelector.optional().describe(
    "The Secret key holding the master password. Unset: driftless generates a strong password on create and keeps it only in the connection Secret. Changing the referenced value changes the master password (compared with the connection Secret, so it needs writeConnectionSecretToRef).",
  ),
  dbName: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe("Name of the database created with the instance. Immutable."),
  port: z.number().int().min(1150).max(65535).optional().describe("Port the database listens on."),
  publiclyAccessible: z
    .boolean()
    .optional()
    .describe("Whether the instance has a public DNS name and IP address."),
  backupRetentionPeriod: z
    .number()
    .int()
    .min(0)
    .max(35)
    .optional()
    .describe("Days automated backups are kept; 0 disables them."),
  preferredMaintenanceWindow: z
    .string()
    .min(1)
    .optional()
    .describe("Weekly maintenance window in UTC, ddd:hh24:mi-ddd:hh24:mi (e.g. sun:05:00-sun:05:30)."),
  preferredBackupWindow: z
    .string()
    .min(1)
    .optional()
    .describe("Daily backup window in UTC, hh24:mi-hh24:mi; must not overlap the maintenance window."),
  storageType: z.string().min(1).optional().describe("Storage type: gp2, gp3, io1, io2 or standard."),
  storageEncrypted: z
    .boolean()
    .optional()
    .describe("Encrypt the storage at rest (with kmsKeyId, or the AWS managed key). Immutable."),
  kmsKeyId: z
    .string()
    .min(1)
    .refine(
      (v) => !/(^|:)alias\//.test(v),
      "an alias cannot be compared with the key RDS reports: use the key's ARN or id",
    )
    .optional()
    .describe("The KMS key (ARN or key id) that encrypts the storage; needs storageEncrypted. Immutable."),
  dbParameterGroupName: z
    .string()
    .min(1)
    .optional()
    .describe("The DB parameter group of the instance. Unset: not managed (the group RDS chose stays)."),
  skipFinalSnapshot: z
    .boolean()
    .optional()
    .describe("On delete, skip the final snapshot. Default false: a final snapshot is taken."),
  finalDBSnapshotIdentifier: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe("Name of the final snapshot taken on delete; default <external-name>-final-<uid prefix>."),
  applyImmediately: z
    .boolean()
    .optional()
    .describe("Apply modifications now instead of in the next maintenance window (AWS default: false)."),
  dbSubnetGroupName: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The DB subnet group the instance is placed in (and so its VPC); unset: the default VPC. Changing it moves the instance.",
    ),
  ...subnetGroupReference.fields,
  vpcSecurityGroupIds: z
    .array(z.string().min(1))
    .optional()
    .describe(
      "VPC security groups (sg-…) of the instance, compared as a set; unset: the VPC's default group.",
    ),
  ...securityGroupReference.fields,
  tags: AwsTags.optional().describe("Tags on the DB instance."),
});

export const DBInstanceAtProvider = z.object({
  arn: AwsArn("DB instance"),
  status: optionalString(
    "The DB instance status as RDS reports it (DBInstanceStatus), e.g. available, creating.",
  ),
  endpoint: optionalString("DNS name of the instance's endpoint."),
  port: z.number().int().optional().describe("Port of the instance's endpoint."),
  resourceId: optionalString("The region-unique, immutable resource id (DbiResourceId)."),
  engineVersion: optionalString(
    "The engine version the instance runs (AWS upgrades minor versions by itself).",
  ),
  allocatedStorage: z
    .number()
    .int()
    .optional()
    .describe("The storage size the instance has, GiB (storage autoscaling grows it by itself)."),
});

export const DBInstance = defineTaggedKind("tags", {
  group: "rds.aws",
  kind: "DBInstance",
  description:
    "An Amazon RDS DB instance. The external name is the DB instance identifier. The connection Secret holds endpoint, port, username and password.",
  forProvider: DBInstanceForProvider,
  atProvider: DBInstanceAtProvider,
  immutable: ["region", "engine", "masterUsername", "dbName", "storageEncrypted", "kmsKeyId"],
  connectionKeys: ["endpoint", "port", "username", "password"],
  fields: {
    // Set when the instance is created: what RDS chose for an unset one never becomes the spec's.
    storageEncrypted: { lateInitialize: false },
    kmsKeyId: { lateInitialize: false },
    dbParameterGroupName: { lateInitialize: false },
    // Minor versions are upgraded by AWS itself (AutoMinorVersionUpgrade, on by default): a newer minor is
    // no drift, and the version AWS picked never becomes the spec's.
    engineVersion: { compare: "version", lateInitialize: false },
    // Storage autoscaling grows it by itself: an unset size stays unset instead of pinning today's size.
    allocatedStorage: { lateInitialize: false },
    // Compared with the connection Secret by the provider (resourceUpToDate), never readable from RDS.
    masterPasswordSecretRef: { writeOnly: true },
    // Inputs of delete and of ModifyDBInstance, not properties of the instance.
    skipFinalSnapshot: { writeOnly: true },
    finalDBSnapshotIdentifier: { writeOnly: true },
    applyImmediately: { writeOnly: true },
  },
  references: [subnetGroupReference.def, securityGroupReference.def],
});
