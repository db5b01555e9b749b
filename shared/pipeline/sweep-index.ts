// The warm sweep's index: what a sweep process keeps between runs so that a run reads only what changed
// and what is due, not the whole fleet.
//
// Per kind: a compact entry per object (name, namespace, uid, resourceVersion, generation, its due facts
// — paused, attention, asked interval, last change, phase — its ProviderConfig and external key for
// batches, and its Ready/Synced conditions for the Provider's health; never the spec), the kind's last
// resourceVersion, and due slots: every entry is filed under the window end in which its poll is next
// due (due.ts nextDueWindow), attention objects in a set of their own, paused ones nowhere.
//
// A run: a cold kind (first run of a container, or after 410 Gone) is listed page by page; a warm kind
// opens one watch from its last resourceVersion and drains it — the API server's watch cache sends the
// events since then at once — until it has been quiet for `quietMs` (or `maxDrainSeconds` passed), then
// closes it. Kubernetes 1.20 has no way to say "that was all" (no consistent list from the watch cache,
// no initial-events bookmark), so the quiet time is the cut: an event that arrives later is read by the
// next run, which resumes from the last resourceVersion seen — a change can be one run late, never lost.
// Then the run takes the attention set and every slot at or before its window end; once they are sent,
// the taken entries are filed again under their next due window (a failed send leaves them due).
import { EXTERNAL_KEY_LABEL } from "../api/cloud-events.ts";
import type { Condition, ResourceType } from "../api/meta.ts";
import type { Kube, KubeObject } from "../kube/client.ts";
import { crdName, httpStatusOf, objectKey } from "./common.ts";
import {
  batchable,
  type DueContext,
  type DueFacts,
  dueFacts,
  externalKeyLabelOf,
  nextDueWindow,
  type SweepObject,
} from "./due.ts";
import { WatchError } from "./kind-watcher.ts";

/** A warm kind's watch ends after this long without an event (the watch cache sends its backlog at once). */
export const DEFAULT_DRAIN_QUIET_MS = 300;
/** …and after this long in any case (a kind changing without pause is read on, next run). */
export const DEFAULT_MAX_DRAIN_SECONDS = 10;

type ConditionView = Pick<Condition, "type" | "status" | "reason" | "lastTransitionTime"> & {
  message?: string;
};

/** What the index keeps of one object. */
export interface IndexEntry {
  name: string;
  namespace: string | undefined;
  uid: string | undefined;
  rv: string;
  generation: number | undefined;
  facts: DueFacts;
  /** The external-key label of an in-sync managed resource (what a batch selects it by); else undefined. */
  batchKey: string | undefined;
  providerConfig: string;
  /** Ready and Synced, for the Provider's health (a message only when Ready is False). */
  conditions: ConditionView[];
  /** The window end it is filed under; undefined for paused and attention entries. */
  slot: number | undefined;
}

/** What refreshing one kind cost: requests and what they brought. */
export interface RefreshStats {
  /** LIST pages read (a cold start or a relist). */
  pages: number;
  /** Objects those pages held. */
  listed: number;
  /** Watches opened. */
  watches: number;
  /** ADDED, MODIFIED and DELETED events applied. */
  events: number;
  /** Relists after 410 Gone. */
  relists: number;
}

function entryOf(o: SweepObject): IndexEntry {
  const m = o.metadata;
  const external = externalKeyLabelOf(o);
  return {
    name: m.name,
    namespace: m.namespace,
    uid: m.uid,
    rv: m.resourceVersion ?? "",
    generation: m.generation,
    facts: dueFacts(o),
    batchKey: external && batchable(o) ? external : undefined,
    providerConfig: o.spec?.providerConfigRef?.name ?? "default",
    conditions: (o.status?.conditions ?? [])
      .filter((c) => c.type === "Ready" || c.type === "Synced")
      .map((c) => ({
        type: c.type,
        status: c.status,
        reason: c.reason,
        lastTransitionTime: c.lastTransitionTime,
        ...(c.type === "Ready" && c.status === "False" && c.message ? { message: c.message } : {}),
      })),
    slot: undefined,
  };
}

/** One kind's entries, resume point and due slots. */
export class KindIndex {
  readonly type: ResourceType;
  readonly #ctx: DueContext;
  readonly #entries = new Map<string, IndexEntry>();
  readonly #slots = new Map<number, Set<string>>();
  readonly #attention = new Set<string>();
  /** Where the next watch resumes; undefined before the first list and after 410 Gone. */
  resourceVersion: string | undefined;
  /** The last window end whose due entries were sent; undefined before the first run. */
  processedUpTo: number | undefined;

  constructor(type: ResourceType, ctx: DueContext) {
    this.type = type;
    this.#ctx = ctx;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Paused entries (never enqueued, still counted). */
  pausedCount(): number {
    let n = 0;
    for (const e of this.#entries.values()) if (e.facts.paused) n++;
    return n;
  }

  /** Applies an object as the API server now has it; `afterMs` is the last window end already handled. */
  upsert(o: SweepObject, afterMs: number): void {
    const key = objectKey(o.metadata);
    const previous = this.#entries.get(key);
    // A relist or a watch replay of a version the index has: its slot stays where it is.
    if (previous && previous.rv !== "" && previous.rv === o.metadata.resourceVersion) return;
    if (previous) this.#unfile(key, previous);
    const entry = entryOf(o);
    this.#entries.set(key, entry);
    this.#file(key, entry, afterMs);
  }

  remove(key: string): void {
    const previous = this.#entries.get(key);
    if (!previous) return;
    this.#unfile(key, previous);
    this.#entries.delete(key);
  }

  /** Keys no longer in a full list: gone while the index was not watching. */
  retainOnly(seen: ReadonlySet<string>): void {
    for (const key of [...this.#entries.keys()]) if (!seen.has(key)) this.remove(key);
  }

  /** The entries a run at `windowEndMs` enqueues: every attention entry, then every slot up to it. */
  due(windowEndMs: number): { attention: IndexEntry[]; due: IndexEntry[] } {
    const attention = [...this.#attention].map((k) => this.#entries.get(k) as IndexEntry);
    const due: IndexEntry[] = [];
    for (const [slot, keys] of this.#slots) {
      if (slot > windowEndMs) continue;
      for (const k of keys) due.push(this.#entries.get(k) as IndexEntry);
    }
    return { attention, due };
  }

  /** After the due entries of `windowEndMs` were sent: each is filed under its next due window. */
  settle(windowEndMs: number): void {
    for (const slot of [...this.#slots.keys()]) {
      if (slot > windowEndMs) continue;
      const keys = this.#slots.get(slot) as Set<string>;
      this.#slots.delete(slot);
      for (const k of keys) {
        const entry = this.#entries.get(k) as IndexEntry;
        entry.slot = undefined;
        this.#file(k, entry, windowEndMs);
      }
    }
    this.processedUpTo = Math.max(this.processedUpTo ?? windowEndMs, windowEndMs);
  }

  /** The entries as objects carrying only name and conditions: what the Provider's health counts. */
  healthObjects(): KubeObject[] {
    return [...this.#entries.values()].map((e) => ({
      metadata: { name: e.name, ...(e.namespace ? { namespace: e.namespace } : {}) },
      status: { conditions: e.conditions },
    }));
  }

  #file(key: string, entry: IndexEntry, afterMs: number): void {
    if (entry.facts.paused) return;
    if (entry.facts.attention) {
      this.#attention.add(key);
      return;
    }
    const slot = nextDueWindow(entry.facts, afterMs, this.#ctx) as number;
    entry.slot = slot;
    let keys = this.#slots.get(slot);
    if (!keys) {
      keys = new Set();
      this.#slots.set(slot, keys);
    }
    keys.add(key);
  }

  #unfile(key: string, entry: IndexEntry): void {
    this.#attention.delete(key);
    if (entry.slot === undefined) return;
    const keys = this.#slots.get(entry.slot);
    keys?.delete(key);
    if (keys?.size === 0) this.#slots.delete(entry.slot);
    entry.slot = undefined;
  }
}

export interface RefreshOptions {
  /** This run's window end: a cold kind files its objects as if the window before it was handled. */
  windowEndMs: number;
  pageSize: number;
  labelSelector?: string | undefined;
  quietMs?: number | undefined;
  maxDrainSeconds?: number | undefined;
}

/**
 * The index of every kind a warm sweep process serves, made for one schedule and poll configuration.
 * Keep one per container (module scope) and pass it to every sweep.
 */
export class SweepIndex {
  readonly ctx: DueContext;
  readonly #kinds = new Map<string, KindIndex>();

  constructor(ctx: DueContext) {
    this.ctx = { ...ctx };
  }

  kind(t: ResourceType): KindIndex {
    const name = crdName(t);
    let k = this.#kinds.get(name);
    if (!k) {
      k = new KindIndex(t, this.ctx);
      this.#kinds.set(name, k);
    }
    return k;
  }

  /** Forgets a kind (its CRD went away): a later run starts it cold. */
  drop(t: ResourceType): void {
    this.#kinds.delete(crdName(t));
  }

  /** Brings one kind up to date: a watch from its resourceVersion when warm, a paged list when cold or gone. */
  async refresh(kube: Kube, t: ResourceType, o: RefreshOptions): Promise<RefreshStats> {
    const k = this.kind(t);
    const stats: RefreshStats = { pages: 0, listed: 0, watches: 0, events: 0, relists: 0 };
    const after = k.processedUpTo ?? o.windowEndMs - this.ctx.scheduleMs;
    if (k.resourceVersion !== undefined) {
      const end = await drain(kube, k, after, o, stats);
      if (end === "current") return stats;
      stats.relists++;
      k.resourceVersion = undefined;
    }
    await list(kube, k, after, o, stats).catch((err: unknown) => {
      // The continue token outlived etcd compaction: list the kind again (entries already seen stay).
      if (httpStatusOf(err) !== 410) throw err;
      stats.relists++;
      return list(kube, k, after, o, stats);
    });
    return stats;
  }
}

async function list(
  kube: Kube,
  k: KindIndex,
  after: number,
  o: RefreshOptions,
  stats: RefreshStats,
): Promise<void> {
  const seen = new Set<string>();
  let rv: string | undefined;
  let cont: string | undefined;
  do {
    const page = await kube.list<KubeObject>(k.type, {
      limit: o.pageSize,
      ...(cont ? { continue: cont } : {}),
      ...(o.labelSelector ? { labelSelector: o.labelSelector } : {}),
    });
    stats.pages++;
    stats.listed += page.items.length;
    // Every page of a paged list is served from the first page's snapshot.
    rv ??= page.resourceVersion;
    for (const item of page.items) {
      seen.add(objectKey(item.metadata));
      k.upsert(item as SweepObject, after);
    }
    cont = page.continue;
  } while (cont);
  k.retainOnly(seen);
  k.resourceVersion = rv;
}

/** Reads a warm kind's changes since its resourceVersion; "gone" when the server no longer has them. */
async function drain(
  kube: Kube,
  k: KindIndex,
  after: number,
  o: RefreshOptions,
  stats: RefreshStats,
): Promise<"current" | "gone"> {
  const abort = new AbortController();
  const quietMs = o.quietMs ?? DEFAULT_DRAIN_QUIET_MS;
  let timer: NodeJS.Timeout | undefined;
  const quiet = () => {
    clearTimeout(timer);
    timer = setTimeout(() => abort.abort(), quietMs);
  };
  let gone = false;
  let failure: WatchError | undefined;
  const onEvent = (type: string, obj: KubeObject) => {
    if (gone || failure) return;
    if (type === "ERROR") {
      const status = obj as unknown as { code?: number; message?: string } | undefined;
      if (status?.code === 410) gone = true;
      else
        failure = new WatchError(
          `watch ${crdName(k.type)}: ${status?.message ?? "error event"}`,
          status?.code,
        );
      abort.abort();
      return;
    }
    const meta = obj?.metadata;
    if (type === "ADDED" || type === "MODIFIED") {
      if (meta?.name) k.upsert(obj as SweepObject, after);
      stats.events++;
    } else if (type === "DELETED") {
      if (meta?.name) k.remove(objectKey(meta));
      stats.events++;
    }
    k.resourceVersion = meta?.resourceVersion ?? k.resourceVersion;
    quiet();
  };
  stats.watches++;
  try {
    const open = await kube.watch<KubeObject>(
      k.type,
      {
        resourceVersion: k.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: o.maxDrainSeconds ?? DEFAULT_MAX_DRAIN_SECONDS,
        labelSelector: o.labelSelector,
      },
      onEvent,
      abort.signal,
    );
    if (!gone && !failure) quiet();
    // A broken stream keeps what it brought: the next run resumes from the last resourceVersion.
    await open.ended.catch(() => {});
  } catch (err) {
    if (httpStatusOf(err) === 410) return "gone";
    throw err;
  } finally {
    clearTimeout(timer);
  }
  if (failure) throw failure;
  return gone ? "gone" : "current";
}

/** The label selection of a warm sweep's batch: the run's own selector and the objects' external keys. */
export function batchSelector(labelSelector: string | undefined, keys: readonly string[]): string {
  const own = `${EXTERNAL_KEY_LABEL} in (${keys.join(",")})`;
  return labelSelector ? `${labelSelector},${own}` : own;
}
