import type { V1Secret } from "@kubernetes/client-node";
import { EXTERNAL_KEY_LABEL, externalKeyOf } from "../api/cloud-events.ts";
import type {
  ConnectionDetails,
  ExternalClient,
  ExternalCreation,
  ExternalObservation,
  ExternalUpdate,
  ManagedKindProvider,
  ObserveManyItem,
} from "../api/external.ts";
import { CredentialsError, DependentsExistError, InvalidSpecError, ThrottledError } from "../api/external.ts";
import {
  type ManagedResource,
  providerConfigKey,
  providerConfigOf,
  withOwnNamespace,
} from "../api/managed.ts";
import {
  Annotations,
  type Condition,
  DEFAULT_MIN_POLL_INTERVAL_MS,
  MANAGED_FINALIZER,
  reconcileRequestOf,
} from "../api/meta.ts";
import { ConflictError, type Kube, KubeError, statusOf } from "../kube/client.ts";
import {
  deepEqual,
  driftedFields,
  type FieldBehaviours,
  lateInitialize,
  mapPaths,
  parseDuration,
  replacementPatch,
} from "./compare.ts";
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
import { type ConnectorOptions, ProviderConnector } from "./connect.ts";
import { ConnectionPublisher, publishedHolds } from "./connection.ts";
import {
  type EventRecorder,
  type ExternalCallStats,
  failureBackoff,
  jitter,
  noopLogger,
  type ReconcileLogger,
  type ReconcileMetrics,
  type ReconcileResult,
  type Reconciles,
  type ResourceKey,
} from "./contract.ts";
import { resolvePolicies, supportedPoliciesText } from "./policies.ts";
import { ReferenceNotReadyError, referencesResolved, resolveReferences } from "./references.ts";
import type { KindRegistry } from "./registry.ts";
import { Router } from "./router.ts";

export const DEFAULT_POLL_INTERVAL_MS = 5 * 60_000;
export const DEFAULT_CREATION_GRACE_MS = 30_000;
/** How long a create may take before an unfinished one (pending, no result) is considered interrupted. */
export const DEFAULT_CREATE_PENDING_TIMEOUT_MS = 60_000;
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
  initialize: "cannot initialize the managed resource",
  recordPending: "cannot record that a create is starting",
  notFoundObserveOnly:
    "external resource does not exist; without the Create management policy driftless only imports existing resources — check the crossplane.io/external-name annotation",
  invalidPolicy: "unsupported combination of managementPolicies",
  pendingCreate:
    "waiting for the result of a create that is in flight: a not-found now is no proof that nothing was created",
  gracePeriod: "Waiting for external resource existence to be confirmed",
  deleteRequested: "deletion of the external resource was requested",
  indexLabel: "cannot write the external-key index label",
} as const;

/** Event reasons, as crossplane-runtime names them, so `kubectl describe` reads the same as under Crossplane. */
export const Reason = {
  cannotConnect: "CannotConnectToProvider",
  cannotObserve: "CannotObserveExternalResource",
  cannotCreate: "CannotCreateExternalResource",
  cannotUpdate: "CannotUpdateExternalResource",
  cannotDelete: "CannotDeleteExternalResource",
  cannotPublish: "CannotPublishConnectionDetails",
  cannotUnpublish: "CannotUnpublishConnectionDetails",
  cannotResolveRefs: "CannotResolveResourceReferences",
  cannotUpdateManaged: "CannotUpdateManagedResource",
  cannotAddFinalizer: "CannotAddFinalizer",
  cannotRemoveFinalizer: "CannotRemoveFinalizer",
  invalidPolicy: "CannotUseInvalidManagementPolicy",
  invalidSpec: "InvalidSpec",
  cannotDetermineCreation: "CannotDetermineCreationResult",
  reconcileError: "ReconcileError",
  pending: "PendingExternalResource",
  paused: "ReconciliationPaused",
  created: "CreatedExternalResource",
  updated: "UpdatedExternalResource",
  deleted: "DeletedExternalResource",
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];

export { DEFAULT_PROVIDER_CONFIG_TTL_MS } from "./connect.ts";
// The contract's types, still importable from here (the engine is where most callers meet them).
export type {
  EventRecorder,
  ExternalCallStats,
  Outcome,
  ReconcileLogger,
  ReconcileMetrics,
  ReconcileResult,
  ResourceKey,
} from "./contract.ts";

export interface ReconcilerOptions extends ConnectorOptions {
  pollIntervalMs?: number;
  /** The least interval `crossplane.io/poll-interval` may set; default DEFAULT_MIN_POLL_INTERVAL_MS (30 s). */
  minPollIntervalMs?: number;
  creationGracePeriodMs?: number;
  createPendingTimeoutMs?: number;
  logger?: ReconcileLogger;
  events?: EventRecorder;
  /** External calls; a standalone Reconciler also reports each reconcile (the router does, in the worker). */
  metrics?: ReconcileMetrics;
  now?: () => Date;
  /** Deterministic jitter source for tests; default Math.random. */
  random?: () => number;
  /** First wait between retries of the create-result write (doubling); default 100 ms. */
  retryBaseMs?: number;
  /** First wait before the halves of a throttled list call are tried (doubling per split); default 500 ms. */
  throttleBackoffMs?: number;
}

/** A batched drift check's answer for one object: in sync (nothing to do), or why it needs more. */
export type BatchVerdict =
  | { inSync: true }
  | {
      inSync: false;
      /** Why the fast path cannot settle it (a log field); the object then gets a full reconcile. */
      why: string;
      /** The cloud throttled its read even after splitting: look again later, do not reconcile now. */
      throttled?: ThrottledError;
    };

export interface CheckManyOptions {
  /**
   * The connection Secret an object publishes to, as read for this batch (one LIST per namespace);
   * undefined when it does not exist, `"unknown"` when it could not be read.
   */
  connectionSecret(namespace: string, name: string): V1Secret | undefined | "unknown";
}

/** Observes of one batch running at once for kinds without observeMany (per-resource reads). */
const BATCH_OBSERVE_CONCURRENCY = 16;
/** A throttled list call is split in halves this many times at most within one check. */
const MAX_THROTTLE_SPLITS = 3;
const THROTTLE_SPLIT_BACKOFF_MS = 500;

interface Step {
  mr: ManagedResource;
  atProvider?: Record<string, unknown>;
  /** Set after an update of a kind that settles: written with the status. */
  lastExternalUpdate?: { time: string; generation: number };
}

type EngineOptions = Required<Omit<ReconcilerOptions, keyof ConnectorOptions | "events" | "metrics">> & {
  events?: EventRecorder;
  metrics?: ReconcileMetrics;
};

/**
 * The generic managed reconciler: Crossplane's semantics for one managed resource per call, any kind.
 * Level-triggered: it reads the object fresh, so a stale or duplicate message can do no harm. A 409
 * is thrown to the router (contract.ts), which requeues it; the worker routes to this engine.
 */
export class ManagedReconciler implements Reconciles {
  readonly #kube: Kube;
  readonly #registry: KindRegistry;
  readonly #publisher: ConnectionPublisher;
  readonly #connector: ProviderConnector;
  readonly #opts: EngineOptions;
  readonly #mapPaths = new Map<string, Set<string>>();
  readonly #fields = new Map<string, FieldBehaviours>();
  readonly externalCalls: ExternalCallStats = {
    observe: 0,
    observeMany: 0,
    create: 0,
    update: 0,
    delete: 0,
  };

  constructor(kube: Kube, registry: KindRegistry, opts: ReconcilerOptions = {}) {
    this.#kube = kube;
    this.#registry = registry;
    this.#publisher = new ConnectionPublisher(kube);
    this.#connector = new ProviderConnector(kube, opts);
    this.#opts = {
      pollIntervalMs: opts.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
      minPollIntervalMs: opts.minPollIntervalMs ?? DEFAULT_MIN_POLL_INTERVAL_MS,
      creationGracePeriodMs: opts.creationGracePeriodMs ?? DEFAULT_CREATION_GRACE_MS,
      createPendingTimeoutMs: opts.createPendingTimeoutMs ?? DEFAULT_CREATE_PENDING_TIMEOUT_MS,
      logger: opts.logger ?? noopLogger,
      now: opts.now ?? (() => new Date()),
      random: opts.random ?? Math.random,
      retryBaseMs: opts.retryBaseMs ?? 100,
      throttleBackoffMs: opts.throttleBackoffMs ?? THROTTLE_SPLIT_BACKOFF_MS,
      ...(opts.events ? { events: opts.events } : {}),
      ...(opts.metrics ? { metrics: opts.metrics } : {}),
    };
  }

  /** Every registered managed kind. */
  handles(apiVersion: string, kind: string): boolean {
    return this.#registry.get(apiVersion, kind) !== undefined;
  }

  /**
   * Forgets cached ProviderConfigs, e.g. after credentials were refused: only the one named (its object
   * and its Secrets), so one bad ProviderConfig does not make every other one be read again; all without.
   */
  invalidateProviderConfigs(cacheKey?: string) {
    this.#connector.invalidateProviderConfigs(cacheKey);
  }

  /** The definition of a registered managed kind, or undefined. */
  definitionOf(apiVersion: string, kind: string) {
    return this.#registry.get(apiVersion, kind)?.definition;
  }

  /**
   * The batched drift check (the sweep's batch messages): objects of one kind as read from a LIST page,
   * checked against the cloud with the kind's list calls (`observeMany`, one call per up to maxItems
   * objects) or one observe each, and found in sync only when a full reconcile would write nothing and
   * call nothing else: same conditions at this generation, same atProvider, nothing to late-initialize,
   * no drift, connection Secret holding the details. It never writes: every other verdict sends the
   * object to a full reconcile, which reads it fresh and guards every write by resourceVersion.
   */
  async checkMany(listed: readonly ManagedResource[], opts: CheckManyOptions): Promise<BatchVerdict[]> {
    const objects = listed.map((o) => {
      const p = this.#registry.get(o.apiVersion, o.kind);
      return p ? withOwnNamespace(p.definition, o) : o;
    });
    const verdicts: BatchVerdict[] = objects.map(() => ({ inSync: false, why: "unchecked" }));
    const first = objects[0];
    const provider = first ? this.#registry.get(first.apiVersion, first.kind) : undefined;
    if (!first || !provider) {
      return objects.map(() => ({ inSync: false, why: Msg.unknownKind }));
    }
    const now = this.#opts.now();
    // Grouped by ProviderConfig and connection Secret namespace: one client serves a group, and the
    // Secret namespaces a client may read are those of its managed resource's connection Secret.
    const groups = new Map<string, Array<{ i: number; mr: ManagedResource; externalName: string }>>();
    for (const [i, mr] of objects.entries()) {
      if (mr.apiVersion !== first.apiVersion || mr.kind !== first.kind) {
        verdicts[i] = { inSync: false, why: "another kind" };
        continue;
      }
      const blocker = this.#fastPathBlocker(provider, mr, now);
      if (blocker) {
        verdicts[i] = { inSync: false, why: blocker };
        continue;
      }
      const externalName = mr.metadata.annotations?.[Annotations.externalName] ?? "";
      const g = `${providerConfigKey(providerConfigOf(provider.definition, mr))}/${mr.spec.writeConnectionSecretToRef?.namespace ?? ""}`;
      const list = groups.get(g) ?? [];
      list.push({ i, mr, externalName });
      groups.set(g, list);
    }
    for (const group of groups.values()) {
      let client: ExternalClient<Record<string, unknown>, Record<string, unknown>>;
      try {
        client = await this.#connector.connect(provider, (group[0] as { mr: ManagedResource }).mr);
      } catch (err) {
        for (const { i } of group) verdicts[i] = { inSync: false, why: `${Msg.connect}: ${errText(err)}` };
        continue;
      }
      const observations = await this.#observeGroup(provider, client, group);
      for (const [n, { i, mr, externalName }] of group.entries()) {
        verdicts[i] = this.#verdict(provider, mr, externalName, observations[n] as Observed, now, opts);
      }
    }
    return verdicts;
  }

  /** Why an object as listed cannot be settled by the batched check, or undefined when it can. */
  #fastPathBlocker(provider: ManagedKindProvider, mr: ManagedResource, now: Date): string | undefined {
    const def = provider.definition;
    const annotations = mr.metadata.annotations ?? {};
    const policies = resolvePolicies(mr.spec.managementPolicies, mr.spec.deletionPolicy);
    if (mr.metadata.deletionTimestamp) return "being deleted";
    if (annotations[Annotations.paused] === "true" || policies.none) return "paused";
    if (!policies.supported) return "unsupported management policies";
    if (!annotations[Annotations.externalName]) return "no external name yet";
    if (indexLabelPatch(def, mr, annotations[Annotations.externalName])) return "index label to write";
    if (createIsPending(mr)) return "a create is pending";
    const requested = reconcileRequestOf(annotations);
    if (requested !== undefined && requested !== mr.status?.lastHandledReconcileAt)
      return "a reconcile was requested";
    if (!(mr.metadata.finalizers ?? []).includes(MANAGED_FINALIZER)) return "no finalizer yet";
    const generation = mr.metadata.generation;
    for (const type of ["Ready", "Synced"]) {
      const c = getCondition(mr.status?.conditions, type);
      if (c?.status !== "True") return `${type} is not True`;
      if (generation !== undefined && c.observedGeneration !== generation)
        return `${type} is not of this generation`;
    }
    if (!def.forProvider.safeParse(mr.spec.forProvider ?? {}).success) return "invalid spec";
    if (!referencesResolved(def, mr)) return "references to resolve";
    if (this.#settleLeft(def.updateSettleMs, mr, now) > 0) return "an update is settling";
    return undefined;
  }

  /** Observes a group: observeMany in chunks of the kind's maxItems, else one observe each. */
  async #observeGroup(
    provider: ManagedKindProvider,
    client: ExternalClient<Record<string, unknown>, Record<string, unknown>>,
    group: ReadonlyArray<{ mr: ManagedResource; externalName: string }>,
  ): Promise<Observed[]> {
    const kind = provider.definition.kind;
    if (client.observeMany && provider.observeMany) {
      const max = Math.max(1, provider.observeMany.maxItems);
      const out: Observed[] = [];
      for (let at = 0; at < group.length; at += max) {
        out.push(...(await this.#observeChunk(kind, client, group.slice(at, at + max), 0)));
      }
      return out;
    }
    const out: Observed[] = new Array(group.length);
    let next = 0;
    const lane = async () => {
      for (let n = next++; n < group.length; n = next++) {
        const { mr, externalName } = group[n] as { mr: ManagedResource; externalName: string };
        out[n] = await this.#external(kind, "observe", () => client.observe(mr, externalName)).catch(
          (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(BATCH_OBSERVE_CONCURRENCY, group.length) }, lane));
    return out;
  }

  /** One observeMany call; a throttled one is split in halves and retried after a jittered wait. */
  async #observeChunk(
    kind: string,
    client: ExternalClient<Record<string, unknown>, Record<string, unknown>>,
    items: ReadonlyArray<ObserveManyItem<Record<string, unknown>, Record<string, unknown>>>,
    splits: number,
  ): Promise<Observed[]> {
    try {
      const many = client.observeMany as NonNullable<typeof client.observeMany>;
      const out = await this.#external(kind, "observeMany", () => many.call(client, items));
      if (out.length !== items.length) {
        const err = new Error(`observeMany returned ${out.length} results for ${items.length} resources`);
        return items.map(() => err);
      }
      return out;
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      if (isThrottled(error) && items.length > 1 && splits < MAX_THROTTLE_SPLITS) {
        const half = Math.ceil(items.length / 2);
        const out: Observed[] = [];
        for (const part of [items.slice(0, half), items.slice(half)]) {
          await sleep(this.#jitter(this.#opts.throttleBackoffMs * 2 ** splits));
          out.push(...(await this.#observeChunk(kind, client, part, splits + 1)));
        }
        return out;
      }
      return items.map(() => error);
    }
  }

  /** In sync only when a full reconcile of this object would find nothing to do and write nothing. */
  #verdict(
    provider: ManagedKindProvider,
    mr: ManagedResource,
    externalName: string,
    obs: Observed,
    now: Date,
    opts: CheckManyOptions,
  ): BatchVerdict {
    if (obs instanceof Error) {
      return isThrottled(obs)
        ? { inSync: false, why: "throttled", throttled: asThrottled(obs) }
        : { inSync: false, why: `${Msg.observe}: ${obs.message}` };
    }
    if (!obs.resourceExists) return { inSync: false, why: "not found in the cloud" };
    if (obs.externalName && obs.externalName !== externalName) return { inSync: false, why: "external name" };
    const policies = resolvePolicies(mr.spec.managementPolicies, mr.spec.deletionPolicy);
    const maps = this.#mapsOf(provider);
    const fields = this.#fieldsOf(provider);
    const forProvider = (mr.spec.forProvider ?? {}) as Record<string, unknown>;
    const observed = obs.observed as Record<string, unknown> | undefined;
    if (policies.lateInitialize && observed) {
      if (lateInitialize(forProvider, observed, maps, fields).filled.length > 0)
        return { inSync: false, why: "fields to late-initialize" };
    }
    const drift = observed ? driftedFields(forProvider, observed, maps, fields) : [];
    if (policies.update && !(obs.resourceUpToDate ?? drift.length === 0))
      return { inSync: false, why: "drift" };
    const ready = readiness(obs);
    if (ready.reason === "Creating") return { inSync: false, why: "not available yet" };
    const conditions = mr.status?.conditions ?? [];
    const next = setConditions(conditions, [ready, reconcileSuccess()], now, mr.metadata.generation);
    if (!deepEqual(next, conditions)) return { inSync: false, why: "conditions change" };
    if (!deepEqual(obs.atProvider ?? mr.status?.atProvider, mr.status?.atProvider))
      return { inSync: false, why: "atProvider changes" };
    const ref = mr.spec.writeConnectionSecretToRef;
    const details = obs.connectionDetails;
    if (ref && details && Object.keys(details).length > 0) {
      const secret = opts.connectionSecret(ref.namespace, ref.name);
      if (secret === "unknown") return { inSync: false, why: "connection Secret not read" };
      if (!publishedHolds(secret, mr, details)) return { inSync: false, why: "connection Secret to publish" };
    }
    return { inSync: true };
  }

  async reconcile(key: ResourceKey): Promise<ReconcileResult> {
    const step: Partial<Step> = {};
    try {
      return await this.#reconcile(key, step);
    } catch (err) {
      // A 409 (and a failure before the object was read) is the router's to settle; anything else
      // still reaches the status: never leave a stale Synced=True over an error.
      if (err instanceof ConflictError || !step.mr) throw err;
      return this.#fail(
        step as Step,
        Reason.reconcileError,
        err instanceof Error ? err : new Error(String(err)),
      );
    }
  }

  async #reconcile(key: ResourceKey, step: Partial<Step>): Promise<ReconcileResult> {
    const provider = this.#registry.get(key.apiVersion, key.kind);
    if (!provider) throw new Error(`${Msg.unknownKind}: ${key.apiVersion} ${key.kind}`);
    const def = provider.definition;
    const read = await this.#kube.get<ManagedResource & { [k: string]: unknown }>(
      def,
      key.name,
      key.namespace,
    );
    if (!read) return { outcome: "gone" };
    const mr = withOwnNamespace(def, read);

    step.mr = mr;
    const s = step as Step;
    const now = this.#opts.now();
    const policies = resolvePolicies(mr.spec.managementPolicies, mr.spec.deletionPolicy);
    const isDeleting = Boolean(mr.metadata.deletionTimestamp);
    const annotations = mr.metadata.annotations ?? {};

    if (annotations[Annotations.paused] === "true" || policies.none) {
      const wasPaused = getCondition(mr.status?.conditions, "Synced")?.reason === "ReconcilePaused";
      await this.#writeStatus(s, [reconcilePaused()]);
      if (!wasPaused) await this.#event(s.mr, "Normal", Reason.paused, reconcilePaused().message ?? "");
      return { outcome: "paused" };
    }

    if (isDeleting && !policies.delete) {
      // Orphan: the cloud resource stays; only our traces in the cluster go. Works whatever the spec says.
      try {
        await this.#publisher.unpublish(mr);
      } catch (err) {
        return this.#fail(s, Reason.cannotUnpublish, wrapErr(Msg.unpublish, err));
      }
      return (await this.#removeFinalizer(s)) ?? { outcome: "orphaned" };
    }

    if (!isDeleting) {
      // Policies and spec validation gate create and update only: deletion must always be possible.
      if (!policies.supported) {
        return this.#fail(
          s,
          Reason.invalidPolicy,
          new InvalidSpecError(`${Msg.invalidPolicy}; supported are ${supportedPoliciesText()}`),
        );
      }
      const parsed = def.forProvider.safeParse(mr.spec.forProvider ?? {});
      if (!parsed.success) {
        return this.#fail(
          s,
          Reason.invalidSpec,
          new InvalidSpecError(`${Msg.invalidSpec}: ${formatIssues(parsed.error.issues)}`),
        );
      }
    }

    let externalName = annotations[Annotations.externalName];
    if (!externalName && def.externalName === "fromAnnotation") {
      externalName = mr.metadata.name;
      try {
        s.mr = await this.#patchMeta(s.mr, {
          annotations: { [Annotations.externalName]: externalName },
          labels: indexLabelPatch(def, s.mr, externalName),
        });
      } catch (err) {
        if (err instanceof ConflictError) throw err;
        return this.#fail(s, Reason.cannotUpdateManaged, wrapErr(Msg.initialize, err));
      }
    }

    if (!isDeleting) {
      try {
        const resolved = await resolveReferences(this.#kube, def, s.mr);
        if (resolved) s.mr = await this.#patchSpec(s.mr, resolved);
      } catch (err) {
        if (err instanceof ConflictError) throw err;
        return this.#fail(s, Reason.cannotResolveRefs, wrapErr(Msg.resolveReferences, err));
      }
    }

    if (isDeleting) {
      // Other controllers still hold the object: keep the cloud resource until ours is the last finalizer.
      const others = (s.mr.metadata.finalizers ?? []).filter((f) => f !== MANAGED_FINALIZER);
      if (others.length > 0) {
        await this.#writeStatus(s, [
          deleting(
            `waiting for finalizers ${others.join(", ")} to be removed before deleting the external resource`,
          ),
          reconcileSuccess(),
        ]);
        return { outcome: "deleting", requeueAfterMs: this.#jitter(DEPENDENTS_REQUEUE_MS) };
      }
    }

    // Incomplete-create guard: a create started and its result was never recorded.
    const pendingCreate = createIsPending(s.mr);

    let client: ExternalClient<Record<string, unknown>, Record<string, unknown>>;
    try {
      client = await this.#connector.connect(provider, s.mr);
    } catch (err) {
      return this.#fail(s, Reason.cannotConnect, wrapErr(Msg.connect, err));
    }

    let obs: ExternalObservation<Record<string, unknown>, Record<string, unknown>>;
    try {
      obs = await this.#external(def.kind, "observe", () => client.observe(s.mr, externalName));
    } catch (err) {
      return this.#fail(s, Reason.cannotObserve, wrapErr(Msg.observe, err));
    }
    s.atProvider = obs.atProvider ?? s.mr.status?.atProvider;
    try {
      if (obs.resourceExists && obs.externalName && obs.externalName !== externalName) {
        // A provider-chosen id found by its ownership tag (e.g. after a crash before it was recorded).
        externalName = obs.externalName;
        s.mr = await this.#recordCreate(
          s.mr,
          { [Annotations.externalName]: externalName },
          indexLabelPatch(def, s.mr, externalName),
        );
      }
      if (pendingCreate && obs.resourceExists) {
        // The interrupted create did reach the cloud and the external name finds it: record success, go on.
        s.mr = await this.#recordCreate(s.mr, { [Annotations.createSucceeded]: now.toISOString() });
        this.#opts.logger.warn({ key: `${key.kind}/${key.name}` }, "recovered an interrupted create");
      }
    } catch (err) {
      return this.#fail(s, Reason.cannotUpdateManaged, err as Error);
    }
    // While waiting on the cloud, Ready says which way the resource is going.
    const waiting = (message?: string) => (isDeleting ? deleting(message) : creating());

    if (pendingCreate && !obs.resourceExists) {
      const age = now.getTime() - Date.parse(pendingCreate);
      if (age < this.#opts.createPendingTimeoutMs) {
        // Another worker may be creating it right now: never race it, and never trust this not-found
        // for a delete — the create may land after it and leak.
        await this.#writeStatus(s, [waiting(Msg.pendingCreate), reconcileSuccess()]);
        await this.#event(s.mr, "Normal", Reason.pending, Msg.pendingCreate);
        return {
          outcome: isDeleting ? "deleting" : "creating",
          requeueAfterMs: this.#jitter(
            Math.min(SHORT_REQUEUE_MS * 2, this.#opts.createPendingTimeoutMs - age + 100),
          ),
        };
      }
      if (def.externalName === "providerChosen" && !def.ownershipLookup) {
        return this.#block(
          s,
          `cannot determine creation result: a create started at ${pendingCreate} was interrupted and the cloud chose the name, so ${isDeleting ? "deleting now could leave it behind" : "creating again could leak a duplicate"}. ` +
            `Find the resource in the cloud: if it exists, set ${Annotations.externalName} to its id; if not, remove the ${Annotations.createPending} annotation. Either way driftless then continues.`,
        );
      }
      // Older than any create takes and still absent (by name, or by ownership tag): the create never
      // reached the cloud, so creating again cannot make a second resource, nor can deleting leak one.
    }

    if (!obs.resourceExists) {
      const succeeded = annotations[Annotations.createSucceeded];
      // Once driftless itself asked the cloud to delete it (it was seen to exist), not-found is the answer.
      const deleteRequested =
        isDeleting && getCondition(s.mr.status?.conditions, "Ready")?.message === Msg.deleteRequested;
      if (
        succeeded &&
        !deleteRequested &&
        now.getTime() - Date.parse(succeeded) < this.#opts.creationGracePeriodMs
      ) {
        // Eventually consistent clouds may not list what they just created, whether we are creating or
        // deleting: a not-found now is no proof of absence.
        await this.#writeStatus(s, [waiting(), reconcileSuccess()]);
        await this.#event(s.mr, "Normal", Reason.pending, Msg.gracePeriod);
        return {
          outcome: isDeleting ? "deleting" : "creating",
          requeueAfterMs: this.#jitter(SHORT_REQUEUE_MS),
        };
      }
      if (!isDeleting && !policies.create) {
        // An import of something that is not there: say so at the poll interval, not as a failing message.
        const prev = getCondition(s.mr.status?.conditions, "Synced");
        await this.#writeStatus(s, [
          unavailable(Msg.notFoundObserveOnly),
          reconcileError(Msg.notFoundObserveOnly),
        ]);
        if (prev?.message !== Msg.notFoundObserveOnly)
          await this.#event(s.mr, "Warning", Reason.cannotObserve, Msg.notFoundObserveOnly);
        return { outcome: "blocked", requeueAfterMs: this.#pollInterval(s.mr) };
      }
    }

    if (isDeleting) {
      if (obs.resourceExists) {
        try {
          await this.#external(def.kind, "delete", () => client.delete(s.mr, externalName ?? ""));
        } catch (err) {
          if (err instanceof DependentsExistError) {
            // Not a failure: dependents are being deleted too. Say why, and look again soon.
            await this.#writeStatus(s, [deleting(err.message), reconcileSuccess()]);
            return { outcome: "deleting", requeueAfterMs: this.#jitter(DEPENDENTS_REQUEUE_MS) };
          }
          return this.#fail(s, Reason.cannotDelete, wrapErr(Msg.delete, err), [deleting()]);
        }
        await this.#event(s.mr, "Normal", Reason.deleted, `Deleting external resource ${externalName}`);
        await this.#writeStatus(s, [deleting(Msg.deleteRequested), reconcileSuccess()]);
        return { outcome: "deleting", requeueAfterMs: this.#jitter(SHORT_REQUEUE_MS) };
      }
      try {
        await this.#publisher.unpublish(s.mr);
      } catch (err) {
        return this.#fail(s, Reason.cannotUnpublish, wrapErr(Msg.unpublish, err), [deleting()]);
      }
      return (await this.#removeFinalizer(s)) ?? { outcome: "deleted" };
    }

    // For a resource still to be created, details (e.g. a generated password) are published only by
    // the worker that wins the create-pending guard, so concurrent workers cannot overwrite each other.
    if (obs.resourceExists) {
      try {
        await this.#publisher.publish(s.mr, obs.connectionDetails);
      } catch (err) {
        return this.#fail(s, Reason.cannotPublish, wrapErr(Msg.publish, err));
      }
    }

    // The index label rides on the finalizer's write; a resource that has its finalizer (adopted, or
    // from before the label existed) gets it alone, once. A resource still to be created gets it with
    // the create-pending write.
    const label = obs.resourceExists ? indexLabelPatch(def, s.mr, externalName) : undefined;
    if (!(s.mr.metadata.finalizers ?? []).includes(MANAGED_FINALIZER)) {
      try {
        s.mr = await this.#patchMeta(s.mr, {
          finalizers: [...(s.mr.metadata.finalizers ?? []), MANAGED_FINALIZER],
          labels: label,
        });
      } catch (err) {
        if (err instanceof ConflictError) throw err;
        return this.#fail(s, Reason.cannotAddFinalizer, wrapErr(Msg.addFinalizer, err));
      }
    } else if (label) {
      try {
        s.mr = await this.#patchMeta(s.mr, { labels: label });
      } catch (err) {
        if (err instanceof ConflictError) throw err;
        return this.#fail(s, Reason.cannotUpdateManaged, wrapErr(Msg.indexLabel, err));
      }
    }

    if (!obs.resourceExists) return this.#create(s, provider, client, externalName, obs.connectionDetails);

    // Late initialization: fill fields the user left empty with what the cloud chose; never overwrite.
    const maps = this.#mapsOf(provider);
    let forProvider = (s.mr.spec.forProvider ?? {}) as Record<string, unknown>;
    if (policies.lateInitialize && obs.observed) {
      const observed = obs.observed as Record<string, unknown>;
      const { value, filled } = lateInitialize(forProvider, observed, maps, this.#fieldsOf(provider));
      if (filled.length > 0) {
        try {
          s.mr = await this.#patchSpec(s.mr, value);
        } catch (err) {
          if (err instanceof ConflictError) throw err;
          return this.#fail(s, Reason.cannotUpdateManaged, err as Error);
        }
        forProvider = value;
        this.#opts.logger.debug({ key: `${key.kind}/${key.name}`, filled }, "late-initialized");
      }
    }

    const drift = obs.observed
      ? driftedFields(forProvider, obs.observed as Record<string, unknown>, maps, this.#fieldsOf(provider))
      : [];
    const upToDate = obs.resourceUpToDate ?? drift.length === 0;
    const ready = readiness(obs);

    if (upToDate || !policies.update) {
      await this.#writeStatus(s, [ready, reconcileSuccess()]);
      return {
        outcome: "in-sync",
        pollAfterMs: this.#pollInterval(s.mr),
        ...(ready.reason === "Creating" ? { requeueAfterMs: this.#jitter(SHORT_REQUEUE_MS * 2) } : {}),
      };
    }

    const settling = this.#settleLeft(def.updateSettleMs, s.mr, now);
    if (settling > 0) {
      // We updated this generation moments ago and the cloud's reads lag behind: look again once it shows.
      return { outcome: "settling", requeueAfterMs: settling + this.#jitter(SHORT_REQUEUE_MS) };
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
        s,
        Reason.cannotUpdate,
        new InvalidSpecError(
          `cannot update immutable field(s) ${details}: the cloud resource was left unchanged. Set the field back, or create a new resource with the new value.`,
        ),
        [ready],
      );
    }

    let upd: ExternalUpdate;
    try {
      upd = await this.#external(def.kind, "update", () => client.update(s.mr, externalName ?? "", obs));
    } catch (err) {
      return this.#fail(s, Reason.cannotUpdate, wrapErr(Msg.update, err), [ready]);
    }
    try {
      await this.#publisher.publish(s.mr, upd.connectionDetails);
    } catch (err) {
      return this.#fail(s, Reason.cannotPublish, wrapErr(Msg.publish, err), [ready]);
    }
    await this.#event(s.mr, "Normal", Reason.updated, `Updated ${drift.join(", ") || "external resource"}`);
    // Recorded on every update: settling kinds compare it, and the sweep's adaptive polling reads it as
    // the resource's last change (drift found brings it back to the default interval).
    s.lastExternalUpdate = { time: now.toISOString(), generation: s.mr.metadata.generation ?? 0 };
    await this.#writeStatus(s, [ready, reconcileSuccess()]);
    return {
      outcome: "updated",
      requeueAfterMs:
        def.updateSettleMs > 0
          ? def.updateSettleMs + this.#jitter(SHORT_REQUEUE_MS)
          : this.#jitter(SHORT_REQUEUE_MS),
      pollAfterMs: this.#pollInterval(s.mr),
    };
  }

  /** Time left before an update of this generation shows in the cloud's reads (0: compare now). */
  #settleLeft(settleMs: number, mr: ManagedResource, now: Date): number {
    const last = mr.status?.lastExternalUpdate;
    if (settleMs <= 0 || !last || last.generation !== (mr.metadata.generation ?? 0)) return 0;
    return Math.max(0, Date.parse(last.time) + settleMs - now.getTime());
  }

  async #create(
    step: Step,
    provider: ManagedKindProvider,
    client: ExternalClient<Record<string, unknown>, Record<string, unknown>>,
    externalName: string | undefined,
    preCreateDetails: ConnectionDetails | undefined,
  ): Promise<ReconcileResult> {
    // Record the intent first, guarded by resourceVersion: of concurrent workers only one gets past this.
    try {
      step.mr = await this.#patchMeta(step.mr, {
        annotations: { [Annotations.createPending]: this.#opts.now().toISOString() },
        labels: indexLabelPatch(provider.definition, step.mr, externalName),
      });
    } catch (err) {
      if (err instanceof ConflictError) throw err;
      return this.#fail(step, Reason.cannotUpdateManaged, wrapErr(Msg.recordPending, err), [creating()]);
    }
    try {
      await this.#publisher.publish(step.mr, preCreateDetails);
    } catch (err) {
      // Nothing was created: say so, so the next reconcile may try again without waiting out the guard.
      await this.#recordCreate(step.mr, { [Annotations.createFailed]: this.#opts.now().toISOString() }).catch(
        () => undefined,
      );
      return this.#fail(step, Reason.cannotPublish, wrapErr(Msg.publish, err), [creating()]);
    }
    let created: ExternalCreation;
    try {
      created = await this.#external(provider.definition.kind, "create", () =>
        client.create(step.mr, externalName),
      );
    } catch (err) {
      try {
        step.mr = await this.#recordCreate(step.mr, {
          [Annotations.createFailed]: this.#opts.now().toISOString(),
        });
      } catch (recordErr) {
        return this.#fail(step, Reason.cannotUpdateManaged, recordErr as Error, [creating()]);
      }
      return this.#fail(step, Reason.cannotCreate, wrapErr(Msg.create, err), [creating()]);
    }
    const annotations: Record<string, string> = {
      ...providerAnnotations(created.annotations),
      [Annotations.createSucceeded]: this.#opts.now().toISOString(),
    };
    const createdName = created.externalName ?? externalName;
    let labels: Record<string, string> | undefined;
    if (created.externalName && provider.definition.externalName === "providerChosen") {
      annotations[Annotations.externalName] = created.externalName;
      labels = indexLabelPatch(provider.definition, step.mr, created.externalName);
    }
    try {
      step.mr = await this.#recordCreate(step.mr, annotations, labels);
    } catch (err) {
      if (statusOf((err as Error).cause) === 404 && createdName) {
        // The managed resource is gone (its finalizer was removed by hand): nobody will ever delete what we
        // just made, so take it back now rather than leak it.
        await this.#compensate(step.mr, client, createdName);
        return { outcome: "gone" };
      }
      return this.#fail(step, Reason.cannotUpdateManaged, err as Error, [creating()]);
    }
    await this.#event(step.mr, "Normal", Reason.created, `Created external resource ${createdName ?? ""}`);
    if (step.mr.metadata.deletionTimestamp) {
      // Deleted while this create was in flight: the deleting worker owns the status now (its "deletion
      // requested" must not be overwritten by Creating), and nothing is published for a resource on its way out.
      return { outcome: "created", requeueAfterMs: this.#jitter(SHORT_REQUEUE_MS) };
    }
    try {
      await this.#publisher.publish(step.mr, created.connectionDetails);
    } catch (err) {
      return this.#fail(step, Reason.cannotPublish, wrapErr(Msg.publish, err), [creating()]);
    }
    await this.#writeStatus(step, [creating(), reconcileSuccess()]);
    return { outcome: "created", requeueAfterMs: this.#jitter(SHORT_REQUEUE_MS) };
  }

  /** Deletes a resource created for a managed resource that no longer exists; never throws. */
  async #compensate(
    mr: ManagedResource,
    client: ExternalClient<Record<string, unknown>, Record<string, unknown>>,
    externalName: string,
  ) {
    const key = `${mr.kind}/${mr.metadata.name}`;
    try {
      await this.#external(mr.kind, "delete", () => client.delete(mr, externalName));
      this.#opts.logger.warn(
        { key, externalName },
        "deleted a resource created for a managed resource that is gone",
      );
    } catch (err) {
      this.#opts.logger.error(
        { key, externalName, error: (err as Error).message },
        "created a resource for a managed resource that is gone and cannot delete it: delete it by hand",
      );
    }
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
  async #recordCreate(
    mr: ManagedResource,
    annotations: Record<string, string>,
    labels?: Record<string, string>,
  ): Promise<ManagedResource> {
    let lastErr: unknown;
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        return this.#own(
          await this.#kube.patch<ManagedResource & { [k: string]: unknown }>(
            this.#defOf(mr),
            mr.metadata.name,
            { metadata: { annotations, ...(labels ? { labels } : {}) } },
            { namespace: mr.metadata.namespace },
          ),
        );
      } catch (err) {
        lastErr = err;
        if (statusOf(err) === 404) break; // the object is gone: no retry brings it back
        await sleep(this.#opts.retryBaseMs * 2 ** attempt * (0.5 + this.#opts.random()));
      }
    }
    throw wrapErr(Msg.recordCreate, lastErr);
  }

  #defOf(mr: ManagedResource) {
    const p = this.#registry.get(mr.apiVersion, mr.kind);
    if (!p) throw new Error(`${Msg.unknownKind}: ${mr.apiVersion} ${mr.kind}`);
    return p.definition;
  }

  /** An object the API server returned, as the engine works with it (withOwnNamespace). */
  #own<M extends ManagedResource>(mr: M): M {
    return withOwnNamespace(this.#defOf(mr), mr);
  }

  async #patchMeta(
    mr: ManagedResource,
    meta: { annotations?: Record<string, string>; finalizers?: string[]; labels?: Record<string, string> },
  ): Promise<ManagedResource> {
    const { labels, ...rest } = meta;
    return this.#own(
      await this.#kube.patch<ManagedResource & { [k: string]: unknown }>(
        this.#defOf(mr),
        mr.metadata.name,
        { metadata: labels ? { ...rest, labels } : rest },
        { resourceVersion: mr.metadata.resourceVersion ?? "", namespace: mr.metadata.namespace },
      ),
    );
  }

  async #patchSpec(mr: ManagedResource, forProvider: Record<string, unknown>): Promise<ManagedResource> {
    try {
      return this.#own(
        await this.#kube.patch<ManagedResource & { [k: string]: unknown }>(
          this.#defOf(mr),
          mr.metadata.name,
          { spec: { forProvider } },
          { resourceVersion: mr.metadata.resourceVersion ?? "", namespace: mr.metadata.namespace },
        ),
      );
    } catch (err) {
      throw err instanceof ConflictError ? err : wrapErr(Msg.lateInit, err);
    }
  }

  /** Removes our finalizer; a failure is reported on the resource (returned), a conflict re-read. */
  async #removeFinalizer(step: Step): Promise<ReconcileResult | undefined> {
    const finalizers = step.mr.metadata.finalizers ?? [];
    if (!finalizers.includes(MANAGED_FINALIZER)) return undefined;
    try {
      await this.#patchMeta(step.mr, { finalizers: finalizers.filter((f) => f !== MANAGED_FINALIZER) });
      return undefined;
    } catch (err) {
      if (err instanceof ConflictError || statusOf(err) === 404) throw err;
      return this.#fail(step, Reason.cannotRemoveFinalizer, wrapErr(Msg.removeFinalizer, err), [deleting()]);
    }
  }

  /** The kind's field behaviours, plus its references' name and selector fields: those never reach the cloud. */
  #fieldsOf(provider: ManagedKindProvider): FieldBehaviours {
    const k = `${provider.definition.apiVersion}/${provider.definition.kind}`;
    let fields = this.#fields.get(k);
    if (!fields) {
      const def = provider.definition;
      const refs = def.references.flatMap((r) => [r.refField, r.selectorField]);
      fields = { ...Object.fromEntries(refs.map((f) => [f, { writeOnly: true }])), ...def.fields };
      this.#fields.set(k, fields);
    }
    return fields;
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

  /**
   * Reports a failure where the user looks: Synced=False with the message, and a Warning event with a
   * reason that says which step failed. If even that write fails, the error still goes back to the queue.
   */
  async #fail(
    step: Step,
    reason: Reason,
    err: Error,
    extra: Array<Omit<Condition, "lastTransitionTime">> = [],
  ): Promise<ReconcileResult> {
    let error = err;
    if (error instanceof CredentialsError || error.cause instanceof CredentialsError) {
      // Whoever must fix credentials needs to know which ProviderConfig holds them.
      const def = this.#registry.get(step.mr.apiVersion, step.mr.kind)?.definition;
      const pc = def ? providerConfigOf(def, step.mr) : undefined;
      this.invalidateProviderConfigs(pc ? providerConfigKey(pc) : undefined);
      if (pc && !error.message.includes(`${pc.type.kind} "`)) {
        error = new CredentialsError(`${error.message} (${pc.type.kind} "${pc.name}")`, { cause: error });
      }
    }
    const prevSynced = getCondition(step.mr.status?.conditions, "Synced");
    try {
      await this.#writeStatus(step, [...extra, reconcileError(error.message)]);
    } catch (writeErr) {
      this.#opts.logger.warn(
        { key: `${step.mr.kind}/${step.mr.metadata.name}`, error: (writeErr as Error).message },
        "cannot write the failure to the status",
      );
    }
    await this.#event(step.mr, "Warning", reason, error.message);
    return { outcome: "error", error, requeueAfterMs: this.#errorBackoff(prevSynced, error) };
  }

  async #block(step: Step, message: string): Promise<ReconcileResult> {
    await this.#writeStatus(step, [reconcileError(message)]);
    await this.#event(step.mr, "Warning", Reason.cannotDetermineCreation, message);
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
    return failureBackoff(failingFor, min, max, this.#opts.random);
  }

  #pollInterval(mr: ManagedResource): number {
    const annotated = parseDuration(mr.metadata.annotations?.[Annotations.pollInterval]);
    return annotated === undefined
      ? this.#opts.pollIntervalMs
      : Math.max(annotated, this.#opts.minPollIntervalMs);
  }

  /** Full jitter in [0.5, 1.5) × base: spreads retries so they never arrive in lockstep. */
  #jitter(ms: number): number {
    return jitter(ms, this.#opts.random);
  }

  /** Writes status only when conditions or atProvider changed: an in-sync reconcile writes nothing. */
  /**
   * Writes status only when conditions or atProvider changed: an in-sync reconcile writes nothing.
   * atProvider is replaced whole (keys the cloud stopped reporting are removed, not merged forever).
   */
  async #writeStatus(step: Step, updates: Array<Omit<Condition, "lastTransitionTime">>): Promise<void> {
    const generation = step.mr.metadata.generation;
    const conditions = setConditions(step.mr.status?.conditions, updates, this.#opts.now(), generation);
    const atProvider = step.atProvider;
    const before = step.mr.status ?? {};
    const lastUpdate = step.lastExternalUpdate;
    // A requested reconcile (crossplane.io/reconcile-requested-at) is answered by echoing its value.
    const requested = reconcileRequestOf(step.mr.metadata.annotations);
    const handled =
      requested !== undefined && requested !== before.lastHandledReconcileAt ? requested : undefined;
    if (
      deepEqual(conditions, before.conditions ?? []) &&
      deepEqual(atProvider, before.atProvider) &&
      (!lastUpdate || deepEqual(lastUpdate, before.lastExternalUpdate)) &&
      handled === undefined
    )
      return;
    const status: Record<string, unknown> = { conditions };
    if (atProvider !== undefined) status.atProvider = replacementPatch(before.atProvider, atProvider);
    if (lastUpdate) status.lastExternalUpdate = lastUpdate;
    if (handled !== undefined) status.lastHandledReconcileAt = handled;
    try {
      const written = await this.#kube.patchStatus<ManagedResource & { [k: string]: unknown }>(
        this.#defOf(step.mr),
        step.mr.metadata.name,
        status,
        { namespace: step.mr.metadata.namespace },
      );
      step.mr = this.#own(written);
    } catch (err) {
      // The object may have been deleted meanwhile (finalizer removed): nothing left to report on.
      if (err instanceof KubeError && err.status === 404) return;
      throw err;
    }
  }

  async #event(mr: ManagedResource, type: "Normal" | "Warning", reason: string, message: string) {
    if (!this.#opts.events) return;
    await this.#opts.events.record(mr, type, reason, message).catch((err: unknown) => {
      this.#opts.logger.warn({ error: (err as Error).message }, "cannot record event");
    });
  }
}

/**
 * The engine behind a router of its own: what callers that reconcile managed resources alone use (tests,
 * tools). It reports each reconcile (log line, metric) and settles a 409 exactly as the worker's router.
 */
export class Reconciler extends ManagedReconciler {
  readonly #router: Router;

  constructor(kube: Kube, registry: KindRegistry, opts: ReconcilerOptions = {}) {
    super(kube, registry, opts);
    const engine: Reconciles = { handles: () => true, reconcile: (key) => super.reconcile(key) };
    this.#router = new Router([engine], {
      ...(opts.logger ? { logger: opts.logger } : {}),
      ...(opts.metrics ? { metrics: opts.metrics } : {}),
      ...(opts.random ? { random: opts.random } : {}),
    });
  }

  override reconcile(key: ResourceKey): Promise<ReconcileResult> {
    return this.#router.reconcile(key);
  }
}

type Observed = ExternalObservation<Record<string, unknown>, Record<string, unknown>> | Error;

const isThrottled = (err: Error) => err instanceof ThrottledError || err.cause instanceof ThrottledError;
const asThrottled = (err: Error): ThrottledError =>
  err instanceof ThrottledError ? err : (err.cause as ThrottledError);
const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));

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

/**
 * The index label (api/cloud-events.ts) as a metadata.labels patch, when the object lacks it or carries
 * one for another external name; undefined when it is right or no external name is known yet.
 */
export function indexLabelPatch(
  def: { group: string; kind: string },
  mr: ManagedResource,
  externalName: string | undefined,
): Record<string, string> | undefined {
  if (!externalName) return undefined;
  const value = externalKeyOf(def, externalName);
  return mr.metadata.labels?.[EXTERNAL_KEY_LABEL] === value ? undefined : { [EXTERNAL_KEY_LABEL]: value };
}

/** A provider's create annotations, without any in crossplane.io/: those are the engine's alone. */
function providerAnnotations(a: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(a ?? {}).filter(([k]) => !k.startsWith("crossplane.io/")));
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
