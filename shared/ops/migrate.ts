// `driftless migrate`: Crossplane (Upbound/Upjet provider) managed resources → driftless managed resources
// that adopt the same cloud resources; and driftless's own cluster-scoped objects → their namespaced
// (Crossplane v2) variants (migrate-namespaced.ts).
//
// Every converted resource keeps its name, labels, crossplane.io/external-name, providerConfigRef and
// writeConnectionSecretToRef, and gets `managementPolicies: ["Observe"]`: driftless first only imports
// (reads) the cloud resource, so nothing is created, changed or deleted until the operator widens the
// policies. Crossplane v1 input (cluster-scoped groups such as sqs.aws.upbound.io) becomes driftless's
// cluster-scoped kind with the same deletionPolicy, or with `namespaced` the `.m.` kind in one namespace;
// Crossplane v2 input (`.m.` groups such as sqs.aws.m.upbound.io) becomes the `.m.` kind in the same
// namespace, its providerConfigRef {kind, name} naming the driftless ProviderConfig or
// ClusterProviderConfig of the same kind and name. Field names are mapped per kind (Upjet's
// Terraform-derived names and single-element block lists → driftless's names and objects). Anything that
// cannot be carried over — an unknown kind, a field driftless does not manage, a malformed value — is
// reported, never dropped silently. Pure: no cluster or cloud access.
import type { ZodObject, ZodType } from "zod";
import { SecurityGroup, Subnet, VPC } from "../api/aws/ec2.ts";
import { DBInstance, DBSubnetGroup } from "../api/aws/rds.ts";
import { Bucket as S3Bucket } from "../api/aws/s3.ts";
import { Queue } from "../api/aws/sqs.ts";
import {
  FlexibleServer,
  FlexibleServerDatabase,
  FlexibleServerFirewallRule,
} from "../api/azure/dbforpostgresql.ts";
import { Subnet as AzureSubnet, VirtualNetwork } from "../api/azure/network.ts";
import { ResourceGroup } from "../api/azure/resources.ts";
import { Container } from "../api/azure/storage.ts";
import { GlobalAddress, Network, networkPathOf } from "../api/gcp/compute.ts";
import { Subscription, Topic } from "../api/gcp/pubsub.ts";
import { Connection } from "../api/gcp/servicenetworking.ts";
import { Database, DatabaseInstance, User } from "../api/gcp/sql.ts";
import { Bucket as GcsBucket } from "../api/gcp/storage.ts";
import { type ManagedKindDef, namespacedVariantOf } from "../api/managed.ts";
import { Annotations, API_DOMAIN } from "../api/meta.ts";
import { providerConfigs } from "../api/provider-config.ts";
import type { GeneratedKinds, GeneratedTarget } from "./migrate-generated.ts";
import {
  checkReferences,
  driftlessProviderConfigCloud,
  driftlessProviderConfigToV2,
  driftlessToNamespaced,
  MIGRATED_FROM_ANNOTATION,
  type NamespacedTarget,
  namespacedSpec,
  type ProviderConfigKindName,
  v2ProviderConfigObject,
} from "./migrate-namespaced.ts";
import type { DriftlessObject, IssueSeverity, MigratedObject, MigrateIssue } from "./migrate-types.ts";
import { isUsage, type KindTarget, migrateUsage } from "./migrate-usages.ts";

export type { DriftlessObject, IssueSeverity, MigratedObject, MigrateIssue };
export { MIGRATED_FROM_ANNOTATION };

export interface MigrateResult {
  objects: MigratedObject[];
  issues: MigrateIssue[];
  /** Documents that were not Kubernetes objects driftless has an equivalent for. */
  skipped: number;
  /** Sources of the objects that were not migrated (an `error` issue names each): none of them is written. */
  refused: string[];
  /** driftless cluster-scoped managed resources converted to their namespaced variants (planSteps). */
  moved: Array<{ def: ManagedKindDef; name: string }>;
  /** The generated kinds (cluster-scoped defs) Upjet objects were written as. */
  generated: ManagedKindDef[];
}

export interface MigrateOptions {
  /** The converted resources' management policies; default ["Observe"] (import first). */
  policies?: string[];
  /** Cluster-scoped input (Crossplane v1, driftless's own kinds) → the namespaced shape in this namespace. */
  namespaced?: NamespacedTarget;
  /** Namespace of Crossplane v2 objects that carry none. */
  defaultNamespace?: string;
  /**
   * driftless's cluster-scoped kinds that input may hold (the registry's, from the caller: migrate loads no
   * cloud SDK); default the kinds Crossplane's map to.
   */
  kinds?: readonly ManagedKindDef[];
  /**
   * Upjet kinds without a hand-written twin → driftless's generated kinds (migrate-generated.ts, from the
   * facts in infra/migrate); without it such objects are refused as having no equivalent.
   */
  generated?: GeneratedKinds;
}

type Obj = Record<string, unknown>;
type Report = (severity: IssueSeverity, message: string, field?: string) => void;

/** How one Upjet field becomes a driftless field. */
type FieldRule =
  | { to: string; convert?: (value: unknown, report: Report) => unknown }
  /** One Upjet field becomes several driftless fields (or one of another shape), e.g. an ARM id. */
  | { into: (value: unknown, report: Report) => Obj | undefined }
  /** A Terraform block whose fields are driftless's top-level fields (same name unless a rule says). */
  | { block: Record<string, FieldRule> }
  /**
   * Not managed by driftless: reported as dropped with this explanation — or only noted when `harmless`
   * says the value loses nothing (a Terraform-side guard that is off, say).
   */
  | { drop: string; harmless?: (value: unknown) => boolean }
  /** Carried in metadata instead (external name) or harmless: noted, not dropped. */
  | { note: string }
  /**
   * A reference or selector to a kind driftless does not have, resolved against the input's objects of
   * that kind (same namespace) into driftless's fields.
   */
  | { peer: (value: unknown, peers: readonly Peer[], report: Report) => Obj | undefined }
  /** Carried under a container of the target (Azure's `properties`), with the same name. */
  | { under: string };

/** An input object others may reference or select: the Upjet kind, where it is, and what it names. */
interface Peer {
  kind: string;
  name: string;
  namespace?: string;
  labels: Record<string, string>;
  externalName?: string;
  forProvider: Obj;
}

interface KindMapping {
  /** Upjet API group, e.g. sqs.aws.upbound.io (its `.m.` namespaced v2 group, sqs.aws.m.upbound.io, too). */
  group: string;
  kind: string;
  to: ManagedKindDef;
  /** Upjet fields whose name or shape differs; a field with the same name in both passes unchanged. */
  fields?: Record<string, FieldRule>;
  /** Upjet forProvider fields that name the cloud resource (used when the annotation is missing). */
  nameFields?: string[];
  /** Why an object of this kind cannot be adopted (what driftless's kind does not cover), if it cannot. */
  refuse?: (forProvider: Obj) => string | undefined;
  /**
   * Crossplane's external name (the annotation, if any) → driftless's, where their formats differ; it
   * reports what it did. Undefined: the object is found without one.
   */
  externalName?: (value: string | undefined, forProvider: Obj, report: Report) => string | undefined;
  /** Terraform's single-element block lists become the target's objects wherever its schema has an object. */
  unwrapBlocks?: true;
}

const firstBlock = (value: unknown, report: Report): unknown => {
  // Upjet renders Terraform blocks as lists with one element; driftless uses the object.
  if (!Array.isArray(value)) return value;
  if (value.length > 1) report("dropped", `has ${value.length} blocks; only the first is kept`);
  return value[0];
};

const jsonObject = (value: unknown, report: Report): unknown => {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    report("dropped", "is not valid JSON; left out");
    return undefined;
  }
};

const projectNote: FieldRule = {
  note: "driftless takes the project from the ProviderConfig's projectID: make sure it names this project",
};

const cmekDrop: FieldRule = { drop: "CMEK settings are not managed by driftless (they stay unchanged)" };

/** Terraform's deletion_policy: ABANDON left the cloud resource behind when the object was deleted. */
const abandonRule: FieldRule = {
  drop: "ABANDON kept the cloud resource when the Crossplane object was deleted; driftless's way is leaving Delete out of managementPolicies (deletionPolicy: Orphan on cluster-scoped kinds)",
  harmless: (v) => v !== "ABANDON",
};

const enabledDisabled = (value: unknown) =>
  typeof value === "boolean" ? (value ? "Enabled" : "Disabled") : value;

const SKU_TIERS: Record<string, string> = { B: "Burstable", GP: "GeneralPurpose", MO: "MemoryOptimized" };

/** Terraform's `GP_Standard_D4s_v3` → ARM's `{name: Standard_D4s_v3, tier: GeneralPurpose}`. */
const flexibleServerSku = (value: unknown, report: Report): Obj | undefined => {
  const m = typeof value === "string" ? /^(B|GP|MO)_(.+)$/.exec(value) : null;
  const tier = m?.[1] ? SKU_TIERS[m[1]] : undefined;
  if (!m?.[2] || !tier) {
    report("dropped", `${JSON.stringify(value)} is not <B|GP|MO>_<size>; left out`);
    return undefined;
  }
  return { sku: { name: m[2], tier } };
};

/** Terraform's storage_mb (32768) → ARM's storageSizeGB (32): Azure's sizes are whole GiB. */
const megabytesToGiB = (value: unknown, report: Report): unknown => {
  if (typeof value === "number" && value > 0 && value % 1024 === 0) return value / 1024;
  report("dropped", `${JSON.stringify(value)} MB is not a whole number of GiB; left out`);
  return undefined;
};

const FLEXIBLE_SERVER_ID =
  /\/resourceGroups\/([^/]+)\/providers\/Microsoft\.DBforPostgreSQL\/flexibleServers\/([^/]+)\/?$/i;

/** Upjet names a flexible server by its ARM id (or a reference); driftless by resource group and name. */
const serverFieldRules: Record<string, FieldRule> = {
  serverId: {
    into: (value, report) => {
      const m = typeof value === "string" ? FLEXIBLE_SERVER_ID.exec(value) : null;
      if (m?.[1] && m[2]) return { resourceGroupName: m[1], serverName: m[2] };
      report("dropped", "is not a flexible server's resource id; left out");
      return undefined;
    },
  },
  serverIdRef: { to: "serverNameRef" },
  serverIdSelector: { to: "serverNameSelector" },
};

const CONNECTION_SERVICE = "servicenetworking.googleapis.com";

const queryUnescape = (s: string) => {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    return s;
  }
};

/**
 * Terraform's connection id is `<network as given, URL-escaped>:<service, URL-escaped>`; driftless's is
 * `<network path>:<service>`. Without either, driftless finds the network's connection by its network.
 */
function connectionExternalName(value: string | undefined, fp: Obj, report: Report): string | undefined {
  if (value) {
    const at = value.lastIndexOf(":");
    const network = at > 0 ? networkPathOf(queryUnescape(value.slice(0, at))) : undefined;
    const service = at > 0 ? queryUnescape(value.slice(at + 1)) : "";
    if (network && service) {
      const out = `${network}:${service}`;
      if (out !== value)
        report("note", `external name ${value} → ${out} (driftless's <network path>:<service>)`);
      return out;
    }
    report(
      "note",
      `external name ${value} is not <network>:<service>; left out: driftless finds the network's connection itself`,
    );
  }
  const network = typeof fp.network === "string" ? networkPathOf(fp.network) : undefined;
  if (network) {
    const out = `${network}:${typeof fp.service === "string" ? fp.service : CONNECTION_SERVICE}`;
    report(
      "note",
      `no ${Annotations.externalName} annotation: using ${JSON.stringify(out)} from forProvider`,
    );
    return out;
  }
  report(
    "note",
    "no external name needed: driftless finds the network's existing connection once forProvider.network (networkRef, networkSelector) is known",
  );
  return undefined;
}

const STORAGE_ACCOUNT_ID =
  /\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Storage\/storageAccounts\/([^/]+)\/?$/i;

/** Upjet's container names its account by ARM id; driftless by account name and resource group. */
function storageAccountOfId(value: unknown, report: Report): Obj | undefined {
  const m = typeof value === "string" ? STORAGE_ACCOUNT_ID.exec(value) : null;
  if (m?.[1] && m[2]) return { storageAccountName: m[2], resourceGroupName: m[1] };
  report("dropped", "is not a storage account's resource id; left out");
  return undefined;
}

/**
 * A storage Account reference or selector → the account's name and resource group, taken from the Account
 * it names in the same input (driftless has no Account kind to reference).
 */
function storageAccountOfPeer(value: unknown, peers: readonly Peer[], report: Report): Obj | undefined {
  const v = (value ?? {}) as Obj;
  const labels = v.matchLabels as Record<string, string> | undefined;
  const accounts = peers.filter(
    (p) =>
      p.kind === "Account.storage.azure.upbound.io" &&
      (typeof v.name === "string"
        ? p.name === v.name
        : labels !== undefined && Object.entries(labels).every(([k, l]) => p.labels[k] === l)),
  );
  const account = accounts.length === 1 ? accounts[0] : undefined;
  if (!account) {
    report(
      "dropped",
      `names ${accounts.length ? `${accounts.length} storage Accounts` : "no storage Account in the input"}: driftless has no Account kind, so set storageAccountName (and resourceGroupName) instead; left out`,
    );
    return undefined;
  }
  const out: Obj = { storageAccountName: account.externalName ?? account.name };
  for (const f of RESOURCE_GROUP_FIELDS) {
    if (account.forProvider[f] !== undefined) out[f] = structuredClone(account.forProvider[f]);
  }
  return out;
}

const MAPPINGS: KindMapping[] = [
  {
    group: "sqs.aws.upbound.io",
    kind: "Queue",
    to: Queue,
    nameFields: ["name"],
    fields: {
      maxMessageSize: { to: "maximumMessageSize" },
      redrivePolicy: { to: "redrivePolicy", convert: jsonObject },
      name: { note: "the queue name is the crossplane.io/external-name annotation" },
      policy: { to: "policy", convert: jsonObject },
      redriveAllowPolicy: { to: "redriveAllowPolicy", convert: jsonObject },
      kmsMasterKeyId: { drop: "SSE-KMS settings are not managed by driftless (they stay unchanged)" },
      kmsDataKeyReusePeriodSeconds: { drop: "SSE-KMS settings are not managed by driftless" },
      sqsManagedSseEnabled: { drop: "SSE settings are not managed by driftless (they stay unchanged)" },
    },
  },
  {
    group: "s3.aws.upbound.io",
    kind: "Bucket",
    to: S3Bucket,
    nameFields: ["bucket"],
    fields: {
      bucket: { note: "the bucket name is the crossplane.io/external-name annotation" },
      forceDestroy: { drop: "driftless never empties a bucket before deleting it" },
      objectLockEnabled: { drop: "object lock is not managed by driftless (it stays unchanged)" },
    },
  },
  {
    group: "rds.aws.upbound.io",
    kind: "Instance",
    to: DBInstance,
    nameFields: ["identifier"],
    fields: {
      identifier: { note: "the instance identifier is the crossplane.io/external-name annotation" },
      instanceClass: { to: "dbInstanceClass" },
      username: { to: "masterUsername" },
      passwordSecretRef: { to: "masterPasswordSecretRef" },
      maintenanceWindow: { to: "preferredMaintenanceWindow" },
      backupWindow: { to: "preferredBackupWindow" },
      finalSnapshotIdentifier: { to: "finalDBSnapshotIdentifier" },
      parameterGroupName: { to: "dbParameterGroupName" },
      name: { to: "dbName" },
      autoGeneratePassword: {
        note: "driftless generates the master password itself when masterPasswordSecretRef is unset",
      },
    },
  },
  { group: "rds.aws.upbound.io", kind: "SubnetGroup", to: DBSubnetGroup, nameFields: ["name"] },
  { group: "ec2.aws.upbound.io", kind: "VPC", to: VPC },
  { group: "ec2.aws.upbound.io", kind: "Subnet", to: Subnet },
  {
    group: "ec2.aws.upbound.io",
    kind: "SecurityGroup",
    to: SecurityGroup,
    fields: { name: { to: "groupName" } },
  },
  {
    group: "pubsub.gcp.upbound.io",
    kind: "Topic",
    to: Topic,
    fields: {
      messageStoragePolicy: { to: "messageStoragePolicy", convert: firstBlock },
      project: projectNote,
      kmsKeyName: cmekDrop,
    },
  },
  {
    group: "pubsub.gcp.upbound.io",
    kind: "Subscription",
    to: Subscription,
    fields: {
      deadLetterPolicy: { to: "deadLetterPolicy", convert: firstBlock },
      retryPolicy: { to: "retryPolicy", convert: firstBlock },
      project: projectNote,
      pushConfig: { drop: "driftless manages pull subscriptions only; the push endpoint stays unchanged" },
    },
  },
  {
    group: "storage.gcp.upbound.io",
    kind: "Bucket",
    to: GcsBucket,
    fields: {
      versioning: { to: "versioning", convert: firstBlock },
      website: { to: "website", convert: firstBlock },
      project: projectNote,
      forceDestroy: { drop: "driftless never empties a bucket before deleting it" },
    },
  },
  {
    group: "azure.upbound.io",
    kind: "ResourceGroup",
    to: ResourceGroup,
  },
  {
    group: "storage.azure.upbound.io",
    kind: "Container",
    to: Container,
    fields: {
      containerAccessType: {
        to: "publicAccess",
        convert: (v, report) => {
          const map: Record<string, string> = { private: "None", blob: "Blob", container: "Container" };
          const out = typeof v === "string" ? map[v] : undefined;
          if (!out) report("dropped", `unknown containerAccessType ${JSON.stringify(v)}; left out`);
          return out;
        },
      },
      storageAccountId: { into: storageAccountOfId },
      storageAccountIdRef: { peer: storageAccountOfPeer },
      storageAccountIdSelector: { peer: storageAccountOfPeer },
      storageAccountNameRef: { peer: storageAccountOfPeer },
      storageAccountNameSelector: { peer: storageAccountOfPeer },
    },
  },
  {
    group: "network.azure.upbound.io",
    kind: "VirtualNetwork",
    to: VirtualNetwork,
    fields: {
      addressSpace: {
        to: "addressSpace",
        convert: (v, report) => {
          if (!Array.isArray(v)) return v;
          report("note", "→ forProvider.addressSpace.addressPrefixes (ARM's shape)");
          return { addressPrefixes: v };
        },
      },
    },
  },
  {
    group: "network.azure.upbound.io",
    kind: "Subnet",
    to: AzureSubnet,
    fields: {
      addressPrefixes: {
        to: "addressPrefix",
        convert: (v, report) => {
          if (!Array.isArray(v)) return v;
          if (v.length > 1)
            report("dropped", `has ${v.length} prefixes; driftless manages one, the first is kept`);
          return v[0];
        },
      },
      delegation: {
        to: "delegations",
        convert: (v, report) =>
          (Array.isArray(v) ? v : [v]).map((d: Obj) => {
            const service = firstBlock(d.serviceDelegation, report) as Obj | undefined;
            if (!isEmpty(service?.actions))
              report(
                "note",
                "serviceDelegation.actions left out: Azure sets a delegation's actions for its service",
              );
            return { name: d.name, serviceName: service?.name };
          }),
      },
    },
  },
  {
    group: "sql.gcp.upbound.io",
    kind: "DatabaseInstance",
    to: DatabaseInstance,
    refuse: (fp) =>
      typeof fp.databaseVersion === "string" && !fp.databaseVersion.startsWith("POSTGRES_")
        ? `databaseVersion ${fp.databaseVersion}: driftless manages Cloud SQL for PostgreSQL instances only; it was not migrated`
        : typeof fp.masterInstanceName === "string" && fp.masterInstanceName
          ? `a read replica of ${fp.masterInstanceName}: driftless manages primary instances only; it was not migrated`
          : undefined,
    fields: {
      project: projectNote,
      deletionProtection: {
        drop: "Terraform's own guard against deleting the instance; driftless has Google's (settings.deletionProtectionEnabled → deletionProtectionEnabled) and leaving Delete out of managementPolicies",
        harmless: (v) => v === false,
      },
      encryptionKeyName: cmekDrop,
      settings: {
        block: {
          ipConfiguration: {
            block: {
              requireSsl: {
                drop: "deprecated by Google: sslMode says which connections the instance accepts",
                harmless: (v) => v === false,
              },
              authorizedNetworks: {
                drop: "authorized networks of the public IP are not managed by driftless (they stay unchanged)",
              },
            },
          },
        },
      },
    },
  },
  {
    group: "sql.gcp.upbound.io",
    kind: "Database",
    to: Database,
    fields: { project: projectNote, deletionPolicy: abandonRule },
  },
  {
    group: "sql.gcp.upbound.io",
    kind: "User",
    to: User,
    refuse: (fp) =>
      typeof fp.type === "string" && fp.type !== "BUILT_IN"
        ? `a ${fp.type} user: driftless manages built-in users only; it was not migrated`
        : undefined,
    fields: {
      project: projectNote,
      deletionPolicy: abandonRule,
      type: { note: "BUILT_IN, the only type of driftless's User" },
      host: { drop: "a MySQL user's host; driftless manages PostgreSQL users, which have none" },
    },
  },
  {
    group: "compute.gcp.upbound.io",
    kind: "Network",
    to: Network,
    fields: {
      project: projectNote,
      deleteDefaultRoutesOnCreate: {
        note: "acts only when the network is created; an adopted network keeps its routes as they are",
      },
    },
  },
  {
    group: "compute.gcp.upbound.io",
    kind: "GlobalAddress",
    to: GlobalAddress,
    refuse: (fp) =>
      fp.purpose === "VPC_PEERING" && (fp.addressType ?? "INTERNAL") === "INTERNAL"
        ? undefined
        : `purpose ${String(fp.purpose ?? "unset")}, addressType ${String(fp.addressType ?? "unset (Google reserves an EXTERNAL address)")}: driftless's GlobalAddress is a VPC_PEERING range (purpose VPC_PEERING, addressType INTERNAL) only; it was not migrated`,
    fields: { project: projectNote },
  },
  {
    group: "servicenetworking.gcp.upbound.io",
    kind: "Connection",
    to: Connection,
    externalName: connectionExternalName,
    fields: {
      reservedPeeringRangesRefs: { to: "reservedPeeringRangeRefs" },
      reservedPeeringRangesSelector: { to: "reservedPeeringRangeSelector" },
      deletionPolicy: abandonRule,
      updateOnCreationFail: {
        note: "acts only when a connection is created; an adopted connection's ranges are updated in place",
      },
    },
  },
  {
    group: "dbforpostgresql.azure.upbound.io",
    kind: "FlexibleServer",
    to: FlexibleServer,
    fields: {
      skuName: { into: (v, report) => flexibleServerSku(v, report) },
      storageMb: { to: "storageSizeGB", convert: megabytesToGiB },
      zone: { to: "availabilityZone" },
      publicNetworkAccessEnabled: { to: "publicNetworkAccess", convert: enabledDisabled },
      geoRedundantBackupEnabled: { to: "geoRedundantBackup", convert: enabledDisabled },
      autoGeneratePassword: {
        note: "driftless reads the password from administratorPasswordSecretRef (where Crossplane generated it) and generates one itself only when that is unset",
      },
      administratorPasswordWo: {
        drop: "a write-only password: put it in a Secret and set administratorPasswordSecretRef",
      },
      administratorPasswordWoVersion: {
        drop: "belongs to administratorPasswordWo: use administratorPasswordSecretRef",
      },
      privateDnsZoneIdRef: {
        drop: "driftless has no private DNS zone kind: set privateDnsZoneId to the zone's resource id",
      },
      privateDnsZoneIdSelector: {
        drop: "driftless has no private DNS zone kind: set privateDnsZoneId to the zone's resource id",
      },
    },
  },
  {
    group: "dbforpostgresql.azure.upbound.io",
    kind: "FlexibleServerFirewallRule",
    to: FlexibleServerFirewallRule,
    fields: serverFieldRules,
  },
  {
    group: "dbforpostgresql.azure.upbound.io",
    kind: "FlexibleServerDatabase",
    to: FlexibleServerDatabase,
    fields: serverFieldRules,
  },
];

/** The driftless kinds Crossplane's kinds map to. */
export const MIGRATABLE_KINDS: readonly ManagedKindDef[] = [...new Set(MAPPINGS.map((m) => m.to))];

/**
 * A companion kind Upjet splits off a resource (S3 bucket versioning, an SQS redrive policy, a security
 * group rule) folded into the driftless object of the resource it configures, found (same namespace) by
 * reference, by the identifying value, or by selector labels.
 */
interface Fold {
  into: ManagedKindDef;
  /** forProvider fields naming the target: reference (its metadata.name), value, selector. */
  by: { ref: string; value: string; selector: string };
  /** The identifying value → the target's external name (a queue URL's last segment). */
  externalName?: (value: string) => string;
  /**
   * Moves the companion's fields into the target's forProvider; returns the companion fields it carried
   * (each other field is reported).
   */
  apply: (fp: Obj, target: { fp: Obj; externalName?: string }, report: Report) => string[];
}

const BUCKET_BY = { ref: "bucketRef", value: "bucket", selector: "bucketSelector" };
const QUEUE_BY = { ref: "queueUrlRef", value: "queueUrl", selector: "queueUrlSelector" };
const GROUP_BY = { ref: "securityGroupIdRef", value: "securityGroupId", selector: "securityGroupIdSelector" };

/** Upjet's single security group rule → driftless's rule of that direction (ports, protocol, peers). */
function securityGroupRule(
  direction: "ingress" | "egress",
  rule: Obj,
  target: { fp: Obj; externalName?: string },
  report: Report,
): void {
  const out: Obj = {};
  const peers = direction === "ingress" ? "sourceSecurityGroupIds" : "destinationSecurityGroupIds";
  const list = (to: string, v: unknown) => {
    if (v !== undefined) out[to] = [...((out[to] as unknown[] | undefined) ?? []), v];
  };
  const protocol = rule.protocol ?? rule.ipProtocol;
  if (protocol !== undefined) out.protocol = String(protocol);
  if (rule.fromPort !== undefined) out.fromPort = rule.fromPort;
  if (rule.toPort !== undefined) out.toPort = rule.toPort;
  if (rule.description !== undefined) out.description = rule.description;
  for (const v of (rule.cidrBlocks as unknown[] | undefined) ?? []) list("cidrBlocks", v);
  for (const v of (rule.ipv6CidrBlocks as unknown[] | undefined) ?? []) list("ipv6CidrBlocks", v);
  for (const v of (rule.prefixListIds as unknown[] | undefined) ?? []) list("prefixListIds", v);
  list("cidrBlocks", rule.cidrIpv4);
  list("ipv6CidrBlocks", rule.cidrIpv6);
  list("prefixListIds", rule.prefixListId);
  list(peers, rule.sourceSecurityGroupId ?? rule.referencedSecurityGroupId);
  if (rule.self === true) {
    if (target.externalName) list(peers, target.externalName);
    else report("dropped", "self: the group's own id is not known (no external name)", "self");
  }
  const renamed: Record<string, string> = {
    ipProtocol: "protocol",
    cidrIpv4: "cidrBlocks",
    cidrIpv6: "ipv6CidrBlocks",
    prefixListId: "prefixListIds",
    sourceSecurityGroupId: peers,
    referencedSecurityGroupId: peers,
    ...(target.externalName ? { self: peers } : {}),
  };
  for (const [from, to] of Object.entries(renamed)) {
    if (rule[from] !== undefined) report("note", `forProvider.${from} → ${direction}[].${to}`, from);
  }
  const rules = (target.fp[direction] as Obj[] | undefined) ?? [];
  target.fp[direction] = [...rules, out];
  report(
    "warning",
    `${direction} is compared as a set once folded: when Update is allowed, driftless revokes every ${direction} permission of the group that is not among the folded rules — fold all of its rules together`,
  );
}

/** The VPC-style rule kinds: one direction each, one CIDR, prefix list or peer group per rule. */
function directedRule(direction: "ingress" | "egress"): Fold {
  return {
    into: SecurityGroup,
    by: GROUP_BY,
    apply: (fp, target, report) => {
      securityGroupRule(direction, fp, target, report);
      return [
        ...RULE_FIELDS,
        "ipProtocol",
        "cidrIpv4",
        "cidrIpv6",
        "prefixListId",
        "referencedSecurityGroupId",
      ];
    },
  };
}

const RULE_FIELDS = ["protocol", "fromPort", "toPort", "description", "cidrBlocks", "ipv6CidrBlocks"];
const FOLDS: Record<string, Record<string, Fold>> = {
  "s3.aws.upbound.io": {
    BucketVersioning: {
      into: S3Bucket,
      by: BUCKET_BY,
      apply: (fp, target, report) => {
        const cfg = firstBlock(fp.versioningConfiguration, report) as Obj | undefined;
        const status = cfg?.status;
        for (const k of Object.keys(cfg ?? {}).filter((k) => k !== "status" && k !== "mfaDelete"))
          report(
            "dropped",
            `forProvider.versioningConfiguration.${k} has no driftless equivalent; left out`,
            `versioningConfiguration.${k}`,
          );
        if (cfg?.mfaDelete !== undefined)
          report("dropped", "MFA delete is not managed by driftless", "versioningConfiguration.mfaDelete");
        if (status === "Enabled" || status === "Suspended") {
          target.fp.versioning = status;
          report(
            "note",
            "forProvider.versioningConfiguration.status → versioning",
            "versioningConfiguration.status",
          );
        } else if (status === "Disabled")
          report("note", "Disabled: a bucket that never had versioning", "versioningConfiguration.status");
        else if (status !== undefined)
          report(
            "dropped",
            `unknown versioning status ${JSON.stringify(status)}; left out`,
            "versioningConfiguration.status",
          );
        return ["versioningConfiguration"];
      },
    },
    BucketPublicAccessBlock: {
      into: S3Bucket,
      by: BUCKET_BY,
      apply: (fp, target) => {
        const keys = ["blockPublicAcls", "ignorePublicAcls", "blockPublicPolicy", "restrictPublicBuckets"];
        const out: Obj = {};
        for (const k of keys) if (fp[k] !== undefined) out[k] = fp[k];
        target.fp.publicAccessBlock = out;
        return keys;
      },
    },
  },
  "sqs.aws.upbound.io": {
    QueueRedrivePolicy: queueJsonAttribute("redrivePolicy"),
    QueuePolicy: queueJsonAttribute("policy"),
    QueueRedriveAllowPolicy: queueJsonAttribute("redriveAllowPolicy"),
  },
  "ec2.aws.upbound.io": {
    SecurityGroupRule: {
      into: SecurityGroup,
      by: GROUP_BY,
      apply: (fp, target, report) => {
        if (fp.type !== "ingress" && fp.type !== "egress") {
          report(
            "dropped",
            `forProvider.type ${JSON.stringify(fp.type)} is not ingress or egress; left out`,
            "type",
          );
          return [];
        }
        report("note", `forProvider.type ${fp.type}: the rule joins the group's ${fp.type}`, "type");
        securityGroupRule(fp.type, fp, target, report);
        return [...RULE_FIELDS, "type", "prefixListIds", "sourceSecurityGroupId", "self"];
      },
    },
    SecurityGroupIngressRule: directedRule("ingress"),
    SecurityGroupEgressRule: directedRule("egress"),
  },
};

/** An Upjet SQS companion holding one JSON attribute of the queue (a string) → the Queue's field of that name. */
function queueJsonAttribute(field: "redrivePolicy" | "policy" | "redriveAllowPolicy"): Fold {
  return {
    into: Queue,
    by: QUEUE_BY,
    externalName: (url) => url.replace(/\/+$/, "").split("/").at(-1) ?? url,
    apply: (fp, target, report) => {
      const value = jsonObject(fp[field], (severity, message) =>
        report(severity, `forProvider.${field} ${message}`, field),
      );
      if (value !== undefined) target.fp[field] = value;
      return [field];
    },
  };
}

const UPJET_SUFFIX = ".upbound.io";
const UPJET_V2_SUFFIX = ".m.upbound.io";
/**
 * An Upjet group in its v1 form, and whether the object is Crossplane v2's namespaced shape
 * (`<service>.<cloud>.m.upbound.io`; the ProviderConfigs' `<cloud>.m.upbound.io`).
 */
function groupOf(apiVersion: string): { group: string; v2: boolean } {
  const group = apiVersion.split("/")[0] ?? "";
  return group.endsWith(UPJET_V2_SUFFIX)
    ? { group: group.slice(0, -UPJET_V2_SUFFIX.length) + UPJET_SUFFIX, v2: true }
    : { group, v2: false };
}

/** crossplane-contrib's native (non-Upjet) cloud providers, e.g. database.aws.crossplane.io. */
const NATIVE_CONTRIB = /\.(aws|gcp|azure)(\.m)?\.crossplane\.io$/;
const DRIFTLESS_SUFFIX = `.${API_DOMAIN}`;
const DRIFTLESS_V2_SUFFIX = `.m.${API_DOMAIN}`;

const UPJET_CLOUDS: Record<string, "aws" | "gcp" | "azure"> = {
  "aws.upbound.io": "aws",
  "gcp.upbound.io": "gcp",
  "azure.upbound.io": "azure",
};

const isEmpty = (v: unknown) =>
  v === undefined ||
  v === null ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);

/** Annotations that belong to the old controller (or are bulky copies) and are not carried over. */
const DROPPED_ANNOTATIONS = [
  "kubectl.kubernetes.io/last-applied-configuration",
  Annotations.createPending,
  Annotations.createSucceeded,
  Annotations.createFailed,
];

/**
 * Upjet external names are names, but some tools store the cloud's id instead: a URL, an ARN, a
 * `projects/…/topics/…` path or an Azure resource id. driftless wants the last segment.
 */
function normaliseExternalName(value: string, report: Report): string {
  let out = value;
  if (/^https?:\/\//.test(value)) out = value.replace(/\/+$/, "").split("/").at(-1) ?? value;
  else if (value.startsWith("arn:")) out = value.split(":").at(-1) ?? value;
  else if (/^\/subscriptions\/[^/]+\/resourceGroups\//i.test(value)) out = value.split("/").at(-1) ?? value;
  else if (
    /^projects\/[^/]+\/(topics|subscriptions|instances|global\/networks|global\/addresses)\/[^/]+$/.test(
      value,
    )
  )
    out = value.split("/").at(-1) ?? value;
  if (out !== value) report("note", `external name ${value} shortened to ${out}`);
  return out;
}

/** Converts parsed YAML documents (Crossplane managed resources) into driftless objects. */
/** Converts parsed YAML documents (Crossplane or driftless cluster-scoped managed resources) into driftless objects. */
export function migrate(docs: readonly unknown[], opts: MigrateOptions = {}): MigrateResult {
  const result: MigrateResult = {
    objects: [],
    issues: [],
    skipped: 0,
    refused: [],
    moved: [],
    generated: [],
  };
  const folds: Array<{ source: string; fold: Fold; namespace?: string; fp: Obj; report: Report }> = [];
  // A List (as `kubectl get -o yaml` writes) stands for its items.
  const flat = docs.flatMap((d) =>
    d && typeof d === "object" && (d as Obj).kind === "List" && Array.isArray((d as Obj).items)
      ? ((d as Obj).items as unknown[])
      : [d],
  );

  const inputPeers = flat.flatMap((d): Peer[] => {
    if (!d || typeof d !== "object" || Array.isArray(d)) return [];
    const o = d as Obj;
    const meta = (o.metadata ?? {}) as Obj;
    const { group, v2 } = groupOf(String(o.apiVersion ?? ""));
    if (typeof meta.name !== "string") return [];
    const externalName = (meta.annotations as Record<string, string> | undefined)?.[Annotations.externalName];
    const namespace = v2 ? ((meta.namespace as string | undefined) ?? opts.defaultNamespace) : undefined;
    return [
      {
        kind: `${String(o.kind)}.${group}`,
        name: meta.name,
        ...(namespace ? { namespace } : {}),
        labels: (meta.labels ?? {}) as Record<string, string>,
        ...(externalName ? { externalName } : {}),
        forProvider: ((o.spec as Obj | undefined)?.forProvider ?? {}) as Obj,
      },
    ];
  });

  flat.forEach((doc, index) => {
    if (doc === null || doc === undefined) return;
    if (typeof doc !== "object" || Array.isArray(doc)) {
      const source = `document ${index + 1}`;
      result.issues.push({ severity: "error", source, message: "not a Kubernetes object" });
      result.refused.push(source);
      result.skipped++;
      return;
    }
    const o = doc as Obj;
    const apiVersion = String(o.apiVersion ?? "");
    const kind = String(o.kind ?? "");
    const meta = (o.metadata ?? {}) as Obj;
    const name = typeof meta.name === "string" ? meta.name : "";
    const source = `${kind}.${apiVersion.split("/")[0]}/${name || `(document ${index + 1})`}`;
    const issue = (severity: IssueSeverity, message: string, field?: string) => {
      result.issues.push({ severity, source, message, ...(field ? { field } : {}) });
      if (severity === "error" && !result.refused.includes(source)) result.refused.push(source);
    };
    // An object with an error is not migrated, so nothing of it is written (whatever was converted).
    const write = (object: DriftlessObject, moved?: { def: ManagedKindDef; name: string }) => {
      if (result.refused.includes(source)) {
        result.skipped++;
        return;
      }
      result.objects.push({ source, object });
      if (moved) result.moved.push(moved);
    };
    const { group, v2 } = groupOf(apiVersion);
    const skip = (message: string, severity: IssueSeverity = "error") => {
      issue(severity, message);
      result.skipped++;
    };

    if (!name) {
      skip("has no metadata.name");
      return;
    }
    if (apiVersion === "v1") {
      skip(
        `a Kubernetes ${kind}: not converted; apply it as it is where the converted objects read it`,
        "note",
      );
      return;
    }
    if (isUsage(apiVersion, kind)) {
      const namespaced = opts.namespaced?.namespace;
      const out = migrateUsage(
        o,
        { target: usageTarget(opts), ...(namespaced ? { namespaced } : {}) },
        issue,
      );
      if (out) write(out);
      else result.skipped++;
      return;
    }
    if (group.endsWith(DRIFTLESS_SUFFIX)) {
      const out = migrateDriftless(group, o, opts, issue);
      if (!out) {
        result.skipped++;
        return;
      }
      write(out.object, out.moved);
      return;
    }
    // Where a namespaced output goes: a v2 object's own namespace, or the target of cluster-scoped input.
    const namespace = v2
      ? ((meta.namespace as string | undefined) ?? opts.defaultNamespace)
      : opts.namespaced?.namespace;
    if (v2 && !namespace && kind !== "ClusterProviderConfig") {
      skip("a namespaced (Crossplane v2) object without metadata.namespace: pass --namespace");
      return;
    }
    if (/^(Cluster)?ProviderConfigUsage$/.test(kind) && group.endsWith(UPJET_SUFFIX)) {
      skip("Crossplane's own bookkeeping of ProviderConfig users: driftless needs none", "note");
      return;
    }
    if ((kind === "ProviderConfig" || kind === "ClusterProviderConfig") && UPJET_CLOUDS[group]) {
      const pc = migrateProviderConfig(group, o, { v2, namespace, target: opts.namespaced }, issue);
      if (pc) write(pc);
      else result.skipped++;
      return;
    }
    const fold = FOLDS[group]?.[kind];
    if (fold) {
      if (!isEmpty((o.spec as Obj | undefined)?.initProvider))
        issue(
          "dropped",
          `spec.initProvider left out: a folded ${kind} carries its forProvider into the object it configures; move these fields into that object's forProvider or initProvider`,
          "initProvider",
        );
      folds.push({
        source,
        fold,
        ...(namespace ? { namespace } : {}),
        fp: ((o.spec as Obj | undefined)?.forProvider ?? {}) as Obj,
        report: issue,
      });
      return;
    }
    const generated =
      group.endsWith(UPJET_SUFFIX) && !MAPPINGS.some((m) => m.group === group && m.kind === kind)
        ? opts.generated?.(group, kind)
        : undefined;
    if (generated && "unmapped" in generated) {
      skip(
        `driftless has no equivalent of ${kind} (${apiVersion}): ${generated.unmapped}; it was not migrated`,
      );
      return;
    }
    if (generated) {
      issue(
        "note",
        `${kind} → generated kind ${generated.def.kind}.${generated.def.group} (${generated.via})`,
      );
      if (!result.generated.includes(generated.def)) result.generated.push(generated.def);
    }
    const mapping = generated
      ? generatedMapping(group, kind, generated)
      : MAPPINGS.find((m) => m.group === group && m.kind === kind);
    if (!mapping) {
      const apiGroup = apiVersion.split("/")[0] ?? "";
      skip(
        group.endsWith(UPJET_SUFFIX)
          ? `driftless has no equivalent of ${kind} (${apiVersion}); it was not migrated`
          : NATIVE_CONTRIB.test(apiGroup)
            ? `${kind} (${apiVersion}) is a kind of crossplane-contrib's native provider, whose fields differ from the Upjet providers' (*.upbound.io, *.m.upbound.io — crossplane-contrib/provider-upjet-*); migrate converts those only, so it was not migrated`
            : `not a Crossplane managed resource driftless knows (${apiVersion} ${kind}); it was not migrated`,
      );
      return;
    }
    const refusal = mapping.refuse?.(((o.spec as Obj | undefined)?.forProvider ?? {}) as Obj);
    if (refusal) {
      skip(refusal);
      return;
    }
    const peers = inputPeers.filter((p) => p.namespace === (v2 ? namespace : undefined));
    write(migrateManaged(mapping, o, { ...opts, v2, namespace, peers }, issue));
  });

  for (const f of folds) foldInto(result, f);
  fillServerResourceGroups(result);
  result.issues.push(
    ...checkReferences(result.objects, [...MIGRATABLE_KINDS, ...result.generated, ...(opts.kinds ?? [])]),
  );
  return result;
}

/** The mapping of an Upjet kind onto its generated kind: same field names, nested ones where the target nests them. */
function generatedMapping(group: string, kind: string, target: GeneratedTarget): KindMapping {
  const { def } = target;
  const top = new Set(Object.keys((def.forProvider as ZodObject).shape));
  const fields: Record<string, FieldRule> = {};
  for (const [field, under] of Object.entries(target.nested)) if (!top.has(field)) fields[field] = { under };
  const rule = target.externalName;
  const nameFields = [...target.identifierFields, ...("carry" in rule && rule.field ? [rule.field] : [])];
  for (const f of nameFields)
    if (!top.has(f))
      fields[f] = {
        note: `it is the external name of driftless's ${def.kind} (crossplane.io/external-name)`,
      };
  return {
    group,
    kind,
    to: def,
    fields,
    unwrapBlocks: true,
    externalName: (value, fp, report) => {
      if ("refuse" in rule) {
        report("error", `${rule.refuse}; not migrated`);
        return undefined;
      }
      const fromField = rule.field ? fp[rule.field] : undefined;
      const name = value ?? (typeof fromField === "string" && fromField ? fromField : undefined);
      if (!name) {
        if (def.externalName === "fromAnnotation")
          report(
            "note",
            `no ${Annotations.externalName} annotation: driftless uses metadata.name, as Upjet did`,
          );
        else
          report(
            "error",
            `no ${Annotations.externalName} annotation: ${def.kind} ids are chosen by the cloud, so driftless cannot find the existing resource; set the annotation and convert it again; not migrated`,
          );
        return undefined;
      }
      if (rule.onlyIf && !rule.onlyIf.test(name)) {
        report("error", `${rule.otherwise ?? "the external name has another format"}; not migrated`);
        return undefined;
      }
      report(rule.severity, `external name ${JSON.stringify(name)} carried: ${rule.carry}`);
      return name;
    },
  };
}

/** What a kind a Usage names becomes: an Upjet kind's driftless kind, or a driftless kind itself. */
function usageTarget(opts: MigrateOptions): KindTarget {
  return (apiVersion, kind) => {
    const { group, v2 } = groupOf(apiVersion);
    const mapping = MAPPINGS.find((m) => m.group === group && m.kind === kind);
    if (mapping) return { def: mapping.to, v2 };
    for (const def of opts.kinds ?? MIGRATABLE_KINDS) {
      if (def.kind !== kind) continue;
      if (def.apiVersion === apiVersion) return { def, v2: false };
      if (namespacedVariantOf(def).apiVersion === apiVersion) return { def, v2: true };
    }
    return undefined;
  };
}

/** Folds a companion object into the migrated object it configures, or refuses it (an error) when there is none. */
function foldInto(
  result: MigrateResult,
  f: { source: string; fold: Fold; namespace?: string; fp: Obj; report: Report },
) {
  const { fold, fp, report } = f;
  const { into, by } = fold;
  const ref = (fp[by.ref] as Obj | undefined)?.name;
  const value = typeof fp[by.value] === "string" ? (fp[by.value] as string) : undefined;
  const byName = value && fold.externalName ? fold.externalName(value) : value;
  const labels = (fp[by.selector] as Obj | undefined)?.matchLabels as Record<string, string> | undefined;
  const candidates = result.objects.filter(
    (m) =>
      isKindOf(m.object, into) &&
      m.object.metadata.namespace === f.namespace &&
      (m.object.metadata.name === ref ||
        (byName !== undefined && m.object.metadata.annotations?.[Annotations.externalName] === byName) ||
        (ref === undefined &&
          byName === undefined &&
          labels !== undefined &&
          Object.entries(labels).every(([k, v]) => m.object.metadata.labels?.[k] === v))),
  );
  if (candidates.length !== 1) {
    report(
      "error",
      candidates.length > 1
        ? `${by.selector} matches ${candidates.length} ${into.kind}s (${candidates.map((c) => c.object.metadata.name).join(", ")}): set ${by.ref}; not migrated`
        : `configures ${into.kind} ${JSON.stringify(ref ?? value ?? fp[by.selector] ?? "?")}, which is not among the migrated resources: migrate them together; not migrated`,
    );
    result.skipped++;
    return;
  }
  const target = candidates[0]?.object as DriftlessObject;
  const externalName = target.metadata.annotations?.[Annotations.externalName];
  const tfp = target.spec.forProvider as Obj;
  // Fold into a copy, so the target keeps only values its CRD keeps.
  const folded = structuredClone(tfp);
  const carried = new Set(fold.apply(fp, { fp: folded, ...(externalName ? { externalName } : {}) }, report));
  const schema = (target.apiVersion === into.apiVersion ? into : namespacedVariantOf(into)).forProvider;
  Object.assign(tfp, validated(schema, folded, {}, report));
  for (const field of [by.ref, by.value, by.selector]) {
    if (!isEmpty(fp[field]))
      report("note", `forProvider.${field} names the ${into.kind} this is folded into`, field);
  }
  for (const [field, v] of Object.entries(fp)) {
    if (isEmpty(v) || carried.has(field) || [by.ref, by.value, by.selector].includes(field)) continue;
    if (field === "region") {
      if (v !== tfp.region)
        report("note", `forProvider.region ${String(v)}: the ${into.kind}'s own region applies`, field);
      else report("note", "forProvider.region: the same as the target's", field);
      continue;
    }
    report("dropped", `forProvider.${field} has no driftless equivalent in ${into.kind}; left out`, field);
  }
  report(
    "note",
    `folded into ${into.kind} ${target.metadata.name}; delete this Crossplane object ${f.namespace ? "with Delete left out of its managementPolicies" : "with deletionPolicy: Orphan"}`,
  );
}

const RESOURCE_GROUP_FIELDS = ["resourceGroupName", "resourceGroupNameRef", "resourceGroupNameSelector"];

const isKindOf = (o: DriftlessObject, def: ManagedKindDef) =>
  o.kind === def.kind &&
  (o.apiVersion === def.apiVersion || o.apiVersion === namespacedVariantOf(def).apiVersion);

/**
 * Upjet's flexible server firewall rules and databases name their server only (an ARM id, a reference
 * or a selector); driftless's name its resource group too: taken from the migrated FlexibleServer they
 * name (same namespace), else a warning says to set it.
 */
function fillServerResourceGroups(result: MigrateResult) {
  const servers = result.objects.filter((m) => isKindOf(m.object, FlexibleServer));
  for (const child of result.objects) {
    const o = child.object;
    if (!isKindOf(o, FlexibleServerFirewallRule) && !isKindOf(o, FlexibleServerDatabase)) continue;
    const fp = o.spec.forProvider as Obj;
    if (RESOURCE_GROUP_FIELDS.some((f) => fp[f] !== undefined)) continue;
    const ref = (fp.serverNameRef as Obj | undefined)?.name;
    const labels = (fp.serverNameSelector as Obj | undefined)?.matchLabels as
      | Record<string, string>
      | undefined;
    const candidates = servers.filter(
      (s) =>
        s.object.metadata.namespace === o.metadata.namespace &&
        (ref !== undefined
          ? s.object.metadata.name === ref
          : labels !== undefined &&
            Object.entries(labels).every(([k, v]) => s.object.metadata.labels?.[k] === v)),
    );
    const server = candidates.length === 1 ? candidates[0]?.object : undefined;
    const sfp = (server?.spec.forProvider ?? {}) as Obj;
    const copied = RESOURCE_GROUP_FIELDS.filter((f) => sfp[f] !== undefined);
    const issue = (severity: IssueSeverity, message: string) =>
      result.issues.push({ severity, source: child.source, field: "resourceGroupName", message });
    if (!server || copied.length === 0) {
      issue(
        "warning",
        `forProvider.resourceGroupName is unset: driftless finds the server by resource group and name, so set resourceGroupName (or resourceGroupNameRef) to the server's resource group before applying${candidates.length > 1 ? ` (${candidates.length} FlexibleServers match serverNameSelector)` : ""}`,
      );
      continue;
    }
    for (const f of copied) fp[f] = structuredClone(sfp[f]);
    issue(
      "note",
      `forProvider.${copied.join(", ")} taken from FlexibleServer ${server.metadata.name}: driftless names the server's resource group beside its name`,
    );
  }
}

/** driftless's own objects: cluster-scoped ones move to their namespaced variants when asked to. */
function migrateDriftless(
  group: string,
  o: Obj,
  opts: MigrateOptions,
  issue: Report,
): { object: DriftlessObject; moved?: { def: ManagedKindDef; name: string } } | undefined {
  const kind = String(o.kind ?? "");
  const name = String((o.metadata as Obj).name);
  if (group.endsWith(DRIFTLESS_V2_SUFFIX)) {
    issue("note", "already in the namespaced shape: nothing to convert");
    return undefined;
  }
  const pcCloud = kind === "ProviderConfig" ? driftlessProviderConfigCloud(group) : undefined;
  const def = (opts.kinds ?? MIGRATABLE_KINDS).find(
    (d) => d.scope === "Cluster" && d.group === group && d.kind === kind,
  );
  if (!pcCloud && !def) {
    issue("error", `not a driftless managed resource or ProviderConfig (${String(o.apiVersion)} ${kind})`);
    return undefined;
  }
  if (!opts.namespaced) {
    issue(
      "error",
      "already a driftless object: pass --namespaced --namespace <ns> to convert it to the namespaced shape",
    );
    return undefined;
  }
  if (pcCloud) {
    const object = driftlessProviderConfigToV2(pcCloud, o, opts.namespaced, issue);
    return object ? { object } : undefined;
  }
  const object = def ? driftlessToNamespaced(def, o, opts.namespaced, issue) : undefined;
  return object && def ? { object, moved: { def, name } } : undefined;
}

/**
 * Upjet forProvider fields → driftless's, into `to.out`: by the kind's rules, else by the same name;
 * Terraform blocks with `block` rules are flattened (`settings.tier` → `tier`). Everything else is reported.
 */
function mapFields(
  fields: Obj,
  rules: Record<string, FieldRule> | undefined,
  prefix: string,
  to: {
    def: ManagedKindDef;
    out: Obj;
    origins: Record<string, string>;
    peers: readonly Peer[];
    issue: Report;
    /** Where the fields live, for the report: forProvider, or initProvider (the same mapping). */
    section?: "forProvider" | "initProvider";
  },
) {
  const { def, out, origins, issue } = to;
  const section = to.section ?? "forProvider";
  const targetFields = new Set(Object.keys((def.forProvider as ZodObject).shape));
  for (const [field, value] of Object.entries(fields)) {
    if (isEmpty(value)) continue;
    const path = `${prefix}${field}`;
    const report: Report = (severity, message) => issue(severity, `${section}.${path} ${message}`, path);
    const rule = rules?.[field];
    if (rule && "drop" in rule) {
      const severity = rule.harmless?.(value) ? "note" : "dropped";
      issue(severity, `${section}.${path} left out: ${rule.drop}`, path);
      continue;
    }
    if (rule && "note" in rule) {
      issue("note", `${section}.${path}: ${rule.note}`, path);
      continue;
    }
    if (rule && "block" in rule) {
      const block = firstBlock(value, report);
      if (!block || typeof block !== "object" || Array.isArray(block)) {
        report("dropped", "is not a block; left out");
        continue;
      }
      issue("note", `${section}.${path}: its fields are driftless's top-level forProvider fields`, path);
      mapFields(block as Obj, rule.block, `${path}.`, to);
      continue;
    }
    if (rule && "under" in rule) {
      const box = out[rule.under];
      const into: Obj = box && typeof box === "object" && !Array.isArray(box) ? (box as Obj) : {};
      into[field] = structuredClone(value);
      out[rule.under] = into;
      origins[`${rule.under}.${field}`] = path;
      issue("note", `${section}.${path} → ${section}.${rule.under}.${field}`);
      continue;
    }
    if (rule && ("into" in rule || "peer" in rule)) {
      const parts = ("into" in rule ? rule.into(value, report) : rule.peer(value, to.peers, report)) ?? {};
      Object.assign(out, structuredClone(parts));
      for (const k of Object.keys(parts)) origins[k] = path;
      const names = Object.keys(parts).map((k) => `${section}.${k}`);
      if (names.length) issue("note", `${section}.${path} → ${names.join(", ")}`, path);
      continue;
    }
    const target = rule?.to ?? (targetFields.has(field) ? field : undefined);
    if (!target || !targetFields.has(target)) {
      issue(
        "dropped",
        `${section}.${path} has no driftless equivalent for ${def.kind}; left out (the cloud keeps its value, but driftless does not manage it)`,
        path,
      );
      continue;
    }
    const converted = rule?.convert ? rule.convert(value, report) : value;
    if (converted !== undefined) out[target] = structuredClone(converted);
    origins[target] = path;
    if (target !== field) issue("note", `${section}.${path} → ${section}.${target}`, path);
  }
}

/** spec.initProvider through the kind's forProvider rules, or undefined when the source sets none. */
function mappedInitProvider(
  value: unknown,
  mapping: KindMapping,
  peers: readonly Peer[],
  issue: Report,
): { out: Obj; origins: Record<string, string> } | undefined {
  if (isEmpty(value)) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) {
    issue("dropped", "spec.initProvider is not an object; left out", "");
    return undefined;
  }
  const out: Obj = {};
  const origins: Record<string, string> = {};
  mapFields(value as Obj, mapping.fields, "", {
    def: mapping.to,
    out,
    origins,
    peers,
    issue,
    section: "initProvider",
  });
  return { out, origins };
}

/**
 * forProvider as driftless's CRD keeps it: a value that fails the schema would stop every reconcile, and a
 * nested field the schema does not know would be pruned by the API server on apply — both are left out and
 * reported (by the Upjet field they came from), and the schema's own output is what is written.
 */
function validated(
  schema: ZodType,
  mapped: Obj,
  origins: Record<string, string>,
  issue: Report,
  section: "forProvider" | "initProvider" = "forProvider",
): Obj {
  const input = structuredClone(mapped);
  // A field carried into a container (`properties.x`) is named by its own origin, and removed alone.
  const nestedKey = (path: readonly PropertyKey[]) => {
    const two = path.slice(0, 2).map(String).join(".");
    return path.length >= 2 && origins[two] !== undefined ? two : undefined;
  };
  const where = (path: readonly PropertyKey[]) => {
    const two = nestedKey(path);
    if (two) {
      const from = origins[two] ?? two;
      return { top: two, field: from, shown: [from, ...path.slice(2).map(String)].join(".") };
    }
    const [top = "", ...rest] = path.map(String);
    const from = origins[top] ?? top;
    return { top, field: from, shown: [from, ...rest].join(".") };
  };
  for (let attempt = 0; ; attempt++) {
    const parsed = schema.safeParse(input);
    if (parsed.success) {
      const out = parsed.data as Obj;
      for (const path of leafPaths(input)) {
        if (hasPath(out, path)) continue;
        const w = where(path);
        issue(
          "dropped",
          `${section}.${w.shown} has no driftless equivalent; left out (the cloud keeps its value, but driftless does not manage it)`,
          w.field,
        );
      }
      return out;
    }
    const tops = new Set(parsed.error.issues.map((i) => nestedKey(i.path) ?? String(i.path[0] ?? "")));
    // A required field the input lacks cannot be left out: the API server would reject the object.
    const missing = [...tops].filter((t) => t !== "" && !t.includes(".") && !Object.hasOwn(input, t));
    if (missing.length > 0) {
      for (const t of missing)
        issue(
          "error",
          `${section}.${t} is required by driftless (an export of the reconciled object has it); not migrated`,
          t,
        );
      return input;
    }
    for (const i of parsed.error.issues) {
      const w = where(i.path);
      issue("dropped", `${section}.${w.shown}: ${i.message}; left out`, w.field);
    }
    for (const top of tops) {
      const [box = "", member] = top.split(".");
      if (member === undefined) {
        // Members carried into this container by their own origin go with it: each is named.
        const inner = input[top];
        for (const [key, from] of Object.entries(origins))
          if (
            key.startsWith(`${top}.`) &&
            inner &&
            typeof inner === "object" &&
            Object.hasOwn(inner, key.slice(top.length + 1))
          )
            issue(
              "dropped",
              `${section}.${from} left out with ${section}.${top}, which the schema refused`,
              from,
            );
        delete input[top];
      } else {
        const inner = input[box] as Obj;
        delete inner[member];
        if (Object.keys(inner).length === 0) delete input[box];
      }
    }
    // Each round removes at least one top-level field; an issue without a path cannot be fixed by removing one.
    if (tops.has("") || attempt > Object.keys(mapped).length) return {};
  }
}

/** A zod schema without its optional / nullable / default wrappers. */
function bare(schema: ZodType): ZodType {
  let at = schema as ZodType & { def: { type: string; innerType?: ZodType } };
  while (["optional", "nullable", "default", "prefault"].includes(at.def.type) && at.def.innerType)
    at = at.def.innerType as typeof at;
  return at;
}

/**
 * Upjet renders each Terraform block as a list (one element where the block is single): where the target's
 * schema has an object, a one-element list of an object becomes that object (noted by the Upjet field it came
 * from); a longer list stays as it is, so the schema refuses it and it is reported.
 */
function unwrapBlocks(
  schema: ZodType,
  value: unknown,
  origins: Record<string, string>,
  section: "forProvider" | "initProvider",
  issue: Report,
  path: string[] = [],
): unknown {
  const s = bare(schema) as ZodType & { def: { type: string; element?: ZodType; valueType?: ZodType } };
  const type = s.def.type;
  if (
    type === "object" &&
    Array.isArray(value) &&
    value.length === 1 &&
    value[0] &&
    typeof value[0] === "object" &&
    !Array.isArray(value[0])
  ) {
    const two = path.slice(0, 2).join(".");
    const [top = "", ...rest] = origins[two] !== undefined ? [two, ...path.slice(2)] : path;
    const from = [origins[top] ?? top, ...rest].join(".");
    issue("note", `${section}.${from}: its one block is the object driftless's field holds`);
    return unwrapBlocks(schema, value[0], origins, section, issue, path);
  }
  if (type === "object" && value && typeof value === "object" && !Array.isArray(value)) {
    const shape = (s as unknown as ZodObject).shape as Record<string, ZodType>;
    const out: Obj = {};
    for (const [k, v] of Object.entries(value as Obj))
      out[k] = shape[k] ? unwrapBlocks(shape[k], v, origins, section, issue, [...path, k]) : v;
    return out;
  }
  if (type === "array" && Array.isArray(value) && s.def.element)
    return value.map((v) => unwrapBlocks(s.def.element as ZodType, v, origins, section, issue, path));
  if (type === "record" && value && typeof value === "object" && !Array.isArray(value) && s.def.valueType)
    return Object.fromEntries(
      Object.entries(value as Obj).map(([k, v]) => [
        k,
        unwrapBlocks(s.def.valueType as ZodType, v, origins, section, issue, [...path, k]),
      ]),
    );
  return value;
}

/** Paths of the leaves (scalars, empty objects and lists) of a JSON value; list elements by index. */
function leafPaths(value: unknown, prefix: PropertyKey[] = []): PropertyKey[][] {
  if (Array.isArray(value) && value.length > 0) return value.flatMap((v, i) => leafPaths(v, [...prefix, i]));
  if (value && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length > 0)
    return Object.entries(value).flatMap(([k, v]) => leafPaths(v, [...prefix, k]));
  return prefix.length ? [prefix] : [];
}

function hasPath(value: unknown, path: readonly PropertyKey[]): boolean {
  let at: unknown = value;
  for (const key of path) {
    if (!at || typeof at !== "object" || !Object.hasOwn(at, key)) return false;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return true;
}

/**
 * initProvider's schema as the CRD keeps it: forProvider's with nothing required (crd.ts
 * initProviderSchema). Made with safeExtend, not partial(): a generated union body's refinement (one
 * variant at most) stays, and partial() refuses a refined object.
 */
export function initProviderSchemaOf(forProvider: ZodObject): ZodObject {
  return forProvider.safeExtend(
    Object.fromEntries(Object.entries(forProvider.shape).map(([k, v]) => [k, v.optional()])),
  );
}

function migrateManaged(
  mapping: KindMapping,
  o: Obj,
  opts: MigrateOptions & { v2: boolean; namespace?: string; peers: readonly Peer[] },
  issue: Report,
): DriftlessObject {
  const def = mapping.to;
  const meta = (o.metadata ?? {}) as Obj;
  const spec = (o.spec ?? {}) as Obj;
  const fpIn = (spec.forProvider ?? {}) as Obj;
  const forProvider: Obj = {};
  const origins: Record<string, string> = {};
  mapFields(fpIn, mapping.fields, "", { def, out: forProvider, origins, peers: opts.peers, issue });
  // initProvider: the same field mapping, its report lines named by their initProvider path.
  const initIn = spec.initProvider;
  const initIssue: Report = (severity, message, field) =>
    issue(
      severity,
      message,
      field === undefined ? undefined : field ? `initProvider.${field}` : "initProvider",
    );
  const init = mappedInitProvider(initIn, mapping, opts.peers, initIssue);
  const namespace = opts.namespace;

  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries((meta.annotations ?? {}) as Record<string, string>)) {
    if (DROPPED_ANNOTATIONS.includes(k)) continue;
    annotations[k] = v;
  }
  const name = String(meta.name);
  let externalName = annotations[Annotations.externalName];
  if (mapping.externalName) {
    delete annotations[Annotations.externalName];
    const mapped = mapping.externalName(externalName, fpIn, (severity, message) => issue(severity, message));
    if (mapped) annotations[Annotations.externalName] = mapped;
  } else if (!externalName) {
    const fromField = mapping.nameFields?.map((f) => fpIn[f]).find((v) => typeof v === "string" && v);
    externalName =
      (fromField as string | undefined) ?? (def.externalName === "fromAnnotation" ? name : undefined);
    if (externalName) {
      issue(
        "note",
        `no ${Annotations.externalName} annotation: using ${JSON.stringify(externalName)}; check it names the existing cloud resource`,
      );
    } else {
      issue(
        "error",
        `no ${Annotations.externalName} annotation: ${def.kind} ids are chosen by the cloud, so driftless cannot find the existing resource; set the annotation to its id and convert it again; not migrated`,
      );
    }
  }
  if (externalName && !mapping.externalName)
    annotations[Annotations.externalName] = normaliseExternalName(externalName, issue);
  annotations[MIGRATED_FROM_ANNOTATION] = `${String(o.kind)}.${String(o.apiVersion)}`;

  const policies = opts.policies ?? ["Observe"];
  const originalPolicies = spec.managementPolicies;
  if (Array.isArray(originalPolicies) && JSON.stringify(originalPolicies) !== JSON.stringify(["*"])) {
    issue(
      "note",
      `the Crossplane resource had managementPolicies ${JSON.stringify(originalPolicies)}; restore them once driftless reports Synced`,
    );
  }
  const pcRef = spec.providerConfigRef as Obj | undefined;
  const secretRef = spec.writeConnectionSecretToRef as Obj | undefined;
  let outSpec: Obj;
  if (namespace) {
    const orphan = !opts.v2 && spec.deletionPolicy === "Orphan";
    if (orphan) {
      issue(
        "note",
        "deletionPolicy Orphan: the namespaced shape has none; when widening managementPolicies, leave out Delete",
      );
    }
    if (opts.v2 && spec.deletionPolicy !== undefined) {
      issue("note", "spec.deletionPolicy is not part of the namespaced shape: left out", "deletionPolicy");
    }
    const pcKind: ProviderConfigKindName = opts.v2
      ? pcRef?.kind === "ProviderConfig"
        ? "ProviderConfig"
        : "ClusterProviderConfig"
      : (opts.namespaced?.providerConfigKind ?? "ClusterProviderConfig");
    const pcName = typeof pcRef?.name === "string" && pcRef.name ? pcRef.name : "default";
    outSpec = namespacedSpec(
      {
        def,
        forProvider,
        namespace,
        policies,
        orphan,
        ...(init ? { initProvider: init.out } : {}),
        providerConfigRef: { kind: pcKind, name: pcName },
        ...(typeof secretRef?.name === "string"
          ? {
              connectionSecret: {
                name: secretRef.name,
                ...(!opts.v2 ? { namespace: (secretRef.namespace as string | undefined) ?? "default" } : {}),
              },
            }
          : {}),
      },
      issue,
    );
  } else {
    outSpec = { forProvider, ...(init ? { initProvider: init.out } : {}), managementPolicies: policies };
    if (spec.deletionPolicy === "Delete" || spec.deletionPolicy === "Orphan") {
      outSpec.deletionPolicy = spec.deletionPolicy;
    }
    if (pcRef?.name) outSpec.providerConfigRef = { name: pcRef.name };
    if (typeof secretRef?.name === "string") {
      outSpec.writeConnectionSecretToRef = {
        name: secretRef.name,
        namespace: (secretRef.namespace as string | undefined) ?? "default",
      };
    }
  }
  if (typeof secretRef?.name === "string") {
    const secretNamespace = namespace ?? (secretRef.namespace as string | undefined) ?? "default";
    issue(
      "note",
      `connection Secret ${secretNamespace}/${secretRef.name} is owned by the Crossplane resource: driftless writes only Secrets it owns, so delete the Crossplane resource (${opts.v2 ? "with Delete left out of its managementPolicies" : "deletionPolicy: Orphan"}) first — its Secret goes with it and driftless writes a new one with keys ${def.connectionKeys.join(", ") || "(none)"}`,
    );
  }
  if (!isEmpty(spec.publishConnectionDetailsTo)) {
    issue(
      "dropped",
      "spec.publishConnectionDetailsTo left out: driftless writes connection details to writeConnectionSecretToRef only",
      "publishConnectionDetailsTo",
    );
  }
  if (Array.isArray(meta.ownerReferences) && meta.ownerReferences.length > 0) {
    issue(
      "note",
      "ownerReferences (to a Crossplane composite or claim) are not carried over: see docs/claims.md for driftless's way",
    );
  }

  const labels = meta.labels as Record<string, string> | undefined;
  const type = namespace ? namespacedVariantOf(def) : def;
  // After the namespaced shape has moved Secret and reference namespaces (with their own reports).
  if (mapping.unwrapBlocks) {
    outSpec.forProvider = unwrapBlocks(type.forProvider, outSpec.forProvider, origins, "forProvider", issue);
    if (init)
      outSpec.initProvider = unwrapBlocks(
        type.forProvider,
        outSpec.initProvider,
        init.origins,
        "initProvider",
        initIssue,
      );
  }
  outSpec.forProvider = validated(type.forProvider, outSpec.forProvider as Obj, origins, issue);
  if (init) {
    const schema = initProviderSchemaOf(type.forProvider as ZodObject);
    const kept = validated(schema, outSpec.initProvider as Obj, init.origins, initIssue, "initProvider");
    if (Object.keys(kept).length > 0) outSpec.initProvider = kept;
    else delete outSpec.initProvider;
  }
  return {
    apiVersion: type.apiVersion,
    kind: type.kind,
    metadata: {
      name,
      ...(namespace ? { namespace } : {}),
      ...(labels && Object.keys(labels).length ? { labels } : {}),
      annotations,
    },
    spec: outSpec,
  };
}

/**
 * An Upbound ProviderConfig (v1 `<cloud>.upbound.io`, or v2 `<cloud>.m.upbound.io` ProviderConfig /
 * ClusterProviderConfig) → driftless's: v1 stays cluster-scoped unless the namespaced shape is asked for
 * (then a ClusterProviderConfig, or a ProviderConfig in the target namespace); v2 keeps its kind.
 */
function migrateProviderConfig(
  group: string,
  o: Obj,
  where: { v2: boolean; namespace?: string; target?: NamespacedTarget },
  issue: Report,
): DriftlessObject | undefined {
  const meta = (o.metadata ?? {}) as Obj;
  const name = String(meta.name);
  const cloud = UPJET_CLOUDS[group];
  const spec = cloud ? providerConfigSpec(cloud, (o.spec ?? {}) as Obj, issue) : undefined;
  if (!cloud || !spec) return undefined;
  if (where.v2) {
    const kind: ProviderConfigKindName =
      o.kind === "ClusterProviderConfig" ? "ClusterProviderConfig" : "ProviderConfig";
    if (kind === "ClusterProviderConfig" && meta.namespace) {
      issue(
        "note",
        `metadata.namespace ${String(meta.namespace)} left out: a ClusterProviderConfig has none`,
      );
    }
    return v2ProviderConfigObject(cloud, kind, name, where.namespace, spec, issue);
  }
  if (where.target) {
    return v2ProviderConfigObject(
      cloud,
      where.target.providerConfigKind ?? "ClusterProviderConfig",
      name,
      where.target.namespace,
      spec,
      issue,
    );
  }
  return pcObject(providerConfigs[cloud].type, name, spec);
}

/** An Upbound ProviderConfig's spec in driftless's field names (the same for v1 and v2). */
function providerConfigSpec(cloud: "aws" | "gcp" | "azure", spec: Obj, issue: Report): Obj | undefined {
  const creds = (spec.credentials ?? {}) as Obj;
  const source = String(creds.source ?? "");
  const secretRef = creds.secretRef as Obj | undefined;
  const credentials =
    source === "Secret"
      ? { source: "Secret", secretRef: structuredClone(secretRef) }
      : source === "InjectedIdentity" ||
          source === "IRSA" ||
          source === "WebIdentity" ||
          source === "PodIdentity"
        ? { source: "InjectedIdentity" }
        : undefined;
  if (cloud === "azure") {
    issue(
      "error",
      "Azure ProviderConfigs cannot be converted blindly: driftless's needs tenantID, subscriptionID and clientID in spec and only the client secret in its Secret (Upbound's keeps one JSON Secret); see docs/migrating-from-crossplane.md",
    );
    return undefined;
  }
  if (!credentials) {
    issue("error", `credentials source ${JSON.stringify(source)} has no driftless equivalent; not migrated`);
    return undefined;
  }
  if (credentials.source === "InjectedIdentity" && source !== "InjectedIdentity") {
    issue("note", `credentials source ${source} → InjectedIdentity (the function's own role)`);
  }
  if (cloud === "aws") {
    const out: Obj = { credentials };
    const endpoint = ((spec.endpoint as Obj | undefined)?.url as Obj | undefined)?.static;
    if (typeof endpoint === "string") out.endpoint = { url: endpoint };
    for (const k of Object.keys(spec)) {
      if (!["credentials", "endpoint"].includes(k))
        issue("dropped", `spec.${k} left out: no driftless equivalent`, k);
    }
    issue(
      "note",
      "driftless's AWS ProviderConfig has spec.region (default us-east-1) for resources without forProvider.region; migrated resources keep theirs",
    );
    return out;
  }
  const out: Obj = { projectID: spec.projectID, credentials };
  for (const k of Object.keys(spec)) {
    if (!["credentials", "projectID"].includes(k))
      issue("dropped", `spec.${k} left out: no driftless equivalent`, k);
  }
  return out;
}

function pcObject(type: { group: string; version: string }, name: string, spec: Obj): DriftlessObject {
  return {
    apiVersion: `${type.group}/${type.version}`,
    kind: "ProviderConfig",
    metadata: { name },
    spec,
  };
}

const v2Group = (group: string) => group.slice(0, -UPJET_SUFFIX.length) + UPJET_V2_SUFFIX;

/** The kinds `migrate` understands, for help texts and docs. */
export const supportedSources = (): Array<{ from: string; to: string }> => [
  ...MAPPINGS.map((m) => ({
    from: `${m.kind}.${m.group}, ${m.kind}.${v2Group(m.group)}`,
    to: `${m.to.kind}.${m.to.group}, ${m.to.kind}.${namespacedVariantOf(m.to).group}`,
  })),
  {
    from: "BucketVersioning, BucketPublicAccessBlock .s3.aws.upbound.io (and .s3.aws.m.upbound.io)",
    to: "Bucket (folded into spec.forProvider.versioning, .publicAccessBlock)",
  },
  {
    from: "QueueRedrivePolicy, QueuePolicy, QueueRedriveAllowPolicy .sqs.aws.upbound.io (and .sqs.aws.m.upbound.io)",
    to: "Queue (folded into spec.forProvider.redrivePolicy, .policy, .redriveAllowPolicy)",
  },
  {
    from: "SecurityGroupRule, SecurityGroupIngressRule, SecurityGroupEgressRule .ec2.aws.upbound.io (and .ec2.aws.m.upbound.io)",
    to: "SecurityGroup (folded into spec.forProvider.ingress, .egress)",
  },
  {
    from: "every other Upjet kind of *.aws|azure|gcp.upbound.io (and .m.) whose type the Upjet facts give (infra/migrate)",
    to: "its generated kind: <service>.awscc, <rp>.azure.gen, <api>.googleapis .driftless.dev (and .m.); same-named fields carried",
  },
  {
    from: "ProviderConfig.aws.upbound.io, ProviderConfig.gcp.upbound.io",
    to: "ProviderConfig.aws.driftless.dev, ProviderConfig.gcp.driftless.dev (with --namespaced: ClusterProviderConfig .m.)",
  },
  {
    from: "ProviderConfig, ClusterProviderConfig .aws.m.upbound.io, .gcp.m.upbound.io",
    to: "ProviderConfig, ClusterProviderConfig .aws.m.driftless.dev, .gcp.m.driftless.dev",
  },
  {
    from: "driftless cluster-scoped kinds and ProviderConfigs (with --namespaced)",
    to: "their namespaced variants (.m.driftless.dev), ClusterProviderConfig",
  },
  {
    from: "Usage, ClusterUsage .protection.crossplane.io; Usage.apiextensions.crossplane.io",
    to: "the same Usage kinds, spec.of and spec.by naming the driftless kinds (with --namespaced: Usage)",
  },
];
