// The worker, wired once: the reconcilers behind the one router (createWorker, for `driftless run` and
// the serverless functions alike), with the batch check, the doorbell's stored-version read and the
// cloud-event resolver the queue adapters hand messages to.
import type { ManagedKindProvider, ProviderConfigKind } from "../api/external.ts";
import { apiVersionOf, type ResourceType } from "../api/meta.ts";
import { usageTypes } from "../api/protection/usage.ts";
import { claimTypes } from "../claims/kinds.ts";
import { ClaimBinder } from "../claims/reconciler.ts";
import { CloudEventResolver } from "../cloud-events/resolve.ts";
import { CLAIMS_FIELD_MANAGER, Kube } from "../kube/client.ts";
import { KubeEventRecorder } from "../kube/events.ts";
import type { QueueProducer } from "../queue/index.ts";
import type {
  EventRecorder,
  ReconcileFn,
  ReconcileLogger,
  ReconcileMetrics,
  ResourceKey,
} from "../reconciler/contract.ts";
import { type KnownUsers, ProviderConfigReconciler } from "../reconciler/provider-config.ts";
import type { RateLimit } from "../reconciler/rate-limit.ts";
import { ManagedReconciler } from "../reconciler/reconciler.ts";
import { KindRegistry } from "../reconciler/registry.ts";
import { UsageReconciler } from "../usages/reconciler.ts";
import { type BatchCheckFn, batchChecker } from "./batch.ts";
import { contextLogger } from "./context.ts";
import { Router } from "./core.ts";

export interface WorkerSetup {
  kube: Kube;
  /** The managed kinds this worker serves (a function's: one cloud's, so its bundle carries one SDK). */
  kinds: readonly ManagedKindProvider[];
  providerConfigKinds: readonly ProviderConfigKind[];
  logger: ReconcileLogger;
  pollIntervalMs?: number | undefined;
  /** The least interval `crossplane.io/poll-interval` may set (DRIFTLESS_MIN_POLL_INTERVAL). */
  minPollIntervalMs?: number | undefined;
  /** Leave Crossplane's default tags off (DRIFTLESS_SKIP_DEFAULT_TAGS). */
  skipDefaultTags?: boolean | undefined;
  /** Namespaces a managed resource may read Secrets from besides its connection Secret's (see Reconciler). */
  secretRefNamespaces?: readonly string[] | undefined;
  /** Namespaces whose namespaced ProviderConfigs may use InjectedIdentity (shared/reconciler/tenancy.ts). */
  ambientIdentityNamespaces?: readonly string[] | undefined;
  /** ProviderConfig users the process already knows from its watches (`driftless run`); else each kind is listed. */
  knownUsers?: KnownUsers | undefined;
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
  /** Processes of the deployment sharing that limit: each takes its share (reconciler/rate-limit.ts). */
  rateLimitInstances?: number | undefined;
  /** Identities whose cloud calls are driftless's own (their audit events are dropped): docs/cloud-events.md. */
  ownPrincipals?: readonly string[] | undefined;
}

export interface Worker {
  /** The one router over the ProviderConfig, claim and Usage reconcilers and the managed engine. */
  router: Router;
  /** The router's reconcile as a function: what the queue adapters take. */
  reconcile: ReconcileFn;
  engine: ManagedReconciler;
  /** Every kind this worker serves: what its forwarder watches and its sweep lists. */
  types: ResourceType[];
  /** The batched drift check of the sweep's batch messages, its follow-ups sent through `producer`. */
  checkBatch(producer: QueueProducer): BatchCheckFn;
  /** The stored resourceVersion of a key (one GET), for doorbell messages (admission.ts). */
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
    ...(setup.skipDefaultTags ? { defaultTags: false } : {}),
    ...(setup.metrics ? { metrics: setup.metrics } : {}),
    ...(setup.secretRefNamespaces ? { secretRefNamespaces: setup.secretRefNamespaces } : {}),
    ...(setup.rateLimit !== undefined ? { rateLimit: setup.rateLimit } : {}),
    ...(setup.rateLimitInstances !== undefined ? { rateLimitInstances: setup.rateLimitInstances } : {}),
    tenancy,
  });
  const providerConfigs = new ProviderConfigReconciler(setup.kube, registry, [...setup.providerConfigKinds], {
    tenancy,
    ...(setup.knownUsers ? { knownUsers: setup.knownUsers } : {}),
  });
  // The binder's writes make and change managed resources: under their own field manager, they ring the
  // doorbell (the engine's own writes do not: shared/doorbell/admission.ts).
  const claimsKube = setup.kube.fieldManager
    ? new Kube(setup.kube, { fieldManager: CLAIMS_FIELD_MANAGER })
    : setup.kube;
  const claims = setup.claims ? new ClaimBinder(claimsKube, { logger, events, ...poll }) : undefined;
  const types = typesOf(setup.kinds, setup.providerConfigKinds, { claims: setup.claims ?? false });
  // Usages may name any kind this worker serves (managed resources, claims, ProviderConfigs).
  const usages = new UsageReconciler(
    setup.kube,
    (apiVersion, kind) => types.find((t) => apiVersionOf(t) === apiVersion && t.kind === kind),
    { logger, events },
  );
  const router = new Router([providerConfigs, ...(claims ? [claims] : []), usages, engine], {
    logger,
    ...(setup.metrics ? { metrics: setup.metrics } : {}),
  });
  return {
    router,
    reconcile: router.reconcile,
    engine,
    types,
    checkBatch: (producer) =>
      batchChecker(
        { kube: setup.kube, engine, reconcile: router.reconcile, logger, metrics: setup.metrics },
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
 * Usages, and with `claims` the claim and class kinds (what createWorker serves with the same option).
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
    ...usageTypes(),
  ];
}
