import type { KubeConfig, V1Secret } from "@kubernetes/client-node";
import type { ObjectMeta, ResourceType } from "../api/meta.ts";
import {
  type ClusterEndpoint,
  ConflictError,
  KubeError,
  KubeHttp,
  type KubeRequest,
  type OpenStream,
  seg,
  type WatchEvent,
} from "./http.ts";
import { endpointFromKubeConfig } from "./kubeconfig-endpoint.ts";

export { ConflictError, KubeError, type OpenStream, type WatchEvent } from "./http.ts";

/** Any Kubernetes object with our minimal metadata. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface ListPage<T> {
  items: T[];
  continue?: string;
  resourceVersion?: string;
}

/** Request counters: tests and benchmarks assert "zero writes for an in-sync resource" with these. */
export interface KubeStats {
  gets: number;
  lists: number;
  writes: number;
  byOperation: Record<string, number>;
}

/**
 * client-node's ApiException, recognised by shape: this file must not import client-node at run time
 * (see http.ts), and a minified bundle renames classes.
 */
function apiExceptionCode(err: unknown): number | undefined {
  const e = err as { code?: unknown; body?: unknown; headers?: unknown } | undefined;
  return e && typeof e === "object" && typeof e.code === "number" && "body" in e && "headers" in e
    ? e.code
    : undefined;
}

/**
 * The field manager of the managed engine's writes to its own objects (`?fieldManager=`): the admission
 * doorbell drops them, the engine requeues itself when it needs to look again.
 */
export const FIELD_MANAGER = "driftless";
/**
 * The claim binder's: its writes create and change *other* objects (the managed resources of a claim),
 * which must be reconciled at once, so they ring the doorbell like anyone's.
 */
export const CLAIMS_FIELD_MANAGER = "driftless-claims";

export const statusOf = (err: unknown): number | undefined =>
  err instanceof KubeError ? err.status : apiExceptionCode(err);
export const isNotFound = (err: unknown) => statusOf(err) === 404;
export const isConflict = (err: unknown) => statusOf(err) === 409;

const MERGE_PATCH = "application/merge-patch+json";

/** Prefixes the operation, so a log line or condition says what failed: "patch Queue: <server message>". */
function wrap(op: string, err: unknown): Error {
  if (err instanceof KubeError) {
    const msg = `${op}: ${err.message}`;
    const opts = { cause: err, reason: err.reason };
    return err instanceof ConflictError
      ? new ConflictError(msg, err.status, opts)
      : new KubeError(msg, err.status, opts);
  }
  return new Error(`${op}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
}

/** What Kube sends its requests through: KubeHttp on the wire, or an in-memory API server in engine tests. */
export interface KubeTransport {
  request<T>(req: KubeRequest): Promise<T>;
  /** Newline-delimited JSON streams (watches); a transport without it cannot watch. */
  stream?(
    req: KubeRequest,
    onEvent: (event: WatchEvent) => void,
    opts?: { signal?: AbortSignal; idleTimeoutMs?: number },
  ): Promise<OpenStream>;
}

export interface WatchOptions {
  /** Where to start; unset means "from now" after a synthetic ADDED per existing object. */
  resourceVersion?: string | undefined;
  labelSelector?: string | undefined;
  /** The server ends the watch after this long (clients resume from the last resourceVersion). */
  timeoutSeconds?: number | undefined;
  allowWatchBookmarks?: boolean | undefined;
  /** Only this namespace (namespaced kinds); default every namespace. */
  namespace?: string | undefined;
}

/** Type of a watch event: ADDED, MODIFIED, DELETED, BOOKMARK (resourceVersion only) or ERROR (a Status). */
export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

/** With no data for this long beyond the watch's own timeout, the connection counts as dead. */
const WATCH_IDLE_GRACE_MS = 30_000;
/** The server's own limit when a watch asks for none (kube-apiserver --min-request-timeout × 2). */
const SERVER_MAX_WATCH_S = 3_600;

const isKubeConfig = (x: KubeConfig | ClusterEndpoint | KubeTransport): x is KubeConfig =>
  typeof (x as KubeConfig).getCurrentCluster === "function";
const isTransport = (x: KubeConfig | ClusterEndpoint | KubeTransport): x is KubeTransport =>
  typeof (x as KubeTransport).request === "function";

/**
 * The handful of calls the reconciler, forwarder and sweep make, over one keep-alive connection pool,
 * with request counters and typed errors. Built from a client-node KubeConfig (`config` is then set, for
 * the generated APIs: see core.ts) or from a ClusterEndpoint (functions); watches need neither.
 */
export class Kube {
  readonly config: KubeConfig | undefined;
  readonly http: KubeTransport;
  readonly stats: KubeStats = { gets: 0, lists: 0, writes: 0, byOperation: {} };
  /** Sent as `?fieldManager=` with every create, update and patch (see FIELD_MANAGER). */
  readonly fieldManager: string | undefined;

  /**
   * `opts.fieldManager`: the reconcilers' client names FIELD_MANAGER, so the admission doorbell can tell
   * driftless's own writes from a person's (a CLI command such as `driftless trigger` must ring it).
   */
  constructor(
    source: KubeConfig | ClusterEndpoint | KubeTransport | Kube,
    opts: { fieldManager?: string } = {},
  ) {
    this.fieldManager = opts.fieldManager;
    if (source instanceof Kube) {
      // The same connection and request counts under another field manager.
      this.config = source.config;
      this.http = source.http;
      this.stats = source.stats;
    } else if (isTransport(source)) {
      this.config = undefined;
      this.http = source;
    } else if (isKubeConfig(source)) {
      this.config = source;
      this.http = new KubeHttp(endpointFromKubeConfig(source));
    } else {
      this.config = undefined;
      this.http = new KubeHttp(source);
    }
  }

  /** The KubeConfig this Kube was built from; client-node's generated APIs need one. */
  kubeConfig(forWhat: string): KubeConfig {
    if (!this.config)
      throw new Error(`${forWhat} needs a kubeconfig; this client was built from a cluster endpoint only`);
    return this.config;
  }

  #count(kind: "gets" | "lists" | "writes", op: string) {
    this.stats[kind]++;
    this.stats.byOperation[op] = (this.stats.byOperation[op] ?? 0) + 1;
  }

  resetStats() {
    this.stats.gets = this.stats.lists = this.stats.writes = 0;
    this.stats.byOperation = {};
  }

  async #call<T>(kind: "gets" | "lists" | "writes", op: string, req: KubeRequest): Promise<T> {
    this.#count(kind, op);
    // The reconcilers' writes name driftless as their field manager: what the admission doorbell
    // (shared/doorbell/admission.ts) recognises its own writes by, and what managedFields show.
    const sent =
      this.fieldManager && (req.method === "POST" || req.method === "PUT" || req.method === "PATCH")
        ? { ...req, query: { ...req.query, fieldManager: this.fieldManager } }
        : req;
    try {
      return await this.http.request<T>(sent);
    } catch (err) {
      throw wrap(op, err);
    }
  }

  /** #call, with 404 as undefined (reads) or as done (deletes). */
  async #callOrAbsent<T>(kind: "gets" | "writes", op: string, req: KubeRequest): Promise<T | undefined> {
    try {
      return await this.#call<T>(kind, op, req);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Reads one object; undefined when it does not exist. */
  get<T extends KubeObject>(t: ResourceType, name: string, namespace?: string): Promise<T | undefined> {
    return this.#callOrAbsent<T>("gets", `get ${t.kind}`, {
      method: "GET",
      path: objectPath(t, namespace, name),
    });
  }

  async list<T extends KubeObject>(
    t: ResourceType,
    opts: {
      limit?: number;
      continue?: string;
      labelSelector?: string;
      namespace?: string;
      /** With resourceVersionMatch "Exact": the list as it was at that resourceVersion (410 once compacted). */
      resourceVersion?: string;
      resourceVersionMatch?: "Exact" | "NotOlderThan";
    } = {},
  ): Promise<ListPage<T>> {
    const page = await this.#call<{ items: T[]; metadata?: { continue?: string; resourceVersion?: string } }>(
      "lists",
      `list ${t.kind}`,
      {
        method: "GET",
        path: collectionPath(t, t.namespaced ? opts.namespace : undefined),
        query: {
          limit: opts.limit || undefined,
          continue: opts.continue,
          labelSelector: opts.labelSelector,
          resourceVersion: opts.resourceVersion,
          resourceVersionMatch: opts.resourceVersionMatch,
        },
      },
    );
    return {
      items: page.items ?? [],
      ...(page.metadata?.continue ? { continue: page.metadata.continue } : {}),
      ...(page.metadata?.resourceVersion ? { resourceVersion: page.metadata.resourceVersion } : {}),
    };
  }

  /** A list page by page, `limit` objects at a time; no page at all when the kind's CRD is not installed. */
  async *listPages<T extends KubeObject>(
    t: ResourceType,
    opts: { limit: number; labelSelector?: string; namespace?: string },
  ): AsyncGenerator<T[]> {
    let cont: string | undefined;
    do {
      let page: ListPage<T>;
      try {
        page = await this.list<T>(t, { ...opts, ...(cont ? { continue: cont } : {}) });
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
      yield page.items;
      cont = page.continue;
    } while (cont);
  }

  create<T extends KubeObject>(t: ResourceType, obj: T): Promise<T> {
    return this.#call<T>("writes", `create ${t.kind}`, {
      method: "POST",
      path: collectionPath(t, obj.metadata.namespace ?? "default"),
      body: obj,
    });
  }

  /** Replaces the whole object (PUT); its metadata.resourceVersion guards the write (stale → ConflictError). */
  replace<T extends KubeObject>(t: ResourceType, obj: T): Promise<T> {
    return this.#call<T>("writes", `replace ${t.kind}`, {
      method: "PUT",
      path: objectPath(t, obj.metadata.namespace, obj.metadata.name),
      body: obj,
    });
  }

  /**
   * JSON merge patch of the main resource. With `resourceVersion` the write is guarded: if the object
   * changed since it was read, the server answers 409 and this throws ConflictError.
   */
  patch<T extends KubeObject>(
    t: ResourceType,
    name: string,
    patch: Record<string, unknown>,
    opts: { resourceVersion?: string; namespace?: string } = {},
  ): Promise<T> {
    const body = opts.resourceVersion ? withResourceVersion(patch, opts.resourceVersion) : patch;
    return this.#call<T>("writes", `patch ${t.kind}`, {
      method: "PATCH",
      path: objectPath(t, opts.namespace, name),
      body,
      contentType: MERGE_PATCH,
    });
  }

  /** JSON merge patch of the status subresource. */
  patchStatus<T extends KubeObject>(
    t: ResourceType,
    name: string,
    status: Record<string, unknown>,
    opts: { namespace?: string } = {},
  ): Promise<T> {
    return this.#call<T>("writes", `patch ${t.kind}/status`, {
      method: "PATCH",
      path: `${objectPath(t, opts.namespace, name)}/status`,
      body: { status },
      contentType: MERGE_PATCH,
    });
  }

  async delete(t: ResourceType, name: string, namespace?: string): Promise<void> {
    await this.#callOrAbsent("writes", `delete ${t.kind}`, {
      method: "DELETE",
      path: objectPath(t, namespace, name),
    });
  }

  getSecret(namespace: string, name: string): Promise<V1Secret | undefined> {
    return this.#callOrAbsent<V1Secret>("gets", "get Secret", {
      method: "GET",
      path: secretPath(namespace, name),
    });
  }

  /** The Secrets of a namespace that match a label selector (one request, no paging: few per namespace). */
  async listSecrets(namespace: string, labelSelector: string): Promise<V1Secret[]> {
    const list = await this.#call<{ items?: V1Secret[] }>("lists", "list Secrets", {
      method: "GET",
      path: secretPath(namespace),
      query: { labelSelector },
    });
    return list.items ?? [];
  }

  createSecret(secret: V1Secret): Promise<V1Secret> {
    return this.#call<V1Secret>("writes", "create Secret", {
      method: "POST",
      path: secretPath(secret.metadata?.namespace ?? "default"),
      body: secret,
    });
  }

  replaceSecret(secret: V1Secret): Promise<V1Secret> {
    return this.#call<V1Secret>("writes", "replace Secret", {
      method: "PUT",
      path: secretPath(secret.metadata?.namespace ?? "default", secret.metadata?.name ?? ""),
      body: secret,
    });
  }

  async deleteSecret(namespace: string, name: string): Promise<void> {
    await this.#callOrAbsent("writes", "delete Secret", {
      method: "DELETE",
      path: secretPath(namespace, name),
    });
  }

  /** Creates a core/v1 Event (events.ts builds it). */
  createEvent<T extends { metadata?: { name?: string } }>(namespace: string, event: T): Promise<T> {
    return this.#call<T>("writes", "create Event", {
      method: "POST",
      path: `/api/v1/namespaces/${seg(namespace)}/events`,
      body: event,
    });
  }

  /** Merge-patches a core/v1 Event (a repeated event bumps its count). */
  patchEvent(namespace: string, name: string, patch: Record<string, unknown>): Promise<unknown> {
    return this.#call("writes", "patch Event", {
      method: "PATCH",
      path: `/api/v1/namespaces/${seg(namespace)}/events/${seg(name)}`,
      body: patch,
      contentType: MERGE_PATCH,
    });
  }

  /**
   * Watches a kind: resolves once the server accepted the watch (a refusal rejects, e.g. 404 for a CRD
   * that is not installed, 410 for an expired resourceVersion), then calls `onEvent` per event until the
   * server ends the watch (`ended` resolves), `signal` aborts it (resolves too) or the stream breaks
   * (`ended` rejects). ERROR events are passed on: the caller decides (410 Gone → relist).
   */
  async watch<T = KubeObject>(
    t: ResourceType,
    opts: WatchOptions,
    onEvent: (type: WatchEventType, object: T) => void,
    signal?: AbortSignal,
  ): Promise<OpenStream> {
    const op = `watch ${t.kind}`;
    if (!this.http.stream) throw new Error(`${op}: this client's transport cannot stream`);
    this.stats.byOperation[op] = (this.stats.byOperation[op] ?? 0) + 1;
    const idleTimeoutMs = (opts.timeoutSeconds ?? SERVER_MAX_WATCH_S) * 1000 + WATCH_IDLE_GRACE_MS;
    try {
      const open = await this.http.stream(
        {
          method: "GET",
          path: collectionPath(t, t.namespaced ? opts.namespace : undefined),
          query: {
            watch: true,
            resourceVersion: opts.resourceVersion,
            labelSelector: opts.labelSelector,
            timeoutSeconds: opts.timeoutSeconds,
            allowWatchBookmarks: opts.allowWatchBookmarks || undefined,
          },
        },
        (e) => onEvent(e.type as WatchEventType, e.object as T),
        { ...(signal ? { signal } : {}), idleTimeoutMs },
      );
      return {
        ended: open.ended.catch((err: unknown) => {
          throw wrap(op, err);
        }),
      };
    } catch (err) {
      throw wrap(op, err);
    }
  }

  /** core/v1 Events of a namespace, e.g. with `involvedObject.uid=<uid>` as the field selector. */
  async listEvents<T>(namespace: string, fieldSelector?: string): Promise<T[]> {
    const list = await this.#call<{ items?: T[] }>("lists", "list Event", {
      method: "GET",
      path: `/api/v1/namespaces/${seg(namespace)}/events`,
      query: { fieldSelector },
    });
    return list.items ?? [];
  }
}

/** The decoded value of one Secret key, or the reason there is none, worded for a condition message. */
export function secretKeyValue(
  secret: V1Secret | undefined,
  ref: { namespace: string; name: string; key: string },
): { value: string } | { missing: string } {
  const raw = secret?.data?.[ref.key];
  if (raw === undefined) {
    return {
      missing: `Secret ${ref.namespace}/${ref.name} ${secret ? `has no key "${ref.key}"` : "not found"}`,
    };
  }
  return { value: Buffer.from(raw, "base64").toString("utf8") };
}

/** `/apis/<group>/<version>[/namespaces/<ns>]/<plural>`; namespaced kinds default to "default" when given none. */
function collectionPath(t: ResourceType, namespace: string | undefined): string {
  const ns = t.namespaced && namespace ? `/namespaces/${seg(namespace)}` : "";
  // The core group ("") lives under /api, every other group under /apis.
  const root = t.group === "" ? `/api/${t.version}` : `/apis/${t.group}/${t.version}`;
  return `${root}${ns}/${t.plural}`;
}

const objectPath = (t: ResourceType, namespace: string | undefined, name: string) =>
  `${collectionPath(t, t.namespaced ? (namespace ?? "default") : undefined)}/${seg(name)}`;

const secretPath = (namespace: string, name?: string) =>
  `/api/v1/namespaces/${seg(namespace)}/secrets${name === undefined ? "" : `/${seg(name)}`}`;

function withResourceVersion(
  patch: Record<string, unknown>,
  resourceVersion: string,
): Record<string, unknown> {
  const metadata = (patch.metadata as Record<string, unknown> | undefined) ?? {};
  return { ...patch, metadata: { ...metadata, resourceVersion } };
}
