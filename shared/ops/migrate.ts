// `driftless migrate`: Crossplane (Upbound provider) managed resources → driftless managed resources that
// adopt the same cloud resources.
//
// Every converted resource keeps its name, labels, crossplane.io/external-name, providerConfigRef,
// writeConnectionSecretToRef and deletionPolicy, and gets `managementPolicies: ["Observe"]`: driftless
// first only imports (reads) the cloud resource, so nothing is created, changed or deleted until the
// operator widens the policies. Field names are mapped per kind (Upjet's Terraform-derived names and
// single-element block lists → driftless's names and objects). Anything that cannot be carried over —
// an unknown kind, a field driftless does not manage, a malformed value — is reported, never dropped
// silently. Pure: no cluster or cloud access.
import type { ZodObject } from "zod";
import { SecurityGroup, Subnet, VPC } from "../api/aws/ec2.ts";
import { DBInstance, DBSubnetGroup } from "../api/aws/rds.ts";
import { Bucket as S3Bucket } from "../api/aws/s3.ts";
import { Queue } from "../api/aws/sqs.ts";
import { ResourceGroup } from "../api/azure/resources.ts";
import { Container } from "../api/azure/storage.ts";
import { Subscription, Topic } from "../api/gcp/pubsub.ts";
import { Bucket as GcsBucket } from "../api/gcp/storage.ts";
import type { ManagedKindDef } from "../api/managed.ts";
import { Annotations } from "../api/meta.ts";
import { providerConfigs } from "../api/provider-config.ts";

/** Annotation on every migrated object: where it came from. */
export const MIGRATED_FROM_ANNOTATION = "driftless.dev/migrated-from";

export type IssueSeverity =
  /** Could not be migrated at all (unknown kind, malformed object): exit 1. */
  | "error"
  /** A field (or part of one) driftless does not manage: left out, listed; exit 1 unless allowed. */
  | "dropped"
  /** Worth knowing; nothing lost. */
  | "note";

export interface MigrateIssue {
  severity: IssueSeverity;
  /** `Kind.group/name` of the source object, or `document N` when it has none. */
  source: string;
  /** forProvider field (or spec path) concerned. */
  field?: string;
  message: string;
}

export interface MigratedObject {
  /** `Kind.group/name` of the Crossplane object. */
  source: string;
  /** The driftless object, ready to apply. */
  object: DriftlessObject;
}

export interface DriftlessObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}

export interface MigrateResult {
  objects: MigratedObject[];
  issues: MigrateIssue[];
  /** Documents that were not Kubernetes objects driftless has an equivalent for. */
  skipped: number;
}

type Obj = Record<string, unknown>;
type Report = (severity: IssueSeverity, message: string, field?: string) => void;

/** How one Upjet field becomes a driftless field. */
type FieldRule =
  | { to: string; convert?: (value: unknown, report: Report) => unknown }
  /** Not managed by driftless: reported as dropped with this explanation. */
  | { drop: string }
  /** Carried in metadata instead (external name) or harmless: noted, not dropped. */
  | { note: string };

interface KindMapping {
  /** Upjet API group(s), e.g. sqs.aws.upbound.io (the `.m.` namespaced v2 group is accepted too). */
  group: string;
  kind: string;
  to: ManagedKindDef;
  /** Upjet fields whose name or shape differs; a field with the same name in both passes unchanged. */
  fields?: Record<string, FieldRule>;
  /** Upjet forProvider fields that name the cloud resource (used when the annotation is missing). */
  nameFields?: string[];
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
    report("error", "is not valid JSON; left out");
    return undefined;
  }
};

const projectNote: FieldRule = {
  note: "driftless takes the project from the ProviderConfig's projectID: make sure it names this project",
};

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
      policy: { drop: "the queue policy is not managed by driftless (it stays on the queue unchanged)" },
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
      kmsKeyName: { drop: "CMEK settings are not managed by driftless (they stay unchanged)" },
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
          if (!out) report("error", `unknown containerAccessType ${JSON.stringify(v)}; left out`);
          return out;
        },
      },
      storageAccountNameRef: {
        drop: "driftless has no storage Account kind: the container lives in the ProviderConfig's storage.accountName; set storageAccountName instead",
      },
      storageAccountNameSelector: {
        drop: "driftless has no storage Account kind: the container lives in the ProviderConfig's storage.accountName; set storageAccountName instead",
      },
      storageAccountId: {
        drop: "driftless addresses the account by name (the ProviderConfig's storage.accountName)",
      },
    },
  },
];

/** Folded into the Bucket they configure (Upjet splits them off S3 buckets as separate resources). */
const S3_FOLDS: Record<string, (fp: Obj, report: Report) => Obj> = {
  BucketVersioning: (fp, report) => {
    const cfg = firstBlock(fp.versioningConfiguration, report) as Obj | undefined;
    const status = cfg?.status;
    if (cfg?.mfaDelete !== undefined)
      report("dropped", "MFA delete is not managed by driftless", "mfaDelete");
    if (status === "Enabled" || status === "Suspended") return { versioning: status };
    if (status !== "Disabled" && status !== undefined)
      report("error", `unknown versioning status ${JSON.stringify(status)}`);
    return {};
  },
  BucketPublicAccessBlock: (fp) => {
    const out: Obj = {};
    for (const k of ["blockPublicAcls", "ignorePublicAcls", "blockPublicPolicy", "restrictPublicBuckets"]) {
      if (fp[k] !== undefined) out[k] = fp[k];
    }
    return { publicAccessBlock: out };
  },
};

const UPJET_SUFFIX = ".upbound.io";
/** Crossplane v2 namespaced managed resources live in `<service>.<cloud>.m.upbound.io`. */
const groupOf = (apiVersion: string) =>
  (apiVersion.split("/")[0] ?? "").replace(/\.m\.upbound\.io$/, UPJET_SUFFIX);

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
 * Upjet external names are names, but some tools store the cloud's id instead: a URL, an ARN or a
 * `projects/…/topics/…` path. driftless wants the last segment.
 */
function normaliseExternalName(value: string, report: Report): string {
  let out = value;
  if (/^https?:\/\//.test(value)) out = value.replace(/\/+$/, "").split("/").at(-1) ?? value;
  else if (value.startsWith("arn:")) out = value.split(":").at(-1) ?? value;
  else if (/^projects\/[^/]+\/(topics|subscriptions)\/[^/]+$/.test(value))
    out = value.split("/").at(-1) ?? value;
  if (out !== value) report("note", `external name ${value} shortened to ${out}`);
  return out;
}

/** Converts parsed YAML documents (Crossplane managed resources) into driftless objects. */
export function migrate(docs: readonly unknown[], opts: { policies?: string[] } = {}): MigrateResult {
  const result: MigrateResult = { objects: [], issues: [], skipped: 0 };
  const folds: Array<{ source: string; kind: string; fp: Obj; report: Report }> = [];

  docs.forEach((doc, index) => {
    if (doc === null || doc === undefined) return;
    if (typeof doc !== "object" || Array.isArray(doc)) {
      result.issues.push({
        severity: "error",
        source: `document ${index + 1}`,
        message: "not a Kubernetes object",
      });
      result.skipped++;
      return;
    }
    const o = doc as Obj;
    if (o.kind === "List" && Array.isArray(o.items)) {
      const inner = migrate(o.items, opts);
      result.objects.push(...inner.objects);
      result.issues.push(...inner.issues);
      result.skipped += inner.skipped;
      return;
    }
    const apiVersion = String(o.apiVersion ?? "");
    const kind = String(o.kind ?? "");
    const meta = (o.metadata ?? {}) as Obj;
    const name = typeof meta.name === "string" ? meta.name : "";
    const source = `${kind}.${apiVersion.split("/")[0]}/${name || `(document ${index + 1})`}`;
    const issue = (severity: IssueSeverity, message: string, field?: string) =>
      result.issues.push({ severity, source, message, ...(field ? { field } : {}) });
    const group = groupOf(apiVersion);

    if (!name) {
      issue("error", "has no metadata.name");
      result.skipped++;
      return;
    }
    if (kind === "ProviderConfig" && group.endsWith(UPJET_SUFFIX)) {
      const pc = migrateProviderConfig(group, o, issue);
      if (pc) result.objects.push({ source, object: pc });
      else result.skipped++;
      return;
    }
    if (group === "s3.aws.upbound.io" && S3_FOLDS[kind]) {
      folds.push({
        source,
        kind,
        fp: ((o.spec as Obj | undefined)?.forProvider ?? {}) as Obj,
        report: issue,
      });
      return;
    }
    const mapping = MAPPINGS.find((m) => m.group === group && m.kind === kind);
    if (!mapping) {
      issue(
        "error",
        group.endsWith(UPJET_SUFFIX)
          ? `driftless has no equivalent of ${kind} (${apiVersion}); it was not migrated`
          : `not a Crossplane managed resource driftless knows (${apiVersion} ${kind}); it was not migrated`,
      );
      result.skipped++;
      return;
    }
    result.objects.push({ source, object: migrateManaged(mapping, o, opts, issue) });
  });

  // Fold BucketVersioning / BucketPublicAccessBlock into their Bucket: by bucketRef, or by bucket name.
  for (const f of folds) {
    const ref = (f.fp.bucketRef as Obj | undefined)?.name;
    const byName = f.fp.bucket;
    const target = result.objects.find(
      (m) =>
        m.object.kind === S3Bucket.kind &&
        m.object.apiVersion === S3Bucket.apiVersion &&
        (m.object.metadata.name === ref ||
          m.object.metadata.annotations?.[Annotations.externalName] === byName),
    );
    if (!target) {
      f.report(
        "error",
        `configures bucket ${JSON.stringify(ref ?? byName ?? f.fp.bucketSelector ?? "?")}, which is not among the migrated resources: migrate them together`,
      );
      result.skipped++;
      continue;
    }
    const fp = target.object.spec.forProvider as Obj;
    Object.assign(fp, S3_FOLDS[f.kind]?.(f.fp, f.report));
    f.report(
      "note",
      `folded into Bucket ${target.object.metadata.name}; delete this Crossplane object with deletionPolicy: Orphan`,
    );
  }
  return result;
}

function migrateManaged(
  mapping: KindMapping,
  o: Obj,
  opts: { policies?: string[] },
  issue: Report,
): DriftlessObject {
  const def = mapping.to;
  const meta = (o.metadata ?? {}) as Obj;
  const spec = (o.spec ?? {}) as Obj;
  const fpIn = (spec.forProvider ?? {}) as Obj;
  const targetFields = new Set(Object.keys((def.forProvider as ZodObject).shape));
  const forProvider: Obj = {};

  for (const [field, value] of Object.entries(fpIn)) {
    if (isEmpty(value)) continue;
    const report: Report = (severity, message) => issue(severity, `forProvider.${field} ${message}`, field);
    const rule = mapping.fields?.[field];
    if (rule && "drop" in rule) {
      issue("dropped", `forProvider.${field} left out: ${rule.drop}`, field);
      continue;
    }
    if (rule && "note" in rule) {
      issue("note", `forProvider.${field}: ${rule.note}`, field);
      continue;
    }
    const to = rule?.to ?? (targetFields.has(field) ? field : undefined);
    if (!to || !targetFields.has(to)) {
      issue(
        "dropped",
        `forProvider.${field} has no driftless equivalent for ${def.kind}; left out (the cloud keeps its value, but driftless does not manage it)`,
        field,
      );
      continue;
    }
    const converted = rule?.convert ? rule.convert(value, report) : value;
    if (converted !== undefined) forProvider[to] = converted;
    if (to !== field) issue("note", `forProvider.${field} → forProvider.${to}`, field);
  }

  // Values that fail driftless's validation would stop every reconcile: report them and leave them out.
  const parsed = def.forProvider.safeParse(forProvider);
  if (!parsed.success) {
    for (const i of parsed.error.issues) {
      const top = String(i.path[0] ?? "");
      issue("error", `forProvider.${i.path.join(".")}: ${i.message}; left out`, top);
      delete forProvider[top];
    }
  }

  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries((meta.annotations ?? {}) as Record<string, string>)) {
    if (DROPPED_ANNOTATIONS.includes(k)) continue;
    annotations[k] = v;
  }
  const name = String(meta.name);
  let externalName = annotations[Annotations.externalName];
  if (!externalName) {
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
        `no ${Annotations.externalName} annotation: ${def.kind} ids are chosen by the cloud, so driftless cannot find the existing resource; set the annotation to its id`,
      );
    }
  }
  if (externalName) annotations[Annotations.externalName] = normaliseExternalName(externalName, issue);
  annotations[MIGRATED_FROM_ANNOTATION] = `${String(o.kind)}.${String(o.apiVersion)}`;

  const outSpec: Obj = {
    forProvider,
    managementPolicies: opts.policies ?? ["Observe"],
  };
  const originalPolicies = spec.managementPolicies;
  if (Array.isArray(originalPolicies) && JSON.stringify(originalPolicies) !== JSON.stringify(["*"])) {
    issue(
      "note",
      `the Crossplane resource had managementPolicies ${JSON.stringify(originalPolicies)}; restore them once driftless reports Synced`,
    );
  }
  if (spec.deletionPolicy === "Delete" || spec.deletionPolicy === "Orphan") {
    outSpec.deletionPolicy = spec.deletionPolicy;
  }
  const pcRef = spec.providerConfigRef as Obj | undefined;
  if (pcRef?.name) outSpec.providerConfigRef = { name: pcRef.name };

  const secretRef = spec.writeConnectionSecretToRef as Obj | undefined;
  if (secretRef?.name) {
    const namespace =
      (secretRef.namespace as string | undefined) ?? (meta.namespace as string | undefined) ?? "default";
    outSpec.writeConnectionSecretToRef = { name: secretRef.name, namespace };
    issue(
      "note",
      `connection Secret ${namespace}/${String(secretRef.name)} is owned by the Crossplane resource: driftless writes only Secrets it owns, so delete the Crossplane resource (deletionPolicy: Orphan) first — its Secret goes with it and driftless writes a new one with keys ${def.connectionKeys.join(", ") || "(none)"}`,
    );
  }
  for (const unsupported of ["publishConnectionDetailsTo", "initProvider"] as const) {
    if (!isEmpty(spec[unsupported])) {
      issue(
        "dropped",
        unsupported === "initProvider"
          ? "spec.initProvider left out: driftless has no create-only fields; importing does not create anything"
          : "spec.publishConnectionDetailsTo left out: driftless writes connection details to writeConnectionSecretToRef only",
        unsupported,
      );
    }
  }
  if (Array.isArray(meta.ownerReferences) && meta.ownerReferences.length > 0) {
    issue(
      "note",
      "ownerReferences (to a Crossplane composite or claim) are not carried over: see docs/claims.md for driftless's way",
    );
  }
  if (meta.namespace)
    issue("note", `namespaced (Crossplane v2) resource: driftless's ${def.kind} is cluster-scoped`);

  const labels = meta.labels as Record<string, string> | undefined;
  return {
    apiVersion: def.apiVersion,
    kind: def.kind,
    metadata: { name, ...(labels && Object.keys(labels).length ? { labels } : {}), annotations },
    spec: outSpec,
  };
}

function migrateProviderConfig(group: string, o: Obj, issue: Report): DriftlessObject | undefined {
  const meta = (o.metadata ?? {}) as Obj;
  const spec = (o.spec ?? {}) as Obj;
  const creds = (spec.credentials ?? {}) as Obj;
  const source = String(creds.source ?? "");
  const secretRef = creds.secretRef as Obj | undefined;
  const name = String(meta.name);
  const credentials =
    source === "Secret"
      ? { source: "Secret", secretRef }
      : source === "InjectedIdentity" ||
          source === "IRSA" ||
          source === "WebIdentity" ||
          source === "PodIdentity"
        ? { source: "InjectedIdentity" }
        : undefined;
  if (group === "aws.upbound.io" || group === "gcp.upbound.io") {
    if (!credentials) {
      issue(
        "error",
        `credentials source ${JSON.stringify(source)} has no driftless equivalent; not migrated`,
      );
      return undefined;
    }
    if (credentials.source === "InjectedIdentity" && source !== "InjectedIdentity") {
      issue("note", `credentials source ${source} → InjectedIdentity (the function's own role)`);
    }
  }
  if (group === "aws.upbound.io") {
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
    return pcObject(providerConfigs.aws.type, name, out);
  }
  if (group === "gcp.upbound.io") {
    const out: Obj = { projectID: spec.projectID, credentials };
    for (const k of Object.keys(spec)) {
      if (!["credentials", "projectID"].includes(k))
        issue("dropped", `spec.${k} left out: no driftless equivalent`, k);
    }
    return pcObject(providerConfigs.gcp.type, name, out);
  }
  issue(
    "error",
    group === "azure.upbound.io"
      ? "Azure ProviderConfigs cannot be converted blindly: driftless's needs tenantID, subscriptionID and clientID in spec and only the client secret in its Secret (Upbound's keeps one JSON Secret); see docs/migrating-from-crossplane.md"
      : `driftless has no ProviderConfig for ${group}`,
  );
  return undefined;
}

function pcObject(type: { group: string; version: string }, name: string, spec: Obj): DriftlessObject {
  return {
    apiVersion: `${type.group}/${type.version}`,
    kind: "ProviderConfig",
    metadata: { name },
    spec,
  };
}

/** The Crossplane kinds `migrate` understands, for help texts and docs. */
export const supportedSources = (): Array<{ from: string; to: string }> => [
  ...MAPPINGS.map((m) => ({ from: `${m.kind}.${m.group}`, to: `${m.to.kind}.${m.to.group}` })),
  {
    from: "BucketVersioning.s3.aws.upbound.io",
    to: "Bucket.s3.aws.driftless.dev (folded into spec.forProvider.versioning)",
  },
  {
    from: "BucketPublicAccessBlock.s3.aws.upbound.io",
    to: "Bucket.s3.aws.driftless.dev (folded into spec.forProvider.publicAccessBlock)",
  },
  { from: "ProviderConfig.aws.upbound.io", to: "ProviderConfig.aws.driftless.dev" },
  { from: "ProviderConfig.gcp.upbound.io", to: "ProviderConfig.gcp.driftless.dev" },
];
