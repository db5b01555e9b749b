// Provider health, from what the drift sweep already reads: while it lists every managed resource and
// ProviderConfig page by page, a tally counts their Synced and Ready conditions; afterwards one GET of
// each cloud's Provider, and a status PATCH only when what it shows changed (or the heartbeat is due).
//
// Healthy=False, first reason wins, every problem in the message:
// - SweepFailed: the sweep could not list or enqueue some kinds (the rest of the status is left as it was);
// - ProviderConfigRefused: a ProviderConfig's credential check failed (its Ready=False, not InUse);
// - DeadLetters: the dead-letter queue holds messages (SQS), or messages were dead-lettered since the
//   last check (driftless run); Pub/Sub cannot tell cheaply, so it is not counted there;
// - NoSuccessfulReconcile: managed resources exist, none is Synced=True, and some failed.
// A single failing resource is the resource's problem (its own Synced condition), not the deployment's.
import type { ManagedKindProvider, ProviderConfigKind } from "../api/external.ts";
import { isObject } from "../api/json.ts";
import type { Condition, ResourceType } from "../api/meta.ts";
import {
  Provider,
  ProviderConditionType,
  type ProviderObject,
  ProviderReason,
  type ProviderStatus,
} from "../api/pkg/provider.ts";
import { FIELD_MANAGER, Kube, type KubeObject, type ListPage, statusOf } from "../kube/client.ts";
import { deepEqual } from "../reconciler/compare.ts";
import { setConditions } from "../reconciler/conditions.ts";
import type { NewCondition, ReconcileLogger } from "../reconciler/contract.ts";
import {
  ensureProvider,
  installedCondition,
  type ProviderCloud,
  providerName,
  registerProviderQuietly,
  runIdentity,
} from "./provider.ts";

/** lastHealthCheckTime is refreshed this often even when nothing changed: a stopped sweep shows. */
export const DEFAULT_HEALTH_HEARTBEAT_MS = 30 * 60_000;
/** Refused ProviderConfigs named in the Healthy message; the rest are counted. */
const MAX_NAMED = 3;
const MAX_DETAIL = 200;

/** What one health check saw of one cloud's kinds. */
export interface ProviderObservation {
  /** CRD names of the managed kinds that could be listed (their CRD is installed), sorted. */
  activatedKinds: string[];
  resources: NonNullable<ProviderStatus["resources"]>;
  providerConfigs: { total: number; ready: number; refused: string[] };
  /** `name: message` of each refused ProviderConfig, for the Healthy message. */
  refusedDetails: string[];
}

interface KindCounts {
  total: number;
  synced: number;
  failing: number;
  paused: number;
  lastSyncedMs: number;
  ready: number;
  refused: Map<string, string>;
}

const emptyCounts = (): KindCounts => ({
  total: 0,
  synced: 0,
  failing: 0,
  paused: 0,
  lastSyncedMs: 0,
  ready: 0,
  refused: new Map(),
});

const crdOf = (t: Pick<ResourceType, "plural" | "group">) => `${t.plural}.${t.group}`;
const conditionOf = (o: KubeObject, type: string): Condition | undefined =>
  ((o.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === type);

/** The kinds whose objects feed each cloud's Provider: managed kinds and ProviderConfig kinds. */
export interface HealthKinds {
  kinds: readonly Pick<ManagedKindProvider, "definition">[];
  providerConfigKinds: readonly Pick<ProviderConfigKind, "type" | "cloud">[];
}

/** Counts conditions of the pages a sweep lists; types it was not told about (claims…) are ignored. */
export class ProviderHealthTally {
  readonly #roles = new Map<string, { cloud: ProviderCloud; providerConfig: boolean }>();
  readonly #counts = new Map<string, KindCounts>();

  constructor(kinds: HealthKinds) {
    for (const k of kinds.kinds)
      this.#roles.set(crdOf(k.definition), { cloud: k.definition.cloud, providerConfig: false });
    for (const k of kinds.providerConfigKinds)
      this.#roles.set(crdOf(k.type), { cloud: k.cloud as ProviderCloud, providerConfig: true });
  }

  /** The clouds with at least one managed kind. */
  clouds(): ProviderCloud[] {
    return [...new Set([...this.#roles.values()].filter((r) => !r.providerConfig).map((r) => r.cloud))];
  }

  /** One list page; `firstPage` starts the kind over (a relist after 410 must not count twice). */
  observe(t: ResourceType, items: readonly KubeObject[], firstPage: boolean): void {
    const key = crdOf(t);
    const role = this.#roles.get(key);
    if (!role) return;
    const counts = firstPage ? emptyCounts() : (this.#counts.get(key) ?? emptyCounts());
    this.#counts.set(key, counts);
    for (const o of items) {
      if (role.providerConfig) {
        const ready = conditionOf(o, "Ready");
        counts.total++;
        if (ready?.status === "True") counts.ready++;
        // InUse: a deletion waiting for its users, not a credential problem.
        else if (ready?.status === "False" && ready.reason !== "InUse") {
          const name = o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
          counts.refused.set(name, ready.message ?? ready.reason);
        }
        continue;
      }
      const synced = conditionOf(o, "Synced");
      if (synced?.status === "False" && synced.reason === "ReconcilePaused") {
        counts.paused++;
        continue;
      }
      counts.total++;
      if (synced?.status === "True") {
        counts.synced++;
        const at = Date.parse(synced.lastTransitionTime);
        if (at > counts.lastSyncedMs) counts.lastSyncedMs = at;
      } else if (synced?.status === "False") counts.failing++;
    }
  }

  /** What was seen of one cloud's kinds. */
  observation(cloud: ProviderCloud): ProviderObservation {
    const activatedKinds: string[] = [];
    const total = emptyCounts();
    let pcs = 0;
    for (const [key, role] of this.#roles) {
      const c = this.#counts.get(key);
      if (role.cloud !== cloud || !c) continue;
      if (role.providerConfig) {
        pcs += c.total;
        total.ready += c.ready;
        for (const [n, m] of c.refused) total.refused.set(n, m);
        continue;
      }
      activatedKinds.push(key);
      total.total += c.total;
      total.synced += c.synced;
      total.failing += c.failing;
      total.paused += c.paused;
      total.lastSyncedMs = Math.max(total.lastSyncedMs, c.lastSyncedMs);
    }
    const refused = [...total.refused.keys()].sort();
    return {
      activatedKinds: activatedKinds.sort(),
      resources: {
        total: total.total,
        synced: total.synced,
        failing: total.failing,
        paused: total.paused,
        ...(total.lastSyncedMs > 0 ? { lastSyncedTime: new Date(total.lastSyncedMs).toISOString() } : {}),
      },
      providerConfigs: { total: pcs, ready: total.ready, refused },
      refusedDetails: refused.map((n) => `${n}: ${(total.refused.get(n) ?? "").slice(0, MAX_DETAIL)}`),
    };
  }
}

/** A Kube whose lists also feed a tally: hand it to the sweep, and the sweep's own pages are counted. */
export function tallyingKube(base: Kube, tally: ProviderHealthTally): Kube {
  return new TallyingKube(base, tally);
}

class TallyingKube extends Kube {
  readonly #base: Kube;
  readonly #tally: ProviderHealthTally;

  constructor(base: Kube, tally: ProviderHealthTally) {
    super(base, base.fieldManager ? { fieldManager: base.fieldManager } : {});
    this.#base = base;
    this.#tally = tally;
  }

  // Through the base's own list: a base that counts or decorates its lists (ops/sweep.ts) still does.
  override async list<T extends KubeObject>(
    t: ResourceType,
    opts: Parameters<Kube["list"]>[1] = {},
  ): Promise<ListPage<T>> {
    const page = await this.#base.list<T>(t, opts);
    this.#tally.observe(t, page.items, !opts.continue);
    return page;
  }
}

/** The Healthy condition for what a check saw (see the rules at the top of this file). */
export function healthCondition(
  o: ProviderObservation | undefined,
  deadLetters: number | undefined,
  sweepError?: string,
): NewCondition {
  const problems: Array<{ reason: string; message: string }> = [];
  if (sweepError) problems.push({ reason: ProviderReason.SweepFailed, message: sweepError.slice(0, 400) });
  if (o && o.refusedDetails.length > 0) {
    const named = o.refusedDetails.slice(0, MAX_NAMED).map((d) => `ProviderConfig ${d}`);
    const more = o.refusedDetails.length - named.length;
    problems.push({
      reason: ProviderReason.ProviderConfigRefused,
      message: `${named.join("; ")}${more > 0 ? `; and ${more} more` : ""}`,
    });
  }
  if (deadLetters !== undefined && deadLetters > 0)
    problems.push({ reason: ProviderReason.DeadLetters, message: `${deadLetters} dead-lettered messages` });
  const r = o?.resources;
  if (r && r.total > 0 && r.synced === 0 && r.failing > 0)
    problems.push({
      reason: ProviderReason.NoSuccessfulReconcile,
      message: `none of ${r.total} managed resources is synced and ${r.failing} fail (see their Synced conditions)`,
    });
  const type = ProviderConditionType.Healthy;
  const first = problems[0];
  if (first)
    return {
      type,
      status: "False",
      reason: first.reason,
      message: problems.map((p) => p.message).join("; "),
    };
  if (!o) return { type, status: "Unknown", reason: ProviderReason.AwaitingHealthCheck };
  const parts = [
    `${r?.synced ?? 0} of ${r?.total ?? 0} managed resources synced${r?.failing ? `, ${r.failing} failing` : ""}`,
    `${o.providerConfigs.ready} of ${o.providerConfigs.total} ProviderConfigs ready`,
    ...(deadLetters === undefined ? [] : ["no dead letters"]),
  ];
  return { type, status: "True", reason: ProviderReason.HealthyDeployment, message: parts.join("; ") };
}

export interface ReportOptions {
  cloud: ProviderCloud;
  labelSelector?: string | undefined;
  /** Default providerName(cloud, labelSelector). */
  name?: string | undefined;
  /** What the check saw; absent when the sweep failed (then only Healthy changes). */
  observation?: ProviderObservation | undefined;
  sweepError?: string | undefined;
  /** Dead letters, when the queue can tell; undefined: not known. */
  deadLetters?: number | undefined;
  now?: Date;
  heartbeatMs?: number;
}

export type ReportResult =
  | { outcome: "written" | "unchanged"; name: string; healthy: Condition["status"] }
  | { outcome: "no-crd"; name: string };

/**
 * The JSON merge patch (RFC 7386) that turns `current` into `desired`: changed keys, nested objects by
 * key, and null for keys `desired` no longer has. Arrays are replaced whole.
 */
export function mergePatchOf(current: unknown, desired: unknown): Record<string, unknown> {
  const from = isObject(current) ? current : {};
  const to = isObject(desired) ? desired : {};
  const patch: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(to)) {
    if (v === undefined || deepEqual(v, from[k])) continue;
    patch[k] = isObject(v) && isObject(from[k]) ? mergePatchOf(from[k], v) : v;
  }
  for (const [k, v] of Object.entries(from)) if (v !== undefined && to[k] === undefined) patch[k] = null;
  return patch;
}

/** The status fields a check owns (the revision fields are registration's). */
const HEALTH_FIELDS = ["activatedKinds", "resources", "providerConfigs", "deadLetters"] as const;

/** Writes one cloud's health to its Provider when it changed (one GET; a PATCH only then). */
export async function reportProviderHealth(kube: Kube, o: ReportOptions): Promise<ReportResult> {
  const writer = kube.fieldManager === FIELD_MANAGER ? kube : new Kube(kube, { fieldManager: FIELD_MANAGER });
  const name = o.name ?? providerName(o.cloud, o.labelSelector);
  const got = await ensureProvider(writer, name, o.cloud, o.labelSelector);
  if (!got) return { outcome: "no-crd", name };
  const now = o.now ?? new Date();
  const status: ProviderStatus = got.provider.status ?? {};
  const fields: Partial<ProviderStatus> = o.observation
    ? {
        activatedKinds: o.observation.activatedKinds,
        resources: o.observation.resources,
        providerConfigs: {
          total: o.observation.providerConfigs.total,
          ready: o.observation.providerConfigs.ready,
          ...(o.observation.providerConfigs.refused.length > 0
            ? { refused: o.observation.providerConfigs.refused }
            : {}),
        },
        ...(o.deadLetters !== undefined ? { deadLetters: o.deadLetters } : {}),
      }
    : {};
  const healthy = healthCondition(o.observation, o.deadLetters, o.sweepError);
  const conditions = setConditions(
    status.conditions,
    [installedCondition({ ...status, ...fields }), healthy],
    now,
  );
  const patch: Record<string, unknown> = {};
  if (!deepEqual(conditions, status.conditions ?? [])) patch.conditions = conditions;
  if (o.observation) {
    // A field no longer known (the dead-letter count, a refused list now empty) is removed, not left stale.
    const current = Object.fromEntries(HEALTH_FIELDS.map((f) => [f, status[f]]));
    Object.assign(patch, mergePatchOf(current, fields));
  }
  const last = status.lastHealthCheckTime ? Date.parse(status.lastHealthCheckTime) : Number.NaN;
  const heartbeatDue = !(now.getTime() - last < (o.heartbeatMs ?? DEFAULT_HEALTH_HEARTBEAT_MS));
  if (Object.keys(patch).length === 0 && !heartbeatDue)
    return { outcome: "unchanged", name, healthy: healthy.status };
  await writer.patchStatus<ProviderObject>(Provider, name, {
    ...patch,
    lastHealthCheckTime: now.toISOString(),
  });
  return { outcome: "written", name, healthy: healthy.status };
}

export interface ProviderHealthSetup extends HealthKinds {
  labelSelector?: string | undefined;
  /** The dead-letter count, when the queue can tell cheaply (SQS: one GetQueueAttributes). */
  deadLetters?: () => Promise<number | undefined>;
  logger: ReconcileLogger;
  heartbeatMs?: number;
  /** The reports' clock (tests); default now. */
  now?: () => Date;
}

const deadLetterWarned = new WeakSet<ProviderHealthSetup>();

/** Reports every cloud's health, logging (never throwing) what fails: health must not fail a sweep. */
async function reportAll(
  kube: Kube,
  setup: ProviderHealthSetup,
  tally: ProviderHealthTally,
  sweepError?: string,
): Promise<ReportResult[]> {
  let deadLetters: number | undefined;
  if (!sweepError && setup.deadLetters) {
    deadLetters = await setup.deadLetters().catch((err: unknown) => {
      // Once per setup (container): a missing permission would otherwise warn every sweep.
      const level = deadLetterWarned.has(setup) ? "debug" : "warn";
      deadLetterWarned.add(setup);
      setup.logger[level](
        { error: (err as Error).message },
        "cannot read the dead-letter queue's depth; the Provider leaves it out",
      );
      return undefined;
    });
  }
  const out: ReportResult[] = [];
  for (const cloud of tally.clouds()) {
    try {
      const r = await reportProviderHealth(kube, {
        cloud,
        labelSelector: setup.labelSelector,
        ...(sweepError ? { sweepError } : { observation: tally.observation(cloud) }),
        deadLetters,
        ...(setup.heartbeatMs !== undefined ? { heartbeatMs: setup.heartbeatMs } : {}),
        ...(setup.now ? { now: setup.now() } : {}),
      });
      if (r.outcome === "written")
        setup.logger.info({ provider: r.name, healthy: r.healthy }, "provider health written");
      out.push(r);
    } catch (err) {
      const level = statusOf(err) === 403 ? "warn" : "error";
      setup.logger[level](
        { provider: providerName(cloud, setup.labelSelector), error: (err as Error).message },
        "cannot write the provider's health",
      );
    }
  }
  return out;
}

/**
 * Runs a drift sweep through a tallying client, then reports each cloud's health. The sweep's own
 * result or error is returned or rethrown unchanged; a failed sweep is reported as SweepFailed.
 */
export async function sweepWithProviderHealth<R>(
  kube: Kube,
  setup: ProviderHealthSetup,
  sweep: (kube: Kube, tally: ProviderHealthTally) => Promise<R>,
): Promise<R> {
  const tally = new ProviderHealthTally(setup);
  let result: R;
  try {
    // A warm sweep lists nothing: it hands the tally each kind's indexed objects itself.
    result = await sweep(tallyingKube(kube, tally), tally);
  } catch (err) {
    await reportAll(kube, setup, tally, `drift sweep failed: ${(err as Error).message}`);
    throw err;
  }
  await reportAll(kube, setup, tally);
  return result;
}

/** Objects per page when a health check lists on its own (no sweep to ride along with). */
const OWN_PAGE_SIZE = 500;

/**
 * A health check that lists by itself, for processes whose sweep cannot carry a tally: every managed and
 * ProviderConfig kind page by page (a kind without a CRD is not activated), then the reports.
 */
export async function checkProviderHealth(kube: Kube, setup: ProviderHealthSetup): Promise<ReportResult[]> {
  const tally = new ProviderHealthTally(setup);
  const counting = tallyingKube(kube, tally);
  const types = [...setup.kinds.map((k) => k.definition), ...setup.providerConfigKinds.map((k) => k.type)];
  const listKind = async (t: ResourceType) => {
    let cont: string | undefined;
    do {
      const page = await counting.list(t, {
        limit: OWN_PAGE_SIZE,
        ...(cont ? { continue: cont } : {}),
        ...(setup.labelSelector ? { labelSelector: setup.labelSelector } : {}),
      });
      cont = page.continue;
    } while (cont);
  };
  for (const t of types) {
    try {
      // 410: the continue token outlived etcd compaction; the first page starts the kind's counts over.
      await listKind(t).catch((err: unknown) => {
        if (statusOf(err) !== 410) throw err;
        return listKind(t);
      });
    } catch (err) {
      if (statusOf(err) === 404) continue;
      return reportAll(kube, setup, tally, `cannot list ${t.kind}: ${(err as Error).message}`);
    }
  }
  return reportAll(kube, setup, tally);
}

/** How often `driftless run` checks its Providers' health (each check lists every kind once more). */
export const DEFAULT_RUN_HEALTH_INTERVAL_MS = 5 * 60_000;

/** checkProviderHealth now and then every `intervalMs`, one at a time, until stopped. */
export function startProviderHealthChecks(
  kube: Kube,
  setup: ProviderHealthSetup,
  intervalMs: number = DEFAULT_RUN_HEALTH_INTERVAL_MS,
): { checkNow(): Promise<void>; stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const checkNow = (): Promise<void> => {
    running ??= checkProviderHealth(kube, setup)
      .then(
        () => undefined,
        (err: unknown) =>
          setup.logger.error({ error: (err as Error).message }, "provider health check failed"),
      )
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const timer = setInterval(() => void checkNow(), intervalMs);
  timer.unref();
  void checkNow();
  return {
    checkNow,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

export interface RunProvidersOptions {
  kube: Kube;
  /** The activated managed kinds the process serves: one Provider per cloud among them. */
  kinds: readonly Pick<ManagedKindProvider, "definition">[];
  providerConfigKinds: readonly Pick<ProviderConfigKind, "type" | "cloud">[];
  labelSelector?: string | undefined;
  logger: ReconcileLogger;
  /** The memory queue's dead-letter count since start: each check reports the ones since the last. */
  deadLettered?: () => number;
  intervalMs?: number;
}

/**
 * `driftless run`: registers the running version on each served cloud's Provider, then checks their
 * health on a timer (its sweep lists without a tally, so the check lists on its own; see operations.md).
 */
export async function startRunProviders(o: RunProvidersOptions): Promise<{ stop(): Promise<void> }> {
  const clouds = [...new Set(o.kinds.map((k) => k.definition.cloud))];
  for (const cloud of clouds) {
    await registerProviderQuietly(
      o.kube,
      { cloud, identity: runIdentity(), labelSelector: o.labelSelector },
      o.logger,
    );
  }
  let seen = o.deadLettered?.() ?? 0;
  const deadLettered = o.deadLettered;
  const checks = startProviderHealthChecks(
    o.kube,
    {
      kinds: o.kinds,
      providerConfigKinds: o.providerConfigKinds.filter((k) => clouds.includes(k.cloud as ProviderCloud)),
      labelSelector: o.labelSelector,
      logger: o.logger,
      ...(deadLettered
        ? {
            deadLetters: async () => {
              const now = deadLettered();
              const since = now - seen;
              seen = now;
              return since;
            },
          }
        : {}),
    },
    o.intervalMs,
  );
  return { stop: () => checks.stop() };
}
