// A wire fake of every generated Google Cloud kind's API, driven by the same generated specs the generic
// providers use (.generated/gcp, from Google's protos): both families, resource-oriented (create under a
// parent with an id, get, patch with an update mask, delete, google.longrunning.Operation) and Compute
// (insert / get / patch / delete with zonal, regional and global Operations). It validates requests
// against the definitions and answers Google's error bodies: an unknown field, an OUTPUT_ONLY field sent, an
// IMMUTABLE field changed, a REQUIRED field missing → 400 INVALID_ARGUMENT; a second create → 409
// ALREADY_EXISTS; a stale Compute fingerprint → 412. Compute's aggregatedList where the API has one (items keyed
// by scope). Operations finish after `opPolls` looks. Errors on
// demand: failNext. Reached at `<url>/<api>` (the ProviderConfig's endpoint.apis `<url>/{api}`).

import { parseArgs } from "node:util";
import type { AwsccNode, AwsccProp } from "../../../shared/api/awscc/spec.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import type { GoogleKindSpec } from "../../../shared/api/googleapis/spec.ts";
import { singular } from "../../gcp/refresh-apis.ts";
import { generateGcp } from "../../gen-gcp.ts";
import { computeAsset, type FakeAsset, namedAsset } from "./gcp-assets.ts";
import {
  Countdown,
  type FakeHttpServer,
  type FakeRequest,
  fieldRequired,
  GoogleApiError,
  type Json,
  now,
  startFakeHttp,
} from "./gcp-fake-http.ts";

const TAG_BINDING = "cloudresourcemanager.googleapis.com/TagBinding";

/** A Compute resource's URL: full (`https://…/compute/v1/projects/p/global/networks/n`) or partial. */
const COMPUTE_URL =
  /^(https:\/\/[a-z.]+\/compute\/(v1|beta)\/)?(projects\/[^/]+\/)?(global|regions\/[^/]+|zones\/[^/]+)\/[A-Za-z]+\/[^/]+$/;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** A path template as a regular expression over the whole path, its variables as named groups. */
function templateRe(template: string): { re: RegExp; vars: string[] } {
  const vars: string[] = [];
  const escapeRe = (x: string) => x.replace(/[.+?^$()|[\]\\{}*]/g, "\\$&");
  let src = "";
  let last = 0;
  const path = template.split(":")[0] ?? "";
  for (const m of path.matchAll(/\{([\w.]+)(?:=([^}]*))?\}/g)) {
    src += escapeRe(path.slice(last, m.index));
    vars.push(m[1] as string);
    const inner = (m[2] ?? "*")
      .split("**")
      .map((x) => x.split("*").map(escapeRe).join("[^/]+"))
      .join(".+");
    src += `(${inner})`;
    last = (m.index ?? 0) + m[0].length;
  }
  src += escapeRe(path.slice(last));
  return { re: new RegExp(`^${src}$`), vars };
}

interface Route {
  spec: GoogleKindSpec;
  op: "create" | "get" | "update" | "delete" | "list" | "appendStatements" | "readStatements";
  method: string;
  re: RegExp;
  vars: string[];
}

interface Stored {
  spec: GoogleKindSpec;
  resource: Json;
}

interface PendingOp {
  op: Json;
  countdown: Countdown;
  /** Applied when the operation finishes (the resource appears, changes or goes). */
  finish: () => Json | undefined;
  /** The resource it works on (its full name or Compute path). */
  target: string;
  /** A create's resource while it runs: Resource Manager's uniqueness rules count it already. */
  creating?: Stored;
}

/**
 * Resources Google names otherwise than `<parent>/<collection>/<id>`, and what it sets on create. IAM names a
 * service account by its email, `<accountId>@<project>.iam.gserviceaccount.com` (cloud.google.com/iam/docs/
 * service-accounts: "projects/PROJECT_ID/serviceAccounts/SA_EMAIL"), and the account id must be 6-30
 * characters matching `[a-z]([-a-z0-9]*[a-z0-9])` (iam.proto, CreateServiceAccountRequest.account_id).
 */
const NAMED: Record<
  string,
  (parent: string, id: string, seq: number) => { name: string; set: Json } | string
> = {
  "iam.googleapis.com/ServiceAccount": (parent, id, seq) => {
    if (!/^[a-z]([-a-z0-9]*[a-z0-9])$/.test(id) || id.length < 6 || id.length > 30)
      return `Invalid value for account_id: '${id}' must be 6-30 characters long and match [a-z]([-a-z0-9]*[a-z0-9]).`;
    const project = parent.split("/")[1] ?? "";
    const email = `${id}@${project}.iam.gserviceaccount.com`;
    const uniqueId = String(100000000000000000000n + BigInt(seq));
    return {
      name: `${parent}/serviceAccounts/${email}`,
      set: {
        projectId: project,
        email,
        uniqueId,
        oauth2ClientId: uniqueId,
        disabled: false,
        etag: "MDEwMjE5MjA=",
      },
    };
  },
};

/**
 * Creates of options (no resource message in the request): how Google names and fills what they make, and
 * what it answers only then. IAM's service account key (iam.proto, ServiceAccountKey): its name
 * `projects/{PROJECT_ID}/serviceAccounts/{ACCOUNT}/keys/{key}`, `private_key_type` defaulting to
 * `TYPE_GOOGLE_CREDENTIALS_FILE` and `key_algorithm` to a 2K RSA key; `private_key_data` and `private_key_type`
 * "only provided in CreateServiceAccountKey responses", `public_key_data` "only provided in
 * GetServiceAccountKey responses".
 */
const MADE: Record<
  string,
  (parent: string, sent: Json, seq: number) => { name: string; set: Json; once: Json }
> = {
  "iam.googleapis.com/Key": (parent, sent, seq) => {
    const key = (BigInt(seq) * 0x9e3779b97f4a7c15n).toString(16).padStart(40, "0").slice(-40);
    const email = parent.split("/").at(-1) ?? "";
    const privateKeyType = sent.privateKeyType ?? "TYPE_GOOGLE_CREDENTIALS_FILE";
    const file = JSON.stringify({
      type: "service_account",
      project_id: parent.split("/")[1],
      private_key_id: key,
      private_key: `-----BEGIN PRIVATE KEY-----\nfake-${key}\n-----END PRIVATE KEY-----\n`,
      client_email: email,
    });
    return {
      name: `${parent}/keys/${key}`,
      set: {
        keyAlgorithm: sent.keyAlgorithm ?? "KEY_ALG_RSA_2048",
        publicKeyData: Buffer.from(`fake public key ${key}`).toString("base64"),
        validAfterTime: now(),
        validBeforeTime: "9999-12-31T23:59:59Z",
        keyOrigin: "GOOGLE_PROVIDED",
        keyType: "USER_MANAGED",
        disabled: false,
      },
      once: { privateKeyType, privateKeyData: Buffer.from(file).toString("base64") },
    };
  },
};

/**
 * Create-time inputs beside the resource that make resources of their own with it: Bigtable's CreateInstance
 * `clusters` ("the clusters to be created within the instance, mapped by desired cluster ID"), each a Cluster
 * at `{instance}/clusters/{id}` (bigtable_instance_admin.proto), deleted with the instance. The type made, and
 * each one's name and fields.
 */
const MADE_BESIDE: Record<string, { type: string; made: (name: string, sent: Json) => [string, Json][] }> = {
  "bigtableadmin.googleapis.com/Instance": {
    type: "bigtableadmin.googleapis.com/Cluster",
    made: (name, sent) =>
      Object.entries(isObject(sent.clusters) ? sent.clusters : {}).map(([id, c]) => [
        `${name}/clusters/${id}`,
        { ...(isObject(c) ? c : {}), name: `${name}/clusters/${id}`, state: "READY" },
      ]),
  },
};

/**
 * Creates that are a PUT on the full name whose request is not the resource: what Google sets from the
 * create-time inputs. Pub/Sub's Snapshot (pubsub.proto, CreateSnapshotRequest): `subscription` must exist
 * ("If the subscription does not exist, returns NOT_FOUND"), the snapshot retains its topic's messages, and
 * "a newly-created snapshot expires no later than 7 days from the time of its creation".
 */
const MADE_ON_NAME: Record<string, (sent: Json, stored: (name: string) => Json | undefined) => Json> = {
  "pubsub.googleapis.com/Snapshot": (sent, stored) => {
    const sub = String(sent.subscription ?? "");
    const subscription = stored(sub);
    if (!subscription)
      throw new GoogleApiError(404, "notFound", `Resource not found (resource=${sub}).`, "NOT_FOUND");
    return {
      topic: subscription.topic,
      expireTime: new Date(Date.now() + 7 * 24 * 3600 * 1000).toISOString(),
    };
  },
};

const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

export interface GoogleGenericFake extends FakeHttpServer {
  /**
   * What Google makes itself, for a kind without a create (a folder's AutokeyConfig, made with the folder;
   * a KMS RetiredResource; a Compute MachineType, by its self path `/compute/v1/projects/p/zones/z/machineTypes/m`):
   * the resource `name` of the generated kind of `type`, as Google would answer it.
   */
  made(type: string, name: string, resource?: Json): void;
  /** The updates asked for `name` so far, each the paths it named (the update mask), oldest first. */
  updatesOf(name: string): string[][];
  /** Changes a stored resource as a console user would (drift), by full name / Compute self path. */
  mutate(name: string, set: Json): void;
  resource(name: string): Json | undefined;
  /** Every stored resource, for the Cloud Asset fake's index. */
  assets(): FakeAsset[];
  /** Looks an operation needs before it is done (0: done at once). */
  opPolls: number;
  /** The request a create naming its resource in a statement (Spanner's CreateDatabase) sent, by full name. */
  createRequestOf(name: string): Json | undefined;
  /**
   * A database's statements (Spanner's DDL) by full name: those applied (create's and appended), every append
   * request received (UpdateDatabaseDdl's body) and the statements each applied operation appended.
   */
  ddlOf(name: string): { statements: string[]; requests: Json[]; applied: string[][] };
}

export async function startGoogleGenericFake(
  opts: { port?: number; dir?: string; opPolls?: number } = {},
): Promise<GoogleGenericFake> {
  const catalog = loadGoogleCatalog(opts.dir);
  const specs = new Map<string, GoogleKindSpec>();
  const routesByApi = new Map<string, Route[]>();
  const spec = (file: string) => {
    let s = specs.get(file);
    if (!s) {
      const e = catalog.kinds.find((k) => k.file === file);
      if (!e) throw new Error(file);
      s = loadGoogleSpec(e, opts.dir);
      specs.set(file, s);
    }
    return s;
  };
  const specOfType = (type: string) => {
    const e = catalog.kinds.find((k) => k.typeName === type);
    return e ? spec(e.file) : undefined;
  };
  // Routes are built per API on its first request: 690 kinds' specs are not read up front.
  const routesOf = (api: string): Route[] => {
    const known = routesByApi.get(api);
    if (known) return known;
    const routes: Route[] = [];
    for (const e of catalog.kinds) {
      const s = spec(e.file);
      if (s.google.host.replace(/\.googleapis\.com$/, "") !== api) continue;
      const g = s.google;
      for (const [op, h] of [
        ["create", g.create],
        ["get", g.get],
        ["update", g.update],
        ["delete", g.delete],
        ["list", g.list],
        ["appendStatements", g.appendStatements],
        ["readStatements", g.appendStatements?.read],
      ] as const) {
        if (!h) continue;
        routes.push({ spec: s, op, method: h.m.toUpperCase(), ...templateRe(h.p) });
      }
    }
    routesByApi.set(api, routes);
    return routes;
  };

  const store = new Map<string, Stored>();
  /** Every update asked for: the resource and the paths its mask (or Compute's body) names. */
  const updates: Array<{ name: string; paths: string[] }> = [];
  /** What a create made beside its resource (a Bigtable instance's clusters), deleted with it. */
  const madeWith = new Map<string, string[]>();
  const ops = new Map<string, PendingOp>();
  let seq = 0;
  const state = { opPolls: opts.opPolls ?? 1 };

  const bad = (message: string) => new GoogleApiError(400, "badRequest", message, "INVALID_ARGUMENT");

  /** Validates a body against the kind's fields: unknown and output-only fields are refused, at any depth. */
  const validate = (s: GoogleKindSpec, body: Json, path = "", props?: Record<string, AwsccProp>) => {
    const here = props ?? { ...s.properties };
    // `sensitiveLabels` is driftless's own field (merged into the map on the wire), not Google's.
    if (!props && s.google.sensitiveLabels) delete here.sensitiveLabels;
    // A wrapped create's id (`accountId`) is the request's, beside the resource, never one of its fields; so
    // are the create-time inputs beside it (Bigtable's `clusters`).
    if (!props && s.google.createId) delete here[s.google.createId];
    if (!props && s.google.create?.wrap) for (const f of s.google.createFields ?? []) delete here[f];
    for (const [k, v] of Object.entries(body)) {
      const at = path ? `${path}.${k}` : k;
      if (!props && s.attributes[k]) {
        // Compute's fingerprints are echoed on patch; everything else the server sets is refused.
        if (/ingerprint$/.test(k) || (s.google.family === "resource" && k === "name")) continue;
        throw bad(
          `Invalid value at '${s.kind.toLowerCase()}.${at}': field is OUTPUT_ONLY and cannot be set.`,
        );
      }
      const p = here[k];
      if (!p)
        throw bad(
          `Invalid JSON payload received. Unknown name "${k}" at '${s.kind.toLowerCase()}${path ? `.${path}` : ""}': Cannot find field.`,
        );
      check(s, p.s, v, at);
      linkCheck(s, at, v);
    }
  };
  // A field naming another Compute resource takes its URL, full or partial (Compute's own error otherwise).
  const linkCheck = (s: GoogleKindSpec, at: string, v: unknown) => {
    const ref = s.google.refs?.find(
      (r) => r.family === "compute" && (r.at ? `${r.at}.${r.field}` : r.field) === at,
    );
    if (!ref || s.google.family !== "compute" || ref.from === "name") return;
    for (const x of Array.isArray(v) ? v : [v])
      if (typeof x !== "string" || !COMPUTE_URL.test(x))
        throw bad(`Invalid value for field 'resource.${at}': '${String(x)}'. The URL is malformed.`);
  };
  const check = (s: GoogleKindSpec, n: AwsccNode, v: unknown, at: string) => {
    if (v === null || v === undefined) return;
    if (n.t === "array" && Array.isArray(v)) for (const x of v) check(s, n.of, x, at);
    else if (n.t === "map" && isObject(v)) for (const x of Object.values(v)) check(s, n.of, x, at);
    else if (n.t === "ref" && isObject(v) && s.defs[n.ref]) validate(s, v, at, s.defs[n.ref]?.props);
    // A message sent as anything but an object: Google's JSON parser names the field and the value.
    else if (n.t === "ref" && s.defs[n.ref] && !isObject(v))
      throw bad(`Invalid value at '${at}' (${n.ref}), ${JSON.stringify(v)}`);
  };

  const valueAt = (o: Json, path: string): unknown =>
    path
      .split(".")
      .reduce<unknown>(
        (x, k) =>
          isObject(x) ? x[k] : Array.isArray(x) ? x.map((i) => (isObject(i) ? i[k] : undefined)) : undefined,
        o,
      );

  /**
   * What Google answers for a map's credential keys (NotificationChannel's `labels.auth_token`): obfuscated,
   * only the last characters shown ("Fields containing sensitive information … are only partially populated
   * on retrieval", Magic Modules' NotificationChannel).
   */
  const answer = (s: GoogleKindSpec, r: Json): Json => {
    const sens = s.google.sensitiveLabels;
    const map = sens ? r[sens.map] : undefined;
    if (!sens || !isObject(map)) return r;
    const keys = new Set(Object.values(sens.keys));
    const shown = Object.fromEntries(
      Object.entries(map).map(([k, v]) => [k, keys.has(k) ? `${"*".repeat(16)}${String(v).slice(-4)}` : v]),
    );
    return { ...r, [sens.map]: shown };
  };

  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

  const startOp = (
    s: GoogleKindSpec,
    scope: { parent?: string; compute?: { project: string; region?: string; zone?: string } },
    target: string,
    finish: () => Json | undefined,
    kind: string,
    creating?: Stored,
    named?: string,
  ): Json => {
    const id = named?.split("/").at(-1) ?? `operation-${Date.now()}-${++seq}`;
    const compute = s.google.family === "compute";
    const op: Json = compute
      ? {
          kind: "compute#operation",
          name: id,
          operationType: kind,
          status: "RUNNING",
          targetLink: target,
          insertTime: now(),
        }
      : {
          // Resource Manager v3 (a top-level collection): Google's `operations/<id>`.
          name:
            named ??
            (s.google.parent.inBody
              ? `operations/${id}`
              : `${scope.parent?.split("/").slice(0, 4).join("/") ?? "projects/-"}/operations/${id}`),
          done: false,
          metadata: { target, verb: kind },
        };
    const pending: PendingOp = {
      op,
      countdown: new Countdown(state.opPolls),
      finish,
      target,
      ...(creating ? { creating } : {}),
    };
    ops.set(String(op.name).split("/").at(-1) as string, pending);
    if (state.opPolls === 0) settle(pending);
    return { ...op };
  };

  const settle = (p: PendingOp) => {
    if (p.op.done === true || p.op.status === "DONE") return;
    let result: Json | undefined;
    let error: GoogleApiError | undefined;
    try {
      result = p.finish();
    } catch (err) {
      if (!(err instanceof GoogleApiError)) throw err;
      error = err;
    }
    if ("status" in p.op) {
      p.op.status = "DONE";
      if (error) p.op.error = { errors: [{ code: error.reason, message: error.message }] };
    } else {
      p.op.done = true;
      if (error) p.op.error = { code: 3, message: error.message };
      else if (result) p.op.response = result;
    }
  };

  const readOp = (id: string): Json | undefined => {
    const p = ops.get(id);
    if (!p) return undefined;
    if (p.countdown.tick()) settle(p);
    return { ...p.op };
  };

  const notFound = (what: string) =>
    new GoogleApiError(404, "notFound", `The resource '${what}' was not found`, "NOT_FOUND");

  const route = (req: FakeRequest): Json | undefined => {
    const [api, ...rest] = req.seg;
    if (!api) return undefined;
    const path = `/${rest.join("/")}`;
    // Operations: google.longrunning (…/operations/<id>) and Compute's scoped ones.
    if (req.method === "GET" && rest.at(-2) === "operations") {
      const op = readOp(rest.at(-1) as string);
      if (!op) throw notFound(path);
      return op;
    }
    const agg = /^\/compute\/v1\/projects\/([^/]+)\/aggregated\/([A-Za-z]+)$/.exec(path);
    if (api === "compute" && req.method === "GET" && agg)
      return aggregatedList(agg[1] as string, agg[2] as string, req);
    for (const r of routesOf(api)) {
      if (r.method !== req.method) continue;
      const m = r.re.exec(path);
      if (!m) continue;
      const vals = Object.fromEntries(r.vars.map((v, i) => [v, m[i + 1] as string]));
      return handle(r, vals, req);
    }
    // A resource's path with a method its API does not publish (a DELETE of a Cloud KMS KeyRing): Google's
    // front end answers 404 for a URL no method is bound to, whether or not the resource exists.
    if (routesOf(api).some((r) => r.re.test(path)))
      throw new GoogleApiError(
        404,
        "notFound",
        `The requested URL ${path} was not found on this server. That's all we know.`,
        "NOT_FOUND",
      );
    return undefined;
  };

  /**
   * A create of options: the request message's fields only (anything else is an unknown name, as Google's
   * JSON parser says; an enum outside its values is refused), under a parent that exists. Its answer holds
   * what Google answers only once; the stored resource, read by get and list, never does.
   */
  const createOptions = (s: GoogleKindSpec, parent: string, sent: Json): Json => {
    const fields = s.google.createFields ?? [];
    for (const [k, v] of Object.entries(sent)) {
      if (!fields.includes(k))
        throw bad(`Invalid JSON payload received. Unknown name "${k}": Cannot find field.`);
      const allowed = s.properties[k]?.enum;
      if (allowed && !allowed.includes(String(v)))
        throw bad(`Invalid value at '${k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}', "${String(v)}"`);
    }
    if (s.google.parent.explicit && !store.has(canon(parent))) throw notFound(parent);
    const made = MADE[s.typeName]?.(canon(parent), sent, ++seq) ?? {
      name: `${canon(parent)}/${s.google.collection}/gen-${++seq}`,
      set: {},
      once: {},
    };
    const resource: Json = { name: made.name, ...structuredClone(sent), ...made.set };
    for (const k of Object.keys(made.once)) delete resource[k];
    store.set(made.name, { spec: s, resource });
    return { ...answer(s, structuredClone(resource)), ...made.once };
  };

  /**
   * A create naming the resource in a statement (Spanner's CreateDatabase): the request's own fields only
   * (anything else an unknown name), the statement `CREATE DATABASE <id>` with the id quoted as its dialect
   * does (GoogleSQL backticks, PostgreSQL double quotes; bare only where it needs none) and of the proto's form
   * (`[a-z][a-z0-9_\-]*[a-z0-9]`, 2–30 characters), the inputs checked as the proto types them; a long-running
   * create whose Database answers the dialect (GOOGLE_STANDARD_SQL by default) and the encryption it was given.
   */
  const statementRequests = new Map<string, Json>();
  const ddl = new Map<string, { statements: string[]; requests: Json[]; applied: string[][] }>();
  const createByStatement = (s: GoogleKindSpec, parent: string, sent: Json, field: string): Json => {
    const inputs = s.google.createFields ?? [];
    for (const [k, v] of Object.entries(sent)) {
      if (k !== field && !inputs.includes(k))
        throw bad(`Invalid JSON payload received. Unknown name "${k}": Cannot find field.`);
      const p = s.properties[k];
      if (p && k !== field) check(s, p.s, v, k);
      if (p?.enum && !p.enum.includes(String(v)))
        throw bad(`Invalid value at '${k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}', "${String(v)}"`);
    }
    const statement = sent[field];
    if (typeof statement !== "string") throw bad(`Field violation: '${field}' is required.`);
    const dialect = String(sent.databaseDialect ?? "GOOGLE_STANDARD_SQL");
    const quote = dialect === "POSTGRESQL" ? '"' : "`";
    const m = /^\s*CREATE\s+DATABASE\s+(?:`([^`]*)`|"([^"]*)"|([^\s`"]+))\s*$/i.exec(statement);
    const quoted = m?.[1] ?? m?.[2];
    const id = quoted ?? m?.[3];
    if (!m || id === undefined || (quoted !== undefined && !statement.includes(`${quote}${quoted}${quote}`)))
      throw bad(`Error parsing Spanner DDL statement: ${statement} : Syntax error on line 1`);
    if (!/^[a-z][a-z0-9_-]*[a-z0-9]$/.test(id) || id.length < 2 || id.length > 30)
      throw bad(`Invalid database id: ${id}`);
    if (quoted === undefined && id.includes("-"))
      throw bad(
        `Error parsing Spanner DDL statement: ${statement} : Syntax error on line 1, column 17: Encountered '-'`,
      );
    const name = canon(`${parent}/${s.google.collection}/${id}`);
    if (store.has(name))
      throw new GoogleApiError(409, "alreadyExists", `Database already exists: ${name}`, "ALREADY_EXISTS");
    const resource: Json = {
      name,
      state: "READY",
      createTime: now(),
      databaseDialect: dialect,
      ...(isObject(sent.encryptionConfig)
        ? { encryptionConfig: structuredClone(sent.encryptionConfig) }
        : {}),
    };
    const finish = () => {
      store.set(name, { spec: s, resource });
      statementRequests.set(name, structuredClone(sent));
      const extra = Array.isArray(sent.extraStatements) ? sent.extraStatements.map(String) : [];
      ddl.set(name, { statements: extra, requests: [], applied: [] });
      return answer(s, structuredClone(resource));
    };
    return s.google.create?.lro ? startOp(s, { parent }, name, finish, "insert") : finish();
  };

  /**
   * Statements appended to a database (Spanner's UpdateDatabaseDdl, `{statements, operationId}`, long-running):
   * the request's own fields only; `operation_id` "a valid identifier: `[a-z][a-z0-9_]*`", and one already used
   * in the database refused ALREADY_EXISTS (its operation is `<database>/operations/<operation_id>`); each
   * statement must begin as DDL does, else the operation fails as Spanner's parser does and none is applied.
   * Spanner normalises what GetDatabaseDdl answers; the fake keeps the text as sent.
   */
  const appendStatements = (s: GoogleKindSpec, name: string, sent: Json): Json => {
    const known = ["database", "statements", "operationId", "protoDescriptors", "throughputMode"];
    for (const k of Object.keys(sent))
      if (!known.includes(k))
        throw bad(`Invalid JSON payload received. Unknown name "${k}": Cannot find field.`);
    const { statements, operationId } = sent;
    if (
      !Array.isArray(statements) ||
      statements.length === 0 ||
      statements.some((x) => typeof x !== "string")
    )
      throw bad("Field violation: 'statements' is required.");
    if (
      operationId !== undefined &&
      (typeof operationId !== "string" || !/^[a-z][a-z0-9_]*$/.test(operationId))
    )
      throw bad(`Invalid operation id: ${String(operationId)}`);
    const d = ddl.get(name) ?? { statements: [], requests: [], applied: [] };
    ddl.set(name, d);
    d.requests.push(structuredClone(sent));
    const opName = `${name}/operations/${operationId ?? `_auto_op_${++seq}`}`;
    const taken = ops.get(opName.split("/").at(-1) as string);
    if (taken && taken.op.name === opName)
      throw new GoogleApiError(409, "alreadyExists", `Operation ${opName} already exists.`, "ALREADY_EXISTS");
    // In order; the first that fails cancels the rest, those before it committed (metadata.commitTimestamps).
    const commitTimestamps: string[] = [];
    const finish = () => {
      const done: string[] = [];
      for (const x of statements as string[]) {
        if (!/^\s*(CREATE|ALTER|DROP|GRANT|REVOKE|RENAME|ANALYZE)\b/i.test(x)) {
          if (done.length > 0) d.applied.push(done);
          throw bad(`Error parsing Spanner DDL statement: ${x} : Syntax error on line 1, column 1`);
        }
        d.statements.push(x);
        done.push(x);
        commitTimestamps.push(now());
      }
      d.applied.push(done);
      return undefined;
    };
    const op = startOp(s, { parent: name }, name, finish, "updateDdl", undefined, opName);
    const meta = { database: name, statements: [...(statements as string[])], commitTimestamps };
    const held = ops.get(opName.split("/").at(-1) as string);
    if (held) held.op.metadata = { ...(held.op.metadata as Json), ...meta };
    return { ...op, metadata: { ...(op.metadata as Json), ...meta } };
  };

  const handle = (r: Route, vals: Record<string, string>, req: FakeRequest): Json => {
    const s = r.spec;
    const g = s.google;
    const compute = g.family === "compute";
    const sent = req.body;
    const wrap = r.op === "create" ? g.create?.wrap : r.op === "update" ? g.update?.wrap : undefined;
    // The whole request as the body: only the resource's field and the id (create) or the mask (update).
    if (wrap) {
      const allowed = [
        wrap,
        ...(r.op === "create"
          ? [camel(g.create?.idParam ?? ""), ...(g.createFields ?? [])]
          : [camel(g.update?.mask ?? "")]),
      ];
      for (const k of Object.keys(sent))
        if (!allowed.includes(k))
          throw bad(`Invalid JSON payload received. Unknown name "${k}": Cannot find field.`);
      if (sent[wrap] !== undefined && !isObject(sent[wrap]))
        throw bad(
          `Invalid JSON payload received. Unknown name "${wrap}": Proto field is not repeating, cannot start list.`,
        );
    }
    const body = wrap ? ((sent[wrap] as Json | undefined) ?? {}) : sent;
    if (r.op === "create" && g.parent.inBody) return createInBody(s, body);
    if (r.op === "create" && g.create?.namedBy === "path")
      return createOnName(s, decodeURIComponent(vals.name ?? ""), sent);
    if (r.op === "create" && g.create?.statement)
      return createByStatement(s, decodeURIComponent(vals.parent ?? ""), sent, g.create.statement);
    if (r.op === "create" && g.createFields && !wrap)
      return createOptions(s, decodeURIComponent(vals.parent ?? ""), sent);
    if (r.op === "create") {
      validate(s, body);
      // Create-time inputs beside the resource: the request's fields, checked as the proto types them.
      const inputs = wrap ? (g.createFields ?? []) : [];
      for (const f of inputs) {
        const p = s.properties[f];
        if (sent[f] === undefined && p?.req) throw bad(`Field violation: '${f}' is required.`);
        if (sent[f] !== undefined && p) check(s, p.s, sent[f], f);
      }
      const wrappedId = wrap ? sent[camel(g.create?.idParam ?? "")] : undefined;
      if (wrap && g.create?.idParam && (typeof wrappedId !== "string" || !wrappedId))
        throw bad(`Field violation: '${g.create?.idParam}' is required.`);
      // A create with no other place for the id takes it in the resource's REQUIRED `name`, the full name
      // (Translation's Glossary): missing, Google refuses the create; outside the parent, its name is invalid.
      // Not where the name's id is Google's own number (Merchant's DataSource: OUTPUT_ONLY `dataSourceId`).
      const fullNamed =
        !compute &&
        !wrap &&
        !g.create?.idParam &&
        g.create?.namedBy !== "field" &&
        g.create?.namedBy !== "path" &&
        s.attributes.name?.req === true &&
        !s.attributes[`${s.kind.charAt(0).toLowerCase()}${s.kind.slice(1)}Id`];
      if (fullNamed && (typeof body.name !== "string" || !body.name))
        throw fieldRequired(`${g.create?.body ?? ""}.name`);
      const under = `${vals.parent}/${g.collection}/`;
      if (
        fullNamed &&
        !(String(body.name).startsWith(under) && !String(body.name).slice(under.length).includes("/"))
      )
        throw bad(`Invalid resource name '${String(body.name)}': not a ${g.collection} of ${vals.parent}`);
      // The caller's id in the resource's own name (Logging's LogMetric): a short id, answered as sent.
      const id = fullNamed
        ? String(body.name).slice(under.length)
        : compute || g.create?.namedBy === "field"
          ? String(body.name ?? "")
          : typeof wrappedId === "string"
            ? wrappedId
            : (req.query.get(camel(g.create?.idParam ?? "")) ??
              req.query.get(g.create?.idParam ?? "") ??
              `gen-${++seq}`);
      if (!id) throw bad("Required field 'name' not specified");
      const missing = Object.entries(s.properties).filter(
        ([k, p]) => p.req && body[k] === undefined && k !== "name" && k !== g.createId && !inputs.includes(k),
      );
      if (missing.length > 0) throw bad(`Field violation: '${missing[0]?.[0]}' is required.`);
      const named = compute ? undefined : NAMED[s.typeName]?.(vals.parent ?? "", id, ++seq);
      if (typeof named === "string") throw bad(named);
      const name = compute
        ? `${path(vals, g.get?.p ?? "", id)}`
        : canon(named?.name ?? `${vals.parent}/${g.collection}/${id}`);
      if (store.has(name))
        throw new GoogleApiError(
          409,
          "alreadyExists",
          `The resource '${name}' already exists`,
          "ALREADY_EXISTS",
        );
      const resource: Json = {
        ...structuredClone(body),
        ...(compute
          ? {
              kind: `compute#${s.kind.charAt(0).toLowerCase()}${s.kind.slice(1)}`,
              id: String(1000 + seq),
              creationTimestamp: now(),
              selfLink: `https://compute.googleapis.com${name}`,
              ...(s.attributes.fingerprint ? { fingerprint: `fp-${seq}` } : {}),
            }
          : {
              name: g.create?.namedBy === "field" ? id : name,
              ...named?.set,
              ...(s.attributes.createTime ? { createTime: now() } : {}),
              ...(s.attributes.uid ? { uid: `uid-${seq}` } : {}),
            }),
      };
      const beside = MADE_BESIDE[s.typeName];
      const besideSpec = beside && specOfType(beside.type);
      const finish = () => {
        store.set(name, { spec: s, resource });
        if (beside && besideSpec) {
          const made = beside.made(name, sent);
          for (const [n, res] of made) store.set(n, { spec: besideSpec, resource: res });
          madeWith.set(
            name,
            made.map(([n]) => n),
          );
        }
        return answer(s, resource);
      };
      if (!g.create?.lro) return finish();
      return startOp(s, { parent: vals.parent }, name, finish, "insert");
    }
    if (r.op === "list") return list(s, vals, req);
    const raw =
      Object.entries(vals).find(([k]) => k === "name" || k.endsWith(".name") || k === g.nameField)?.[1] ??
      // A delete binding the name to its own variable (Spanner's DropDatabase `{database=…}`); so do
      // UpdateDatabaseDdl and GetDatabaseDdl (`{database=…}/ddl`).
      (["delete", "appendStatements", "readStatements"].includes(r.op) && Object.keys(vals).length === 1
        ? Object.values(vals)[0]
        : undefined) ??
      "";
    // Path segments are decoded once (gcp-fake-http): a name that holds escapes itself (a TagBinding's
    // `tagBindings/%2F%2F…/tagValues/1`, sent as `%252F…`) is not decoded again.
    const asked = compute ? path(vals, g.get?.p ?? "") : g.listObserved ? raw : decodeURIComponent(raw);
    // A project is named by its number or by its id (`projects/{project_id_or_number}`).
    const name =
      (g.parent.inBody && s.identifierField && byId(s, asked.split("/")[1] ?? "")) ||
      (compute ? asked : canon(asked));
    // Operations progress while the resource is read too: Google finishes them whether or not anyone polls.
    if (r.op === "get") for (const p of ops.values()) if (p.target === name && p.countdown.tick()) settle(p);
    const stored = store.get(name);
    if (!stored) throw notFound(name);
    if (r.op === "get") return answer(s, structuredClone(stored.resource));
    if (r.op === "readStatements") return { statements: [...(ddl.get(name)?.statements ?? [])] };
    if (r.op === "appendStatements") return appendStatements(s, name, sent);
    const soft = g.softDelete;
    if (soft && stored.resource.state === soft)
      throw new GoogleApiError(
        400,
        "failedPrecondition",
        `${s.kind} '${name}' is in state ${soft}: restore it (undelete) within 30 days of its deletion first`,
        "FAILED_PRECONDITION",
      );
    if (r.op === "delete") {
      if (g.parent.inBody) inUse(name);
      // Spanner refuses to drop a database whose drop protection is on (Database.enable_drop_protection).
      if (stored.resource.enableDropProtection === true)
        throw new GoogleApiError(
          400,
          "failedPrecondition",
          `${s.kind} ${name} has drop protection enabled: disable enable_drop_protection first`,
          "FAILED_PRECONDITION",
        );
      const finish = () => {
        // A soft delete: the resource stays, marked, for 30 days (GetProject / GetFolder still show it).
        if (soft) Object.assign(stored.resource, { state: soft, deleteTime: now(), updateTime: now() });
        else store.delete(name);
        ddl.delete(name);
        for (const n of madeWith.get(name) ?? []) store.delete(n);
        madeWith.delete(name);
        return soft ? structuredClone(stored.resource) : undefined;
      };
      if (!g.delete?.lro) {
        finish();
        return {};
      }
      return startOp(s, { parent: name }, name, finish, "delete");
    }
    // update
    validate(s, body);
    let paths: string[];
    if (compute) {
      if (s.attributes.fingerprint && body.fingerprint !== stored.resource.fingerprint)
        throw new GoogleApiError(
          412,
          "conditionNotMet",
          "Supplied fingerprint does not match current metadata fingerprint.",
          "FAILED_PRECONDITION",
        );
      paths = Object.keys(body).filter((k) => k !== "fingerprint");
    } else {
      const inBody = wrap ? sent[camel(g.update?.mask ?? "updateMask")] : undefined;
      const mask =
        (typeof inBody === "string" ? inBody : undefined) ??
        req.query.get(camel(g.update?.mask ?? "updateMask")) ??
        req.query.get("updateMask") ??
        "";
      // Without a mask (a PUT of the whole resource), its own `name` names it and is not a change.
      paths = mask ? mask.split(",") : Object.keys(body).filter((k) => k !== "name");
    }
    // Resource Manager: a parent changes only by MoveFolder / MoveProject, never by an update.
    if (g.parent.inBody && paths.includes("parent"))
      throw bad(`Invalid update mask path 'parent': use the move method to change a ${s.kind}'s parent.`);
    updates.push({ name, paths: [...paths] });
    for (const p of paths) {
      const top = p.split(".")[0] ?? "";
      if (s.attributes[top] && !/ingerprint$/.test(top))
        throw bad(`Invalid update mask path '${p}': field is OUTPUT_ONLY.`);
      if (!s.properties[top]) throw bad(`Invalid update mask path '${p}': unknown field.`);
      if (
        s.createOnly.some((c) => c === p || c.startsWith(`${p}.`) || p.startsWith(`${c}.`)) &&
        !same(valueAt(body, p), valueAt(stored.resource, p))
      )
        throw bad(`Invalid value at '${p}': field is IMMUTABLE and cannot be changed after creation.`);
    }
    const finish = () => {
      const res = stored.resource;
      for (const p of paths) {
        const parts = p.split(".");
        let into: Json = res;
        let from: Json = body;
        for (const k of parts.slice(0, -1)) {
          if (!isObject(into[k])) into[k] = {};
          into = into[k] as Json;
          from = isObject(from[k]) ? (from[k] as Json) : {};
        }
        const last = parts.at(-1) as string;
        if (from[last] === undefined) delete into[last];
        else into[last] = structuredClone(from[last]);
      }
      if (compute && s.attributes.fingerprint) res.fingerprint = `fp-${++seq}`;
      if (s.attributes.updateTime) res.updateTime = now();
      return answer(s, res);
    };
    if (!g.update?.lro) return finish();
    return startOp(s, { parent: name }, name, finish, "patch");
  };

  /**
   * A create that is a PUT on the full name (Pub/Sub's `PUT /v1/projects/p/snapshots/s`): the body only the
   * request's fields (the resource's own and the create-time inputs; anything else an unknown name, Google's
   * 400), the name a `<parent>/<collection>/<id>` of the kind, once (409 ALREADY_EXISTS). The inputs are the
   * request's, never stored as the resource's; what Google sets from them is (a Snapshot's topic).
   */
  const createOnName = (s: GoogleKindSpec, name: string, sent: Json): Json => {
    const g = s.google;
    // The request's own fields only: a resource field it does not carry (a Snapshot's topic) is unknown to it.
    for (const k of Object.keys(sent))
      if (!s.properties[k])
        throw bad(`Invalid JSON payload received. Unknown name "${k}": Cannot find field.`);
    validate(s, sent);
    const inputs = g.createFields ?? [];
    const missing = Object.entries(s.properties).filter(([k, p]) => p.req && sent[k] === undefined);
    if (missing.length > 0) throw bad(`Field violation: '${missing[0]?.[0]}' is required.`);
    const parts = name.split("/");
    if (parts.at(-2) !== g.collection || !parts.at(-1) || parts.length % 2 !== 0)
      throw bad(`Invalid resource name given (name=${name}).`);
    if (store.has(name))
      throw new GoogleApiError(
        409,
        "alreadyExists",
        `Resource already exists in the project (resource=${parts.at(-1)}).`,
        "ALREADY_EXISTS",
      );
    const made = MADE_ON_NAME[s.typeName]?.(sent, (n) => store.get(n)?.resource) ?? {};
    const own = Object.fromEntries(Object.entries(sent).filter(([k]) => !inputs.includes(k)));
    const resource: Json = { name, ...structuredClone(own), ...made };
    store.set(name, { spec: s, resource });
    return answer(s, structuredClone(resource));
  };

  /** Resource Manager v3's resources, top-level collections whose parent is a field: by `parent`. */
  const inBodyOf = (s: GoogleKindSpec, running = false) => [
    ...[...store.entries()].filter(([, v]) => v.spec === s).map(([k, v]) => [k, v.resource] as const),
    ...(running
      ? [...ops.values()].flatMap((p) =>
          p.creating?.spec === s && p.op.done !== true ? [[p.target, p.creating.resource] as const] : [],
        )
      : []),
  ];
  const active = (s: GoogleKindSpec, r: Json) => !s.google.softDelete || r.state !== s.google.softDelete;
  /** The stored name of a project by its id (Project's `projectId`), if one holds it. */
  const byId = (s: GoogleKindSpec, id: string) =>
    inBodyOf(s).find(([, r]) => r[s.identifierField as string] === id)?.[0];
  /** A project parent in Google's number form (`projects/<id>` → `projects/<number>`); others as they are. */
  const asNumber = (parent: string) => {
    const id = /^projects\/([^/]+)$/.exec(parent)?.[1];
    if (!id || /^\d+$/.test(id)) return parent;
    for (const [k, v] of store) if (v.spec.identifierField && v.resource.projectId === id) return k;
    return parent;
  };
  /**
   * A name under a project in Google's number form (`projects/<id>/locations/l/…` → `projects/<number>/…`)
   * where the fake knows the project (a Project made in it): Google takes either form in a request and, for
   * many APIs, answers the number (Secret Manager, Cloud Run). Others as they are.
   */
  const canon = (name: string) => {
    const m = /^projects\/([^/]+)(\/.+)$/.exec(name);
    return m ? `${asNumber(`projects/${m[1]}`)}${m[2]}` : name;
  };
  /** A resource with active children (a folder's folders and projects, a tag key's values) cannot go. */
  const inUse = (name: string) => {
    for (const [k, v] of store)
      if (v.resource.parent === name && active(v.spec, v.resource))
        throw new GoogleApiError(
          400,
          "failedPrecondition",
          `'${name}' cannot be deleted while it has active children (${k})`,
          "FAILED_PRECONDITION",
        );
  };
  /**
   * A create at a top-level collection with the parent in the body (`POST /v3/folders`): the parent must be
   * one of the kinds the type takes and, unless an organization, exist and be active; the name is
   * `<collection>/<number>`; a Project's id is unique for ever (a soft-deleted project's id answers
   * FAILED_PRECONDITION), a Folder's displayName among its active siblings (FAILED_PRECONDITION, as Google's
   * folder constraints are), a TagKey's / TagValue's shortName within its parent (ALREADY_EXISTS).
   */
  const createInBody = (s: GoogleKindSpec, body: Json): Json => {
    const g = s.google;
    validate(s, body);
    const missing = Object.entries(s.properties).filter(([k, p]) => p.req && body[k] === undefined);
    if (missing.length > 0) throw bad(`Field violation: '${missing[0]?.[0]}' is required.`);
    const parent = typeof body.parent === "string" ? body.parent : "";
    const kinds = g.parent.template.split("|");
    const fits = kinds.some((t) => {
      const [a, b] = [t.split("/"), parent.split("/")];
      return a.length === b.length && a.every((x, i) => (x === "*" ? Boolean(b[i]) : x === b[i]));
    });
    // A Project may have none (its parent is OPTIONAL): Google makes it without one for credentials that
    // belong to no organization, the fake's case.
    if (!fits && !(g.parent.optional && !parent))
      throw bad(`Invalid value at '${s.kind.toLowerCase()}.parent': must be one of ${kinds.join(", ")}.`);
    // A full resource name (a TagBinding's `//cloudresourcemanager.googleapis.com/projects/123`) names a
    // resource the fake need not hold (its projects are the ProviderConfig's); its tag value must exist.
    if (parent && !parent.startsWith("organizations/") && !parent.startsWith("//")) {
      const p = store.get(asNumber(parent));
      if (!p || !active(p.spec, p.resource)) throw notFound(parent);
    }
    if (s.typeName === TAG_BINDING && !store.has(String(body.tagValue)))
      throw notFound(String(body.tagValue));
    const id = s.identifierField ? String(body[s.identifierField] ?? "") : "";
    if (s.identifierField) {
      if (!id) throw bad(`Field violation: '${s.identifierField}' is required.`);
      const held = inBodyOf(s, true).find(([, r]) => r[s.identifierField as string] === id)?.[0];
      if (held && store.has(held) && !active(s, store.get(held)?.resource ?? {}))
        throw new GoogleApiError(
          400,
          "failedPrecondition",
          `The project id '${id}' belongs to a project pending deletion (${g.softDelete}); undelete it or choose another id.`,
          "FAILED_PRECONDITION",
        );
      if (held)
        throw new GoogleApiError(409, "alreadyExists", "Requested entity already exists", "ALREADY_EXISTS");
    }
    const unique = g.uniqueIn;
    if (
      unique &&
      inBodyOf(s, true).some(
        ([, r]) => r.parent === asNumber(parent) && r[unique] === body[unique] && active(s, r),
      )
    ) {
      const msg = `A ${s.kind} with ${unique} '${String(body[unique])}' already exists under ${parent}.`;
      throw g.softDelete
        ? new GoogleApiError(400, "failedPrecondition", msg, "FAILED_PRECONDITION")
        : new GoogleApiError(409, "alreadyExists", msg, "ALREADY_EXISTS");
    }
    // tag_bindings.proto: a TagBinding's name is `tagBindings/{full-resource-name}/{tag-value-name}`, the
    // resource's full name URL-encoded (`tagBindings/%2F%2Fcloudresourcemanager.googleapis.com%2Fprojects%2F123/tagValues/456`).
    const name =
      s.typeName === TAG_BINDING
        ? `${g.collection}/${encodeURIComponent(parent)}/${String(body.tagValue)}`
        : `${g.collection}/${100000 + ++seq}`;
    const parentShort = (() => {
      const p = store.get(asNumber(parent))?.resource;
      return typeof p?.namespacedName === "string" ? p.namespacedName : (parent.split("/")[1] ?? "");
    })();
    const resource: Json = {
      ...structuredClone(body),
      // Google keeps a project parent in its number form, whichever form was sent (terraform-provider-google
      // #14792: a TagKey created under projects/<id> answers projects/<number>).
      ...(parent ? { parent: asNumber(parent) } : {}),
      name,
      ...(g.softDelete ? { state: "ACTIVE" } : {}),
      ...(s.attributes.namespacedName ? { namespacedName: `${parentShort}/${String(body.shortName)}` } : {}),
      createTime: now(),
      updateTime: now(),
      etag: `W/"${seq}"`,
    };
    return startOp(
      s,
      {},
      name,
      () => {
        store.set(name, { spec: s, resource });
        return structuredClone(resource);
      },
      "create",
      { spec: s, resource },
    );
  };
  /** A list of a top-level collection under `?parent=` (required; deleted ones only with `showDeleted`). */
  const listInBody = (s: GoogleKindSpec, req: FakeRequest): Json => {
    const asked = req.query.get("parent");
    if (!asked) throw bad("Field violation: 'parent' is required.");
    const parent = asNumber(asked);
    // Operations progress while the collection is read too: Google finishes them whether or not anyone polls.
    for (const p of ops.values())
      if (p.target.startsWith(`${s.google.collection}/`) && p.countdown.tick()) settle(p);
    const deleted = req.query.get("showDeleted") === "true";
    const all = inBodyOf(s)
      .filter(([, r]) => r.parent === parent && (deleted || active(s, r)))
      .map(([, r]) => structuredClone(r));
    const size = Number(req.query.get("pageSize") || 0) || 50;
    const from = Number(req.query.get("pageToken") || 0);
    const page = all.slice(from, from + size);
    const next = from + size < all.length ? { nextPageToken: String(from + size) } : {};
    return page.length === 0
      ? next
      : { [s.google.listObserved?.field ?? s.google.collection]: page, ...next };
  };

  /**
   * A list page (AIP-132; AIP-159's `-` for every location): the parent's resources of this kind under the collection's name (Compute:
   * `items`), `pageSize` / `maxResults` and `pageToken` honoured, `nextPageToken` while more remain.
   */
  const list = (s: GoogleKindSpec, vals: Record<string, string>, req: FakeRequest): Json => {
    const g = s.google;
    if (g.parent.inBody) return listInBody(s, req);
    const compute = g.family === "compute";
    const prefix = compute
      ? `${(g.list?.p ?? "").replace(/\{(\w+)\}/g, (_, v: string) => vals[v] ?? "")}/`
      : `${canon(decodeURIComponent(vals.parent ?? ""))}/${g.collection}/`;
    // AIP-159: a `-` segment of the parent reads as every value of it (every location).
    const under = new RegExp(
      `^${prefix
        .split("/")
        .map((seg) => (seg === "-" ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
        .join("/")}[^/]+$`,
    );
    const all = [...store.entries()]
      .filter(([k, v]) => v.spec === s && under.test(k))
      .map(([, v]) => answer(s, structuredClone(v.resource)));
    const size = Number(req.query.get(compute ? "maxResults" : "pageSize") || 0) || 50;
    const from = Number(req.query.get("pageToken") || 0);
    const page = all.slice(from, from + size);
    const next = from + size < all.length ? { nextPageToken: String(from + size) } : {};
    return page.length === 0
      ? next
      : { [compute ? "items" : (g.listObserved?.field ?? g.collection)]: page, ...next };
  };

  /**
   * Compute's aggregatedList of a collection (`/compute/v1/projects/{p}/aggregated/<collection>`, only where
   * the API has one): every scope's resources of the collection, `items` keyed by scope (`regions/<r>`,
   * `zones/<z>`, `global`) each holding `{<collection>: [...]}`; `maxResults` (≤ 500) across scopes,
   * `pageToken`, `nextPageToken`, `unreachables: []`. A `filter` or `orderBy` is refused, never ignored.
   */
  const aggregatedList = (project: string, collection: string, req: FakeRequest): Json | undefined => {
    const specs = new Set(
      routesOf("compute")
        .map((r) => r.spec)
        .filter((x) => x.google.collection === collection),
    );
    if (![...specs].some((x) => x.google.aggregated?.p.endsWith(`/aggregated/${collection}`)))
      return undefined;
    if (req.query.get("filter") || req.query.get("orderBy"))
      throw bad("The fake answers aggregatedList without filter or orderBy.");
    const max = Number(req.query.get("maxResults") || 500);
    if (!Number.isInteger(max) || max < 0 || max > 500)
      throw bad(
        `Invalid value for field 'maxResults': '${req.query.get("maxResults")}'. Must be in the range [0, 500].`,
      );
    const scoped = [...store.entries()]
      .filter(([k, v]) => specs.has(v.spec) && k.startsWith(`/compute/v1/projects/${project}/`))
      .map(([k, v]) => {
        const rest = k.split("/").slice(5);
        return { scope: rest[0] === "global" ? "global" : `${rest[0]}/${rest[1]}`, resource: v.resource };
      })
      .sort((a, b) => (`${a.scope}/${a.resource.name}` < `${b.scope}/${b.resource.name}` ? -1 : 1));
    const from = Number(req.query.get("pageToken") || 0);
    const page = scoped.slice(from, from + (max || 500));
    const items: Record<string, Json> = {};
    for (const { scope, resource } of page) {
      items[scope] ??= { [collection]: [] };
      (items[scope][collection] as Json[]).push(structuredClone(resource));
    }
    return {
      kind: `compute#${singular(collection)}AggregatedList`,
      id: `projects/${project}/aggregated/${collection}`,
      items,
      selfLink: `https://compute.googleapis.com/compute/v1/projects/${project}/aggregated/${collection}`,
      unreachables: [],
      ...(from + (max || 500) < scoped.length ? { nextPageToken: String(from + (max || 500)) } : {}),
    };
  };

  /** A Compute resource's path (its key) from the get template's values. */
  const path = (vals: Record<string, string>, template: string, id?: string) => {
    const names = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
    const last = names.at(-1) as string;
    return template.replace(/\{(\w+)\}/g, (_, v: string) => (v === last && id ? id : (vals[v] ?? "")));
  };

  const assets = () =>
    [...store.entries()].map(([name, { spec: s, resource }]) =>
      s.google.family === "compute"
        ? computeAsset(name, s.kind, resource)
        : namedAsset(s.google.host, s.typeName, name, resource),
    );
  const server = await startFakeHttp({
    ...(opts.port !== undefined ? { port: opts.port } : {}),
    prefixes: [],
    name: "Google APIs (generic)",
    assets,
    keyOf: (req) =>
      `${req.method} ${req.seg.slice(0, 1).join("")} ${req.seg.at(-2) === "operations" ? "operations" : ((req.seg.length % 2 === 0 ? req.seg.at(-1) : req.seg.at(-2)) ?? "")}`,
    route,
  });
  // Object.assign copies an accessor's value, not the accessor: opPolls is defined on the result after it.
  const fake = Object.assign(server, {
    made(type: string, name: string, resource: Json = {}) {
      // Compute: by its self path, of the kind whose get reads it (DiskType and RegionDiskType share a type).
      const s = name.startsWith("/compute/")
        ? catalog.kinds
            .filter((k) => k.typeName === type)
            .map((k) => spec(k.file))
            .find((x) => x.google.get !== undefined && templateRe(x.google.get.p).re.test(name))
        : specOfType(type);
      if (!s || s.google.create) throw new Error(`${type} is not a generated kind Google makes itself`);
      const own =
        s.google.family === "compute"
          ? {
              name: name.split("/").at(-1),
              // The message's name (`compute#diskType` for a regional one too), as Google answers it.
              kind: `compute#${type.charAt(type.indexOf("/") + 1).toLowerCase()}${type.slice(type.indexOf("/") + 2)}`,
              id: String(1000 + ++seq),
              creationTimestamp: now(),
              selfLink: `https://compute.googleapis.com${name}`,
            }
          : { name };
      store.set(name, { spec: s, resource: { ...structuredClone(resource), ...own } });
    },
    updatesOf: (name: string) => updates.filter((u) => u.name === name).map((u) => u.paths),
    createRequestOf: (name: string) => structuredClone(statementRequests.get(name)),
    ddlOf: (name: string) => structuredClone(ddl.get(name) ?? { statements: [], requests: [], applied: [] }),
    mutate(name: string, set: Json) {
      const s = store.get(name);
      if (!s) throw new Error(`no resource ${name}`);
      Object.assign(s.resource, structuredClone(set));
    },
    resource: (name: string) => structuredClone(store.get(name)?.resource),
    assets,
  });
  return Object.defineProperty(fake, "opPolls", {
    get: () => state.opPolls,
    set: (n: number) => {
      state.opPolls = n;
    },
    enumerable: true,
  }) as GoogleGenericFake;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { port: { type: "string", default: "0" }, "op-polls": { type: "string", default: "1" } },
  });
  // The kinds must exist before a fake can serve them (npm ci and npm test make them too).
  generateGcp();
  const fake = await startGoogleGenericFake({
    port: Number(values.port),
    opPolls: Number(values["op-polls"]),
  });
  process.stdout.write(`${JSON.stringify({ ready: true, url: `${fake.url}/{api}` })}\n`);
  const stop = () => void fake.close().then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}
