// `driftless sweep`: one drift sweep now, into the configured queue, with progress reports for a display.
import type { KubeConfig } from "@kubernetes/client-node";
import type { ResourceType } from "../api/meta.ts";
import { Kube, type KubeObject, type ListPage } from "../kube/client.ts";
import type { Logger, MessageSink } from "../pipeline/common.ts";
import { type SweepResult, sweep } from "../pipeline/sweep.ts";
import { type ProviderHealthSetup, sweepWithProviderHealth } from "./provider-health.ts";

/** A schedule longer than any poll interval: every object is due (`--all`). */
const EVERYTHING_DUE_MS = 1e15;

export interface SweepProgress {
  /** Objects listed so far. */
  listed: number;
  /** Messages the queue accepted so far. */
  enqueued: number;
  /** Kinds whose list has started. */
  kindsStarted: number;
  kinds: number;
}

export interface SweepNowOptions {
  kubeConfig: KubeConfig;
  types: readonly ResourceType[];
  sink: MessageSink;
  /** The deployment's sweep schedule: enqueue what would be due in the current window. */
  scheduleMs: number;
  defaultPollMs: number;
  maxPollMs?: number | undefined;
  /** The least interval `crossplane.io/poll-interval` may set; default 30 s. */
  minPollMs?: number | undefined;
  batch?: boolean | undefined;
  /** Enqueue every object, due or not. */
  all?: boolean;
  labelSelector?: string;
  logger?: Logger;
  onProgress?: (p: SweepProgress) => void;
  /** Also write each cloud's Provider health from the pages this sweep lists (provider-health.ts). */
  providerHealth?: ProviderHealthSetup;
}

/** Counts what the sweep lists as it lists it, for the progress display. */
class CountingKube extends Kube {
  readonly #onPage: (t: ResourceType, items: number, first: boolean) => void;
  readonly #started = new Set<string>();

  constructor(kc: KubeConfig, onPage: (t: ResourceType, items: number, first: boolean) => void) {
    super(kc);
    this.#onPage = onPage;
  }

  override async list<T extends KubeObject>(
    t: ResourceType,
    opts: { limit?: number; continue?: string; labelSelector?: string; namespace?: string } = {},
  ): Promise<ListPage<T>> {
    const key = `${t.plural}.${t.group}`;
    const first = !this.#started.has(key);
    this.#started.add(key);
    const page = await super.list<T>(t, opts);
    this.#onPage(t, page.items.length, first);
    return page;
  }
}

export async function sweepNow(o: SweepNowOptions): Promise<SweepResult> {
  const progress: SweepProgress = { listed: 0, enqueued: 0, kindsStarted: 0, kinds: o.types.length };
  const report = () => o.onProgress?.({ ...progress });
  const kube = new CountingKube(o.kubeConfig, (_t, items, first) => {
    progress.listed += items;
    if (first) progress.kindsStarted++;
    report();
  });
  const sink: MessageSink = {
    send: async (messages, opts) => {
      const res = await o.sink.send(messages, opts);
      progress.enqueued += res.sent;
      report();
      return res;
    },
  };
  const run = (k: Kube) =>
    sweep({
      kube: k,
      types: o.types,
      sink,
      scheduleMs: o.all ? EVERYTHING_DUE_MS : o.scheduleMs,
      defaultPollMs: o.defaultPollMs,
      maxPollMs: o.maxPollMs,
      minPollMs: o.minPollMs,
      batch: o.batch,
      ...(o.labelSelector ? { labelSelector: o.labelSelector } : {}),
      ...(o.logger ? { logger: o.logger } : {}),
    });
  return o.providerHealth ? sweepWithProviderHealth(kube, o.providerHealth, run) : run(kube);
}
