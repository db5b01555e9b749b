// The forwarder's per-kind watcher: keeps one kind's keys in step with the API server and reports each
// key whose state changed.
//
// list (paged) → report keys whose state is new or changed → watch from the list's resourceVersion with
// bookmarks → on a closed or failed watch, resume from the last resourceVersion (exponential backoff with
// jitter while failing) → on 410 Gone, forget the resourceVersion and relist, reporting only the keys
// that changed meanwhile (new, changed, or deleted).
//
// No-op updates are dropped with a per-key fingerprint: a 48-bit hash of generation, uid, labels,
// annotations, finalizers and deletionTimestamp. Status writes (our own reconciler writing conditions)
// change none of these, so they are not reported; relist duplicates are not either. There is no object
// cache: memory is O(keys × ~100 bytes) — the key and one number per object (test/unit/pipeline/
// kind-watcher-memory.test.ts), and lists come in small pages, so a relist of 10,000 objects never
// holds more than one page of them.
import { createHash } from "node:crypto";
import { apiVersionOf, type ObjectMeta, type ResourceType } from "../api/meta.ts";
import type { Kube, KubeObject, OpenStream, WatchEventType } from "../kube/client.ts";
import { type BackoffPolicy, backoffMs, sleep } from "../queue/backoff.ts";
import { crdName, errorMessage, httpStatusOf, type Logger, objectKey, parseObjectKey } from "./common.ts";

// One parsed page is most of the forwarder's transient memory: 500 objects per page cost 8 MB more RSS
// at 10,000 resources than 100 (docs/performance.md); a relist is rare, its extra requests cheap.
export const DEFAULT_LIST_PAGE_SIZE = 100;
export const DEFAULT_WATCH_BACKOFF: BackoffPolicy = { baseMs: 250, maxMs: 30_000 };
// A 1.20 API server sends BOOKMARK only just before a watch's deadline: short watches (20–27 s,
// jittered across kinds) keep the resume point fresh and notice a dead connection within a minute.
const WATCH_TIMEOUT_MIN_S = 20;
const WATCH_TIMEOUT_JITTER_S = 7;
/** A watch that ends sooner than this without any event counts as a failure (no hot reconnect loop). */
const MIN_HEALTHY_WATCH_MS = 1_000;

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

/** Counters every kind's watcher adds to (the forwarder's stats). */
export interface WatchCounters {
  /** ADDED, MODIFIED and DELETED events received. */
  events: number;
  bookmarks: number;
  /** Events and relisted objects dropped because their fingerprint had not changed. */
  droppedNoop: number;
  /** Full lists, including the first one per kind. */
  lists: number;
  /** Lists caused by 410 Gone. */
  relists: number;
  /** Watches opened after the first one of a kind (routine server-side timeouts included). */
  reconnects: number;
  /** Failed list or watch attempts. */
  failures: number;
}

export const newWatchCounters = (): WatchCounters => ({
  events: 0,
  bookmarks: 0,
  droppedNoop: 0,
  lists: 0,
  relists: 0,
  reconnects: 0,
  failures: 0,
});

/** Watch ended with an ERROR event other than 410 Gone (a Status object from the API server). */
export class WatchError extends Error {
  override name = "WatchError";
  readonly statusCode: number | undefined;
  constructor(message: string, statusCode: number | undefined) {
    super(message);
    this.statusCode = statusCode;
  }
}

/** Whether the API server answers at all, shared by every kind so an outage is logged once, not per kind. */
export class ApiServerHealth {
  readonly #logger: Logger;
  #outageSince: number | undefined;
  constructor(logger: Logger) {
    this.#logger = logger;
  }
  unreachable(err: unknown): void {
    if (this.#outageSince !== undefined) return;
    this.#outageSince = Date.now();
    this.#logger.warn({ error: errorMessage(err) }, "API server unreachable; retrying with backoff");
  }
  reachable(): void {
    if (this.#outageSince === undefined) return;
    this.#logger.info({ downMs: Date.now() - this.#outageSince }, "API server reachable again; resuming");
    this.#outageSince = undefined;
  }
}

/**
 * Short change detector of what a reconcile cares about besides the spec (which `generation` covers): a
 * number, so a key's state is one Map value and no string of its own.
 */
export function fingerprint(m: ObjectMeta): number {
  return hash48(
    String(m.generation ?? 0),
    m.uid ?? "",
    sortedJson(m.labels),
    sortedJson(m.annotations),
    JSON.stringify(m.finalizers ?? []),
    m.deletionTimestamp ?? "",
  );
}

/** The first 48 bits of the SHA-1 of `parts` (NUL-separated) as a safe integer. */
function hash48(...parts: string[]): number {
  // Not a security use: 48 bits make an accidental equality of two states of one key negligible (and a
  // missed event is still caught up by the drift sweep).
  const h = createHash("sha1");
  for (const [i, part] of parts.entries()) {
    if (i > 0) h.update("\0");
    h.update(part);
  }
  return h.digest().readUIntBE(0, 6);
}

function sortedJson(map: Record<string, string> | undefined): string {
  if (!map) return "{}";
  return JSON.stringify(
    Object.keys(map)
      .sort()
      .map((k) => [k, map[k]]),
  );
}

/** What a changed key is reported with: enough to name it (and, for a Secret, its owner). */
export type ChangedMeta = Pick<ObjectMeta, "name" | "namespace" | "uid" | "ownerReferences">;

export interface KindWatcherOptions {
  kube: Kube;
  type: ResourceType;
  /**
   * Any change to these objects matters (Secrets have no generation): their resourceVersion is their
   * fingerprint, and the first list only learns them (the owners' own lists reconcile everything).
   */
  everyChange?: boolean;
  labelSelector?: string | undefined;
  pageSize?: number | undefined;
  backoff?: BackoffPolicy | undefined;
  watchTimeoutSeconds?: number | undefined;
  random?: () => number;
  logger: Logger;
  counters: WatchCounters;
  health: ApiServerHealth;
  /** Called for every key whose state changed (created, changed, deleted). */
  changed: (meta: ChangedMeta) => void;
  /**
   * Called with every object a list or an ADDED/MODIFIED event shows, changed or not (status writes too),
   * and with the key of every object found gone: the forwarder's referrer index reads them.
   */
  seen?: ((obj: KubeObject) => void) | undefined;
  removed?: ((meta: ChangedMeta) => void) | undefined;
  /** Called after each complete list (every object through `seen`, every vanished key through `removed`). */
  listed?: (() => void) | undefined;
}

type WatchEnd = { kind: "closed"; healthy: boolean } | { kind: "gone" } | { kind: "error"; error: unknown };

export class KindWatcher {
  readonly type: ResourceType;
  readonly apiVersion: string;
  /** The CRD that serves the kind: what an operator looks up when it is missing. */
  readonly crd: string;
  readonly everyChange: boolean;
  readonly #kube: Kube;
  readonly #selector: string | undefined;
  readonly #pageSize: number;
  readonly #backoff: BackoffPolicy;
  readonly #watchTimeoutSeconds: number | undefined;
  readonly #random: () => number;
  readonly #logger: Logger;
  readonly #counters: WatchCounters;
  readonly #health: ApiServerHealth;
  readonly #changed: (meta: ChangedMeta) => void;
  readonly #seen: ((obj: KubeObject) => void) | undefined;
  readonly #removed: ((meta: ChangedMeta) => void) | undefined;
  readonly #listed: (() => void) | undefined;
  /** objectKey → fingerprint; the watcher's only per-object memory. */
  readonly #fingerprints = new Map<string, number>();

  /** Whether this watcher has seen the object (it exists and matches the label selector). */
  knows(meta: Pick<ObjectMeta, "name" | "namespace">): boolean {
    return this.#fingerprints.has(objectKey(meta));
  }
  #rv: string | undefined;
  #state: KindState = "idle";
  #synced = false;
  #abort: AbortController | undefined;
  /** Set by resumeFrom while running: the watch is restarted from this resourceVersion. */
  #resumeFrom: string | undefined;
  /** The problem last logged for this kind, so each is logged once, not per attempt. */
  #problem: string | undefined;

  constructor(opts: KindWatcherOptions) {
    this.type = opts.type;
    this.apiVersion = apiVersionOf(opts.type);
    this.crd = crdName(opts.type);
    this.everyChange = opts.everyChange ?? false;
    this.#kube = opts.kube;
    this.#selector = opts.labelSelector;
    this.#pageSize = opts.pageSize ?? DEFAULT_LIST_PAGE_SIZE;
    this.#backoff = opts.backoff ?? DEFAULT_WATCH_BACKOFF;
    this.#watchTimeoutSeconds = opts.watchTimeoutSeconds;
    this.#random = opts.random ?? Math.random;
    this.#logger = opts.logger;
    this.#counters = opts.counters;
    this.#health = opts.health;
    this.#changed = opts.changed;
    this.#seen = opts.seen;
    this.#removed = opts.removed;
    this.#listed = opts.listed;
  }

  stats(): KindStats {
    return {
      kind: this.type.kind,
      apiVersion: this.apiVersion,
      state: this.#state,
      keys: this.#fingerprints.size,
      resourceVersion: this.#rv,
      synced: this.#synced,
    };
  }

  /** The next watch starts at `resourceVersion`; a running one is restarted (`running`) to get there. */
  resumeFrom(resourceVersion: string, running: boolean): void {
    if (!running) {
      this.#rv = resourceVersion;
      return;
    }
    this.#resumeFrom = resourceVersion;
    this.#abort?.abort();
  }

  /** Ends the current watch at once (the loop itself ends with its signal). */
  interrupt(): void {
    this.#abort?.abort();
  }

  /** The kind's life: list when needed, watch, resume; never gives up until `signal` aborts. */
  async run(signal: AbortSignal, firstAttemptDone: () => void): Promise<void> {
    let failures = 0;
    let goneStreak = 0;
    let watched = false;
    while (!signal.aborted) {
      try {
        if (this.#resumeFrom !== undefined) {
          this.#rv = this.#resumeFrom;
          this.#resumeFrom = undefined;
        }
        if (this.#rv === undefined) {
          await this.#list(signal);
          this.#recovered();
        }
        firstAttemptDone();
        if (signal.aborted) break;
        if (watched) this.#counters.reconnects++;
        watched = true;
        const end = await this.#watchOnce(signal, () => {
          failures = 0;
          this.#recovered();
        });
        if (signal.aborted || this.#resumeFrom !== undefined) continue;
        if (end.kind === "gone") {
          this.#gone("watch");
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
          this.#gone("http");
          if (failures++ === 0) continue;
        } else {
          failures++;
          this.#counters.failures++;
          this.#failed(err);
        }
        const delay = backoffMs(failures, this.#backoff, this.#random);
        this.#logger.debug({ kind: this.type.kind, attempt: failures, delayMs: delay }, "retrying");
        await sleep(delay, signal);
      }
    }
    this.#state = "stopped";
    this.#abort = undefined;
  }

  /** Lists the kind page by page and reports every key whose fingerprint is new, changed or gone. */
  async #list(signal: AbortSignal): Promise<void> {
    this.#state = "listing";
    const started = Date.now();
    const seen = new Set<string>();
    let forwarded = 0;
    let rv: string | undefined;
    let cont: string | undefined;
    do {
      const page = await this.#kube.list<KubeObject>(this.type, {
        limit: this.#pageSize,
        ...(cont ? { continue: cont } : {}),
        ...(this.#selector ? { labelSelector: this.#selector } : {}),
      });
      // Every page of a paged list is served from the first page's snapshot.
      rv ??= page.resourceVersion;
      for (const o of page.items) {
        const key = objectKey(o.metadata);
        seen.add(key);
        this.#seen?.(o);
        const fp = this.#fingerprintOf(o.metadata);
        if (this.#fingerprints.get(key) === fp) {
          this.#counters.droppedNoop++;
          continue;
        }
        // Updated as we go: a list that fails half-way does not report these keys again.
        this.#fingerprints.set(key, fp);
        if (this.everyChange && !this.#synced) continue;
        this.#changed(o.metadata);
        forwarded++;
      }
      cont = page.continue;
    } while (cont && !signal.aborted);
    if (signal.aborted) return;
    let deleted = 0;
    for (const key of this.#fingerprints.keys()) {
      if (seen.has(key)) continue;
      this.#fingerprints.delete(key);
      this.#removed?.(parseObjectKey(key));
      // Its uid is not kept (memory): the reconcile reads the name and finds it gone. A vanished
      // connection Secret's owner is not known any more; the owner's next poll repairs it.
      if (!this.everyChange) this.#changed(parseObjectKey(key));
      deleted++;
    }
    this.#rv = rv;
    this.#synced = true;
    this.#listed?.();
    this.#counters.lists++;
    this.#logger.info(
      {
        kind: this.type.kind,
        keys: this.#fingerprints.size,
        forwarded,
        deleted,
        durationMs: Date.now() - started,
      },
      "listed",
    );
  }

  async #watchOnce(signal: AbortSignal, onConnected: () => void): Promise<WatchEnd> {
    const timeoutSeconds =
      this.#watchTimeoutSeconds ??
      WATCH_TIMEOUT_MIN_S + Math.floor(this.#random() * (WATCH_TIMEOUT_JITTER_S + 1));
    const abort = new AbortController();
    const stop = () => abort.abort();
    signal.addEventListener("abort", stop, { once: true });
    if (signal.aborted) abort.abort();
    this.#abort = abort;
    let gone = false;
    let errorEvent: WatchError | undefined;
    let events = 0;
    const onEvent = (type: WatchEventType, obj: KubeObject) => {
      if (gone || errorEvent) return;
      events++;
      if (type === "ERROR") {
        const status = obj as unknown as { code?: number; message?: string } | undefined;
        if (status?.code === 410) gone = true;
        else
          errorEvent = new WatchError(`watch ${this.crd}: ${status?.message ?? "error event"}`, status?.code);
        abort.abort();
        return;
      }
      if (type === "BOOKMARK") {
        this.#counters.bookmarks++;
        this.#rv = obj?.metadata?.resourceVersion ?? this.#rv;
        return;
      }
      if (type === "ADDED" || type === "MODIFIED" || type === "DELETED") this.#onChange(type, obj);
    };
    try {
      let open: OpenStream;
      try {
        open = await this.#kube.watch<KubeObject>(
          this.type,
          {
            allowWatchBookmarks: true,
            resourceVersion: this.#rv,
            timeoutSeconds,
            labelSelector: this.#selector,
          },
          onEvent,
          abort.signal,
        );
      } catch (err) {
        return { kind: "error", error: err };
      }
      const connectedAt = Date.now();
      if (!abort.signal.aborted) {
        this.#state = "watching";
        onConnected();
      }
      if (this.#resumeFrom !== undefined) abort.abort();
      // After a successful connect, a closed, aborted or broken stream is a normal end: resume from rv.
      await open.ended.catch(() => {});
      if (gone) return { kind: "gone" };
      if (errorEvent) return { kind: "error", error: errorEvent };
      const healthy = events > 0 || Date.now() - connectedAt >= MIN_HEALTHY_WATCH_MS;
      return { kind: "closed", healthy };
    } finally {
      signal.removeEventListener("abort", stop);
      this.#abort = undefined;
    }
  }

  #onChange(type: "ADDED" | "MODIFIED" | "DELETED", obj: KubeObject): void {
    const meta = obj?.metadata;
    if (!meta?.name) return;
    this.#counters.events++;
    this.#rv = meta.resourceVersion ?? this.#rv;
    const key = objectKey(meta);
    if (type === "DELETED") {
      this.#fingerprints.delete(key);
      this.#removed?.(meta);
      this.#changed(meta);
      return;
    }
    this.#seen?.(obj);
    const fp = this.#fingerprintOf(meta);
    const previous = this.#fingerprints.get(key);
    this.#fingerprints.set(key, fp);
    if (type === "MODIFIED" && previous === fp) {
      this.#counters.droppedNoop++;
      return;
    }
    this.#changed(meta);
  }

  #fingerprintOf(m: ObjectMeta): number {
    return this.everyChange ? hash48(m.resourceVersion ?? "") : fingerprint(m);
  }

  #gone(via: "watch" | "http"): void {
    this.#counters.relists++;
    this.#logger.info(
      { kind: this.type.kind, resourceVersion: this.#rv, via },
      "resourceVersion expired (410 Gone); relisting",
    );
    this.#rv = undefined;
  }

  #failed(err: unknown): void {
    const status = httpStatusOf(err);
    if (status === undefined) {
      this.#state = "retrying";
      this.#health.unreachable(err);
      return;
    }
    this.#state = status === 404 ? "missing" : "retrying";
    const problem =
      status === 404
        ? `CRD ${this.crd} not installed`
        : `cannot list or watch ${this.crd}: ${errorMessage(err)}`;
    if (this.#problem === problem) return;
    this.#problem = problem;
    this.#logger.warn({ kind: this.type.kind, crd: this.crd, status }, `${problem}; retrying`);
  }

  #recovered(): void {
    this.#health.reachable();
    if (this.#problem !== undefined) {
      this.#logger.info({ kind: this.type.kind, crd: this.crd }, `${this.crd} available again; watching`);
      this.#problem = undefined;
    }
  }
}
