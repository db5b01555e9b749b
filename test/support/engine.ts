// One engine under test: the real Reconciler over the in-memory API server and the fake cloud, with a
// clock the test moves and every event kept. Rows of the engine table build one of these each.
import type { ManagedResource } from "../../shared/api/managed.ts";
import { providerConfigType } from "../../shared/api/managed.ts";
import { Annotations, MANAGED_FINALIZER } from "../../shared/api/meta.ts";
import type { ReconcileResult, ReconcilerOptions, ResourceKey } from "../../shared/reconciler/reconciler.ts";
import { KindRegistry } from "../../shared/reconciler/registry.ts";
import { FakeCloud, gate, parentType, type Widget, widgetKind } from "./fake-cloud.ts";
import { MemoryApiServer } from "./memory-apiserver.ts";
import { captureLogger } from "./reconcile.ts";
import { Reconciler } from "./routed.ts";

export interface RecordedEvent {
  name: string;
  type: string;
  reason: string;
  message: string;
}

export interface EngineOptions {
  kind?: Parameters<typeof widgetKind>[0];
  /** Make the kind list-capable: observeMany answers up to this many resources per call. */
  observeManyMaxItems?: number;
  reconciler?: ReconcilerOptions;
}

export function engine(opts: EngineOptions = {}) {
  const api = new MemoryApiServer();
  const kube = api.kube();
  const cloud = new FakeCloud();
  const def = widgetKind(opts.kind);
  const events: RecordedEvent[] = [];
  const log = captureLogger();
  let clock = new Date("2026-01-01T00:00:00.000Z");
  const pcType = providerConfigType("aws");
  api.seed(pcType, {
    apiVersion: `${pcType.group}/${pcType.version}`,
    kind: "ProviderConfig",
    metadata: { name: "default" },
    spec: { region: "eu-west-1" },
  });
  const newReconciler = () =>
    new Reconciler(
      kube,
      new KindRegistry([
        cloud.provider(
          def,
          opts.observeManyMaxItems ? { observeManyMaxItems: opts.observeManyMaxItems } : {},
        ),
      ]),
      {
        now: () => clock,
        random: () => 0.5,
        rateLimit: false,
        retryBaseMs: 0,
        throttleBackoffMs: 0,
        logger: log.logger,
        events: {
          async record(mr, type, reason, message) {
            events.push({ name: mr.metadata.name, type, reason, message });
          },
        },
        ...opts.reconciler,
      },
    );
  const reconciler = newReconciler();
  const key = (name: string): ResourceKey => ({ apiVersion: def.apiVersion, kind: def.kind, name });

  return {
    api,
    kube,
    cloud,
    def,
    events,
    logs: log.lines,
    reconciler,
    /** A second worker on the same API server and cloud (another Lambda container). */
    newReconciler,
    key,
    now: () => clock,
    advance(ms: number) {
      clock = new Date(clock.getTime() + ms);
    },
    /** Creates a managed resource as `kubectl apply` would. */
    apply(
      name: string,
      forProvider: Partial<Widget>,
      extra: {
        annotations?: Record<string, string>;
        spec?: Record<string, unknown>;
        finalizers?: string[];
        ownerReferences?: unknown[];
        labels?: Record<string, string>;
      } = {},
    ): ManagedResource {
      return api.seed(def, {
        apiVersion: def.apiVersion,
        kind: def.kind,
        metadata: {
          name,
          ...(extra.annotations ? { annotations: extra.annotations } : {}),
          ...(extra.finalizers ? { finalizers: extra.finalizers } : {}),
          ...(extra.ownerReferences ? { ownerReferences: extra.ownerReferences } : {}),
          ...(extra.labels ? { labels: extra.labels } : {}),
        },
        spec: { forProvider: { region: "eu-west-1", ...forProvider }, ...(extra.spec ?? {}) },
      }) as unknown as ManagedResource;
    },
    /** A Ready target for references, with an external name. */
    parent(
      name: string,
      externalName: string,
      extra: { ready?: boolean; ownerReferences?: unknown[]; labels?: Record<string, string> } = {},
    ) {
      const t = parentType();
      api.seed(t, {
        apiVersion: t.apiVersion,
        kind: t.kind,
        metadata: {
          name,
          annotations: { [Annotations.externalName]: externalName },
          ...(extra.ownerReferences ? { ownerReferences: extra.ownerReferences } : {}),
          ...(extra.labels ? { labels: extra.labels } : {}),
        },
        spec: {},
      });
      if (extra.ready !== false)
        api.mutate(t, name, (o) => {
          o.status = {
            conditions: [
              { type: "Ready", status: "True", reason: "Available", lastTransitionTime: clock.toISOString() },
            ],
          };
        });
    },
    get(name: string): ManagedResource | undefined {
      return api.get<ManagedResource>(def, name);
    },
    condition(name: string, type: "Ready" | "Synced" | "UpToDate") {
      return api.get<ManagedResource>(def, name)?.status?.conditions?.find((c) => c.type === type);
    },
    async delete(name: string) {
      await kube.delete(def, name);
    },
    reconcile(name: string, r: Reconciler = reconciler): Promise<ReconcileResult> {
      return r.reconcile(key(name));
    },
    /** Reconciles until nothing is requeued (moving the clock by each requeue) or `max` rounds. */
    async settle(name: string, max = 20, r: Reconciler = reconciler): Promise<ReconcileResult[]> {
      const out: ReconcileResult[] = [];
      for (let i = 0; i < max; i++) {
        const res = await r.reconcile(key(name));
        out.push(res);
        if (res.outcome === "gone" || res.requeueAfterMs === undefined) break;
        clock = new Date(clock.getTime() + res.requeueAfterMs);
      }
      return out;
    },
    /**
     * Starts a reconcile whose create is held in flight: "before" it reaches the cloud, or "after" it did
     * but before it returns. Resolves once the create has started; `release` lets it finish.
     */
    async createInFlight(name: string, where: "before" | "after" = "before", r: Reconciler = reconciler) {
      const hold = gate();
      const started = gate();
      if (where === "before") cloud.holdCreate = hold.opened;
      else cloud.holdCreateResult = hold.opened;
      cloud.onCreateStarted = started.open;
      const result = r.reconcile(key(name));
      await started.opened;
      await new Promise((done) => setImmediate(done));
      return { result, release: hold.open };
    },
    hasFinalizer(name: string) {
      return (api.get<ManagedResource>(def, name)?.metadata.finalizers ?? []).includes(MANAGED_FINALIZER);
    },
    reasons(name?: string) {
      return events.filter((e) => !name || e.name === name).map((e) => e.reason);
    },
  };
}

export type Engine = ReturnType<typeof engine>;
