import type { V1Secret } from "@kubernetes/client-node";
import { CHANGE_LOG_REASON, type ChangeRecord, changeRecordMessage } from "../api/change-log.ts";
import type {
  ExternalClient,
  ExternalObservation,
  ManagedKindProvider,
  ObserveManyItem,
} from "../api/external.ts";
import { CredentialsError, DependentsExistError, InvalidSpecError, ThrottledError } from "../api/external.ts";
import {
  type LastExternalUpdate,
  type ManagedResource,
  providerConfigKey,
  providerConfigOf,
  withOwnNamespace,
} from "../api/managed.ts";
import { Annotations, DEFAULT_MIN_POLL_INTERVAL_MS, MANAGED_FINALIZER } from "../api/meta.ts";
import { withRequestIds } from "../api/request-ids.ts";
import { ConflictError, type Kube, statusOf } from "../kube/client.ts";
import { type FieldBehaviours, mapPaths } from "./compare.ts";
import { creating, deleting, reconcileError, reconcileSuccess, updateFailed } from "./conditions.ts";
import { type ConnectorOptions, ProviderConnector } from "./connect.ts";
import { ConnectionPublisher } from "./connection.ts";
import {
  type EventRecorder,
  type ExternalCallStats,
  type NewCondition,
  noopLogger,
  type ReconcileLogger,
  type ReconcileMetrics,
  type ReconcileResult,
  type Reconciles,
  type ResourceKey,
} from "./contract.ts";
import { errorBackoff, isWait, Lifecycle, wrapErr } from "./lifecycle.ts";
import {
  asCreated,
  asSent,
  DEFAULT_UPDATE_LOOP_LIMIT,
  DEPENDENTS_REQUEUE_MS,
  type Failure,
  type FieldChange,
  fieldChanges,
  indexLabelPatch,
  type Known,
  type MetaPatch,
  Msg,
  managedStatusFields,
  type Plan,
  type PlanContext,
  plan,
  pollInterval,
  Reason,
  type Step,
  type Verdict,
} from "./plan.ts";
import { resolveReferences } from "./references.ts";
import type { KindRegistry } from "./registry.ts";
import { EngineShapeMarks, type KnownShape, SHAPE_MARK_WAIT_MS } from "./shape-marks.ts";
import { holdersOf } from "./usages.ts";

export const DEFAULT_POLL_INTERVAL_MS = 5 * 60_000;
export const DEFAULT_CREATION_GRACE_MS = 30_000;
/** How long a create may take before an unfinished one (pending, no result) is considered interrupted. */
export const DEFAULT_CREATE_PENDING_TIMEOUT_MS = 60_000;
/**
 * Plan rounds in one reconcile: initialize, references, connection, observation, the shape's mark (read,
 * write) before a first index label, and a margin.
 */
const MAX_PLAN_ROUNDS = 10;

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
export {
  DEFAULT_UPDATE_LOOP_LIMIT,
  type FieldChange,
  indexLabelPatch,
  Msg,
  type Plan,
  Reason,
  type Step,
  type Verdict,
} from "./plan.ts";

/** What `simulate` found: the plan's steps and verdict, and the fields a create or update would send. */
export interface Simulation {
  steps: Step[];
  verdict?: Verdict;
  /** The create's fields (current undefined), or the update's drifted fields: current → desired. */
  changes: FieldChange[];
}

export interface ReconcilerOptions extends ConnectorOptions {
  pollIntervalMs?: number;
  /** The least interval `crossplane.io/poll-interval` may set; default DEFAULT_MIN_POLL_INTERVAL_MS (30 s). */
  minPollIntervalMs?: number;
  creationGracePeriodMs?: number;
  createPendingTimeoutMs?: number;
  /** Updates in a row that may find the same fields changed back before driftless stops updating; default 3. */
  updateLoopLimit?: number;
  /**
   * Crossplane's default external tags on every taggable resource (crossplane-kind, -name, -providerconfig,
   * -namespace); false is provider-upjet's `--skip-default-tags`. Default true.
   */
  defaultTags?: boolean;
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
  /**
   * How long a shape stays `pending` before its first index label (shape-marks.ts); default
   * SHAPE_MARK_WAIT_MS. Must exceed every cloud-event resolver's SHAPE_MARKS_CACHE_MS.
   */
  shapeMarkWaitMs?: number;
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

type EngineOptions = Required<Omit<ReconcilerOptions, keyof ConnectorOptions | "events" | "metrics">> & {
  events?: EventRecorder;
  metrics?: ReconcileMetrics;
};
type Client = ExternalClient<Record<string, unknown>, Record<string, unknown>>;
type Observation = ExternalObservation<Record<string, unknown>, Record<string, unknown>>;
type Observed = Observation | Error;

/** One reconcile as it goes: the object as last written, its client once connected, what the cloud showed. */
interface Run {
  provider: ManagedKindProvider;
  mr: ManagedResource;
  client?: Client;
  obs?: Observation;
}

/** An object of a batch on its way through the check, with what is known of it so far. */
interface Candidate {
  i: number;
  mr: ManagedResource;
  externalName: string;
  known: Known;
}

/**
 * The generic managed reconciler: Crossplane's semantics for one managed resource per call, any kind.
 * It decides nothing itself: `plan` (plan.ts) says what to do from the object and what is known of it,
 * and this class performs the steps, learning what the plan needs next (a connection, an observation)
 * until the plan gives its verdict. Level-triggered: it reads the object fresh, so a stale or duplicate
 * message can do no harm. A 409 is thrown to the router (contract.ts), which requeues it.
 */
export class ManagedReconciler implements Reconciles {
  readonly #kube: Kube;
  readonly #registry: KindRegistry;
  readonly #publisher: ConnectionPublisher;
  readonly #connector: ProviderConnector;
  readonly #opts: EngineOptions;
  /** Status writes, events, failures and backoff, as every reconciler of driftless has them. */
  readonly #lc: Lifecycle;
  /** The marks of the kinds' shapes, read before an index label is written. */
  readonly #shapes: EngineShapeMarks;
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
      updateLoopLimit: Math.max(1, opts.updateLoopLimit ?? DEFAULT_UPDATE_LOOP_LIMIT),
      defaultTags: opts.defaultTags ?? true,
      logger: opts.logger ?? noopLogger,
      now: opts.now ?? (() => new Date()),
      random: opts.random ?? Math.random,
      retryBaseMs: opts.retryBaseMs ?? 100,
      throttleBackoffMs: opts.throttleBackoffMs ?? THROTTLE_SPLIT_BACKOFF_MS,
      shapeMarkWaitMs: opts.shapeMarkWaitMs ?? SHAPE_MARK_WAIT_MS,
      ...(opts.events ? { events: opts.events } : {}),
      ...(opts.metrics ? { metrics: opts.metrics } : {}),
    };
    const o = this.#opts;
    this.#shapes = new EngineShapeMarks(kube, () => o.now().getTime(), o.shapeMarkWaitMs);
    this.#lc = new Lifecycle(kube, {
      logger: o.logger,
      now: o.now,
      random: o.random,
      ...(o.events ? { events: o.events } : {}),
    });
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
   * The plan of a reconcile of `mr` given what is known (`driftless plan`, tests): the same decision the
   * reconcile and the batched check make.
   */
  planOf(mr: ManagedResource, known: Known = {}): Plan {
    const provider = this.#registry.get(mr.apiVersion, mr.kind);
    if (!provider) throw new Error(`${Msg.unknownKind}: ${mr.apiVersion} ${mr.kind}`);
    return plan(this.#context(provider), withOwnNamespace(provider.definition, mr), known);
  }

  /**
   * What a reconcile of `key` would do now (`driftless plan`), performing nothing: it reads the object,
   * its references' targets and the cloud, applies the steps that only rewrite the object to a copy in
   * memory, and returns every step with the verdict — the plan the reconcile and the batched check follow.
   * `manifest` stands in for the cluster's copy (`driftless plan -f`: an object not applied yet).
   */
  async simulate(key: ResourceKey, manifest?: ManagedResource): Promise<Simulation> {
    const read = manifest ? this.#asRun(key, manifest) : await this.#read(key);
    if (!read) return { steps: [], verdict: { outcome: "gone" }, changes: [] };
    const { provider } = read;
    const def = provider.definition;
    let mr = read.mr;
    const ctx = this.#context(provider);
    const known: Known = {};
    const steps: Step[] = [];
    let client: Client | undefined;
    for (let round = 0; round < MAX_PLAN_ROUNDS; round++) {
      const p = plan(ctx, mr, known);
      steps.push(...p.steps);
      if (p.verdict) {
        const observed = known.observation?.observed as Record<string, unknown> | undefined;
        const created = asSent(ctx, mr, "create").spec.forProvider as Record<string, unknown>;
        const changes = steps.flatMap((step) =>
          step.do === "create"
            ? fieldChanges(ctx.fields, Object.keys(created), created, undefined)
            : step.do === "update"
              ? fieldChanges(ctx.fields, step.drift, mr.spec.forProvider as Record<string, unknown>, observed)
              : [],
        );
        return { steps, verdict: p.verdict, changes };
      }
      if (p.next === "replan") {
        mr = await this.#rewriteInMemory(def, mr, p.steps, known);
      } else if (p.next === "shapeMark") {
        known.shape = await this.#readShape(def);
      } else if (p.next === "usages") {
        known.usedBy = await this.#holders(mr);
      } else if (p.next === "connection") {
        client = await this.#connector.connect(provider, mr);
        known.home = client.home ? await client.home(asCreated(mr)) : {};
      } else {
        const connected = client as Client;
        const externalName = mr.metadata.annotations?.[Annotations.externalName];
        known.observation = await connected.observe(mr, externalName);
        // As the batch does: the Secret as it is, so details it already holds are no step.
        const ref = mr.spec.writeConnectionSecretToRef;
        known.connectionSecret = ref ? await this.#kube.getSecret(ref.namespace, ref.name) : undefined;
      }
    }
    throw new Error(`the plan did not settle in ${MAX_PLAN_ROUNDS} rounds`);
  }

  /** The object as the plan's rewriting steps would leave it, written nowhere (references are read). */
  async #rewriteInMemory(
    def: ManagedKindProvider["definition"],
    mr: ManagedResource,
    steps: readonly Step[],
    known: Known,
  ): Promise<ManagedResource> {
    const next = structuredClone(mr);
    const merge = (patch: MetaPatch) => {
      next.metadata.annotations = { ...next.metadata.annotations, ...patch.annotations };
      next.metadata.labels = { ...next.metadata.labels, ...patch.labels };
      if (patch.finalizers) next.metadata.finalizers = patch.finalizers;
    };
    for (const step of steps) {
      if (step.do === "initialize" || step.do === "meta") merge(step.patch);
      else if (step.do === "recordCreate")
        merge({ annotations: step.annotations, ...(step.labels ? { labels: step.labels } : {}) });
      else if (step.do === "lateInitialize") next.spec.forProvider = step.forProvider;
      else if (step.do === "markShape")
        known.shape = step.to === "pending" ? { state: "pending", ageMs: 0 } : { state: "in-use" };
      else if (step.do === "resolveReferences") {
        next.spec.forProvider = (await resolveReferences(this.#kube, def, next)) ?? next.spec.forProvider;
        known.referencesResolved = true;
      }
    }
    return next;
  }

  /**
   * The batched drift check (the sweep's batch messages): objects of one kind as read from a LIST page,
   * checked against the cloud with the kind's list calls (`observeMany`, one call per up to maxItems
   * objects) or one observe each. Each object is planned exactly as a full reconcile plans it, and is in
   * sync only when its plan is empty and final: nothing to write, call or look at again soon. It never
   * writes: every other verdict sends the object to a full reconcile, which reads it fresh.
   */
  async checkMany(listed: readonly ManagedResource[], opts: CheckManyOptions): Promise<BatchVerdict[]> {
    const first = listed[0];
    const provider = first ? this.#registry.get(first.apiVersion, first.kind) : undefined;
    if (!first || !provider) return listed.map(() => ({ inSync: false, why: Msg.unknownKind }));
    // The check never rewrites a listed object: each spec is validated once, not once per plan.
    const ctx: PlanContext = { ...this.#context(provider), validatedSpecs: new WeakMap() };
    const verdicts: BatchVerdict[] = listed.map(() => ({ inSync: false, why: "unchecked" }));
    // One client serves a group: same ProviderConfig, same namespace (a ClusterProviderConfig's tenancy is
    // checked for the namespace on connect) and same connection Secret namespace (the Secrets it may read).
    const groups = new Map<string, Candidate[]>();
    for (const [i, o] of listed.entries()) {
      if (o.apiVersion !== first.apiVersion || o.kind !== first.kind) {
        verdicts[i] = { inSync: false, why: "another kind" };
        continue;
      }
      const mr = withOwnNamespace(provider.definition, o);
      const externalName = mr.metadata.annotations?.[Annotations.externalName];
      // The list calls read by external name: a resource without one is not a drift check's to settle.
      const decided = externalName ? batchVerdict(plan(ctx, mr), "connection") : noName;
      if (decided) {
        verdicts[i] = decided;
        continue;
      }
      const pc = providerConfigKey(providerConfigOf(provider.definition, mr));
      const g = `${pc}/${mr.metadata.namespace ?? ""}/${mr.spec.writeConnectionSecretToRef?.namespace ?? ""}`;
      const candidate = { i, mr, externalName: externalName ?? "", known: {} };
      const group = groups.get(g);
      if (group) group.push(candidate);
      else groups.set(g, [candidate]);
    }
    for (const group of groups.values()) {
      await this.#checkGroup(ctx, provider, group, verdicts, opts);
    }
    return verdicts;
  }

  /** One group of the batched check: connect once, plan each with its home, observe together, plan each. */
  async #checkGroup(
    ctx: PlanContext,
    provider: ManagedKindProvider,
    group: Candidate[],
    verdicts: BatchVerdict[],
    opts: CheckManyOptions,
  ) {
    let client: Client;
    try {
      client = await this.#connector.connect(provider, (group[0] as Candidate).mr);
    } catch (err) {
      for (const { i } of group) verdicts[i] = { inSync: false, why: `${Msg.connect}: ${errText(err)}` };
      return;
    }
    const toObserve: Candidate[] = [];
    for (const c of group) {
      try {
        c.known.home = client.home ? await client.home(asCreated(c.mr)) : {};
      } catch (err) {
        verdicts[c.i] = { inSync: false, why: `${Msg.home}: ${errText(err)}` };
        continue;
      }
      const decided = batchVerdict(plan(ctx, c.mr, c.known), "observation");
      if (decided) verdicts[c.i] = decided;
      else toObserve.push(c);
    }
    const observations = await this.#observeGroup(provider, client, toObserve);
    for (const [n, c] of toObserve.entries()) {
      const obs = observations[n] as Observed;
      if (obs instanceof Error) {
        verdicts[c.i] = isThrottled(obs)
          ? { inSync: false, why: "throttled", throttled: asThrottled(obs) }
          : { inSync: false, why: `${Msg.observe}: ${obs.message}` };
        continue;
      }
      const ref = c.mr.spec.writeConnectionSecretToRef;
      const connectionSecret = ref ? opts.connectionSecret(ref.namespace, ref.name) : undefined;
      const p = plan(ctx, c.mr, { ...c.known, observation: obs, connectionSecret });
      verdicts[c.i] = batchVerdict(p) ?? { inSync: false, why: "undecided" };
    }
  }

  /** Observes a group: observeMany in chunks of the kind's maxItems, else one observe each. */
  async #observeGroup(
    provider: ManagedKindProvider,
    client: Client,
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
        out[n] = await this.#external(kind, "observe", () => client.observe(mr, externalName)).catch(toError);
      }
    };
    await Promise.all(Array.from({ length: Math.min(BATCH_OBSERVE_CONCURRENCY, group.length) }, lane));
    return out;
  }

  /** One observeMany call; a throttled one is split in halves and retried after a jittered wait. */
  async #observeChunk(
    kind: string,
    client: Client,
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
      const error = toError(err);
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

  /** The key's kind provider and its object read fresh (in its own namespace); undefined when it is gone. */
  #asRun(key: ResourceKey, manifest: ManagedResource): Run {
    const provider = this.#registry.get(key.apiVersion, key.kind);
    if (!provider) throw new Error(`${Msg.unknownKind}: ${key.apiVersion} ${key.kind}`);
    return { provider, mr: withOwnNamespace(provider.definition, structuredClone(manifest)) };
  }

  async #read(key: ResourceKey): Promise<Run | undefined> {
    const provider = this.#registry.get(key.apiVersion, key.kind);
    if (!provider) throw new Error(`${Msg.unknownKind}: ${key.apiVersion} ${key.kind}`);
    const def = provider.definition;
    const read = await this.#kube.get<ManagedResource & { [k: string]: unknown }>(
      def,
      key.name,
      key.namespace,
    );
    return read ? { provider, mr: withOwnNamespace(def, read) } : undefined;
  }

  async reconcile(key: ResourceKey): Promise<ReconcileResult> {
    const run = await this.#read(key);
    if (!run) return { outcome: "gone" };
    try {
      return await this.#apply(run);
    } catch (err) {
      // A 409 is the router's to settle; anything else still reaches the status: never leave a stale
      // Synced=True over an error.
      if (err instanceof ConflictError) throw err;
      return this.#fail(run, Reason.reconcileError, toError(err));
    }
  }

  /** Plans, performs the steps, learns what the plan needs next, and plans again until it gives a verdict. */
  async #apply(run: Run): Promise<ReconcileResult> {
    const ctx = this.#context(run.provider);
    const known: Known = {};
    for (let round = 0; round < MAX_PLAN_ROUNDS; round++) {
      const p = plan(ctx, run.mr, known);
      for (const step of p.steps) {
        const stopped = await this.#perform(run, step, known, p);
        if (stopped) return stopped;
      }
      if (p.verdict) return p.verdict;
      if (p.next === "shapeMark") {
        known.shape = await this.#readShape(run.provider.definition);
      } else if (p.next === "usages") {
        const failed = await this.#usages(run, known);
        if (failed) return failed;
      } else if (p.next === "connection") {
        const failed = await this.#connect(run, known);
        if (failed) return failed;
      } else if (p.next === "observation") {
        const failed = await this.#observe(run, known);
        if (failed) return failed;
      }
    }
    throw new Error(`the reconcile did not settle in ${MAX_PLAN_ROUNDS} plan rounds`);
  }

  /**
   * The kind's shape's mark (shape-marks.ts). Unreadable (no RBAC for the ConfigMap; a missing driftless-system namespace lets the label go, see EngineShapeMarks.mark): the index
   * label waits — cloud events miss the resource until then, nothing else does — and a warning says why.
   */
  async #readShape(def: ManagedKindProvider["definition"]): Promise<KnownShape> {
    try {
      return await this.#shapes.read(def);
    } catch (err) {
      this.#opts.logger.warn({ kind: def.kind, error: errText(err) }, Msg.shapeMark);
      return { state: "unreadable" };
    }
  }

  async #markShape(run: Run, to: "in-use" | "pending"): Promise<KnownShape> {
    const def = run.provider.definition;
    try {
      return await this.#shapes.mark(def, to);
    } catch (err) {
      this.#opts.logger.warn({ kind: def.kind, error: errText(err) }, Msg.shapeMark);
      return { state: "unreadable" };
    }
  }

  /** Learns what holds the resource being deleted (Usages); a failure when they cannot be read. */
  async #usages(run: Run, known: Known): Promise<ReconcileResult | undefined> {
    try {
      known.usedBy = await this.#holders(run.mr);
    } catch (err) {
      return this.#fail(run, Reason.cannotGetUsages, wrapErr(Msg.usages, err), [deleting()]);
    }
    return undefined;
  }

  /** What holds `mr` (Usages whose user is still there); a `by` of a kind this engine does not serve holds. */
  #holders(mr: ManagedResource): Promise<string[]> {
    return holdersOf(this.#kube, (apiVersion, kind) => this.#registry.get(apiVersion, kind)?.definition, mr);
  }

  /** Connects the resource's client and learns where it would reach (its home); a failure when it cannot. */
  async #connect(run: Run, known: Known): Promise<ReconcileResult | undefined> {
    let client: Client;
    try {
      client = await this.#connector.connect(run.provider, run.mr);
    } catch (err) {
      return this.#fail(run, Reason.cannotConnect, wrapErr(Msg.connect, err));
    }
    run.client = client;
    try {
      known.home = client.home ? await client.home(asCreated(run.mr)) : {};
    } catch (err) {
      return this.#fail(run, Reason.cannotConnect, wrapErr(Msg.home, err));
    }
    return undefined;
  }

  async #observe(run: Run, known: Known): Promise<ReconcileResult | undefined> {
    const client = run.client as Client;
    const externalName = run.mr.metadata.annotations?.[Annotations.externalName];
    try {
      run.obs = await this.#external(run.provider.definition.kind, "observe", () =>
        client.observe(run.mr, externalName),
      );
    } catch (err) {
      return this.#fail(run, Reason.cannotObserve, wrapErr(Msg.observe, err));
    }
    known.observation = run.obs;
    return undefined;
  }

  /** Performs one step of a plan; returns the reconcile's result when the step ends it (a failure). */
  async #perform(run: Run, step: Step, known: Known, p: Plan): Promise<ReconcileResult | undefined> {
    const def = run.provider.definition;
    const rethrowConflict = (err: unknown) => {
      if (err instanceof ConflictError) throw err;
    };
    switch (step.do) {
      case "initialize":
        try {
          run.mr = await this.#patchMeta(run.mr, step.patch);
        } catch (err) {
          rethrowConflict(err);
          return this.#fail(run, Reason.cannotUpdateManaged, wrapErr(Msg.initialize, err));
        }
        return undefined;
      case "resolveReferences":
        try {
          const resolved = await resolveReferences(this.#kube, def, run.mr);
          if (resolved) run.mr = await this.#patchSpec(run.mr, resolved);
        } catch (err) {
          rethrowConflict(err);
          return this.#fail(run, Reason.cannotResolveRefs, wrapErr(Msg.resolveReferences, err));
        }
        known.referencesResolved = true;
        return undefined;
      case "recordCreate":
        try {
          run.mr = await this.#recordCreate(run.mr, step.annotations, step.labels);
        } catch (err) {
          return this.#fail(run, Reason.cannotUpdateManaged, toError(err));
        }
        if (step.why === "recovered")
          this.#opts.logger.warn(
            { key: `${def.kind}/${run.mr.metadata.name}` },
            "recovered an interrupted create",
          );
        return undefined;
      case "meta":
        try {
          run.mr = await this.#patchMeta(run.mr, step.patch);
        } catch (err) {
          rethrowConflict(err);
          return step.msg === "addFinalizer"
            ? this.#fail(run, Reason.cannotAddFinalizer, wrapErr(Msg.addFinalizer, err))
            : this.#fail(run, Reason.cannotUpdateManaged, wrapErr(Msg.indexLabel, err));
        }
        return undefined;
      case "markShape":
        known.shape = await this.#markShape(run, step.to);
        return undefined;
      case "publish":
        try {
          await this.#publisher.publish(run.mr, step.details);
        } catch (err) {
          return this.#fail(run, Reason.cannotPublish, wrapErr(Msg.publish, err), step.extra);
        }
        return undefined;
      case "unpublish":
        try {
          await this.#publisher.unpublish(run.mr);
        } catch (err) {
          return this.#fail(run, Reason.cannotUnpublish, wrapErr(Msg.unpublish, err), step.extra);
        }
        return undefined;
      case "removeFinalizer":
        return this.#removeFinalizer(run);
      case "lateInitialize":
        try {
          run.mr = await this.#patchSpec(run.mr, step.forProvider);
        } catch (err) {
          rethrowConflict(err);
          return this.#fail(run, Reason.cannotUpdateManaged, toError(err));
        }
        this.#opts.logger.debug(
          { key: `${def.kind}/${run.mr.metadata.name}`, filled: step.filled },
          "late-initialized",
        );
        return undefined;
      case "create":
        return this.#create(run, step);
      case "update":
        return this.#update(run, step);
      case "delete":
        return this.#delete(run, step.externalName);
      case "event":
        await this.#event(run.mr, step.type, step.reason, step.message);
        return undefined;
      case "status":
        await this.#writeStatus(run, step.conditions, step.atProvider, step.lastExternalUpdate);
        return undefined;
      case "fail":
        return this.#refuse(run, step.failure, p);
    }
  }

  /** A failure the plan decided on: an invalid spec (with backoff), or a block until a person acts. */
  async #refuse(run: Run, failure: Failure, p: Plan): Promise<ReconcileResult> {
    if (failure.kind === "invalidSpec")
      return this.#fail(run, failure.reason, new InvalidSpecError(failure.message), failure.extra);
    await this.#writeStatus(run, [reconcileError(failure.message)]);
    await this.#event(run.mr, "Warning", failure.reason, failure.message);
    return { outcome: "blocked", requeueAfterMs: p.verdict?.pollAfterMs ?? pollInterval(this.#opts, run.mr) };
  }

  async #update(run: Run, step: Extract<Step, { do: "update" }>): Promise<ReconcileResult | undefined> {
    const client = run.client as Client;
    const obs = run.obs as Observation;
    let connectionDetails: Record<string, string> | undefined;
    try {
      const { value: upd, requestIds } = await withRequestIds(() =>
        this.#external(run.provider.definition.kind, "update", () =>
          client.update(
            asSent(this.#context(run.provider), run.mr, "update", {
              observed: obs.observed,
              drift: step.drift,
            }),
            step.externalName,
            obs,
          ),
        ),
      );
      connectionDetails = upd.connectionDetails;
      const recorded = providerAnnotations(upd.annotations);
      if (Object.keys(recorded).length > 0) run.mr = await this.#recordCreate(run.mr, recorded);
      await this.#changeLog(run.mr, "update", step.trigger, step.externalName, requestIds, step.changes);
    } catch (err) {
      const error = wrapErr(Msg.update, err);
      return this.#fail(run, Reason.cannotUpdate, error, [step.ready, updateFailed(error.message)]);
    }
    try {
      await this.#publisher.publish(run.mr, connectionDetails);
    } catch (err) {
      return this.#fail(run, Reason.cannotPublish, wrapErr(Msg.publish, err), [step.ready]);
    }
    return undefined;
  }

  async #delete(run: Run, externalName: string): Promise<ReconcileResult | undefined> {
    const client = run.client as Client;
    try {
      const { requestIds } = await withRequestIds(() =>
        this.#external(run.provider.definition.kind, "delete", () => client.delete(run.mr, externalName)),
      );
      await this.#changeLog(run.mr, "delete", "managed resource deleted", externalName, requestIds);
    } catch (err) {
      if (err instanceof DependentsExistError) {
        // Not a failure: dependents are being deleted too. Say why, and look again soon.
        await this.#writeStatus(run, [deleting(err.message), reconcileSuccess()]);
        return { outcome: "deleting", requeueAfterMs: this.#jitter(DEPENDENTS_REQUEUE_MS) };
      }
      return this.#fail(run, Reason.cannotDelete, wrapErr(Msg.delete, err), [deleting()]);
    }
    return undefined;
  }

  /**
   * Creates the external resource behind the create-pending guard: the intent (and the home) is recorded
   * first, guarded by resourceVersion, so of concurrent workers only one gets past it; then the result.
   */
  async #create(run: Run, step: Extract<Step, { do: "create" }>): Promise<ReconcileResult | undefined> {
    const def = run.provider.definition;
    const client = run.client as Client;
    try {
      run.mr = await this.#patchMeta(run.mr, step.patch);
    } catch (err) {
      if (err instanceof ConflictError) throw err;
      return this.#fail(run, Reason.cannotUpdateManaged, wrapErr(Msg.recordPending, err), [creating()]);
    }
    try {
      await this.#publisher.publish(run.mr, step.details);
    } catch (err) {
      // Nothing was created: say so, so the next reconcile may try again without waiting out the guard.
      await this.#recordCreate(run.mr, { [Annotations.createFailed]: this.#opts.now().toISOString() }).catch(
        () => undefined,
      );
      return this.#fail(run, Reason.cannotPublish, wrapErr(Msg.publish, err), [creating()]);
    }
    let created: Awaited<ReturnType<Client["create"]>>;
    let requestIds: string[] = [];
    try {
      // With spec.initProvider, the create sends it under forProvider; everything after reads forProvider alone.
      const target = asSent(this.#context(run.provider), run.mr, "create");
      ({ value: created, requestIds } = await withRequestIds(() =>
        this.#external(def.kind, "create", () => client.create(target, step.externalName)),
      ));
    } catch (err) {
      try {
        run.mr = await this.#recordCreate(run.mr, {
          [Annotations.createFailed]: this.#opts.now().toISOString(),
        });
      } catch (recordErr) {
        return this.#fail(run, Reason.cannotUpdateManaged, toError(recordErr), [creating()]);
      }
      return this.#fail(run, Reason.cannotCreate, wrapErr(Msg.create, err), [creating()]);
    }
    const annotations: Record<string, string> = {
      ...providerAnnotations(created.annotations),
      [Annotations.createSucceeded]: this.#opts.now().toISOString(),
    };
    const createdName = created.externalName ?? step.externalName;
    let labels: Record<string, string> | undefined;
    if (created.externalName && def.externalName === "providerChosen") {
      annotations[Annotations.externalName] = created.externalName;
      if (step.indexLabel) labels = indexLabelPatch(def, run.mr, created.externalName);
    }
    try {
      run.mr = await this.#recordCreate(run.mr, annotations, labels);
    } catch (err) {
      if (statusOf((err as Error).cause) === 404 && createdName) {
        // The managed resource is gone (its finalizer was removed by hand): nobody will ever delete what we
        // just made, so take it back now rather than leak it.
        await this.#compensate(run.mr, client, createdName);
        return { outcome: "gone" };
      }
      return this.#fail(run, Reason.cannotUpdateManaged, toError(err), [creating()]);
    }
    await this.#changeLog(run.mr, "create", "not found in the cloud", createdName, requestIds);
    await this.#event(run.mr, "Normal", Reason.created, `Created external resource ${createdName ?? ""}`);
    // Deleted while this create was in flight: the deleting worker owns the status now (its "deletion
    // requested" must not be overwritten by Creating), and nothing is published for a resource on its way out.
    if (run.mr.metadata.deletionTimestamp) return undefined;
    try {
      await this.#publisher.publish(run.mr, created.connectionDetails);
    } catch (err) {
      return this.#fail(run, Reason.cannotPublish, wrapErr(Msg.publish, err), [creating()]);
    }
    await this.#writeStatus(run, [creating(), reconcileSuccess()]);
    return undefined;
  }

  /** Deletes a resource created for a managed resource that no longer exists; never throws. */
  async #compensate(mr: ManagedResource, client: Client, externalName: string) {
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

  /**
   * The change log: one structured line per external create, update and delete — the object, what started
   * it, the external name, the cloud's request ids and each field before → after (secret values already
   * redacted) — and the same record as a `ChangeLog` Event on the object, which `driftless describe` shows.
   */
  async #changeLog(
    mr: ManagedResource,
    verb: "create" | "update" | "delete",
    trigger: string,
    externalName: string | undefined,
    requestIds: string[],
    changes?: ChangeRecord["changes"],
  ) {
    const { apiVersion, kind, metadata } = mr;
    const object = {
      apiVersion,
      kind,
      name: metadata.name,
      ...(metadata.namespace ? { namespace: metadata.namespace } : {}),
    };
    const record: ChangeRecord = {
      at: this.#opts.now().toISOString(),
      verb,
      trigger,
      ...(externalName ? { externalName } : {}),
      ...(metadata.generation !== undefined ? { generation: metadata.generation } : {}),
      ...(requestIds.length > 0 ? { requestIds } : {}),
      ...(changes ? { changes } : {}),
    };
    this.#opts.logger.info({ changeLog: true, object, ...record }, "external change");
    await this.#event(mr, "Normal", CHANGE_LOG_REASON, changeRecordMessage(record));
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

  /**
   * Writes create-result annotations (and an update's, the same kind of record); this write matters more than
   * any other, so it is retried.
   */
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

  async #patchMeta(mr: ManagedResource, meta: MetaPatch): Promise<ManagedResource> {
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
  async #removeFinalizer(run: Run): Promise<ReconcileResult | undefined> {
    const finalizers = run.mr.metadata.finalizers ?? [];
    if (!finalizers.includes(MANAGED_FINALIZER)) return undefined;
    try {
      await this.#patchMeta(run.mr, { finalizers: finalizers.filter((f) => f !== MANAGED_FINALIZER) });
      return undefined;
    } catch (err) {
      if (err instanceof ConflictError || statusOf(err) === 404) throw err;
      return this.#fail(run, Reason.cannotRemoveFinalizer, wrapErr(Msg.removeFinalizer, err), [deleting()]);
    }
  }

  /** What a plan of this kind depends on, at this moment. */
  #context(provider: ManagedKindProvider): PlanContext {
    const o = this.#opts;
    return {
      def: provider.definition,
      fields: this.#fieldsOf(provider),
      maps: this.#mapsOf(provider),
      now: o.now(),
      pollIntervalMs: o.pollIntervalMs,
      minPollIntervalMs: o.minPollIntervalMs,
      creationGracePeriodMs: o.creationGracePeriodMs,
      createPendingTimeoutMs: o.createPendingTimeoutMs,
      updateLoopLimit: o.updateLoopLimit,
      defaultTags: o.defaultTags,
      shapeMarkWaitMs: o.shapeMarkWaitMs,
      jitter: (ms) => this.#jitter(ms),
    };
  }

  /** The kind's field behaviours, plus its references' name and selector fields: those never reach the cloud. */
  #fieldsOf(provider: ManagedKindProvider): FieldBehaviours {
    const k = `${provider.definition.apiVersion}/${provider.definition.kind}`;
    let fields = this.#fields.get(k);
    if (!fields) {
      const def = provider.definition;
      const refs = def.references.flatMap((r) =>
        [r.refField, r.selectorField].map((f) => (r.at ? `${r.at}.${f}` : f)),
      );
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
  async #fail(run: Run, reason: Reason, err: Error, extra: NewCondition[] = []): Promise<ReconcileResult> {
    let error = err;
    if (error instanceof CredentialsError || error.cause instanceof CredentialsError) {
      // Whoever must fix credentials needs to know which ProviderConfig holds them.
      const pc = providerConfigOf(run.provider.definition, run.mr);
      this.invalidateProviderConfigs(providerConfigKey(pc));
      if (!error.message.includes(`${pc.type.kind} "`)) {
        error = new CredentialsError(`${error.message} (${pc.type.kind} "${pc.name}")`, { cause: error });
      }
    }
    const requeueAfterMs = await this.#lc.fail(this.#defOf(run.mr), asObject(run.mr), {
      reason,
      error,
      conditions: [...extra, reconcileError(error.message)],
      backoff: errorBackoff(error),
      fields: managedStatusFields(run.mr, this.#atProvider(run), undefined),
    });
    // A wait (a reference not Ready, the cloud's "not yet") is reported in Synced as any failure, but the
    // queue looks again as for a requeue: it never counts toward dead-lettering.
    return { outcome: isWait(error) ? "waiting" : "error", error, requeueAfterMs };
  }

  /** Full jitter in [0.5, 1.5) × base: spreads retries so they never arrive in lockstep. */
  #jitter(ms: number): number {
    return this.#lc.jitter(ms);
  }

  /**
   * Writes status only when it changes (lifecycle.ts): an in-sync reconcile writes nothing. atProvider is
   * replaced whole; by default it is what the cloud showed in this reconcile, if it was observed.
   */
  async #writeStatus(
    run: Run,
    updates: NewCondition[],
    atProvider: Record<string, unknown> | undefined = this.#atProvider(run),
    lastUpdate?: LastExternalUpdate,
  ): Promise<void> {
    const fields = managedStatusFields(run.mr, atProvider, lastUpdate);
    const written = await this.#lc.writeStatus(this.#defOf(run.mr), asObject(run.mr), updates, fields);
    if (written) run.mr = this.#own(written);
  }

  /** What the cloud showed of the resource in this reconcile, if it was observed (else undefined: left as is). */
  #atProvider(run: Run): Record<string, unknown> | undefined {
    return run.obs ? (run.obs.atProvider ?? run.mr.status?.atProvider) : undefined;
  }

  #event(mr: ManagedResource, type: "Normal" | "Warning", reason: string, message: string) {
    return this.#lc.event(asObject(mr), type, reason, message);
  }
}

/** A managed resource as the lifecycle kernel takes any object it writes. */
const asObject = (mr: ManagedResource) => mr as ManagedResource & { [k: string]: unknown };

/** A batch's verdict from a plan, or undefined while the plan only waits for `next` to go on. */
function batchVerdict(p: Plan, next?: "connection" | "observation"): BatchVerdict | undefined {
  const first = p.steps[0];
  if (first) return { inSync: false, why: whyOf(first) };
  if (p.verdict)
    return p.verdict.requeueAfterMs === undefined
      ? { inSync: true }
      : { inSync: false, why: p.verdict.outcome };
  if (p.next === next) return undefined;
  // The mark of the shape is read only before an index label is written.
  return { inSync: false, why: p.next === "shapeMark" ? "index label to write" : `needs ${p.next}` };
}

const noName: BatchVerdict = { inSync: false, why: "no external name yet" };

/** Why a full reconcile is needed, in a log field's words: the first thing it would do. */
function whyOf(step: Step): string {
  switch (step.do) {
    case "initialize":
      return "no external name yet";
    case "resolveReferences":
      return "references to resolve";
    case "recordCreate":
      return step.why === "found" ? "external name" : "a create is pending";
    case "meta":
      if (step.patch.finalizers) return "no finalizer yet";
      return step.patch.labels ? "index label to write" : "home to record";
    case "publish":
      return "connection Secret to publish";
    case "lateInitialize":
      return "fields to late-initialize";
    case "create":
      return "not found in the cloud";
    case "update":
      return "drift";
    case "status":
      return step.why;
    case "fail":
      return step.failure.reason;
    default:
      return step.do;
  }
}

const isThrottled = (err: Error) => err instanceof ThrottledError || err.cause instanceof ThrottledError;
const asThrottled = (err: Error): ThrottledError =>
  err instanceof ThrottledError ? err : (err.cause as ThrottledError);
const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));
const toError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** A provider's create annotations, without any in crossplane.io/: those are the engine's alone. */
function providerAnnotations(a: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(a ?? {}).filter(([k]) => !k.startsWith("crossplane.io/")));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
