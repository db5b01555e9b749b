// Wire-protocol fake of the Cloud SQL Admin API v1beta4 (instances, databases, users, operations), so
// driftless's REST calls (and @google-cloud/sql's REST transport, enums as numbers) run against it
// unchanged. No emulator of Cloud SQL exists. What it keeps of the real API:
// - URL shapes `/sql/v1beta4/projects/{p}/instances[/{i}[/databases|users]]`, `/operations/{op}` (also
//   under `/v1/`), and `$alt=json;enum-encoding=int`: enum fields arrive as numbers and are read with the
//   published API definition (the client's own protos.json); answers use enum names, which it accepts.
// - Writes answer a `sql#operation` PENDING → RUNNING → DONE, moved on by polls (reads of the operation
//   or of its instance), never by the clock, so tests run in milliseconds.
// - An inserted instance is PENDING_CREATE for `createPolls` reads, then RUNNABLE with its IP addresses
//   and server CA certificate; a deleted one is PENDING_DELETE for `deletePolls` reads, then 404.
// - Errors in Google's JSON shape: 409 instanceAlreadyExists, 404 instanceDoesNotExist, 409
//   operationInProgress while a write is running on the instance, 400 for a tier, version or region it
//   refuses, 429 RESOURCE_EXHAUSTED (failNext), an operation DONE with an error (failNextCreate).
// Simplifications (documented, not hidden): settings a PATCH sends show at once (the real API shows them
// when its operation is DONE); the server CA certificate is a random PEM body, not a parseable X.509.
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { type FakeAsset, labelsOf } from "./gcp-assets.ts";
import {
  Countdown,
  type FakeHttpServer,
  type FakeRequest,
  GoogleApiError,
  type Json,
  now,
  startFakeHttp,
} from "./gcp-fake-http.ts";

const API_PACKAGE = "google.cloud.sql.v1beta4";

export interface SqlFakeOptions {
  port?: number;
  /** Reads an inserted instance stays PENDING_CREATE (default 2). */
  createPolls?: number;
  /** Reads a deleted instance stays PENDING_DELETE (default 1). */
  deletePolls?: number;
  /** Reads an operation takes to be DONE (default 1: PENDING, then DONE on the next look). */
  operationPolls?: number;
  /**
   * Whether a network (projects/P/global/networks/N) has a private services connection: without one an
   * instance with a private IP is refused, as Cloud SQL does. Default: every network has one.
   */
  peered?: (network: string) => boolean;
}

interface Instance {
  project: string;
  doc: Json;
  creating: Countdown;
  deleting?: Countdown;
  /** The private-IP range the fake draws from once RUNNABLE. */
  privateIp?: string;
  /** Test-only: what the root user's password was last set to (never answered on the wire). */
  passwords: Map<string, string>;
  databases: Map<string, Json>;
  users: Map<string, Json>;
  failCreate?: { code: string; message: string };
}

interface Operation {
  doc: Json;
  countdown: Countdown;
  /** Runs once, when the operation turns DONE. */
  finish?: () => void;
  instance: string;
}

export interface SqlFake extends FakeHttpServer {
  /** The instance as the API shows it, or undefined. */
  instance(project: string, name: string): Json | undefined;
  /** The password last set for a user (rootPassword on insert, users.insert/update), for assertions. */
  passwordOf(project: string, instance: string, user: string): string | undefined;
  /** Makes an instance behind driftless's back (already RUNNABLE). */
  seedInstance(project: string, name: string, body: Json): Json;
  /** Changes an instance's settings behind driftless's back. */
  patchSettings(project: string, name: string, settings: Json): void;
  /** The next insert of `name` answers an operation that ends DONE with this error; the instance is FAILED. */
  failNextCreate(name: string, code: string, message: string): void;
  /** Every instance, for the Cloud Asset fake's index (its labels are `settings.userLabels`). */
  assets(): FakeAsset[];
}

type ProtoNode = {
  nested?: Record<string, ProtoNode>;
  fields?: Record<string, ProtoField>;
  values?: Record<string, number>;
};
type ProtoField = { type: string; rule?: string; keyType?: string };

const protos = createRequire(import.meta.url)("@google-cloud/sql/build/protos/protos.json") as ProtoNode;

/** The proto node of a full name (a.b.C.D), or undefined. */
function nodeOf(full: string): ProtoNode | undefined {
  let n: ProtoNode | undefined = protos;
  for (const part of full.split(".")) n = n?.nested?.[part];
  return n;
}

/** Resolves a field's type the way protobuf does: innermost scope first. */
function resolveType(scope: string, type: string): { name: string; node: ProtoNode } | undefined {
  const parts = scope.split(".");
  for (let i = parts.length; i >= 0; i--) {
    const name = [...parts.slice(0, i), type].join(".");
    const node = nodeOf(name);
    if (node) return { name, node };
  }
  return undefined;
}

/** Enum numbers (enum-encoding=int) → names, through a message of the API, in place. */
function enumNames(typeName: string, value: unknown): unknown {
  const node = nodeOf(typeName);
  if (!node?.fields || value === null || typeof value !== "object") return value;
  const o = value as Json;
  for (const [field, def] of Object.entries(node.fields)) {
    if (!(field in o) || def.keyType) continue;
    const t = resolveType(typeName, def.type);
    if (!t) continue;
    const one = (v: unknown) => {
      if (t.node.values && typeof v === "number")
        return Object.entries(t.node.values).find(([, n]) => n === v)?.[0] ?? v;
      return t.node.fields ? enumNames(t.name, v) : v;
    };
    o[field] = Array.isArray(o[field]) ? (o[field] as unknown[]).map(one) : one(o[field]);
  }
  return o;
}

const TIERS =
  /^(db-custom-\d+-\d+|db-f1-micro|db-g1-small|db-perf-optimized-N-\d+|db-n1-(standard|highmem)-\d+)$/;
const REGIONS = new Set([
  "us-central1",
  "us-east1",
  "us-east4",
  "us-west1",
  "europe-west1",
  "europe-west3",
  "europe-west4",
  "asia-east1",
  "asia-northeast1",
]);
const NAME = /^[a-z]([-a-z0-9]{0,96}[a-z0-9])?$/;
const NETWORK = /^projects\/([^/]+)\/global\/networks\/([^/]+)$/;

const notFound = () =>
  new GoogleApiError(404, "instanceDoesNotExist", "The Cloud SQL instance does not exist.");
const invalid = (message: string) => new GoogleApiError(400, "invalid", `Invalid request: ${message}`);
const inProgress = () =>
  new GoogleApiError(
    409,
    "operationInProgress",
    "Operation failed because another operation was already in progress.",
    "ABORTED",
  );

const merge = (target: Json, patch: Json): Json => {
  const out: Json = { ...target };
  for (const [k, v] of Object.entries(patch)) {
    const cur = out[k];
    // Labels are replaced whole; nested settings blocks merge field by field.
    out[k] =
      k !== "userLabels" && v && typeof v === "object" && !Array.isArray(v) && cur && typeof cur === "object"
        ? merge(cur as Json, v as Json)
        : v;
  }
  return out;
};

/** A stable fake public IP and private IP per instance name. */
function ipsOf(name: string) {
  const h = createHash("sha256").update(name).digest();
  return {
    public: `34.${h[0]}.${h[1]}.${((h[2] ?? 0) % 250) + 2}`,
    private: `10.${h[3]}.${h[4]}.${((h[5] ?? 0) % 250) + 2}`,
  };
}

function caCertOf(name: string): Json {
  const body = randomBytes(600)
    .toString("base64")
    .replace(/(.{64})/g, "$1\n");
  return {
    kind: "sql#sslCert",
    certSerialNumber: "0",
    cert: `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----`,
    commonName: `C=US,O=Google\\, Inc,CN=Google Cloud SQL Server CA,dnQualifier=${randomUUID()}`,
    sha1Fingerprint: createHash("sha1").update(body).digest("hex"),
    instance: name,
    createTime: now(),
    expirationTime: new Date(Date.now() + 10 * 365 * 86400_000).toISOString(),
  };
}

export async function startSqlFake(opts: SqlFakeOptions = {}): Promise<SqlFake> {
  const instances = new Map<string, Instance>();
  const operations = new Map<string, Operation>();
  const failCreates = new Map<string, { code: string; message: string }>();
  let base = "";
  const ikey = (p: string, i: string) => `${p}/${i}`;

  const running = (project: string, instance: string) =>
    [...operations.values()].some((o) => o.instance === ikey(project, instance) && o.doc.status !== "DONE");

  const settleOp = (op: Operation) => {
    if (op.doc.status === "DONE") return;
    if (op.countdown.tick()) {
      op.doc.status = "DONE";
      op.doc.endTime = now();
      op.finish?.();
    } else op.doc.status = "RUNNING";
  };
  const settleOpsOf = (project: string, instance: string) => {
    for (const op of operations.values()) if (op.instance === ikey(project, instance)) settleOp(op);
  };

  const operation = (
    project: string,
    instance: string,
    type: string,
    finish?: () => void,
    polls = opts.operationPolls ?? 1,
  ): Json => {
    const id = randomUUID();
    const doc: Json = {
      kind: "sql#operation",
      name: id,
      operationType: type,
      status: "PENDING",
      targetId: instance,
      targetProject: project,
      targetLink: `${base}/sql/v1beta4/projects/${project}/instances/${instance}`,
      selfLink: `${base}/sql/v1beta4/projects/${project}/operations/${id}`,
      insertTime: now(),
      startTime: now(),
      user: "driftless@fake.iam.gserviceaccount.com",
    };
    const op: Operation = { doc, countdown: new Countdown(polls), instance: ikey(project, instance) };
    if (finish) op.finish = finish;
    operations.set(`${project}/${id}`, op);
    return doc;
  };

  /** One read of an instance: its create or delete moves on. Undefined once a delete is through. */
  const look = (project: string, name: string): Instance | undefined => {
    const inst = instances.get(ikey(project, name));
    if (!inst) return undefined;
    settleOpsOf(project, name);
    if (inst.deleting) {
      if (inst.deleting.tick()) {
        instances.delete(ikey(project, name));
        return undefined;
      }
      return inst;
    }
    if (inst.doc.state === "PENDING_CREATE" && inst.creating.tick()) {
      if (inst.failCreate) inst.doc.state = "FAILED";
      else becomeRunnable(inst);
    }
    return inst;
  };

  const becomeRunnable = (inst: Instance) => {
    const doc = inst.doc;
    const settings = doc.settings as Json;
    const ip = (settings.ipConfiguration ?? {}) as Json;
    const ips = ipsOf(String(doc.name));
    const addresses: Json[] = [];
    if (ip.ipv4Enabled !== false) addresses.push({ type: "PRIMARY", ipAddress: ips.public });
    if (ip.privateNetwork) addresses.push({ type: "PRIVATE", ipAddress: ips.private });
    doc.state = "RUNNABLE";
    doc.ipAddresses = addresses;
    doc.serverCaCert = caCertOf(String(doc.name));
    doc.gceZone = `${doc.region}-a`;
  };

  const mustGet = (project: string, name: string) => {
    const inst = look(project, name);
    if (!inst) throw notFound();
    return inst;
  };

  const mustBeRunnable = (inst: Instance) => {
    if (inst.doc.state !== "RUNNABLE") throw invalid("Invalid request since instance is not running.");
  };

  const instanceDoc = (project: string, body: Json): Json => {
    const name = body.name;
    if (typeof name !== "string" || !NAME.test(name))
      throw invalid(`instance name (${String(name)}) is invalid.`);
    const version = body.databaseVersion;
    if (typeof version !== "string" || version === "SQL_DATABASE_VERSION_UNSPECIFIED")
      throw invalid("Database version is required.");
    const region = String(body.region ?? "us-central1");
    if (!REGIONS.has(region)) throw invalid(`Invalid region (${region}).`);
    const settings = (body.settings ?? {}) as Json;
    if (typeof settings.tier !== "string" || !TIERS.test(settings.tier))
      throw invalid(`Invalid Tier (${String(settings.tier)}) for (${version}) Edition (ENTERPRISE).`);
    const ip = (settings.ipConfiguration ?? {}) as Json;
    if (ip.privateNetwork !== undefined) {
      const m = NETWORK.exec(String(ip.privateNetwork));
      if (!m) throw invalid(`Invalid private network (${String(ip.privateNetwork)}).`);
      if (opts.peered && !opts.peered(String(ip.privateNetwork)))
        throw invalid(
          `Incorrect Service Networking config for instance: ${project}:${name}:NETWORK_NOT_PEERED.`,
        );
    }
    if (ip.ipv4Enabled === false && ip.privateNetwork === undefined)
      throw invalid("At least one of Public IP or Private IP or PSC connectivity must be enabled.");
    const defaults: Json = {
      kind: "sql#settings",
      settingsVersion: "1",
      tier: settings.tier,
      dataDiskSizeGb: "10",
      dataDiskType: "PD_SSD",
      availabilityType: "ZONAL",
      pricingPlan: "PER_USE",
      activationPolicy: "ALWAYS",
      storageAutoResize: true,
      storageAutoResizeLimit: "0",
      edition: "ENTERPRISE",
      deletionProtectionEnabled: false,
      backupConfiguration: { kind: "sql#backupConfiguration", enabled: false, startTime: "04:00" },
      locationPreference: { kind: "sql#locationPreference", zone: `${region}-a` },
      ipConfiguration: {
        ipv4Enabled: true,
        requireSsl: false,
        sslMode: "ALLOW_UNENCRYPTED_AND_ENCRYPTED",
        authorizedNetworks: [],
      },
    };
    return {
      kind: "sql#instance",
      name,
      project,
      region,
      databaseVersion: version,
      databaseInstalledVersion: `${version}_4`,
      state: "PENDING_CREATE",
      backendType: "SECOND_GEN",
      instanceType: "CLOUD_SQL_INSTANCE",
      connectionName: `${project}:${region}:${name}`,
      selfLink: `${base}/sql/v1beta4/projects/${project}/instances/${name}`,
      serviceAccountEmailAddress: `p${createHash("sha1").update(project).digest("hex").slice(0, 12)}@gcp-sa-cloud-sql.iam.gserviceaccount.com`,
      createTime: now(),
      etag: randomBytes(16).toString("hex"),
      ipAddresses: [],
      settings: merge(defaults, { ...settings, kind: "sql#settings", settingsVersion: "1" }),
    };
  };

  const insertInstance = (project: string, body: Json): Json => {
    const name = String(body.name ?? "");
    if (instances.has(ikey(project, name)))
      throw new GoogleApiError(409, "instanceAlreadyExists", "The Cloud SQL instance already exists.");
    const doc = instanceDoc(project, body);
    const inst: Instance = {
      project,
      doc,
      creating: new Countdown(opts.createPolls ?? 2),
      passwords: new Map(),
      databases: new Map([["postgres", databaseDoc(project, name, "postgres")]]),
      users: new Map([["postgres", userDoc(project, name, "postgres")]]),
    };
    if (typeof body.rootPassword === "string") inst.passwords.set("postgres", body.rootPassword);
    const failure = failCreates.get(name);
    if (failure) {
      failCreates.delete(name);
      inst.failCreate = failure;
    }
    instances.set(ikey(project, name), inst);
    const op = operation(project, name, "CREATE", undefined, (opts.createPolls ?? 2) + 1);
    if (failure) {
      const entry = operations.get(`${project}/${op.name}`) as Operation;
      entry.finish = () => {
        entry.doc.error = {
          kind: "sql#operationErrors",
          errors: [{ kind: "sql#operationError", code: failure.code, message: failure.message }],
        };
      };
    }
    return op;
  };

  const patchInstance = (project: string, name: string, body: Json): Json => {
    const inst = mustGet(project, name);
    if (running(project, name)) throw inProgress();
    mustBeRunnable(inst);
    if (body.region !== undefined && body.region !== inst.doc.region)
      throw invalid("The instance region cannot be changed.");
    if (body.databaseVersion !== undefined && body.databaseVersion !== inst.doc.databaseVersion)
      throw invalid("Major version upgrade is not requested through this fake.");
    const settings = (body.settings ?? {}) as Json;
    if (settings.tier !== undefined && !TIERS.test(String(settings.tier)))
      throw invalid(`Invalid Tier (${String(settings.tier)}).`);
    const cur = inst.doc.settings as Json;
    if (settings.dataDiskSizeGb !== undefined && Number(settings.dataDiskSizeGb) < Number(cur.dataDiskSizeGb))
      throw invalid("The disk size cannot be decreased.");
    const next = merge(cur, settings);
    next.settingsVersion = String(Number(cur.settingsVersion) + 1);
    next.kind = "sql#settings";
    inst.doc.settings = next;
    inst.doc.etag = randomBytes(16).toString("hex");
    const ip = (next.ipConfiguration ?? {}) as Json;
    const ips = ipsOf(name);
    inst.doc.ipAddresses = [
      ...(ip.ipv4Enabled !== false ? [{ type: "PRIMARY", ipAddress: ips.public }] : []),
      ...(ip.privateNetwork ? [{ type: "PRIVATE", ipAddress: ips.private }] : []),
    ];
    return operation(project, name, "UPDATE");
  };

  const deleteInstance = (project: string, name: string): Json => {
    const inst = mustGet(project, name);
    if (inst.deleting) throw inProgress();
    if (running(project, name) && inst.doc.state !== "PENDING_CREATE") throw inProgress();
    if ((inst.doc.settings as Json).deletionProtectionEnabled === true)
      throw new GoogleApiError(
        400,
        "instanceProtected",
        "The instance is protected. Please disable the deletion protection and try again. To disable deletion protection, update the instance settings with deletionProtectionEnabled set to false.",
        "INVALID_ARGUMENT",
      );
    inst.doc.state = "PENDING_DELETE";
    inst.deleting = new Countdown(opts.deletePolls ?? 1);
    return operation(project, name, "DELETE");
  };

  function databaseDoc(project: string, instance: string, name: string, body: Json = {}): Json {
    return {
      kind: "sql#database",
      name,
      charset: body.charset ?? "UTF8",
      collation: body.collation ?? "en_US.UTF8",
      instance,
      project,
      selfLink: `${base}/sql/v1beta4/projects/${project}/instances/${instance}/databases/${name}`,
      etag: randomBytes(8).toString("hex"),
    };
  }
  function userDoc(project: string, instance: string, name: string, body: Json = {}): Json {
    return {
      kind: "sql#user",
      name,
      host: "",
      instance,
      project,
      type: body.type ?? "BUILT_IN",
      etag: randomBytes(8).toString("hex"),
    };
  }

  const databases = (req: FakeRequest, project: string, inst: Instance, db: string | undefined) => {
    const name = String(inst.doc.name);
    if (db === undefined && req.method === "GET")
      return { kind: "sql#databasesList", items: [...inst.databases.values()] };
    if (db === undefined && req.method === "POST") {
      mustBeRunnable(inst);
      if (running(project, name)) throw inProgress();
      const dbName = req.body.name;
      if (typeof dbName !== "string" || !/^[A-Za-z_][A-Za-z0-9_$-]{0,62}$/.test(dbName))
        throw invalid("Invalid database name.");
      if (inst.databases.has(dbName))
        throw new GoogleApiError(409, "alreadyExists", `Database "${dbName}" already exists.`);
      inst.databases.set(dbName, databaseDoc(project, name, dbName, req.body));
      return operation(project, name, "CREATE_DATABASE");
    }
    if (db === undefined) return undefined;
    const doc = inst.databases.get(db);
    if (!doc) throw new GoogleApiError(404, "notFound", "Not Found");
    if (req.method === "GET") return doc;
    if (req.method === "PATCH" || req.method === "PUT") {
      mustBeRunnable(inst);
      if (running(project, name)) throw inProgress();
      for (const k of ["charset", "collation"])
        if (req.body[k] !== undefined && req.body[k] !== doc[k])
          throw invalid(`The ${k} of a PostgreSQL database cannot be changed.`);
      return operation(project, name, "UPDATE_DATABASE");
    }
    if (req.method === "DELETE") {
      mustBeRunnable(inst);
      if (running(project, name)) throw inProgress();
      inst.databases.delete(db);
      return operation(project, name, "DELETE_DATABASE");
    }
    return undefined;
  };

  const users = (req: FakeRequest, project: string, inst: Instance, user: string | undefined) => {
    const name = String(inst.doc.name);
    const target = user ?? req.query.get("name") ?? undefined;
    if (req.method === "GET" && target === undefined)
      return { kind: "sql#usersList", items: [...inst.users.values()] };
    if (req.method === "POST") {
      mustBeRunnable(inst);
      if (running(project, name)) throw inProgress();
      const userName = req.body.name;
      if (typeof userName !== "string" || userName === "") throw invalid("User name is required.");
      if (inst.users.has(userName))
        throw new GoogleApiError(409, "alreadyExists", `User "${userName}" already exists.`);
      inst.users.set(userName, userDoc(project, name, userName, req.body));
      if (typeof req.body.password === "string") inst.passwords.set(userName, req.body.password);
      return operation(project, name, "CREATE_USER");
    }
    if (target === undefined) return undefined;
    const doc = inst.users.get(target);
    if (!doc) throw new GoogleApiError(404, "notFound", `User "${target}" does not exist.`);
    if (req.method === "GET") return doc;
    if (req.method === "PUT") {
      mustBeRunnable(inst);
      if (running(project, name)) throw inProgress();
      if (typeof req.body.password === "string") inst.passwords.set(target, req.body.password);
      return operation(project, name, "UPDATE_USER");
    }
    if (req.method === "DELETE") {
      mustBeRunnable(inst);
      if (running(project, name)) throw inProgress();
      inst.users.delete(target);
      inst.passwords.delete(target);
      return operation(project, name, "DELETE_USER");
    }
    return undefined;
  };

  const route = (req: FakeRequest): Json | undefined => {
    const { seg, method } = req;
    if (seg[0] !== "projects" || !seg[1]) return undefined;
    const project = seg[1];
    // The instance body is the request body; `enum-encoding=int` made its enums numbers.
    if (seg[2] === "operations") {
      if (seg[3] === undefined && method === "GET") {
        const instance = req.query.get("instance");
        if (instance) settleOpsOf(project, instance);
        const items = [...operations.entries()]
          .filter(
            ([k, o]) => k.startsWith(`${project}/`) && (!instance || o.instance === ikey(project, instance)),
          )
          .map(([, o]) => o.doc)
          .reverse();
        return { kind: "sql#operationsList", items };
      }
      const op = operations.get(`${project}/${seg[3]}`);
      if (!op)
        throw new GoogleApiError(404, "operationDoesNotExist", "The Cloud SQL operation does not exist.");
      settleOp(op);
      return op.doc;
    }
    if (seg[2] !== "instances") return undefined;
    const name = seg[3];
    if (name === undefined) {
      if (method === "POST")
        return insertInstance(project, enumNames(`${API_PACKAGE}.DatabaseInstance`, req.body) as Json);
      if (method === "GET") {
        const items = [...instances.values()].filter((i) => i.project === project).map((i) => i.doc);
        return { kind: "sql#instancesList", items };
      }
      return undefined;
    }
    if (seg[4] === undefined) {
      if (method === "GET") return mustGet(project, name).doc;
      if (method === "PATCH")
        return patchInstance(project, name, enumNames(`${API_PACKAGE}.DatabaseInstance`, req.body) as Json);
      if (method === "DELETE") return deleteInstance(project, name);
      return undefined;
    }
    const inst = mustGet(project, name);
    if (seg[4] === "databases") return databases(req, project, inst, seg[5]);
    if (seg[4] === "users") {
      if (req.method === "POST" || req.method === "PUT") enumNames(`${API_PACKAGE}.User`, req.body);
      return users(req, project, inst, seg[5]);
    }
    return undefined;
  };

  const assets = (): FakeAsset[] =>
    [...instances.values()].map(({ project, doc }) => ({
      name: `//cloudsql.googleapis.com/projects/${project}/instances/${String(doc.name)}`,
      assetType: "sqladmin.googleapis.com/Instance",
      project,
      location: String(doc.region ?? ""),
      labels: labelsOf((doc.settings as Json | undefined)?.userLabels),
      data: doc,
    }));
  const server = await startFakeHttp({
    name: "Cloud SQL",
    assets,
    ...(opts.port !== undefined ? { port: opts.port } : {}),
    prefixes: ["/sql/v1beta4", "/v1"],
    keyOf: (r) => {
      const what = r.seg[4] ?? r.seg[2] ?? "unknown";
      return `${r.method} ${what}`;
    },
    route,
  });
  base = server.url;
  return Object.assign(server, {
    assets,
    instance: (project: string, name: string) => instances.get(ikey(project, name))?.doc,
    passwordOf: (project: string, instance: string, user: string) =>
      instances.get(ikey(project, instance))?.passwords.get(user),
    seedInstance(project: string, name: string, body: Json) {
      insertInstance(project, { ...body, name });
      const inst = instances.get(ikey(project, name)) as Instance;
      becomeRunnable(inst);
      for (const op of operations.values()) if (op.instance === ikey(project, name)) op.doc.status = "DONE";
      return inst.doc;
    },
    patchSettings(project: string, name: string, settings: Json) {
      const inst = instances.get(ikey(project, name));
      if (!inst) throw new Error(`no instance ${name}`);
      inst.doc.settings = merge(inst.doc.settings as Json, settings);
    },
    failNextCreate(name: string, code: string, message: string) {
      failCreates.set(name, { code, message });
    },
  });
}
