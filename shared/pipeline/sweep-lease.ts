// One sweep per window, however many sweep containers run: a coordination.k8s.io/v1 Lease per deployment
// (per label selector) records the last window a sweep claimed and the last one sent in full.
//
// A sweep claims its window with a write guarded by the Lease's resourceVersion, so of two sweeps racing
// on one tick (an overlapping invocation, a platform retry, concurrency above 1) exactly one wins and the
// other sends nothing. The winner is told the last window sent in full: a warm container whose index missed
// the other containers' runs files those windows' slots as handled instead of sending them again.
// A claim that was never finished (its container died) blocks a rerun of the same window only for the
// Lease's duration; the next tick's window is claimed anyway, and an index takes every slot up to it.
// No process stays up for this: the Lease is read and written by the sweeps themselves.
import { createHash, randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { SYSTEM_NAMESPACE } from "../api/claims/meta.ts";
import type { ResourceType } from "../api/meta.ts";
import { isConflict, type Kube, type KubeObject } from "../kube/client.ts";

export const LEASE: ResourceType = {
  group: "coordination.k8s.io",
  version: "v1",
  kind: "Lease",
  plural: "leases",
  namespaced: true,
};

const CLAIMED = "driftless.dev/sweep-claimed-window";
const DONE = "driftless.dev/sweep-done-window";
/** Lambda's longest timeout: a live sweep is never taken over, a dead one blocks its own window this long. */
export const DEFAULT_SWEEP_LEASE_TTL_MS = 15 * 60_000;
/** Guarded writes lost to another sweep before this one gives up (each loss re-reads the Lease). */
const ATTEMPTS = 4;

export interface SweepLeaseRef {
  namespace: string;
  name: string;
}

/** What a sweep's Lease says. */
export interface SweepLeaseState {
  /** The last window end claimed, and the last one whose sweep sent everything. */
  claimedUpTo: number | undefined;
  doneUpTo: number | undefined;
  holder: string | undefined;
  /** When the claim was written and how long it holds, ms. */
  renewMs: number | undefined;
  ttlMs: number | undefined;
  resourceVersion: string;
}

export type SweepClaimDecision =
  | "claim"
  /** This window was swept already (a second delivery of the tick). */
  | "done"
  /** Another sweep holds this window now. */
  | "held"
  /** A later window was claimed: this tick is late, and the later sweep covers it. */
  | "newer";

/** Whether a sweep may take window `windowEndMs` (pure: the Lease as read, the wall clock). */
export function sweepClaimDecision(
  state: SweepLeaseState | undefined,
  windowEndMs: number,
  nowMs: number,
): SweepClaimDecision {
  const claimed = state?.claimedUpTo;
  if (claimed === undefined || claimed < windowEndMs) return "claim";
  if (claimed > windowEndMs) return "newer";
  if ((state?.doneUpTo ?? -Infinity) >= windowEndMs) return "done";
  const expires = (state?.renewMs ?? 0) + (state?.ttlMs ?? 0);
  return expires > nowMs ? "held" : "claim";
}

export type SweepClaim =
  | {
      won: true;
      windowEndMs: number;
      /** The last window every sweep before this one sent in full: its slots need not be sent again. */
      handledUpTo: number | undefined;
      /** The claim this one replaced, put back if this sweep fails (so a retry of the tick may run). */
      previousClaim: number | undefined;
      /** The Lease as this claim wrote it. */
      state: SweepLeaseState;
    }
  | { won: false; windowEndMs: number; reason: Exclude<SweepClaimDecision, "claim"> };

export interface LeaseObject extends KubeObject {
  spec?: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
  };
}

/**
 * The write of a read-change-write on a Lease: `change` (a JSON merge patch of annotations and spec; null
 * removes) written over the Lease as it was `read` (guarded by that resourceVersion), or the Lease created
 * with it when `read` found none. Another writer first → a 409 (isConflict): the caller reads again and
 * decides again. The sweeps' claims use it, and so does the test kit's lock on shared CRDs.
 */
export function writeLease(
  kube: Kube,
  ref: SweepLeaseRef,
  read: { resourceVersion?: string | undefined } | undefined,
  change: { annotations?: Record<string, string | null>; spec?: LeaseObject["spec"] },
): Promise<LeaseObject> {
  if (!read)
    return kube.create<LeaseObject>(LEASE, {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: ref.name, namespace: ref.namespace, annotations: present(change.annotations) },
      spec: present(change.spec) ?? {},
    });
  return kube.patch<LeaseObject>(
    LEASE,
    ref.name,
    {
      ...(change.annotations ? { metadata: { annotations: change.annotations } } : {}),
      ...(change.spec ? { spec: change.spec } : {}),
    },
    { resourceVersion: read.resourceVersion ?? "", namespace: ref.namespace },
  );
}

/** A merge patch's fields without its removals (null): what a new object is created with. */
function present<V>(o: Record<string, V | null> | undefined): Record<string, V> | undefined {
  return o && Object.fromEntries(Object.entries(o).filter((e): e is [string, V] => e[1] !== null));
}

const numberOf = (s: string | undefined) => {
  const n = s === undefined ? Number.NaN : Number(s);
  return Number.isFinite(n) ? n : undefined;
};

function stateOf(lease: LeaseObject): SweepLeaseState {
  const a = lease.metadata.annotations ?? {};
  const renew = lease.spec?.renewTime ? Date.parse(lease.spec.renewTime) : Number.NaN;
  return {
    claimedUpTo: numberOf(a[CLAIMED]),
    doneUpTo: numberOf(a[DONE]),
    holder: lease.spec?.holderIdentity ?? undefined,
    renewMs: Number.isNaN(renew) ? undefined : renew,
    ttlMs: lease.spec?.leaseDurationSeconds ? lease.spec.leaseDurationSeconds * 1000 : undefined,
    resourceVersion: lease.metadata.resourceVersion ?? "",
  };
}

/** Kubernetes' MicroTime: RFC 3339 with six fractional digits. */
const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");

export async function readSweepLease(kube: Kube, ref: SweepLeaseRef): Promise<SweepLeaseState | undefined> {
  const lease = await kube.get<LeaseObject>(LEASE, ref.name, ref.namespace);
  return lease ? stateOf(lease) : undefined;
}

/**
 * Claims window `windowEndMs` for `holder`, or says why not. `known`: the Lease as this container last
 * wrote it; when it allows the claim, the guarded write is tried without a read first (one request when no
 * other container wrote since). Anything else is decided on a fresh read.
 */
export async function claimSweepWindow(
  kube: Kube,
  ref: SweepLeaseRef & { holder: string },
  windowEndMs: number,
  opts: { ttlMs?: number | undefined; nowMs?: () => number; known?: SweepLeaseState | undefined } = {},
): Promise<SweepClaim> {
  const now = opts.nowMs ?? Date.now;
  const ttlS = Math.ceil((opts.ttlMs ?? DEFAULT_SWEEP_LEASE_TTL_MS) / 1000);
  let known = opts.known;
  for (let attempt = 1; ; attempt++) {
    const state =
      known && sweepClaimDecision(known, windowEndMs, now()) === "claim"
        ? known
        : await readSweepLease(kube, ref);
    known = undefined;
    const decision = sweepClaimDecision(state, windowEndMs, now());
    if (decision !== "claim") return { won: false, windowEndMs, reason: decision };
    const at = microTime(now());
    const spec = { holderIdentity: ref.holder, leaseDurationSeconds: ttlS, acquireTime: at, renewTime: at };
    try {
      const written = await writeLease(kube, ref, state, {
        annotations: { [CLAIMED]: String(windowEndMs) },
        spec,
      });
      return {
        won: true,
        windowEndMs,
        handledUpTo: state?.doneUpTo,
        previousClaim: state?.claimedUpTo,
        state: stateOf(written),
      };
    } catch (err) {
      // Another sweep wrote first (409: changed since read, or created meanwhile): read again and decide.
      if (!isConflict(err) || attempt >= ATTEMPTS) throw err;
    }
  }
}

/**
 * After the claimed sweep: sent in full, the window is recorded as done; otherwise the claim is put back,
 * so the platform's retry of the same tick may claim it again. Written over the claim's own state first
 * (one request), read again only when another sweep wrote meanwhile. Returns the Lease as written.
 */
export async function finishSweepWindow(
  kube: Kube,
  ref: SweepLeaseRef & { holder: string },
  claim: Extract<SweepClaim, { won: true }>,
  sentInFull: boolean,
): Promise<SweepLeaseState | undefined> {
  let state: SweepLeaseState | undefined = claim.state;
  for (let attempt = 1; ; attempt++) {
    state ??= await readSweepLease(kube, ref);
    if (!state) return undefined;
    let annotations: Record<string, string | null>;
    if (sentInFull) {
      if ((state.doneUpTo ?? -Infinity) >= claim.windowEndMs) return state;
      annotations = { [DONE]: String(claim.windowEndMs) };
    } else {
      // Someone claimed since (a later tick, or this window after the claim expired): theirs stands.
      if (state.claimedUpTo !== claim.windowEndMs || state.holder !== ref.holder) return state;
      annotations = { [CLAIMED]: claim.previousClaim === undefined ? null : String(claim.previousClaim) };
    }
    try {
      return stateOf(await writeLease(kube, ref, state, { annotations }));
    } catch (err) {
      if (!isConflict(err) || attempt >= ATTEMPTS) throw err;
      state = undefined;
    }
  }
}

/** The Lease of one sweep deployment: one per label selector, in driftless-system. */
export function sweepLeaseOf(labelSelector: string | undefined): SweepLeaseRef & { holder: string } {
  const suffix = labelSelector
    ? `-${createHash("sha256").update(labelSelector).digest("hex").slice(0, 12)}`
    : "";
  return {
    namespace: SYSTEM_NAMESPACE,
    name: `driftless-sweep${suffix}`,
    // One per container: a claim names the container that holds it.
    holder: `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
  };
}
