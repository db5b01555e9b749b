// The compact, JSON form of one generated Google Cloud kind: what infra/gen-gcp.ts writes per resource
// from Google's protos (infra/gcp/google-apis.json.gz) and what the CRD, the docs and the two generic
// providers (providers/gcp/generic/) are built from. Its field model is the generated AWS kinds' own
// (api/awscc/spec.ts: properties, attributes, defs, createOnly, writeOnly, secrets), so the CRD schema,
// the wire mapping and the drift patch are one piece of code for both clouds; `google` adds Google's facts.
import type { AwsccKindSpec } from "../awscc/spec.ts";

export const GOOGLE_SPEC_VERSION = 1;
/** `<api>.googleapis` + `.driftless.dev`: a group no hand-written kind (`<api>.gcp`) can take. */
export const GOOGLE_GROUP_SUFFIX = "googleapis";

/** One HTTP binding as the proto's google.api.http has it. */
export interface GoogleHttp {
  m: "get" | "post" | "patch" | "put" | "delete";
  /** Path template: `/v2/{parent=projects/*\/locations/*}/services`, Compute's `/compute/v1/projects/{project}/…`. */
  p: string;
  body?: string;
  /** Long-running: google.longrunning.Operation, or Compute's zonal / regional / global Operations. */
  lro?: string;
  /**
   * The whole request is the body (`*`) and this field of it holds the resource: IAM Admin's create
   * `{accountId, serviceAccount}` and patch `{serviceAccount, updateMask}`.
   */
  wrap?: string;
  /** The RPC's name where its verb is not AIP's standard one (Spanner's DropDatabase): its IAM verb may be that. */
  rpc?: string;
}

/** Where a resource lives and how its parent is written. */
export interface GoogleParent {
  /** The parent's template (`projects/*\/locations/*`); Compute: the path's variables. */
  template: string;
  /** The home fields forProvider carries (location, region, zone), in template order. */
  home: Array<"location" | "region" | "zone">;
  /** The parent is another resource (or an organization, folder…): forProvider.parent holds its full name. */
  explicit: boolean;
  /**
   * The create is a POST to a top-level collection with the parent in the body (Resource Manager v3:
   * `POST /v3/folders`, `{parent: "organizations/1"}`); `template` is then the parents it takes, `|`-joined
   * (`organizations/*|folders/*`), the name is `<collection>/<id>` and a list names its parent in the query.
   */
  inBody?: true;
  /**
   * The parent may be left out (the proto marks it OPTIONAL: Resource Manager's Project, which Google makes
   * without a parent for an account with no organization, or under the credentials' organization).
   */
  optional?: true;
  /**
   * Compute: the parent resources a path names by variable (`{instance_group_manager}`), each a forProvider
   * field (`instanceGroupManager`, the parent's name) beside region / zone, immutable like them.
   */
  vars?: Array<{ v: string; field: string }>;
}

export interface GoogleFacts {
  family: "resource" | "compute";
  api: string;
  version: string;
  host: string;
  /** The proto package and service the methods are in (google/cloud/run/v2 Services). */
  proto: string;
  service: string;
  /**
   * `namedBy`: where the caller's id travels without a `<resource>_id` — `field`, the resource's own `name` (a
   * short id: Logging's LogMetric), `path`, a PUT on the full name (Pub/Sub's Topic, Snapshot), `fullName`,
   * the resource's own REQUIRED `name` holding the full name built from the parent and the id (Glossary).
   * `statement`: the request's field that names the resource in a statement (Spanner's `createStatement`),
   * built from the caller's id; the request carries none of the resource's own fields.
   * Absent: Google publishes no create (a singleton of settings, or what Google makes itself): the kind adopts
   * the resource that exists, never creates (its management policies exclude Create).
   */
  create?: GoogleHttp & { idParam?: string; namedBy?: "field" | "path" | "fullName"; statement?: string };
  /** The variable get, update and delete bind the full name to where it is not `name` (`metric_name`). */
  nameField?: string;
  /**
   * A singleton Google makes with its parent (`folders/*\/autokeyConfig`): its name is `${parent}/${collection}`,
   * the spec's home fields (and `parent`) say which one; no id.
   */
  singleton?: true;
  /** A wrapped create's id (`accountId`): a forProvider field sent beside the resource, never read back. */
  createId?: string;
  /**
   * A create of options, with no resource message in its request (IAM Admin's CreateServiceAccountKey:
   * `{privateKeyType, keyAlgorithm}`): the forProvider fields that are its whole body. Every one is immutable,
   * recorded at create and compared with the recorded value (Google may never answer it again); the
   * resource is only ever what Google answers (atProvider, and its secrets the connection Secret's).
   * With `create.wrap`, the create-time inputs sent beside the resource (Bigtable's CreateInstance:
   * `clusters` beside `instance`): forProvider fields that are not the resource's, sent only in the create,
   * recorded there and compared the same way (a change refused, never a second resource). Request controls
   * (`validate_only`, `response_view`, `request_metadata`, a field mask) are never among them.
   */
  createFields?: string[];
  /** Absent: Google publishes no GET of its name; `listObserved` says how one is read. */
  get?: GoogleHttp;
  /**
   * No GET of its name, but a list of the create's own collection answers it (Resource Manager's TagBinding,
   * BigQuery Reservation's Assignment): the list method, the JSON name of its answer's field holding the
   * resources and its paging; `list` is its binding. The provider reads one by listing its parent, page by page,
   * and finding its full name there: absent from the list is gone. It never sends a GET of the name.
   */
  listObserved?: { method: string; field: string; paging: "pageToken" };
  update?: GoogleHttp & { mask?: string };
  /**
   * Statements appended after create (Spanner's UpdateDatabaseDdl, `PATCH …/{database=…}/ddl` with
   * `{statements, operationId}`, long-running): `field` is the create-time input they extend
   * (`extraStatements`), which may then only grow by appending; `read` the GET of the same path
   * (GetDatabaseDdl), which answers them as Google normalises them (never compared with the spec's text).
   */
  appendStatements?: GoogleHttp & { field: string; read?: GoogleHttp };
  /**
   * Absent: Google publishes no delete (Cloud KMS's KeyRing, a Compute Commitment): the kind's deletionPolicy
   * is Orphan only and deleting its object releases the resource, which stays in Google Cloud.
   */
  delete?: GoogleHttp;
  list?: GoogleHttp;
  /**
   * A regional or zonal Compute kind: its collection's AggregatedList (`/compute/v1/projects/{project}/aggregated/<collection>`),
   * every region's and zone's resources in one call, keyed by scope (`regions/us-central1`). A regional twin
   * (RegionBackendServices) has none of its own: its global twin's lists the regional ones too.
   */
  aggregated?: GoogleHttp;
  /** The resource-name pattern (projects/{project}/locations/{location}/services/{service}). */
  pattern?: string;
  /** The collection id a create adds to (`services`): name = `${parent}/${collection}/${id}`. */
  collection: string;
  parent: GoogleParent;
  /** The labels field (a map of strings), when the resource has one. */
  labels?: string;
  /**
   * A field Google documents as unique within the parent (a Folder's `displayName`, a TagKey's `shortName`):
   * a create whose answer was lost is found again by listing the parent for it.
   */
  uniqueIn?: string;
  /** The `state` a delete leaves the resource in for a while (a soft delete: `DELETE_REQUESTED`): gone. */
  softDelete?: string;
  /**
   * A map whose keys include credentials (Monitoring NotificationChannel's `labels`: `auth_token`, …, from
   * Google's Magic Modules): forProvider's `sensitiveLabels.<name>SecretRef` fills `map.<key>` on the wire;
   * Google answers them obfuscated, so they are taken out of what it answers before anything is compared.
   */
  sensitiveLabels?: { map: string; keys: Record<string, string> };
  /** Fields the protos mark IMMUTABLE (createOnly), and whether the protos say nothing of immutability. */
  immutableFromProtos: boolean;
  /** Fields (at any depth) that name another generated kind's resource: they get `…Ref` / `…Selector` fields. */
  refs?: GoogleRef[];
  /**
   * Permissions derived from Google's `service.resource.verb` naming that no predefined role includes (the
   * API spells them otherwise): listed so the kind's docs say so; `permissions` holds the rest, confirmed.
   */
  unconfirmedPermissions?: string[];
}

/**
 * A field whose value is another resource's name: `google.api.resource_reference` on the field (its `type`),
 * at the top or below it; `parent` when exactly one generated kind's name pattern is the parent's template;
 * or, for Compute (whose protos carry no such annotation), a Config Connector service mapping's reference.
 */
export interface GoogleRef {
  /** The field's JSON name, in the object at `at`. */
  field: string;
  /**
   * The path of the object holding the field (JSON names joined by `.`), through lists element-wise
   * (`subnetworks` of a list of messages: every item gets its own `…Ref` / `…Selector`); absent: the top.
   */
  at?: string;
  /** A repeated field: `…Refs` and a list of names. */
  list?: true;
  /** The referenced resource type (compute.googleapis.com/Network) and the generated kind serving it. */
  type: string;
  group: string;
  kind: string;
  plural: string;
  family: "resource" | "compute";
  /**
   * What of the target fills the field: absent, its full resource name (Compute: `projects/…` relative name);
   * `selfLink` its full URL; `name` its name (external name); another atProvider or forProvider field (`email`);
   * `externalName` a hand-written kind's external name (the GCS Bucket's: the bucket name).
   */
  from?: string;
  /** Written before the full name: `//networksecurity.googleapis.com/` (a full resource name with host). */
  prefix?: string;
  /** Where the fact comes from: Config Connector's service mappings (`kcc`); absent: the protos. */
  source?: "kcc";
}

export type GoogleKindSpec = Omit<AwsccKindSpec, "v"> & {
  v: typeof GOOGLE_SPEC_VERSION;
  google: GoogleFacts;
};

export interface GoogleCatalogEntry {
  /** Google's resource type (run.googleapis.com/Service). */
  typeName: string;
  group: string;
  kind: string;
  plural: string;
  family: "resource" | "compute";
  file: string;
}

export interface GoogleCatalog {
  /** The facts bundle's origin (infra/gcp/google-apis.json.gz). */
  source: { source: string; commit: string; committed: string; retrieved: string; licence: string };
  /** Where the IAM permission names the kinds' permissions are confirmed against come from. */
  iamSource?: { source: string; commit: string; committed: string; retrieved: string; licence: string };
  generator: number;
  stamp: string;
  kinds: GoogleCatalogEntry[];
  /** Resources of the facts left out, and why (name clashes): reported, never silently. */
  skipped: Array<{ typeName: string; why: string }>;
  /** Where Compute's references come from (Config Connector's service mappings). */
  refsSource?: { source: string; commit: string; committed: string; retrieved: string; licence: string };
  /** Where Compute's Terraform → API field names come from (Google's Magic Modules' `api_name`). */
  apiNamesSource?: { source: string; commit: string; committed: string; retrieved: string; licence: string };
  /** Where the credential keys of configuration maps come from (Google's Magic Modules). */
  sensitiveSource?: { source: string; commit: string; committed: string; retrieved: string; licence: string };
  /** Config Connector's Compute references that map onto no generated field or kind, and why. */
  unmappedRefs?: Array<{ resource: string; tfField: string; target?: string; why: string }>;
}

/** The API group (without the domain) of a generated Google kind. */
export const googleGroupOf = (api: string) => `${api}.${GOOGLE_GROUP_SUFFIX}`;

/** The activation alias: `<api>.googleapis.<kind>` lowercased (`run.googleapis.service`). */
export const googleAliasOf = (e: { group: string; kind: string }) => `${e.group}.${e.kind.toLowerCase()}`;
