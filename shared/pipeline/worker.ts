// The worker: wires the reconcilers once behind the one router (createWorker, for `driftless run` and
// the serverless functions alike), turns a received message into the worker core's work item
// (reconciler/router.ts), serves the memory queue, and notes dead letters on their resources.
import type { ManagedKindProvider, ProviderConfigKind } from "../api/external.ts";
import type { ManagedResource } from "../api/managed.ts";
import { apiVersionOf, type ResourceType } from "../api/meta.ts";
import { claimTypes } from "../claims/kinds.ts";
import { ClaimBinder } from "../claims/reconciler.ts";
import { CloudEventResolver } from "../cloud-events/resolve.ts";
import { CLAIMS_FIELD_MANAGER, Kube } from "../kube/client.ts";
import { KubeEventRecorder } from "../kube/events.ts";
import type {
  HandlerOutcome,
  MessageHandler,
  QueueProducer,
  ReceivedMessage,
  ReconcileMessage,
} from "../queue/index.ts";
import { type BatchCheckFn, batchChecker } from "../reconciler/batch.ts";
import type {
  EventRecorder,
  ReconcileFn,
  ReconcileLogger,
  ReconcileMetrics,
  ReconcileResult,
  Reconciles,
  ResourceKey,
} from "../reconciler/contract.ts";
import { ProviderConfigReconciler } from "../reconciler/provider-config.ts";
import type { RateLimit } from "../reconciler/rate-limit.ts";
import { ManagedReconciler } from "../reconciler/reconciler.ts";
import { KindRegistry } from "../reconciler/registry.ts";
import {
  contextLogger,
  outcomeOf,
  type ReconcileContext,
  Router,
  reconcileMessage,
  type WorkItem,
} from "../reconciler/router.ts";

export {
  contextLogger,
  currentReconcileContext,
  queueAgeMs,
  type ReconcileContext,
  withReconcileContext,
} from "../reconciler/router.ts";

export const keyOfMessage = (m: ReconcileMessage): ResourceKey => ({
  apiVersion: m.apiVersion,
  kind: m.kind,
  name: m.name,
  ...(m.namespace ? { namespace: m.namespace } : {}),
});

/** The context of a received message: its reason and correlation id (message.id, else the queue's id). */
export const contextOf = (
  received: Pick<ReceivedMessage, "message" | "id" | "receiveCount">,
): ReconcileContext => ({
  reason: received.message.reason,
  correlationId: received.message.id ?? received.id,
  receiveCount: received.receiveCount,
});

/** A received message as the worker core's work item: its key, context and enqueue time. */
export const workOf = (received: Pick<ReceivedMessage, "message" | "id" | "receiveCount">): WorkItem => {
  const m = received.message;
  return {
    key: keyOfMessage(m),
    ...(m.batch
      ? { batch: { apiVersion: m.apiVersion, kind: m.kind, ...(m.id ? { id: m.id } : {}), batch: m.batch } }
      : {}),
    context: contextOf(received),
    at: m.at,
    ...(m.admitted ? { admitted: m.admitted } : {}),
  };
};

export interface WorkerSetup {
  kube: Kube;
  /** The managed kinds this worker serves (a function's: one cloud's, so its bundle carries one SDK). */
  kinds: readonly ManagedKindProvider[];
  providerConfigKinds: readonly ProviderConfigKind[];
  logger: ReconcileLogger;
  pollIntervalMs?: number | undefined;
  /** The least interval `crossplane.io/poll-interval` may set (DRIFTLESS_MIN_POLL_INTERVAL). */
  minPollIntervalMs?: number | undefined;
  /** Namespaces a managed resource may read Secrets from besides its connection Secret's (see Reconciler). */
  secretRefNamespaces?: readonly string[] | undefined;
  /** Namespaces whose namespaced ProviderConfigs may use InjectedIdentity (shared/reconciler/tenancy.ts). */
  ambientIdentityNamespaces?: readonly string[] | undefined;
  /**
   * Also serve claims and classes (claims.driftless.dev, classes.driftless.dev). Claims are
   * cloud-neutral: any cloud's worker can bind them (it only writes Kubernetes objects); the managed
   * resources it makes go to the workers of their cloud.
   */
  claims?: boolean | undefined;
  /** Reconciles (every kind) and cloud calls. */
  metrics?: ReconcileMetrics | undefined;
  /** Default: Kubernetes Events through `kube`. */
  events?: EventRecorder | undefined;
  /** Per-ProviderConfig cloud-call limit (reconciler/rate-limit.ts); false: none (benchmarks). */
  rateLimit?: RateLimit | false | undefined;
  /** Identities whose cloud calls are driftless's own (their audit events are dropped): docs/cloud-events.md. */
  ownPrincipals?: readonly string[] | undefined;
}

export interface Worker {
  /** The one router over the ProviderConfig reconciler, the claim reconciler and the managed engine. */
  router: Router;
  /** The router's reconcile as a function: what the queue adapters take. */
  reconcile: ReconcileFn;
  engine: ManagedReconciler;
  /** Every kind this worker serves: what its forwarder watches and its sweep lists. */
  types: ResourceType[];
  /** The batched drift check of the sweep's batch messages, its follow-ups sent through `producer`. */
  checkBatch(producer: QueueProducer): BatchCheckFn;
  /** The stored resourceVersion of a key (one GET), for doorbell messages (router.ts admittedWritePending). */
  storedVersion(key: ResourceKey): Promise<string | undefined>;
  /** Cloud audit events → the keys of this worker's kinds they name (one label-selected LIST per kind). */
  cloudEvents: CloudEventResolver;
}

/**
 * The reconcilers, wired once: the ProviderConfig reconciler, (with `claims`) the claim reconciler and
 * the managed engine behind one router, writing Kubernetes Events. Log lines carry the reason and
 * correlation id of the message being reconciled.
 */
export function createWorker(setup: WorkerSetup): Worker {
  const registry = new KindRegistry(setup.kinds);
  const logger = contextLogger(setup.logger);
  const events = setup.events ?? new KubeEventRecorder(setup.kube);
  const poll = setup.pollIntervalMs ? { pollIntervalMs: setup.pollIntervalMs } : {};
  const tenancy = { ambientIdentityNamespaces: setup.ambientIdentityNamespaces ?? [] };
  const engine = new ManagedReconciler(setup.kube, registry, {
    logger,
    events,
    ...poll,
    ...(setup.minPollIntervalMs !== undefined ? { minPollIntervalMs: setup.minPollIntervalMs } : {}),
    ...(setup.metrics ? { metrics: setup.metrics } : {}),
    ...(setup.secretRefNamespaces ? { secretRefNamespaces: setup.secretRefNamespaces } : {}),
    ...(setup.rateLimit !== undefined ? { rateLimit: setup.rateLimit } : {}),
    tenancy,
  });
  const providerConfigs = new ProviderConfigReconciler(setup.kube, registry, [...setup.providerConfigKinds], {
    tenancy,
  });
  // The binder's writes make and change managed resources: under their own field manager, they ring the
  // doorbell (the engine's own writes do not: shared/doorbell/admission.ts).
  const claimsKube = setup.kube.fieldManager
    ? new Kube(setup.kube, { fieldManager: CLAIMS_FIELD_MANAGER })
    : setup.kube;
  const claims = setup.claims ? new ClaimBinder(claimsKube, { logger, events, ...poll }) : undefined;
  const router = new Router([providerConfigs, ...(claims ? [claims] : []), engine], {
    logger,
    ...(setup.metrics ? { metrics: setup.metrics } : {}),
  });
  const types = typesOf(setup.kinds, setup.providerConfigKinds, { claims: setup.claims ?? false });
  return {
    router,
    reconcile: router.reconcileFn,
    engine,
    types,
    checkBatch: (producer) =>
      batchChecker(
        { kube: setup.kube, engine, reconcile: router.reconcileFn, logger, metrics: setup.metrics },
        producer,
      ),
    storedVersion: storedVersionOf(setup.kube, types),
    cloudEvents: new CloudEventResolver({
      kube: setup.kube,
      kinds: setup.kinds,
      logger,
      ownPrincipals: setup.ownPrincipals,
    }),
  };
}

/** Reads a key's stored resourceVersion; undefined when the object does not exist. Throws on other errors. */
export function storedVersionOf(
  kube: Kube,
  types: readonly ResourceType[],
): (key: ResourceKey) => Promise<string | undefined> {
  return async (key) => {
    const type = types.find((t) => apiVersionOf(t) === key.apiVersion && t.kind === key.kind);
    // A kind this worker does not serve: nothing to wait for (its reconcile reports it).
    if (!type) return "";
    const obj = await kube.get(type, key.name, type.namespaced ? key.namespace : undefined);
    return obj?.metadata.resourceVersion;
  };
}

/**
 * Every kind a forwarder or sweep of this deployment watches: the managed kinds and their ProviderConfigs,
 * and with `claims` the claim and class kinds (what createWorker serves with the same option).
 */
export function typesOf(
  kinds: readonly Pick<ManagedKindProvider, "definition">[],
  providerConfigKinds: readonly Pick<ProviderConfigKind, "type">[],
  opts: { claims?: boolean } = {},
): ResourceType[] {
  return [
    ...kinds.map((k) => k.definition),
    ...providerConfigKinds.map((k) => k.type),
    ...(opts.claims ? claimTypes() : []),
  ];
}

export interface HandlerDeps {
  /** The router's reconcile (Worker.reconcile). */
  reconcile: ReconcileFn;
  /** The batched drift check (Worker.checkBatch); without it batch messages are reconciled key by key. */
  checkBatch?: BatchCheckFn | undefined;
  /** Worker.storedVersion: doorbell messages wait for the write they report (router.ts). */
  storedVersion?: ((key: ResourceKey) => Promise<string | undefined>) | undefined;
  /** Queue age of each message (the router reports the reconciles; the rest of the hook is not read here). */
  metrics?: (Partial<ReconcileMetrics> & { queueAge?(ageMs: number): void }) | undefined;
  /**
   * For queues whose redrive policy dead-letters a message after `maxReceiveCount` receives (SQS): a
   * failed reconcile on the last receive is noted on the resource. The memory queue reports its dead
   * letters itself (run.ts).
   */
  deadLetter?: { maxReceiveCount: number; note: DeadLetterNote } | undefined;
}

/** The older form of HandlerDeps: reconcilers handed over one by one (the engine last), routed here. */
export interface Workers extends Omit<HandlerDeps, "reconcile"> {
  reconciler: Reconciles;
  providerConfigs?: Reconciles;
  claims?: Reconciles;
}

const routerOf = (w: Workers) =>
  new Router([
    ...(w.claims ? [w.claims] : []),
    ...(w.providerConfigs ? [w.providerConfigs] : []),
    w.reconciler,
  ]);

/** The older call form: one key over reconcilers handed over one by one (createWorker's router is the new). */
export function reconcileKey(w: Workers, key: ResourceKey): Promise<ReconcileResult> {
  return routerOf(w).reconcile(key);
}

/** The queue-consumer side of a worker: one message → the worker core → what the queue should do. */
export function reconcileHandler(w: HandlerDeps | Workers): MessageHandler {
  const reconcile = "reconcile" in w ? w.reconcile : routerOf(w).reconcileFn;
  const opts = {
    ...(w.metrics ? { metrics: w.metrics } : {}),
    ...("checkBatch" in w && w.checkBatch ? { checkBatch: w.checkBatch } : {}),
    ...("storedVersion" in w && w.storedVersion ? { storedVersion: w.storedVersion } : {}),
  };
  return async (received): Promise<HandlerOutcome> => {
    const outcome = outcomeOf(await reconcileMessage(reconcile, workOf(received), opts));
    if (outcome.kind === "retry" && w.deadLetter && received.receiveCount >= w.deadLetter.maxReceiveCount)
      await w.deadLetter.note(keyOfMessage(received.message), received.receiveCount, outcome.error);
    return outcome;
  };
}

export const DEAD_LETTER_EVENT_REASON = "MessageDeadLettered";

/** Notes on a resource that its message was dead-lettered. Never throws. */
export type DeadLetterNote = (key: ResourceKey, attempts: number, error: Error) => Promise<void>;

/** The operator-facing text of a dead-letter note (Warning Event on the resource). */
export const deadLetterText = (attempts: number, error: Error) =>
  `message dead-lettered after ${attempts} attempts; the drift sweep retries within the poll interval. Last error: ${error.message}`;

/**
 * A dead-lettered message is otherwise visible only in the queue's logs and metrics: tell whoever looks
 * at the resource (kubectl describe) with a Warning Event. The queue adapters log the dead letter itself.
 */
export function deadLetterNote(deps: {
  kube: Kube;
  /** Every kind the worker serves (managed kinds, ProviderConfigs, claims). */
  types: readonly ResourceType[];
  events: EventRecorder;
  logger: ReconcileLogger;
}): DeadLetterNote {
  return async (key, attempts, error) => {
    const log = {
      key: `${key.kind}/${key.name}`,
      apiVersion: key.apiVersion,
      attempts,
      error: error.message,
    };
    const type = deps.types.find((t) => apiVersionOf(t) === key.apiVersion && t.kind === key.kind);
    if (!type) return;
    try {
      const obj = await deps.kube.get<ManagedResource & { [k: string]: unknown }>(
        type,
        key.name,
        key.namespace,
      );
      if (!obj) return;
      await deps.events.record(obj, "Warning", DEAD_LETTER_EVENT_REASON, deadLetterText(attempts, error));
      deps.logger.debug(log, "dead letter noted on the resource");
    } catch (err) {
      deps.logger.warn(
        { ...log, noteError: (err as Error).message },
        "cannot note the dead letter on the resource",
      );
    }
  };
}
