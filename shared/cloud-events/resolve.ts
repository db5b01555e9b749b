// From a cloud's audit event to the keys of the managed resources it may have changed: the kinds that
// declare the call (api/cloud-events.ts), their external names in it, and one label-selected LIST per
// candidate kind (the external-key index label the engine writes) — of the shapes of a kind that may hold
// labelled objects (reconciler/shape-marks.ts), the one that found the kind's last event first (see
// #resolve). Only keys come out: the worker reads the truth itself (level-triggered), so a forged, late or
// duplicate event costs a reconcile, never harm.
//
// Dropped cheaply, before any LIST: driftless's own writes (the functions' own principals, derived at
// deploy time — never a User-Agent, which any caller may set), failed calls, calls no kind declares, calls
// naming no resource of a kind. An event about a resource driftless does not manage costs one LIST per
// shape of its kind in use, and finds nothing.

import type { ArmResourceCall } from "../api/cloud-events.ts";
import { EXTERNAL_KEY_LABEL, externalKeyOf } from "../api/cloud-events.ts";
import type { ManagedKindProvider } from "../api/external.ts";
import type { ManagedResource } from "../api/managed.ts";
import type { Kube } from "../kube/client.ts";
import { namedError } from "../named-error.ts";
import { noopLogger, type ReconcileLogger, type ResourceKey } from "../reconciler/contract.ts";
import { type RateLimit, TokenBucket } from "../reconciler/rate-limit.ts";
import {
  readShapeMarks,
  SHAPE_MARKS_CACHE_MS,
  type ShapeMarks,
  shapeKeyOf,
  shapeUseOf,
  writeShapeMark,
} from "../reconciler/shape-marks.ts";
import { type AuditLogEntry, auditLogCall } from "./audit-log.ts";
import { type CloudTrailEvent, cloudTrailCall, cloudTrailPrincipals } from "./cloudtrail.ts";

/** Label values one LIST selects at most (`key in (…)`): keeps the request URL short. */
export const MAX_VALUES_PER_LIST = 50;

/**
 * LISTs per second one source (an AWS account, a GCP project, an Azure subscription) may cost, per
 * container: a burst of a whole Event Grid delivery, then a steady rate. Over it, an event is retried later.
 */
export const DEFAULT_CLOUD_EVENT_RATE: RateLimit = { perSecond: 20, burst: 100 };
/** Sources remembered at most (their buckets); beyond it all start again full. */
const MAX_SOURCES = 1_000;

/** A source has used its LISTs for now: the event must come back later (queue redelivery, Event Grid retry). */
export class CloudEventsRateLimitedError extends namedError("CloudEventsRateLimitedError", Error) {}

export type DropReason =
  /** driftless made the call itself: one of its own principals called. */
  | "own-write"
  /** The call failed: nothing changed. */
  | "failed-call"
  /** No kind declares this call. */
  | "no-kind"
  /** Kinds declare the call but it names no resource of theirs (e.g. CreateTags of an instance). */
  | "no-resource"
  /** The LIST found no managed resource with that external name. */
  | "unknown-resource";

/** What an event resolved to: keys to reconcile, or why none. `lists`: LIST requests it cost. */
export type Resolution = { keys: ResourceKey[]; lists: number; dropped?: DropReason };

export interface CloudEventResolverOptions {
  /** LISTs; the shapes' marks (get, and create/patch of a shape verified unused or in use). */
  kube: Pick<Kube, "list" | "get" | "create" | "patch">;
  kinds: readonly ManagedKindProvider[];
  logger?: ReconcileLogger;
  /**
   * Identities whose calls are driftless's own — the only own-write filter (a User-Agent is the caller's
   * to choose): IAM role ARNs (AWS), service-account e-mails (GCP), object or application ids (Azure).
   */
  ownPrincipals?: readonly string[] | undefined;
  /** LISTs per second per source; default DEFAULT_CLOUD_EVENT_RATE. */
  rateLimit?: RateLimit | undefined;
  /** The clock the shapes' marks are cached by, ms; default Date.now. */
  now?: () => number;
}

interface Candidate {
  provider: ManagedKindProvider;
  names: string[];
}

const AZURE_OBJECT_ID_CLAIM = "http://schemas.microsoft.com/identity/claims/objectidentifier";

/** Resolves cloud audit events to the keys of the managed resources they are about. */
export class CloudEventResolver {
  readonly #kube: Pick<Kube, "list" | "get" | "create" | "patch">;
  readonly #kinds: readonly ManagedKindProvider[];
  readonly #logger: ReconcileLogger;
  readonly #own: ReadonlySet<string>;
  readonly #rate: RateLimit;
  readonly #sources = new Map<string, TokenBucket>();
  /** Per kind family, the shape whose LIST found the last event's resource (see #resolve). */
  readonly #lastHit = new Map<string, number>();
  readonly #now: () => number;
  /** The shapes' marks as last read or written, and when that request was sent (see #shapeMarks). */
  #marks: { marks: ShapeMarks; at: number } | undefined;
  /** A write of a mark failed (not a lost race): none is tried again before this time. */
  #noWritesUntil = 0;

  constructor(opts: CloudEventResolverOptions) {
    this.#kube = opts.kube;
    this.#now = opts.now ?? Date.now;
    this.#kinds = opts.kinds;
    this.#logger = opts.logger ?? noopLogger;
    this.#own = new Set((opts.ownPrincipals ?? []).map((p) => p.toLowerCase()));
    this.#rate = opts.rateLimit ?? DEFAULT_CLOUD_EVENT_RATE;
  }

  /** A CloudTrail event (EventBridge). Throws when a LIST fails: the caller retries the event. */
  async cloudTrail(e: CloudTrailEvent): Promise<Resolution> {
    const log = { source: e.source, eventName: e.detail.eventName, eventId: e.id };
    if (e.detail.errorCode) return this.#drop(log, "failed-call");
    if (this.#isOwn(cloudTrailPrincipals(e))) return this.#drop(log, "own-write");
    const call = cloudTrailCall(e);
    const candidates = this.#kinds.flatMap((provider): Candidate[] => {
      const d = provider.cloudEvents?.aws;
      if (!d || d.source !== e.source || !d.eventNames.includes(call.eventName)) return [];
      return [{ provider, names: d.externalNames(call) }];
    });
    return this.#resolve(log, candidates, `aws:${e.account ?? ""}`);
  }

  /** A Cloud Audit Logs entry. Throws when a LIST fails: the caller nacks the message. */
  async auditLog(e: AuditLogEntry): Promise<Resolution> {
    const p = e.protoPayload;
    const log = { serviceName: p.serviceName, methodName: p.methodName, insertId: e.insertId };
    if ((p.status?.code ?? 0) !== 0) return this.#drop(log, "failed-call");
    const principal = p.authenticationInfo?.principalEmail;
    if (this.#isOwn(principal ? [principal] : [])) return this.#drop(log, "own-write");
    const call = auditLogCall(e);
    const candidates = this.#kinds.flatMap((provider): Candidate[] => {
      const d = provider.cloudEvents?.gcp;
      if (!d || d.serviceName !== call.serviceName || !d.methodNames.includes(call.methodName)) return [];
      return [{ provider, names: d.externalNames(call) }];
    });
    return this.#resolve(log, candidates, `gcp:${/^projects\/([^/]+)/.exec(e.logName)?.[1] ?? ""}`);
  }

  /**
   * An Azure Resource Manager event (Event Grid ResourceWriteSuccess / ResourceDeleteSuccess). `claims`
   * and `principalId` say who called. Throws when a LIST fails.
   */
  async armResource(
    call: ArmResourceCall,
    who: { claims?: Record<string, unknown> | undefined; principalId?: string | undefined; id?: string },
  ): Promise<Resolution> {
    const log = { operationName: call.operationName, eventId: who.id };
    const claims = who.claims ?? {};
    const ids = [claims[AZURE_OBJECT_ID_CLAIM], claims.oid, claims.appid, claims.azp, who.principalId].filter(
      (v): v is string => typeof v === "string" && v !== "",
    );
    if (this.#isOwn(ids)) return this.#drop(log, "own-write");
    const op = call.operationName.toLowerCase();
    const candidates = this.#kinds.flatMap((provider): Candidate[] => {
      const d = provider.cloudEvents?.azure;
      if (!d?.operations.some((o) => o.toLowerCase() === op)) return [];
      return [{ provider, names: d.externalNames(call) }];
    });
    const subscription = /^\/subscriptions\/([^/]+)/i.exec(call.resourceUri)?.[1]?.toLowerCase() ?? "";
    return this.#resolve(log, candidates, `azure:${subscription}`);
  }

  /** One LIST's worth of the source's rate, or CloudEventsRateLimitedError. */
  #take(source: string) {
    let bucket = this.#sources.get(source);
    if (!bucket) {
      if (this.#sources.size >= MAX_SOURCES) this.#sources.clear();
      bucket = new TokenBucket(this.#rate);
      this.#sources.set(source, bucket);
    }
    if (!bucket.tryAcquire())
      throw new CloudEventsRateLimitedError(`cloud events of ${source} are over their rate; retry later`);
  }

  #isOwn(principals: readonly string[]): boolean {
    return principals.some((p) => this.#own.has(p.toLowerCase()));
  }

  #drop(log: Record<string, unknown>, why: DropReason, lists = 0): Resolution {
    this.#logger.debug({ ...log, dropped: why, lists }, "cloud event dropped");
    return { keys: [], lists, dropped: why };
  }

  async #resolve(log: Record<string, unknown>, candidates: Candidate[], source: string): Promise<Resolution> {
    if (candidates.length === 0) return this.#drop(log, "no-kind");
    const keys: ResourceKey[] = [];
    let lists = 0;
    // A kind's two shapes (cluster-scoped, namespaced) name the same cloud resources, and one managed
    // resource manages a cloud resource: only the shapes that may hold labelled objects are asked (their
    // marks, shape-marks.ts), the one that found this kind's last event first, the other only when it finds
    // nothing. A kind used in one shape: one LIST per event; in none: none.
    const families = new Map<string, Candidate[]>();
    for (const c of candidates) {
      const family = familyOf(c.provider.definition);
      families.set(family, [...(families.get(family) ?? []), c]);
    }
    for (const [family, shapes] of families) {
      const first = Math.min(this.#lastHit.get(family) ?? 0, shapes.length - 1);
      // With one shape declared there is nothing to choose: it is asked.
      const marks = shapes.length > 1 ? await this.#shapeMarks() : undefined;
      for (const at of shapes.keys()) {
        const shape = (first + at) % shapes.length;
        const candidate = shapes[shape] as Candidate;
        if (marks) {
          const use = shapeUseOf(marks.data[shapeKeyOf(candidate.provider.definition)]);
          if (use.state === "unused") continue;
          if (use.state === "absent") {
            lists++;
            // Over the marks as last known: this event may have written one already.
            if (!(await this.#verify(candidate, this.#marks?.marks ?? marks, source))) continue;
          }
        }
        const found = await this.#lookup(candidate, source);
        lists += found.lists;
        keys.push(...found.keys);
        if (found.keys.length > 0) {
          this.#lastHit.set(family, shape);
          break;
        }
      }
    }
    if (lists === 0) return this.#drop(log, "no-resource");
    if (keys.length === 0) return this.#drop(log, "unknown-resource", lists);
    this.#logger.info(
      { ...log, keys: keys.map((k) => `${k.kind}/${k.namespace ? `${k.namespace}/` : ""}${k.name}`), lists },
      "cloud event: reconciling",
    );
    return { keys, lists };
  }

  /**
   * The shapes' marks, read at most once per SHAPE_MARKS_CACHE_MS (counted from when the read was sent: the
   * engine waits longer than that after `pending` before a shape's first label). Unreadable: undefined, and
   * every shape is asked as if none had marks.
   */
  async #shapeMarks(): Promise<ShapeMarks | undefined> {
    const cached = this.#marks;
    if (cached && this.#now() - cached.at < SHAPE_MARKS_CACHE_MS) return cached.marks;
    const at = this.#now();
    try {
      const marks = await readShapeMarks(this.#kube);
      this.#marks = { marks, at };
      return marks;
    } catch (err) {
      this.#marks = undefined;
      this.#logger.warn(
        { error: (err as Error).message },
        "cannot read the shapes' marks: every shape is asked",
      );
      return undefined;
    }
  }

  /**
   * Whether a shape with no mark holds any labelled object now (one LIST, `limit=1`), recorded as its mark —
   * `unused` only over the marks as read, so an engine's mark written meanwhile wins (shape-marks.ts).
   */
  async #verify({ provider }: Candidate, marks: ShapeMarks, source: string): Promise<boolean> {
    const def = provider.definition;
    this.#take(source);
    const page = await this.#kube.list(def, { labelSelector: EXTERNAL_KEY_LABEL, limit: 1 });
    const holds = page.items.length > 0;
    if (this.#now() < this.#noWritesUntil) return holds;
    const at = this.#now();
    try {
      const written = await writeShapeMark(this.#kube, marks, shapeKeyOf(def), holds ? "in-use" : "unused");
      // Lost to another writer: read again at the next event.
      this.#marks = written ? { marks: written, at } : undefined;
    } catch (err) {
      this.#noWritesUntil = this.#now() + SHAPE_MARKS_CACHE_MS;
      this.#logger.warn(
        { kind: def.kind, group: def.group, error: (err as Error).message },
        "cannot record a shape's mark: shapes without one are checked at each event",
      );
    }
    return holds;
  }

  /** The managed resources of one kind whose index label names one of `names`: a label-selected LIST. */
  async #lookup(
    { provider, names }: Candidate,
    source: string,
  ): Promise<{ keys: ResourceKey[]; lists: number }> {
    const def = provider.definition;
    const keys: ResourceKey[] = [];
    let lists = 0;
    const values = [...new Set(names.map((n) => externalKeyOf(def, n)))];
    for (let at = 0; at < values.length; at += MAX_VALUES_PER_LIST) {
      const chunk = values.slice(at, at + MAX_VALUES_PER_LIST);
      const labelSelector =
        chunk.length === 1
          ? `${EXTERNAL_KEY_LABEL}=${chunk[0]}`
          : `${EXTERNAL_KEY_LABEL} in (${chunk.join(",")})`;
      this.#take(source);
      lists++;
      const page = await this.#kube.list<ManagedResource & { [k: string]: unknown }>(def, { labelSelector });
      for (const mr of page.items) {
        keys.push({
          apiVersion: def.apiVersion,
          kind: def.kind,
          name: mr.metadata.name,
          ...(mr.metadata.namespace ? { namespace: mr.metadata.namespace } : {}),
        });
      }
    }
    return { keys, lists };
  }
}

/** What a kind's cluster-scoped and namespaced shapes share (their groups differ). */
const familyOf = (def: { cloud: string; kind: string; plural: string; version: string }) =>
  `${def.cloud}/${def.plural}/${def.version}/${def.kind}`;
