// The forwarder: watches every managed-resource kind and forwards *keys* (never objects) to the queue.
//
// Per kind: list (paged) → forward keys whose state is new or changed → watch from the list's
// resourceVersion with bookmarks → on a closed or failed watch, resume from the last resourceVersion
// (exponential backoff with jitter while failing) → on 410 Gone, forget the resourceVersion and relist,
// forwarding only the keys that changed meanwhile (new, changed, or deleted).
//
// No-op updates are dropped with a per-key fingerprint: `generation` plus a short hash of uid, labels,
// annotations, finalizers and deletionTimestamp. Status writes (our own reconciler writing conditions)
// change none of these, so they are not forwarded; relist duplicates are not either. There is no object
// cache: memory is O(keys × ~100 bytes) — the key and a ~20-character fingerprint per object.
//
// Bursts are coalesced per key: a key is sent once it has been quiet for `coalesceMs` (or, if it keeps
// changing, `maxCoalesceMs` after its first event), and at most once per `minIntervalMs` — so a burst of
// writes, or our own reconciler's annotation and finalizer writes right after a create, costs one or two
// reconciles rather than one each. Messages go out in batches of `batchSize`.
import { createHash } from "node:crypto";
import { type KubeConfig, Watch } from "@kubernetes/client-node";
import { apiVersionOf, type ObjectMeta, type ResourceType } from "../api/meta.ts";
import type { Kube, KubeObject } from "../kube/client.ts";
import { type BackoffPolicy, backoffMs, sleep } from "../queue/backoff.ts";
import { InvalidMessageError, SendFailedError } from "../queue/errors.ts";
import { makeMessage, messageKey, type ReconcileMessage } from "../queue/message.ts";
import {
  crdName,
  errorMessage,
  httpStatusOf,
  kubeOf,
  type Logger,
  type MessageSink,
  noopLogger,
  objectKey,
  parseObjectKey,
} from "./common.ts";

export const DEFAULT_COALESCE_MS = 50;
export const DEFAULT_MAX_COALESCE_MS = 1_000;
export const DEFAULT_MIN_INTERVAL_MS = 1_000;
export const DEFAULT_FORWARD_BATCH_SIZE = 100;
export const DEFAULT_LIST_PAGE_SIZE = 500;
export const DEFAULT_WATCH_BACKOFF: BackoffPolicy = { baseMs: 250, maxMs: 30_000 };
export const DEFAULT_SEND_BACKOFF: BackoffPolicy = { baseMs: 200, maxMs: 10_000 };
/** Sends of one message before it is dropped; the drift sweep catches a dropped key up. */
export const MAX_SEND_ATTEMPTS = 5;
// client-node's Watch aborts after 30 s without data, and a 1.20 API server sends BOOKMARK only just
// before its own deadline: so the server must end each watch first (20–27 s, jittered across kinds).
const WATCH_TIMEOUT_MIN_S = 20;
const WATCH_TIMEOUT_JITTER_S = 7;
/** A watch that ends sooner than this without any event counts as a failure (no hot reconnect loop). */
const MIN_HEALTHY_WATCH_MS = 1_000;
/** How long `stop()` waits for an in-flight list to finish before returning anyway. */
const STOP_GRACE_MS = 5_000;

export interface ForwarderOptions {
  kube: Kube | KubeConfig;
  /** Every kind to watch: all managed kinds (ProviderConfigs may be included). */
  types: readonly ResourceType[];
  sink: MessageSink;
  logger?: Logger;
  /** A key is sent once no event for it arrived for this long. */
  coalesceMs?: number;
  /** …or this long after its first event, if it keeps changing. */
  maxCoalesceMs?: number;
  /** A key is sent at most once per this interval (later events wait and merge). */
  minIntervalMs?: number;
  /** Messages per `sink.send` call. */
  batchSize?: number;
  /** Objects per list page (`limit`). */
  pageSize?: number;
  /** Backoff of failed lists and watches (per kind). */
  backoff?: BackoffPolicy;
  /** Backoff of failed sends. */
  sendBackoff?: BackoffPolicy;
  /** Only objects matching this label selector (sharding, tests). */
  labelSelector?: string;
  /**
   * Also watch connection Secrets (label app.kubernetes.io/managed-by=driftless) and forward the key of
   * the managed resource that owns one when it is edited or deleted, so the next reconcile repairs it at
   * once. Needs list/watch on Secrets.
   */
  connectionSecrets?: boolean;
  /** Server-side timeout of each watch; default 20–27 s, jittered. Keep it below 30 s (see above). */
  watchTimeoutSeconds?: number;
  /** Injected for deterministic tests; default Math.random. */
  random?: () => number;
}

export type KindState = "idle" | "listing" | "watching" | "retrying" | "missing" | "stopped";

export interface KindStats {
  kind: string;
  apiVersion: string;
  state: KindState;
  /** Keys with a fingerprint (objects known to exist). */
  keys: number;
  /** Where the next watch resumes; undefined before the first list or after 410 Gone. */
  resourceVersion: string | undefined;
  /** At least one full list has been forwarded. */
  synced: boolean;
}

export interface ForwarderStats {
  /** ADDED, MODIFIED and DELETED events received. */
  events: number;
  bookmarks: number;
  /** Messages the sink accepted. */
  forwarded: number;
  /** Events and relisted objects dropped because their fingerprint had not changed. */
  droppedNoop: number;
  /** Events merged into a message already waiting for the same key. */
  coalesced: number;
  /** Full lists, including the first one per kind. */
  lists: number;
  /** Lists caused by 410 Gone. */
  relists: number;
  /** Watches opened after the first one of a kind (routine server-side timeouts included). */
  reconnects: number;
  /** Failed list or watch attempts. */
  failures: number;
  /** Failed sink sends (whole calls or single messages). */
  sendFailures: number;
  /** Messages given up after MAX_SEND_ATTEMPTS or refused as invalid. */
  dropped: number;
  /** Keys waiting to be sent. */
  pending: number;
  kinds: KindStats[];
}

/** Watch ended with an ERROR event other than 410 Gone (a Status object from the API server). */
export class WatchError extends Error {
  override name = "WatchError";
  readonly statusCode: number | undefined;
  constructor(message: string, statusCode: number | undefined) {
    super(message);
    this.statusCode = statusCode;
  }
}

/** `start()` on a forwarder that is already running. */
export class ForwarderStateError extends Error {
  override name = "ForwarderStateError";
}

interface KindWatch {
  type: ResourceType;
  /** Connection Secrets: changes forward the controller owner's key, not the Secret's. */
  owners?: boolean;
  apiVersion: string;
  crd: string;
  path: string;
  rv: string | undefined;
  /** objectKey → fingerprint; the forwarder's only per-object memory. */
  fingerprints: Map<string, string>;
  state: KindState;
  synced: boolean;
  abort: AbortController | undefined;
  /** Set by resumeFrom while running: the watch is restarted from this resourceVersion. */
  resumeFrom: string | undefined;
  /** The problem last logged for this kind, so each is logged once, not per attempt. */
  problem: string | undefined;
}

interface Pending {
  message: ReconcileMessage;
  firstAt: number;
  lastAt: number;
  attempts: number;
  retryAt: number;
}

type WatchEnd = { kind: "closed"; healthy: boolean } | { kind: "gone" } | { kind: "error"; error: unknown };

/** Short change detector of what a reconcile cares about besides the spec (which `generation` covers). */
export function fingerprint(m: ObjectMeta): string {
  // Not a security use: 72 bits of SHA-1 make accidental equality of two states negligible.
  const h = createHash("sha1");
  h.update(m.uid ?? "");
  h.update("\0");
  h.update(sortedJson(m.labels));
  h.update("\0");
  h.update(sortedJson(m.annotations));
  h.update("\0");
  h.update(JSON.stringify(m.finalizers ?? []));
  h.update("\0");
  h.update(m.deletionTimestamp ?? "");
  return `${m.generation ?? 0}:${h.digest("base64url").slice(0, 12)}`;
}

function sortedJson(map: Record<string, string> | undefined): string {
  if (!map) return "{}";
  return JSON.stringify(
    Object.keys(map)
      .sort()
      .map((k) => [k, map[k]]),
  );
}

/** The Secrets driftless publishes connection details to (see shared/reconciler/connection.ts). */
export const CONNECTION_SECRETS: ResourceType = {
  group: "",
  version: "v1",
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
};
export const CONNECTION_SECRET_SELECTOR = "app.kubernetes.io/managed-by=driftless";

/** Any change to a Secret matters (its data has no generation): its resourceVersion is its fingerprint. */
const fingerprintOf = (k: KindWatch, m: ObjectMeta) =>
  k.owners ? `rv:${m.resourceVersion ?? ""}` : fingerprint(m);

/** Forwards keys of changed managed resources from the API server's watch to a queue. */
export class Forwarder {
  readonly #kube: Kube;
  readonly #watch: Watch;
  readonly #sink: MessageSink;
  readonly #logger: Logger;
  readonly #coalesceMs: number;
  readonly #maxCoalesceMs: number;
  readonly #minIntervalMs: number;
  readonly #batchSize: number;
  readonly #pageSize: number;
  readonly #backoff: BackoffPolicy;
  readonly #sendBackoff: BackoffPolicy;
  readonly #labelSelector: string | undefined;
  readonly #watchTimeoutSeconds: number | undefined;
  readonly #random: () => number;
  readonly #kinds: KindWatch[];
  readonly #pending = new Map<string, Pending>();
  /** key → when it was last sent, for minIntervalMs; in send order, pruned from the front. */
  readonly #recentlySent = new Map<string, number>();
  readonly #stats = {
    events: 0,
    bookmarks: 0,
    forwarded: 0,
    droppedNoop: 0,
    coalesced: 0,
    lists: 0,
    relists: 0,
    reconnects: 0,
    failures: 0,
    sendFailures: 0,
    dropped: 0,
  };

  #running = false;
  #stop = new AbortController();
  #loops: Promise<void>[] = [];
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #flushing: Promise<void> | undefined;
  /** Since when the API server has been unreachable (connection refused/reset); logged once per outage. */
  #outageSince: number | undefined;
  #sendProblem: string | undefined;

  constructor(opts: ForwarderOptions) {
    this.#kube = kubeOf(opts.kube);
    this.#watch = new Watch(this.#kube.kubeConfig("the forwarder's watch"));
    this.#sink = opts.sink;
    this.#logger = opts.logger ?? noopLogger;
    this.#coalesceMs = opts.coalesceMs ?? DEFAULT_COALESCE_MS;
    this.#maxCoalesceMs = Math.max(this.#coalesceMs, opts.maxCoalesceMs ?? DEFAULT_MAX_COALESCE_MS);
    this.#minIntervalMs = opts.minIntervalMs ?? DEFAULT_MIN_INTERVAL_MS;
    this.#batchSize = opts.batchSize ?? DEFAULT_FORWARD_BATCH_SIZE;
    this.#pageSize = opts.pageSize ?? DEFAULT_LIST_PAGE_SIZE;
    this.#backoff = opts.backoff ?? DEFAULT_WATCH_BACKOFF;
    this.#sendBackoff = opts.sendBackoff ?? DEFAULT_SEND_BACKOFF;
    this.#labelSelector = opts.labelSelector;
    this.#watchTimeoutSeconds = opts.watchTimeoutSeconds;
    this.#random = opts.random ?? Math.random;
    const watchOf = (type: ResourceType, owners = false): KindWatch => ({
      type,
      ...(owners ? { owners } : {}),
      apiVersion: apiVersionOf(type),
      crd: crdName(type),
      path:
        type.group === ""
          ? `/api/${type.version}/${type.plural}`
          : `/apis/${type.group}/${type.version}/${type.plural}`,
      rv: undefined,
      fingerprints: new Map(),
      state: "idle",
      synced: false,
      abort: undefined,
      resumeFrom: undefined,
      problem: undefined,
    });
    this.#kinds = opts.types.map((type) => watchOf(type));
    if (opts.connectionSecrets) this.#kinds.push(watchOf(CONNECTION_SECRETS, true));
  }

  /**
   * Starts watching every kind. Resolves once each kind has made its first list attempt (successful or
   * not; failing kinds keep retrying in the background). After `stop()`, a new `start()` resumes from
   * the last resourceVersions and fingerprints.
   */
  async start(): Promise<void> {
    if (this.#running) throw new ForwarderStateError("forwarder is already running");
    this.#running = true;
    this.#stop = new AbortController();
    const firstAttempts: Promise<void>[] = [];
    this.#loops = this.#kinds.map((k) => {
      let resolve = () => {};
      firstAttempts.push(
        new Promise<void>((r) => {
          resolve = r;
        }),
      );
      return this.#run(k, this.#stop.signal, resolve).finally(resolve);
    });
    this.#logger.info({ kinds: this.#kinds.length }, "forwarder started");
    await Promise.all(firstAttempts);
  }

  /** Closes every watch, sends what is still waiting, and leaves no timer or socket behind. */
  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    this.#stop.abort();
    for (const k of this.#kinds) k.abort?.abort();
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.#loops),
      new Promise<void>((resolve) => {
        grace = setTimeout(resolve, STOP_GRACE_MS);
      }),
    ]);
    clearTimeout(grace);
    this.#loops = [];
    await this.#flushing;
    this.#clearTimer();
    await this.#flush(true);
    this.#recentlySent.clear();
    this.#logger.info({ forwarded: this.#stats.forwarded }, "forwarder stopped");
  }

  /**
   * Makes the next watch of `type` resume from `resourceVersion` (replaying from a known point; an
   * expired one exercises the 410 Gone path). While running, the current watch is restarted.
   */
  resumeFrom(type: Pick<ResourceType, "group" | "plural">, resourceVersion: string): void {
    const k = this.#kinds.find((x) => x.type.group === type.group && x.type.plural === type.plural);
    if (!k) throw new RangeError(`forwarder does not watch ${crdName(type)}`);
    if (!this.#running) {
      k.rv = resourceVersion;
      return;
    }
    k.resumeFrom = resourceVersion;
    k.abort?.abort();
  }

  stats(): ForwarderStats {
    return {
      ...this.#stats,
      pending: this.#pending.size,
      kinds: this.#kinds.map((k) => ({
        kind: k.type.kind,
        apiVersion: k.apiVersion,
        state: k.state,
        keys: k.fingerprints.size,
        resourceVersion: k.rv,
        synced: k.synced,
      })),
    };
  }

  /** One kind's life: list when needed, watch, resume; never gives up until stop(). */
  async #run(k: KindWatch, signal: AbortSignal, firstAttemptDone: () => void): Promise<void> {
    let failures = 0;
    let goneStreak = 0;
    let watched = false;
    // The signal, not #running: a loop that outlived stop()'s grace period must not rejoin a restart.
    while (!signal.aborted) {
      try {
        if (k.resumeFrom !== undefined) {
          k.rv = k.resumeFrom;
          k.resumeFrom = undefined;
        }
        if (k.rv === undefined) {
          await this.#list(k, signal);
          this.#recovered(k);
        }
        firstAttemptDone();
        if (signal.aborted) break;
        if (watched) this.#stats.reconnects++;
        watched = true;
        const end = await this.#watchOnce(k, signal, () => {
          failures = 0;
          this.#recovered(k);
        });
        if (signal.aborted || k.resumeFrom !== undefined) continue;
        if (end.kind === "gone") {
          this.#gone(k, "watch");
          // Relist at once; only a server that keeps answering 410 to fresh lists gets backoff.
          if (goneStreak++ === 0) continue;
          await sleep(backoffMs(goneStreak - 1, this.#backoff, this.#random), signal);
          continue;
        }
        goneStreak = 0;
        if (end.kind === "error") throw end.error;
        if (end.healthy) continue;
        failures++;
        await sleep(backoffMs(failures, this.#backoff, this.#random), signal);
      } catch (err) {
        firstAttemptDone();
        if (signal.aborted) break;
        if (httpStatusOf(err) === 410) {
          // A list continuation or watch answered HTTP 410: the same remedy as an ERROR event.
          this.#gone(k, "http");
          if (failures++ === 0) continue;
        } else {
          failures++;
          this.#stats.failures++;
          this.#failed(k, err);
        }
        const delay = backoffMs(failures, this.#backoff, this.#random);
        this.#logger.debug({ kind: k.type.kind, attempt: failures, delayMs: delay }, "retrying");
        await sleep(delay, signal);
      }
    }
    k.state = "stopped";
    k.abort = undefined;
  }

  /** Lists the kind page by page and forwards every key whose fingerprint is new, changed or gone. */
  async #list(k: KindWatch, signal: AbortSignal): Promise<void> {
    k.state = "listing";
    const started = Date.now();
    const seen = new Set<string>();
    let forwarded = 0;
    let rv: string | undefined;
    let cont: string | undefined;
    do {
      const selector = this.#selectorOf(k);
      const page = await this.#kube.list<KubeObject>(k.type, {
        limit: this.#pageSize,
        ...(cont ? { continue: cont } : {}),
        ...(selector ? { labelSelector: selector } : {}),
      });
      // Every page of a paged list is served from the first page's snapshot.
      rv ??= page.resourceVersion;
      for (const o of page.items) {
        const key = objectKey(o.metadata);
        seen.add(key);
        const fp = fingerprintOf(k, o.metadata);
        const known = k.fingerprints.get(key);
        if (known === fp) {
          this.#stats.droppedNoop++;
          continue;
        }
        // Updated as we go: a list that fails half-way does not forward these keys again.
        k.fingerprints.set(key, fp);
        // The first list of connection Secrets only learns them: the managed kinds' own lists reconcile all.
        if (k.owners && !k.synced) continue;
        this.#enqueue(k, o.metadata);
        forwarded++;
      }
      cont = page.continue;
    } while (cont && !signal.aborted);
    if (signal.aborted) return;
    let deleted = 0;
    for (const key of k.fingerprints.keys()) {
      if (seen.has(key)) continue;
      k.fingerprints.delete(key);
      // Its uid is not kept (memory): the reconcile reads the name and finds it gone. A vanished
      // connection Secret's owner is not known any more; the owner's next poll repairs it.
      if (!k.owners) this.#enqueue(k, parseObjectKey(key));
      deleted++;
    }
    k.rv = rv;
    k.synced = true;
    this.#stats.lists++;
    this.#logger.info(
      { kind: k.type.kind, keys: k.fingerprints.size, forwarded, deleted, durationMs: Date.now() - started },
      "listed",
    );
  }

  #watchOnce(k: KindWatch, signal: AbortSignal, onConnected: () => void): Promise<WatchEnd> {
    const timeoutSeconds =
      this.#watchTimeoutSeconds ??
      WATCH_TIMEOUT_MIN_S + Math.floor(this.#random() * (WATCH_TIMEOUT_JITTER_S + 1));
    const query = {
      allowWatchBookmarks: true,
      resourceVersion: k.rv,
      timeoutSeconds,
      labelSelector: this.#selectorOf(k),
    };
    return new Promise<WatchEnd>((resolve) => {
      let settled = false;
      let gone = false;
      let errorEvent: WatchError | undefined;
      let connectedAt = 0;
      let events = 0;
      const finish = (end: WatchEnd) => {
        if (settled) return;
        settled = true;
        k.abort = undefined;
        resolve(end);
      };
      const onEvent = (type: string, obj: unknown) => {
        if (settled || gone || errorEvent) return;
        events++;
        if (type === "ERROR") {
          const status = obj as { code?: number; message?: string } | undefined;
          if (status?.code === 410) gone = true;
          else
            errorEvent = new WatchError(`watch ${k.crd}: ${status?.message ?? "error event"}`, status?.code);
          k.abort?.abort();
          return;
        }
        if (type === "BOOKMARK") {
          this.#stats.bookmarks++;
          k.rv = (obj as KubeObject | undefined)?.metadata?.resourceVersion ?? k.rv;
          return;
        }
        if (type === "ADDED" || type === "MODIFIED" || type === "DELETED")
          this.#onChange(k, type, obj as KubeObject);
      };
      const onDone = (err: unknown) => {
        if (gone) return finish({ kind: "gone" });
        if (errorEvent) return finish({ kind: "error", error: errorEvent });
        if (err && connectedAt === 0) return finish({ kind: "error", error: err });
        // After a successful connect, a closed or aborted stream is a normal end: resume from k.rv.
        const healthy = events > 0 || Date.now() - connectedAt >= MIN_HEALTHY_WATCH_MS;
        return finish({ kind: "closed", healthy });
      };
      this.#watch.watch(k.path, query, onEvent, onDone).then(
        (controller) => {
          if (settled) return;
          connectedAt = Date.now();
          k.abort = controller;
          k.state = "watching";
          onConnected();
          if (signal.aborted || k.resumeFrom !== undefined) controller.abort();
        },
        (err: unknown) => finish({ kind: "error", error: err }),
      );
    });
  }

  #onChange(k: KindWatch, type: "ADDED" | "MODIFIED" | "DELETED", obj: KubeObject): void {
    const meta = obj?.metadata;
    if (!meta?.name) return;
    this.#stats.events++;
    k.rv = meta.resourceVersion ?? k.rv;
    const key = objectKey(meta);
    if (type === "DELETED") {
      k.fingerprints.delete(key);
      this.#enqueue(k, meta);
      return;
    }
    const fp = fingerprintOf(k, meta);
    const previous = k.fingerprints.get(key);
    k.fingerprints.set(key, fp);
    if (type === "MODIFIED" && previous === fp) {
      this.#stats.droppedNoop++;
      return;
    }
    this.#enqueue(k, meta);
  }

  #gone(k: KindWatch, via: "watch" | "http"): void {
    this.#stats.relists++;
    this.#logger.info(
      { kind: k.type.kind, resourceVersion: k.rv, via },
      "resourceVersion expired (410 Gone); relisting",
    );
    k.rv = undefined;
  }

  #failed(k: KindWatch, err: unknown): void {
    const status = httpStatusOf(err);
    if (status === undefined) {
      k.state = "retrying";
      if (this.#outageSince === undefined) {
        this.#outageSince = Date.now();
        this.#logger.warn({ error: errorMessage(err) }, "API server unreachable; retrying with backoff");
      }
      return;
    }
    k.state = status === 404 ? "missing" : "retrying";
    const problem =
      status === 404 ? `CRD ${k.crd} not installed` : `cannot list or watch ${k.crd}: ${errorMessage(err)}`;
    if (k.problem === problem) return;
    k.problem = problem;
    this.#logger.warn({ kind: k.type.kind, crd: k.crd, status }, `${problem}; retrying`);
  }

  #recovered(k: KindWatch): void {
    if (this.#outageSince !== undefined) {
      this.#logger.info({ downMs: Date.now() - this.#outageSince }, "API server reachable again; resuming");
      this.#outageSince = undefined;
    }
    if (k.problem !== undefined) {
      this.#logger.info({ kind: k.type.kind, crd: k.crd }, `${k.crd} available again; watching`);
      k.problem = undefined;
    }
  }

  #selectorOf(k: KindWatch): string | undefined {
    return k.owners ? CONNECTION_SECRET_SELECTOR : this.#labelSelector;
  }

  #enqueue(k: KindWatch, meta: Pick<ObjectMeta, "name" | "namespace" | "uid" | "ownerReferences">): void {
    let target = {
      apiVersion: k.apiVersion,
      kind: k.type.kind,
      namespace: meta.namespace,
      name: meta.name,
      uid: meta.uid,
    };
    if (k.owners) {
      // A connection Secret stands for its managed resource: forward the owner, if it is a kind we watch.
      const owner = meta.ownerReferences?.find((o) => o.controller);
      const watched =
        owner &&
        this.#kinds.some((x) => !x.owners && x.apiVersion === owner.apiVersion && x.type.kind === owner.kind);
      if (!owner || !watched) return;
      const ownerType = this.#kinds.find(
        (x) => x.apiVersion === owner.apiVersion && x.type.kind === owner.kind,
      )?.type;
      target = {
        apiVersion: owner.apiVersion,
        kind: owner.kind,
        namespace: ownerType?.namespaced ? meta.namespace : undefined,
        name: owner.name,
        uid: owner.uid,
      };
    }
    const message = makeMessage(target, "watch");
    const key = messageKey(message);
    const now = Date.now();
    const waiting = this.#pending.get(key);
    if (waiting) {
      this.#stats.coalesced++;
      waiting.message = message;
      waiting.lastAt = now;
      waiting.attempts = 0;
      waiting.retryAt = 0;
    } else {
      this.#pending.set(key, { message, firstAt: now, lastAt: now, attempts: 0, retryAt: 0 });
    }
    this.#schedule(this.#dueAt(key, this.#pending.get(key)!));
  }

  #dueAt(key: string, p: Pending): number {
    const debounced = Math.min(p.lastAt + this.#coalesceMs, p.firstAt + this.#maxCoalesceMs);
    return Math.max(p.retryAt, debounced, (this.#recentlySent.get(key) ?? 0) + this.#minIntervalMs);
  }

  #schedule(at: number): void {
    if (!this.#running || this.#flushing || at >= this.#timerAt) return;
    this.#clearTimer();
    this.#timerAt = at;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#timerAt = Number.POSITIVE_INFINITY;
        this.#flushing = this.#flush(false).finally(() => {
          this.#flushing = undefined;
          this.#rescheduleAfterFlush();
        });
      },
      Math.max(0, at - Date.now()),
    );
  }

  #rescheduleAfterFlush(): void {
    let next = Number.POSITIVE_INFINITY;
    for (const [key, p] of this.#pending) next = Math.min(next, this.#dueAt(key, p));
    // With nothing pending, one more (empty) flush later prunes the send times.
    const [oldestSent] = this.#recentlySent.values();
    if (oldestSent !== undefined) next = Math.min(next, oldestSent + this.#minIntervalMs);
    if (next < Number.POSITIVE_INFINITY) this.#schedule(next);
  }

  #clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
  }

  /** Sends the keys that are due (all of them when `final`), in batches; failed ones are retried later. */
  async #flush(final: boolean): Promise<void> {
    const now = Date.now();
    for (const [key, at] of this.#recentlySent) {
      if (at > now - this.#minIntervalMs) break;
      this.#recentlySent.delete(key);
    }
    const due: Pending[] = [];
    for (const [key, p] of this.#pending) {
      if (!final && this.#dueAt(key, p) > now) continue;
      due.push(p);
      this.#pending.delete(key);
    }
    const dropped: Array<{ key: string; error: string }> = [];
    for (let i = 0; i < due.length; i += this.#batchSize) {
      const batch = due.slice(i, i + this.#batchSize);
      let failed: Array<{ p: Pending; error: unknown }>;
      try {
        const res = await this.#sink.send(batch.map((p) => p.message));
        this.#stats.forwarded += res.sent;
        failed = res.failed.flatMap((f) => {
          const p = batch[f.index];
          return p ? [{ p, error: f.error }] : [];
        });
        const refused = new Set(failed.map((f) => f.p));
        const sentAt = Date.now();
        for (const p of batch) {
          if (refused.has(p)) continue;
          const key = messageKey(p.message);
          // Delete first: re-inserting keeps the map in send order.
          this.#recentlySent.delete(key);
          this.#recentlySent.set(key, sentAt);
        }
      } catch (err) {
        failed = batch.map((p) => ({ p, error: err }));
      }
      for (const { p, error } of failed) {
        if (!this.#retryLater(p, error, final))
          dropped.push({ key: messageKey(p.message), error: errorMessage(error) });
      }
      if (failed.length === 0 && this.#sendProblem !== undefined) {
        this.#logger.info({}, "queue accepts messages again");
        this.#sendProblem = undefined;
      }
    }
    if (dropped.length > 0) {
      this.#stats.dropped += dropped.length;
      this.#logger.warn(
        { dropped: dropped.length, key: dropped[0]?.key, error: dropped[0]?.error },
        "cannot forward keys; dropped (the drift sweep catches them up)",
      );
    }
  }

  /** Puts a message whose send failed back in line with backoff; false when it is given up. */
  #retryLater(p: Pending, err: unknown, final: boolean): boolean {
    this.#stats.sendFailures++;
    const permanent =
      err instanceof InvalidMessageError || (err instanceof SendFailedError && err.senderFault);
    p.attempts++;
    if (permanent || final || p.attempts >= MAX_SEND_ATTEMPTS) return false;
    const problem = errorMessage(err);
    if (this.#sendProblem !== problem) {
      this.#sendProblem = problem;
      this.#logger.warn({ error: problem }, "queue refused messages; retrying with backoff");
    }
    const key = messageKey(p.message);
    // A newer event for the key supersedes this attempt.
    if (this.#pending.has(key)) return true;
    p.retryAt = Date.now() + backoffMs(p.attempts, this.#sendBackoff, this.#random);
    this.#pending.set(key, p);
    return true;
  }
}
