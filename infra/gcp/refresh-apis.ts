// Extracts the facts of every resource-oriented Google Cloud resource and every Compute resource from a
// checkout of Google's protos (github.com/googleapis/googleapis) into infra/gcp/google-apis.json.gz
// (format: facts.ts), then regenerates the kinds. Read with protobufjs, the parser Google's own Node
// clients (google-gax) load these protos with.
//
//   npm run refresh:gcp-apis                        clones googleapis (depth 1) into a temporary directory
//   npm run refresh:gcp-apis -- --from DIR          a checkout (a git work tree: its commit and date are read)
//   npm run refresh:gcp-apis -- --from DIR --commit SHA --committed YYYY-MM-DD   a copy without .git
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import protobuf from "protobufjs";
import {
  type Behaviour,
  FACTS_FILE,
  FACTS_FORMAT,
  type FactField,
  type FactHttp,
  type FactMessage,
  type FactNotTaken,
  type FactResource,
  type FactsBundle,
  loadFacts,
  type NotTakenWhy,
} from "./facts.ts";

type PType = protobuf.Type;
type PMethod = protobuf.Method;
type Opt = Record<string, unknown>;

const GOOGLEAPIS = "https://github.com/googleapis/googleapis";
const PROTOBUF_DIR = join(createRequire(import.meta.url).resolve("protobufjs/package.json"), "..");

const SCALARS: Record<string, string> = {
  string: "string",
  bool: "boolean",
  double: "number",
  float: "number",
  int32: "integer",
  uint32: "integer",
  sint32: "integer",
  fixed32: "integer",
  sfixed32: "integer",
  // proto3 JSON writes 64-bit integers as decimal strings.
  int64: "int64",
  uint64: "int64",
  sint64: "int64",
  fixed64: "int64",
  sfixed64: "int64",
  bytes: "bytes",
};
const WELL_KNOWN: Record<string, string> = {
  "google.protobuf.Timestamp": "string",
  "google.protobuf.Duration": "string",
  "google.protobuf.FieldMask": "string",
  "google.protobuf.StringValue": "string",
  "google.protobuf.BoolValue": "boolean",
  "google.protobuf.Int32Value": "integer",
  "google.protobuf.UInt32Value": "integer",
  "google.protobuf.Int64Value": "int64",
  "google.protobuf.UInt64Value": "int64",
  "google.protobuf.DoubleValue": "number",
  "google.protobuf.FloatValue": "number",
  "google.protobuf.BytesValue": "bytes",
  "google.protobuf.Struct": "json",
  "google.protobuf.Value": "json",
  "google.protobuf.ListValue": "json",
  "google.protobuf.Any": "json",
  "google.protobuf.Empty": "json",
};
const BEHAVIOURS = new Set(["REQUIRED", "OUTPUT_ONLY", "IMMUTABLE", "INPUT_ONLY", "IDENTIFIER", "OPTIONAL"]);

const fqn = (t: protobuf.ReflectionObject) => t.fullName.replace(/^\./, "");
const jsonName = (f: protobuf.Field) =>
  (f.options?.json_name as string | undefined) ??
  f.name.replace(/_([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase());

/** The first sentence of a proto comment, short (CRDs with whole docs cost API-server memory). */
function shortDoc(c: string | null | undefined, max = 160): string | undefined {
  if (!c) return undefined;
  const text = c.replace(/\s+/g, " ").trim();
  const first = /^.*?[.!?](\s|$)/.exec(text)?.[0]?.trim() ?? text;
  return first.length <= max ? first : `${first.slice(0, max - 1).replace(/\s+\S*$/, "")}…`;
}

const parsed = (o: protobuf.ReflectionObject, name: string): unknown[] =>
  ((o.parsedOptions ?? []) as Opt[]).filter((x) => name in x).map((x) => x[name]);

function httpOf(m: PMethod): FactHttp | undefined {
  const h = parsed(m, "(google.api.http)")[0] as Opt | undefined;
  if (!h) return undefined;
  for (const verb of ["get", "post", "patch", "put", "delete"] as const) {
    const p = h[verb];
    if (typeof p === "string")
      return { m: verb, p, ...(typeof h.body === "string" && h.body ? { body: h.body } : {}) };
  }
  return undefined;
}

class Collector {
  readonly messages: Record<string, FactMessage> = {};
  readonly compute: boolean;
  constructor(compute: boolean) {
    this.compute = compute;
  }

  field(f: protobuf.Field): FactField {
    f.resolve();
    const out: FactField = { j: jsonName(f), t: "json" };
    const rt = f.resolvedType;
    if (SCALARS[f.type]) out.t = SCALARS[f.type] as string;
    else if (rt instanceof protobuf.Enum) {
      out.t = "enum";
      const vals = Object.keys(rt.values).filter((v) => !/UNSPECIFIED$|^UNDEFINED_/.test(v));
      if (vals.length <= 40) out.e = vals;
    } else if (rt instanceof protobuf.Type) {
      const name = fqn(rt);
      out.t = WELL_KNOWN[name] ?? name;
      if (!WELL_KNOWN[name]) this.message(rt);
    }
    if (f.repeated) out.rep = true;
    if (f instanceof protobuf.MapField) out.map = true;
    const b = parsed(f, "(google.api.field_behavior)")
      .flat()
      .filter((x): x is Behaviour => typeof x === "string" && BEHAVIOURS.has(x));
    // Compute's protos carry no field_behavior: its own docs mark output fields "[Output Only]" / "Output only.".
    if (this.compute && /^\s*(\[Output Only\]|Output only\.)/i.test(f.comment ?? "")) b.push("OUTPUT_ONLY");
    if (b.length > 0) out.b = [...new Set(b)];
    const ref = (parsed(f, "(google.api.resource_reference)")[0] as Opt | undefined)?.type;
    if (typeof ref === "string" && ref.includes("/") && out.t === "string") out.ref = ref;
    const doc = shortDoc(f.comment);
    if (doc) out.doc = doc;
    return out;
  }

  message(t: PType): string {
    const name = fqn(t);
    if (this.messages[name]) return name;
    const msg: FactMessage = { fields: [] };
    this.messages[name] = msg;
    for (const f of t.fieldsArray) msg.fields.push(this.field(f));
    return name;
  }
}

const lroOf = (m: PMethod, compute: boolean): FactHttp["lro"] | undefined => {
  if (compute) {
    const svc = parsed(m, "(google.cloud.operation_service)")[0];
    return typeof svc === "string" ? (svc as FactHttp["lro"]) : undefined;
  }
  return m.resolvedResponseType && fqn(m.resolvedResponseType) === "google.longrunning.Operation"
    ? "longrunning"
    : undefined;
};

const withLro = (h: FactHttp, m: PMethod, compute: boolean): FactHttp => {
  const lro = lroOf(m, compute);
  return withRpc(lro ? { ...h, lro } : h, m);
};

/**
 * The RPC's name where its verb is not one of AIP's standard five (Spanner's DropDatabase, Compute's Insert and
 * Patch): Google's IAM permission may be named by it (`spanner.databases.drop`, `compute.interconnectGroups.patch`).
 */
const withRpc = (h: FactHttp, m: PMethod): FactHttp =>
  /^(Create|Get|Update|Delete|List)(?![a-z])/.test(m.name) ? h : { ...h, rpc: m.name };

/** `/v2/{parent=projects/*\/locations/*}/services` → the template inside the variable `parent`. */
const templateOf = (path: string, variable: string) =>
  new RegExp(`\\{${variable.replace(/\./g, "\\.")}=([^}]*)\\}`).exec(path)?.[1];

function patternFor(resource: Opt, parentTemplate: string | undefined): string | undefined {
  const patterns = ([] as unknown[])
    .concat(resource.pattern ?? [])
    .filter((p): p is string => typeof p === "string");
  if (!parentTemplate) return patterns[0];
  const want = parentTemplate.split("/");
  return patterns.find((p) => {
    const parts = p.split("/").slice(0, -2);
    return (
      parts.length === want.length &&
      parts.every((x, i) => want[i] === "*" || want[i] === "**" || x === want[i])
    );
  });
}

function apiOf(host: string) {
  return host.replace(/\.googleapis\.com$/, "").replace(/[^a-z0-9]/g, "");
}

/**
 * The field holding the resource in a create request sent whole (`body: "*"`): the request's only field of a
 * message with `google.api.resource`, when every other field is a path variable, the `*_id` or `request_id`.
 */
function wrappedResource(req: PType | null | undefined, path: string): protobuf.Field | undefined {
  if (!req) return undefined;
  const bound = (f: protobuf.Field) => new RegExp(`\\{${f.name}[=}]`).test(path);
  const isResource = (f: protobuf.Field) => {
    f.resolve();
    return (
      f.resolvedType instanceof protobuf.Type && parsed(f.resolvedType, "(google.api.resource)").length > 0
    );
  };
  const resources = req.fieldsArray.filter(isResource);
  const rest = req.fieldsArray.filter((f) => !isResource(f) && !bound(f));
  const ids = rest.filter((f) => f.name.endsWith("_id") && f.type === "string");
  if (resources.length !== 1 || rest.some((f) => !ids.includes(f))) return undefined;
  return resources[0];
}

/** Request fields never sent as the kind's own: AIP-155's idempotency key and AIP-163's dry run. */
const NOT_SPEC = new Set(["request_id", "validate_only"]);
/**
 * Fields of a create's request that steer the request, not the resource made: never spec fields. Beside
 * NOT_SPEC, Cloud Tasks' `response_view` (which of the task's fields the answer holds) and Content
 * Warehouse's `request_metadata` (who asks, for its access checks), and any field mask (what of the body to
 * take).
 */
const REQUEST_CONTROLS = new Set([...NOT_SPEC, "response_view", "request_metadata"]);
const isControl = (f: protobuf.Field) =>
  REQUEST_CONTROLS.has(f.name) ||
  f.type === "google.protobuf.FieldMask" ||
  f.type === ".google.protobuf.FieldMask";

/**
 * A create whose whole request is the body and holds one resource message beside other fields (Bigtable's
 * CreateInstance: `{instanceId, instance, clusters}`; CreateTable: `{tableId, table, initialSplits}`): the
 * resource's field, its id (one `*_id` string not in the path, if any) and the create-time inputs beside it,
 * the request controls left out; or why not (more than one resource message, more than one id).
 */
function besideCreate(
  req: PType,
  path: string,
  create: string,
): { resource: protobuf.Field; inputs: protobuf.Field[] } | { why: string } {
  const bound = (f: protobuf.Field) => new RegExp(`\\{${f.name}[=}]`).test(path);
  // The resource is the one single field of a resource message; a map or list of them (Bigtable's clusters,
  // made with the instance) is an input beside it.
  const inner = req.fieldsArray.filter(
    (f) => isResourceMessage(f.resolve().resolvedType) && !f.repeated && !(f instanceof protobuf.MapField),
  );
  const rest = req.fieldsArray.filter((f) => !inner.includes(f) && !bound(f) && !isControl(f));
  const ids = rest.filter((f) => f.name.endsWith("_id") && f.type === "string");
  if (inner.length !== 1) return { why: `${inner.length} resource messages in the request` };
  if (ids.length > 1) return { why: `${ids.length} ids in the request` };
  // Another way to make a resource (Merchant's CreateAndConfigureAccount) is not its create.
  const made = (inner[0] as protobuf.Field).resolvedType as PType;
  if (create !== `Create${made.name}`) return { why: `${create} is not Create${made.name}` };
  return { resource: inner[0] as protobuf.Field, inputs: rest.filter((f) => !ids.includes(f)) };
}

const isResourceMessage = (t: unknown): t is PType =>
  t instanceof protobuf.Type && parsed(t, "(google.api.resource)").length > 0;

/** The message a create answers: its response, or a long-running one's `operation_info.response_type`. */
function answerOf(m: PMethod): PType | undefined {
  const res = m.resolvedResponseType;
  if (!res || fqn(res) !== "google.longrunning.Operation") return res ?? undefined;
  const info = parsed(m, "(google.longrunning.operation_info)")[0] as Opt | undefined;
  const name = typeof info?.response_type === "string" ? info.response_type : undefined;
  if (!name) return undefined;
  try {
    const t = (m.parent as protobuf.Namespace).lookupTypeOrEnum(name);
    return t instanceof protobuf.Type ? t : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where the answer holds a request field's message deeper down (DLP's CreateStoredInfoType `config`, a
 * StoredInfoTypeConfig, is the resource's only at `current_version.config` and `pending_versions[].config`):
 * said in the census, since no annotation ties the request's field to either place.
 */
function heldAt(f: protobuf.Field, answer: PType): string {
  const t = f.resolvedType;
  if (!(t instanceof protobuf.Type)) return "";
  const at: string[] = [];
  for (const a of answer.fieldsArray) {
    const inner = a.resolve().resolvedType;
    if (!(inner instanceof protobuf.Type)) continue;
    for (const b of inner.fieldsArray)
      if (b.resolve().resolvedType === t) at.push(`${a.name}${a.repeated ? "[]" : ""}.${b.name}`);
  }
  return at.length > 0
    ? `; the resource holds ${fqn(t).split(".").at(-1)} only inside ${at.join(", ")}, which no annotation ties to the request's ${f.name} (the current and pending versions)`
    : "";
}

/**
 * A create that names its resource inside a statement (Spanner's CreateDatabase: `{parent, create_statement,
 * extra_statements, encryption_config, database_dialect, proto_descriptors}`, body `*`): the request holds no
 * resource message, the create is `Create<R>` answering R, has no `*_id`, and its REQUIRED string
 * `create_statement` says in its comment that it specifies the ID ("A `CREATE DATABASE` statement, which
 * specifies the ID of the new database"). The statement is built from the caller's id (the provider's
 * createStatementOf); every other field but the path variables and request controls is a create-time input.
 */
function statementCreate(
  req: PType | null | undefined,
  path: string,
  answer: PType | undefined,
  create: string,
): { statement: protobuf.Field; inputs: protobuf.Field[] } | undefined {
  const statement = req?.fields.create_statement;
  if (!req || !statement || statement.type !== "string" || statement.repeated) return undefined;
  if (!isResourceMessage(answer) || create !== `Create${answer.name}`) return undefined;
  if (!parsed(statement, "(google.api.field_behavior)").flat().includes("REQUIRED")) return undefined;
  if (!/\bspecifies the ID\b/i.test(statement.comment ?? "")) return undefined;
  const bound = (f: protobuf.Field) => new RegExp(`\\{${f.name}[=}]`).test(path);
  const rest = req.fieldsArray.filter((f) => f !== statement && !bound(f) && !isControl(f));
  if (rest.some((f) => f.name.endsWith("_id") && f.type === "string")) return undefined;
  return { statement, inputs: rest };
}

/**
 * Statements appended to a resource made by a statement (Spanner's UpdateDatabaseDdl: `PATCH
 * /v1/{database=…/databases/*}/ddl`, body `*`, `{database, statements, operation_id}`, long-running): a method
 * whose one variable binds the get's full name followed by one more segment, whose request holds a REQUIRED
 * `repeated string statements` and a string `operation_id`, beside a create input `extra_statements` (repeated
 * string) they extend. The GET of the same path (GetDatabaseDdl) reads them.
 */
function appendStatementsOf(
  methods: PMethod[],
  getPath: string,
  inputs: protobuf.Field[],
): (FactHttp & { field: string; read?: FactHttp }) | undefined {
  const extra = inputs.find((f) => f.name === "extra_statements" && f.repeated && f.type === "string");
  const name = nameBinding(getPath)?.t;
  if (!extra || !name) return undefined;
  const onName = (h: FactHttp | undefined) => {
    const m = h && /^(.*\{[\w.]+=([^}]*)\})\/([a-zA-Z]+)$/.exec(h.p);
    return m?.[2] === name;
  };
  const found = methods.filter((m) => {
    const h = httpOf(m);
    const req = m.resolvedRequestType;
    const statements = req?.fields.statements;
    const opId = req?.fields.operation_id;
    return (
      (h?.m === "patch" || h?.m === "post") &&
      onName(h) &&
      h.body === "*" &&
      statements?.repeated === true &&
      statements.type === "string" &&
      parsed(statements, "(google.api.field_behavior)").flat().includes("REQUIRED") &&
      opId?.type === "string" &&
      !opId.repeated
    );
  });
  const [append] = found;
  const http = append && httpOf(append);
  if (!append || !http || found.length !== 1) return undefined;
  const read = methods.map(httpOf).find((h) => h?.m === "get" && h.p === http.p);
  // Its RPC's name always: the IAM verb is the RPC's (`spanner.databases.updateDdl`), not `update`.
  const lro = withLro(http, append, false);
  return { ...lro, rpc: append.name, field: jsonName(extra), ...(read ? { read } : {}) };
}

/**
 * A create whose whole request is the body and holds no resource message (IAM Admin's
 * CreateServiceAccountKey: `{name, private_key_type, key_algorithm}`), where that is sound: it answers a
 * resource message, and every field but the path variables, `request_id` and `validate_only` is a plain
 * option (a string, number, bool or enum, not a list, map, message or bytes) the kind's spec can hold.
 * The fields, or why not.
 */
function optionsCreate(
  req: PType | null | undefined,
  path: string,
  answer: PType | undefined,
  create: string,
): { fields: protobuf.Field[] } | { why: string } {
  if (!req) return { why: "no request message" };
  if (!isResourceMessage(answer))
    return { why: `its answer ${answer ? fqn(answer) : "(none)"} is not a resource message` };
  // Another way to make a resource (Bigtable's CreateTableFromSnapshot) is not its create.
  if (create !== `Create${answer.name}`) return { why: `${create} is not Create${answer.name}` };
  const bound = (f: protobuf.Field) => new RegExp(`\\{${f.name}[=}]`).test(path);
  const fields = req.fieldsArray.filter((f) => !bound(f) && !NOT_SPEC.has(f.name));
  for (const f of fields) {
    f.resolve();
    const plain = SCALARS[f.type] && f.type !== "bytes";
    if (
      f.repeated ||
      f instanceof protobuf.MapField ||
      (!plain && !(f.resolvedType instanceof protobuf.Enum))
    )
      return {
        why: `its field ${f.name} is not a plain option (a list, map, message or bytes)${heldAt(f, answer)}`,
      };
  }
  return { fields };
}

/**
 * The one variable of a path that ends in it (`/v2/{metric_name=projects/*\/metrics/*}` → `metric_name`,
 * `projects/*\/metrics/*`): a method on one resource by its full name. A custom method (`…:fetch`), a path
 * with more variables or a collection after the variable is none.
 */
export function nameBinding(p: string): { v: string; t: string } | undefined {
  const vars = [...p.matchAll(/\{([\w.]+)(?:=([^}]*))?\}/g)];
  if (vars.length !== 1 || !p.endsWith("}")) return undefined;
  const [, v, t] = vars[0] as RegExpMatchArray;
  return v && t ? { v, t } : undefined;
}

/** A name template fits one of the resource's patterns: segment by segment, `*` for any value. */
function fitsResource(template: string, resource: Opt): boolean {
  const want = template.split("/");
  return ([] as unknown[])
    .concat(resource.pattern ?? [])
    .filter((p): p is string => typeof p === "string")
    .some((p) => {
      const parts = p.split("/");
      // `**` (Dataplex's entries) takes the rest; a pattern's `{variable}` any one literal (`locations/global`).
      const deep = want.at(-1) === "**";
      return (
        (deep ? parts.length >= want.length : parts.length === want.length) &&
        want.every((w, i) => w === "*" || w === "**" || w === parts[i] || /^\{/.test(parts[i] ?? ""))
      );
    });
}

/**
 * The method of a service that does `verb` to one resource by its full name, recognised by what it is, not
 * what it is called (Logging's GetBucket answering a LogBucket): its HTTP binding is `verb` on one variable
 * whose template fits the resource's pattern (`same`: exactly that template), and `fits` says its types do.
 * The conventional name (`Get<R>`) first; else the only such method; several: which, for the census.
 */
function byBinding(
  methods: readonly PMethod[],
  verbs: readonly FactHttp["m"][],
  named: readonly string[],
  resource: Opt,
  fits: (m: PMethod) => boolean,
  same?: string,
  /** The template of the name the create makes, which picks one of several. */
  made?: string,
): { m: PMethod; http: FactHttp; v: string } | { why: string } {
  const on = (m: PMethod) => {
    const http = httpOf(m);
    const b = http && verbs.includes(http.m) ? nameBinding(http.p) : undefined;
    return http && b && fits(m) ? { m, http, v: b.v, t: b.t } : undefined;
  };
  // The conventional name with a fitting binding and types is the method, as it always was.
  const conventional = methods
    .filter((m) => named.includes(m.name))
    .map(on)
    .find((x) => x !== undefined);
  if (conventional) return conventional;
  const found = methods.flatMap((m) => {
    const x = on(m);
    return x && (same ? x.t === same : fitsResource(x.t, resource)) ? [x] : [];
  });
  if (found.length === 1) return found[0] as { m: PMethod; http: FactHttp; v: string };
  // Several: the one on the name the create makes (`<parent>/<collection>/*`: GKE Hub's scope RBACRoleBinding
  // beside the membership one).
  const onMade = found.filter((x) => x.t === made);
  if (onMade.length === 1) return onMade[0] as { m: PMethod; http: FactHttp; v: string };
  return {
    why:
      found.length === 0
        ? "none"
        : `${found.map((x) => x.m.name).join(", ")} all ${verbs.join("/").toUpperCase()} it by its name`,
  };
}

/**
 * A create that is a PUT on the resource's full name (`PUT /v1/{name=projects/*\/snapshots/*}`, body `*`): the
 * resource, and how the request carries it — the request is the resource itself (Pub/Sub's CreateTopic), or the
 * create answers a resource message whose same-named, same-typed fields the request carries (CreateSnapshot's
 * `labels`) beside create-time inputs (`subscription`, `tags`); request controls are neither. Or why not.
 */
function putOnName(
  req: PType | null | undefined,
  answer: PType | undefined,
  create: string,
  path: string,
): { rt: PType; shared: protobuf.Field[]; inputs: protobuf.Field[] } | { why: string } {
  if (!req) return { why: "no request message" };
  if (parsed(req, "(google.api.resource)").length > 0) return { rt: req, shared: [], inputs: [] };
  if (!isResourceMessage(answer))
    return { why: `its answer ${answer ? fqn(answer) : "(none)"} is not a resource message` };
  if (create !== `Create${answer.name}`) return { why: `${create} is not Create${answer.name}` };
  const bound = (f: protobuf.Field) => new RegExp(`\\{${f.name}[=}]`).test(path);
  const fields = req.fieldsArray.filter((f) => !bound(f) && !isControl(f));
  if (fields.some((f) => isResourceMessage(f.resolve().resolvedType)))
    return { why: "a resource message in the request beside the name" };
  const own = (f: protobuf.Field) => {
    const r = answer.fields[f.name];
    return (
      r !== undefined &&
      r.type === f.type &&
      r.repeated === f.repeated &&
      r instanceof protobuf.MapField === f instanceof protobuf.MapField
    );
  };
  return { rt: answer, shared: fields.filter(own), inputs: fields.filter((f) => !own(f)) };
}

/**
 * A resource's update and list in its service. The update: AIP-134's PATCH with a mask, where the service has
 * one (IAM Admin: PatchServiceAccount beside the older UpdateServiceAccount PUT, which changes only the display
 * name), else its Update; else one recognised by what it is — a PATCH (else a PUT) on the name the get reads,
 * carrying the resource (as the request, its body field, or a field of the whole request): Logging's
 * UpdateBucket. The list: the List whose answer repeats the resource.
 */
function updateAndList(
  methods: readonly PMethod[],
  rt: PType,
  resource: Opt,
  getHttp: FactHttp | undefined,
): { update?: FactResource["update"]; list?: FactHttp } {
  const byName = (verb: string) => methods.find((x) => x.name === `${verb}${rt.name}`);
  const upds = [byName("Update"), byName("Patch")].filter((x): x is PMethod => Boolean(x));
  const carries = (x: PMethod) =>
    x.resolvedRequestType === rt ||
    (x.resolvedRequestType?.fieldsArray ?? []).some((f) => !f.repeated && f.resolve().resolvedType === rt);
  const updFound = (["patch", "put"] as const)
    .map((verb) =>
      byBinding(methods, [verb], [], resource, carries, getHttp ? nameBinding(getHttp.p)?.t : undefined),
    )
    .find((x): x is { m: PMethod; http: FactHttp; v: string } => !("why" in x));
  const upd = upds.find((x) => httpOf(x)?.m === "patch") ?? upds[0] ?? updFound?.m;
  const updHttp = upd ? httpOf(upd) : undefined;
  const mask = upd?.resolvedRequestType?.fieldsArray.find(
    (f) => f.type === "google.protobuf.FieldMask",
  )?.name;
  // An update whose whole request is the body and holds the resource in a field (`{serviceAccount, updateMask}`).
  const updWrap =
    updHttp?.body === "*" && upd?.resolvedRequestType !== rt
      ? upd?.resolvedRequestType?.fieldsArray.find((f) => f.resolve().resolvedType === rt)
      : undefined;
  const list = methods.find(
    (x) =>
      x.name.startsWith("List") &&
      x.resolvedResponseType?.fieldsArray.some((f) => f.repeated && f.resolve().resolvedType === rt),
  );
  const listHttp = list ? httpOf(list) : undefined;
  return {
    ...(updHttp && upd && (updHttp.m === "patch" || updHttp.m === "put")
      ? {
          update: {
            ...withLro(updHttp, upd, false),
            ...(mask ? { mask } : {}),
            ...(updWrap ? { wrap: jsonName(updWrap) } : {}),
          },
        }
      : {}),
    ...(listHttp?.m === "get" ? { list: listHttp } : {}),
  };
}

/**
 * A list answering a resource no GET of its name reads (Resource Manager's TagBinding, BigQuery Reservation's
 * Assignment): a method whose HTTP binding is a GET of exactly the path the create POSTs to (the parent's
 * collection, or a top-level one with the parent in the query: `GET /v3/tagBindings?parent=…`), whose request
 * takes a `parent` and a `page_token`, and whose answer repeats the resource and carries `next_page_token`.
 * A search or fetch (`…:search`), an unpaged answer or a list elsewhere is none.
 */
function listAnswering(
  methods: readonly PMethod[],
  rt: PType,
  create: FactHttp,
): { m: PMethod; http: FactHttp; field: protobuf.Field } | undefined {
  for (const m of methods) {
    const http = httpOf(m);
    const req = m.resolvedRequestType;
    const res = m.resolvedResponseType;
    if (http?.m !== "get" || http.p !== create.p || !req?.fields.parent || !req.fields.page_token) continue;
    const field = res?.fieldsArray.find((f) => f.repeated && f.resolve().resolvedType === rt);
    if (field && res?.fields.next_page_token?.type === "string") return { m, http, field };
  }
  return undefined;
}

/**
 * The resource-oriented resources of one service (AIP-133/131/134/135 methods around one resource), and every
 * create it does not take with why (the census: nothing the protos offer is dropped without a reason).
 */
function resourceFamily(
  svc: protobuf.Service,
  proto: string,
  version: string,
  col: Collector,
): { resources: FactResource[]; notTaken: FactNotTaken[] } {
  const host = String(svc.options?.["(google.api.default_host)"] ?? "");
  const out: FactResource[] = [];
  const notTaken: FactNotTaken[] = [];
  if (!host) return { resources: out, notTaken };
  const methods = svc.methodsArray;
  for (const m of methods) m.resolve();
  const createOf = new Map<FactResource, string>();
  for (const create of methods) {
    if (!create.name.startsWith("Create")) continue;
    const req = create.resolvedRequestType;
    const answer = answerOf(create);
    const named = create.name.slice("Create".length);
    const typeOf = (t: PType | null | undefined) => {
      const res = t ? (parsed(t, "(google.api.resource)")[0] as Opt | undefined) : undefined;
      return typeof res?.type === "string" ? res.type : `${host}/${t?.name ?? named}`;
    };
    const skip = (why: NotTakenWhy, detail: string, t?: PType | null) => {
      // Only creates of a resource count: a Create whose answer and request name none (Monitoring's
      // CreateTimeSeries writes data points) is not a resource the census misses.
      const resourceLike =
        isResourceMessage(t) ||
        isResourceMessage(answer) ||
        (req?.fieldsArray ?? []).some((f) => isResourceMessage(f.resolve().resolvedType));
      if (resourceLike)
        notTaken.push({
          host,
          proto,
          service: svc.name,
          type: typeOf(t ?? answer),
          method: create.name,
          why,
          detail,
        });
    };
    const http = httpOf(create);
    // A PUT on the resource's full name (Pub/Sub's CreateTopic, CreateSnapshot): the caller names it in the path.
    const onName =
      http?.m === "put" && http.body === "*" && nameBinding(http.p)?.v === "name" ? http : undefined;
    let put: { rt: PType; shared: protobuf.Field[]; inputs: protobuf.Field[] } | undefined;
    if (onName) {
      const shape = putOnName(req, answer, create.name, onName.p);
      if ("why" in shape) {
        skip("create-not-post", `PUT ${onName.p}: ${shape.why}`);
        continue;
      }
      put = shape;
    } else if (http?.m !== "post" || !http.body) {
      skip(
        "create-not-post",
        http
          ? `${http.m.toUpperCase()} ${http.p}${http.body ? "" : " without a body"}`
          : "no google.api.http binding",
      );
      continue;
    }
    if (!http) continue; // every branch above has one
    // The whole request as the body (IAM Admin's CreateServiceAccount: `{accountId, serviceAccount}`): the
    // resource is the request's one field of a resource message, beside only the id and path variables.
    let wrapped = http.body === "*" && !put ? wrappedResource(req, http.p) : undefined;
    let options: protobuf.Field[] | undefined;
    // A create naming its resource in a statement (Spanner's CreateDatabase `create_statement`).
    let statemented: ReturnType<typeof statementCreate>;
    // Create-time inputs beside the resource (Bigtable's clusters), sent only in the create.
    let inputs: protobuf.Field[] = put?.inputs ?? [];
    if (http.body === "*" && !wrapped && !put) {
      const inner = (req?.fieldsArray ?? []).filter((f) => isResourceMessage(f.resolve().resolvedType));
      if (inner.length > 0 && req) {
        const beside = besideCreate(req, http.p, create.name);
        if ("why" in beside) {
          const bound = (f: protobuf.Field) => new RegExp(`\\{${f.name}[=}]`).test(http.p);
          const rest = req.fieldsArray.filter((f) => !inner.includes(f) && !bound(f)).map((f) => f.name);
          skip(
            "fields-beside-resource",
            `${inner.map((f) => f.name).join(", ")} beside ${rest.join(", ")}: ${beside.why}`,
            inner[0]?.resolvedType as PType,
          );
          continue;
        }
        wrapped = beside.resource;
        inputs = beside.inputs;
      } else if (isResourceMessage(req)) {
        // The request is the resource itself (Access Context Manager's AccessPolicy, Trace's Span).
        skip(
          "request-is-resource",
          `the request ${fqn(req)} is the resource, POSTed whole to ${http.p} with no id: ${
            req.fields.parent
              ? "its parent is a field inside it, and which parents it takes and what finds a create whose answer was lost again are only in comments"
              : "Google names it"
          }`,
          req,
        );
        continue;
      } else if (statementCreate(req, http.p, answer, create.name)) {
        statemented = statementCreate(req, http.p, answer, create.name);
        inputs = statemented?.inputs ?? [];
      } else {
        const o = optionsCreate(req, http.p, answer, create.name);
        if ("why" in o) {
          skip("no-resource-message", `the request ${req ? fqn(req) : ""} is the body: ${o.why}`, answer);
          continue;
        }
        options = o.fields;
      }
    }
    const bodyField = options || put || statemented ? undefined : (wrapped ?? req?.fields[http.body ?? ""]);
    bodyField?.resolve();
    const rt = put ? put.rt : options || statemented ? answer : bodyField?.resolvedType;
    if (!(rt instanceof protobuf.Type)) {
      skip("body-not-resource", `body ${http.body} is not a message`);
      continue;
    }
    const resource = parsed(rt, "(google.api.resource)")[0] as Opt | undefined;
    if (!resource) {
      skip("body-not-resource", `body ${http.body} is ${fqn(rt)}, without google.api.resource`, rt);
      continue;
    }
    const rName = rt.name;
    const byName = (verb: string) => methods.find((x) => x.name === `${verb}${rName}`);
    // Get, delete (and below, update) are recognised by what they are: a GET answering the resource, a DELETE,
    // on one variable whose template fits the resource's pattern (Logging's GetBucket answers a LogBucket).
    // The name the create makes: the PUT's, or `<parent>/<collection>/*`.
    const made = put
      ? templateOf(http.p, "name")
      : /\{parent=([^}]*)\}\/([A-Za-z]+)$/
          .exec(http.p.split(":")[0] ?? "")
          ?.slice(1)
          .join("/")
          .concat("/*");
    const found = byBinding(
      methods,
      ["get"],
      [`Get${rName}`],
      resource,
      (x) => x.resolvedResponseType === rt,
      undefined,
      made,
    );
    const conv = { get: byName("Get"), del: byName("Delete") };
    const delFound = byBinding(
      methods,
      ["delete"],
      [`Delete${rName}`],
      resource,
      () => true,
      "why" in found ? undefined : nameBinding(found.http.p)?.t,
    );
    // No GET of its name, but a list of the create's own collection answers it: observed by that list.
    const listed = "why" in found && !conv.get ? listAnswering(methods, rt, http) : undefined;
    if ("why" in found && !listed && !(conv.get && conv.get.resolvedResponseType === rt)) {
      skip(
        "no-get",
        found.why !== "none"
          ? found.why
          : conv.get
            ? `Get${rName} answers ${conv.get.resolvedResponseType ? fqn(conv.get.resolvedResponseType) : "?"}`
            : `no Get${rName} in ${svc.name}, no other GET of its name answering it, and no paged list of the create's collection`,
        rt,
      );
      continue;
    }
    // Several DELETEs of its name: which one is not known. None (Cloud KMS's KeyRing): taken without one; its
    // kind releases, never deletes (facts.ts).
    if ("why" in delFound && delFound.why !== "none" && !conv.del) {
      skip("no-delete", delFound.why, rt);
      continue;
    }
    const delOk = !("why" in delFound);
    // A delete binding the same name to its own variable (Spanner's DropDatabase `{database=…}` beside
    // GetDatabase's `{name=…}`) is the same method: the provider fills the delete path's one variable.
    const sameName = (d: { http: FactHttp }, g: { http: FactHttp }) =>
      nameBinding(d.http.p)?.t === nameBinding(g.http.p)?.t;
    if (
      ("why" in found && !listed) ||
      (conv.del && !delOk) ||
      (!("why" in found) && delOk && found.v !== delFound.v && !(statemented && sameName(delFound, found)))
    ) {
      const [g, d] = [httpOf(conv.get ?? create), conv.del ? httpOf(conv.del) : undefined];
      skip(
        "get-or-delete-not-by-name",
        "why" in found || "why" in delFound
          ? `get ${g?.m ?? "?"} ${g?.p ?? ""}, delete ${d?.m ?? "?"} ${d?.p ?? ""}`
          : `get binds {${found.v}}, delete {${delFound.v}}`,
        rt,
      );
      continue;
    }
    const getHttp = "why" in found ? undefined : withRpc(found.http, found.m);
    const del = delOk ? delFound.m : undefined;
    const delHttp = delOk ? delFound.http : undefined;
    // The request field the name is bound to, where it is not `name` (Logging's `metric_name`).
    const nameField = !("why" in found) && found.v !== "name" ? found.v : undefined;
    // The resource's id: a `*_id` string of the request that is not bound in the path (Storage Transfer's
    // `project_id` is the parent; `agent_pool_id` the id), or its `<resource>_name` (Managed Microsoft AD's
    // CreateMicrosoftAdDomain `domain_name`, "The fully qualified domain name"). A create of options has none.
    const snakeName = rName.replace(/(?<=[a-z0-9])([A-Z])/g, "_$1").toLowerCase();
    const idParam =
      options || put || statemented
        ? undefined
        : req?.fieldsArray.find(
            (f) =>
              (f.name.endsWith("_id") || f.name === `${snakeName}_name`) &&
              f.name !== "request_id" &&
              f.type === "string" &&
              !new RegExp(`\\{${f.name}[=}]`).test(http.p),
          )?.name;
    const { update, list: anyList } = updateAndList(methods, rt, resource, getHttp ?? delHttp);
    const listHttp = listed?.http ?? anyList;
    // Where a create with no `<resource>_id` takes the caller's id: the PUT's path, or the resource's own
    // `name`, REQUIRED, where its comment says it is a client-assigned identifier, not the full name AIP-122
    // makes `name` (Logging's LogMetric: "The client-assigned metric identifier", LogExclusion's "A
    // client-assigned identifier"); a REQUIRED full name (Translation's Glossary) is not this.
    const ownName = rt.fields.name;
    const nameBehaviour = ownName ? parsed(ownName, "(google.api.field_behavior)").flat() : [];
    const idField = rt.fields[`${snakeName}_id`];
    const googleId = idField && parsed(idField, "(google.api.field_behavior)").flat().includes("OUTPUT_ONLY");
    const namedBy = put
      ? "path"
      : !idParam &&
          !options &&
          !wrapped &&
          http.body !== "*" &&
          ownName?.type === "string" &&
          nameBehaviour.includes("REQUIRED") &&
          !nameBehaviour.includes("IDENTIFIER") &&
          /\bclient-assigned\b[^.]*\bidentifier\b/i.test(ownName.comment ?? "")
        ? "field"
        : // No other place for the id, and `name` REQUIRED: the caller sends the full name (Translation's Glossary:
          // "Glossary names have the form `projects/…/glossaries/{glossary-id}`") — unless the id in it is
          // Google's, an OUTPUT_ONLY `<resource>_id` (Merchant's DataSource: "Output only. The data source id.").
          !idParam &&
            !options &&
            !wrapped &&
            !statemented &&
            http.body !== "*" &&
            ownName?.type === "string" &&
            nameBehaviour.includes("REQUIRED") &&
            !googleId
          ? "fullName"
          : undefined;
    out.push({
      family: "resource",
      api: apiOf(host),
      version,
      host,
      proto,
      message: col.message(rt),
      kind: rName,
      service: svc.name,
      type: String(resource.type ?? `${host}/${rName}`),
      ...(() => {
        const p = patternFor(
          resource,
          put
            ? templateOf(http.p, "name")?.split("/").slice(0, -2).join("/")
            : (templateOf(http.p, "parent") ?? (options ? templateOf(http.p, "name") : undefined)),
        );
        return p ? { pattern: p } : {};
      })(),
      create: {
        ...withLro(http, create, false),
        ...(idParam ? { idParam } : {}),
        ...(wrapped ? { wrap: jsonName(wrapped) } : {}),
        ...(() => {
          const doc =
            wrapped && idParam
              ? shortDoc(req?.fields[idParam]?.comment?.replace(/^\s*(Required|Optional)\.\s*/, ""), 400)
              : undefined;
          return doc ? { idDoc: doc } : {};
        })(),
        ...(options && req ? { request: col.message(req), fields: options.map(jsonName) } : {}),
        ...(inputs.length > 0 && req ? { request: col.message(req), fields: inputs.map(jsonName) } : {}),
        ...(namedBy ? { namedBy } : {}),
        ...(statemented ? { statement: jsonName(statemented.statement) } : {}),
        ...(put && put.shared.length > 0 && req
          ? { request: col.message(req), resourceFields: put.shared.map(jsonName) }
          : {}),
      },
      ...(nameField ? { nameField } : {}),
      ...(getHttp ? { get: getHttp } : {}),
      ...(update ? { update } : {}),
      ...(() => {
        const append =
          statemented && getHttp ? appendStatementsOf(methods, getHttp.p, statemented.inputs) : undefined;
        return append ? { appendStatements: append } : {};
      })(),
      ...(del && delHttp ? { delete: withLro(delHttp, del, false) } : {}),
      ...(listHttp ? { list: listHttp } : {}),
      ...(listed
        ? {
            listObserved: {
              method: listed.m.name,
              field: jsonName(listed.field),
              paging: "pageToken" as const,
            },
          }
        : {}),
    });
    createOf.set(out.at(-1) as FactResource, create.name);
  }
  return { resources: secondCreates(out, notTaken, createOf), notTaken };
}

/**
 * A resource a service makes with its standard create and also with a custom method (Logging's CreateBucketAsync,
 * `…/buckets:createAsync`, beside CreateBucket): taken once, by the standard create; the other is listed.
 */
function secondCreates(
  found: FactResource[],
  notTaken: FactNotTaken[],
  createOf: ReadonlyMap<FactResource, string>,
): FactResource[] {
  const custom = (r: FactResource) => /:[A-Za-z]+$/.test(r.create?.p ?? "");
  return found.filter((r) => {
    const standard = found.find((x) => x !== r && x.type === r.type && !custom(x));
    if (!custom(r) || !standard) return true;
    notTaken.push({
      host: r.host,
      proto: r.proto,
      service: r.service,
      type: r.type,
      method: createOf.get(r) ?? "",
      why: "second-create",
      detail: `a custom method (${r.create?.m.toUpperCase()} ${r.create?.p}) beside the standard create (${standard.create?.m.toUpperCase()} ${standard.create?.p})`,
    });
    return false;
  });
}

/**
 * The resources of a service the API answers but does not let a caller create: a `Get<R>` answering a
 * resource message whose type no create of the API (taken or not) named. Taken, without a create, when the
 * get is a GET of its `{name=…}` (a singleton of settings `projects/*\/settings`, or what Google makes itself):
 * its kind adopts what exists and never creates; else listed with why.
 */
function uncreatable(
  svc: protobuf.Service,
  proto: string,
  version: string,
  col: Collector,
  named: ReadonlySet<string>,
): { resources: FactResource[]; notTaken: FactNotTaken[] } {
  const host = String(svc.options?.["(google.api.default_host)"] ?? "");
  const resources: FactResource[] = [];
  const notTaken: FactNotTaken[] = [];
  if (!host) return { resources, notTaken };
  const methods = svc.methodsArray;
  for (const get of methods) {
    get.resolve();
    const rt = get.resolvedResponseType;
    if (!get.name.startsWith("Get") || !isResourceMessage(rt) || get.name !== `Get${rt.name}`) continue;
    const resource = parsed(rt, "(google.api.resource)")[0] as Opt;
    const type = String(resource.type ?? `${host}/${rt.name}`);
    if (named.has(type)) continue;
    const verbs = ["Update", "Patch", "Delete"].filter((v) => svc.methods[`${v}${rt.name}`]);
    const detail = verbs.length > 0 ? `Get${verbs.map((v) => `, ${v}`).join("")} only` : "Get only";
    const getHttp = httpOf(get);
    const template = getHttp?.m === "get" ? templateOf(getHttp.p, "name") : undefined;
    const del = svc.methods[`Delete${rt.name}`];
    del?.resolve();
    const delHttp = del ? httpOf(del) : undefined;
    const delByName = delHttp?.m === "delete" && templateOf(delHttp.p, "name") === template;
    // Under a parent, as `<parent>/<collection>/*` or a singleton `<parent>/<word>`: a top-level name
    // (`organizations/*`) has no parent to say which.
    const parts = template?.split("/") ?? [];
    const underParent =
      parts.at(-1) === "*" ? parts.length >= 3 && /^[A-Za-z]+$/.test(parts.at(-2) ?? "") : parts.length >= 2;
    if (!getHttp || !template || !underParent || (del && !delByName)) {
      notTaken.push({
        host,
        proto,
        service: svc.name,
        type,
        method: get.name,
        why: "no-create",
        detail: `${detail}; ${!template ? `get ${getHttp?.m ?? "?"} ${getHttp?.p ?? "without google.api.http"} is not a GET of {name=…}` : !underParent ? `its name ${template} is not under a parent (<parent>/<collection>/* or <parent>/<singleton>)` : `delete ${delHttp?.m ?? "?"} ${delHttp?.p ?? ""} is not by the get's name`}`,
      });
      continue;
    }
    for (const m of methods) m.resolve();
    const { update, list } = updateAndList(methods, rt, resource, getHttp);
    const pattern = patternFor(resource, undefined);
    resources.push({
      family: "resource",
      api: apiOf(host),
      version,
      host,
      proto,
      message: col.message(rt),
      kind: rt.name,
      service: svc.name,
      type,
      ...(pattern ? { pattern } : {}),
      get: getHttp,
      ...(update ? { update } : {}),
      ...(del && delHttp ? { delete: withLro(delHttp, del, false) } : {}),
      ...(list ? { list } : {}),
    });
  }
  return { resources, notTaken };
}

/** Compute's service names are plural collections: `Addresses` → Address, `SecurityPolicies` → SecurityPolicy. */
export function singular(name: string): string {
  if (/ies$/.test(name)) return `${name.slice(0, -3)}y`;
  if (/(sses|xes|ches|shes)$/.test(name)) return name.slice(0, -2);
  if (/s$/.test(name) && !/ss$/.test(name)) return name.slice(0, -1);
  return name;
}

/**
 * A Compute collection Google fills itself (Zones, MachineTypes: Get, List, no Insert), taken without a create
 * where its Get is a GET of `projects/{project}/…/<collection>/{<name>}` answering a resource with a `name`
 * (its kind observes one by name). Not an operation (the progress of other calls, followed by the provider),
 * nor a get of the project itself, a singleton (`…/global/snapshotSettings`) or a wrapper answer
 * (ReservationBlocksGetResponse): those stay in the census.
 */
function madeByCompute(
  svc: protobuf.Service,
  proto: string,
  version: string,
  col: Collector,
  get: protobuf.Method,
): FactResource | undefined {
  const getHttp = httpOf(get);
  const rt = get.resolvedResponseType;
  const ofName = /\/projects\/\{project\}\/(?:[^=]*\/)?[A-Za-z]+\/\{\w+\}$/;
  if (getHttp?.m !== "get" || !ofName.test(getHttp.p) || !rt || rt.name === "Operation" || !rt.fields.name)
    return undefined;
  return computeFact(svc, proto, version, col, rt, getHttp);
}

/** A Compute resource's facts: its Get, and its Patch or Update, Delete, List and AggregatedList where published. */
function computeFact(
  svc: protobuf.Service,
  proto: string,
  version: string,
  col: Collector,
  rt: protobuf.Type,
  getHttp: FactHttp,
  create?: FactHttp,
): FactResource {
  const m = (name: string) => {
    const x = svc.methods[name];
    x?.resolve();
    return x;
  };
  const upd = m("Patch") ?? m("Update");
  const updHttp = upd ? httpOf(upd) : undefined;
  const del = m("Delete");
  const delHttp = del ? httpOf(del) : undefined;
  const [list, aggregated] = [m("List"), m("AggregatedList")];
  const listHttp = list ? httpOf(list) : undefined;
  const aggregatedHttp = aggregated ? httpOf(aggregated) : undefined;
  return {
    family: "compute",
    api: "compute",
    version,
    host: "compute.googleapis.com",
    proto,
    message: col.message(rt),
    // Regional and global twins share a message (Address): the service names the resource.
    kind: singular(svc.name),
    service: svc.name,
    type: `compute.googleapis.com/${rt.name}`,
    ...(create ? { create } : {}),
    get: getHttp,
    ...(upd && updHttp ? { update: withLro(updHttp, upd, true) } : {}),
    ...(del && delHttp ? { delete: withLro(delHttp, del, true) } : {}),
    ...(listHttp ? { list: listHttp } : {}),
    ...(aggregatedHttp ? { aggregated: aggregatedHttp } : {}),
  };
}

/** Compute's resources: Insert (body `<x>_resource`), Get, Delete, Patch or Update, each with its Operations. */
function computeFamily(
  svc: protobuf.Service,
  proto: string,
  version: string,
  col: Collector,
): { resources: FactResource[]; notTaken: FactNotTaken[] } {
  const m = (name: string) => {
    const x = svc.methods[name];
    x?.resolve();
    return x;
  };
  const insert = m("Insert");
  const get = m("Get");
  const del = m("Delete");
  // Insert and Get without Delete (RegionCommitments: a commitment runs its term) is taken without a delete.
  if (!insert || !get) {
    // A collection Google answers but a caller cannot make or remove (Zones, MachineTypes), or half of one.
    const rt = (get ?? insert)?.resolvedResponseType;
    if (!get && !insert) return { resources: [], notTaken: [] };
    const made = get ? madeByCompute(svc, proto, version, col, get) : undefined;
    if (made) return { resources: [made], notTaken: [] };
    const why: NotTakenWhy = !insert ? "no-create" : "no-get";
    return {
      resources: [],
      notTaken: [
        {
          host: "compute.googleapis.com",
          proto,
          service: svc.name,
          type: `compute.googleapis.com/${get ? (rt?.name ?? singular(svc.name)) : singular(svc.name)}`,
          method: get ? "Get" : "Insert",
          why,
          detail: `${svc.name}: ${["Insert", "Get", "Delete"].filter((x) => svc.methods[x]).join(", ")} only${!get ? "" : rt?.name === "Operation" ? "; its Get answers an Operation (the progress of other calls)" : "; its Get is not a GET of projects/{project}/…/<collection>/{name} answering a resource with a name"}`,
        },
      ],
    };
  }
  const insHttp = httpOf(insert);
  const getHttp = httpOf(get);
  const delHttp = del ? httpOf(del) : undefined;
  const rt = get.resolvedResponseType;
  const notTaken = (why: NotTakenWhy, detail: string) => ({
    resources: [],
    notTaken: [
      {
        host: "compute.googleapis.com",
        proto,
        service: svc.name,
        type: `compute.googleapis.com/${rt?.name ?? singular(svc.name)}`,
        method: "Insert",
        why,
        detail: `${svc.name}: ${detail}`,
      },
    ],
  });
  if (!insHttp?.body) return notTaken("create-not-post", "Insert has no body");
  if (!getHttp || (del && !delHttp))
    return notTaken("get-or-delete-not-by-name", "Get or Delete has no google.api.http");
  if (!rt || insert.resolvedRequestType?.fields[insHttp.body]?.type !== rt.name)
    return notTaken("body-not-resource", `Insert's body ${insHttp.body} is not what Get answers`);
  return {
    resources: [computeFact(svc, proto, version, col, rt, getHttp, withLro(insHttp, insert, true))],
    notTaken: [],
  };
}

/** Every `google/**\/vN` directory (GA versions only), the highest version per API. */
function apiDirs(root: string): string[] {
  const found = new Map<string, { v: number; dir: string }>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir)) {
      const p = join(dir, e);
      if (!statSync(p).isDirectory()) continue;
      const m = /^v(\d+)$/.exec(e);
      if (m && readdirSync(p).some((f) => f.endsWith(".proto"))) {
        const parent = relative(root, dir);
        const v = Number(m[1]);
        if ((found.get(parent)?.v ?? -1) < v) found.set(parent, { v, dir: relative(root, p) });
      }
      walk(p);
    }
  };
  walk(join(root, "google"));
  // google/example is the AIP examples' library API, not a service.
  return [...found.values()]
    .map((x) => x.dir)
    .filter((d) => !d.startsWith("google/example/"))
    .sort();
}

export function extract(
  root: string,
  only?: string,
): {
  resources: FactResource[];
  notTaken: FactNotTaken[];
  messages: Record<string, FactMessage>;
  failed: string[];
} {
  const resources: FactResource[] = [];
  const notTaken: FactNotTaken[] = [];
  const messages: Record<string, FactMessage> = {};
  const failed: string[] = [];
  for (const dir of apiDirs(root).filter((d) => !only || d.startsWith(`${only}/`))) {
    const compute = dir === "google/cloud/compute/v1";
    const files = readdirSync(join(root, dir)).filter((f) => f.endsWith(".proto"));
    const pb = new protobuf.Root();
    // google/protobuf/* are protobufjs's own (the common types built in, descriptor.proto in its package).
    pb.resolvePath = (_origin, target) =>
      target.startsWith("google/protobuf/") ? join(PROTOBUF_DIR, target) : join(root, target);
    try {
      pb.loadSync(
        files.map((f) => join(dir, f)),
        { keepCase: true, alternateCommentMode: true },
      );
    } catch (err) {
      failed.push(`${dir}: ${(err as Error).message.slice(0, 120)}`);
      continue;
    }
    const col = new Collector(compute);
    const version = dir.split("/").at(-1) ?? "";
    const services: protobuf.Service[] = [];
    const walk = (ns: protobuf.NamespaceBase) => {
      for (const o of ns.nestedArray) {
        if (o instanceof protobuf.Service) services.push(o);
        else if (o instanceof protobuf.Namespace && !(o instanceof protobuf.Type)) walk(o);
      }
    };
    walk(pb);
    const own = services.filter((s) => s.filename && relative(root, s.filename).startsWith(`${dir}/`));
    const mine: FactNotTaken[] = [];
    const found: FactResource[] = [];
    for (const svc of own) {
      try {
        const got = compute ? computeFamily(svc, dir, version, col) : resourceFamily(svc, dir, version, col);
        found.push(...got.resources);
        mine.push(...got.notTaken);
      } catch (err) {
        failed.push(`${dir} ${svc.name}: ${(err as Error).message.slice(0, 120)}`);
      }
    }
    // Resources no create of the API named, taken or not: the API answers them but makes them itself.
    const named = new Set([...found, ...mine].map((x) => x.type));
    if (!compute)
      for (const svc of own) {
        try {
          const got = uncreatable(svc, dir, version, col, named);
          for (const x of [...got.resources, ...got.notTaken]) named.add(x.type);
          found.push(...got.resources);
          mine.push(...got.notTaken);
        } catch (err) {
          failed.push(`${dir} ${svc.name}: ${(err as Error).message.slice(0, 120)}`);
        }
      }
    resources.push(...found);
    notTaken.push(...mine);
    Object.assign(messages, col.messages);
  }
  return { resources, notTaken, messages, failed };
}

/** `174 not taken: 12 no-get, …`: the census by reason, as the refresh prints it. */
export function censusLine(notTaken: readonly FactNotTaken[]): string {
  const by = new Map<string, number>();
  for (const x of notTaken) by.set(x.why, (by.get(x.why) ?? 0) + 1);
  const parts = [...by].sort((a, b) => b[1] - a[1]).map(([w, n]) => `${n} ${w}`);
  return `${notTaken.length} resources not taken: ${parts.join(", ")}`;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      from: { type: "string" },
      commit: { type: "string" },
      committed: { type: "string" },
      out: { type: "string" },
      only: { type: "string" },
    },
  });
  let from = values.from;
  if (!from) {
    from = mkdtempSync(join(tmpdir(), "googleapis-"));
    execFileSync("git", ["clone", "--depth", "1", "--quiet", GOOGLEAPIS, from], { stdio: "inherit" });
  }
  const git = (...args: string[]) => execFileSync("git", ["-C", from, ...args], { encoding: "utf8" }).trim();
  const commit = values.commit ?? git("rev-parse", "HEAD");
  const committed = values.committed ?? git("log", "-1", "--format=%cs");
  const { resources, notTaken, messages, failed } = extract(from, values.only);
  if (values.only) {
    // One API again, into the pinned bundle: only from the commit the bundle is from (the facts stay one
    // commit's), its resources replaced and its messages added or replaced.
    const pinned = loadFacts(values.out ?? FACTS_FILE);
    if (pinned.origin.commit !== commit)
      throw new Error(
        `--only ${values.only}: ${from} is at ${commit}, the bundle at ${pinned.origin.commit}`,
      );
    // An API none of whose resources are taken still has its census (BigQuery Storage's ReadSession).
    if (resources.length === 0 && notTaken.length === 0)
      throw new Error(`--only ${values.only}: no resources found: refusing to write`);
    const kept = pinned.resources.filter((r) => !r.proto.startsWith(`${values.only}/`));
    const keptNot = (pinned.notTaken ?? []).filter((r) => !r.proto.startsWith(`${values.only}/`));
    const merged: FactsBundle = {
      ...pinned,
      resources: [...kept, ...resources],
      notTaken: [...keptNot, ...notTaken],
      messages: { ...pinned.messages, ...messages },
    };
    writeFileSync(values.out ?? FACTS_FILE, gzipSync(JSON.stringify(merged), { level: 9 }));
    process.stdout.write(
      `${values.only}: ${resources.length} resources (${pinned.resources.length - kept.length} before) → ${values.out ?? FACTS_FILE}\n`,
    );
    for (const f of failed) process.stderr.write(`skipped ${f}\n`);
    process.exit(0);
  }
  if (resources.length < 200) throw new Error(`only ${resources.length} resources found: refusing to write`);
  const bundle: FactsBundle = {
    format: FACTS_FORMAT,
    origin: {
      source: GOOGLEAPIS,
      commit,
      committed,
      retrieved: new Date().toISOString().slice(0, 10),
      licence: "Apache-2.0 (googleapis/googleapis LICENSE)",
    },
    resources,
    notTaken,
    messages,
  };
  const out = values.out ?? FACTS_FILE;
  writeFileSync(out, gzipSync(JSON.stringify(bundle), { level: 9 }));
  const compute = resources.filter((r) => r.family === "compute").length;
  process.stdout.write(
    `${resources.length} resources (${resources.length - compute} resource-oriented in ${new Set(resources.filter((r) => r.family === "resource").map((r) => r.api)).size} APIs, ${compute} Compute), ${Object.keys(messages).length} messages → ${out}\n`,
  );
  process.stdout.write(`${censusLine(notTaken)}\n`);
  for (const f of failed) process.stderr.write(`skipped ${f}\n`);
}
