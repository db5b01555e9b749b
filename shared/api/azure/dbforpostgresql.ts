// Azure Database for PostgreSQL flexible servers and what hangs off them (firewall rules, databases):
// the kinds Crossplane's Azure provider calls FlexibleServer, FlexibleServerFirewallRule and
// FlexibleServerDatabase, with Azure Resource Manager's field names.
import { z } from "zod";
import { optionalString } from "../fields.ts";
import { defineManagedKind, defineTaggedKind, type ManagedResource } from "../managed.ts";
import { SecretKeySelector } from "../meta.ts";
import { referenceTo } from "../reference.ts";
import { AzureLocation, resourceGroupFields, resourceGroupReference, Subnet } from "./network.ts";
import { AzureId, AzureTags } from "./resources.ts";

/** A referenced Subnet's Azure resource id, as its status reports it once Ready. */
const subnetIdOf = (target: ManagedResource) =>
  (target.status?.atProvider as { id?: string } | undefined)?.id || undefined;

const delegatedSubnetReference = referenceTo("delegatedSubnetId", Subnet, {
  fills: "id",
  extract: subnetIdOf,
});

export const FlexibleServerForProvider = z.object({
  ...resourceGroupFields,
  location: AzureLocation,
  administratorLogin: z
    .string()
    .min(1)
    .max(63)
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .optional()
    .describe(
      "The administrator's login name (letters, digits, underscores; not azure_superuser, admin, root…). Required to create. Immutable.",
    ),
  administratorPasswordSecretRef: SecretKeySelector.optional().describe(
    "The Secret key holding the administrator password. Unset: driftless generates a strong password on create and keeps it only in the connection Secret. Changing the referenced value changes the password (compared with the connection Secret, so it needs writeConnectionSecretToRef).",
  ),
  version: z
    .string()
    .regex(/^\d+$/)
    .optional()
    .describe(
      'PostgreSQL major version, e.g. "16"; Azure picks its default when unset (filled in). Raising it upgrades the server in place; Azure cannot downgrade.',
    ),
  sku: z
    .object({
      name: z.string().min(1).describe("Compute size, e.g. Standard_B1ms, Standard_D2ds_v5."),
      tier: z
        .enum(["Burstable", "GeneralPurpose", "MemoryOptimized"])
        .describe("Pricing tier the size belongs to: Burstable, GeneralPurpose or MemoryOptimized."),
    })
    .optional()
    .describe("Compute size and tier. Required to create; changing it rescales the server."),
  storageSizeGB: z
    .number()
    .int()
    .min(32)
    .max(32767)
    .optional()
    .describe(
      "Storage size, GiB (Azure's default 32 is filled in). Azure can grow storage, never shrink it.",
    ),
  backupRetentionDays: z
    .number()
    .int()
    .min(7)
    .max(35)
    .optional()
    .describe("Days backups are kept, 7–35 (Azure's default 7 is filled in)."),
  geoRedundantBackup: z
    .enum(["Enabled", "Disabled"])
    .optional()
    .describe("Whether backups are copied to the paired region (default Disabled, filled in). Immutable."),
  availabilityZone: z
    .string()
    .min(1)
    .optional()
    .describe("Availability zone of the server; Azure picks one when unset (filled in). Immutable."),
  publicNetworkAccess: z
    .enum(["Enabled", "Disabled"])
    .optional()
    .describe(
      "Public access (reached through FlexibleServerFirewallRules) or none. Azure sets Disabled for a server in a delegated subnet (filled in). Immutable.",
    ),
  delegatedSubnetId: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Private access: resource id of a subnet delegated to Microsoft.DBforPostgreSQL/flexibleServers the server is placed in. Immutable.",
    ),
  ...delegatedSubnetReference.fields,
  privateDnsZoneId: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Private access: resource id of the private DNS zone (a name ending in .postgres.database.azure.com) that resolves the server's name in the network. Immutable.",
    ),
  tags: AzureTags.optional(),
});

export const FlexibleServerAtProvider = z.object({
  id: AzureId("server"),
  state: optionalString(
    "The server state Azure reports, e.g. Provisioning, Ready, Updating, Dropping, Stopped.",
  ),
  fullyQualifiedDomainName: optionalString("The server's host name."),
  minorVersion: optionalString("The PostgreSQL minor version the server runs."),
});

export const FlexibleServer = defineTaggedKind("tags", {
  group: "dbforpostgresql.azure",
  kind: "FlexibleServer",
  description:
    "An Azure Database for PostgreSQL flexible server, with public access or private access in a delegated subnet. The external name is the server name (unique across Azure: it is the host name). The connection Secret holds host, port, username and password.",
  forProvider: FlexibleServerForProvider,
  atProvider: FlexibleServerAtProvider,
  immutable: [
    "resourceGroupName",
    "location",
    "administratorLogin",
    "geoRedundantBackup",
    "availabilityZone",
    "publicNetworkAccess",
    "delegatedSubnetId",
    "privateDnsZoneId",
  ],
  connectionKeys: ["host", "port", "username", "password"],
  fields: {
    // Compared with the connection Secret by the provider (resourceUpToDate); Azure never shows it.
    administratorPasswordSecretRef: { writeOnly: true },
  },
  references: [resourceGroupReference.def, delegatedSubnetReference.def],
});

const serverReference = referenceTo("serverName", FlexibleServer, { fills: "name" });

const serverFields = {
  serverName: z
    .string()
    .min(1)
    .optional()
    .describe("The flexible server the resource belongs to. Required. Immutable."),
  ...serverReference.fields,
};

const ipv4 = z
  .string()
  .regex(/^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)$/, "an IPv4 address");

export const FlexibleServerFirewallRuleForProvider = z.object({
  ...resourceGroupFields,
  ...serverFields,
  startIpAddress: ipv4
    .optional()
    .describe(
      "First IPv4 address of the allowed range. Required to create. 0.0.0.0–0.0.0.0 allows Azure services.",
    ),
  endIpAddress: ipv4.optional().describe("Last IPv4 address of the allowed range. Required to create."),
});

export const FlexibleServerFirewallRuleAtProvider = z.object({
  id: AzureId("firewall rule"),
});

export const FlexibleServerFirewallRule = defineManagedKind({
  group: "dbforpostgresql.azure",
  kind: "FlexibleServerFirewallRule",
  description:
    "A firewall rule of an Azure Database for PostgreSQL flexible server with public access: an IPv4 range allowed to connect. The external name is the rule's name on its server.",
  forProvider: FlexibleServerFirewallRuleForProvider,
  atProvider: FlexibleServerFirewallRuleAtProvider,
  immutable: ["resourceGroupName", "serverName"],
  references: [resourceGroupReference.def, serverReference.def],
});

export const FlexibleServerDatabaseForProvider = z.object({
  ...resourceGroupFields,
  ...serverFields,
  charset: z
    .string()
    .min(1)
    .optional()
    .describe("Character set of the database (Azure's default UTF8 is filled in). Immutable."),
  collation: z
    .string()
    .min(1)
    .optional()
    .describe("Collation of the database (Azure's default en_US.utf8 is filled in). Immutable."),
});

export const FlexibleServerDatabaseAtProvider = z.object({
  id: AzureId("database"),
});

export const FlexibleServerDatabase = defineManagedKind({
  group: "dbforpostgresql.azure",
  kind: "FlexibleServerDatabase",
  description:
    "A database on an Azure Database for PostgreSQL flexible server. The external name is the database name. The connection Secret holds the database name.",
  forProvider: FlexibleServerDatabaseForProvider,
  atProvider: FlexibleServerDatabaseAtProvider,
  immutable: ["resourceGroupName", "serverName", "charset", "collation"],
  connectionKeys: ["database"],
  references: [resourceGroupReference.def, serverReference.def],
});
