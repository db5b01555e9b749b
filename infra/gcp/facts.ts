// The Google API facts the generated GCP kinds are made from, as infra/gcp/refresh-apis.ts extracts them
// from Google's own protos (googleapis/googleapis) into the committed google-apis.json.gz: per resource its
// API host, HTTP bindings, resource pattern and fields with their field_behavior; per message its fields.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { gunzipSync } from "node:zlib";

export const FACTS_FORMAT = 1;
export const FACTS_FILE =
  process.env.DRIFTLESS_GCP_FACTS ?? resolve(import.meta.dirname, "google-apis.json.gz");

/** google.api.field_behavior as the protos write it, plus Compute's "[Output Only]" doc marker as O. */
export type Behaviour = "REQUIRED" | "OUTPUT_ONLY" | "IMMUTABLE" | "INPUT_ONLY" | "IDENTIFIER" | "OPTIONAL";

/** A field: its JSON name, its type (scalar, `enum`, or a message key), list/map, behaviours, short doc. */
export interface FactField {
  /** JSON name (proto3 JSON mapping: lowerCamelCase or the proto's json_name). */
  j: string;
  /** string | integer | number | boolean | int64 (a decimal string on the wire) | bytes | json | enum | message key. */
  t: string;
  rep?: true;
  /** A map<string, t>. */
  map?: true;
  b?: Behaviour[];
  /**
   * The resource type a string field names (`google.api.resource_reference`'s `type`, e.g.
   * `compute.googleapis.com/Network`): its value is that resource's full name. `*` (any type) is left out.
   */
  ref?: string;
  /** Enum values, when t is `enum` (at most 40, for docs). */
  e?: string[];
  doc?: string;
}

export interface FactMessage {
  fields: FactField[];
}

/** One HTTP binding: method and path template (`/v2/{parent=projects/*\/locations/*}/services`). */
export interface FactHttp {
  m: "get" | "post" | "patch" | "put" | "delete";
  p: string;
  /** The request field sent as the body (`*` for the whole request). */
  body?: string;
  /**
   * The RPC's name where its verb is not AIP's standard one (Spanner's delete is DropDatabase): Google's IAM
   * permission may then be named by the RPC's verb (`spanner.databases.drop`, not `spanner.databases.delete`).
   */
  rpc?: string;
  /** Long-running: returns google.longrunning.Operation (resource-oriented) or a Compute Operation. */
  lro?:
    | "longrunning"
    | "ZoneOperations"
    | "RegionOperations"
    | "GlobalOperations"
    | "GlobalOrganizationOperations";
}

export interface FactResource {
  /** `resource` (AIP-121 resource-oriented, google.longrunning) or `compute` (compute.proto). */
  family: "resource" | "compute";
  /** e.g. run (the API's short name, from its host). */
  api: string;
  version: string;
  /** e.g. run.googleapis.com */
  host: string;
  /** The proto package path it came from (google/cloud/run/v2). */
  proto: string;
  /** The message key of the resource. */
  message: string;
  /** The kind's name: the message's (resource family) or the singular of Compute's service. */
  kind: string;
  /** The proto service the methods are in. */
  service: string;
  /** google.api.resource type (run.googleapis.com/Service); Compute: compute.googleapis.com/<Message>. */
  type: string;
  /** The resource name pattern that matches the create's parent (resource family). */
  pattern?: string;
  /**
   * Absent: the API answers the resource but publishes no create (a singleton of settings, or what Google
   * makes itself): its kind adopts the one that exists and never creates (its get's `{name=…}` says which).
   */
  create?: FactHttp & {
    /** The request's `<resource>_id` query parameter (absent: the server names it). */
    idParam?: string;
    /**
     * The request is the body (`*`) and this field of it (JSON name) holds the resource: IAM Admin's
     * `{accountId, serviceAccount}`. The id parameter is then a body field, and Google names the resource.
     */
    wrap?: string;
    /** The id parameter's comment (a wrapped create's id is a spec field). */
    idDoc?: string;
    /**
     * The request is the body (`*`) and holds no resource message: its fields are the create's options
     * (IAM Admin's CreateServiceAccountKey: `{privateKeyType, keyAlgorithm}` under the account's name). The
     * request message's key, and the JSON names of the fields the kind's spec sends (every field but the path
     * variables, `request_id` and `validate_only`); the resource is the create's answer.
     */
    request?: string;
    /**
     * With `wrap`: the JSON names of the create-time inputs beside the resource (Bigtable's CreateInstance:
     * `clusters`), sent only in the create; the request controls (`validate_only`, `response_view`, …) never.
     */
    fields?: string[];
    /**
     * Where the caller's id travels when the create has no `<resource>_id`: `field`, the resource's own `name`
     * (REQUIRED in the message: Logging's LogMetric `{name: "errors"}`, a short id under the parent); `path`,
     * the create is a PUT on the resource's full name (Pub/Sub's `PUT /v1/{name=projects/*\/topics/*}`);
     * `fullName`, the resource's own `name`, REQUIRED, is its full name, the caller's id last (Translation's
     * Glossary `projects/p/locations/l/glossaries/g`): the provider builds it from the parent and the id.
     */
    namedBy?: "field" | "path" | "fullName";
    /**
     * A PUT on the name whose request is not the resource (Pub/Sub's CreateSnapshot `{subscription, labels,
     * tags}`): the JSON names of the request's fields that are the resource's own (same name and type); the
     * rest of the request (`fields`) are create-time inputs, and the resource's fields the request does not
     * carry are Google's.
     */
    resourceFields?: string[];
    /**
     * The request is the body (`*`), holds no resource message and names the resource inside this statement
     * field (JSON name; Spanner's CreateDatabase `createStatement`, "A `CREATE DATABASE` statement, which
     * specifies the ID of the new database"): the provider builds it from the caller's id, and the request's
     * other fields (`fields`) are create-time inputs, recorded at create; the resource's fields are its own.
     */
    statement?: string;
  };
  /**
   * The request field get, update and delete bind the full name to, where it is not `name` (Logging's
   * `metric_name`, Pub/Sub's `snapshot`); the update may bind `<it>.name` inside its body.
   */
  nameField?: string;
  /** Absent: Google publishes no GET of its name (`listObserved` says how it is read instead). */
  get?: FactHttp;
  /**
   * No GET of its name, but a list of the create's own collection answers it (Resource Manager's TagBinding:
   * `GET /v3/tagBindings?parent=…`, no GetTagBinding): the list method, the JSON name of its answer's repeated
   * field holding the resource, and its paging (`pageToken` in, `nextPageToken` out); `list` is its binding.
   * The kind reads one by listing its parent and finding its name there: absent from the list is gone.
   */
  listObserved?: { method: string; field: string; paging: "pageToken" };
  /** `wrap`: the update's request is the body, the resource in this field beside the mask. */
  update?: FactHttp & { mask?: string; wrap?: string };
  /**
   * Statements appended after create (Spanner's UpdateDatabaseDdl, `PATCH …/{database=…}/ddl`, `{statements,
   * operationId}`): `field` is the create's input they extend (`extraStatements`), `read` the GET of the same
   * path (GetDatabaseDdl) where Google publishes one.
   */
  appendStatements?: FactHttp & { field: string; read?: FactHttp };
  /** Absent: the API publishes no Delete<R> (Cloud KMS's KeyRing): its kind releases, never deletes. */
  delete?: FactHttp;
  list?: FactHttp;
  /**
   * Compute: the service's AggregatedList (`/compute/v1/projects/{project}/aggregated/<collection>`), which
   * lists every region's or zone's resources of the collection in one call, keyed by scope.
   */
  aggregated?: FactHttp;
}

/** Why a resource of the protos is not in the facts (refresh-apis.ts `extract`'s census). */
export type NotTakenWhy =
  /** The create is not an HTTP POST with a body (a GET, a PUT, no google.api.http). */
  | "create-not-post"
  /**
   * The create's whole request is the body and holds a resource message beside other fields, in a shape the
   * extractor does not take (more resource messages or ids, or another method than Create<R>).
   */
  | "fields-beside-resource"
  /** The create's request holds no resource message and its answer is none, or a field is not a plain option. */
  | "no-resource-message"
  /** The create's request is the resource message itself, sent whole (`body: "*"`). */
  | "request-is-resource"
  /** The create's body field is a message without google.api.resource. */
  | "body-not-resource"
  /**
   * No method answering the resource with a GET of its name (recognised by its HTTP binding and types, not its
   * name), or several.
   */
  | "no-get"
  /** No method with a DELETE of the name the get reads (bundles before 2026-11-28: such resources are now taken). */
  | "no-delete"
  /** Get or Delete are not bound to the resource's name (`{name=…}`). */
  | "get-or-delete-not-by-name"
  /**
   * A second create of a resource the service already makes with its standard create: a custom method
   * (Logging's CreateBucketAsync, `…/buckets:createAsync`) beside CreateBucket.
   */
  | "second-create"
  /** A resource the API answers (Get<R>) but does not let a caller create: server-made or a singleton. */
  | "no-create";

/** One resource of the protos that is not in `resources`, and why. */
export interface FactNotTaken {
  host: string;
  proto: string;
  service: string;
  /** google.api.resource type where the protos give one, else `<host>/<name in the method>`. */
  type: string;
  /** The method the census started from (`CreateServiceAccountKey`, `GetProjectSettings`). */
  method: string;
  why: NotTakenWhy;
  detail: string;
}

export interface FactsBundle {
  format: typeof FACTS_FORMAT;
  origin: {
    source: string;
    commit: string;
    /** The commit's date (YYYY-MM-DD). */
    committed: string;
    /** The day the bundle was made. */
    retrieved: string;
    licence: string;
  };
  resources: FactResource[];
  /** Every other resource the extractor met, with why it is not in `resources` (absent: an older bundle). */
  notTaken?: FactNotTaken[];
  messages: Record<string, FactMessage>;
}

export function loadFacts(file = FACTS_FILE): FactsBundle {
  const bundle = JSON.parse(gunzipSync(readFileSync(file)).toString("utf8")) as FactsBundle;
  if (bundle.format !== FACTS_FORMAT)
    throw new Error(`${file}: facts format ${bundle.format}, expected ${FACTS_FORMAT}`);
  return bundle;
}

/** Where a data file was extracted from: repository, files, commit and its date, the day, the licence. */
export interface DataOrigin {
  source: string;
  path: string;
  commit: string;
  committed: string;
  retrieved: string;
  licence: string;
}

export const IAM_FORMAT = 1;
export const IAM_FILE = resolve(import.meta.dirname, "google-iam-permissions.json.gz");

/** Every permission Google's predefined IAM roles include (infra/gcp/refresh-iam.ts). */
export interface IamBundle {
  format: typeof IAM_FORMAT;
  origin: DataOrigin & {
    /** How many predefined roles the names were read from. */
    roles: number;
  };
  permissions: string[];
}

export function loadIam(file = IAM_FILE): IamBundle {
  const bundle = JSON.parse(gunzipSync(readFileSync(file)).toString("utf8")) as IamBundle;
  if (bundle.format !== IAM_FORMAT)
    throw new Error(`${file}: IAM format ${bundle.format}, expected ${IAM_FORMAT}`);
  return bundle;
}

export const REFS_FORMAT = 1;
export const REFS_FILE = resolve(import.meta.dirname, "compute-references.json.gz");

/** One type a reference may name (Config Connector's TypeConfig): a KCC kind and the value taken from it. */
export interface RefTarget {
  /** Config Connector's kind (ComputeNetwork, KMSCryptoKey). */
  kind: string;
  /** The Terraform field of the target whose value fills the field (self_link, email); absent: its id. */
  targetField?: string;
  /** How the value is written (`projects/{{project}}/locations/{{location}}/certificates/{{value}}`). */
  valueTemplate?: string;
}

/** A field of a Compute resource that names another resource (Config Connector's ReferenceConfig). */
export interface RefFact {
  /** The Terraform field path, dotted through objects and lists (`network`, `backend.group`). */
  tfField: string;
  targets: RefTarget[];
}

/**
 * Which field of which Compute resource names which resource type, as Google's Config Connector states it
 * (config/servicemappings/compute.yaml `resourceReferences`), and where each KCC kind comes from (every
 * service mapping's Terraform resource name and API host), so a target maps onto a generated kind.
 */
export interface RefsBundle {
  format: typeof REFS_FORMAT;
  origin: DataOrigin;
  /** Per Terraform resource (google_compute_network): its KCC kind and reference fields. */
  resources: Array<{ tf: string; kind: string; refs: RefFact[] }>;
  /**
   * Per KCC kind: its Terraform resources (google_kms_crypto_key; ComputeURLMap: google_compute_url_map and
   * google_compute_region_url_map) and API host (cloudkms.googleapis.com).
   */
  kinds: Record<string, { tf: string[]; host: string }>;
}

export function loadRefs(file = REFS_FILE): RefsBundle {
  const bundle = JSON.parse(gunzipSync(readFileSync(file)).toString("utf8")) as RefsBundle;
  if (bundle.format !== REFS_FORMAT)
    throw new Error(`${file}: references format ${bundle.format}, expected ${REFS_FORMAT}`);
  return bundle;
}

export const SENSITIVE_FORMAT = 1;
export const SENSITIVE_FILE = resolve(import.meta.dirname, "sensitive-labels.json.gz");

/**
 * A resource whose configuration map holds credentials by key (Monitoring NotificationChannel's `labels`:
 * a Slack `auth_token`, a PagerDuty `service_key`, a webhook's `password`), as Google's Magic Modules
 * states it (`sensitiveLabels`, each property's `api_name` the map's key).
 */
export interface SensitiveLabelsFact {
  /** Google's resource type (monitoring.googleapis.com/NotificationChannel). */
  type: string;
  /** The map the keys are written into on the wire (`labels`). */
  map: string;
  /** Each sensitive key: its field name (authToken), its key in the map (auth_token) and Google's text. */
  keys: Array<{ name: string; key: string; doc?: string }>;
}

export interface SensitiveBundle {
  format: typeof SENSITIVE_FORMAT;
  origin: DataOrigin;
  resources: SensitiveLabelsFact[];
}

export function loadSensitive(file = SENSITIVE_FILE): SensitiveBundle {
  const bundle = JSON.parse(gunzipSync(readFileSync(file)).toString("utf8")) as SensitiveBundle;
  if (bundle.format !== SENSITIVE_FORMAT)
    throw new Error(`${file}: sensitive-labels format ${bundle.format}, expected ${SENSITIVE_FORMAT}`);
  return bundle;
}

export const API_NAMES_FORMAT = 1;
export const API_NAMES_FILE = resolve(import.meta.dirname, "compute-api-names.json.gz");

/**
 * Where a Compute Terraform field's name is not the API's (Magic Modules' `api_name`): per Terraform resource
 * (google_compute_disk), the Terraform path (disk_encryption_key.kms_key_self_link) → the API's JSON name of
 * its last step (kmsKeyName). Config Connector's reference mappings name Terraform fields.
 */
export interface ApiNamesBundle {
  format: typeof API_NAMES_FORMAT;
  origin: DataOrigin;
  resources: Record<string, Record<string, string>>;
}

export function loadApiNames(file = API_NAMES_FILE): ApiNamesBundle {
  const bundle = JSON.parse(gunzipSync(readFileSync(file)).toString("utf8")) as ApiNamesBundle;
  if (bundle.format !== API_NAMES_FORMAT)
    throw new Error(`${file}: api-names format ${bundle.format}, expected ${API_NAMES_FORMAT}`);
  return bundle;
}
