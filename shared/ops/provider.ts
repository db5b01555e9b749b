// Provider registration: a function that starts records the version it runs on its cloud's Provider object
// (shared/api/pkg/provider.ts) — one GET per cold start, and a write only when that version is new: a new
// revision, newest first in a short history. Health is the drift sweep's (provider-health.ts).
//
// Concurrency without locks: every container of one version computes the same status from the same GET,
// so racing writers converge; a container of an *older* version (still draining during a deploy) finds
// itself in the history and writes nothing, so the current revision never flips back. A rollback is
// therefore recorded only when it is deployed as a new function version (docs/operations.md).
import { createHash } from "node:crypto";
import packageJson from "../../package.json" with { type: "json" };
import {
  DEFAULT_REVISION_HISTORY_LIMIT,
  Provider,
  ProviderConditionType,
  type ProviderObject,
  ProviderReason,
  type ProviderRevision,
  type ProviderSpec,
  type ProviderStatus,
} from "../api/pkg/provider.ts";
import { FIELD_MANAGER, Kube, statusOf } from "../kube/client.ts";
import { setConditions } from "../reconciler/conditions.ts";
import type { NewCondition, ReconcileLogger } from "../reconciler/contract.ts";

export type ProviderCloud = ProviderSpec["cloud"];

/** The driftless version this code is (package.json), what every revision records. */
export const DRIFTLESS_VERSION: string = packageJson.version;

/** What a starting function knows about itself: the driftless version and what runs it. */
export interface DeploymentIdentity {
  version: string;
  identifier: string;
}

/** Lambda: the function's name and version ($LATEST unless versions are published). */
export function lambdaIdentity(env: NodeJS.ProcessEnv): DeploymentIdentity {
  const name = env.AWS_LAMBDA_FUNCTION_NAME ?? "unknown";
  return {
    version: DRIFTLESS_VERSION,
    identifier: `aws-lambda ${name}:${env.AWS_LAMBDA_FUNCTION_VERSION ?? "$LATEST"}`,
  };
}

/** Cloud Functions gen2 (Cloud Run underneath): the service and its revision, new on every deploy. */
export function cloudFunctionsIdentity(env: NodeJS.ProcessEnv): DeploymentIdentity {
  return {
    version: DRIFTLESS_VERSION,
    identifier: `gcp-functions ${env.K_SERVICE ?? "unknown"}/${env.K_REVISION ?? "unknown"}`,
  };
}

/** `driftless run`: the package version is the revision. */
export const runIdentity = (): DeploymentIdentity => ({
  version: DRIFTLESS_VERSION,
  identifier: "driftless-run",
});

/**
 * The Provider of a deployment: `driftless-<cloud>`, and for a sharded one (a label selector) its own:
 * `driftless-<cloud>-<value>` for a single `key=value`, else `driftless-<cloud>-<8 hex of the selector>`.
 */
export function providerName(cloud: ProviderCloud, labelSelector?: string): string {
  const selector = labelSelector?.trim();
  if (!selector) return `driftless-${cloud}`;
  const single = /^[^,=!()\s]+\s*==?\s*([A-Za-z0-9_.-]+)$/.exec(selector);
  const value = single?.[1]
    ?.toLowerCase()
    .replace(/[_.]+/g, "-")
    .replace(/^-+|-+$/g, "");
  if (value) return `driftless-${cloud}-${value}`.slice(0, 63).replace(/-+$/, "");
  return `driftless-${cloud}-${createHash("sha256").update(selector).digest("hex").slice(0, 8)}`;
}

const same = (r: Pick<ProviderRevision, "version" | "identifier">, id: DeploymentIdentity) =>
  r.version === id.version && r.identifier === id.identifier;

/** The Installed condition a status implies: the current revision, and whether any of its kinds has a CRD. */
export function installedCondition(
  status: Pick<ProviderStatus, "currentRevision" | "currentVersion" | "currentIdentifier" | "activatedKinds">,
): NewCondition {
  const type = ProviderConditionType.Installed;
  if (status.currentRevision === undefined) {
    return {
      type,
      status: "Unknown",
      reason: ProviderReason.AwaitingRevision,
      message: "no reconcile function of this deployment has started yet",
    };
  }
  const revision = `revision ${status.currentRevision}: driftless ${status.currentVersion} (${status.currentIdentifier})`;
  const kinds = status.activatedKinds;
  if (kinds && kinds.length === 0) {
    return {
      type,
      status: "False",
      reason: ProviderReason.NoActiveKinds,
      message: `${revision}; no kind it serves has a CRD (driftless crds apply)`,
    };
  }
  return {
    type,
    status: "True",
    reason: ProviderReason.ActiveRevision,
    message: kinds ? `${revision}; ${kinds.length} kinds activated` : revision,
  };
}

/** Healthy before any sweep has looked. */
const awaitingHealthCheck: NewCondition = {
  type: ProviderConditionType.Healthy,
  status: "Unknown",
  reason: ProviderReason.AwaitingHealthCheck,
  message: "the drift sweep has not checked this deployment yet",
};

/**
 * The status write that records `identity` as a new revision, or undefined when there is nothing to
 * write: it is the current revision already, or an older one (a container still running the last deploy).
 */
export function revisionUpdate(
  obj: Pick<ProviderObject, "spec" | "status">,
  identity: DeploymentIdentity,
  now: Date,
): ProviderStatus | undefined {
  const status = obj.status ?? {};
  const history = status.revisions ?? [];
  if (
    status.currentRevision !== undefined &&
    status.currentVersion === identity.version &&
    status.currentIdentifier === identity.identifier
  )
    return undefined;
  if (history.some((r) => same(r, identity))) return undefined;
  const revision = Math.max(status.currentRevision ?? 0, ...history.map((r) => r.revision)) + 1;
  const limit = obj.spec?.revisionHistoryLimit ?? DEFAULT_REVISION_HISTORY_LIMIT;
  const next: ProviderStatus = {
    currentRevision: revision,
    currentVersion: identity.version,
    currentIdentifier: identity.identifier,
    revisions: [
      {
        revision,
        version: identity.version,
        identifier: identity.identifier,
        activatedAt: now.toISOString(),
      },
      ...history,
    ].slice(0, limit),
  };
  const healthy = status.conditions?.some((c) => c.type === ProviderConditionType.Healthy);
  next.conditions = setConditions(
    status.conditions,
    [
      installedCondition({
        ...next,
        ...(status.activatedKinds ? { activatedKinds: status.activatedKinds } : {}),
      }),
      ...(healthy ? [] : [awaitingHealthCheck]),
    ],
    now,
  );
  return next;
}

export interface RegisterOptions {
  cloud: ProviderCloud;
  identity: DeploymentIdentity;
  labelSelector?: string | undefined;
  /** Default providerName(cloud, labelSelector). */
  name?: string | undefined;
  now?: Date;
}

export type RegisterResult =
  | { outcome: "created" | "revision"; name: string; revision: number }
  | { outcome: "unchanged" | "older"; name: string; revision: number | undefined }
  | { outcome: "no-crd"; name: string };

/** A new Provider: spec only (the API server drops status on create). */
export function newProvider(name: string, cloud: ProviderCloud, labelSelector?: string): ProviderObject {
  return {
    apiVersion: Provider.apiVersion,
    kind: Provider.kind,
    metadata: { name, labels: { "app.kubernetes.io/part-of": "driftless" } },
    spec: { cloud, ...(labelSelector ? { labelSelector } : {}) },
  };
}

/**
 * Gets the Provider, creating it when absent; undefined when its CRD is not installed. One GET; a second
 * only when another container created it between our GET and our create.
 */
export async function ensureProvider(
  kube: Kube,
  name: string,
  cloud: ProviderCloud,
  labelSelector?: string,
): Promise<{ provider: ProviderObject; created: boolean } | undefined> {
  const found = await kube.get<ProviderObject>(Provider, name);
  if (found) return { provider: found, created: false };
  try {
    return { provider: await kube.create(Provider, newProvider(name, cloud, labelSelector)), created: true };
  } catch (err) {
    if (statusOf(err) === 404) return undefined;
    if (statusOf(err) !== 409) throw err;
    const raced = await kube.get<ProviderObject>(Provider, name);
    return raced ? { provider: raced, created: false } : undefined;
  }
}

/** Records the running version on the deployment's Provider (see the top of this file). */
export async function registerProvider(kube: Kube, o: RegisterOptions): Promise<RegisterResult> {
  // Writes name driftless's field manager: the doorbell never serves Providers, and would drop them anyway.
  const writer = kube.fieldManager === FIELD_MANAGER ? kube : new Kube(kube, { fieldManager: FIELD_MANAGER });
  const name = o.name ?? providerName(o.cloud, o.labelSelector);
  const got = await ensureProvider(writer, name, o.cloud, o.labelSelector);
  if (!got) return { outcome: "no-crd", name };
  const current = got.provider.status?.currentRevision;
  const update = revisionUpdate(got.provider, o.identity, o.now ?? new Date());
  if (!update) {
    const status = got.provider.status ?? {};
    const isCurrent =
      status.currentVersion === o.identity.version && status.currentIdentifier === o.identity.identifier;
    return { outcome: isCurrent ? "unchanged" : "older", name, revision: current };
  }
  await writer.patchStatus(Provider, name, update);
  return { outcome: got.created ? "created" : "revision", name, revision: update.currentRevision ?? 1 };
}

/**
 * registerProvider for a function's start: logs the outcome and never throws — a missing CRD, missing
 * RBAC or an unreachable API server must not keep a function from reconciling.
 */
export async function registerProviderQuietly(
  kube: Kube,
  o: RegisterOptions,
  logger: ReconcileLogger,
): Promise<RegisterResult | undefined> {
  try {
    const r = await registerProvider(kube, o);
    const fields = { provider: r.name, identifier: o.identity.identifier, version: o.identity.version };
    if (r.outcome === "no-crd") {
      logger.info(fields, `Provider CRD ${Provider.plural}.${Provider.group} not installed; not registered`);
    } else if (r.outcome === "created" || r.outcome === "revision") {
      logger.info({ ...fields, revision: r.revision }, "provider revision recorded");
    } else if (r.outcome === "older") {
      logger.warn(
        { ...fields, revision: r.revision },
        "a newer revision is current: this container runs an older one (draining after a deploy?)",
      );
    }
    return r;
  } catch (err) {
    logger.warn(
      { provider: o.name ?? providerName(o.cloud, o.labelSelector), error: (err as Error).message },
      "cannot record the provider revision",
    );
    return undefined;
  }
}
