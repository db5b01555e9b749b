// The two generic Google Cloud providers behind one ExternalClient: resource-oriented APIs (AIP-133 create
// under a parent with an id, AIP-131 get, AIP-134 update with an update mask of only what drifted, AIP-135
// delete, google.longrunning.Operation) and Compute (insert / get / patch / delete, its zonal, regional and
// global Operations). Where a kind differs is data (api/googleapis/spec.ts); the field model and drift patch
// are the generated AWS kinds' (providers/awscc/model.ts). An operation is polled briefly and then recorded
// in an annotation: the next reconcile follows it, no function waits for a slow create.
import { createHash } from "node:crypto";
import type {
  ConnectContext,
  ExternalClient,
  ExternalCreation,
  ExternalListing,
  ExternalObservation,
  Home,
  ListContext,
  ManagedKindProvider,
  ObserveManyItem,
} from "../../../api/external.ts";
import { ExternalError, fitsPattern, InvalidSpecError, NotListableError } from "../../../api/external.ts";
import {
  findsByOwnerLabel,
  findsByUniqueField,
  googleKindOf,
  homeFieldsOf,
  modelOf,
  OWNER_LABEL,
} from "../../../api/googleapis/kind.ts";
import type { GoogleHttp, GoogleKindSpec } from "../../../api/googleapis/spec.ts";
import { isObject, type Json } from "../../../api/json.ts";
import type { ManagedResource } from "../../../api/managed.ts";
import type { SecretKeySelector } from "../../../api/meta.ts";
import type { GcpProviderConfigSpec } from "../../../api/provider-config.ts";
import {
  atProviderOf,
  desiredModel,
  missingRequired,
  observedOf,
  patchOf,
  resolveSecrets,
  secretAttributesOf,
} from "../../awscc/model.ts";
import { checkEndpoint } from "../../endpoints.ts";
import { secretReader } from "../../secret-refs.ts";
import { gcpClientConfig, type ServiceAccountKey } from "../config.ts";
import { authFor, GoogleHttpError, GoogleRestClient } from "../google-rest.ts";
import { gcpHome, projectOf, underProject } from "../home.ts";
import { classifyGoogle, operationError } from "./errors.ts";
import { fromGoogle, toGoogle } from "./sensitive-labels.ts";

type MR = ManagedResource<Json, Json>;

/** The operation a create started and the generation it was for: the next reconciles follow it. */
export const OPERATION_ANNOTATION = "googleapis.driftless.dev/create-operation";
/**
 * The parents a Compute child was created under (`crossSiteNetwork=csn-a`): its path names them, so a changed
 * parent field would read and create somewhere else; it is refused as an immutable change instead.
 */
export const PARENT_ANNOTATION = "googleapis.driftless.dev/created-under";
/**
 * The id a wrapped create sent (`accountId`): Google never answers it, so a changed one is compared with this
 * and refused as an immutable change, never silently kept.
 */
export const CREATED_ID_ANNOTATION = "googleapis.driftless.dev/created-with-id";
/**
 * The options a create of options sent (`{"keyAlgorithm":"KEY_ALG_RSA_2048"}`, JSON): Google may never answer
 * them again (a key's privateKeyType), so a changed one is compared with these and refused as immutable.
 */
export const CREATED_WITH_ANNOTATION = "googleapis.driftless.dev/created-with";

/**
 * Spanner's CreateDatabaseRequest.create_statement, built from the database id and its dialect: "A `CREATE
 * DATABASE` statement, which specifies the ID of the new database. … If the database ID is a reserved word or
 * if it contains a hyphen, the database ID must be enclosed in backticks" (the proto's field comment); a
 * PostgreSQL-dialect database quotes it as PostgreSQL does, `CREATE DATABASE "id"` (Spanner's docs, "Create a
 * PostgreSQL-dialect database"). Always quoted: a quoted id that needs none is the same id.
 */
export function createStatementOf(id: string, dialect: unknown): string {
  return dialect === "POSTGRESQL" ? `CREATE DATABASE "${id}"` : `CREATE DATABASE \`${id}\``;
}

/**
 * The operation id of an append of statements (UpdateDatabaseDdl's `operation_id`, "a valid identifier:
 * `[a-z][a-z0-9_]*`", unique within the database): the managed resource's uid, a digest of the whole list and
 * of how many were applied before, and its length, so the same append always has the same id (a repeat is
 * ALREADY_EXISTS) and another (a failed statement rewritten, the rest of a batch that failed part-way) a new one.
 */
export function statementsOperationId(
  mr: ManagedResource<unknown, unknown>,
  statements: readonly string[],
  applied: number,
) {
  const owner = (mr.metadata.uid ?? mr.metadata.name).toLowerCase().replace(/[^a-z0-9]/g, "");
  const digest = createHash("sha256")
    .update(JSON.stringify([applied, statements]))
    .digest("hex")
    .slice(0, 12);
  return `driftless_${owner}_${digest}_${statements.length}`;
}

export interface GoogleProviderOptions {
  /** Pauses between polls of an operation inside one call, before it is left to the next reconcile. */
  pollDelaysMs?: readonly number[];
}
const DEFAULT_POLLS = [250, 750] as const;
/** Resources a batched drift check reads per list page (AIP-158 `pageSize`, Compute `maxResults`: ≤ 500). */
export const LIST_PAGE_SIZE = 500;
/**
 * Pages one list is read to (a drift check, a search for a create whose answer was lost, a list-observed
 * kind's read): a parent holding more fails the call, never reads as a resource's absence.
 */
export const MAX_LIST_PAGES = 100;

/** States a resource reports while it is being made, and when it failed (`state` or Compute's `status`). */
const CREATING_STATE = /^(CREATING|PROVISIONING|PENDING|STAGING|STARTING|INITIALIZING|DEPLOYING)$/;
const FAILED_STATE = /^(FAILED|ERROR|ERRORED|BROKEN)$/;

/** Fills a path template's variables: `{name=projects/*\/…}` and Compute's `{project}` alike. */
export function fillPath(template: string, values: Record<string, string | undefined>): string {
  return template.replace(/\{([\w.]+)(?:=[^}]*)?\}/g, (_, v: string) => {
    const x = values[v] ?? (v.endsWith(".name") || v === "name" ? values.name : undefined);
    if (!x) throw new InvalidSpecError(`no value for {${v}} in ${template}`);
    return x
      .split("/")
      .map((s) => encodeURIComponent(s))
      .join("/");
  });
}

/** The one variable of a path that binds a full name (`/v1/{database=projects/*\/…}` → `database`). */
const nameBinding = (p: string) => {
  const vars = [...p.matchAll(/\{([\w.]+)=/g)];
  return vars.length === 1 ? vars[0]?.[1] : undefined;
};

/** The last variable of a Compute path (`{address}`): the resource's own name. */
const lastVar = (p: string) => [...p.matchAll(/\{(\w+)\}/g)].at(-1)?.[1] ?? "name";

/** Where the kind's API is reached: the ProviderConfig's `endpoint.apis` (`{api}` filled), else Google. */
export function apiBase(spec: GoogleKindSpec, pc: GcpProviderConfigSpec): string {
  if (spec.google.family === "compute" && !pc.endpoint?.apis && pc.endpoint?.compute)
    return checkEndpoint("gcp", "spec.endpoint.compute", pc.endpoint.compute).url;
  return hostBase(spec.google.host, pc);
}

/** An API host's base URL: the ProviderConfig's `endpoint.apis` with `{api}` filled, else the host's own. */
function hostBase(host: string, pc: GcpProviderConfigSpec): string {
  const raw = pc.endpoint?.apis;
  const api = host.replace(/\.googleapis\.com$/, "");
  if (raw) return checkEndpoint("gcp", "spec.endpoint.apis", raw.replaceAll("{api}", api)).url;
  return `https://${host}`;
}

/** Resource Manager v3, where a project's id is resolved to its number (projects.get) for any kind. */
const RESOURCE_MANAGER = { host: "cloudresourcemanager.googleapis.com", version: "v3" } as const;

const clients = new Map<string, GoogleRestClient>();
function clientFor(base: string, credentials: ServiceAccountKey | undefined, cacheKey: string) {
  const key = `${cacheKey}|${base}`;
  let c = clients.get(key);
  if (!c) {
    if (clients.size > 256) clients.clear();
    c = new GoogleRestClient(base, authFor(base, credentials));
    clients.set(key, c);
  }
  return c;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Operation {
  name?: string;
  done?: boolean;
  status?: string;
  error?: { code?: unknown; message?: unknown; errors?: Array<{ code?: unknown; message?: unknown }> };
  response?: Json;
  metadata?: Json;
}

/**
 * Update operations still running, by resource (this container's memory: an update's result is not an
 * annotation the engine records). While one runs, the resource shows its old values: that is not drift.
 * Lost with the container, the worst case is one more PATCH of the same fields.
 */
const updatesRunning = new Map<string, string>();

/**
 * Project numbers by Resource Manager endpoint and project id (`projects.get`: `name: projects/<number>`
 * beside `projectId`). A project's id and its number are both fixed at creation and never given to another
 * project (an id stays taken even after deletion), so a resolution never goes stale and is kept for the
 * container's life; only answers are kept, never a failure.
 */
const projectNumbers = new Map<string, string>();

class GoogleGenericExternal implements ExternalClient<Json, Json> {
  readonly #ctx: ConnectContext<GcpProviderConfigSpec>;
  readonly #api: GoogleRestClient;
  /** Resource Manager (projects.get): this kind's own client where its API is Resource Manager. */
  readonly #rm: GoogleRestClient;
  readonly #spec: GoogleKindSpec;
  readonly #project: string;
  readonly #polls: readonly number[];
  readonly #readSecret: (ref: SecretKeySelector) => Promise<string>;
  readonly #rateLimit: (() => Promise<void>) | undefined;
  readonly #seen = new WeakMap<object, Json>();

  constructor(
    ctx: ConnectContext<GcpProviderConfigSpec>,
    api: GoogleRestClient,
    rm: GoogleRestClient,
    spec: GoogleKindSpec,
    project: string,
    polls: readonly number[],
    readSecret: (ref: SecretKeySelector) => Promise<string>,
    rateLimit: (() => Promise<void>) | undefined,
  ) {
    this.#ctx = ctx;
    this.#api = api;
    this.#rm = rm;
    this.#spec = spec;
    this.#project = project;
    this.#polls = polls;
    this.#readSecret = readSecret;
    this.#rateLimit = rateLimit;
  }

  get #compute() {
    return this.#spec.google.family === "compute";
  }

  async #call<T>(
    http: GoogleHttp,
    path: string,
    doing: string,
    opts: { query?: Record<string, string>; body?: unknown } = {},
  ) {
    try {
      return await this.#api.request<T>(http.m.toUpperCase() as "GET", path, {
        ...opts,
        rateLimit: this.#rateLimit,
      });
    } catch (err) {
      throw classifyGoogle(err, doing);
    }
  }

  /** The parent's full name: forProvider.parent, or the ProviderConfig's project and the home fields. */
  #parent(fp: Json): string;
  #parent(fp: Json, optional: true): string | undefined;
  #parent(fp: Json, optional?: true): string | undefined {
    const g = this.#spec.google;
    if (g.parent.explicit) {
      // A parent the proto marks OPTIONAL (a Project's) may be absent where the call does not need it.
      if (optional && g.parent.optional && (fp.parent === undefined || fp.parent === "")) return undefined;
      if (typeof fp.parent !== "string" || !fp.parent)
        throw new InvalidSpecError(`spec.forProvider.parent is required (${g.parent.template})`);
      // A parent in the body is one of the kinds of parent Google documents (`organizations/1`, `folders/2`).
      if (g.parent.inBody && !g.parent.template.split("|").some((t) => fitsPattern(t, fp.parent as string)))
        throw new InvalidSpecError(
          `spec.forProvider.parent ${fp.parent} is not one of ${g.parent.template.split("|").join(", ")}`,
        );
      return fp.parent;
    }
    const values = [this.#project, ...g.parent.home.map((h) => String(fp[h] ?? ""))];
    let i = 0;
    return g.parent.template.replace(/\*/g, () => values[i++] || "-");
  }

  /** The resource's full name (resource-oriented) from an id or a full name; Compute: its path values. */
  /** A Compute child's parent names as `field=value` (what PARENT_ANNOTATION records). */
  #parentsOf(fp: Json): string {
    return (this.#spec.google.parent.vars ?? [])
      .map(({ field }) => `${field}=${String(fp[field] ?? "")}`)
      .join(",");
  }

  /** A Compute path's variables: the project, the home (region / zone) and a child's parent names. */
  #computeValues(fp: Json, mr?: MR): Record<string, string | undefined> {
    const recorded = mr?.metadata.annotations?.[PARENT_ANNOTATION];
    if (recorded && recorded !== this.#parentsOf(fp))
      throw new InvalidSpecError(
        `the parent is immutable: ${this.#spec.kind} was created under ${recorded}, the spec now says ${this.#parentsOf(fp)}; set it back`,
      );
    const values: Record<string, string | undefined> = {
      project: this.#project,
      region: fp.region as string | undefined,
      zone: fp.zone as string | undefined,
    };
    for (const { v, field } of this.#spec.google.parent.vars ?? [])
      values[v] = fp[field] as string | undefined;
    return values;
  }

  #where(mr: MR, externalName: string): { name: string; values: Record<string, string | undefined> } {
    const fp = mr.spec.forProvider;
    if (this.#compute)
      return {
        name: externalName,
        values: { ...this.#computeValues(fp, mr), [lastVar(this.#spec.google.get?.p ?? "")]: externalName },
      };
    if (this.#spec.google.parent.inBody) {
      // A top-level collection (`folders/123`, `projects/my-id`): the parent is the resource's own field,
      // compared as an immutable one (observedOf), never part of its name.
      const collection = this.#spec.google.collection;
      // A name Google composes (a TagBinding's `tagBindings/{full-resource-name}/{tag-value-name}`) has more.
      const rest = this.#spec.google.listObserved ? ".+" : "[^/]+";
      if (externalName.includes("/") && !new RegExp(`^${collection}/${rest}$`).test(externalName))
        throw new InvalidSpecError(`external name ${externalName} is not a ${collection}/… name`);
      const name = externalName.includes("/") ? externalName : `${collection}/${externalName}`;
      return { name, values: { name } };
    }
    const parent = this.#parent(fp);
    if (this.#spec.google.singleton) {
      // A singleton Google makes with its parent: the parent says which; a full external name must agree.
      const name = `${parent}/${this.#spec.google.collection}`;
      if (externalName.includes("/") && externalName !== name)
        throw new InvalidSpecError(
          `external name ${externalName} is not ${name}: set the spec's parent fields to where it lives`,
        );
      return { name, values: { name, parent } };
    }
    if (externalName.includes("/")) {
      // Import by full name: it must lie in this resource's parent (its home), never elsewhere.
      if (!this.#under(externalName, `${parent}/${this.#spec.google.collection}/`))
        throw new InvalidSpecError(
          `external name ${externalName} is not a ${this.#spec.google.collection} of ${parent}: set the spec's home fields to where it lives`,
        );
      return { name: externalName, values: this.#named(externalName, parent) };
    }
    const name = `${parent}/${this.#spec.google.collection}/${externalName}`;
    return { name, values: this.#named(name, parent) };
  }

  /** A path's values for a full name: `name`, and the variable get and delete bind it to (`metric_name`). */
  #named(name: string, parent: string): Record<string, string> {
    const field = this.#spec.google.nameField;
    return { name, parent, ...(field ? { [field]: name } : {}) };
  }

  async #get(mr: MR, externalName: string): Promise<Json | undefined> {
    const { name, values } = this.#where(mr, externalName);
    const get = this.#spec.google.get;
    if (!get) return this.#getByList(mr, name);
    try {
      const got = await this.#api.request<Json>("GET", fillPath(get.p, values), {
        rateLimit: this.#rateLimit,
      });
      // A soft delete (a Project or Folder marked DELETE_REQUESTED) is gone for the managed resource.
      return this.#softDeleted(got) ? undefined : got;
    } catch (err) {
      if (err instanceof GoogleHttpError && err.code === 404) return undefined;
      throw classifyGoogle(err, `get ${this.#spec.typeName} ${externalName}`);
    }
  }

  /**
   * A resource no GET of its name reads (listObserved: a TagBinding, an Assignment): its parent's list, page by
   * page (at most MAX_LIST_PAGES, beyond which it fails rather than reads as absent), and the one of its full
   * name there; none listed is gone.
   */
  async #getByList(mr: MR, name: string): Promise<Json | undefined> {
    const { path, prefix, query } = this.#listOf(mr.spec.forProvider);
    const listed = await this.#listAll(path, prefix, query);
    const found = listed.get(name) ?? listed.get(this.#canonical(name));
    if (found) return found;
    const canonical = this.#canonical(name);
    for (const [k, v] of listed) if (this.#canonical(k) === canonical) return v;
    return undefined;
  }

  #softDeleted(resource: Json): boolean {
    const soft = this.#spec.google.softDelete;
    return soft !== undefined && resource.state === soft;
  }

  /** The path an operation is read at: its own name (google.longrunning), or Compute's scoped Operations. */
  #operationPath(op: Operation, fp: Json): string | undefined {
    if (!op.name) return undefined;
    const g = this.#spec.google;
    if (!this.#compute) return `/${g.version}/${op.name}`;
    const lro = g.create?.lro;
    const base = `/compute/${g.version}/projects/${this.#project}`;
    if (lro === "ZoneOperations") return `${base}/zones/${fp.zone}/operations/${op.name}`;
    if (lro === "RegionOperations") return `${base}/regions/${fp.region}/operations/${op.name}`;
    if (lro === "GlobalOrganizationOperations")
      return `/compute/${g.version}/locations/global/operations/${op.name}`;
    return `${base}/global/operations/${op.name}`;
  }

  #done = (op: Operation) => (this.#compute ? op.status === "DONE" : op.done === true);

  /** Polls an operation for the pauses given (none: one look), then returns what it last said. */
  async #follow(op: Operation, path: string | undefined, delays: readonly number[]): Promise<Operation> {
    let last = op;
    for (const ms of delays) {
      if (this.#done(last) || !path) return last;
      await sleep(ms);
      last = await this.#call<Operation>({ m: "get", p: path }, path, `read operation ${path}`);
    }
    return last;
  }

  /**
   * A project's number (`123`) from its id or number: a number as it is, an id through Resource Manager's
   * `projects.get` (`GET /v3/projects/{id}` answers `name: projects/<number>`), once per container.
   */
  async #projectNumber(x: string): Promise<string> {
    const known = this.#knownNumber(x);
    if (known) return known;
    const path = `/${RESOURCE_MANAGER.version}/projects/${encodeURIComponent(x)}`;
    let got: Json;
    try {
      got = await this.#rm.request<Json>("GET", path, { rateLimit: this.#rateLimit });
    } catch (err) {
      throw classifyGoogle(err, `read project ${x} (its number)`);
    }
    const n = typeof got.name === "string" ? projectOf(got.name) : undefined;
    if (!n || !/^\d+$/.test(n))
      throw new ExternalError(`projects.get ${x} answered no projects/<number> name`);
    if (projectNumbers.size > 4096) projectNumbers.clear();
    projectNumbers.set(`${this.#rm.base}|${x}`, n);
    return n;
  }

  /** A project's number where it is one or already resolved (no call), else undefined. */
  #knownNumber(x: string): string | undefined {
    return /^\d+$/.test(x) ? x : projectNumbers.get(`${this.#rm.base}|${x}`);
  }

  /** #projectNumber, with a project Google answers 404 for as none (no project's number). */
  async #numberOrNone(x: string): Promise<string | undefined> {
    try {
      return await this.#projectNumber(x);
    } catch (err) {
      if (err instanceof Error && err.cause instanceof GoogleHttpError && err.cause.code === 404)
        return undefined;
      throw err;
    }
  }

  /**
   * Whether `name` lies under `prefix` (`<parent>/<collection>/`): as text, or with its project in the other
   * form (`projects/<number>/…` for `projects/<id>/…`) where both are resolved already (#learn), the rest the
   * same text.
   */
  #under(name: string, prefix: string): boolean {
    if (name.startsWith(prefix)) return true;
    const [a, b] = [underProject(name), underProject(prefix)];
    if (!a || !b || !a[1].startsWith(b[1])) return false;
    const [na, nb] = [this.#knownNumber(a[0]), this.#knownNumber(b[0])];
    return na !== undefined && na === nb;
  }

  /** Resolves the projects of a name that lies under `prefix` but for its project's form, for #under. */
  async #learn(name: string, prefix: string): Promise<void> {
    if (name.startsWith(prefix)) return;
    const [a, b] = [underProject(name), underProject(prefix)];
    if (!a || !b || !a[1].startsWith(b[1]) || a[0] === b[0]) return;
    await Promise.all([this.#numberOrNone(a[0]), this.#numberOrNone(b[0])]);
  }

  /** A full name with its project in the number form where that is known (no call), else as it is. */
  #canonical(name: string): string {
    const at = underProject(name);
    const n = at && this.#knownNumber(at[0]);
    return at && n ? `projects/${n}${at[1]}` : name;
  }

  /** Before #where reads an external name given in full: its project resolved where its form differs. */
  async #learnName(mr: MR, externalName: string | undefined): Promise<void> {
    if (this.#compute || this.#spec.google.parent.inBody || !externalName?.includes("/")) return;
    await this.#learn(externalName, `${this.#parent(mr.spec.forProvider)}/${this.#spec.google.collection}/`);
  }

  /**
   * Where it lives (gcp/home.ts): a parent that is a spec field and lies under a project (a TagKey's
   * `projects/<x>`, an Entry's `projects/<x>/locations/…`) is one home in its id and number forms, resolved
   * with projects.get; a project Google does not know is no project's.
   */
  home(mr: MR): Promise<Home> {
    const explicit = this.#spec.google.parent.explicit;
    return gcpHome(this.#ctx, mr, {}, explicit ? (x) => this.#numberOrNone(x) : undefined);
  }

  /**
   * Google's answer with its parent as the spec writes it where both name one project: a parent in the body
   * written `projects/<id>` comes back `projects/<number>` (a TagKey's). Any other difference stays, so a
   * changed parent is still an immutable change, refused and never followed.
   */
  async #asWritten(fp: Json, answer: Json): Promise<Json> {
    const [want, got] = [fp.parent, answer.parent];
    if (!this.#spec.google.parent.inBody || typeof want !== "string" || typeof got !== "string")
      return answer;
    const [w, g] = [projectOf(want), projectOf(got)];
    if (want === got || !w || !g) return answer;
    if (/^\d+$/.test(w) && /^\d+$/.test(g)) return answer;
    const same = (await this.#projectNumber(w)) === (await this.#projectNumber(g));
    return same ? { ...answer, parent: want } : answer;
  }

  /**
   * What the create recorded it sent (CREATED_WITH_ANNOTATION), or undefined where nothing was recorded. A
   * record that is not a JSON object of the create's inputs (hand-edited) is refused with what is wrong and
   * how to restore it: never read as none, which would take the spec's values as what was sent.
   */
  #createdWith(mr: MR): Json | undefined {
    const raw = mr.metadata.annotations?.[CREATED_WITH_ANNOTATION];
    if (raw === undefined) return undefined;
    const inputs = this.#spec.google.createFields ?? [];
    const refuse = (what: string) =>
      new InvalidSpecError(
        `the annotation ${CREATED_WITH_ANNOTATION} ${what}: it records what the create sent (a JSON object of ${inputs.join(", ")}, e.g. {"${inputs[0]}":…}) and is written by driftless; set the annotation ${CREATED_WITH_ANNOTATION} back to the value the create wrote (in the object's history, e.g. its last applied copy or Git)`,
      );
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw refuse("is not JSON");
    }
    if (!isObject(parsed)) throw refuse("is not a JSON object");
    for (const [k, v] of Object.entries(parsed)) {
      if (!inputs.includes(k)) throw refuse(`names ${k}, and ${k} is not one of the create's inputs`);
      const type = this.#spec.properties[k]?.s.t;
      if (type === "string" && typeof v !== "string") throw refuse(`says ${k} is not a string`);
    }
    return parsed;
  }

  async #found(mr: MR, google: Json, externalName?: string): Promise<ExternalObservation<Json, Json>> {
    const model = modelOf(this.#spec);
    const answer = await this.#asWritten(mr.spec.forProvider, google);
    const resource = fromGoogle(this.#spec, answer);
    const fp = mr.spec.forProvider;
    const { region: _, ...observed } = observedOf(model, resource, "", fp);
    const labels = this.#spec.google.labels;
    if (labels && isObject(observed[labels]) && OWNER_LABEL in (observed[labels] as Json)) {
      const { [OWNER_LABEL]: _owner, ...rest } = observed[labels] as Json;
      observed[labels] = rest;
    }
    // A wrapped create's id is never answered: the one it was created with, so a changed one is refused
    // (imported, with none recorded: the spec's, as nothing tells otherwise).
    const createId = this.#spec.google.createId;
    const createdId = mr.metadata.annotations?.[CREATED_ID_ANNOTATION];
    if (createId && (createdId ?? fp[createId]) !== undefined) observed[createId] = createdId ?? fp[createId];
    // A create's inputs: what Google answers where it answers one (a key's keyAlgorithm), else what the
    // create recorded it sent (imported, with none recorded: the spec's) — a hand-edited record cannot make a
    // change Google can see look accepted.
    const createFields = this.#spec.google.createFields;
    let appending: boolean | undefined;
    if (createFields) {
      const recorded = this.#createdWith(mr);
      for (const f of createFields) {
        const sent = recorded ? recorded[f] : fp[f];
        const v =
          resource[f] !== undefined && (sent !== undefined || fp[f] !== undefined) ? resource[f] : sent;
        if (v === undefined) delete observed[f];
        else observed[f] = v;
      }
      // Statements that may only grow (Spanner's DDL): the spec's are observed where they extend those applied,
      // and any beyond them are left to update to append; an applied one changed or removed is refused.
      const pending = this.#pendingStatements(mr, recorded);
      if (pending) {
        const field = (this.#spec.google.appendStatements as { field: string }).field;
        if (pending.statements.length > 0) observed[field] = pending.statements;
        // A baseline to record only where updates are allowed: an observe-only import has nothing to send.
        const policies = mr.spec.managementPolicies ?? ["*"];
        const updates = policies.includes("*") || policies.includes("Update");
        appending = (pending.baseline && updates) || pending.statements.length > pending.applied;
      }
    }
    // A parent in the body is the resource's own field: the server's value, so a changed one is refused.
    for (const h of homeFieldsOf(this.#spec))
      if (fp[h] !== undefined && !(h === "parent" && this.#spec.google.parent.inBody)) observed[h] = fp[h];
    const state = String(resource.state ?? resource.status ?? "");
    const availability = CREATING_STATE.test(state)
      ? "Creating"
      : FAILED_STATE.test(state)
        ? "Unavailable"
        : resource.reconciling === true
          ? "Creating"
          : "Available";
    const secrets = secretAttributesOf(model, resource);
    const obs: ExternalObservation<Json, Json> = {
      resourceExists: true,
      observed,
      atProvider: atProviderOf(model, resource),
      availability,
      ...(availability !== "Available" && state ? { message: `${this.#spec.kind} is ${state}` } : {}),
      ...(appending ? { resourceUpToDate: false } : {}),
      ...(Object.keys(secrets).length > 0 ? { connectionDetails: secrets } : {}),
      ...(externalName ? { externalName } : {}),
    };
    this.#seen.set(obs, resource);
    return obs;
  }

  /**
   * The spec's appendable statements (google.appendStatements: Spanner's `extraStatements`) against those the
   * record says were applied (CREATED_WITH_ANNOTATION): how many were, and whether no record exists yet (an
   * imported database: its spec's statements are taken as applied, as nothing tells otherwise, and recorded by
   * the next update). An applied statement changed or removed is refused: Spanner cannot un-apply DDL.
   */
  #pendingStatements(
    mr: MR,
    recorded: Json | undefined,
  ): { statements: string[]; applied: number; baseline: boolean } | undefined {
    const append = this.#spec.google.appendStatements;
    if (!append) return undefined;
    const f = append.field;
    const want = mr.spec.forProvider[f];
    const statements = Array.isArray(want) ? want.map(String) : [];
    if (!recorded) return { statements, applied: statements.length, baseline: true };
    const had = recorded[f];
    const applied = Array.isArray(had) ? had.map(String) : [];
    const at = applied.findIndex((x, i) => statements[i] !== x);
    if (at >= 0) {
      const now = statements[at];
      throw new InvalidSpecError(
        `spec.forProvider.${f} may only grow by appending: statement ${at + 1} was applied as ${JSON.stringify(applied[at])} and the spec now ${now === undefined ? "omits it" : `says ${JSON.stringify(now)}`}. ${this.#spec.kind} cannot un-apply a statement: set the applied statements back as they were (the annotation ${CREATED_WITH_ANNOTATION} lists them) and append a new one instead (e.g. DROP INDEX, ALTER TABLE … DROP COLUMN)`,
      );
    }
    return { statements, applied: applied.length, baseline: false };
  }

  /**
   * Appends the statements beyond those applied with one call (Spanner's UpdateDatabaseDdl), its operation id
   * derived from the object, the count and the statements: a repeated send (a reconcile that crashed after it)
   * is refused ALREADY_EXISTS, and the operation it names is followed instead of applying them twice. Returns
   * the record to write once they are applied (or the baseline of an imported database, nothing sent).
   */
  async #appendStatements(mr: MR, externalName: string): Promise<Record<string, string>> {
    const append = this.#spec.google.appendStatements;
    if (!append) return {};
    const recorded = this.#createdWith(mr);
    const pending = this.#pendingStatements(mr, recorded);
    if (!pending) return {};
    const inputs = this.#spec.google.createFields ?? [];
    const fp = mr.spec.forProvider;
    // An imported database: what the spec says of the create's inputs, as #found takes them, now recorded.
    const base =
      recorded ?? Object.fromEntries(inputs.filter((k) => fp[k] !== undefined).map((k) => [k, fp[k]]));
    const record = (applied: number) => ({
      [CREATED_WITH_ANNOTATION]: JSON.stringify({
        ...base,
        [append.field]: pending.statements.slice(0, applied),
      }),
    });
    const todo = pending.statements.slice(pending.applied);
    if (todo.length === 0) return pending.baseline ? record(pending.applied) : {};
    const { name } = this.#where(mr, externalName);
    const operationId = statementsOperationId(mr, pending.statements, pending.applied);
    const doing = `append ${todo.length} statement(s) to ${this.#spec.typeName} ${externalName}`;
    let op: Operation;
    try {
      op = await this.#api.request<Operation>(
        append.m.toUpperCase() as "PATCH",
        fillPath(append.p, { [nameBinding(append.p) ?? "name"]: name, name }),
        { body: { statements: todo, operationId }, rateLimit: this.#rateLimit },
      );
    } catch (err) {
      // Sent before (the record of it lost): the operation is `<database>/operations/<operation_id>`.
      if (!(err instanceof GoogleHttpError && err.code === 409)) throw classifyGoogle(err, doing);
      op = { name: `${name}/operations/${operationId}` };
    }
    const opPath = this.#operationPath(op, fp);
    const last = this.#done(op) ? op : await this.#follow(op, opPath, [0, ...this.#polls]);
    if (!this.#done(last))
      throw new ExternalError(
        `${doing}: operation ${last.name ?? opPath} is running (long DDL such as an index backfill can take minutes); it is followed, never sent twice`,
      );
    if (last.error && (last.error.code !== undefined || last.error.errors?.length)) {
      // "If a statement fails, all subsequent statements in the batch are automatically cancelled"; those before
      // it committed (UpdateDatabaseDdlMetadata.commit_timestamps[i] for statements[i]): recorded as applied, and
      // the rest sent again under a new operation id, where the failing one fails alone with Google's message.
      const commits = last.metadata?.commitTimestamps;
      const committed = Array.isArray(commits) ? Math.min(commits.length, todo.length) : 0;
      if (committed === 0) throw operationError(last.error, doing);
      return record(pending.applied + committed);
    }
    return record(pending.statements.length);
  }

  async observe(mr: MR, externalName: string | undefined): Promise<ExternalObservation<Json, Json>> {
    await this.#learnName(mr, externalName);
    if (externalName) {
      const resource = await this.#get(mr, externalName);
      if (resource) return this.#updating(mr, externalName, await this.#found(mr, resource));
    }
    const pending = mr.metadata.annotations?.[OPERATION_ANNOTATION];
    if (!pending) return this.#byOwnerLabel(mr, externalName);
    const [generation, path] = [
      pending.slice(0, pending.indexOf("/")),
      pending.slice(pending.indexOf("/") + 1),
    ];
    let op: Operation;
    try {
      op = await this.#api.request<Operation>("GET", path, { rateLimit: this.#rateLimit });
    } catch (err) {
      // Operations expire: an unknown one tells nothing more than the GET (and the owner label) did.
      if (err instanceof GoogleHttpError && err.code === 404) return this.#byOwnerLabel(mr, externalName);
      throw classifyGoogle(err, `read operation ${path}`);
    }
    if (!this.#done(op))
      return {
        resourceExists: true,
        availability: "Creating",
        message: `create operation ${op.name ?? path} is running`,
      };
    if (op.error && (op.error.code !== undefined || op.error.errors?.length)) {
      // Nothing was made; tried again only when the spec changed since (or while deleting: nothing to delete).
      if (mr.metadata.deletionTimestamp || generation !== String(mr.metadata.generation ?? 0))
        return { resourceExists: false };
      throw operationError(op.error, `create of ${this.#spec.typeName}`);
    }
    // Done: read it again (a provider-chosen name is the operation's result).
    const made = !this.#compute && isObject(op.response) ? op.response.name : undefined;
    const id = externalName ?? (typeof made === "string" ? made : undefined);
    if (id) {
      const resource = await this.#get(mr, id);
      if (resource) return this.#found(mr, resource, externalName ? undefined : id);
    }
    return { resourceExists: false };
  }

  /**
   * A provider-chosen resource with no recorded name (a create whose answer was lost): the one in its parent
   * whose OWNER_LABEL is this managed resource's uid, found by listing the parent; none where the kind
   * carries no such label.
   */
  async #byOwnerLabel(mr: MR, externalName?: string): Promise<ExternalObservation<Json, Json>> {
    const g = this.#spec.google;
    // Only a create whose answer was lost is looked up by its unique field: a recorded name that is gone
    // stays gone (another resource of that name in the parent is not this one).
    if (findsByUniqueField(this.#spec))
      return externalName ? { resourceExists: false } : this.#byUniqueField(mr);
    const uid = mr.metadata.uid;
    if (!findsByOwnerLabel(this.#spec) || !uid || !g.list || !g.labels) return { resourceExists: false };
    const parent = this.#parent(mr.spec.forProvider);
    const listed = await this.#listAll(fillPath(g.list.p, { parent }), `${parent}/${g.collection}/`);
    for (const [name, resource] of listed) {
      const labels = resource[g.labels];
      if (isObject(labels) && labels[OWNER_LABEL] === uid) return this.#found(mr, resource, name);
    }
    return { resourceExists: false };
  }

  /**
   * A provider-chosen resource with no recorded name, found by the field Google documents as unique within
   * its parent (a Folder's displayName among its siblings, a TagValue's shortName in its TagKey): the one in
   * the parent's list with the spec's value. None: no create reached Google (a second cannot duplicate it).
   */
  async #byUniqueField(mr: MR): Promise<ExternalObservation<Json, Json>> {
    const g = this.#spec.google;
    const field = g.uniqueIn as string;
    const want = mr.spec.forProvider[field];
    if (typeof want !== "string" || !want) return { resourceExists: false };
    const { path, prefix, query } = this.#listOf(mr.spec.forProvider);
    const listed = await this.#listAll(path, prefix, query);
    for (const [name, resource] of listed)
      if (resource[field] === want && !this.#softDeleted(resource)) return this.#found(mr, resource, name);
    return { resourceExists: false };
  }

  /** Where a resource-oriented kind's parent is listed: the parent's collection, or its name in the query. */
  #listOf(fp: Json): { path: string; prefix: string; query: Record<string, string> } {
    const g = this.#spec.google;
    const parent = this.#parent(fp);
    if (g.parent.inBody)
      return { path: fillPath((g.list as GoogleHttp).p, {}), prefix: `${g.collection}/`, query: { parent } };
    return {
      path: fillPath((g.list as GoogleHttp).p, { parent }),
      prefix: `${parent}/${g.collection}/`,
      query: {},
    };
  }

  /** The desired body with the owner label in its labels map (kinds found by it, once the uid is known). */
  #withOwnerLabel(mr: MR, body: Json): Json {
    const labels = this.#spec.google.labels;
    const uid = mr.metadata.uid;
    if (!findsByOwnerLabel(this.#spec) || !labels || !uid) return body;
    const own = isObject(body[labels]) ? (body[labels] as Json) : {};
    return { ...body, [labels]: { ...own, [OWNER_LABEL]: uid } };
  }

  /**
   * The batched drift check: one list call per parent (resource-oriented, AIP-132) or per region / zone
   * (Compute), page by page, each listed resource observed as a GET of it would be. A resource the list
   * does not show, one with an update of ours running, and any whose parent cannot be listed are observed
   * alone, so an absence is only ever concluded from a GET. A list that names unreachable locations or
   * answers in a shape this kind's resources cannot be found in fails its group, never reads as absence.
   */
  async observeMany(
    items: ReadonlyArray<ObserveManyItem<Json, Json>>,
  ): Promise<Array<ExternalObservation<Json, Json> | Error>> {
    const list = this.#spec.google.list;
    const out: Array<ExternalObservation<Json, Json> | Error | undefined> = items.map(() => undefined);
    const groups = new Map<
      string,
      { path: string; prefix: string; query: Record<string, string>; at: number[] }
    >();
    for (const [i, { mr, externalName }] of items.entries()) {
      try {
        if (!list) throw new Error("no list method");
        const key = `${this.#spec.typeName}|${this.#where(mr as MR, externalName).name}`;
        if (updatesRunning.has(key)) continue;
        const fp = (mr as MR).spec.forProvider;
        const { path, prefix, query } = this.#compute
          ? {
              path: fillPath(list.p, this.#computeValues(fp)),
              prefix: "",
              query: {},
            }
          : this.#listOf(fp);
        const at = `${path}?${new URLSearchParams(query)}`;
        const g = groups.get(at) ?? { path, prefix, query, at: [] };
        g.at.push(i);
        groups.set(at, g);
      } catch {
        // Observed alone below.
      }
    }
    for (const g of groups.values()) {
      let listed: Map<string, Json>;
      try {
        listed = await this.#listAll(g.path, g.prefix, g.query);
      } catch (err) {
        for (const i of g.at) out[i] = err instanceof Error ? err : new Error(String(err));
        continue;
      }
      // By the project's number where the names' forms differ (#listAll resolved it).
      const byName = new Map([...listed].map(([k, v]) => [this.#canonical(k), v]));
      for (const i of g.at) {
        const { mr, externalName } = items[i] as ObserveManyItem<Json, Json>;
        const name = this.#compute ? externalName : this.#where(mr as MR, externalName).name;
        const found = byName.get(this.#canonical(name));
        // A list-observed kind is read by this very list: not in it is gone, unless a create of ours still runs.
        if (
          !found &&
          this.#spec.google.listObserved &&
          !(mr as MR).metadata.annotations?.[OPERATION_ANNOTATION]
        ) {
          out[i] = { resourceExists: false };
          continue;
        }
        if (!found || this.#softDeleted(found)) continue;
        try {
          out[i] = await this.#found(mr as MR, found);
        } catch (err) {
          out[i] = err instanceof Error ? err : new Error(String(err));
        }
      }
    }
    return Promise.all(
      items.map(async (item, i) => {
        const known = out[i];
        if (known) return known;
        try {
          return await this.observe(item.mr as MR, item.externalName);
        } catch (err) {
          return err instanceof Error ? err : new Error(String(err));
        }
      }),
    );
  }

  /**
   * Every resource of the kind in the ProviderConfig's project (`driftless import`), with one list call:
   * resource-oriented kinds under their parent with `-` for each home segment (AIP-159, every location),
   * each listed resource's home fields read back from its name; Compute's global kinds; Compute's regional
   * and zonal kinds with their collection's aggregatedList (every region or zone at once). A kind whose
   * parent is an explicit field is listed per parent (not yet).
   */
  async list(ctx?: ListContext): Promise<ExternalListing[]> {
    const g = this.#spec.google;
    if (!g.list) throw new NotListableError("no list method in its API");
    if (this.#compute) {
      if (g.parent.vars)
        throw new NotListableError(
          `its parent (${g.parent.vars.map((x) => x.field).join(", ")}) is a spec field`,
        );
      if (/\{(region|zone)\}/.test(g.list.p)) {
        if (!g.aggregated)
          throw new NotListableError(
            `a regional or zonal Compute kind whose collection (${g.collection}) has no aggregatedList: listed per region or zone (not yet)`,
          );
        return this.#listAggregated(g.aggregated);
      }
      const listed = await this.#listAll(fillPath(g.list.p, { project: this.#project }), "");
      return [...listed.keys()].map((name) => ({ externalName: name, forProvider: {} }));
    }
    if (g.parent.explicit) return this.#listUnder(ctx?.parent);
    const parent = this.#parent({});
    // A kind named by the caller in its `name` (LogMetric) is listed with short names: made full under it.
    const under = g.create?.namedBy === "field" ? `${parent}/${g.collection}/` : "";
    const listed = await this.#listAll(fillPath(g.list.p, { parent }), under);
    const template = g.parent.template.split("/");
    // Names Google answers with the project's number are this project's where its id resolves to it.
    const other = [...listed.keys()].map((n) => underProject(n)?.[0]).find((x) => x && x !== this.#project);
    // Without projects.get (a 403), such names stay another project's, as before: fewer found, none wrong.
    if (other)
      await Promise.all([this.#project, other].map((x) => this.#numberOrNone(x).catch(() => undefined)));
    const mine = this.#knownNumber(this.#project);
    return [...listed.keys()].flatMap((name) => {
      // projects/{project}/locations/{location}/<collection>/{id}: the project, then the home fields.
      const segs = name.split("/");
      if (segs.length !== template.length + 2 || segs[template.length] !== g.collection) return [];
      const stars = template.flatMap((t, i) => (t === "*" ? [segs[i] as string] : t === segs[i] ? [] : [""]));
      const ours =
        stars[0] === this.#project || (mine !== undefined && this.#knownNumber(stars[0] ?? "") === mine);
      if (stars.includes("") || !ours) return [];
      return [
        {
          externalName: segs.at(-1) as string,
          forProvider: Object.fromEntries(g.parent.home.map((h, i) => [h, stars[i + 1]])),
          alsoNamed: { externalName: name },
          fullName: name,
        },
      ];
    });
  }

  /**
   * A kind whose parent is a spec field, listed under the one given (`driftless import --parent`): a parent in
   * the body with `?parent=` (Resource Manager: a folder's folders and projects, an organization's or
   * project's tag keys; soft-deleted ones are not listed), another under `{parent}` in the path. Each with
   * the parent Google answers (a project parent in its number form), its full name (for `--depth`) and the
   * external name a create would have recorded: a Project's id; the user's id within the parent for a kind
   * created with one (a Data Catalog Entry's `entryId`; its full name held too); else the full name.
   */
  async #listUnder(parent: string | undefined): Promise<ExternalListing[]> {
    const g = this.#spec.google;
    const kinds = g.parent.template.split("|");
    if (!parent)
      throw new NotListableError(
        `its parent (${kinds.join(", ")}) is a spec field: list it under one with --parent`,
      );
    if (!kinds.some((t) => fitsPattern(t, parent)))
      throw new NotListableError(`--parent ${parent} is not one of ${kinds.join(", ")}`);
    if (!g.list) throw new NotListableError("no list method in its API");
    const { path, prefix, query } = this.#listOf({ parent });
    const listed = await this.#listAll(path, prefix, query);
    return [...listed.entries()].flatMap(([name, resource]) => {
      if (this.#softDeleted(resource)) return [];
      const id = this.#spec.identifierField ? resource[this.#spec.identifierField] : name;
      if (typeof id !== "string" || !id) return [];
      const under = typeof resource.parent === "string" && g.parent.inBody ? resource.parent : parent;
      const forProvider = { parent: under };
      if (!g.parent.inBody && this.#spec.externalName === "fromAnnotation" && this.#under(name, prefix)) {
        // Unique only within its parent: held by a managed resource of the same parent, or by its full name.
        const short = name
          .split("/")
          .slice(prefix.split("/").length - 1)
          .join("/");
        return [
          {
            externalName: short,
            forProvider,
            parent: "parent",
            alsoNamed: { externalName: name },
            fullName: name,
          },
        ];
      }
      return [{ externalName: id, forProvider, fullName: name }];
    });
  }

  /**
   * A regional or zonal Compute kind's resources in every region or zone: the collection's aggregatedList,
   * page by page (`items` keyed by scope, `regions/<r>` or `zones/<z>`, each holding the collection's list
   * or a warning). Only the kind's own scopes count (a global twin's resources come under `global`); the
   * region or zone is the home field and names the object, as a name is unique only within it.
   */
  async #listAggregated(aggregated: GoogleHttp): Promise<ExternalListing[]> {
    const g = this.#spec.google;
    const home = g.parent.home[0] as "region" | "zone";
    const path = fillPath(aggregated.p, { project: this.#project });
    const out: ExternalListing[] = [];
    let pageToken: string | undefined;
    do {
      const query: Record<string, string> = {
        maxResults: String(LIST_PAGE_SIZE),
        ...(pageToken ? { pageToken } : {}),
      };
      const page = await this.#call<Json>(aggregated, path, `list ${this.#spec.typeName} at ${path}`, {
        query,
      });
      const unreachable = page.unreachables;
      if (Array.isArray(unreachable) && unreachable.length > 0)
        throw new ExternalError(`list ${path}: unreachable ${unreachable.slice(0, 3).join(", ")}`);
      for (const [scope, scoped] of Object.entries(isObject(page.items) ? page.items : {})) {
        const [kind, where] = scope.split("/");
        if (kind !== `${home}s` || !where || !isObject(scoped)) continue;
        const items = scoped[g.collection];
        for (const x of Array.isArray(items) ? items : [])
          if (isObject(x) && typeof x.name === "string")
            out.push({ externalName: x.name, forProvider: { [home]: where }, parent: home });
      }
      pageToken =
        typeof page.nextPageToken === "string" && page.nextPageToken ? page.nextPageToken : undefined;
    } while (pageToken);
    return out;
  }

  /** A listed resource's full name: a kind the caller names in its `name` (LogMetric) answers the short id. */
  #fullName(name: string, prefix: string): string {
    return this.#spec.google.create?.namedBy === "field" && prefix && !name.includes("/")
      ? `${prefix}${name}`
      : name;
  }

  /** Every resource of one list, by full name (Compute: by name), page by page. */
  async #listAll(
    path: string,
    prefix: string,
    extra: Record<string, string> = {},
  ): Promise<Map<string, Json>> {
    const list = this.#spec.google.list as GoogleHttp;
    const field = this.#spec.google.listObserved?.field;
    const found = new Map<string, Json>();
    let pageToken: string | undefined;
    let pages = 0;
    do {
      if (++pages > MAX_LIST_PAGES)
        throw new ExternalError(
          `list ${path}: more than ${MAX_LIST_PAGES} pages of ${LIST_PAGE_SIZE}: not read to the end, so nothing is concluded from it`,
        );
      const query: Record<string, string> = {
        ...extra,
        [this.#compute ? "maxResults" : "pageSize"]: String(LIST_PAGE_SIZE),
        ...(pageToken ? { pageToken } : {}),
      };
      const page = await this.#call<Json>(list, path, `list ${this.#spec.typeName} at ${path}`, { query });
      const unreachable = page.unreachable;
      if (Array.isArray(unreachable) && unreachable.length > 0)
        throw new ExternalError(`list ${path}: unreachable ${unreachable.slice(0, 3).join(", ")}`);
      const arrays = Object.values(page).filter((v): v is unknown[] => Array.isArray(v) && v.length > 0);
      // Google may answer the names with the project's number where the parent says its id (or back).
      const named = arrays.flat().find((x) => isObject(x) && typeof x.name === "string");
      if (prefix && isObject(named)) await this.#learn(this.#fullName(String(named.name), prefix), prefix);
      // Compute's `items`; otherwise the array whose members are this collection's resources (AIP-132).
      const mine = this.#compute
        ? (page.items as unknown[] | undefined)
        : field
          ? Array.isArray(page[field])
            ? (page[field] as unknown[])
            : undefined
          : arrays.find((a) =>
              a.every(
                (x) =>
                  isObject(x) &&
                  typeof x.name === "string" &&
                  this.#under(this.#fullName(x.name, prefix), prefix),
              ),
            );
      if (!mine && arrays.some((a) => a.some((x) => isObject(x) && typeof x.name === "string")))
        throw new ExternalError(`list ${path}: no list of ${this.#spec.google.collection} in the answer`);
      for (const x of mine ?? [])
        if (isObject(x) && typeof x.name === "string") found.set(this.#fullName(x.name, prefix), x);
      pageToken =
        typeof page.nextPageToken === "string" && page.nextPageToken ? page.nextPageToken : undefined;
    } while (pageToken);
    return found;
  }

  /** An observation while an update of ours runs: up to date for now (its result shows when it ends). */
  async #updating(mr: MR, externalName: string, obs: ExternalObservation<Json, Json>) {
    const key = `${this.#spec.typeName}|${this.#where(mr, externalName).name}`;
    const path = updatesRunning.get(key);
    if (!path) return obs;
    const op = await this.#call<Operation>({ m: "get", p: path }, path, `read operation ${path}`);
    if (!this.#done(op))
      return { ...obs, resourceUpToDate: true, message: `update operation ${op.name ?? path} is running` };
    updatesRunning.delete(key);
    if (op.error && (op.error.code !== undefined || op.error.errors?.length))
      throw operationError(op.error, `update of ${this.#spec.typeName} ${externalName}`);
    // Done since the GET: read again, so what is compared is the result.
    const resource = await this.#get(mr, externalName);
    return resource ? this.#found(mr, resource) : { resourceExists: false };
  }

  #resolved(mr: MR): Promise<Json> {
    return resolveSecrets(modelOf(this.#spec), mr.spec.forProvider, secretReader(this.#readSecret));
  }

  async create(mr: MR, externalName: string | undefined): Promise<ExternalCreation> {
    const g = this.#spec.google;
    const create = g.create;
    // The engine never asks (the kind lacks Create: reconciler/policies.ts); a caller that does is told so.
    if (!create) throw new ExternalError(`${this.#spec.typeName}: Google publishes no create for it`);
    const model = modelOf(this.#spec);
    const body = this.#withOwnerLabel(
      mr,
      toGoogle(
        this.#spec,
        desiredModel(model, {
          forProvider: await this.#resolved(mr),
          externalName: this.#compute || this.#spec.identifierField ? externalName : undefined,
        }),
      ),
    );
    const missing = missingRequired(model, body);
    if (missing.length > 0)
      throw new InvalidSpecError(
        `${this.#spec.typeName} needs ${missing.map((m) => `spec.forProvider.${m}`).join(", ")} to be created`,
      );
    const fp = mr.spec.forProvider;
    let path: string;
    const query: Record<string, string> = {};
    if (this.#compute) {
      path = fillPath(create.p, this.#computeValues(fp));
    } else {
      if (create.namedBy === "path") return this.#createOnName(mr, externalName, body, create);
      path = fillPath(create.p, { parent: this.#parent(fp, true) });
      if (this.#spec.identifierField && (!externalName || externalName.includes("/")))
        throw new InvalidSpecError(
          `${this.#spec.kind} is created with its ${this.#spec.identifierField}: the external name must be one, not ${externalName ?? "empty"}`,
        );
      if (create.statement) {
        // The request names the database in its statement (`CREATE DATABASE \`id\``) beside the create-time
        // inputs, recorded as sent; the resource's own fields are not in it (an update sets them after).
        if (!externalName || externalName.includes("/"))
          throw new InvalidSpecError(
            `${this.#spec.kind} is created with its id in ${create.statement}: the external name must be one, not ${externalName ?? "empty"}`,
          );
        const inputs = g.createFields ?? [];
        const sent = Object.fromEntries(inputs.filter((f) => body[f] !== undefined).map((f) => [f, body[f]]));
        const whole = { [create.statement]: createStatementOf(externalName, sent.databaseDialect), ...sent };
        return this.#created(mr, path, whole, query, { [CREATED_WITH_ANNOTATION]: JSON.stringify(sent) });
      }
      if (g.createFields && !create.wrap) {
        // A secret only the create's answer holds (a key's privateKeyData) needs a Secret to go to: made
        // without one, the key would exist and its private half be lost at once.
        const once = Object.entries(this.#spec.attributes).filter(([, p]) => p.secret);
        if (once.length > 0 && !mr.spec.writeConnectionSecretToRef)
          throw new InvalidSpecError(
            `${this.#spec.kind} needs spec.writeConnectionSecretToRef: Google answers ${once.map(([k]) => k).join(", ")} only to the create, never again`,
          );
        // A create of options: its request is only them (`{privateKeyType, keyAlgorithm}`), under the parent.
        const sent = Object.fromEntries(
          g.createFields.filter((f) => body[f] !== undefined).map((f) => [f, body[f]]),
        );
        return this.#created(mr, path, sent, query, { [CREATED_WITH_ANNOTATION]: JSON.stringify(sent) });
      }
      if (create.wrap) {
        // The request is the body: the id beside the resource (`{accountId, serviceAccount: {…}}`).
        // Create-time inputs beside it (Bigtable's `clusters`) go out only here, recorded as sent.
        const id = g.createId;
        const { [id ?? ""]: value, ...rest } = body;
        const inputs = g.createFields ?? [];
        const resource = Object.fromEntries(Object.entries(rest).filter(([k]) => !inputs.includes(k)));
        const beside = Object.fromEntries(
          inputs.filter((f) => rest[f] !== undefined).map((f) => [f, rest[f]]),
        );
        const whole = {
          ...(id ? { [id]: value } : {}),
          [create.wrap]: resource,
          ...beside,
        };
        const recorded: Record<string, string> = {
          ...(typeof value === "string" ? { [CREATED_ID_ANNOTATION]: value } : {}),
          ...(inputs.length > 0 ? { [CREATED_WITH_ANNOTATION]: JSON.stringify(beside) } : {}),
        };
        return this.#created(mr, path, whole, query, recorded);
      }
      if (create.namedBy === "fullName") {
        // No id parameter: the resource's REQUIRED `name` is its full name, built from the parent and the id.
        if (!externalName || externalName.includes("/"))
          throw new InvalidSpecError(
            `${this.#spec.kind} is created with its full name: the external name must be an id, not ${externalName ?? "empty"}`,
          );
        return this.#created(mr, path, { ...body, name: this.#where(mr, externalName).name }, query);
      }
      if (create.idParam) {
        if (!externalName || externalName.includes("/"))
          throw new InvalidSpecError(
            `${this.#spec.kind} is created with an id: the external name must be one, not ${externalName ?? "empty"}`,
          );
        query[create.idParam.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())] = externalName;
      }
    }
    return this.#created(mr, path, body, query);
  }

  /**
   * A create that is a PUT on the resource's full name (Pub/Sub's `PUT /v1/projects/p/snapshots/s`): the id in
   * the path, the body the resource's fields and the create-time inputs beside them (a Snapshot's
   * `subscription`), those recorded as sent so a change is refused, never a second resource.
   */
  async #createOnName(
    mr: MR,
    externalName: string | undefined,
    body: Json,
    create: GoogleHttp,
  ): Promise<ExternalCreation> {
    const g = this.#spec.google;
    if (!externalName || externalName.includes("/"))
      throw new InvalidSpecError(
        `${this.#spec.kind} is created on its name: the external name must be an id, not ${externalName ?? "empty"}`,
      );
    const { name } = this.#where(mr, externalName);
    const inputs = g.createFields ?? [];
    const sent = Object.fromEntries(inputs.filter((f) => body[f] !== undefined).map((f) => [f, body[f]]));
    return this.#created(
      mr,
      fillPath(create.p, { name }),
      body,
      {},
      inputs.length > 0 ? { [CREATED_WITH_ANNOTATION]: JSON.stringify(sent) } : {},
    );
  }

  /** Sends a create and follows what it started (an operation) or takes the name it answers. */
  async #created(
    mr: MR,
    path: string,
    body: Json,
    query: Record<string, string>,
    recorded: Record<string, string> = {},
  ): Promise<ExternalCreation> {
    const g = this.#spec.google;
    const create = g.create;
    if (!create) throw new ExternalError(`${this.#spec.typeName}: Google publishes no create for it`);
    const fp = mr.spec.forProvider;
    const out = await this.#call<Operation & Json>(create, path, `create ${this.#spec.typeName}`, {
      body,
      query,
    });
    // Secrets Google answers only now (a key's privateKeyData): the connection Secret's, never read again.
    const once = (answer: unknown) => {
      const details = isObject(answer)
        ? secretAttributesOf(modelOf(this.#spec), fromGoogle(this.#spec, answer))
        : {};
      return Object.keys(details).length > 0 ? { connectionDetails: details } : {};
    };
    if (!create.lro) {
      const made =
        typeof out.name === "string" && this.#spec.externalName === "providerChosen" ? out.name : undefined;
      return {
        ...(made ? { externalName: made } : {}),
        ...(Object.keys(recorded).length > 0 ? { annotations: recorded } : {}),
        ...(g.createFields && !create.wrap && !create.statement ? once(out) : {}),
      };
    }
    const opPath = this.#operationPath(out, fp);
    const op = await this.#follow(out, opPath, this.#polls);
    if (this.#done(op) && op.error && (op.error.code !== undefined || op.error.errors?.length))
      throw operationError(op.error, `create of ${this.#spec.typeName}`);
    const made =
      this.#spec.externalName === "providerChosen" &&
      this.#done(op) &&
      isObject(op.response) &&
      typeof op.response.name === "string"
        ? op.response.name
        : undefined;
    const annotations = {
      ...recorded,
      ...(opPath ? { [OPERATION_ANNOTATION]: `${mr.metadata.generation ?? 0}/${opPath}` } : {}),
      ...(g.parent.vars ? { [PARENT_ANNOTATION]: this.#parentsOf(fp) } : {}),
    };
    return {
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
      ...(made ? { externalName: made } : {}),
      ...(g.createFields && !create.wrap && !create.statement && this.#done(op) ? once(op.response) : {}),
    };
  }

  async update(mr: MR, externalName: string, obs: ExternalObservation<Json, Json>) {
    const g = this.#spec.google;
    const update = g.update;
    if (!update)
      throw new ExternalError(`${this.#spec.typeName} has no update method: change an immutable field back`);
    await this.#learnName(mr, externalName);
    const answer = this.#seen.get(obs) ?? (await this.#get(mr, externalName));
    const current = answer && fromGoogle(this.#spec, answer);
    if (!current) throw new ExternalError(`${this.#spec.typeName} ${externalName} disappeared during update`);
    const model = modelOf(this.#spec);
    const desired = desiredModel(model, { forProvider: await this.#resolved(mr), externalName: undefined });
    // The owner label stays where it is: never drift, kept when the labels map is written whole.
    const labels = this.#spec.google.labels;
    const owned = labels && isObject(current[labels]) && OWNER_LABEL in (current[labels] as Json);
    const ops = patchOf(model, owned ? this.#withOwnerLabel(mr, desired) : desired, current);
    // Statements appended to the spec first (their own call), then the resource's own fields by mask.
    const appended = await this.#appendStatements(mr, externalName);
    const done = Object.keys(appended).length > 0 ? { annotations: appended } : {};
    if (ops.length === 0) return done;
    // Only what drifted goes out, in the body and in the mask: immutable, output-only and secret fields never.
    const body: Json = {};
    const mask: string[] = [];
    for (const op of ops) {
      const parts = op.path
        .split("/")
        .slice(1)
        .map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"));
      mask.push(parts.join("."));
      let at = body;
      for (const p of parts.slice(0, -1)) {
        if (!isObject(at[p])) at[p] = {};
        at = at[p] as Json;
      }
      at[parts.at(-1) as string] = op.value;
    }
    // A configuration map written whole carries its credential keys again (else the mask would drop them).
    const sensitive = this.#spec.google.sensitiveLabels;
    const wire =
      sensitive && body[sensitive.map] !== undefined
        ? toGoogle(this.#spec, { ...body, sensitiveLabels: desired.sensitiveLabels })
        : body;
    const { values } = this.#where(mr, externalName);
    // Compute's optimistic concurrency: the fingerprint the resource was read with.
    if (this.#compute && typeof current.fingerprint === "string") body.fingerprint = current.fingerprint;
    const query: Record<string, string> = {};
    const maskName = update.mask?.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    if (maskName && !update.wrap) query[maskName] = mask.join(",");
    // A PUT replaces the resource: what Google answered of the kind's own fields (never its output fields),
    // with what drifted; the create-time inputs beside the resource are not the resource's.
    const own = Object.fromEntries(
      Object.entries(current).filter(
        ([k]) =>
          this.#spec.properties[k] !== undefined && !(this.#spec.google.createFields ?? []).includes(k),
      ),
    );
    const sent = update.m === "put" ? { ...own, ...wire } : wire;
    const out = await this.#call<Operation>(
      update,
      fillPath(update.p, values),
      `update ${this.#spec.typeName} ${externalName} (${mask.join(", ")})`,
      {
        // The request is the body: the resource in its field beside the mask (`{serviceAccount, updateMask}`).
        body: update.wrap
          ? { [update.wrap]: sent, ...(maskName ? { [maskName]: mask.join(",") } : {}) }
          : sent,
        query,
      },
    );
    if (update.lro) {
      const opPath = this.#operationPath(out, mr.spec.forProvider);
      const op = await this.#follow(out, opPath, this.#polls);
      if (!this.#done(op) && opPath)
        updatesRunning.set(`${this.#spec.typeName}|${this.#where(mr, externalName).name}`, opPath);
      if (this.#done(op) && op.error && (op.error.code !== undefined || op.error.errors?.length))
        throw operationError(op.error, `update of ${this.#spec.typeName} ${externalName}`);
    }
    return done;
  }

  async delete(mr: MR, externalName: string) {
    if (!externalName)
      throw new ExternalError(`${this.#spec.typeName}: waiting for the create to name it before deleting`);
    // The engine never asks (the kind lacks Delete: reconciler/policies.ts); a caller that does is told so.
    const del = this.#spec.google.delete;
    if (!del) throw new ExternalError(`${this.#spec.typeName}: Google publishes no delete for it`);
    await this.#learnName(mr, externalName);
    const { name, values } = this.#where(mr, externalName);
    // A delete binding the name to its own variable (Spanner's DropDatabase `{database=…}`) gets it too.
    const own = this.#compute ? undefined : nameBinding(del.p);
    try {
      await this.#api.request("DELETE", fillPath(del.p, own ? { [own]: name, ...values } : values), {
        rateLimit: this.#rateLimit,
      });
    } catch (err) {
      if (err instanceof GoogleHttpError && err.code === 404) return;
      throw classifyGoogle(err, `delete ${this.#spec.typeName} ${externalName}`);
    }
  }
}

/** The provider of one generated Google kind (cluster-scoped; both shapes come from withNamespacedVariants). */
export function googleProvider(spec: GoogleKindSpec, opts: GoogleProviderOptions = {}): ManagedKindProvider {
  const g = spec.google;
  return {
    definition: googleKindOf(spec),
    limitsEachRequest: true,
    ...(g.parent.explicit && g.list && g.family !== "compute"
      ? { listsUnder: g.parent.template.split("|") }
      : {}),
    ...(spec.google.list
      ? {
          observeMany: {
            calls: `${spec.google.list.p} per ${spec.google.family === "compute" ? "region or zone" : "parent"}, ${LIST_PAGE_SIZE} a page (a GET for one the list does not show)`,
            maxItems: LIST_PAGE_SIZE,
          },
        }
      : {}),
    async connect(ctx: ConnectContext<GcpProviderConfigSpec>) {
      const cfg = await gcpClientConfig(ctx);
      const base = apiBase(spec, ctx.providerConfig.spec);
      const api = clientFor(base, cfg.credentials, cfg.cacheKey);
      const rm =
        spec.google.host === RESOURCE_MANAGER.host
          ? api
          : clientFor(
              hostBase(RESOURCE_MANAGER.host, ctx.providerConfig.spec),
              cfg.credentials,
              cfg.cacheKey,
            );
      return new GoogleGenericExternal(
        ctx,
        api,
        rm,
        spec,
        cfg.projectId,
        opts.pollDelaysMs ?? DEFAULT_POLLS,
        (ref) => ctx.readSecretKey(ref),
        ctx.rateLimit,
      ) as unknown as ExternalClient<Record<string, unknown>, Record<string, unknown>>;
    },
  };
}
