// Generates the Google Cloud kinds reconciled by the two generic providers (providers/gcp/generic/): one
// compact JSON spec per resource plus a catalog, into .generated/gcp/ (git-ignored), from the facts
// extracted from Google's protos (infra/gcp/google-apis.json.gz, refreshed by `npm run refresh:gcp-apis`).
// Run by `npm run gen:gcp`, by `prepare` and `pretest`, and by tests that need it; skipped when current.
//
//   node infra/gen-gcp.ts            generate if stale
//   node infra/gen-gcp.ts --force    generate again
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { AWSCC_MAX_DEPTH } from "../shared/api/awscc/kind.ts";
import type { AwsccNode, AwsccObjectDef, AwsccProp } from "../shared/api/awscc/spec.ts";
import { pluralOf } from "../shared/api/awscc/spec.ts";
import { Bucket } from "../shared/api/gcp/storage.ts";
import {
  GOOGLE_SPEC_VERSION,
  type GoogleCatalog,
  type GoogleKindSpec,
  type GoogleParent,
  type GoogleRef,
  googleGroupOf,
} from "../shared/api/googleapis/spec.ts";
import { API_DOMAIN } from "../shared/api/meta.ts";
import { computeRefsOf } from "./gcp/compute-refs.ts";
import {
  API_NAMES_FILE,
  FACTS_FILE,
  type FactField,
  type FactHttp,
  type FactResource,
  type FactsBundle,
  IAM_FILE,
  loadApiNames,
  loadFacts,
  loadIam,
  loadRefs,
  loadSensitive,
  REFS_FILE,
  SENSITIVE_FILE,
  type SensitiveLabelsFact,
} from "./gcp/facts.ts";
import { type ApiCollections, iamIndexOf, iamServicesOf, spelledByRoles } from "./gcp/iam-prefix.ts";
import { secretNamed } from "./gen-awscc.ts";

const ROOT = resolve(import.meta.dirname, "..");
export const GCP_GEN_DIR = join(ROOT, ".generated/gcp");
/** Bumped whenever the output format or a mapping rule changes: stale output is generated again. */
export const GENERATOR_VERSION = 14;

const HOME_COLLECTIONS: Record<string, GoogleParent["home"][number]> = {
  locations: "location",
  regions: "region",
  zones: "zone",
};
// Server state a Compute update must echo back (optimistic concurrency), never a desired value.
const FINGERPRINT = /^(fingerprint|[a-z]+Fingerprint)$/;
/**
 * A private key's bytes: IAM ServiceAccountKey's `privateKeyData` ("the private key data", bytes, only in the
 * create's answer), which the AWS rule (…PrivateKey$) does not name.
 */
const PRIVATE_KEY_DATA = /privateKeyData$/i;
/**
 * The generated AWS kinds' secret-name rule, and a private key's data. Google's bare `secret` fields and `secretManagerStored…` name a
 * Secret Manager secret (a reference, not a value), so they stay plain fields.
 */
const isSecretName = (name: string) =>
  (secretNamed(name) || PRIVATE_KEY_DATA.test(name)) && !/^secretManager/i.test(name);

const has = (f: FactField, b: string) => f.b?.includes(b as never) ?? false;
/**
 * Where a field's own comment in the protos says it is output only but the annotation is missing (Monitoring's
 * `creationRecord`: "A read-only record of the creation…"; AutoML's "Output only."), the comment is the fact:
 * a server-set field in forProvider would be late-initialized and then patched back forever.
 */
const OUTPUT_DOC = /^(Output only\b|Output-only\b|\[Output only\]|Read-only\b|A read-only\b)/i;
const isOutput = (f: FactField) => has(f, "OUTPUT_ONLY") || OUTPUT_DOC.test(f.doc ?? "");

/**
 * A create or list path whose parent variable is the request's `name` (Monitoring v3:
 * `/v3/{name=projects/*}/alertPolicies`), written with `parent`: the URL is the same, and the providers and
 * the fake fill `parent`. Only a variable right before the collection, never a resource's own `name`.
 */
export const asParentPath = (p: string) =>
  p
    .replace(/\{name=([^}]*)\}\/([A-Za-z]+)(?=:|$)/, "{parent=$1}/$2")
    // Storage Transfer's agent pools: `/v1/projects/{project_id=*}/agentPools`, the project's own variable.
    .replace(/\/projects\/\{project_id=\*\}\/([A-Za-z]+)(?=:|$)/, "/{parent=projects/*}/$1");

/**
 * The create path a resource Google makes itself (no create in its API) would have, from its get's
 * `{name=…}`: the name's template less its id (`…/keyRings/*` → `{parent=…}/keyRings`), or, for a singleton
 * whose name ends in a word (`folders/*\/autokeyConfig`), less that word, which is then its collection and its
 * whole name within the parent. Undefined where the template is not `<parent>/<collection>[/*]`.
 */
export function madeByGoogle(getPath: string): { path: string; singleton: boolean } | undefined {
  const m = /^(.*)\{name=([^}]*)\}$/.exec(getPath.split(":")[0] ?? "");
  if (!m) return undefined;
  const parts = (m[2] as string).split("/");
  const singleton = parts.at(-1) !== "*";
  const collection = singleton ? parts.at(-1) : parts.at(-2);
  const parent = parts.slice(0, singleton ? -1 : -2);
  if (!collection || !/^[A-Za-z]+$/.test(collection) || parent.length === 0 || parent.includes("**"))
    return undefined;
  return { path: `${m[1]}{parent=${parent.join("/")}}/${collection}`, singleton };
}

/**
 * APIs in the protos that are not Google Cloud APIs (issue 31's "Cloud APIs"): their resources belong to a
 * Google Workspace customer or a Merchant Center account, not to a Cloud project a ProviderConfig names,
 * and are reached with a user's or a Workspace domain-delegated identity. Left out, with this reason.
 */
const NOT_CLOUD: Record<string, string> = {
  "chat.googleapis.com":
    "Google Chat (Workspace): spaces and custom emoji belong to Workspace users, created with user or Chat-app authentication",
  "drivelabels.googleapis.com":
    "Drive Labels (Workspace): labels belong to a Workspace customer, managed with a Workspace admin's or user's credentials",
  "workspaceevents.googleapis.com":
    "Workspace Events: subscriptions to Workspace resources' events, created with the user's credentials that can see the resource",
  "merchantapi.googleapis.com":
    "Merchant API (Merchant Center): accounts are Merchant Center accounts, and its create is createTestAccount (test accounts only)",
};

/**
 * Types whose configuration map holds credentials by key: generated only with the published fact of which
 * keys (infra/gcp/sensitive-labels.json.gz, from Magic Modules), else left out with this reason.
 */
const UNSAFE: Record<string, string> = {
  "monitoring.googleapis.com/NotificationChannel":
    "its labels map is the channel's configuration, credentials among it by key (Slack auth_token, PagerDuty service_key, a webhook's password), and infra/gcp/sensitive-labels.json.gz names none of them",
};

/**
 * Hand-written GCP kinds a generated kind's reference may point at, by the Google type they serve, where no
 * generated kind serves it (Storage's JSON API is not in the protos): Compute BackendBucket's `bucketName`.
 */
const HAND_WRITTEN_TARGETS = [
  {
    type: "storage.googleapis.com/Bucket",
    group: Bucket.group.slice(0, -`.${API_DOMAIN}`.length),
    kind: Bucket.kind,
    plural: Bucket.plural,
  },
];

/**
 * Resource Manager v3's creates are a POST to a top-level collection with the parent in the body
 * (`POST /v3/folders`, `{parent: "organizations/1", …}`). What each takes, from the protos' own comments
 * (google/cloud/resourcemanager/v3: folders.proto, projects.proto, tag_keys.proto, tag_values.proto):
 * the parents (`parent`'s doc), the kind a reference to the parent names, the field unique within the parent
 * ("A folder's display name must be unique amongst its siblings"; TagKey's short name "should be unique for
 * TagKeys within the same tag namespace", TagValue's "within the same parent TagKey") by which a create whose
 * answer was lost is found again, the id the user chooses (Project's `project_id`; its name is
 * `projects/{number}`), and a delete that only marks the resource (`DELETE_REQUESTED`, undeletable for 30 days).
 */
const RM = "cloudresourcemanager.googleapis.com";
export const PARENT_IN_BODY: Record<
  string,
  { parents: string[]; ref?: string; uniqueIn?: string; idField?: string; softDelete?: string }
> = {
  [`${RM}/Folder`]: {
    parents: ["organizations/*", "folders/*"],
    ref: `${RM}/Folder`,
    uniqueIn: "displayName",
    softDelete: "DELETE_REQUESTED",
  },
  [`${RM}/Project`]: {
    parents: ["organizations/*", "folders/*"],
    ref: `${RM}/Folder`,
    idField: "projectId",
    softDelete: "DELETE_REQUESTED",
  },
  [`${RM}/TagKey`]: {
    parents: ["organizations/*", "projects/*"],
    ref: `${RM}/Project`,
    uniqueIn: "shortName",
  },
  [`${RM}/TagValue`]: { parents: ["tagKeys/*"], ref: `${RM}/TagKey`, uniqueIn: "shortName" },
  // tag_bindings.proto: `parent` is "The full resource name of the resource the TagValue is bound to. E.g.
  // `//cloudresourcemanager.googleapis.com/projects/123`" (any resource; the ones Resource Manager holds are
  // taken); Google names the binding `tagBindings/{full-resource-name}/{tag-value-name}`, so one tag value is
  // bound to a resource once: a create whose answer was lost is found again by its `tagValue` in the list.
  [`${RM}/TagBinding`]: {
    parents: [
      "//cloudresourcemanager.googleapis.com/projects/*",
      "//cloudresourcemanager.googleapis.com/folders/*",
      "//cloudresourcemanager.googleapis.com/organizations/*",
    ],
    uniqueIn: "tagValue",
  },
};

/** `/v2/{parent=projects/*\/locations/*}/services` → { template, collection }. */
function parentOf(
  r: FactResource,
  sensitive?: SensitiveLabelsFact,
): { parent: GoogleParent; collection: string; singleton?: true } | { why: string } {
  const notCloud = NOT_CLOUD[r.host];
  if (notCloud) return { why: `not a Google Cloud API: ${notCloud}` };
  const unsafe = UNSAFE[r.type];
  if (unsafe && !sensitive) return { why: unsafe };
  // A Compute collection Google fills itself (MachineTypes): its get's path less the name is the collection's.
  const getPath = r.get?.p ?? "";
  const computeMade = r.family === "compute" && !r.create ? getPath.replace(/\/\{\w+\}$/, "") : undefined;
  const made = r.create || computeMade ? undefined : madeByGoogle(getPath);
  if (!r.create && !made && !computeMade)
    return { why: `no create, and its get is not <parent>/<collection>[/*]: ${getPath}` };
  const path = asParentPath((r.create?.p ?? computeMade ?? made?.path ?? "").split(":")[0] ?? "");
  const id = r.create?.idParam;
  // The id parameter must be the request's own (`agent_pool_id`), never a variable of its path.
  if (id && new RegExp(`\\{${id}[=}]`).test(r.create?.p ?? ""))
    return {
      why: `the facts name the path variable ${id} as the create's id parameter (refresh-apis took the request's first *_id field; the rule now skips path variables, so the next npm run refresh:gcp-apis names the real one)`,
    };
  const collection = path.split("/").at(-1) ?? "";
  if (r.family === "compute") {
    const vars = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
    const home = vars.filter((v): v is "region" | "zone" => v === "region" || v === "zone");
    // A child's insert path names its parent (`…/instanceGroupManagers/{instance_group_manager}/resizeRequests`).
    const parents = vars
      .filter((v) => !["project", "region", "zone"].includes(v))
      .map((v) => ({ v, field: v.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()) }));
    return {
      parent: { template: path, home, explicit: false, ...(parents.length > 0 ? { vars: parents } : {}) },
      collection,
    };
  }
  // A PUT on the full name (Pub/Sub's `/v1/{name=projects/*\/snapshots/*}`): the parent and collection are in it.
  const put = r.create?.namedBy === "path" ? /\{name=(.+)\/([A-Za-z]+)\/\*\}$/.exec(r.create.p) : undefined;
  if (r.create?.namedBy === "path" && !put)
    return { why: `a PUT create not on <parent>/<collection>/*: ${r.create.p}` };
  const inBody = PARENT_IN_BODY[r.type];
  if (inBody && /^\/v\d+\/[A-Za-z]+$/.test(path))
    return {
      parent: { template: inBody.parents.join("|"), home: [], explicit: true, inBody: true },
      collection,
    };
  const m = put ? [put[0], put[1], put[2]] : /\{parent=([^}]*)\}\/([A-Za-z]+)$/.exec(path);
  if (!m) return { why: `create path has no {parent=…}/<collection>: ${r.create?.p ?? path}` };
  const template = m[1] as string;
  const parts = template.split("/");
  const home: GoogleParent["home"] = [];
  let explicit = parts[0] !== "projects" || parts.length % 2 !== 0;
  for (let i = 2; i < parts.length && !explicit; i += 2) {
    const h = HOME_COLLECTIONS[parts[i] as string];
    if (h && parts[i + 1] === "*") home.push(h);
    else explicit = true;
  }
  return {
    parent: { template, home: explicit ? [] : home, explicit },
    collection: m[2] as string,
    ...(made?.singleton ? { singleton: true as const } : {}),
  };
}

class SpecBuilder {
  readonly defs: Record<string, AwsccObjectDef> = {};
  readonly #keys = new Map<string, string>();
  readonly #facts: FactsBundle;
  constructor(facts: FactsBundle) {
    this.#facts = facts;
  }

  node(f: FactField): AwsccNode {
    let n: AwsccNode;
    if (["integer", "number", "boolean", "json"].includes(f.t)) n = { t: f.t as "integer" };
    else if (["string", "int64", "bytes", "enum"].includes(f.t)) n = { t: "string" };
    else n = this.#facts.messages[f.t] ? { t: "ref", ref: this.#def(f.t) } : { t: "json" };
    if (f.map) return { t: "map", of: n };
    if (f.rep) return { t: "array", of: n };
    return n;
  }

  prop(f: FactField): AwsccProp {
    const p: AwsccProp = { n: f.j, s: this.node(f) };
    if (has(f, "REQUIRED")) p.req = true;
    if (f.e && f.e.length > 0) p.enum = f.e;
    const notes = [
      f.t === "int64" ? "A 64-bit integer, written as a decimal string (proto3 JSON)." : "",
      f.t === "bytes" ? "Bytes, base64-encoded." : "",
    ].filter(Boolean);
    const doc = [f.doc, ...notes].filter(Boolean).join(" ");
    if (doc) p.doc = doc;
    return p;
  }

  #def(message: string): string {
    const known = this.#keys.get(message);
    if (known) return known;
    const short = message.split(".").at(-1) ?? message;
    const key = this.defs[short] ? message : short;
    this.#keys.set(message, key);
    const def: AwsccObjectDef = { name: short, props: {} };
    this.defs[key] = def;
    // An output-only member is the cloud's wherever its message is used: never in forProvider.
    for (const f of this.#facts.messages[message]?.fields ?? [])
      if (!isOutput(f)) def.props[f.j] = this.prop(f);
    return key;
  }

  isMessage(t: string): boolean {
    return Boolean(this.#facts.messages[t]);
  }

  fieldsOf(message: string): FactField[] {
    return this.#facts.messages[message]?.fields ?? [];
  }
}

/** Paths (dotted JSON names, lists without an index) of the fields `pick` selects, at any depth. */
function pathsWhere(
  b: SpecBuilder,
  facts: FactsBundle,
  message: string,
  top: readonly string[],
  pick: (f: FactField, parent: string) => boolean,
): string[] {
  const out: string[] = [];
  const walk = (msg: string, prefix: string, seen: readonly string[]) => {
    for (const f of b.fieldsOf(msg)) {
      if (!prefix && !top.includes(f.j)) continue;
      // Below the top, output-only members are not in the kind's types (SpecBuilder drops them).
      if (prefix && isOutput(f)) continue;
      const path = prefix ? `${prefix}.${f.j}` : f.j;
      if (pick(f, prefix)) out.push(path);
      if (facts.messages[f.t] && !seen.includes(f.t)) walk(f.t, path, [...seen, f.t]);
    }
  };
  walk(message, "", [message]);
  return out;
}

const stringy = (f: FactField) => ["string", "bytes"].includes(f.t) && !f.map;

/** Where each resource type is served: the generated kind's group, name and plural, by Google's type. */
export type KindsByType = ReadonlyMap<string, Omit<GoogleRef, "field" | "list" | "type">>;

/** A name pattern as a template: `projects/{project}/locations/{location}/clusters/{cluster}` → `projects/*\/locations/*\/clusters/*`. */
const templateOfPattern = (pattern: string) => pattern.replace(/\{[^}]+\}/g, "*");

/**
 * The references of a kind: its string fields with a `google.api.resource_reference` to a type a generated
 * kind serves — at the top, or below it in the same nested position (through objects and lists of them,
 * within the CRD's object depth, never through a map or a recursive type) — and an explicit `parent` whose
 * template exactly one generated kind's pattern is.
 */
function refsOf(
  b: SpecBuilder,
  message: string,
  properties: Record<string, AwsccProp>,
  parent: GoogleParent,
  byType: KindsByType,
  byTemplate: ReadonlyMap<string, string[]>,
  secrets: readonly string[],
): GoogleRef[] {
  const out: GoogleRef[] = [];
  const takenAt = new Map<string, Set<string>>();
  const add = (at: string, siblings: readonly string[], field: string, type: string, list: boolean) => {
    const to = byType.get(type);
    if (!to) return;
    const taken = takenAt.get(at) ?? new Set(siblings);
    takenAt.set(at, taken);
    const base = list ? field.replace(/s$/, "") : field;
    const [ref, sel] = [list ? `${base}Refs` : `${base}Ref`, `${base}Selector`];
    if (taken.has(ref) || taken.has(sel)) return;
    taken.add(ref).add(sel);
    out.push({ field, ...(at ? { at } : {}), ...(list ? { list: true } : {}), type, ...to });
  };
  const top = Object.keys(properties);
  const walk = (msg: string, at: string, depth: number, seen: readonly string[]) => {
    const fields = b.fieldsOf(msg).filter((f) => (at ? !isOutput(f) : top.includes(f.j)));
    const siblings = fields.map((f) => f.j);
    for (const f of fields) {
      const path = at ? `${at}.${f.j}` : f.j;
      if (f.ref && stringy(f) && !secrets.includes(path)) add(at, siblings, f.j, f.ref, Boolean(f.rep));
      // Below: only where the CRD has a structural object (api/awscc/kind.ts expandsAt), never in a map.
      if (b.isMessage(f.t) && !f.map && depth < AWSCC_MAX_DEPTH && !seen.includes(f.t))
        walk(f.t, path, depth + 1, [...seen, f.t]);
    }
  };
  walk(message, "", 0, []);
  if (parent.inBody) {
    const to = Object.entries(PARENT_IN_BODY).find(([, x]) => x.parents.join("|") === parent.template);
    if (to?.[1].ref) add("", top, "parent", to[1].ref, false);
  } else if (parent.explicit) {
    const types = byTemplate.get(parent.template) ?? [];
    if (types.length === 1) add("", top, "parent", types[0] as string, false);
  }
  return out;
}

const camelOf = (x: string) => x.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const lowerFirst = (x: string) => x.charAt(0).toLowerCase() + x.slice(1);
const camelPlural = (k: string) =>
  /[^aeiou]y$/.test(k) ? `${k.slice(0, -1)}ies` : /(s|x|z|ch|sh)$/.test(k) ? `${k}es` : `${k}s`;

/**
 * The IAM service prefixes a resource's own names give: the host's first label (run), else the proto
 * package's name where the host's is not one (warehouse-visionai); without `admin` (bigtableadmin → bigtable);
 * then the packages enclosing its own (`bigquery` for google.cloud.bigquery.connection.v1), below googleapis'
 * namespace roots `google` and `google.cloud`.
 */
function iamServicesOwn(r: FactResource): string[] {
  const path = r.proto.split("/");
  const host = r.host.split(".")[0] as string;
  const svc = /^[a-z0-9]+$/.test(host) ? host : (path.at(-2) ?? host);
  const enclosing = path.slice(path[1] === "cloud" ? 2 : 1, -2).reverse();
  return [...new Set([svc, svc.replace(/admin$/, ""), path.at(-2) ?? svc, ...enclosing])];
}

/** The spellings of a resource's collection tried in its permission names, the derivation's first. */
function iamCollections(r: FactResource, collection: string): string[] {
  return r.family === "compute"
    ? [
        ...new Set([
          lowerFirst(r.service),
          lowerFirst(r.service.replace(/^(Region|Global|Zone)(?=[A-Z])/, "")),
        ]),
      ]
    : [
        ...new Set([
          collection,
          collection.toLowerCase(),
          lowerFirst(pluralOf(r.kind)),
          pluralOf(r.kind).toLowerCase(),
          // The message's plural in camelCase (IAM's `serviceAccountKeys` for ServiceAccountKey at `…/keys`).
          camelPlural(lowerFirst(r.kind)),
        ]),
      ];
}

/**
 * Per API host, the IAM service prefix Google's roles hold its collections under where that is not the
 * host's (translate.googleapis.com → cloudtranslate): infra/gcp/iam-prefix.ts. Compute's is `compute`.
 */
export function iamServicesByHost(
  resources: ReadonlyArray<{ r: FactResource; collection: string }>,
  known: ReadonlySet<string>,
): Map<string, string> {
  const apis = new Map<string, ApiCollections & { collections: string[][] }>();
  for (const { r, collection } of resources) {
    if (r.family === "compute") continue;
    const a = apis.get(r.host) ?? { api: r.host, standard: [], collections: [] };
    a.standard = [...new Set([...a.standard, ...iamServicesOwn(r)])];
    a.collections.push(iamCollections(r, collection));
    apis.set(r.host, a);
  }
  return iamServicesOf([...apis.values()], known);
}

/**
 * The IAM permissions the generic provider's calls of a kind need. Google names a permission
 * `service.resource.verb` (cloud.google.com/iam/docs/overview#permissions): the API's service name, the
 * resource's collection in lowerCamelCase (Compute: its service, `globalAddresses`) and the method's verb.
 * A derived name is kept where Google's predefined roles include it (`known`); a few APIs spell the parts
 * otherwise (`bigtable` for bigtableadmin, lowercase collections or the message's plural, Compute's regional
 * twins under the zonal name), so those spellings are tried, and only a name the roles confirm is taken.
 * Where none is held, the API's prefix read from the roles (`derived`: `cloudtranslate` for Translation) and
 * the one spelling of the collection the roles hold (case and number aside: `cloudtranslate.glossaryentries`)
 * are tried after the standard ones. A verb none confirms keeps the plain derivation and is listed as
 * unconfirmed, never silently.
 */
/**
 * Permissions Google names otherwise than `service.collection.verb` for a resource, as it documents them. A
 * TagBinding is made on both its sides: `resourcemanager.tagValueBindings.create` / `.delete` on the tag value
 * and `resourcemanager.hierarchyNodes.createTagBinding` / `deleteTagBinding` / `listTagBindings` on the project,
 * folder or organization (Google Cloud's "Tags overview": the Tag User role; each create or delete writes an
 * audit entry for each side). Taken only where the predefined roles include every name.
 */
const NAMED_PERMISSIONS: Record<string, Record<string, string[]>> = {
  [`${RM}/TagBinding`]: {
    create: ["resourcemanager.tagValueBindings.create", "resourcemanager.hierarchyNodes.createTagBinding"],
    delete: ["resourcemanager.tagValueBindings.delete", "resourcemanager.hierarchyNodes.deleteTagBinding"],
    list: ["resourcemanager.hierarchyNodes.listTagBindings"],
  },
};

export function permissionsOf(
  r: FactResource,
  collection: string,
  known: ReadonlySet<string>,
  derived?: string,
): { permissions: GoogleKindSpec["permissions"]; unconfirmed: string[] } {
  const own = iamServicesOwn(r);
  const svc = own[0] as string;
  const services = derived && !own.includes(derived) ? [...own, derived] : own;
  const resources = iamCollections(r, collection);
  const index = iamIndexOf(known);
  const unconfirmed: string[] = [];
  // Names Google documents for a type whose calls are not `<service>.<collection>.<verb>` (NAMED_PERMISSIONS),
  // where the roles hold them. Then the standard verb; then, where the RPC's verb is another (Spanner's
  // DropDatabase), that verb as Google's predefined roles name it (`spanner.databases.drop`): only a name
  // the roles hold is taken.
  const pick = (verb: string, h?: FactHttp): string[] => {
    const named = NAMED_PERMISSIONS[r.type]?.[verb];
    if (named?.every((x) => known.has(x))) return named;
    const rpcVerb = h?.rpc && /^[A-Z][a-z]+/.exec(h.rpc)?.[0]?.toLowerCase();
    for (const v of rpcVerb && rpcVerb !== verb ? [verb, rpcVerb] : [verb])
      for (const s of services) {
        for (const res of resources) if (known.has(`${s}.${res}.${v}`)) return [`${s}.${res}.${v}`];
        // Then the one spelling of the collection the roles hold under this prefix (case and number aside).
        const spelled = spelledByRoles(index, s, resources, v);
        if (spelled) return [spelled];
      }
    const plain = `${svc}.${resources[0]}.${verb}`;
    unconfirmed.push(plain);
    return [plain];
  };
  // Following an operation: Compute's scoped Operations, google.longrunning's `<service>.operations.get`.
  const ops = (lro: string | undefined) => {
    if (!lro) return [];
    const name =
      r.family === "compute"
        ? `compute.${lowerFirst(lro === "GlobalOrganizationOperations" ? "GlobalOperations" : lro)}.get`
        : services.map((s) => `${s}.operations.get`).find((x) => known.has(x));
    return name && known.has(name) ? [name] : [];
  };
  const permissions: GoogleKindSpec["permissions"] = {
    ...(r.create ? { create: [...pick("create", r.create), ...ops(r.create.lro)] } : {}),
    // A resource no GET of its name reads is read by listing its parent (listObserved).
    read: r.get ? pick("get", r.get) : pick("list"),
    ...(r.update
      ? {
          update: [
            ...pick("update", r.update),
            // Appending statements is its own RPC (UpdateDatabaseDdl → `spanner.databases.updateDdl`).
            ...(r.appendStatements?.rpc ? pick(lowerFirst(r.appendStatements.rpc.replace(r.kind, ""))) : []),
            ...ops(r.update.lro),
          ],
        }
      : {}),
    ...(r.delete ? { delete: [...pick("delete", r.delete), ...ops(r.delete.lro)] } : {}),
    // The batched drift check and the search for a create whose answer was lost list the parent (Compute:
    // the region / zone, or every scope at once through aggregatedList, which needs the same permission).
    ...(r.list ? { list: pick("list") } : {}),
  };
  return { permissions, unconfirmed: [...new Set(unconfirmed)] };
}

/** What a create of options' kind says of its secrets: Google answers them once, in the create's answer. */
function answerSecrets(options: readonly string[] | undefined, attributes: Record<string, AwsccProp>) {
  const keys = Object.entries(attributes)
    .filter(([, p]) => p.secret)
    .map(([k]) => k);
  if (!options || keys.length === 0) return "";
  return ` ${keys.join(", ")}: only in Google's answer to the create, published then to the connection Secret and kept there (connection keys are never removed while the resource lives); Google never answers it again, so an imported resource's Secret has none.`;
}

export function kindSpecOf(
  r: FactResource,
  facts: FactsBundle,
  group: string,
  kind: string,
  byType: KindsByType = new Map(),
  byTemplate: ReadonlyMap<string, string[]> = new Map(),
  known: ReadonlySet<string> = new Set(),
  moreRefs: readonly GoogleRef[] = [],
  sensitive?: SensitiveLabelsFact,
  iamServices: ReadonlyMap<string, string> = new Map(),
): GoogleKindSpec | { why: string } {
  const where = parentOf(r, sensitive);
  if ("why" in where) return where;
  const b = new SpecBuilder(facts);
  const fields = b.fieldsOf(r.message);
  const compute = r.family === "compute";
  const inBody = where.parent.inBody ? PARENT_IN_BODY[r.type] : undefined;
  // A parent in the body the proto marks OPTIONAL (Project's) may be left out: Google then makes it with none.
  if (inBody && fields.some((f) => f.j === "parent" && has(f, "OPTIONAL")))
    where.parent = { ...where.parent, optional: true };
  const properties: Record<string, AwsccProp> = {};
  const attributes: Record<string, AwsccProp> = {};
  // A create of options (no resource message in its request): the resource is Google's answer, all of it
  // server state; the spec is the request's options, sent only on create.
  const options =
    !compute &&
    r.create?.fields &&
    r.create.request &&
    !r.create.wrap &&
    !r.create.namedBy &&
    !r.create.statement
      ? r.create.fields
      : undefined;
  // Create-time inputs beside the resource in a create sent whole (Bigtable's CreateInstance: `clusters`
  // beside `instance`): spec fields beside the resource's, sent only in the create, immutable.
  // A PUT on the name whose request is not the resource (Pub/Sub's CreateSnapshot): its fields that are not the
  // resource's (`subscription`, `tags`) are such inputs, and the resource's fields it does not carry Google's.
  // A create naming the resource in a statement (Spanner's CreateDatabase): its other fields are such inputs.
  const inputs =
    !compute &&
    r.create?.fields &&
    r.create.request &&
    (r.create.wrap || r.create.namedBy === "path" || r.create.statement)
      ? r.create.fields
      : undefined;
  const onlyFromRequest = r.create?.resourceFields;
  for (const f of fields) {
    const serverSide =
      Boolean(options) ||
      isOutput(f) ||
      has(f, "IDENTIFIER") ||
      // The resource's own name, unless the caller names it there (Logging's LogMetric: a short id).
      (!compute && f.j === "name" && r.create?.namedBy !== "field") ||
      (onlyFromRequest !== undefined && !onlyFromRequest.includes(f.j)) ||
      (compute && FINGERPRINT.test(f.j)) ||
      // A resource's etag is computed by the server (AIP-154; TagKey's "always set in server responses"):
      // server state, never a desired value (in forProvider it would be late-initialized, then sent stale).
      (!compute && f.j === "etag" && stringy(f));
    if (serverSide) attributes[f.j] = b.prop(f);
    else properties[f.j] = b.prop(f);
  }
  // One Google fills itself names itself: its name is output only, the external name says which.
  if (compute && !properties.name && !(r.create === undefined && attributes.name))
    return { why: "Compute resource without a name field" };
  // An input the resource answers only as output (a Database's databaseDialect, encryptionConfig) is the same
  // field, set at create: the spec's, and what Google answers is compared with it.
  const echoed = (i: string) =>
    r.create?.statement !== undefined && attributes[i] !== undefined && properties[i] === undefined;
  if (inputs?.some((i) => (properties[i] || attributes[i]) && !echoed(i)))
    return {
      why: `its create's fields ${inputs.join(", ")} beside the resource share a name with its fields`,
    };
  const sentOnCreate = options ?? inputs;
  if (sentOnCreate)
    for (const f of b.fieldsOf(r.create?.request as string))
      if (sentOnCreate.includes(f.j))
        properties[f.j] = {
          ...b.prop(f),
          doc: `${f.doc ? `${f.doc} ` : ""}Sent only in the create's request (${r.create?.request?.split(".").at(-1)})${inputs ? `, beside the ${r.create?.wrap ?? (r.create?.statement ? `${r.create.statement} built from the id` : "resource's fields")}; recorded at create, ${f.j === r.appendStatements?.field ? `may only grow: statements appended later are applied by ${r.appendStatements.rpc ?? "its own method"} and recorded, an applied one never changed or removed` : "a change refused"}` : ""}.`,
        };
  if (sentOnCreate?.some((o) => !properties[o]))
    return { why: `its create's fields ${sentOnCreate.join(", ")} are not all in ${r.create?.request}` };
  // A create sent whole (`{accountId, serviceAccount}`): the id is a spec field beside the resource, sent only
  // on create and immutable (Google never answers it: the provider compares it with the one it created with);
  // Google names the resource, and its answer's name is the external name (a service account's: its email).
  const wrapId = !compute && r.create?.wrap && r.create.idParam ? camelOf(r.create.idParam) : undefined;
  if (wrapId && properties[wrapId]) return { why: `its create's id ${wrapId} is also a field of ${r.kind}` };
  if (wrapId)
    properties[wrapId] = {
      n: wrapId,
      s: { t: "string" },
      req: true,
      doc: `${r.create?.idDoc ? `${r.create.idDoc} ` : ""}Sent beside the resource on create (${r.create?.idParam}); Google names the resource. Immutable.`,
    };
  // The field a lost create answer is found again by must be set: without it a second create could duplicate.
  if (inBody?.uniqueIn && properties[inBody.uniqueIn])
    properties[inBody.uniqueIn] = { ...(properties[inBody.uniqueIn] as AwsccProp), req: true };
  const sensitiveMap = sensitive
    ? fields.find((f) => f.j === sensitive.map && f.map && f.t === "string")
    : undefined;
  if (sensitive && !sensitiveMap) return { why: `no ${sensitive.map} map for its sensitive labels` };
  const top = Object.keys(properties);
  const secrets = pathsWhere(b, facts, r.message, top, (f) => stringy(f) && isSecretName(f.j));
  // Credentials by key in a map: a `sensitiveLabels` object of Secret keys, merged into the map on the wire.
  if (sensitive) {
    b.defs.SensitiveLabels = { name: "SensitiveLabels", props: {} };
    for (const k of sensitive.keys) {
      (b.defs.SensitiveLabels as AwsccObjectDef).props[k.name] = {
        n: k.name,
        s: { t: "string" },
        doc: `${k.doc ?? k.name} Sent as ${sensitive.map}.${k.key}; Google answers it obfuscated, so it is never compared.`,
      };
      secrets.push(`sensitiveLabels.${k.name}`);
    }
    properties.sensitiveLabels = {
      n: "sensitiveLabels",
      s: { t: "ref", ref: "SensitiveLabels" },
      doc: `The keys of ${sensitive.map} that are credentials (Google's Magic Modules: sensitive_labels), each read from a Secret key and written into ${sensitive.map} on the wire; ${sensitive.map} itself must not hold them.`,
    };
  }
  const writeOnly = pathsWhere(b, facts, r.message, top, (f) => has(f, "INPUT_ONLY")).filter(
    (p) => !secrets.includes(p),
  );
  const immutable = [
    ...(options ? [] : pathsWhere(b, facts, r.message, top, (f) => has(f, "IMMUTABLE"))),
    ...(wrapId ? [wrapId] : []),
    ...(sentOnCreate ?? []),
  ];
  // No update method: nothing can change after create, and the engine says so instead of calling.
  const createOnly = r.update ? immutable : top.filter((k) => !(compute && k === "name"));
  // A secret the cloud answers with: at the top, the connection Secret's (never atProvider); deeper, left out.
  for (const [k, p] of Object.entries(attributes))
    if (p.s.t === "string" && isSecretName(k)) (attributes[k] as AwsccProp).secret = true;
  // A secret only a create's answer holds must be in that answer, not in an operation a later reconcile reads.
  if (options && r.create?.lro && Object.values(attributes).some((p) => p.secret))
    return { why: "a create of options that answers a secret through a long-running operation" };
  const attributeSecrets = pathsWhere(
    b,
    facts,
    r.message,
    Object.keys(attributes),
    (f) => stringy(f) && isSecretName(f.j),
  ).filter((p) => p.includes("."));
  // The labels map: `labels`, or Monitoring's `userLabels` where there is no `labels`.
  const labelMap = (j: string) => fields.find((f) => f.j === j && f.map && f.t === "string" && !isOutput(f));
  // Where `labels` is the configuration (credentials among it), `userLabels` is the resource's own labels.
  const labels = (sensitiveMap ? undefined : labelMap("labels")) ?? labelMap("userLabels");
  const idParam = r.create?.idParam;
  // Made by Google: the external name is its id (or full name) within the parent, or nothing for a singleton.
  const externalName =
    compute || !r.create || (idParam && !wrapId) || inBody?.idField || r.create.namedBy || r.create.statement
      ? "fromAnnotation"
      : "providerChosen";
  const refs = [
    ...refsOf(b, r.message, properties, where.parent, byType, byTemplate, secrets),
    ...moreRefs.filter((x) => !secrets.includes(x.at ? `${x.at}.${x.field}` : x.field)),
  ];
  const iam = permissionsOf(r, where.collection, known, iamServices.get(r.host));
  // A parent under a project written `projects/<id>/…` is compared with `projects/<number>/…` through
  // Resource Manager's projects.get (the provider's home and #asWritten): reading the project is needed too.
  const projectGet = "resourcemanager.projects.get";
  const underAProject = where.parent.template.split("|").some((t) => t.startsWith("projects/*"));
  if (where.parent.explicit && !compute && underAProject && known.has(projectGet))
    iam.permissions.read = [...(iam.permissions.read ?? []), projectGet];
  return {
    v: GOOGLE_SPEC_VERSION,
    typeName: r.type,
    group,
    kind,
    plural: pluralOf(kind),
    description: `${r.type}, from ${r.proto} (${r.service}), reconciled by the generic ${compute ? "Compute" : "resource-oriented"} provider.${answerSecrets(options, attributes)}`,
    properties,
    attributes,
    defs: b.defs,
    primaryIdentifier: ["name"],
    externalName,
    ...(compute || r.create?.namedBy === "field"
      ? { identifierField: "name" }
      : inBody?.idField
        ? { identifierField: inBody.idField }
        : {}),
    references: [],
    createOnly: createOnly.filter((p) => !secrets.includes(p)),
    writeOnly,
    secrets,
    attributeSecrets,
    permissions: iam.permissions,
    google: {
      family: r.family,
      api: r.api,
      version: r.version,
      host: r.host,
      proto: r.proto,
      service: r.service,
      ...(r.create
        ? {
            create: (({ idDoc: _, request: _r, fields: _f, resourceFields: _s, ...c }) => ({
              ...c,
              p: asParentPath(c.p),
            }))(r.create),
          }
        : {}),
      ...(r.nameField ? { nameField: r.nameField } : {}),
      ...(where.singleton ? { singleton: true } : {}),
      ...(wrapId ? { createId: wrapId } : {}),
      ...(sentOnCreate ? { createFields: sentOnCreate } : {}),
      ...(r.get ? { get: r.get } : {}),
      ...(r.listObserved ? { listObserved: r.listObserved } : {}),
      ...(r.update ? { update: r.update } : {}),
      ...(r.appendStatements ? { appendStatements: r.appendStatements } : {}),
      ...(r.delete ? { delete: r.delete } : {}),
      ...(r.list ? { list: { ...r.list, p: asParentPath(r.list.p) } } : {}),
      ...(r.pattern ? { pattern: r.pattern } : {}),
      collection: where.collection,
      parent: where.parent,
      ...(labels ? { labels: labels.j } : {}),
      ...(inBody?.uniqueIn ? { uniqueIn: inBody.uniqueIn } : {}),
      ...(inBody?.softDelete ? { softDelete: inBody.softDelete } : {}),
      ...(sensitive
        ? {
            sensitiveLabels: {
              map: sensitive.map,
              keys: Object.fromEntries(sensitive.keys.map((k) => [k.name, k.key])),
            },
          }
        : {}),
      // A create of options says it: its fields are only the create's, and the resource has no update.
      immutableFromProtos: Boolean(options) || immutable.length > (wrapId ? 1 : 0) + (inputs?.length ?? 0),
      ...(refs.length > 0 ? { refs } : {}),
      ...(iam.unconfirmed.length > 0 ? { unconfirmedPermissions: iam.unconfirmed } : {}),
    },
  };
}

/**
 * The group of a resource: its host's name (`run.googleapis.com` → run.googleapis), or, where two proto
 * packages share a host (Dialogflow ES and CX), the package path (`google/cloud/dialogflow/cx/v3` →
 * dialogflowcx.googleapis).
 */
/**
 * Groups published while their package was its host's only one in the facts: they keep their name when the
 * host's next package enters (Spanner's instance admin, with the bundle re-extracted whole on 2026-11-27,
 * beside the database admin's Backup and BackupSchedule in `spanner.googleapis`).
 */
const PUBLISHED_GROUPS: Record<string, string> = { "google/spanner/admin/database/v1": "spanner" };

function groupsOf(resources: readonly FactResource[]): (r: FactResource) => string {
  const dirs = new Map<string, Set<string>>();
  for (const r of resources) dirs.set(r.host, (dirs.get(r.host) ?? new Set()).add(r.proto));
  return (r) =>
    PUBLISHED_GROUPS[r.proto]
      ? googleGroupOf(PUBLISHED_GROUPS[r.proto] as string)
      : (dirs.get(r.host)?.size ?? 0) > 1
        ? groupOfProto(r.proto)
        : googleGroupOf(r.api.replace(/[^a-z0-9]/g, ""));
}

/** The group of a proto package: `google/cloud/dialogflow/cx/v3` → dialogflowcx.googleapis. */
export function groupOfProto(proto: string): string {
  const parts = proto
    .replace(/^google\/(cloud\/)?/, "")
    .split("/")
    .slice(0, -1);
  return googleGroupOf(
    parts
      .join("")
      .toLowerCase()
      .replace(/[^a-z0-9]/g, ""),
  );
}

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const singularOf = (s: string) =>
  s.endsWith("ies") ? `${s.slice(0, -3)}y` : s.endsWith("sses") ? s.slice(0, -2) : s.replace(/s$/, "");

/** A second resource of one kind name in a group: its parent's collection tells them apart. */
function disambiguated(r: FactResource): string {
  const template =
    /\{parent=([^}]*)\}/.exec(r.create?.p ?? madeByGoogle(r.get?.p ?? "")?.path ?? "")?.[1] ?? "";
  const cols = template.split("/").filter((_, i) => i % 2 === 0);
  const own = cols.filter((c) => !["projects", "locations", "regions", "zones"].includes(c));
  const pick = own.at(-1) ?? cols[0] ?? "Other";
  return `${pascal(singularOf(pick))}${r.kind}`;
}

function stampOf(): string {
  const inputs = [
    import.meta.filename,
    join(ROOT, "shared/api/googleapis/spec.ts"),
    join(ROOT, "infra/gen-awscc.ts"),
    join(ROOT, "infra/gcp/compute-refs.ts"),
    join(ROOT, "infra/gcp/iam-prefix.ts"),
    FACTS_FILE,
    IAM_FILE,
    REFS_FILE,
    SENSITIVE_FILE,
    API_NAMES_FILE,
  ].map((f) => readFileSync(f));
  const hash = createHash("sha256");
  for (const x of inputs) hash.update(x).update("\0");
  return `${GENERATOR_VERSION}/${hash.digest("hex").slice(0, 16)}`;
}

export function gcpIsCurrent(dir = GCP_GEN_DIR): boolean {
  const catalog = join(dir, "catalog.json");
  if (!existsSync(catalog)) return false;
  try {
    return (JSON.parse(readFileSync(catalog, "utf8")) as GoogleCatalog).stamp === stampOf();
  } catch {
    return false;
  }
}

export interface GenerateResult {
  dir: string;
  kinds: number;
  resource: number;
  compute: number;
  apis: number;
  skipped: number;
  ms: number;
  current: boolean;
}

export function generateGcp(opts: { dir?: string; force?: boolean } = {}): GenerateResult {
  const dir = opts.dir ?? GCP_GEN_DIR;
  const started = performance.now();
  if (!opts.force && gcpIsCurrent(dir)) {
    const c = JSON.parse(readFileSync(join(dir, "catalog.json"), "utf8")) as GoogleCatalog;
    return { ...countsOf(c), dir, ms: 0, current: true };
  }
  const facts = loadFacts();
  const iam = loadIam();
  const known = new Set(iam.permissions);
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const catalog: GoogleCatalog = {
    source: facts.origin,
    iamSource: iam.origin,
    generator: GENERATOR_VERSION,
    stamp: stampOf(),
    kinds: [],
    skipped: [],
  };
  const taken = new Set<string>();
  const groupOf = groupsOf(facts.resources);
  const sensitiveBundle = loadSensitive();
  const sensitiveOf = new Map(sensitiveBundle.resources.map((x) => [x.type, x]));
  catalog.sensitiveSource = sensitiveBundle.origin;
  // Names first, so a reference can name the kind serving its type (one kind per type: Compute's regional
  // and global twins share a message, and the kind named after the message serves it).
  const named: Array<{ r: FactResource; group: string; kind: string }> = [];
  const collections: Array<{ r: FactResource; collection: string }> = [];
  for (const r of facts.resources) {
    const group = groupOf(r);
    let kind = r.kind;
    if (taken.has(`${group}/${kind}`)) kind = disambiguated(r);
    if (taken.has(`${group}/${kind}`)) {
      catalog.skipped.push({ typeName: r.type, why: `a second ${r.kind} in ${group} (${r.service})` });
      continue;
    }
    const where = parentOf(r, sensitiveOf.get(r.type));
    if ("why" in where) {
      catalog.skipped.push({ typeName: r.type, why: where.why });
      continue;
    }
    taken.add(`${group}/${kind}`);
    named.push({ r, group, kind });
    collections.push({ r, collection: where.collection });
  }
  // Where an API's IAM names are not its host's, the prefix Google's roles hold its collections under.
  const iamServices = iamServicesByHost(collections, known);
  const byType = new Map<string, Omit<GoogleRef, "field" | "list" | "type">>();
  const byTemplate = new Map<string, string[]>();
  for (const { r, group, kind } of named) {
    const own = r.family === "compute" ? kind === r.type.split("/")[1] : !byType.has(r.type);
    if (own) byType.set(r.type, { group, kind, plural: pluralOf(kind), family: r.family });
    if (r.pattern && r.family === "resource") {
      const t = templateOfPattern(r.pattern);
      if (!byTemplate.get(t)?.includes(r.type)) byTemplate.set(t, [...(byTemplate.get(t) ?? []), r.type]);
    }
  }
  // Compute's protos name no references: Config Connector's service mappings do (infra/gcp/compute-refs.ts).
  const refsBundle = loadRefs();
  const apiNames = loadApiNames();
  catalog.apiNamesSource = apiNames.origin;
  const computeRefs = computeRefsOf({
    handWritten: HAND_WRITTEN_TARGETS,
    refs: refsBundle,
    facts,
    apiNames,
    named,
    maxDepth: AWSCC_MAX_DEPTH,
    inForProvider: (_, path) =>
      path.every((f) => !isOutput(f)) &&
      !(path.length === 1 && (FINGERPRINT.test(path[0]?.j ?? "") || path[0]?.j === "name")),
  });
  catalog.refsSource = refsBundle.origin;
  catalog.unmappedRefs = computeRefs.unmapped;
  // Compute's AggregatedList per collection (`…/aggregated/addresses`): how `driftless import` lists a
  // regional or zonal kind, whose own List is per region or zone.
  const aggregatedOf = new Map(
    facts.resources.flatMap((r) =>
      r.family === "compute" && r.aggregated
        ? [[r.aggregated.p.split("/").at(-1), r.aggregated] as const]
        : [],
    ),
  );
  // A Compute child's parent by path variable: the kind whose get path its insert path continues.
  const byGetPath = new Map(
    named
      .filter((n) => n.r.family === "compute" && n.r.get)
      .map((n) => [(n.r.get?.p ?? "").replace(/\{[^}]+\}$/, "{}"), n] as const),
  );
  const parentRefsOf = (r: FactResource): GoogleRef[] => {
    const where = parentOf(r);
    if ("why" in where) return [];
    return (where.parent.vars ?? []).flatMap(({ v, field }) => {
      const upTo = where.parent.template.slice(0, where.parent.template.indexOf(`{${v}}`));
      const to = byGetPath.get(`${upTo}{}`);
      return to
        ? [
            {
              field,
              type: to.r.type,
              group: to.group,
              kind: to.kind,
              plural: pluralOf(to.kind),
              family: "compute" as const,
              from: "name",
            },
          ]
        : [];
    });
  };
  for (const { r, group, kind } of named) {
    const more = [...(computeRefs.byKind.get(`${group}/${kind}`) ?? []), ...parentRefsOf(r)];
    const spec = kindSpecOf(
      r,
      facts,
      group,
      kind,
      byType,
      byTemplate,
      known,
      more,
      sensitiveOf.get(r.type),
      iamServices,
    );
    if ("why" in spec) {
      catalog.skipped.push({ typeName: r.type, why: spec.why });
      continue;
    }
    const aggregated = aggregatedOf.get(spec.google.collection);
    if (spec.google.family === "compute" && spec.google.parent.home.length > 0 && aggregated)
      spec.google.aggregated = { m: aggregated.m, p: aggregated.p };
    const file = `kinds/${group.split(".")[0]}/${kind}.json`;
    mkdirSync(dirname(join(tmp, file)), { recursive: true });
    writeFileSync(join(tmp, file), JSON.stringify(spec));
    catalog.kinds.push({ typeName: spec.typeName, group, kind, plural: spec.plural, family: r.family, file });
  }
  writeFileSync(join(tmp, "catalog.json"), JSON.stringify(catalog));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dirname(dir), { recursive: true });
  renameSync(tmp, dir);
  return { ...countsOf(catalog), dir, ms: Math.round(performance.now() - started), current: false };
}

function countsOf(c: GoogleCatalog) {
  const compute = c.kinds.filter((k) => k.family === "compute").length;
  return {
    kinds: c.kinds.length,
    resource: c.kinds.length - compute,
    compute,
    apis: new Set(c.kinds.map((k) => k.group)).size,
    skipped: c.skipped.length,
  };
}

if (import.meta.main) {
  const r = generateGcp({ force: process.argv.includes("--force") });
  process.stdout.write(
    `${r.current ? "current" : `generated in ${r.ms} ms`}: ${r.kinds} Google Cloud kinds (${r.resource} resource-oriented, ${r.compute} Compute) in ${r.apis} API groups, ${r.skipped} resources skipped (see catalog.json) → ${r.dir}\n`,
  );
}
