import type {
  ConnectionDetails,
  ExternalClient,
  ExternalObservation,
  ManagedKindProvider,
} from "../api/external.ts";
import { CredentialsError, DependentsExistError, InvalidSpecError, ThrottledError } from "../api/external.ts";
import type { ManagedResource } from "../api/managed.ts";
import { Annotations, type Condition, DEFAULT_PROVIDER_CONFIG, MANAGED_FINALIZER } from "../api/meta.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import { ConflictError, type Kube, KubeError, secretKeyValue } from "../kube/client.ts";
import { deepEqual, driftedFields, lateInitialize, mapPaths, parseDuration } from "./compare.ts";
import {
  available,
  creating,
  deleting,
  getCondition,
  reconcileError,
  reconcilePaused,
  reconcileSuccess,
  setConditions,
  unavailable,
} from "./conditions.ts";
import { ConnectionPublisher } from "./connection.ts";
import { resolvePolicies } from "./policies.ts";
import { DEFAULT_RATE_LIMIT, type RateLimit, RateLimiters } from "./rate-limit.ts";
import { ReferenceNotReadyError, resolveReferences } from "./references.ts";
import type { KindRegistry } from "./registry.ts";

export const DEFAULT_POLL_INTERVAL_MS = 5 * 60_000;
export const DEFAULT_CREATION_GRACE_MS = 30_000;
/** How long a create may take before an unfinished one (pending, no result) is considered interrupted. */
export const DEFAULT_CREATE_PENDING_TIMEOUT_MS = 60_000;
export const DEFAULT_PROVIDER_CONFIG_TTL_MS = 30_000;
const SHORT_REQUEUE_MS = 2_000;
const MIN_ERROR_BACKOFF_MS = 1_000;
const MAX_ERROR_BACKOFF_MS = 5 * 60_000;
const MAX_REFERENCE_BACKOFF_MS = 30_000;
const DEPENDENTS_REQUEUE_MS = 5_000;

// Short constant messages wrapped around the cause, as crossplane-runtime does.
export const Msg = {
  getManaged: "cannot get managed resource",
  unknownKind: "no provider is registered for this kind",
  invalidSpec: "invalid spec",
  connect: "cannot connect to the provider",
  observe: "cannot observe external resource",
  create: "cannot create external resource",
  update: "cannot update external resource",
  delete: "cannot delete external resource",
  publish: "cannot publish connection details",
  unpublish: "cannot unpublish connection details",
  addFinalizer: "cannot add finalizer",
  removeFinalizer: "cannot remove finalizer",
  lateInit: "cannot update managed resource with late-initialized fields",
  recordCreate: "cannot record the result of creating the external resource",
  resolveReferences: "cannot resolve references",
  notFoundObserveOnly:
    "external resource does not exist; with managementPolicies [Observe] driftless only imports existing resources — check the crossplane.io/external-name annotation",
  policiesNeedObserve: "managementPolicies must include Observe (or *)",
} as const;

export type Outcome =
  | "gone"
  | "paused"
  | "in-sync"
  | "created"
  | "updated"
  | "late-initialized"
  | "creating"
  | "deleting"
  | "deleted"
  | "orphaned"
  | "blocked"
  | "conflict"
  | "error";

export interface ReconcileResult {
  outcome: Outcome;
  /** Reconcile this key again after this delay (jittered). Absent: the drift sweep is enough. */
  requeueAfterMs?: number;
  /** When the sweep should next look at it (the poll interval), for callers that schedule themselves. */
  pollAfterMs?: number;
  error?: Error;
}

export interface ResourceKey {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

export interface ReconcileLogger {
  info(obj: Record<string, unknown>, msg?: string): void;
  warn(obj: Record<string, unknown>, msg?: string): void;
  error(obj: Record<string, unknown>, msg?: string): void;
  debug(obj: Record<string, unknown>, msg?: string): void;
}

export interface EventRecorder {
  record(mr: ManagedResource, type: "Normal" | "Warning", reason: string, message: string): Promise<void>;
}

/** Counts of external calls by verb, for metrics and "exactly one Create" assertions. */
export interface ExternalCallStats {
  observe: number;
  create: number;
  update: number;
  delete: number;
}

/** Optional metrics hook: one call per reconcile and one per external call (errorClass: the error's name). */
export interface ReconcileMetrics {
  reconciled(kind: string, outcome: Outcome, durationMs: number): void;
  externalCall(kind: string, verb: keyof ExternalCallStats, errorClass: string | undefined): void;
}

export interface ReconcilerOptions {
  pollIntervalMs?: number;
  creationGracePeriodMs?: number;
  createPendingTimeoutMs?: number;
  providerConfigTtlMs?: number;
  logger?: ReconcileLogger;
  events?: EventRecorder;
  metrics?: ReconcileMetrics;
  /**
   * Cloud calls per ProviderConfig (token bucket, per process); default DEFAULT_RATE_LIMIT (20/s,
   * burst 40); `false` turns it off.
   */
  rateLimit?: RateLimit | false;
  now?: () => Date;
  /** Deterministic jitter source for tests; default Math.random. */
  random?: () => number;
}

const noopLogger: ReconcileLogger = { info() {}, warn() {}, error() {}, debug() {} };

interface Step {
  mr: ManagedResource;
  conditions: Condition[];
  atProvider?: Record<string, unknown>;
}

/**
 * The generic managed reconciler: Crossplane's semantics for one managed resource per call, any kind.
 * Level-triggered: it reads the object fresh, so a stale or duplicate message can do no harm.
 */
export class Reconciler {
  readonly #kube: Kube;
  readonly #registry: KindRegistry;
  readonly #publisher: ConnectionPublisher;
  readonly #opts: Required<Omit<ReconcilerOptions, "events" | "metrics" | "rateLimit">> & {
    events?: EventRecorder;
    metrics?: ReconcileMetrics;
  };
  readonly #providerConfigs = new Map<string, { at: number; pc: ProviderConfig }>();
  readonly #secrets = new Map<string, { at: number; value: string }>();
  /** ProviderConfig and Secret reads in flight: concurrent cache misses share one GET. */
  readonly #reading = new Map<string, Promise<unknown>>();
  readonly #mapPaths = new Map<string, Set<string>>();
  readonly #rateLimits: RateLimiters | undefined;
  readonly externalCalls: ExternalCallStats = { observe: 0, create: 0, update: 0, delete: 0 };

  constructor(kube: Kube, registry: KindRegistry, opts: ReconcilerOptions = {}) {
    this.#kube = kube;
    this.#registry = registry;
    this.#publisher = new ConnectionPublisher(kube);
    const rateLimit = opts.rateLimit ?? DEFAULT_RATE_LIMIT;
    this.#rateLimits = rateLimit === false ? undefined : new RateLimiters(rateLimit);
    this.#opts = {
      pollIntervalMs: opts.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
      creationGracePeriodMs: opts.creationGracePeriodMs ?? DEFAULT_CREATION_GRACE_MS,
      createPendingTimeoutMs: opts.createPendingTimeoutMs ?? DEFAULT_CREATE_PENDING_TIMEOUT_MS,
      providerConfigTtlMs: opts.providerConfigTtlMs ?? DEFAULT_PROVIDER_CONFIG_TTL_MS,
      logger: opts.logger ?? noopLogger,
      now: opts.now ?? (() => new Date()),
      random: opts.random ?? Math.random,
      ...(opts.events ? { events: opts.events } : {}),
      ...(opts.metrics ? { metrics: opts.metrics } : {}),
    };
  }

  async reconcile(key: ResourceKey): Promise<ReconcileResult> {
    const started = Date.now();
    const result = await this.#reconcile(key).catch((err: unknown) => {
      const error = err instanceof Error ? err : new Error(String(err));
      // A 409 means someone else moved the object on: re-read soon, it is not a failure.
      if (error instanceof ConflictError)
        return { outcome: "conflict" as const, requeueAfterMs: this.#jitter(250) };
      return { outcome: "error" as const, error, requeueAfterMs: this.#jitter(SHORT_REQUEUE_MS) };
    });
    this.#opts.metrics?.reconciled(key.kind, result.outcome, Date.now() - started);
    const log = result.outcome === "error" ? this.#opts.logger.error : this.#opts.logger.info;
    log.call(
      this.#opts.logger,
      {
        key: `${key.kind}/${key.name}`,
        apiVersion: key.apiVersion,
        outcome: result.outcome,
        durationMs: Date.now() - started,
        ...(result.requeueAfterMs !== undefined ? { requeueAfterMs: Math.round(result.requeueAfterMs) } : {}),
        ...(result.error ? { error: result.error.message } : {}),
      },
      "reconciled",
    );
    return result;
  }

  async #reconcile(key: ResourceKey): Promise<ReconcileResult> {
    const provider = this.#registry.get(key.apiVersion, key.kind);
    if (!provider) throw new Error(`${Msg.unknownKind}: ${key.apiVersion} ${key.kind}`);
    const def = provider.definition;
    const mr = await this.#kube.get<ManagedResource & { [k: string]: unknown }>(def, key.name, key.namespace);
    if (!mr) return { outcome: "gone" };

    const step: Step = { mr, conditions: mr.status?.conditions ?? [] };
    const now = this.#opts.now();
    const policies = resolvePolicies(mr.spec.managementPolicies, mr.spec.deletionPolicy);
    const isDeleting = Boolean(mr.metadata.deletionTimestamp);
    const annotations = mr.metadata.annotations ?? {};

    if (annotations[Annotations.paused] === "true" || policies.none) {
      await this.#writeStatus(step, [reconcilePaused()]);
      return { outcome: "paused" };
    }
    if (!policies.observe) return this.#fail(step, new Error(Msg.policiesNeedObserve));

    if (isDeleting && !policies.delete) {
      // Orphan: the cloud resource stays; only our traces in the cluster go.
      await this.#publisher.unpublish(mr).catch((e) => {
        throw wrapErr(Msg.unpublish, e);
      });
      await this.#removeFinalizer(mr);
      return { outcome: "orphaned" };
    }

    // Validate what the CRD schema cannot express, before touching the cloud.
    const parsed = def.forProvider.safeParse(mr.spec.forProvider ?? {});
    if (!parsed.success) {
      return this.#fail(
        step,
        new InvalidSpecError(`${Msg.invalidSpec}: ${formatIssues(parsed.error.issues)}`),
      );
    }

    let externalName = annotations[Annotations.externalName];
    if (!externalName && def.externalName === "fromAnnotation") {
      externalName = mr.metadata.name;
      step.mr = await this.#patchMeta(step.mr, { annotations: { [Annotations.externalName]: externalName } });
    }

    if (!isDeleting) {
      try {
        const resolved = await resolveReferences(this.#kube, def, step.mr);
        if (resolved) step.mr = await this.#patchSpec(step.mr, resolved);
      } catch (err) {
        if (err instanceof ConflictError) throw err;
        return this.#fail(step, wrapErr(Msg.resolveReferences, err));
      }
    }

    // Incomplete-create guard: a create started and its result was never recorded.
    const pendingCreate = createIsPending(step.mr);

    let client: ExternalClient<Record<string, unknown>, Record<string, unknown>>;
    try {
      client = await this.#connect(provider, step.mr);
    } catch (err) {
      return this.#fail(step, wrapErr(Msg.connect, err));
    }

    let obs: ExternalObservation<Record<string, unknown>, Record<string, unknown>>;
    try {
      obs = await this.#external(def.kind, "observe", () => client.observe(step.mr, externalName));
    } catch (err) {
      return this.#fail(step, wrapErr(Msg.observe, err));
    }
    step.atProvider = obs.atProvider ?? step.mr.status?.atProvider;
    if (obs.resourceExists && obs.externalName && obs.externalName !== externalName) {
      // A provider-chosen id found by its ownership tag (e.g. after a crash before it was recorded).
      externalName = obs.externalName;
      step.mr = await this.#recordCreate(step.mr, { [Annotations.externalName]: externalName });
    }

    if (pendingCreate && !isDeleting) {
      if (obs.resourceExists) {
        // The interrupted create did reach the cloud and the external name finds it: record success, go on.
        step.mr = await this.#recordCreate(step.mr, { [Annotations.createSucceeded]: now.toISOString() });
        this.#opts.logger.warn({ key: `${key.kind}/${key.name}` }, "recovered an interrupted create");
      } else {
        const age = now.getTime() - Date.parse(pendingCreate);
        if (age < this.#opts.createPendingTimeoutMs) {
          // Another worker may be creating it right now: never race it.
          await this.#writeStatus(step, [creating(), reconcileSuccess()]);
          return {
            outcome: "creating",
            requeueAfterMs: this.#jitter(
              Math.min(SHORT_REQUEUE_MS * 2, this.#opts.createPendingTimeoutMs - age + 100),
            ),
          };
        }
        if (def.externalName === "providerChosen" && !def.ownershipLookup) {
          return this.#block(
            step,
            `cannot determine creation result: a create started at ${pendingCreate} was interrupted and the cloud chose the name, so creating again could leak a duplicate. ` +
              `Find the resource in the cloud: if it exists, set ${Annotations.externalName} to its id; if not, remove the ${Annotations.createPending} annotation. Either way driftless then continues.`,
          );
        }
        // Older than any create takes and still absent (by name, or by ownership tag): the create never
        // reached the cloud, so trying again cannot make a second resource.
      }
    }

    if (!obs.resourceExists && !isDeleting) {
      if (!policies.create) return this.#fail(step, new Error(Msg.notFoundObserveOnly));
      const succeeded = annotations[Annotations.createSucceeded];
      if (succeeded && now.getTime() - Date.parse(succeeded) < this.#opts.creationGracePeriodMs) {
        // Eventually consistent clouds may not list what they just created.
        await this.#writeStatus(step, [creating(), reconcileSuccess()]);
        return { outcome: "creating", requeueAfterMs: this.#jitter(SHORT_REQUEUE_MS) };
      }
    }

    if (isDeleting) {
      if (obs.resourceExists) {
        try {
          await this.#external(def.kind, "delete", () => client.delete(step.mr, externalName ?? ""));
        } catch (err) {
          if (err instanceof DependentsExistError) {
            // Not a failure: dependents are being deleted too. Say why, and look again soon.
            await this.#writeStatus(step, [deleting(err.message), reconcileSuccess()]);
            return { outcome: "deleting", requeueAfterMs: this.#jitter(DEPENDENTS_REQUEUE_MS) };
          }
          return this.#fail(step, wrapErr(Msg.delete, err), [deleting()]);
        }
        await this.#event(
          step.mr,
          "Normal",
          "DeletedExternalResource",
          `Deleting external resource ${externalName}`,
        );
        await this.#writeStatus(step, [deleting(), reconcileSuccess()]);
        return { outcome: "deleting", requeueAfterMs: this.#jitter(SHORT_REQUEUE_MS) };
      }
      await this.#publisher.unpublish(step.mr).catch((e) => {
        throw wrapErr(Msg.unpublish, e);
      });
      await this.#removeFinalizer(step.mr);
      return { outcome: "deleted" };
    }

    // For a resource still to be created, details (e.g. a generated password) are published only by
    // the worker that wins the create-pending guard, so concurrent workers cannot overwrite each other.
    if (obs.resourceExists) {
      try {
        await this.#publisher.publish(step.mr, obs.connectionDetails);
      } catch (err) {
        return this.#fail(step, wrapErr(Msg.publish, err));
      }
    }

    if (!(step.mr.metadata.finalizers ?? []).includes(MANAGED_FINALIZER)) {
      step.mr = await this.#patchMeta(step.mr, {
        finalizers: [...(step.mr.metadata.finalizers ?? []), MANAGED_FINALIZER],
      }).catch((e) => {
        throw e instanceof ConflictError ? e : wrapErr(Msg.addFinalizer, e);
      });
    }

    if (!obs.resourceExists) return this.#create(step, provider, client, externalName, obs.connectionDetails);

    // Late initialization: fill fields the user left empty with what the cloud chose; never overwrite.
    const maps = this.#mapsOf(provider);
    let forProvider = (step.mr.spec.forProvider ?? {}) as Record<string, unknown>;
    if (policies.lateInitialize && obs.observed) {
      const { value, filled } = lateInitialize(forProvider, obs.observed as Record<string, unknown>, maps);
      if (filled.length > 0) {
        step.mr = await this.#patchSpec(step.mr, value);
        forProvider = value;
        this.#opts.logger.debug({ key: `${key.kind}/${key.name}`, filled }, "late-initialized");
      }
    }

    const drift = obs.observed
      ? driftedFields(forProvider, obs.observed as Record<string, unknown>, maps)
      : [];
    const upToDate = obs.resourceUpToDate ?? drift.length === 0;
    const ready = readiness(obs);

    if (upToDate || !policies.update) {
      await this.#writeStatus(step, [ready, reconcileSuccess()]);
      return {
        outcome: "in-sync",
        pollAfterMs: this.#pollInterval(step.mr),
        ...(ready.reason === "Creating" ? { requeueAfterMs: this.#jitter(SHORT_REQUEUE_MS * 2) } : {}),
      };
    }

    const immutable = drift.filter((f) => def.immutable.includes(f.split(".")[0] ?? ""));
    if (immutable.length > 0) {
      const details = immutable
        .map(
          (f) =>
            `${f} (spec: ${JSON.stringify(getPath(forProvider, f))}, cloud: ${JSON.stringify(getPath(obs.observed ?? {}, f))})`,
        )
        .join(", ");
      return this.#fail(
        step,
        new InvalidSpecError(
          `cannot update immutable field(s) ${details}: the cloud resource was left unchanged. Set the field back, or create a new resource with the new value.`,
        ),
        [ready],
      );
    }

    try {
      const upd = await this.#external(def.kind, "update", () =>
        client.update(step.mr, externalName ?? "", obs),
      );
      await this.#publisher.publish(step.mr, upd.connectionDetails);
    } catch (err) {
      return this.#fail(step, wrapErr(Msg.update, err), [ready]);
    }
    await this.#event(
      step.mr,
      "Normal",
      "UpdatedExternalResource",
      `Updated ${drift.join(", ") || "external resource"}`,
    );
    await this.#writeStatus(step, [ready, reconcileSuccess()]);
    return {
      outcome: "updated",
      requeueAfterMs: this.#jitter(SHORT_REQUEUE_MS),
      pollAfterMs: this.#pollInterval(step.mr),
    };
  }

  async #create(
    step: Step,
    provider: ManagedKindProvider,
    client: ExternalClient<Record<string, unknown>, Record<string, unknown>>,
    externalName: string | undefined,
    preCreateDetails: ConnectionDetails | undefined,
  ): Promise<ReconcileResult> {
    // Record the intent first, guarded by resourceVersion: of concurrent workers only one gets past this.
    step.mr = await this.#patchMeta(step.mr, {
      annotations: { [Annotations.createPending]: this.#opts.now().toISOString() },
    });
    try {
      await this.#publisher.publish(step.mr, preCreateDetails);
    } catch (err) {
      return this.#fail(step, wrapErr(Msg.publish, err), [creating()]);
    }
    let created: { externalName?: string; connectionDetails?: ConnectionDetails };
    try {
      created = await this.#external(provider.definition.kind, "create", () =>
        client.create(step.mr, externalName),
      );
    } catch (err) {
      step.mr = await this.#recordCreate(step.mr, {
        [Annotations.createFailed]: this.#opts.now().toISOString(),
      });
      return this.#fail(step, wrapErr(Msg.create, err), [creating()]);
    }
    const annotations: Record<string, string> = {
      [Annotations.createSucceeded]: this.#opts.now().toISOString(),
    };
    if (created.externalName && provider.definition.externalName === "providerChosen") {
      annotations[Annotations.externalName] = created.externalName;
    }
    step.mr = await this.#recordCreate(step.mr, annotations);
    try {
      await this.#publisher.publish(step.mr, created.connectionDetails);
    } catch (err) {
      return this.#fail(step, wrapErr(Msg.publish, err), [creating()]);
    }
    await this.#event(
      step.mr,
      "Normal",
      "CreatedExternalResource",
      `Created external resource ${created.externalName ?? externalName ?? ""}`,
    );
    await this.#writeStatus(step, [creating(), reconcileSuccess()]);
    return { outcome: "created", requeueAfterMs: this.#jitter(SHORT_REQUEUE_MS) };
  }

  /** Counts one external call (and reports it to the metrics hook) around `call`. */
  async #external<T>(kind: string, verb: keyof ExternalCallStats, call: () => Promise<T>): Promise<T> {
    this.externalCalls[verb]++;
    try {
      const value = await call();
      this.#opts.metrics?.externalCall(kind, verb, undefined);
      return value;
    } catch (err) {
      this.#opts.metrics?.externalCall(kind, verb, err instanceof Error ? err.name : "Error");
      throw err;
    }
  }

  /** Writes create-result annotations; this write matters more than any other, so it is retried. */
  async #recordCreate(mr: ManagedResource, annotations: Record<string, string>): Promise<ManagedResource> {
    let lastErr: unknown;
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        return await this.#kube.patch<ManagedResource & { [k: string]: unknown }>(
          this.#defOf(mr),
          mr.metadata.name,
          { metadata: { annotations } },
        );
      } catch (err) {
        lastErr = err;
        await sleep(100 * 2 ** attempt * (0.5 + this.#opts.random()));
      }
    }
    throw wrapErr(Msg.recordCreate, lastErr);
  }

  #defOf(mr: ManagedResource) {
    const p = this.#registry.get(mr.apiVersion, mr.kind);
    if (!p) throw new Error(`${Msg.unknownKind}: ${mr.apiVersion} ${mr.kind}`);
    return p.definition;
  }

  async #patchMeta(
    mr: ManagedResource,
    meta: { annotations?: Record<string, string>; finalizers?: string[] },
  ): Promise<ManagedResource> {
    return this.#kube.patch<ManagedResource & { [k: string]: unknown }>(
      this.#defOf(mr),
      mr.metadata.name,
      { metadata: meta },
      { resourceVersion: mr.metadata.resourceVersion ?? "" },
    );
  }

  async #patchSpec(mr: ManagedResource, forProvider: Record<string, unknown>): Promise<ManagedResource> {
    try {
      return await this.#kube.patch<ManagedResource & { [k: string]: unknown }>(
        this.#defOf(mr),
        mr.metadata.name,
        { spec: { forProvider } },
        { resourceVersion: mr.metadata.resourceVersion ?? "" },
      );
    } catch (err) {
      throw err instanceof ConflictError ? err : wrapErr(Msg.lateInit, err);
    }
  }

  async #removeFinalizer(mr: ManagedResource): Promise<void> {
    const finalizers = mr.metadata.finalizers ?? [];
    if (!finalizers.includes(MANAGED_FINALIZER)) return;
    await this.#patchMeta(mr, { finalizers: finalizers.filter((f) => f !== MANAGED_FINALIZER) }).catch(
      (e) => {
        throw e instanceof ConflictError ? e : wrapErr(Msg.removeFinalizer, e);
      },
    );
  }

  async #connect(provider: ManagedKindProvider, mr: ManagedResource) {
    const name = mr.spec.providerConfigRef?.name ?? DEFAULT_PROVIDER_CONFIG;
    const pcType = provider.definition.providerConfig;
    const cacheKey = `${pcType.group}/${name}`;
    const cached = this.#providerConfigs.get(cacheKey);
    let pc = cached && Date.now() - cached.at < this.#opts.providerConfigTtlMs ? cached.pc : undefined;
    if (!pc) {
      pc = await this.#once(`pc/${cacheKey}`, () =>
        this.#kube.get<ProviderConfig & { [k: string]: unknown }>(pcType, name),
      );
      if (!pc) {
        throw new CredentialsError(
          `ProviderConfig "${name}" (${pcType.group}) not found: create it, or set spec.providerConfigRef.name`,
        );
      }
      this.#providerConfigs.set(cacheKey, { at: Date.now(), pc });
    }
    const providerConfig = pc;
    const rateLimit = this.#rateLimits?.for(cacheKey).acquire;
    try {
      const pcSecretRefs = secretRefsIn(providerConfig.spec);
      const client = await provider.connect({
        providerConfig,
        ...(rateLimit ? { rateLimit } : {}),
        readSecretKey: async (ref) => {
          // The ProviderConfig's own credentials are read once per TTL, not once per reconcile (the in-sync
          // path stays at one GET); any other Secret a resource names (a password to rotate) is read fresh.
          const secretKey = `${ref.namespace}/${ref.name}/${ref.key}`;
          const cacheable = pcSecretRefs.has(secretKey);
          const hit = cacheable ? this.#secrets.get(secretKey) : undefined;
          if (hit && Date.now() - hit.at < this.#opts.providerConfigTtlMs) return hit.value;
          const secret = await this.#once(`secret/${ref.namespace}/${ref.name}`, () =>
            this.#kube.getSecret(ref.namespace, ref.name),
          );
          const found = secretKeyValue(secret, ref);
          if ("missing" in found) throw new CredentialsError(`ProviderConfig "${name}": ${found.missing}`);
          if (cacheable) this.#secrets.set(secretKey, { at: Date.now(), value: found.value });
          return found.value;
        },
      });
      return rateLimit && !provider.limitsEachRequest ? limitOperations(client, rateLimit) : client;
    } catch (err) {
      this.#providerConfigs.delete(cacheKey);
      throw err instanceof CredentialsError
        ? err
        : new CredentialsError(`ProviderConfig "${name}": ${(err as Error).message}`, { cause: err });
    }
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

  /** Forgets cached ProviderConfigs, e.g. after credentials were refused. */
  invalidateProviderConfigs() {
    this.#providerConfigs.clear();
    this.#secrets.clear();
  }

  #mapsOf(provider: ManagedKindProvider): Set<string> {
    const k = `${provider.definition.apiVersion}/${provider.definition.kind}`;
    let maps = this.#mapPaths.get(k);
    if (!maps) {
      maps = mapPaths(provider.definition.forProvider);
      this.#mapPaths.set(k, maps);
    }
    return maps;
  }

  async #fail(
    step: Step,
    err: Error,
    extra: Array<Omit<Condition, "lastTransitionTime">> = [],
  ): Promise<ReconcileResult> {
    let error = err;
    if (error instanceof CredentialsError || error.cause instanceof CredentialsError) {
      this.invalidateProviderConfigs();
      // Whoever must fix credentials needs to know which ProviderConfig holds them.
      const pc = step.mr.spec.providerConfigRef?.name ?? DEFAULT_PROVIDER_CONFIG;
      if (!error.message.includes('ProviderConfig "')) {
        error = new CredentialsError(`${error.message} (ProviderConfig "${pc}")`, { cause: error });
      }
    }
    const prevSynced = getCondition(step.mr.status?.conditions, "Synced");
    await this.#writeStatus(step, [...extra, reconcileError(error.message)]);
    await this.#event(step.mr, "Warning", "ReconcileError", error.message);
    return { outcome: "error", error, requeueAfterMs: this.#errorBackoff(prevSynced, error) };
  }

  async #block(step: Step, message: string): Promise<ReconcileResult> {
    await this.#writeStatus(step, [reconcileError(message)]);
    await this.#event(step.mr, "Warning", "CannotDetermineCreationResult", message);
    return { outcome: "blocked", requeueAfterMs: this.#pollInterval(step.mr) };
  }

  /**
   * Stateless exponential backoff: doubles the time the resource has already spent failing, read from
   * Synced's lastTransitionTime, so no worker memory is needed. Throttling starts higher.
   */
  #errorBackoff(prevSynced: Condition | undefined, error: Error): number {
    const throttled = error instanceof ThrottledError || error.cause instanceof ThrottledError;
    const waiting = error.cause instanceof ReferenceNotReadyError;
    const min = throttled ? 5_000 : MIN_ERROR_BACKOFF_MS;
    // A dependency usually becomes Ready within seconds to minutes: keep looking often.
    const max = waiting ? MAX_REFERENCE_BACKOFF_MS : MAX_ERROR_BACKOFF_MS;
    const failingFor =
      prevSynced?.status === "False" && prevSynced.reason === "ReconcileError"
        ? this.#opts.now().getTime() - Date.parse(prevSynced.lastTransitionTime)
        : 0;
    return this.#jitter(Math.min(max, Math.max(min, failingFor * 2)));
  }

  #pollInterval(mr: ManagedResource): number {
    return parseDuration(mr.metadata.annotations?.[Annotations.pollInterval]) ?? this.#opts.pollIntervalMs;
  }

  /** Full jitter in [0.5, 1.5) × base: spreads retries so they never arrive in lockstep. */
  #jitter(ms: number): number {
    return Math.max(0, Math.round(ms * (0.5 + this.#opts.random())));
  }

  /** Writes status only when conditions or atProvider changed: an in-sync reconcile writes nothing. */
  async #writeStatus(step: Step, updates: Array<Omit<Condition, "lastTransitionTime">>): Promise<void> {
    const conditions = setConditions(step.mr.status?.conditions, updates, this.#opts.now());
    const atProvider = step.atProvider;
    const before = step.mr.status ?? {};
    if (deepEqual(conditions, before.conditions ?? []) && deepEqual(atProvider, before.atProvider)) return;
    const status: Record<string, unknown> = { conditions };
    if (atProvider !== undefined) status.atProvider = atProvider;
    try {
      await this.#kube.patchStatus(this.#defOf(step.mr), step.mr.metadata.name, status);
    } catch (err) {
      // The object may have been deleted meanwhile (finalizer removed): nothing left to report on.
      if (err instanceof KubeError && err.status === 404) return;
      throw err;
    }
    step.conditions = conditions;
  }

  async #event(mr: ManagedResource, type: "Normal" | "Warning", reason: string, message: string) {
    if (!this.#opts.events) return;
    await this.#opts.events.record(mr, type, reason, message).catch((err: unknown) => {
      this.#opts.logger.warn({ error: (err as Error).message }, "cannot record event");
    });
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
  };
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

function readiness(obs: ExternalObservation<unknown, unknown>) {
  switch (obs.availability ?? "Available") {
    case "Available":
      return available();
    case "Creating":
      return creating();
    case "Deleting":
      return deleting();
    default:
      return unavailable(obs.message);
  }
}

/** The pending time when a create started and neither success nor failure was recorded after it. */
function createIsPending(mr: ManagedResource): string | undefined {
  const a = mr.metadata.annotations ?? {};
  const pending = a[Annotations.createPending];
  if (!pending) return undefined;
  const t = Date.parse(pending);
  const after = (v: string | undefined) => v !== undefined && Date.parse(v) >= t;
  return after(a[Annotations.createSucceeded]) || after(a[Annotations.createFailed]) ? undefined : pending;
}

function wrapErr(msg: string, cause: unknown): Error {
  const inner = cause instanceof Error ? cause : new Error(String(cause));
  const text = `${msg}: ${inner.message}`;
  // Keep the error's class so callers (backoff, metrics) still see throttling or bad credentials.
  if (inner instanceof ThrottledError) return new ThrottledError(text, { cause: inner });
  if (inner instanceof CredentialsError) return new CredentialsError(text, { cause: inner });
  if (inner instanceof InvalidSpecError) return new InvalidSpecError(text, { cause: inner });
  return new Error(text, { cause: inner });
}

function formatIssues(issues: Array<{ path: PropertyKey[]; message: string }>): string {
  return issues
    .map((i) => `spec.forProvider${i.path.map((p) => `.${String(p)}`).join("")}: ${i.message}`)
    .join("; ");
}

function getPath(obj: Record<string, unknown>, path: string): unknown {
  return path
    .split(".")
    .reduce<unknown>(
      (o, k) => (o && typeof o === "object" ? (o as Record<string, unknown>)[k] : undefined),
      obj,
    );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
