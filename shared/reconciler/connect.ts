// The engine's way to a provider: the ProviderConfig and Secret cache (one read per TTL, concurrent
// misses share one GET), the secret-namespace rule for Secrets a managed resource names, and the
// per-ProviderConfig rate limit around the client a provider returns.
import {
  type ConnectContext,
  CredentialsError,
  type ExternalClient,
  InvalidSpecError,
  type ManagedKindProvider,
} from "../api/external.ts";
import { type ManagedResource, providerConfigKey, providerConfigOf } from "../api/managed.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import { type Kube, secretKeyValue } from "../kube/client.ts";
import { DEFAULT_RATE_LIMIT, type RateLimit, RateLimiters, rateLimitOf } from "./rate-limit.ts";
import {
  checkClusterProviderConfigUse,
  checkNamespacedProviderConfig,
  type TenancyOptions,
  withProviderConfigNamespace,
} from "./tenancy.ts";

export const DEFAULT_PROVIDER_CONFIG_TTL_MS = 30_000;
/** Cached ProviderConfig credentials per process, at most. */
const MAX_CACHED = 1_000;

export interface ConnectorOptions {
  providerConfigTtlMs?: number;
  /**
   * Cloud calls per ProviderConfig (token bucket, per process); default DEFAULT_RATE_LIMIT (20/s,
   * burst 40); `false` turns it off.
   */
  rateLimit?: RateLimit | false;
  /** Processes of this deployment that may run at once: each takes limit ÷ instances (rate-limit.ts). */
  rateLimitInstances?: number;
  /**
   * Namespaces a managed resource may read Secrets from (a master password…) besides its connection
   * Secret's own; "*" allows any. Default none: a Secret can never be copied into another namespace.
   */
  secretRefNamespaces?: readonly string[];
  /** What namespaced ProviderConfigs may do (ambient identity, loopback endpoints): shared/reconciler/tenancy.ts. */
  tenancy?: TenancyOptions;
}

/** Connects a managed resource to its provider through its ProviderConfig, with cached credentials. */
export class ProviderConnector {
  readonly #kube: Kube;
  readonly #opts: {
    providerConfigTtlMs: number;
    secretRefNamespaces: readonly string[];
    tenancy: TenancyOptions;
  };
  readonly #providerConfigs = new Map<string, { at: number; pc: ProviderConfig }>();
  readonly #secrets = new Map<string, { at: number; value: string }>();
  /** ProviderConfig and Secret reads in flight: concurrent cache misses share one GET. */
  readonly #reading = new Map<string, Promise<unknown>>();
  readonly #rateLimits: RateLimiters | undefined;

  constructor(kube: Kube, opts: ConnectorOptions = {}) {
    this.#kube = kube;
    const rateLimit = opts.rateLimit ?? DEFAULT_RATE_LIMIT;
    this.#rateLimits =
      rateLimit === false ? undefined : new RateLimiters(rateLimit, opts.rateLimitInstances ?? 1);
    this.#opts = {
      providerConfigTtlMs: opts.providerConfigTtlMs ?? DEFAULT_PROVIDER_CONFIG_TTL_MS,
      secretRefNamespaces: opts.secretRefNamespaces ?? [],
      tenancy: opts.tenancy ?? {},
    };
  }

  /** The provider's client for this resource, rate-limited per ProviderConfig; CredentialsError when it cannot. */
  connect(
    provider: ManagedKindProvider,
    mr: ManagedResource,
  ): Promise<ExternalClient<Record<string, unknown>, Record<string, unknown>>> {
    return this.session(
      provider.definition,
      mr,
      (ctx) => provider.connect(ctx),
      (client, rateLimit) =>
        rateLimit && !provider.limitsEachRequest ? limitOperations(client, rateLimit) : client,
    );
  }

  /**
   * What `make` builds from the connect context of the ProviderConfig `mr` names (a kind's client, or a
   * cloud-wide call such as `driftless orphans`' tag search, which awaits `ctx.rateLimit` per request),
   * with the same credential cache, Secret rules and rate limit as every client.
   */
  async session<T>(
    def: ManagedKindProvider["definition"],
    mr: ManagedResource,
    // biome-ignore lint/suspicious/noExplicitAny: each cloud's ProviderConfig spec type differs
    make: (ctx: ConnectContext<any>) => Promise<T>,
    finish: (made: T, rateLimit: (() => Promise<void>) | undefined) => T = (made) => made,
  ): Promise<T> {
    const target = providerConfigOf(def, mr);
    const { name, type: pcType } = target;
    const cacheKey = providerConfigKey(target);
    const cached = this.#providerConfigs.get(cacheKey);
    let pc = cached && Date.now() - cached.at < this.#opts.providerConfigTtlMs ? cached.pc : undefined;
    if (!pc) {
      pc = await this.#once(`pc/${cacheKey}`, () => this.#readProviderConfig(target));
      if (this.#providerConfigs.size >= MAX_CACHED) this.#providerConfigs.clear();
      this.#providerConfigs.set(cacheKey, { at: Date.now(), pc });
    }
    // A ClusterProviderConfig serves the namespaces it allows; checked on every use (the cache is shared).
    if (pcType.kind === "ClusterProviderConfig")
      checkClusterProviderConfigUse(pc, mr.metadata.namespace ?? "");
    const providerConfig = pc;
    const rateLimit = this.#rateLimits?.for(cacheKey, rateLimitOf(pc.spec)).acquire;
    try {
      const pcSecretRefs = secretRefsIn(providerConfig.spec);
      const pcSecrets = new Set([...pcSecretRefs].map((k) => k.slice(0, k.lastIndexOf("/"))));
      const namedByResource = secretsNamedIn(mr.spec, mr.metadata.namespace);
      const made = await make({
        providerConfig,
        ...(rateLimit ? { rateLimit } : {}),
        readSecretKey: async (ref) => {
          // The ProviderConfig's own credentials are read once per TTL, not once per reconcile (the in-sync
          // path stays at one GET); any other Secret a resource names (a password to rotate) is read fresh.
          const secretKey = `${ref.namespace}/${ref.name}/${ref.key}`;
          const secretName = `${ref.namespace}/${ref.name}`;
          // A credential read is one the ProviderConfig names and the resource does not: a resource that
          // names a credential Secret would copy it into the cloud and its connection Secret.
          const cacheable = pcSecretRefs.has(secretKey) && !namedByResource.has(secretName);
          if (!cacheable) {
            if (pcSecrets.has(secretName))
              throw new InvalidSpecError(
                `Secret ${secretName} holds the credentials of ${pcType.kind} "${name}": a managed resource may not read it`,
              );
            this.#checkSecretNamespace(mr, ref.namespace, secretName);
          }
          const hit = cacheable ? this.#secrets.get(secretKey) : undefined;
          if (hit && Date.now() - hit.at < this.#opts.providerConfigTtlMs) return hit.value;
          const secret = await this.#once(`secret/${ref.namespace}/${ref.name}`, () =>
            this.#kube.getSecret(ref.namespace, ref.name),
          );
          const found = secretKeyValue(secret, ref);
          if ("missing" in found) throw new CredentialsError(`ProviderConfig "${name}": ${found.missing}`);
          if (cacheable) this.#remember(secretKey, found.value);
          return found.value;
        },
      });
      return finish(made, rateLimit);
    } catch (err) {
      this.#providerConfigs.delete(cacheKey);
      throw err instanceof CredentialsError
        ? err
        : new CredentialsError(`ProviderConfig "${name}": ${(err as Error).message}`, { cause: err });
    }
  }

  /**
   * Reads the ProviderConfig a resource names. A namespaced one is checked against the tenancy rules
   * (ambient identity, endpoints) once per read, and its Secret references completed with its namespace.
   */
  async #readProviderConfig(target: ReturnType<typeof providerConfigOf>): Promise<ProviderConfig> {
    const { name, type } = target;
    const pc = await this.#kube.get<ProviderConfig & { [k: string]: unknown }>(type, name, target.namespace);
    if (!pc) {
      const where = target.namespace ? ` in namespace "${target.namespace}"` : "";
      throw new CredentialsError(
        `${type.kind} "${name}" (${type.group})${where} not found: create it, or set spec.providerConfigRef`,
      );
    }
    if (!type.namespaced) return pc;
    await checkNamespacedProviderConfig(pc, this.#opts.tenancy);
    return withProviderConfigNamespace(pc);
  }

  /** One read per key at a time: at TTL expiry, C concurrent reconciles make one GET, not C. */
  #once<T>(key: string, read: () => Promise<T>): Promise<T> {
    let p = this.#reading.get(key) as Promise<T> | undefined;
    if (!p) {
      p = read().finally(() => this.#reading.delete(key));
      this.#reading.set(key, p);
    }
    return p;
  }

  /**
   * A Secret a managed resource names (not its ProviderConfig's credentials) must live where its details
   * may go: the connection Secret's namespace, or one the platform allows. Otherwise anyone who may create
   * a managed resource could copy any Secret of the cluster into a namespace they read.
   */
  #checkSecretNamespace(mr: ManagedResource, namespace: string, what: string) {
    // A namespaced resource reads Secrets from its own namespace only, whatever the platform allows others.
    if (mr.metadata.namespace !== undefined) {
      if (namespace === mr.metadata.namespace) return;
      throw new InvalidSpecError(
        `Secret ${what} is not in namespace "${mr.metadata.namespace}": a namespaced resource reads Secrets only from its own namespace`,
      );
    }
    // Without a connection Secret the rule still holds: only namespaces the platform allows.
    const allowed = this.#opts.secretRefNamespaces;
    const own = mr.spec.writeConnectionSecretToRef?.namespace;
    if (namespace === own || allowed.includes("*") || allowed.includes(namespace)) return;
    const where =
      own === undefined
        ? "the resource has no connection Secret, so it"
        : `it is not in the connection Secret's namespace "${own}": a managed resource`;
    throw new InvalidSpecError(
      `Secret ${what}: ${where} may read Secrets only from ${own === undefined ? "" : "there or from "}a namespace the platform allows (DRIFTLESS_SECRET_REF_NAMESPACES)`,
    );
  }

  /** Caches a ProviderConfig's credential; expired entries go once the map grows, so it stays bounded. */
  #remember(secretKey: string, value: string) {
    if (this.#secrets.size >= MAX_CACHED) {
      const now = Date.now();
      for (const [k, v] of this.#secrets)
        if (now - v.at >= this.#opts.providerConfigTtlMs) this.#secrets.delete(k);
      if (this.#secrets.size >= MAX_CACHED) this.#secrets.clear();
    }
    this.#secrets.set(secretKey, { at: Date.now(), value });
  }

  /**
   * Forgets cached ProviderConfigs, e.g. after credentials were refused: only the one named (its object
   * and its Secrets), so one bad ProviderConfig does not make every other one be read again; all without.
   */
  invalidateProviderConfigs(cacheKey?: string) {
    if (cacheKey === undefined) {
      this.#providerConfigs.clear();
      this.#secrets.clear();
      return;
    }
    const cached = this.#providerConfigs.get(cacheKey);
    this.#providerConfigs.delete(cacheKey);
    if (cached) for (const k of secretRefsIn(cached.pc.spec)) this.#secrets.delete(k);
  }
}

/** Awaits the rate limit before each external operation, for providers that do not limit each request. */
function limitOperations<F, A>(
  client: ExternalClient<F, A>,
  acquire: () => Promise<void>,
): ExternalClient<F, A> {
  return {
    observe: async (mr, name) => {
      await acquire();
      return client.observe(mr, name);
    },
    create: async (mr, name) => {
      await acquire();
      return client.create(mr, name);
    },
    update: async (mr, name, obs) => {
      await acquire();
      return client.update(mr, name, obs);
    },
    delete: async (mr, name) => {
      await acquire();
      return client.delete(mr, name);
    },
    // observeMany awaits the limit before each request itself (one list call covers many resources).
    ...(client.observeMany ? { observeMany: client.observeMany.bind(client) } : {}),
    // Where the resource lives comes from the ProviderConfig's cached identity, not from the resource.
    ...(client.home ? { home: client.home.bind(client) } : {}),
    // Listing for `driftless import`: a few pages, once per command.
    ...(client.list ? { list: client.list.bind(client) } : {}),
  };
}

/**
 * Every Secret (`namespace/name`) a resource's spec names: a reference with a name and a key or a
 * namespace; without a namespace, a namespaced resource's own.
 */
function secretsNamedIn(spec: unknown, namespace: string | undefined, out = new Set<string>()): Set<string> {
  if (spec && typeof spec === "object") {
    const o = spec as Record<string, unknown>;
    const ns =
      typeof o.namespace === "string" ? o.namespace : typeof o.key === "string" ? namespace : undefined;
    if (typeof o.name === "string" && ns !== undefined) out.add(`${ns}/${o.name}`);
    for (const v of Object.values(o)) secretsNamedIn(v, namespace, out);
  }
  return out;
}

/** Every Secret key a ProviderConfig names (`{namespace, name, key}` anywhere in its spec). */
function secretRefsIn(spec: unknown, out = new Set<string>()): Set<string> {
  if (spec && typeof spec === "object") {
    const o = spec as Record<string, unknown>;
    if (typeof o.namespace === "string" && typeof o.name === "string" && typeof o.key === "string") {
      out.add(`${o.namespace}/${o.name}/${o.key}`);
    }
    for (const v of Object.values(o)) secretRefsIn(v, out);
  }
  return out;
}
