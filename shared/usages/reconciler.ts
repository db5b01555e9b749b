// The Usage reconciler (Usage and ClusterUsage, protection.crossplane.io): what Crossplane's usage controller
// does, on driftless's one lifecycle. It resolves selectors into names, labels the used resource
// `crossplane.io/in-use`, binds the Usage to its user (an ownerReference, so the garbage collector — or this
// reconciler, where none runs — removes it once the user is gone), and reports Ready. The protection itself
// is the managed engine's: a resource held by a Usage keeps its external resource and finalizer
// (shared/reconciler/usages.ts), with the doorbell's in-use guard (doorbell/in-use.ts) refusing the DELETE
// first where it is registered.
import type { ObjectMeta, ResourceType } from "../api/meta.ts";
import {
  ClusterUsageType,
  DELETION_ATTEMPT_ANNOTATION,
  IN_USE_LABEL,
  USAGE_DETAILS_ANNOTATION,
  USAGE_FINALIZER,
  type UsageObject,
  UsageType,
  usageText,
} from "../api/protection/usage.ts";
import type { Kube, KubeObject } from "../kube/client.ts";
import {
  type EventRecorder,
  type NewCondition,
  noopLogger,
  type ReconcileLogger,
  type ReconcileResult,
  type Reconciles,
  type ResourceKey,
} from "../reconciler/contract.ts";
import { Lifecycle, WAITING_BACKOFF } from "../reconciler/lifecycle.ts";
import { holds, type TypeLookup, usagesOf } from "../reconciler/usages.ts";

export const UsageMsg = {
  unknownKind: "driftless does not serve this kind",
  notFound: "the used resource does not exist",
  selectorNone: "no resource matches the selector",
  selectorMany: "more than one resource matches the selector",
} as const;

/** Looked at again while it waits for what it names (a resource not created yet). */
const WAIT_MS = 10_000;

type Obj = KubeObject & { apiVersion: string; kind: string; metadata: ObjectMeta };

export interface UsageReconcilerOptions {
  logger?: ReconcileLogger;
  events?: EventRecorder;
  now?: () => Date;
  random?: () => number;
}

export class UsageReconciler implements Reconciles {
  readonly #kube: Kube;
  readonly #typeOf: TypeLookup;
  readonly #lc: Lifecycle;
  readonly #logger: ReconcileLogger;

  /** `typeOf`: the kinds a Usage may name (the managed kinds this process serves, claims …). */
  constructor(kube: Kube, typeOf: TypeLookup, opts: UsageReconcilerOptions = {}) {
    this.#kube = kube;
    this.#typeOf = typeOf;
    this.#logger = opts.logger ?? noopLogger;
    this.#lc = new Lifecycle(kube, {
      logger: this.#logger,
      ...(opts.events ? { events: opts.events } : {}),
      ...(opts.now ? { now: opts.now } : {}),
      ...(opts.random ? { random: opts.random } : {}),
    });
  }

  handles(apiVersion: string, kind: string): boolean {
    return [UsageType, ClusterUsageType].some(
      (t) => `${t.group}/${t.version}` === apiVersion && t.kind === kind,
    );
  }

  async reconcile(key: ResourceKey): Promise<ReconcileResult> {
    const t = key.kind === ClusterUsageType.kind ? ClusterUsageType : UsageType;
    let u = await this.#lc.read<UsageObject>(t, key);
    if (!u) return { outcome: "gone" };
    if (u.metadata.deletionTimestamp) return this.#release(t, u);

    if (!this.#typeOf(u.spec.of?.apiVersion ?? "", u.spec.of?.kind ?? "")) {
      // Another deployment's kind (each cloud's functions serve their own): that worker reports on it.
      this.#logger.debug({ key: `${u.kind}/${u.metadata.name}` }, UsageMsg.unknownKind);
      return { outcome: "blocked" };
    }
    u = await this.#lc.addFinalizer(t, u, USAGE_FINALIZER);
    const of = await this.#resolve(t, u, "of");
    if ("waiting" in of) return this.#wait(t, u, of.waiting);
    u = of.usage ?? u;
    const by = u.spec.by ? await this.#resolve(t, u, "by") : undefined;
    if (by && "waiting" in by) {
      // A user that was bound and is gone: the Usage has done its work (what the garbage collector does).
      if (!(await holds(this.#kube, this.#typeOf, u))) {
        await this.#kube.delete(t, u.metadata.name, u.metadata.namespace);
        return { outcome: "released" };
      }
      return this.#wait(t, u, by.waiting);
    }
    u = by?.usage ?? u;
    // The used resource carries the in-use label (Crossplane's webhook selects on it; `kubectl get -l` too).
    if (of.obj.metadata.labels?.[IN_USE_LABEL] !== "true") {
      await this.#kube.patch(
        of.type,
        of.obj.metadata.name,
        { metadata: { labels: { [IN_USE_LABEL]: "true" } } },
        {
          ...(of.obj.metadata.namespace ? { namespace: of.obj.metadata.namespace } : {}),
        },
      );
    }
    const meta: Record<string, unknown> = {};
    const details = usageText(u);
    if (u.metadata.annotations?.[USAGE_DETAILS_ANNOTATION] !== details)
      meta.annotations = { [USAGE_DETAILS_ANNOTATION]: details };
    if (by && !(u.metadata.ownerReferences ?? []).some((o) => o.uid === by.obj.metadata.uid)) {
      meta.ownerReferences = [
        ...(u.metadata.ownerReferences ?? []),
        {
          apiVersion: by.obj.apiVersion,
          kind: by.obj.kind,
          name: by.obj.metadata.name,
          uid: by.obj.metadata.uid ?? "",
        },
      ];
    }
    if (Object.keys(meta).length > 0) {
      u = await this.#kube.patch<UsageObject>(
        t,
        u.metadata.name,
        { metadata: meta },
        {
          resourceVersion: u.metadata.resourceVersion ?? "",
          ...(u.metadata.namespace ? { namespace: u.metadata.namespace } : {}),
        },
      );
    }
    const what = `${of.obj.kind}/${of.obj.metadata.name}`;
    await this.#lc.writeStatus(t, u, [
      {
        type: "Ready",
        status: "True",
        reason: "Available",
        message: `${what} is in use: it is not deleted while this Usage holds it`,
      },
    ]);
    return { outcome: "ready" };
  }

  /**
   * The object `spec.of` or `spec.by` names, its selector resolved into `resourceRef` (written back, as
   * Crossplane does, so the choice never changes), or why it is not there yet.
   */
  async #resolve(
    t: ResourceType,
    u: UsageObject,
    which: "of" | "by",
  ): Promise<{ obj: Obj; type: ResourceType; usage?: UsageObject } | { waiting: string }> {
    const r = u.spec[which] as NonNullable<UsageObject["spec"]["by"]> & {
      resourceRef?: { name: string; namespace?: string };
      resourceSelector?: { matchLabels?: Record<string, string>; namespace?: string };
    };
    const type = r.apiVersion && r.kind ? this.#typeOf(r.apiVersion, r.kind) : undefined;
    if (!type)
      return { waiting: `${UsageMsg.unknownKind}: spec.${which} ${r.apiVersion ?? ""} ${r.kind ?? ""}` };
    const ns = type.namespaced
      ? (r.resourceRef?.namespace ?? r.resourceSelector?.namespace ?? u.metadata.namespace)
      : undefined;
    if (r.resourceRef) {
      const obj = await this.#kube.get<Obj>(type, r.resourceRef.name, ns);
      return obj
        ? { obj, type }
        : { waiting: `${UsageMsg.notFound}: spec.${which} ${r.kind}/${r.resourceRef.name}` };
    }
    const selector = Object.entries(r.resourceSelector?.matchLabels ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
    const page = await this.#kube.list<Obj>(type, {
      ...(selector ? { labelSelector: selector } : {}),
      ...(ns ? { namespace: ns } : {}),
      limit: 2,
    });
    const [obj, second] = page.items;
    if (!obj) return { waiting: `${UsageMsg.selectorNone}: spec.${which} ${r.kind} ${selector}` };
    if (second) return { waiting: `${UsageMsg.selectorMany}: spec.${which} ${r.kind} ${selector}` };
    const resourceRef = {
      name: obj.metadata.name,
      ...(r.resourceSelector?.namespace ? { namespace: ns } : {}),
    };
    const usage = await this.#kube.patch<UsageObject>(
      t,
      u.metadata.name,
      { spec: { [which]: { resourceRef } } },
      {
        resourceVersion: u.metadata.resourceVersion ?? "",
        ...(u.metadata.namespace ? { namespace: u.metadata.namespace } : {}),
      },
    );
    return { obj, type, usage };
  }

  async #wait(t: ResourceType, u: UsageObject, message: string): Promise<ReconcileResult> {
    const ready: NewCondition = { type: "Ready", status: "False", reason: "Unavailable", message };
    await this.#lc.writeStatus(t, u, [ready]);
    return {
      outcome: "waiting",
      requeueAfterMs: this.#lc.backoff(u.status?.conditions, ready, { ...WAITING_BACKOFF, minMs: WAIT_MS }),
    };
  }

  /**
   * The Usage goes: the used resource loses its in-use label when no other Usage names it, and with
   * replayDeletion a deletion refused while the Usage held it is made again (after the finalizer goes).
   */
  async #release(t: ResourceType, u: UsageObject): Promise<ReconcileResult> {
    const of = u.spec.of;
    const type = of.apiVersion && of.kind ? this.#typeOf(of.apiVersion, of.kind) : undefined;
    const name = of.resourceRef?.name;
    const ns = type?.namespaced
      ? ((of.resourceRef as { namespace?: string })?.namespace ?? u.metadata.namespace)
      : undefined;
    const used = type && name ? await this.#kube.get<Obj>(type, name, ns) : undefined;
    let others = 0;
    if (used && type) {
      others = (await usagesOf(this.#kube, used)).filter((x) => x.metadata.uid !== u.metadata.uid).length;
      if (others === 0 && used.metadata.labels?.[IN_USE_LABEL] !== undefined) {
        await this.#kube.patch(
          type,
          used.metadata.name,
          { metadata: { labels: { [IN_USE_LABEL]: null } } },
          {
            ...(ns ? { namespace: ns } : {}),
          },
        );
      }
    }
    await this.#lc.removeFinalizer(t, u, USAGE_FINALIZER);
    const attempted = used?.metadata.annotations?.[DELETION_ATTEMPT_ANNOTATION];
    if (
      u.spec.replayDeletion &&
      used &&
      type &&
      attempted &&
      others === 0 &&
      !used.metadata.deletionTimestamp
    ) {
      this.#logger.info(
        { key: `${used.kind}/${used.metadata.name}`, policy: attempted },
        "replaying deletion of the used resource",
      );
      await this.#kube.delete(type, used.metadata.name, ns);
    }
    return { outcome: "released" };
  }
}
