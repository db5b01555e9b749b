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
  type FactResource,
  type FactsBundle,
  loadFacts,
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
  return lro ? { ...h, lro } : h;
};

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

/** The resource-oriented resources of one service (AIP-133/131/134/135 methods around one resource). */
function resourceFamily(
  svc: protobuf.Service,
  proto: string,
  version: string,
  col: Collector,
): FactResource[] {
  const host = String(svc.options?.["(google.api.default_host)"] ?? "");
  if (!host) return [];
  const out: FactResource[] = [];
  const methods = svc.methodsArray;
  for (const m of methods) m.resolve();
  for (const create of methods) {
    if (!create.name.startsWith("Create")) continue;
    const http = httpOf(create);
    if (http?.m !== "post" || !http.body) continue;
    const req = create.resolvedRequestType;
    // The whole request as the body (IAM Admin's CreateServiceAccount: `{accountId, serviceAccount}`): the
    // resource is the request's one field of a resource message, beside only the id and path variables.
    const wrapped = http.body === "*" ? wrappedResource(req, http.p) : undefined;
    if (http.body === "*" && !wrapped) continue;
    const bodyField = wrapped ?? req?.fields[http.body];
    bodyField?.resolve();
    const rt = bodyField?.resolvedType;
    if (!(rt instanceof protobuf.Type)) continue;
    const resource = parsed(rt, "(google.api.resource)")[0] as Opt | undefined;
    if (!resource) continue;
    const rName = rt.name;
    const byName = (verb: string) => methods.find((x) => x.name === `${verb}${rName}`);
    const get = byName("Get");
    const del = byName("Delete");
    if (!get || !del || get.resolvedResponseType !== rt) continue;
    const getHttp = httpOf(get);
    const delHttp = httpOf(del);
    if (getHttp?.m !== "get" || delHttp?.m !== "delete") continue;
    if (!templateOf(getHttp.p, "name") || !templateOf(delHttp.p, "name")) continue;
    // The resource's id: a `*_id` string of the request that is not bound in the path (Storage Transfer's
    // `project_id` is the parent; `agent_pool_id` the id).
    const idParam = req?.fieldsArray.find(
      (f) =>
        f.name.endsWith("_id") &&
        f.name !== "request_id" &&
        f.type === "string" &&
        !new RegExp(`\\{${f.name}[=}]`).test(http.p),
    )?.name;
    // AIP-134's PATCH with a mask, where the service has one (IAM Admin: PatchServiceAccount beside the older
    // UpdateServiceAccount PUT, which changes only the display name); else its Update.
    const upds = [byName("Update"), byName("Patch")].filter((x): x is PMethod => Boolean(x));
    const upd = upds.find((x) => httpOf(x)?.m === "patch") ?? upds[0];
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
        const p = patternFor(resource, templateOf(http.p, "parent"));
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
      },
      get: getHttp,
      ...(updHttp && upd && (updHttp.m === "patch" || updHttp.m === "put")
        ? {
            update: {
              ...withLro(updHttp, upd, false),
              ...(mask ? { mask } : {}),
              ...(updWrap ? { wrap: jsonName(updWrap) } : {}),
            },
          }
        : {}),
      delete: withLro(delHttp, del, false),
      ...(listHttp?.m === "get" ? { list: listHttp } : {}),
    });
  }
  return out;
}

/** Compute's service names are plural collections: `Addresses` → Address, `SecurityPolicies` → SecurityPolicy. */
export function singular(name: string): string {
  if (/ies$/.test(name)) return `${name.slice(0, -3)}y`;
  if (/(sses|xes|ches|shes)$/.test(name)) return name.slice(0, -2);
  if (/s$/.test(name) && !/ss$/.test(name)) return name.slice(0, -1);
  return name;
}

/** Compute's resources: Insert (body `<x>_resource`), Get, Delete, Patch or Update, each with its Operations. */
function computeFamily(
  svc: protobuf.Service,
  proto: string,
  version: string,
  col: Collector,
): FactResource[] {
  const m = (name: string) => {
    const x = svc.methods[name];
    x?.resolve();
    return x;
  };
  const insert = m("Insert");
  const get = m("Get");
  const del = m("Delete");
  if (!insert || !get || !del) return [];
  const insHttp = httpOf(insert);
  const getHttp = httpOf(get);
  const delHttp = httpOf(del);
  if (!insHttp?.body || !getHttp || !delHttp) return [];
  const rt = get.resolvedResponseType;
  if (!rt || insert.resolvedRequestType?.fields[insHttp.body]?.type !== rt.name) return [];
  const upd = m("Patch") ?? m("Update");
  const updHttp = upd ? httpOf(upd) : undefined;
  const list = m("List");
  const listHttp = list ? httpOf(list) : undefined;
  const aggregated = m("AggregatedList");
  const aggregatedHttp = aggregated ? httpOf(aggregated) : undefined;
  return [
    {
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
      create: withLro(insHttp, insert, true),
      get: getHttp,
      ...(upd && updHttp ? { update: withLro(updHttp, upd, true) } : {}),
      delete: withLro(delHttp, del, true),
      ...(listHttp ? { list: listHttp } : {}),
      ...(aggregatedHttp ? { aggregated: aggregatedHttp } : {}),
    },
  ];
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
  messages: Record<string, FactMessage>;
  failed: string[];
} {
  const resources: FactResource[] = [];
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
    for (const svc of own) {
      try {
        resources.push(
          ...(compute ? computeFamily(svc, dir, version, col) : resourceFamily(svc, dir, version, col)),
        );
      } catch (err) {
        failed.push(`${dir} ${svc.name}: ${(err as Error).message.slice(0, 120)}`);
      }
    }
    Object.assign(messages, col.messages);
  }
  return { resources, messages, failed };
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
  const { resources, messages, failed } = extract(from, values.only);
  if (values.only) {
    // One API again, into the pinned bundle: only from the commit the bundle is from (the facts stay one
    // commit's), its resources replaced and its messages added or replaced.
    const pinned = loadFacts(values.out ?? FACTS_FILE);
    if (pinned.origin.commit !== commit)
      throw new Error(
        `--only ${values.only}: ${from} is at ${commit}, the bundle at ${pinned.origin.commit}`,
      );
    if (resources.length === 0)
      throw new Error(`--only ${values.only}: no resources found: refusing to write`);
    const kept = pinned.resources.filter((r) => !r.proto.startsWith(`${values.only}/`));
    const merged: FactsBundle = {
      ...pinned,
      resources: [...kept, ...resources],
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
    messages,
  };
  const out = values.out ?? FACTS_FILE;
  writeFileSync(out, gzipSync(JSON.stringify(bundle), { level: 9 }));
  const compute = resources.filter((r) => r.family === "compute").length;
  process.stdout.write(
    `${resources.length} resources (${resources.length - compute} resource-oriented in ${new Set(resources.filter((r) => r.family === "resource").map((r) => r.api)).size} APIs, ${compute} Compute), ${Object.keys(messages).length} messages → ${out}\n`,
  );
  for (const f of failed) process.stderr.write(`skipped ${f}\n`);
}
