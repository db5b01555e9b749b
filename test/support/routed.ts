// The managed engine or the claim reconciler behind a router of its own, for tests and the bench that
// reconcile one kind alone: every reconcile goes through the worker's Router (shared/worker/core.ts), the
// one way to run a reconcile, so a 409 is settled and the "reconciled" line written as in production.
import {
  ClaimBinder,
  type ClaimKey,
  type ClaimReconcilerOptions,
  type ClaimResult,
} from "../../shared/claims/reconciler.ts";
import type { Kube } from "../../shared/kube/client.ts";
import type { ReconcileResult, Reconciles, ResourceKey } from "../../shared/reconciler/contract.ts";
import { ManagedReconciler, type ReconcilerOptions } from "../../shared/reconciler/reconciler.ts";
import type { KindRegistry } from "../../shared/reconciler/registry.ts";
import { Router } from "../../shared/worker/core.ts";

/** The managed engine behind a router of its own (its checkMany, stats and options stay reachable). */
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

/** The claim reconciler behind a router of its own. */
export class ClaimReconciler extends ClaimBinder {
  readonly #router: Router;

  constructor(kube: Kube, opts: ClaimReconcilerOptions = {}) {
    super(kube, opts);
    const claims: Reconciles = { handles: () => true, reconcile: (key) => super.reconcile(key) };
    this.#router = new Router([claims], {
      ...(opts.logger ? { logger: opts.logger } : {}),
      ...(opts.random ? { random: opts.random } : {}),
    });
  }

  override reconcile(key: ClaimKey): Promise<ClaimResult> {
    return this.#router.reconcile(key) as Promise<ClaimResult>;
  }
}
