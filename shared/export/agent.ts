// The binding agent: one per app cluster. App-cluster claims are copied to the app cluster's namespace
// on the control plane (spec, origin labels, a finalizer on the original); the control-plane claim's
// status and its permission-claimed Secrets/ConfigMaps are copied back. Level-triggered: every
// reconcile reads both sides fresh, so it is idempotent and needs no memory across restarts.
import { type Claim, type ClaimKindDef, claimKinds } from "../api/claims/claims.ts";
import {
  APIServiceExportTemplate,
  EXPORT_FINALIZER,
  ExportAnnotations,
  ExportConditionType,
  ExportLabels,
  ExportReason,
  type ExportTemplate,
  PermissionClaim,
} from "../api/export/template.ts";
import type { Condition } from "../api/meta.ts";
import { ConflictError, type Kube } from "../kube/client.ts";
import { deepEqual } from "../reconciler/compare.ts";
import {
  type NewCondition,
  noopLogger,
  type ReconcileLogger,
  type ReconcileResult,
  type Reconciles,
  type ResourceKey,
} from "../reconciler/contract.ts";
import { Lifecycle, wrapErr } from "../reconciler/lifecycle.ts";
import { offers } from "./bind.ts";
import { controlPlaneNamespace, InvalidNameError, upstreamName } from "./naming.ts";
import { removeSyncedCopies, SyncConflictError, syncPermissionClaims } from "./sync.ts";

export const DEFAULT_EXPORT_POLL_INTERVAL_MS = 60_000;
/** While the control plane is still working on a claim (status is polled, not watched there). */
const WAIT_MS = 2_000;
/** A claim whose kind is not exported binds as soon as an export appears: look again now and then. */
const NOT_EXPORTED_MS = 15_000;

export const Msg = {
  getClaim: "cannot get app-cluster claim",
  getUpstream: "cannot get control-plane claim",
  createUpstream: "cannot create control-plane claim",
  updateUpstream: "cannot update control-plane claim",
  deleteUpstream: "cannot delete control-plane claim",
  sync: "cannot sync permission-claimed objects",
  templates: "cannot read export templates",
} as const;

export type ExportOutcome =
  | "gone"
  | "created"
  | "updated"
  | "in-sync"
  | "waiting"
  | "blocked"
  | "deleting"
  | "deleted"
  | "error";

// The shared contract's types under the names export code reads.
export type ExportResult = ReconcileResult<ExportOutcome>;
export type ExportKey = ResourceKey;
export type ExportLogger = ReconcileLogger;

export interface ExportAgentOptions {
  /** The app cluster (installs nothing; reads and writes claims and the synced copies). */
  app: Kube;
  /** The control plane, as this app cluster's agent identity (its own namespace only). */
  controlPlane: Kube;
  appCluster: string;
  /** The templates this app cluster is bound to (see boundTemplates). */
  templates: readonly string[];
  pollIntervalMs?: number;
  logger?: ExportLogger;
  now?: () => Date;
}

type KubeClaim = Claim & { [k: string]: unknown };

const cond = (type: string, status: "True" | "False", reason: string, message?: string): NewCondition => ({
  type,
  status,
  reason,
  ...(message ? { message } : {}),
});

/** Copies app-cluster claims to the control plane and their status and Secrets back. */
export class ExportAgent implements Reconciles {
  readonly #app: Kube;
  #cp: Kube;
  #templates: readonly string[];
  readonly #appCluster: string;
  readonly #namespace: string;
  readonly #pollIntervalMs: number;
  readonly #logger: ExportLogger;
  readonly #lifecycle: Lifecycle;
  readonly #kinds = new Map<string, ClaimKindDef>(claimKinds.map((k) => [`${k.apiVersion}/${k.kind}`, k]));

  constructor(o: ExportAgentOptions) {
    this.#app = o.app;
    this.#cp = o.controlPlane;
    this.#appCluster = o.appCluster;
    this.#namespace = controlPlaneNamespace(o.appCluster);
    this.#templates = o.templates;
    this.#pollIntervalMs = o.pollIntervalMs ?? DEFAULT_EXPORT_POLL_INTERVAL_MS;
    this.#logger = o.logger ?? noopLogger;
    this.#lifecycle = new Lifecycle(o.app, { logger: this.#logger, ...(o.now ? { now: o.now } : {}) });
  }

  get appCluster(): string {
    return this.#appCluster;
  }

  /** A renewed control-plane identity (a fresh token), or a re-read list of bound templates. */
  update(o: { controlPlane?: Kube; templates?: readonly string[] }): void {
    if (o.controlPlane) this.#cp = o.controlPlane;
    if (o.templates) this.#templates = o.templates;
  }

  handles(apiVersion: string, kind: string): boolean {
    return this.#kinds.has(`${apiVersion}/${kind}`);
  }

  /** One app-cluster claim; a 409 is thrown to the router (contract.ts), which requeues it. */
  async reconcile(key: ExportKey): Promise<ExportResult> {
    const def = this.#kinds.get(`${key.apiVersion}/${key.kind}`);
    if (!def || !key.namespace) return { outcome: "gone" };
    return this.#reconcile(def, key.namespace, key.name);
  }

  async #reconcile(def: ClaimKindDef, namespace: string, name: string): Promise<ExportResult> {
    let claim = await this.#lifecycle
      .read<KubeClaim>(def, { apiVersion: def.apiVersion, kind: def.kind, name, namespace })
      .catch((e) => {
        throw wrapErr(Msg.getClaim, e);
      });
    if (!claim) return { outcome: "gone" };
    const uid = claim.metadata.uid ?? "";

    let upName: string;
    try {
      upName = upstreamName(namespace, name);
    } catch (err) {
      if (!(err instanceof InvalidNameError)) throw err;
      if (claim.metadata.deletionTimestamp) return this.#dropFinalizer(def, claim);
      await this.#writeStatus(def, claim, [
        cond("Synced", "False", ExportReason.InvalidName, err.message),
        cond("Ready", "False", ExportReason.InvalidName, err.message),
      ]);
      return { outcome: "blocked" };
    }
    const upstream = await this.#cp.get<KubeClaim>(def, upName, this.#namespace).catch((e) => {
      throw wrapErr(Msg.getUpstream, e);
    });
    const ours = upstream?.metadata.labels?.[ExportLabels.appUid] === uid;
    const where = `${def.kind} ${this.#namespace}/${upName} on the control plane`;

    if (claim.metadata.deletionTimestamp) {
      if (!claim.metadata.finalizers?.includes(EXPORT_FINALIZER)) return { outcome: "gone" };
      if (upstream && ours) {
        if (!upstream.metadata.deletionTimestamp)
          await this.#cp.delete(def, upName, this.#namespace).catch((e) => {
            throw wrapErr(Msg.deleteUpstream, e);
          });
        await this.#writeStatus(def, claim, [
          ...mirrored(upstream).filter((c) => c.type !== "Ready"),
          cond(
            "Ready",
            "False",
            "Deleting",
            `waiting for ${where} to be deleted (its class's reclaim policy applies)`,
          ),
        ]);
        return { outcome: "deleting", requeueAfterMs: WAIT_MS };
      }
      await removeSyncedCopies(this.#app, namespace, uid);
      return this.#dropFinalizer(def, claim);
    }

    const templates = await this.#readTemplates();
    const offering = templates.filter((t) => offers(t, def));
    const exported = offering.length > 0;
    const exportedCondition = exported
      ? cond(
          ExportConditionType.Exported,
          "True",
          ExportReason.Exported,
          `exported by ${offering.map((t) => t.metadata.name).join(", ")}`,
        )
      : cond(
          ExportConditionType.Exported,
          "False",
          ExportReason.NotExported,
          upstream
            ? `${def.plural}.${def.group} is no longer exported to app cluster ${this.#appCluster}; this claim was bound before and keeps working, new claims are not bound`
            : `${def.plural}.${def.group} is not exported to app cluster ${this.#appCluster} (no bound APIServiceExportTemplate offers it); the claim is bound once one does`,
        );

    if (!upstream) {
      if (!exported) {
        await this.#writeStatus(def, claim, [
          exportedCondition,
          cond("Synced", "False", ExportReason.NotExported, exportedCondition.message ?? ""),
          cond("Ready", "False", ExportReason.NotExported, "not bound"),
        ]);
        return { outcome: "blocked", requeueAfterMs: NOT_EXPORTED_MS };
      }
      // The finalizer comes first: an upstream copy never exists without one on its original.
      claim = await this.#lifecycle.addFinalizer(def, claim, EXPORT_FINALIZER);
      try {
        await this.#cp.create(def, {
          apiVersion: def.apiVersion,
          kind: def.kind,
          metadata: {
            name: upName,
            namespace: this.#namespace,
            labels: {
              [ExportLabels.appCluster]: this.#appCluster,
              [ExportLabels.appNamespace]: namespace,
              [ExportLabels.appUid]: uid,
            },
            annotations: {
              [ExportAnnotations.appName]: name,
              [ExportAnnotations.permissionClaims]: JSON.stringify(permissionClaimsOf(offering)),
            },
          },
          spec: upstreamSpec(claim, namespace, undefined),
        });
      } catch (err) {
        throw err instanceof ConflictError ? err : wrapErr(Msg.createUpstream, err);
      }
      await this.#writeStatus(def, claim, [
        exportedCondition,
        cond("Synced", "False", ExportReason.Pending, `waiting for ${where} to be reconciled`),
        cond("Ready", "False", ExportReason.Pending, `waiting for ${where}`),
      ]);
      this.#logger.info(
        { key: `${def.kind}/${namespace}/${name}`, upstream: `${this.#namespace}/${upName}` },
        "claim exported",
      );
      return { outcome: "created", requeueAfterMs: WAIT_MS };
    }

    if (!ours) {
      const msg = upstream.metadata.deletionTimestamp
        ? `${where} of an earlier claim with this name is still being deleted; this claim is bound once it is gone`
        : `${where} exists and belongs to another claim (app uid ${upstream.metadata.labels?.[ExportLabels.appUid] ?? "none"}): delete it there, or choose another name`;
      await this.#writeStatus(def, claim, [
        exportedCondition,
        cond("Synced", "False", ExportReason.UpstreamConflict, msg),
        cond("Ready", "False", ExportReason.UpstreamConflict, "not bound"),
      ]);
      return {
        outcome: "blocked",
        requeueAfterMs: upstream.metadata.deletionTimestamp ? WAIT_MS : NOT_EXPORTED_MS,
      };
    }

    // Bound before: keeps working whether or not the kind is still exported.
    let writes = 0;
    if (!claim.metadata.finalizers?.includes(EXPORT_FINALIZER)) {
      claim = await this.#lifecycle.addFinalizer(def, claim, EXPORT_FINALIZER);
      writes++;
    }
    const pcs = exported ? permissionClaimsOf(offering) : recordedPermissionClaims(upstream);
    const patch = specPatch(upstream, upstreamSpec(claim, namespace, upstream));
    const pcsJson = JSON.stringify(pcs);
    const metaPatch =
      upstream.metadata.annotations?.[ExportAnnotations.permissionClaims] !== pcsJson
        ? { metadata: { annotations: { [ExportAnnotations.permissionClaims]: pcsJson } } }
        : {};
    if (patch || Object.keys(metaPatch).length > 0) {
      await this.#cp
        .patch(
          def,
          upName,
          { ...metaPatch, ...(patch ? { spec: patch } : {}) },
          {
            namespace: this.#namespace,
            ...(upstream.metadata.resourceVersion
              ? { resourceVersion: upstream.metadata.resourceVersion }
              : {}),
          },
        )
        .catch((e) => {
          throw e instanceof ConflictError ? e : wrapErr(Msg.updateUpstream, e);
        });
      writes++;
    }

    let syncProblem: NewCondition | undefined;
    try {
      writes += await syncPermissionClaims({
        cp: this.#cp,
        app: this.#app,
        claims: pcs,
        upstream: { namespace: this.#namespace, uid: upstream.metadata.uid ?? "" },
        owner: { apiVersion: claim.apiVersion, kind: claim.kind, name, uid, namespace },
      });
    } catch (err) {
      syncProblem =
        err instanceof SyncConflictError
          ? cond("Synced", "False", ExportReason.SecretConflict, err.message)
          : cond("Synced", "False", ExportReason.SyncError, `${Msg.sync}: ${(err as Error).message}`);
    }

    const upConditions = mirrored(upstream);
    const conditions: Array<NewCondition | Condition> = [...upConditions, exportedCondition];
    if (!upConditions.some((c) => c.type === "Synced"))
      conditions.push(cond("Synced", "False", ExportReason.Pending, `waiting for ${where} to be reconciled`));
    if (!upConditions.some((c) => c.type === "Ready"))
      conditions.push(cond("Ready", "False", ExportReason.Pending, `waiting for ${where}`));
    if (syncProblem) {
      const i = conditions.findIndex((c) => c.type === "Synced");
      conditions[i] = syncProblem;
    }
    const statusWritten = await this.#writeStatus(def, claim, conditions, upstream.status);
    const settled =
      !syncProblem &&
      !patch &&
      upConditions.some((c) => c.type === "Ready" && c.status === "True") &&
      upConditions.some((c) => c.type === "Synced" && c.status === "True");
    return {
      outcome: writes > 0 || statusWritten ? "updated" : settled ? "in-sync" : "waiting",
      requeueAfterMs: settled ? this.#pollIntervalMs : WAIT_MS,
    };
  }

  async #dropFinalizer(def: ClaimKindDef, claim: KubeClaim): Promise<ExportResult> {
    await this.#lifecycle.removeFinalizer(def, claim, EXPORT_FINALIZER);
    this.#logger.info(
      { key: `${claim.kind}/${claim.metadata.namespace}/${claim.metadata.name}` },
      "exported claim released",
    );
    return { outcome: "deleted" };
  }

  async #readTemplates(): Promise<ExportTemplate[]> {
    const out: ExportTemplate[] = [];
    for (const name of this.#templates) {
      const t = await this.#cp
        .get<ExportTemplate & { [k: string]: unknown }>(APIServiceExportTemplate, name)
        .catch((e) => {
          throw wrapErr(Msg.templates, e);
        });
      if (t) out.push(t);
    }
    return out;
  }

  /**
   * Writes the conditions (all the claim has: they mirror the control-plane claim's) and the resource
   * references when they changed; true when it wrote.
   */
  async #writeStatus(
    def: ClaimKindDef,
    claim: KubeClaim,
    next: Array<NewCondition | Condition>,
    upstreamStatus?: KubeClaim["status"],
  ): Promise<boolean> {
    const refs = { resourceRef: upstreamStatus?.resourceRef, resourceRefs: upstreamStatus?.resourceRefs };
    return (await this.#lifecycle.writeStatus(def, claim, next, refs, { exclusive: true })) !== undefined;
  }
}

/** The control-plane claim's conditions as they are (Exported is the agent's own). */
const mirrored = (upstream: KubeClaim): Condition[] =>
  (upstream.status?.conditions ?? []).filter((c) => c.type !== ExportConditionType.Exported);

/** Union of the permission claims of the templates offering a kind. */
function permissionClaimsOf(templates: readonly ExportTemplate[]): PermissionClaim[] {
  const seen = new Map<string, PermissionClaim>();
  for (const t of templates)
    for (const raw of t.spec.permissionClaims ?? []) {
      const pc = PermissionClaim.safeParse(raw);
      if (pc.success) seen.set(JSON.stringify(pc.data), pc.data);
    }
  return [...seen.values()];
}

function recordedPermissionClaims(upstream: KubeClaim): PermissionClaim[] {
  try {
    const raw = JSON.parse(
      upstream.metadata.annotations?.[ExportAnnotations.permissionClaims] ?? "[]",
    ) as unknown[];
    return raw.flatMap((r) => {
      const pc = PermissionClaim.safeParse(r);
      return pc.success ? [pc.data] : [];
    });
  } catch {
    return [];
  }
}

/**
 * The control-plane claim's spec: the app-cluster claim's, with its Secret name prefixed by its app
 * namespace (one control-plane namespace holds every app namespace's Secrets). A class the control
 * plane chose (recorded in classRef) stays when the app-cluster claim names none.
 */
function upstreamSpec(
  claim: KubeClaim,
  appNamespace: string,
  upstream: KubeClaim | undefined,
): Record<string, unknown> {
  const spec: Record<string, unknown> = { ...claim.spec };
  const ref = claim.spec.writeConnectionSecretToRef;
  if (ref) spec.writeConnectionSecretToRef = { name: upstreamName(appNamespace, ref.name) };
  if (!spec.classRef && upstream?.spec.classRef) spec.classRef = upstream.spec.classRef;
  return spec;
}

/** A merge patch from the upstream spec to `desired`, or undefined when they are equal. */
function specPatch(
  upstream: KubeClaim,
  desired: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const current = upstream.spec as Record<string, unknown>;
  const patch: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(desired)) if (!deepEqual(current[k], v)) patch[k] = v;
  for (const k of Object.keys(current)) if (!(k in desired)) patch[k] = null;
  return Object.keys(patch).length > 0 ? patch : undefined;
}
