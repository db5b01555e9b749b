// An in-memory Kubernetes API server behind Kube's transport, for engine table tests that run in
// milliseconds. It keeps the parts of the API server's behaviour the engine's safety depends on:
// resourceVersion preconditions (409), finalizers and deletionTimestamp, the status subresource, merge
// patches, generation bumps on spec changes, label selectors, and "no new finalizers once deleting".
// Faults are injected per request. The real kube-apiserver proves the wire; this proves the logic.
import { randomUUID } from "node:crypto";
import type { ResourceType } from "../../shared/api/meta.ts";
import { Kube, type KubeTransport } from "../../shared/kube/client.ts";
import { ConflictError, KubeError, type KubeRequest } from "../../shared/kube/http.ts";

type Obj = {
  apiVersion?: string;
  kind?: string;
  metadata: Record<string, unknown>;
  spec?: unknown;
  status?: unknown;
  [k: string]: unknown;
};

/** A request as the fake understood it: which collection, which object, which subresource. */
export interface ParsedRequest {
  method: KubeRequest["method"];
  /** `group/version/plural` or `v1/secrets`, `v1/events`. */
  resource: string;
  plural: string;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
  body: unknown;
}

/** Returns an error to fail the request with, or undefined to let it through; may also wait. */
export type Fault = (req: ParsedRequest) => Error | undefined | Promise<Error | undefined>;

export const notFound = (what: string) => new KubeError(`${what} not found`, 404, { reason: "NotFound" });
const gone = () => new KubeError("The provided continue parameter is too old", 410, { reason: "Expired" });
export const serverError = (msg = "etcdserver: request timed out") =>
  new KubeError(msg, 500, { reason: "InternalError" });

export class MemoryApiServer implements KubeTransport {
  readonly #objects = new Map<string, Obj>();
  #rv = 1;
  #faults: Fault[] = [];
  /** Every request, in order (method and parsed path), for "exactly N writes" assertions. */
  readonly requests: ParsedRequest[] = [];

  /** A Kube client whose requests this server answers. */
  kube(): Kube {
    return new Kube(this);
  }

  /** Adds a fault; returns a function that removes it. */
  inject(fault: Fault): () => void {
    this.#faults.push(fault);
    return () => {
      this.#faults = this.#faults.filter((f) => f !== fault);
    };
  }

  /** Fails the next `times` requests that match with `error`. */
  failNext(match: (r: ParsedRequest) => boolean, error: () => Error, times = 1): void {
    let left = times;
    this.inject((r) => {
      if (left > 0 && match(r)) {
        left--;
        return error();
      }
      return undefined;
    });
  }

  writes(): ParsedRequest[] {
    return this.requests.filter((r) => r.method !== "GET");
  }

  /** The stored object (a copy), or undefined. */
  get<T = Obj>(t: ResourceType, name: string, namespace?: string): T | undefined {
    const o = this.#objects.get(
      keyOf(resourceOf(t), t.namespaced ? (namespace ?? "default") : undefined, name),
    );
    return o ? (structuredClone(o) as T) : undefined;
  }

  secret(namespace: string, name: string): Obj | undefined {
    const o = this.#objects.get(keyOf("v1/secrets", namespace, name));
    return o ? structuredClone(o) : undefined;
  }

  /** Objects of one collection (e.g. "v1/events"). */
  list(resource: string): Obj[] {
    return [...this.#objects.entries()]
      .filter(([k]) => k.startsWith(`${resource}|`))
      .map(([, o]) => structuredClone(o));
  }

  /** Event reasons recorded for an object name, in order. */
  eventReasons(name?: string): string[] {
    return this.list("v1/events")
      .filter((e) => !name || (e.involvedObject as { name?: string } | undefined)?.name === name)
      .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion))
      .map((e) => String(e.reason));
  }

  /** Stores an object as a client's create would (uid, resourceVersion, generation filled in). */
  seed<T extends Obj>(t: ResourceType, obj: T): T {
    const ns = t.namespaced ? ((obj.metadata.namespace as string | undefined) ?? "default") : undefined;
    return this.#create(resourceOf(t), ns, structuredClone(obj), false) as T;
  }

  seedSecret(namespace: string, name: string, data: Record<string, string>, extra: Partial<Obj> = {}) {
    const encoded = Object.fromEntries(
      Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "utf8").toString("base64")]),
    );
    return this.#create(
      "v1/secrets",
      namespace,
      {
        apiVersion: "v1",
        kind: "Secret",
        ...extra,
        metadata: { name, namespace, ...(extra.metadata ?? {}) },
        data: encoded,
      },
      false,
    );
  }

  /** Edits a stored object as another client would (bumps resourceVersion). */
  mutate(t: ResourceType, name: string, edit: (o: Obj) => void, namespace?: string): void {
    const k = keyOf(resourceOf(t), t.namespaced ? (namespace ?? "default") : undefined, name);
    const o = this.#objects.get(k);
    if (!o) throw new Error(`no ${t.kind} ${name}`);
    edit(o);
    o.metadata.resourceVersion = String(++this.#rv);
  }

  deleteSecret(namespace: string, name: string): void {
    this.#objects.delete(keyOf("v1/secrets", namespace, name));
  }

  async request<T>(req: KubeRequest): Promise<T> {
    const parsed = parse(req);
    this.requests.push(parsed);
    for (const f of this.#faults) {
      const err = await f(parsed);
      if (err) throw err;
    }
    return structuredClone(this.#handle(parsed, req)) as T;
  }

  #handle(r: ParsedRequest, req: KubeRequest): unknown {
    const k = r.name ? keyOf(r.resource, r.namespace, r.name) : undefined;
    const current = k ? this.#objects.get(k) : undefined;
    switch (r.method) {
      case "GET": {
        if (!k) return this.#listOf(r, req);
        if (!current) throw notFound(`${r.plural} "${r.name}"`);
        return current;
      }
      case "POST":
        return this.#create(
          r.resource,
          r.namespace,
          structuredClone(r.body as Obj),
          r.resource.includes("."),
        );
      case "PUT": {
        if (!k || !current) throw notFound(`${r.plural} "${r.name}"`);
        const body = structuredClone(r.body as Obj);
        const rv = body.metadata.resourceVersion;
        if (rv !== undefined && rv !== current.metadata.resourceVersion) throw conflict(r);
        const next = { ...body, metadata: { ...current.metadata, ...body.metadata } };
        return this.#store(k, current, next);
      }
      case "PATCH": {
        if (!k || !current) throw notFound(`${r.plural} "${r.name}"`);
        const patch = structuredClone(r.body as Record<string, unknown>);
        const pm = (patch.metadata ?? {}) as Record<string, unknown>;
        if (pm.resourceVersion !== undefined && pm.resourceVersion !== current.metadata.resourceVersion)
          throw conflict(r);
        delete pm.resourceVersion;
        let next: Obj;
        if (r.subresource === "status") {
          next = { ...current, status: mergePatch(current.status, patch.status) };
        } else {
          const { status: _ignored, ...rest } = patch;
          next = mergePatch(current, rest) as Obj;
          if (r.resource.includes(".")) next.status = current.status;
          next.metadata.uid = current.metadata.uid;
          next.metadata.name = current.metadata.name;
        }
        return this.#store(k, current, next);
      }
      case "DELETE": {
        if (!k || !current) throw notFound(`${r.plural} "${r.name}"`);
        const finalizers = (current.metadata.finalizers as string[] | undefined) ?? [];
        if (finalizers.length === 0) {
          this.#objects.delete(k);
          return { kind: "Status", status: "Success" };
        }
        if (!current.metadata.deletionTimestamp) {
          const next = structuredClone(current);
          next.metadata.deletionTimestamp = new Date().toISOString();
          next.metadata.resourceVersion = String(++this.#rv);
          this.#objects.set(k, next);
          return next;
        }
        return current;
      }
    }
  }

  /**
   * Paged lists as the API server serves them: `limit` pages in key order, `continue` reads the next
   * page of the same snapshot, `resourceVersion` + `resourceVersionMatch=Exact` reads a snapshot again.
   * Snapshots live until `compact()` (the API server's etcd compaction): then those reads answer 410.
   */
  #listOf(r: ParsedRequest, req: KubeRequest) {
    const q = req.query ?? {};
    const limit = Number(q.limit ?? 0);
    let snapshot: { rv: string; items: Obj[] } | undefined;
    let start = 0;
    if (q.continue) {
      const token = JSON.parse(Buffer.from(String(q.continue), "base64").toString("utf8")) as {
        rv: string;
        start: number;
      };
      snapshot = this.#snapshots.get(`${r.resource}|${token.rv}`);
      if (!snapshot) throw gone();
      start = token.start;
    } else if (q.resourceVersion && q.resourceVersionMatch === "Exact") {
      snapshot = this.#snapshots.get(`${r.resource}|${String(q.resourceVersion)}`);
      if (!snapshot) throw gone();
    } else {
      const items = [...this.#objects.entries()]
        .filter(([k]) => k.startsWith(`${r.resource}|`))
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([, o]) => structuredClone(o));
      snapshot = { rv: String(this.#rv), items };
      this.#snapshots.set(`${r.resource}|${snapshot.rv}`, snapshot);
    }
    const selector = parseSelector(q.labelSelector as string | undefined);
    const matching = snapshot.items.filter(
      (o) =>
        (!r.namespace || o.metadata.namespace === r.namespace) &&
        Object.entries(selector).every(([k, v]) => {
          const have = (o.metadata.labels as Record<string, string> | undefined)?.[k];
          if (v === true) return have !== undefined;
          return typeof v === "string" ? have === v : have !== undefined && v.includes(have);
        }),
    );
    const end = limit > 0 ? Math.min(matching.length, start + limit) : matching.length;
    const next =
      end < matching.length
        ? Buffer.from(JSON.stringify({ rv: snapshot.rv, start: end })).toString("base64")
        : undefined;
    return {
      items: structuredClone(matching.slice(start, end)),
      metadata: { resourceVersion: snapshot.rv, ...(next ? { continue: next } : {}) },
    };
  }

  readonly #snapshots = new Map<string, { rv: string; items: Obj[] }>();

  /** Forgets every list snapshot: continue tokens and Exact reads of them answer 410 Gone. */
  compact(): void {
    this.#snapshots.clear();
  }

  #create(resource: string, namespace: string | undefined, body: Obj, dropStatus: boolean): Obj {
    const name = body.metadata.name as string | undefined;
    if (!name) throw new KubeError("metadata.name: Required value", 422, { reason: "Invalid" });
    const k = keyOf(resource, namespace, name);
    if (this.#objects.has(k))
      throw new KubeError(`${resource} "${name}" already exists`, 409, { reason: "AlreadyExists" });
    const obj: Obj = {
      ...body,
      metadata: {
        ...body.metadata,
        ...(namespace ? { namespace } : {}),
        uid: randomUUID(),
        resourceVersion: String(++this.#rv),
        generation: 1,
        creationTimestamp: new Date().toISOString(),
      },
    };
    if (dropStatus) delete obj.status;
    this.#objects.set(k, obj);
    return obj;
  }

  /** Stores `next` over `current` as the API server would: no-op writes change nothing. */
  #store(k: string, current: Obj, next: Obj): Obj {
    const deleting = Boolean(current.metadata.deletionTimestamp);
    const before = new Set((current.metadata.finalizers as string[] | undefined) ?? []);
    const after = (next.metadata.finalizers as string[] | undefined) ?? [];
    if (deleting && after.some((f) => !before.has(f))) {
      throw new KubeError(
        "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted",
        422,
        { reason: "Invalid" },
      );
    }
    next.metadata.resourceVersion = current.metadata.resourceVersion;
    next.metadata.generation = current.metadata.generation;
    if (JSON.stringify(next) === JSON.stringify(current)) return current;
    if (JSON.stringify(next.spec) !== JSON.stringify(current.spec))
      next.metadata.generation = Number(current.metadata.generation ?? 1) + 1;
    next.metadata.resourceVersion = String(++this.#rv);
    if (deleting && after.length === 0) {
      this.#objects.delete(k);
      return next;
    }
    this.#objects.set(k, next);
    return next;
  }
}

/** A collection's key: `group/version/plural`, or `version/plural` for the core group (as requests parse). */
const resourceOf = (t: ResourceType) =>
  t.group === "" ? `${t.version}/${t.plural}` : `${t.group}/${t.version}/${t.plural}`;
const keyOf = (resource: string, namespace: string | undefined, name: string) =>
  `${resource}|${namespace ?? ""}|${name}`;

const conflict = (r: ParsedRequest) =>
  new ConflictError(
    `Operation cannot be fulfilled on ${r.plural} "${r.name}": the object has been modified; please apply your changes to the latest version and try again`,
    409,
    { reason: "Conflict" },
  );

function parse(req: KubeRequest): ParsedRequest {
  const parts = req.path.split("/").filter(Boolean).map(decodeURIComponent);
  // /api/v1/... or /apis/<group>/<version>/...
  const core = parts[0] === "api";
  const head = core ? ["v1"] : [parts[1] ?? "", parts[2] ?? ""];
  let rest = parts.slice(core ? 2 : 3);
  let namespace: string | undefined;
  if (rest[0] === "namespaces" && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const plural = rest[0] ?? "";
  return {
    method: req.method,
    resource: [...head, plural].join("/"),
    plural,
    namespace,
    name: rest[1],
    subresource: rest[2],
    body: req.body,
  };
}

/** Equality (`k=v`), set-based `k in (a,b)` and existence (`k`) requirements, comma-separated. */
function parseSelector(s: string | undefined): Record<string, string | string[] | true> {
  if (!s) return {};
  const out: Record<string, string | string[] | true> = {};
  for (const m of s.matchAll(/([^,=\s]+)\s+in\s+\(([^)]*)\)|([^,=]+)=([^,]*)|([^,=()\s]+)/g)) {
    if (m[1]) out[m[1]] = (m[2] ?? "").split(",").map((v) => v.trim());
    else if (m[3]) out[m[3]] = m[4] ?? "";
    else if (m[5]) out[m[5]] = true;
  }
  return out;
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return structuredClone(patch);
  const out: Record<string, unknown> =
    target && typeof target === "object" && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}
