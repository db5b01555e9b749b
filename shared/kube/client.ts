import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  createConfiguration,
  type KubeConfig,
  PatchStrategy,
  type RequestContext,
  type SecurityAuthentication,
  ServerConfiguration,
  setHeaderMiddleware,
  setHeaderOptions,
  type V1Secret,
} from "@kubernetes/client-node";
import type { ObjectMeta, ResourceType } from "../api/meta.ts";

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

export class KubeError extends Error {
  override name = "KubeError";
  readonly status: number;
  constructor(message: string, status: number, options?: ErrorOptions) {
    super(message, options);
    this.status = status;
  }
}
/** A resourceVersion precondition failed (409): someone else wrote first; re-read and retry. */
export class ConflictError extends KubeError {
  override name = "ConflictError";
}

export const statusOf = (err: unknown): number | undefined =>
  err instanceof ApiException ? err.code : err instanceof KubeError ? err.status : undefined;
export const isNotFound = (err: unknown) => statusOf(err) === 404;
export const isConflict = (err: unknown) => statusOf(err) === 409;

const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

function apiMessage(err: ApiException<unknown>): string {
  try {
    const body = typeof err.body === "string" ? JSON.parse(err.body) : err.body;
    if (body && typeof body === "object" && "message" in body)
      return String((body as { message: unknown }).message);
  } catch {
    // not JSON: fall through to the status code
  }
  return `HTTP ${err.code}`;
}

/** Turns client-node's ApiException into our small hierarchy, so callers branch on type. */
function wrap(op: string, err: unknown): Error {
  if (err instanceof ApiException) {
    const msg = `${op}: ${apiMessage(err)}`;
    return err.code === 409
      ? new ConflictError(msg, 409, { cause: err })
      : new KubeError(msg, err.code, { cause: err });
  }
  return new Error(`${op}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
}

/**
 * A thin layer over @kubernetes/client-node: the handful of calls the reconciler, forwarder and sweep
 * make, with request counters and typed errors.
 */
export class Kube {
  readonly config: KubeConfig;
  readonly #custom: CustomObjectsApi;
  readonly #core: CoreV1Api;
  readonly stats: KubeStats = { gets: 0, lists: 0, writes: 0, byOperation: {} };

  constructor(config: KubeConfig) {
    this.config = config;
    const pooled = pooledApiConfiguration(config);
    this.#custom = new CustomObjectsApi(pooled);
    this.#core = new CoreV1Api(pooled);
  }

  #count(kind: "gets" | "lists" | "writes", op: string) {
    this.stats[kind]++;
    this.stats.byOperation[op] = (this.stats.byOperation[op] ?? 0) + 1;
  }

  resetStats() {
    this.stats.gets = this.stats.lists = this.stats.writes = 0;
    this.stats.byOperation = {};
  }

  async #call<T>(kind: "gets" | "lists" | "writes", op: string, fn: () => Promise<T>): Promise<T> {
    this.#count(kind, op);
    try {
      return await fn();
    } catch (err) {
      throw wrap(op, err);
    }
  }

  /** Reads one object; undefined when it does not exist. */
  async get<T extends KubeObject>(t: ResourceType, name: string, namespace?: string): Promise<T | undefined> {
    try {
      return (await this.#call("gets", `get ${t.kind}`, () =>
        t.namespaced
          ? this.#custom.getNamespacedCustomObject({ ...gvp(t), namespace: namespace ?? "default", name })
          : this.#custom.getClusterCustomObject({ ...gvp(t), name }),
      )) as T;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async list<T extends KubeObject>(
    t: ResourceType,
    opts: { limit?: number; continue?: string; labelSelector?: string; namespace?: string } = {},
  ): Promise<ListPage<T>> {
    const page = (await this.#call("lists", `list ${t.kind}`, () => {
      const q = {
        ...gvp(t),
        ...(opts.limit ? { limit: opts.limit } : {}),
        ...(opts.continue ? { _continue: opts.continue } : {}),
        ...(opts.labelSelector ? { labelSelector: opts.labelSelector } : {}),
      };
      return t.namespaced && opts.namespace
        ? this.#custom.listNamespacedCustomObject({ ...q, namespace: opts.namespace })
        : this.#custom.listClusterCustomObject(q);
    })) as { items: T[]; metadata?: { continue?: string; resourceVersion?: string } };
    return {
      items: page.items,
      ...(page.metadata?.continue ? { continue: page.metadata.continue } : {}),
      ...(page.metadata?.resourceVersion ? { resourceVersion: page.metadata.resourceVersion } : {}),
    };
  }

  async create<T extends KubeObject>(t: ResourceType, obj: T): Promise<T> {
    return (await this.#call("writes", `create ${t.kind}`, () =>
      t.namespaced
        ? this.#custom.createNamespacedCustomObject({
            ...gvp(t),
            namespace: obj.metadata.namespace ?? "default",
            body: obj,
          })
        : this.#custom.createClusterCustomObject({ ...gvp(t), body: obj }),
    )) as T;
  }

  /**
   * JSON merge patch of the main resource. With `resourceVersion` the write is guarded: if the object
   * changed since it was read, the server answers 409 and this throws ConflictError.
   */
  async patch<T extends KubeObject>(
    t: ResourceType,
    name: string,
    patch: Record<string, unknown>,
    opts: { resourceVersion?: string; namespace?: string } = {},
  ): Promise<T> {
    const body = opts.resourceVersion ? withResourceVersion(patch, opts.resourceVersion) : patch;
    return (await this.#call("writes", `patch ${t.kind}`, () =>
      t.namespaced
        ? this.#custom.patchNamespacedCustomObject(
            { ...gvp(t), namespace: opts.namespace ?? "default", name, body },
            mergePatch,
          )
        : this.#custom.patchClusterCustomObject({ ...gvp(t), name, body }, mergePatch),
    )) as T;
  }

  /** JSON merge patch of the status subresource. */
  async patchStatus<T extends KubeObject>(
    t: ResourceType,
    name: string,
    status: Record<string, unknown>,
    opts: { namespace?: string } = {},
  ): Promise<T> {
    const body = { status };
    return (await this.#call("writes", `patch ${t.kind}/status`, () =>
      t.namespaced
        ? this.#custom.patchNamespacedCustomObjectStatus(
            { ...gvp(t), namespace: opts.namespace ?? "default", name, body },
            mergePatch,
          )
        : this.#custom.patchClusterCustomObjectStatus({ ...gvp(t), name, body }, mergePatch),
    )) as T;
  }

  async delete(t: ResourceType, name: string, namespace?: string): Promise<void> {
    try {
      await this.#call("writes", `delete ${t.kind}`, () =>
        t.namespaced
          ? this.#custom.deleteNamespacedCustomObject({ ...gvp(t), namespace: namespace ?? "default", name })
          : this.#custom.deleteClusterCustomObject({ ...gvp(t), name }),
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  async getSecret(namespace: string, name: string): Promise<V1Secret | undefined> {
    try {
      return await this.#call("gets", "get Secret", () =>
        this.#core.readNamespacedSecret({ namespace, name }),
      );
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async createSecret(secret: V1Secret): Promise<V1Secret> {
    const namespace = secret.metadata?.namespace ?? "default";
    return this.#call("writes", "create Secret", () =>
      this.#core.createNamespacedSecret({ namespace, body: secret }),
    );
  }

  async replaceSecret(secret: V1Secret): Promise<V1Secret> {
    const namespace = secret.metadata?.namespace ?? "default";
    const name = secret.metadata?.name ?? "";
    return this.#call("writes", "replace Secret", () =>
      this.#core.replaceNamespacedSecret({ namespace, name, body: secret }),
    );
  }

  async deleteSecret(namespace: string, name: string): Promise<void> {
    try {
      await this.#call("writes", "delete Secret", () =>
        this.#core.deleteNamespacedSecret({ namespace, name }),
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  get core(): CoreV1Api {
    return this.#core;
  }
}

/**
 * What `config.makeApiClient` builds, with one change: client-node 2.0 makes a new undici Agent for
 * every request (KubeConfig.applySecurityAuthentication), so each API call paid a new TLS handshake
 * (bench: 3–5× the time and CPU of a GET). Auth still runs per request (tokens re-read, exec plugins
 * refreshed); every request goes through the first request's Agent — one keep-alive pool per Kube.
 */
function pooledApiConfiguration(config: KubeConfig) {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error("no Kubernetes cluster configured in the kubeconfig");
  let dispatcher: ReturnType<RequestContext["getDispatcher"]>;
  const auth: SecurityAuthentication = {
    getName: () => "kubeconfig, one connection pool",
    async applySecurityAuthentication(context: RequestContext) {
      await config.applySecurityAuthentication(context);
      dispatcher ??= context.getDispatcher();
      if (dispatcher) context.setDispatcher(dispatcher);
    },
  };
  return createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: auth },
    middleware: [setHeaderMiddleware("User-Agent", "driftless (kubernetes-client-javascript)")],
  });
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

const gvp = (t: ResourceType) => ({ group: t.group, version: t.version, plural: t.plural });

function withResourceVersion(
  patch: Record<string, unknown>,
  resourceVersion: string,
): Record<string, unknown> {
  const metadata = (patch.metadata as Record<string, unknown> | undefined) ?? {};
  return { ...patch, metadata: { ...metadata, resourceVersion } };
}
