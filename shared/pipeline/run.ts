// One-process mode (`driftless run`): forwarder + memory queue + workers + sweep timer against any
// kubeconfig. The serverless deployment runs the same pieces, split across functions.
import type { KubeConfig } from "@kubernetes/client-node";
import type { ManagedKindProvider, ProviderConfigKind } from "../api/external.ts";
import type { ResourceType } from "../api/meta.ts";
import { Kube } from "../kube/client.ts";
import { KubeEventRecorder } from "../kube/events.ts";
import type { Logger } from "../log.ts";
import { type DeadLetter, MemoryQueue, type QueueEvent } from "../queue/index.ts";
import { ProviderConfigReconciler } from "../reconciler/provider-config.ts";
import { type EventRecorder, Reconciler } from "../reconciler/reconciler.ts";
import { KindRegistry } from "../reconciler/registry.ts";
import { Forwarder } from "./forwarder.ts";
import { sweep } from "./sweep.ts";
import { reconcileHandler } from "./worker.ts";

export interface RunOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  kinds: ManagedKindProvider[];
  providerConfigKinds: ProviderConfigKind[];
  workers?: number;
  pollIntervalMs?: number;
  sweepIntervalMs?: number;
  events?: EventRecorder;
}

export interface Running {
  kube: Kube;
  queue: MemoryQueue;
  reconciler: Reconciler;
  forwarder: Forwarder;
  /** Runs one sweep now (also what the timer does). */
  sweepNow(): Promise<void>;
  /** Stops taking work, finishes in-flight reconciles, closes watches. */
  stop(): Promise<void>;
}

export function queueEventLogger(logger: Logger) {
  return (e: QueueEvent) => {
    const { level, msg, ...fields } = e;
    logger[level](fields, msg);
  };
}

export async function startRun(o: RunOptions): Promise<Running> {
  const kube = new Kube(o.kubeConfig);
  const registry = new KindRegistry(o.kinds);
  const reconciler = new Reconciler(kube, registry, {
    logger: o.logger,
    ...(o.pollIntervalMs ? { pollIntervalMs: o.pollIntervalMs } : {}),
    events: o.events ?? new KubeEventRecorder(kube),
  });
  const providerConfigs = new ProviderConfigReconciler(kube, registry, o.providerConfigKinds);
  const queue = new MemoryQueue({
    workers: o.workers ?? 8,
    onEvent: queueEventLogger(o.logger),
    onDeadLetter: (d: DeadLetter) =>
      o.logger.error({ key: d.key, receiveCount: d.receiveCount, error: d.error.message }, "dead-lettered"),
  });
  queue.start(reconcileHandler({ reconciler, providerConfigs }));

  const types: ResourceType[] = [...registry.definitions, ...o.providerConfigKinds.map((k) => k.type)];
  const forwarder = new Forwarder({ kube, types, sink: queue, logger: o.logger });
  await forwarder.start();

  const pollIntervalMs = o.pollIntervalMs ?? 5 * 60_000;
  const sweepIntervalMs = o.sweepIntervalMs ?? 60_000;
  let sweeping: Promise<void> | undefined;
  const sweepNow = (): Promise<void> => {
    // One sweep at a time: a slow sweep is not stacked on by the next tick.
    const current =
      sweeping ??
      sweep({
        kube,
        types,
        sink: queue,
        scheduleMs: sweepIntervalMs,
        defaultPollMs: pollIntervalMs,
        logger: o.logger,
      })
        .then((r: object) => o.logger.debug({ ...r }, "sweep done"))
        .catch((err: unknown) => o.logger.error({ error: (err as Error).message }, "sweep failed"))
        .finally(() => {
          sweeping = undefined;
        });
    sweeping = current;
    return current;
  };
  const timer = setInterval(sweepNow, sweepIntervalMs);
  timer.unref();
  void sweepNow();

  return {
    kube,
    queue,
    reconciler,
    forwarder,
    sweepNow,
    async stop() {
      clearInterval(timer);
      await forwarder.stop();
      await sweeping;
      await queue.stop();
    },
  };
}
