import type { Claim, ClaimKindDef } from "../api/claims/claims.ts";
import type { ResourceClass } from "../api/claims/classes.ts";
import {
  CLAIM_FINALIZER,
  ClaimAnnotations,
  ClaimLabels,
  ClaimConditionType as CT,
  ClaimReason as R,
  type ReclaimPolicy,
  type ResourceReference,
  SYSTEM_NAMESPACE,
} from "../api/claims/meta.ts";
import type { ManagedKindDef, ManagedResource } from "../api/managed.ts";
import { DEFAULT_PROVIDER_CONFIG } from "../api/meta.ts";
import { ConflictError, type Kube } from "../kube/client.ts";
import { namedError } from "../named-error.ts";
import { deepEqual } from "../reconciler/compare.ts";
import { getCondition } from "../reconciler/conditions.ts";
import {
  CONFLICT_REQUEUE_MS,
  type EventRecorder,
  noopLogger,
  type Outcome,
  type ReconcileLogger,
  type ReconcileResult,
  type Reconciles,
  type ResourceKey,
} from "../reconciler/contract.ts";
import { ERROR_BACKOFF, Lifecycle, WAITING_BACKOFF, wrapErr } from "../reconciler/lifecycle.ts";
import {
  type BindContext,
  type ClassBinding,
  claimLabelsOf,
  defined,
  type Fields,
  initialForProvider,
  type PartDef,
  stringMap,
} from "./binding.ts";
import { classBindings } from "./bindings/index.ts";
import {
  ambiguous,
  bound,
  type NewCondition,
  notSynced,
  ready,
  releasing,
  synced,
  unbound,
} from "./conditions.ts";
import { ambiguity, type Candidate, selectClass } from "./matching.ts";
import { claimLabels, namespaceAllowed, resourceName, systemSecretName } from "./naming.ts";
import { propagateSecret, removeSecret, SecretConflictError } from "./secret.ts";

export const DEFAULT_CLAIM_POLL_INTERVAL_MS = 5 * 60_000;
const WAIT_MIN_MS = 2_000;
const WAIT_MAX_MS = 30_000;
/** Claims a class event binds inline; the rest find the class on their own backoff. */
const MAX_CLAIMS_WOKEN_PER_CLASS = 20;
const PAGE = 500;

// Short constant messages wrapped around the cause, as the managed reconciler's Msg.
export const Msg = {
  unknownKind: "no claim or class kind is registered for this key",
  getClaim: "cannot get claim",
  getClass: "cannot get class",
  listClasses: "cannot list classes",
  recordClass: "cannot record the chosen class in spec.classRef",
  getResource: "cannot get bound managed resource",
  createResource: "cannot create managed resource",
  updateResource: "cannot update managed resource with the claim's fields",
  deleteResource: "cannot delete managed resource",
  releaseResource: "cannot release managed resource",
  propagateSecret: "cannot propagate connection Secret",
  removeSecret: "cannot remove connection Secret",
  classRefKind: "spec.classRef.kind does not serve this claim",
  classMoved: "a bound claim cannot move to another class",
} as const;

/** The outcomes a claim's reconcile reports: those of the contract a claim can reach. */
export type ClaimOutcome = Exclude<
  Outcome,
  "paused" | "late-initialized" | "settling" | "waiting" | "ready" | "unready" | "in-use" | "released"
>;

// The shared contract's types under the names claim code reads.
export type ClaimResult = ReconcileResult<ClaimOutcome>;
export type ClaimKey = ResourceKey;
export type ClaimLogger = ReconcileLogger;
/** Kubernetes Events about claims (KubeEventRecorder fits). */
export type ClaimEventRecorder = EventRecorder;

export interface ClaimReconcilerOptions {
  bindings?: readonly ClassBinding[];
  /** Where bound resources publish their connection Secrets; default driftless-system. */
  systemNamespace?: string;
  pollIntervalMs?: number;
  logger?: ClaimLogger;
  events?: ClaimEventRecorder;
  now?: () => Date;
  random?: () => number;
}

type KubeClaim = Claim & { [k: string]: unknown };
type KubeClass = ResourceClass & { [k: string]: unknown };
type KubeMr = ManagedResource & { [k: string]: unknown };

/** The claim cannot go on as it is (no class, not allowed, a name taken): a clear condition, a retry. */
class BlockedError extends namedError("BlockedError", Error) {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

interface Chosen {
  binding: ClassBinding;
  /** Undefined only when the class was deleted after the claim was bound. */
  cls: KubeClass | undefined;
  extra: NewCondition[];
}

const refOf = (mr: { apiVersion: string; kind: string; metadata: { name: string } }): ResourceReference => ({
  apiVersion: mr.apiVersion,
  kind: mr.kind,
  name: mr.metadata.name,
});

/**
 * Binds portable claims to managed resources made from classes, as Crossplane's claim reconciler did:
 * choose a class, make exactly one resource (set) per claim under a name derived from the claim's uid,
 * keep the claim's fields on it, mirror its status and copy its connection Secret to the claim's
 * namespace, and honour the class's reclaim policy when the claim is deleted. Level-triggered: reads
 * everything fresh, so duplicate and concurrent reconciles of one claim are harmless.
 */
export class ClaimBinder implements Reconciles {
  readonly #kube: Kube;
  readonly #bindings: readonly ClassBinding[];
  readonly #claimKinds = new Map<string, ClaimKindDef>();
  readonly #classByKey = new Map<string, ClassBinding>();
  readonly #lifecycle: Lifecycle;
  readonly #opts: { systemNamespace: string; pollIntervalMs: number; logger: ClaimLogger };

  constructor(kube: Kube, opts: ClaimReconcilerOptions = {}) {
    this.#kube = kube;
    this.#bindings = opts.bindings ?? classBindings;
    for (const b of this.#bindings) {
      this.#claimKinds.set(`${b.class.claim.apiVersion}/${b.class.claim.kind}`, b.class.claim);
      this.#classByKey.set(`${b.class.apiVersion}/${b.class.kind}`, b);
    }
    this.#opts = {
      systemNamespace: opts.systemNamespace ?? SYSTEM_NAMESPACE,
      pollIntervalMs: opts.pollIntervalMs ?? DEFAULT_CLAIM_POLL_INTERVAL_MS,
      logger: opts.logger ?? noopLogger,
    };
    this.#lifecycle = new Lifecycle(kube, opts);
  }

  /** Whether this key is a claim or a class this reconciler serves. */
  handles(apiVersion: string, kind: string): boolean {
    const k = `${apiVersion}/${kind}`;
    return this.#claimKinds.has(k) || this.#classByKey.has(k);
  }

  /** The claim and class kinds, for the forwarder and sweep to watch. */
  get types(): Array<ClaimKindDef | ClassBinding["class"]> {
    return [...this.#claimKinds.values(), ...this.#bindings.map((b) => b.class)];
  }

  /** One claim or class; a 409 is thrown to the router, which requeues it. */
  reconcile(key: ClaimKey): Promise<ClaimResult> {
    const k = `${key.apiVersion}/${key.kind}`;
    const claimKind = this.#claimKinds.get(k);
    if (claimKind) return this.#reconcileClaim(claimKind, key);
    const cls = this.#classByKey.get(k);
    if (cls) return this.#reconcileClass(cls, key.name);
    return Promise.reject(new Error(`${Msg.unknownKind}: ${key.apiVersion} ${key.kind}`));
  }

  /** A class appeared or changed: claims still waiting for a class may bind to it now. */
  async #reconcileClass(binding: ClassBinding, name: string): Promise<ClaimResult> {
    const cls = await this.#lifecycle.read<KubeClass>(binding.class, { ...binding.class, name });
    if (!cls) return { outcome: "gone" };
    const waiting: KubeClaim[] = [];
    let cont: string | undefined;
    do {
      const page = await this.#kube.list<KubeClaim>(binding.class.claim, {
        limit: PAGE,
        ...(cont ? { continue: cont } : {}),
      });
      for (const c of page.items) {
        if (c.status?.resourceRef || c.metadata.deletionTimestamp) continue;
        if (!namespaceAllowed(cls.spec.allowedNamespaces, c.metadata.namespace ?? "")) continue;
        waiting.push(c);
      }
      cont = waiting.length >= MAX_CLAIMS_WOKEN_PER_CLASS ? undefined : page.continue;
    } while (cont);
    for (const c of waiting.slice(0, MAX_CLAIMS_WOKEN_PER_CLASS)) {
      const key = {
        apiVersion: c.apiVersion,
        kind: c.kind,
        name: c.metadata.name,
        ...(c.metadata.namespace ? { namespace: c.metadata.namespace } : {}),
      };
      // A claim that cannot bind now (a 409, a failure) binds on its own message: it is not this class's.
      await this.reconcile(key).catch((err: unknown) =>
        this.#opts.logger.debug(
          { key: `${c.kind}/${key.namespace ?? ""}/${c.metadata.name}`, error: (err as Error).message },
          "a waiting claim did not bind now; it retries on its own",
        ),
      );
    }
    return { outcome: "in-sync" };
  }

  async #reconcileClaim(def: ClaimKindDef, key: ClaimKey): Promise<ClaimResult> {
    let claim = await this.#lifecycle.read<KubeClaim>(def, { ...key, namespace: key.namespace ?? "default" });
    if (!claim) return { outcome: "gone" };
    try {
      if (claim.metadata.deletionTimestamp) return await this.#delete(def, claim);
      // Before anything is made: a claim can then never be deleted without its resources being handled.
      claim = await this.#lifecycle.addFinalizer(def, claim, CLAIM_FINALIZER);
      const chosen = await this.#chooseClass(def, claim);
      if (chosen.recorded) claim = chosen.recorded;
      return await this.#bind(def, claim, chosen);
    } catch (err) {
      if (err instanceof ConflictError) throw err;
      return this.#fail(def, claim, err);
    }
  }

  /** spec.classRef wins; else classSelector; else the default class(es). Records a choice in spec.classRef. */
  async #chooseClass(def: ClaimKindDef, claim: KubeClaim): Promise<Chosen & { recorded?: KubeClaim }> {
    const bindings = this.#bindings.filter((b) => b.class.claim === def);
    const namespace = claim.metadata.namespace ?? "";
    const isBound = Boolean(claim.status?.resourceRef);
    const ref = claim.spec.classRef;
    if (!ref && isBound) {
      // classRef was removed from a bound claim: restore the class it is bound to, never choose anew.
      const boundTo = await this.#boundClass(def, claim);
      if (boundTo) {
        const recorded = await this.#patchClaim(def, claim, { spec: { classRef: boundTo } }, Msg.recordClass);
        return { ...(await this.#chooseClass(def, recorded)), recorded };
      }
    }
    if (ref) {
      const binding = bindings.find((b) => b.class.kind === ref.kind);
      if (!binding) {
        throw new BlockedError(
          R.InvalidSpec,
          `${Msg.classRefKind}: "${ref.kind}" does not serve ${def.kind} claims; use one of ${bindings.map((b) => b.class.kind).join(", ")}`,
        );
      }
      const cls = await this.#kube.get<KubeClass>(binding.class, ref.name).catch((e: unknown) => {
        throw wrapErr(Msg.getClass, e);
      });
      if (!cls && !isBound) {
        throw new BlockedError(
          R.ClassNotFound,
          `${ref.kind} "${ref.name}" (spec.classRef) not found; binding is retried until it exists`,
        );
      }
      // Allowed namespaces are checked when binding; a bound claim keeps what it has.
      if (cls && !isBound && !namespaceAllowed(cls.spec.allowedNamespaces, namespace)) {
        throw notAllowed(ref.kind, ref.name, namespace);
      }
      return { binding, cls, extra: [] };
    }

    const candidates: Array<Candidate & { binding: ClassBinding; cls: KubeClass }> = [];
    for (const binding of bindings) {
      let cont: string | undefined;
      do {
        const page = await this.#kube
          .list<KubeClass>(binding.class, { limit: PAGE, ...(cont ? { continue: cont } : {}) })
          .catch((e: unknown) => {
            throw wrapErr(Msg.listClasses, e);
          });
        for (const cls of page.items) {
          candidates.push({
            kind: binding.class.kind,
            name: cls.metadata.name,
            labels: cls.metadata.labels,
            annotations: cls.metadata.annotations,
            allowedNamespaces: cls.spec.allowedNamespaces,
            binding,
            cls,
          });
        }
        cont = page.continue;
      } while (cont);
    }
    const selection = selectClass({
      claimKind: def.kind,
      classKinds: bindings.map((b) => b.class.kind),
      namespace,
      selector: claim.spec.classSelector,
      candidates,
    });
    if (!selection.found) throw new BlockedError(selection.reason, selection.message);
    const chosen = candidates.find(
      (c) => c.kind === selection.chosen.kind && c.name === selection.chosen.name,
    );
    if (!chosen) throw new Error("selected class vanished from its own candidate list");
    // Recorded before anything is made (guarded by resourceVersion): every later reconcile binds the same.
    const recorded = await this.#patchClaim(
      def,
      claim,
      { spec: { classRef: { kind: chosen.kind, name: chosen.name } } },
      Msg.recordClass,
    );
    const warn = ambiguity(selection);
    if (warn) await this.#lifecycle.event(recorded, "Warning", warn.reason, warn.message);
    return {
      binding: chosen.binding,
      cls: chosen.cls,
      extra: warn ? [ambiguous(warn.reason, warn.message)] : [],
      recorded,
    };
  }

  /** The class a bound claim's resource was made from (its annotation), as a classRef. */
  async #boundClass(
    def: ClaimKindDef,
    claim: KubeClaim,
  ): Promise<{ kind: string; name: string } | undefined> {
    const ref = claim.status?.resourceRef;
    const part = this.#bindings
      .filter((b) => b.class.claim === def)
      .flatMap((b) => b.parts)
      .find((p) => p.type.apiVersion === ref?.apiVersion && p.type.kind === ref?.kind);
    if (!ref || !part) return undefined;
    const mr = await this.#kube.get<KubeMr>(part.type, ref.name);
    const [kind, name] = (mr?.metadata.annotations?.[ClaimAnnotations.class] ?? "").split("/");
    return kind && name && mr?.metadata.labels?.[ClaimLabels.uid] === claim.metadata.uid
      ? { kind, name }
      : undefined;
  }

  async #bind(def: ClaimKindDef, claim: KubeClaim, chosen: Chosen): Promise<ClaimResult> {
    const { binding, cls } = chosen;
    const problem = binding.unsupported?.(claim.spec as Fields);
    if (problem) throw new BlockedError(R.InvalidSpec, problem);
    // Checked on every reconcile, so growing a bound claim past the limit is refused too (nothing changes).
    const over =
      cls &&
      binding.overLimit?.(
        claim.spec as Fields,
        cls.spec as Fields,
        `${binding.class.kind} "${cls.metadata.name}"`,
      );
    if (over) throw new BlockedError(R.LimitExceeded, over);
    const name = resourceName(claim.metadata);
    const uid = claim.metadata.uid ?? "";
    const classSpec = cls?.spec as Fields | undefined;
    const claimSpec = claim.spec as Fields;

    const mrs: KubeMr[] = [];
    const created: Array<{ part: PartDef; mr: KubeMr }> = [];
    let updated = false;
    for (const part of binding.parts) {
      let mr = await this.#kube.get<KubeMr>(part.type, name).catch((e: unknown) => {
        throw wrapErr(Msg.getResource, e);
      });
      if (!mr) {
        if (!cls) {
          throw new BlockedError(
            R.ClassNotFound,
            `${part.type.kind} "${name}" is gone and ${binding.class.kind} "${claim.spec.classRef?.name}" no longer exists to make it again`,
          );
        }
        // Checked again right before making anything, whatever the claim's status says about being bound.
        if (!namespaceAllowed(cls.spec.allowedNamespaces, claim.metadata.namespace ?? "")) {
          throw notAllowed(binding.class.kind, cls.metadata.name, claim.metadata.namespace ?? "");
        }
        if (created.length === 0 && mrs.length === 0)
          await this.#ensureNotBoundElsewhere(def, binding, name, uid);
        const made = await this.#create(claim, binding, cls, part, name);
        mr = made.mr;
        if (made.created) created.push({ part, mr });
      }
      this.#checkOwner(part, mr, uid);
      const synced = await this.#syncPortable(part, mr, { claim: claimSpec, classSpec, name });
      if (synced) {
        mr = synced;
        updated = true;
      }
      mrs.push(mr);
    }

    if (created.length > 0) {
      await this.#lifecycle.event(
        claim,
        "Normal",
        "BoundResource",
        `Created ${created.map((c) => `${c.part.type.kind} ${name}`).join(" and ")} from ${binding.class.kind} "${cls?.metadata.name}"`,
      );
      // A concurrent deletion may have finished between our read and our create: leave nothing behind.
      const still = await this.#kube.get<KubeClaim>(def, claim.metadata.name, claim.metadata.namespace);
      if (!still || still.metadata.uid !== uid || still.metadata.deletionTimestamp) {
        if (!still || still.metadata.uid !== uid) {
          for (const c of created) await this.#kube.delete(c.part.type, name);
        }
        return { outcome: "conflict", requeueAfterMs: this.#lifecycle.jitter(CONFLICT_REQUEUE_MS) };
      }
    }

    const primaryIndex = Math.max(
      0,
      binding.parts.findIndex((p) => p.primary),
    );
    const primary = mrs[primaryIndex] as KubeMr;
    let secret: "written" | "unchanged" | "waiting" = "unchanged";
    try {
      secret = await propagateSecret(
        this.#kube,
        claim,
        { namespace: this.#opts.systemNamespace, name: systemSecretName(uid) },
        binding.connection,
      );
    } catch (err) {
      if (err instanceof SecretConflictError) throw new BlockedError(R.SecretConflict, err.message);
      if (err instanceof ConflictError) throw err;
      throw wrapErr(Msg.propagateSecret, err);
    }

    const readiness = this.#readiness(mrs, secret === "waiting");
    const syncedness = this.#syncedness(mrs);
    const className = `${binding.class.kind}/${claim.spec.classRef?.name ?? cls?.metadata.name ?? ""}`;
    await this.#lifecycle.writeStatus(
      def,
      claim,
      [
        ...chosen.extra,
        bound(
          `bound to ${mrs.map((m) => `${m.kind} ${m.metadata.name}`).join(" and ")} (class ${className})`,
        ),
        readiness,
        syncedness,
      ],
      { resourceRef: refOf(primary), resourceRefs: mrs.map(refOf) },
    );

    const isReady = readiness.status === "True";
    const outcome: ClaimOutcome =
      created.length > 0 ? "created" : updated ? "updated" : isReady ? "in-sync" : "creating";
    if (isReady)
      return {
        outcome,
        pollAfterMs: this.#opts.pollIntervalMs,
        ...(updated ? { requeueAfterMs: this.#lifecycle.jitter(WAIT_MIN_MS) } : {}),
      };
    // The bound resources' status changes are not forwarded to the claim: look again while they settle.
    return { outcome, requeueAfterMs: this.#waitBackoff(claim) };
  }

  /** A claim binds to one class's resources only: resources of another class under its name mean a move. */
  async #ensureNotBoundElsewhere(def: ClaimKindDef, binding: ClassBinding, name: string, uid: string) {
    const own = new Set(binding.parts.map((p) => `${p.type.apiVersion}/${p.type.kind}`));
    const others = new Map<string, ManagedKindDef>();
    for (const b of this.#bindings) {
      if (b.class.claim !== def) continue;
      for (const p of b.parts) {
        const k = `${p.type.apiVersion}/${p.type.kind}`;
        if (!own.has(k)) others.set(k, p.type);
      }
    }
    for (const t of others.values()) {
      const mr = await this.#kube.get<KubeMr>(t, name);
      if (mr?.metadata.labels?.[ClaimLabels.uid] === uid) {
        throw new BlockedError(
          R.InvalidSpec,
          `${Msg.classMoved}: this claim is bound to ${t.kind} "${name}" (${mr.metadata.annotations?.[ClaimAnnotations.class] ?? "another class"}); set spec.classRef back, or delete and recreate the claim`,
        );
      }
    }
  }

  /** Creates one part; AlreadyExists means a concurrent reconcile made it: adopt it only if it is ours. */
  async #create(
    claim: KubeClaim,
    binding: ClassBinding,
    cls: KubeClass,
    part: PartDef,
    name: string,
  ): Promise<{ mr: KubeMr; created: boolean }> {
    const uid = claim.metadata.uid ?? "";
    const ctx: BindContext = { claim: claim.spec as Fields, classSpec: cls.spec as Fields, name };
    const labelKeys = part.labelsField ? Object.keys(claimLabelsOf(ctx.claim)).sort().join(",") : undefined;
    const body: KubeMr = {
      apiVersion: part.type.apiVersion,
      kind: part.type.kind,
      metadata: {
        name,
        labels: claimLabels(claim.metadata),
        annotations: {
          [ClaimAnnotations.class]: `${binding.class.kind}/${cls.metadata.name}`,
          [ClaimAnnotations.reclaimPolicy]: cls.spec.reclaimPolicy ?? "Delete",
          [ClaimAnnotations.claimName]: claim.metadata.name,
          ...(labelKeys !== undefined ? { [ClaimAnnotations.claimLabelKeys]: labelKeys } : {}),
        },
      },
      spec: {
        forProvider: initialForProvider(part, ctx),
        providerConfigRef: { name: cls.spec.providerConfigRef?.name ?? DEFAULT_PROVIDER_CONFIG },
        deletionPolicy: "Delete",
        ...(part.primary
          ? {
              writeConnectionSecretToRef: {
                namespace: this.#opts.systemNamespace,
                name: systemSecretName(uid),
              },
            }
          : {}),
      },
    };
    try {
      return { mr: await this.#kube.create<KubeMr>(part.type, body), created: true };
    } catch (err) {
      if (!(err instanceof ConflictError)) throw wrapErr(Msg.createResource, err);
      const existing = await this.#kube.get<KubeMr>(part.type, name);
      if (!existing) throw err; // created and deleted in between: re-read and try again
      return { mr: existing, created: false };
    }
  }

  #checkOwner(part: PartDef, mr: KubeMr, uid: string) {
    const owner = mr.metadata.labels?.[ClaimLabels.uid];
    if (owner === uid) return;
    throw new BlockedError(
      R.ResourceConflict,
      `${part.type.kind} "${mr.metadata.name}" already exists and belongs to ${owner ? `another claim (uid ${owner})` : "no claim"}; driftless never adopts it. Delete or rename it, or recreate this claim`,
    );
  }

  /** Claim → resource: writes the claim's portable fields and labels onto forProvider when they differ. */
  async #syncPortable(part: PartDef, mr: KubeMr, base: BindContext): Promise<KubeMr | undefined> {
    const current = (mr.spec.forProvider ?? {}) as Fields;
    const want = defined(part.portable({ ...base, current }));
    const patch: Fields = {};
    for (const [k, v] of Object.entries(want)) if (!deepEqual(current[k], v)) patch[k] = v;

    let annotations: Record<string, string> | undefined;
    if (part.labelsField) {
      const labels = claimLabelsOf(base.claim);
      const prevKeys = (mr.metadata.annotations?.[ClaimAnnotations.claimLabelKeys] ?? "")
        .split(",")
        .filter(Boolean);
      const map = stringMap(current[part.labelsField]);
      const mapPatch: Record<string, string | null> = {};
      for (const k of prevKeys) if (!(k in labels) && k in map) mapPatch[k] = null;
      for (const [k, v] of Object.entries(labels)) if (map[k] !== v) mapPatch[k] = v;
      if (Object.keys(mapPatch).length > 0) patch[part.labelsField] = mapPatch;
      const keys = Object.keys(labels).sort().join(",");
      if (keys !== prevKeys.sort().join(",")) annotations = { [ClaimAnnotations.claimLabelKeys]: keys };
    }
    if (Object.keys(patch).length === 0 && !annotations) return undefined;
    try {
      return await this.#kube.patch<KubeMr>(
        part.type,
        mr.metadata.name,
        {
          ...(Object.keys(patch).length > 0 ? { spec: { forProvider: patch } } : {}),
          ...(annotations ? { metadata: { annotations } } : {}),
        },
        { resourceVersion: mr.metadata.resourceVersion ?? "" },
      );
    } catch (err) {
      throw err instanceof ConflictError ? err : wrapErr(Msg.updateResource, err);
    }
  }

  /** Resource → claim: Ready when every bound resource is Ready and the Secret (if asked for) is there. */
  #readiness(mrs: KubeMr[], secretWaiting: boolean): NewCondition {
    for (const mr of mrs) {
      const c = getCondition(mr.status?.conditions, CT.Ready);
      if (c?.status !== "True") {
        const why = c?.message ? `: ${c.message}` : "";
        return ready(
          "False",
          c?.reason ?? R.Creating,
          `${mr.kind} ${mr.metadata.name} is ${(c?.reason ?? "being created").toLowerCase()}${why}`,
        );
      }
    }
    if (secretWaiting)
      return ready("False", R.Creating, "waiting for the connection details of the bound resource");
    return ready("True", R.Available);
  }

  #syncedness(mrs: KubeMr[]): NewCondition {
    for (const mr of mrs) {
      const c = getCondition(mr.status?.conditions, CT.Synced);
      if (c?.status === "False")
        return notSynced(c.reason, `${mr.kind} ${mr.metadata.name}: ${c.message ?? c.reason}`);
    }
    return synced();
  }

  /** The claim is going: its resources are deleted or released per reclaim policy, then its Secret, then the finalizer. */
  async #delete(def: ClaimKindDef, claim: KubeClaim): Promise<ClaimResult> {
    if (!claim.metadata.finalizers?.includes(CLAIM_FINALIZER)) return { outcome: "deleted" };
    const uid = claim.metadata.uid ?? "";
    const name = resourceName(claim.metadata);
    // Every kind any class of this claim kind makes: the claim may never have recorded its binding.
    const types = new Map<string, ManagedKindDef>();
    for (const b of this.#bindings) {
      if (b.class.claim !== def) continue;
      for (const p of b.parts) types.set(`${p.type.apiVersion}/${p.type.kind}`, p.type);
    }
    const waiting: string[] = [];
    let released = 0;
    for (const t of types.values()) {
      const mr = await this.#kube.get<KubeMr>(t, name);
      if (!mr || mr.metadata.labels?.[ClaimLabels.uid] !== uid) continue;
      const policy = (mr.metadata.annotations?.[ClaimAnnotations.reclaimPolicy] ?? "Delete") as ReclaimPolicy;
      if (policy === "Retain") {
        await this.#release(t, mr, claim);
        released++;
        continue;
      }
      if (!mr.metadata.deletionTimestamp) {
        await this.#kube.delete(t, name).catch((e: unknown) => {
          throw wrapErr(Msg.deleteResource, e);
        });
        await this.#lifecycle.event(
          claim,
          "Normal",
          "DeletingResource",
          `Deleting ${t.kind} ${name} (reclaimPolicy Delete)`,
        );
      }
      waiting.push(`${t.kind} ${name}`);
    }
    if (waiting.length > 0) {
      await this.#lifecycle.writeStatus(def, claim, [
        ready(
          "False",
          R.Deleting,
          `waiting for ${waiting.join(" and ")} to be deleted (the cloud resource goes first)`,
        ),
        releasing(`reclaimPolicy Delete: deleting ${waiting.join(" and ")}`),
      ]);
      return { outcome: "deleting", requeueAfterMs: this.#lifecycle.jitter(WAIT_MIN_MS) };
    }
    await removeSecret(this.#kube, claim).catch((e: unknown) => {
      throw wrapErr(Msg.removeSecret, e);
    });
    await this.#lifecycle.removeFinalizer(def, claim, CLAIM_FINALIZER);
    return { outcome: released > 0 ? "orphaned" : "deleted" };
  }

  /** Retain: the resource (and its cloud resource) stays, no longer linked to any claim. */
  async #release(t: ManagedKindDef, mr: KubeMr, claim: KubeClaim) {
    const from = `${claim.metadata.namespace}/${claim.metadata.name} (${claim.metadata.uid})`;
    await this.#kube
      .patch(
        t,
        mr.metadata.name,
        {
          metadata: {
            labels: { [ClaimLabels.namespace]: null, [ClaimLabels.name]: null, [ClaimLabels.uid]: null },
            annotations: { [ClaimAnnotations.releasedFrom]: from },
          },
        },
        { resourceVersion: mr.metadata.resourceVersion ?? "" },
      )
      .catch((e: unknown) => {
        throw e instanceof ConflictError ? e : wrapErr(Msg.releaseResource, e);
      });
    await this.#lifecycle.event(
      claim,
      "Normal",
      "ReleasedResource",
      `Kept ${t.kind} ${mr.metadata.name} (reclaimPolicy Retain)`,
    );
  }

  async #fail(def: ClaimKindDef, claim: KubeClaim, err: unknown): Promise<ClaimResult> {
    const error = err instanceof Error ? err : new Error(String(err));
    const blocked = error instanceof BlockedError;
    const reason = blocked ? error.reason : R.ReconcileError;
    const conditions: NewCondition[] = [notSynced(reason, error.message)];
    if (!claim.status?.resourceRef && !claim.metadata.deletionTimestamp) {
      conditions.push(unbound(error.message), ready("False", R.Unbound, "not bound to a resource yet"));
    }
    // A missing class is usually being applied right now: keep looking often.
    const waiting = reason === R.ClassNotFound || reason === R.ClassNotAllowed;
    const requeueAfterMs = await this.#lifecycle.fail(def, claim, {
      reason,
      error,
      conditions,
      backoff: waiting ? WAITING_BACKOFF : ERROR_BACKOFF,
    });
    return { outcome: blocked ? "blocked" : "error", ...(blocked ? {} : { error }), requeueAfterMs };
  }

  /** While the bound resources settle: look again soon, then less often (RDS takes minutes). */
  #waitBackoff(claim: KubeClaim): number {
    const r = getCondition(claim.status?.conditions, CT.Ready);
    const waitingFor =
      r?.status === "False" ? this.#lifecycle.now().getTime() - Date.parse(r.lastTransitionTime) : 0;
    return this.#lifecycle.jitter(Math.min(WAIT_MAX_MS, Math.max(WAIT_MIN_MS, waitingFor / 4)));
  }

  async #patchClaim(
    def: ClaimKindDef,
    claim: KubeClaim,
    patch: Record<string, unknown>,
    msg: string,
  ): Promise<KubeClaim> {
    try {
      return await this.#kube.patch<KubeClaim>(def, claim.metadata.name, patch, {
        namespace: claim.metadata.namespace ?? "default",
        resourceVersion: claim.metadata.resourceVersion ?? "",
      });
    } catch (err) {
      throw err instanceof ConflictError ? err : wrapErr(msg, err);
    }
  }
}

const notAllowed = (kind: string, name: string, namespace: string) =>
  new BlockedError(
    R.ClassNotAllowed,
    `${kind} "${name}" does not allow claims from namespace "${namespace}" (its spec.allowedNamespaces); ask the platform team, or choose another class`,
  );
