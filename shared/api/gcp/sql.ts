import { z } from "zod";
import { optionalString } from "../fields.ts";
import { defineManagedKind } from "../managed.ts";
import { SecretKeySelector } from "../meta.ts";
import { referenceTo } from "../reference.ts";
import { Network, networkPathOfTarget } from "./compute.ts";

const privateNetworkReference = referenceTo("privateNetwork", Network, {
  fills: "path",
  extract: networkPathOfTarget,
});

export const DatabaseInstanceForProvider = z.object({
  region: z
    .string()
    .min(1)
    .optional()
    .describe("Region of the instance, e.g. europe-west1; Google's default us-central1. Immutable."),
  databaseVersion: z
    .string()
    .regex(/^POSTGRES_\d+$/, "a PostgreSQL version such as POSTGRES_16")
    .optional()
    .describe(
      "PostgreSQL major version, e.g. POSTGRES_16. Required to create; filled in on import. Immutable (driftless never upgrades in place).",
    ),
  tier: z
    .string()
    .min(1)
    .optional()
    .describe("Machine type, e.g. db-custom-1-3840 or db-f1-micro. Required to create."),
  diskSize: z
    .number()
    .int()
    .min(10)
    .max(65536)
    .optional()
    .describe(
      "Data disk size, GB (default 10). Cloud SQL cannot shrink a disk; with diskAutoresize a larger disk than asked for is no drift.",
    ),
  diskType: z.enum(["PD_SSD", "PD_HDD"]).optional().describe("Data disk type (default PD_SSD). Immutable."),
  diskAutoresize: z
    .boolean()
    .optional()
    .describe("Grow the disk automatically when it is nearly full (default true)."),
  availabilityType: z
    .enum(["ZONAL", "REGIONAL"])
    .optional()
    .describe("REGIONAL: a standby in another zone (high availability). Default ZONAL."),
  activationPolicy: z.enum(["ALWAYS", "NEVER"]).optional().describe("ALWAYS: running; NEVER: stopped."),
  ipv4Enabled: z
    .boolean()
    .optional()
    .describe("Whether the instance has a public IPv4 address (default true)."),
  privateNetwork: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The network (projects/P/global/networks/N) the instance gets a private IP in; it needs a private services Connection.",
    ),
  ...privateNetworkReference.fields,
  sslMode: z
    .enum(["ALLOW_UNENCRYPTED_AND_ENCRYPTED", "ENCRYPTED_ONLY", "TRUSTED_CLIENT_CERTIFICATE_REQUIRED"])
    .optional()
    .describe("Which client connections the instance accepts."),
  deletionProtectionEnabled: z
    .boolean()
    .optional()
    .describe("Google refuses to delete the instance while true (default false)."),
  userLabels: z.record(z.string(), z.string()).optional().describe("Labels on the instance."),
  rootPasswordSecretRef: SecretKeySelector.optional().describe(
    "The Secret key holding the password of the postgres user. Unset: driftless generates one on create and keeps it only in the connection Secret. Changing the referenced value changes the password (compared with the connection Secret).",
  ),
});

export const DatabaseInstanceAtProvider = z.object({
  state: optionalString("The instance state: PENDING_CREATE, RUNNABLE, MAINTENANCE, PENDING_DELETE, FAILED…"),
  connectionName: optionalString("project:region:instance, for the Cloud SQL Auth Proxy."),
  selfLink: optionalString("The instance's URL."),
  privateIP: optionalString("The instance's private IP in privateNetwork."),
  publicIP: optionalString("The instance's public IP, when ipv4Enabled."),
  databaseInstalledVersion: optionalString("The exact version running, e.g. POSTGRES_16_4."),
  gceZone: optionalString("The zone the instance runs in."),
  serviceAccountEmailAddress: optionalString("The instance's service account."),
});

export const DatabaseInstance = defineManagedKind({
  group: "sql.gcp",
  kind: "DatabaseInstance",
  description:
    "A Cloud SQL for PostgreSQL instance. The external name is the instance name (Google keeps a deleted name reserved for a while). The connection Secret holds privateIP, publicIP, port, username (postgres), password, serverCACertificate and connectionName.",
  forProvider: DatabaseInstanceForProvider,
  atProvider: DatabaseInstanceAtProvider,
  immutable: ["region", "databaseVersion", "diskType"],
  connectionKeys: [
    "privateIP",
    "publicIP",
    "port",
    "username",
    "password",
    "serverCACertificate",
    "connectionName",
  ],
  fields: {
    // Compared with the connection Secret by the provider (resourceUpToDate); Cloud SQL never shows it.
    rootPasswordSecretRef: { writeOnly: true },
  },
  references: [privateNetworkReference.def],
});

const instanceReference = referenceTo("instance", DatabaseInstance, { fills: "name" });

const InstanceFields = {
  instance: z
    .string()
    .min(1)
    .optional()
    .describe("The Cloud SQL instance name. Required to create. Immutable."),
  ...instanceReference.fields,
};

export const DatabaseForProvider = z.object({
  ...InstanceFields,
  charset: z.string().min(1).optional().describe("Character set (default UTF8). Immutable."),
  collation: z.string().min(1).optional().describe("Collation (default en_US.UTF8). Immutable."),
});

export const DatabaseAtProvider = z.object({
  selfLink: optionalString("The database's URL."),
});

export const Database = defineManagedKind({
  group: "sql.gcp",
  kind: "Database",
  description: "A database in a Cloud SQL instance. The external name is the database name.",
  forProvider: DatabaseForProvider,
  atProvider: DatabaseAtProvider,
  immutable: ["instance", "charset", "collation"],
  connectionKeys: ["database"],
  references: [instanceReference.def],
});

export const UserForProvider = z.object({
  ...InstanceFields,
  passwordSecretRef: SecretKeySelector.optional().describe(
    "The Secret key holding the user's password. Unset: driftless generates one on create and keeps it only in the connection Secret. Changing the referenced value changes the password.",
  ),
});

export const UserAtProvider = z.object({
  type: optionalString("The user type Cloud SQL reports, e.g. BUILT_IN."),
});

export const User = defineManagedKind({
  group: "sql.gcp",
  kind: "User",
  description:
    "A built-in PostgreSQL user of a Cloud SQL instance. The external name is the user name. The connection Secret holds username and password.",
  forProvider: UserForProvider,
  atProvider: UserAtProvider,
  immutable: ["instance"],
  connectionKeys: ["username", "password"],
  fields: { passwordSecretRef: { writeOnly: true } },
  references: [instanceReference.def],
});
