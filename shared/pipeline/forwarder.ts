// The forwarder: watches every managed-resource kind and forwards *keys* (never objects) to the queue.
//
// Two parts, one idea each: a KindWatcher per kind (./kind-watcher.ts: list, watch, resume, 410 Gone,
// no-op detection) reports changed keys; the Outbox (./outbox.ts) coalesces bursts per key and sends
// batches. This file wires them: which kinds, and which key a change stands for (a connection Secret
// stands for the managed resource that owns it).
import type { KubeConfig } from "@kubernetes/client-node";
import type { ManagedResource } from "../api/managed.ts";
import type { ResourceType } from "../api/meta.ts";
import type { Kube } from "../kube/client.ts";
import type { BackoffPolicy } from "../queue/backoff.ts";
import { makeMessage } from "../queue/message.ts";
import { crdName, kubeOf, type Logger, type MessageSink, noopLogger } from "./common.ts";
import {
  ApiServerHealth,
  type ChangedMeta,
  type KindStats,
  KindWatcher,
  newWatchCounters,
  type WatchCounters,
} from "./kind-watcher.ts";
import { Outbox, type OutboxStats } from "./outbox.ts";
import type { ProviderConfigUsers } from "./provider-config-users.ts";
import type { ReferrerIndex, SeenObject } from "./referrers.ts";

export {
  DEFAULT_LIST_PAGE_SIZE,
  DEFAULT_WATCH_BACKOFF,
  fingerprint,
  type KindState,
  type KindStats,
  WatchError,
} from "./kind-watcher.ts";
export {
  DEFAULT_COALESCE_MS,
  DEFAULT_FORWARD_BATCH_SIZE,
  DEFAULT_MAX_COALESCE_MS,
  DEFAULT_MIN_INTERVAL_MS,
  DEFAULT_SEND_BACKOFF,
  MAX_SEND_ATTEMPTS,
} from "./outbox.ts";

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
  /** Server-side timeout of each watch; default 20–27 s, jittered (see kind-watcher.ts). */
  watchTimeoutSeconds?: number;
  /** Injected for deterministic tests; default Math.random. */
  random?: () => number;
  /**
   * While CRDs are being installed beside the forwarder: a promise that resolves when `type`'s CRD is
   * served (Established), or undefined when it is served now. The kind's list and watch start then,
   * instead of meeting 404 and waiting out the failure backoff.
   */
  whenServed?: (type: ResourceType) => Promise<void> | undefined;
  /**
   * The objects waiting for others by reference (built from the watched objects as they are seen): when a
   * referenced object turns Ready, the keys waiting for it are forwarded at once (referrers.ts).
   */
  referrers?: ReferrerIndex;
  /**
   * Which ProviderConfig each watched object uses, kept current from the same lists and watches, for the
   * ProviderConfig reconciler's user count (provider-config-users.ts). Only without a label selector: a
   * selected subset would undercount.
   */
  providerConfigUsers?: ProviderConfigUsers;
}

export interface ForwarderStats extends WatchCounters, OutboxStats {
  kinds: KindStats[];
  /** Keys forwarded because an object they reference turned Ready. */
  referrersForwarded: number;
}

/** `start()` on a forwarder that is already running. */
export class ForwarderStateError extends Error {
  override name = "ForwarderStateError";
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

/** Forwards keys of changed managed resources from the API server's watch to a queue. */
export class Forwarder {
  readonly #logger: Logger;
  readonly #counters = newWatchCounters();
  readonly #outbox: Outbox;
  readonly #watchers: KindWatcher[];
  readonly #watcherOf: (type: ResourceType) => KindWatcher;
  readonly #whenServed: ForwarderOptions["whenServed"];
  #running = false;
  #referrersForwarded = 0;
  readonly #users: ProviderConfigUsers | undefined;
  #stop = new AbortController();
  #loops: Promise<void>[] = [];

  constructor(opts: ForwarderOptions) {
    const kube = kubeOf(opts.kube);
    this.#logger = opts.logger ?? noopLogger;
    this.#whenServed = opts.whenServed;
    const random = opts.random ?? Math.random;
    this.#outbox = new Outbox({
      sink: opts.sink,
      logger: this.#logger,
      coalesceMs: opts.coalesceMs,
      maxCoalesceMs: opts.maxCoalesceMs,
      minIntervalMs: opts.minIntervalMs,
      batchSize: opts.batchSize,
      sendBackoff: opts.sendBackoff,
      random,
    });
    const health = new ApiServerHealth(this.#logger);
    const referrers = opts.referrers;
    const users = opts.labelSelector ? undefined : opts.providerConfigUsers;
    this.#users = users;
    const watcherOf = (type: ResourceType, connectionSecrets = false): KindWatcher => {
      const kind = () => ({ apiVersion: watcher.apiVersion, kind: type.kind });
      const watcher: KindWatcher = new KindWatcher({
        kube,
        type,
        everyChange: connectionSecrets,
        labelSelector: connectionSecrets ? CONNECTION_SECRET_SELECTOR : opts.labelSelector,
        pageSize: opts.pageSize,
        backoff: opts.backoff,
        watchTimeoutSeconds: opts.watchTimeoutSeconds,
        random,
        logger: this.#logger,
        counters: this.#counters,
        health,
        changed: (meta) => this.#forward(watcher, meta),
        ...((referrers || users) && !connectionSecrets
          ? {
              seen: (obj) => {
                users?.seen(kind(), obj as unknown as ManagedResource);
                for (const key of referrers?.seen(kind(), obj as SeenObject) ?? []) {
                  this.#referrersForwarded++;
                  this.#outbox.add(makeMessage(key, "watch"));
                }
              },
              removed: (meta) => {
                users?.gone(kind(), meta);
                referrers?.gone(kind(), meta);
              },
              listed: () => users?.listed(kind()),
            }
          : {}),
      });
      return watcher;
    };
    this.#watcherOf = (type) => watcherOf(type);
    this.#watchers = opts.types.map((type) => watcherOf(type));
    if (opts.connectionSecrets) this.#watchers.push(watcherOf(CONNECTION_SECRETS, true));
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
    this.#outbox.start();
    const firstAttempts: Promise<void>[] = [];
    this.#loops = this.#watchers.map((w) => this.#runWatcher(w, firstAttempts));
    this.#logger.info({ kinds: this.#watchers.length }, "forwarder started");
    await Promise.all(firstAttempts);
  }

  #runWatcher(w: KindWatcher, firstAttempts: Promise<void>[]): Promise<void> {
    let resolve = () => {};
    firstAttempts.push(
      new Promise<void>((r) => {
        resolve = r;
      }),
    );
    // The signal, not #running: a loop that outlived stop()'s grace period must not rejoin a restart.
    const signal = this.#stop.signal;
    const served = this.#whenServed?.(w.type);
    if (!served) return w.run(signal, resolve).finally(resolve);
    // A kind whose CRD is still being installed does not hold start() up; it is listed once it is served.
    resolve();
    const kind = { apiVersion: w.apiVersion, kind: w.type.kind };
    this.#users?.notServed(kind);
    const stopped = new Promise<void>((r) => signal.addEventListener("abort", () => r(), { once: true }));
    return Promise.race([served, stopped]).then(() => {
      if (signal.aborted) return undefined;
      this.#users?.served(kind);
      return w.run(signal, () => {});
    });
  }

  /**
   * Watches these kinds too, from now on (a kind activated while the forwarder runs): the ones not watched
   * yet start at once when running, else with the next `start()`. Resolves after their first list attempt;
   * returns the types added.
   */
  async watch(types: readonly ResourceType[]): Promise<ResourceType[]> {
    const added = types.filter(
      (t) =>
        !this.#watchers.some((w) => !w.everyChange && w.type.group === t.group && w.type.plural === t.plural),
    );
    const firstAttempts: Promise<void>[] = [];
    for (const t of added) {
      const w = this.#watcherOf(t);
      this.#watchers.push(w);
      if (this.#running) this.#loops.push(this.#runWatcher(w, firstAttempts));
    }
    if (added.length > 0)
      this.#logger.info({ kinds: added.map((t) => crdName(t)) }, "forwarder watches more kinds");
    await Promise.all(firstAttempts);
    return added;
  }

  /** Closes every watch, sends what is still waiting, and leaves no timer or socket behind. */
  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    this.#outbox.pause();
    this.#stop.abort();
    for (const w of this.#watchers) w.interrupt();
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.#loops),
      new Promise<void>((resolve) => {
        grace = setTimeout(resolve, STOP_GRACE_MS);
      }),
    ]);
    clearTimeout(grace);
    this.#loops = [];
    await this.#outbox.drain();
    this.#logger.info({ forwarded: this.#outbox.stats().forwarded }, "forwarder stopped");
  }

  /**
   * Makes the next watch of `type` resume from `resourceVersion` (replaying from a known point; an
   * expired one exercises the 410 Gone path). While running, the current watch is restarted.
   */
  resumeFrom(type: Pick<ResourceType, "group" | "plural">, resourceVersion: string): void {
    const w = this.#watchers.find((x) => x.type.group === type.group && x.type.plural === type.plural);
    if (!w) throw new RangeError(`forwarder does not watch ${crdName(type)}`);
    w.resumeFrom(resourceVersion, this.#running);
  }

  stats(): ForwarderStats {
    return {
      ...this.#counters,
      ...this.#outbox.stats(),
      kinds: this.#watchers.map((w) => w.stats()),
      referrersForwarded: this.#referrersForwarded,
    };
  }

  /** Queues the key a change stands for: the object's own, or for a connection Secret its owner's. */
  #forward(w: KindWatcher, meta: ChangedMeta): void {
    let target = {
      apiVersion: w.apiVersion,
      kind: w.type.kind,
      namespace: meta.namespace,
      name: meta.name,
      uid: meta.uid,
    };
    if (w.everyChange) {
      // A connection Secret stands for its managed resource: forward the owner, if this forwarder watches
      // it — its kind, and the object itself (so a label-selected run never reconciles anyone else's).
      const owner = meta.ownerReferences?.find((o) => o.controller);
      const ownerWatcher =
        owner &&
        this.#watchers.find(
          (x) => !x.everyChange && x.apiVersion === owner.apiVersion && x.type.kind === owner.kind,
        );
      const ownerType = ownerWatcher?.type;
      if (!owner || !ownerWatcher || !ownerType) return;
      const ownerMeta = {
        name: owner.name,
        ...(ownerType.namespaced && meta.namespace ? { namespace: meta.namespace } : {}),
      };
      if (!ownerWatcher.knows(ownerMeta)) return;
      target = {
        apiVersion: owner.apiVersion,
        kind: owner.kind,
        namespace: ownerType.namespaced ? meta.namespace : undefined,
        name: owner.name,
        uid: owner.uid,
      };
    }
    this.#outbox.add(makeMessage(target, "watch"));
  }
}
