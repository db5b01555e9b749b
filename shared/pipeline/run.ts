// One-process mode (`driftless run`): forwarder + memory queue + workers + sweep timer against any
// kubeconfig. The serverless deployment runs the same pieces, split across functions.
import type { KubeConfig } from "@kubernetes/client-node";
import type { ManagedKindProvider, ProviderConfigKind } from "../api/external.ts";
import { doorbellPath, secretProblem } from "../doorbell/http.ts";
import { createDoorbell } from "../doorbell/index.ts";
import { type DoorbellServer, startDoorbellServer } from "../doorbell/server.ts";
import {
  applyWebhookConfiguration,
  DEFAULT_WEBHOOK_NAME,
  deleteWebhookConfiguration,
  doorbellWebhookConfiguration,
} from "../doorbell/webhook.ts";
import { type RunningAgent, startExportAgentFor } from "../export/run.ts";
import { FIELD_MANAGER, Kube } from "../kube/client.ts";
import { KubeEventRecorder } from "../kube/events.ts";
import type { Logger } from "../log.ts";
import { type HealthCheck, type MetricsSink, PrometheusMetrics, startMetricsServer } from "../metrics.ts";
import { type DeadLetter, MemoryQueue } from "../queue/index.ts";
import type { EventRecorder } from "../reconciler/contract.ts";
import type { RateLimit } from "../reconciler/rate-limit.ts";
import type { ManagedReconciler } from "../reconciler/reconciler.ts";
import { deadLetterNote } from "../worker/dead-letter.ts";
import { reconcileHandler } from "../worker/memory.ts";
import { keyOfMessage } from "../worker/message.ts";
import { createWorker } from "../worker/worker.ts";
import { Forwarder, type ForwarderOptions } from "./forwarder.ts";
import { logQueueEvents } from "./functions.ts";
import { ProviderConfigUsers } from "./provider-config-users.ts";
import { ReferrerIndex } from "./referrers.ts";
import { sweep } from "./sweep.ts";
import { SweepIndex } from "./sweep-index.ts";

/** Due messages waiting this long with no reconcile finishing make /readyz fail (the queue is stuck). */
export const DEFAULT_STUCK_AFTER_MS = 5 * 60_000;

export interface RunOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  kinds: ManagedKindProvider[];
  providerConfigKinds: ProviderConfigKind[];
  workers?: number;
  pollIntervalMs?: number;
  /** Namespaces a managed resource may read Secrets from besides its connection Secret's (see Reconciler). */
  secretRefNamespaces?: readonly string[];
  /** Namespaces whose namespaced ProviderConfigs may use InjectedIdentity (shared/reconciler/tenancy.ts). */
  ambientIdentityNamespaces?: readonly string[];
  sweepIntervalMs?: number;
  /** Adaptive polling's longest interval (sweep.ts); default: the poll interval (no adaptation). */
  maxPollIntervalMs?: number;
  /** The least interval `crossplane.io/poll-interval` may set; default 30 s. */
  minPollIntervalMs?: number;
  /** Leave Crossplane's default tags off new resources (DRIFTLESS_SKIP_DEFAULT_TAGS). */
  skipDefaultTags?: boolean;
  /** Batched drift checks of in-sync resources (sweep.ts, worker/batch.ts); default false. */
  sweepBatch?: boolean;
  /** Keep the sweep's index between sweeps (sweep-index.ts): each reads changes and due slots; default false. */
  sweepIndex?: boolean;
  /** Cloud calls per ProviderConfig (one process: the whole limit); default DEFAULT_RATE_LIMIT. */
  rateLimit?: RateLimit;
  events?: EventRecorder;
  /** Serve /metrics, /healthz and /readyz on this port (0: a free port, see Running.metricsPort). */
  metricsPort?: number;
  metricsHost?: string;
  /** Report to this sink instead (or, with metricsPort, besides the Prometheus one). */
  metrics?: MetricsSink;
  /** /readyz fails when due messages have waited this long with no reconcile finishing. */
  stuckAfterMs?: number;
  /** Only watch and sweep objects matching this label selector (sharding, tests). */
  labelSelector?: string;
  /** CRDs being installed beside the run: when each kind's CRD is served (see ForwarderOptions). */
  whenServed?: ForwarderOptions["whenServed"];
  /** App clusters (bound with `driftless bind`) whose claims this control plane serves: one agent each. */
  appClusters?: KubeConfig[];
  /**
   * Doorbell mode: instead of the forwarder's watches, serve the admission doorbell over HTTPS and let
   * the API server call it (shared/doorbell). No watch is held open.
   */
  doorbell?: RunDoorbellOptions;
}

export interface RunDoorbellOptions {
  /** The path secret (DRIFTLESS_DOORBELL_SECRET). */
  secret: string;
  /** PEM serving certificate and key; the certificate must be valid for the host the API server calls. */
  cert: string | Buffer;
  key: string | Buffer;
  port?: number;
  host?: string;
  /**
   * Apply the ValidatingWebhookConfiguration pointing at this server (and delete it on stop, so the
   * API server does not wait on a gone endpoint). Its CA bundle: the PEM CA that signs `cert`.
   */
  webhook?: { caBundlePem: string; name?: string; timeoutSeconds?: number; url?: string };
}

export interface Running {
  kube: Kube;
  queue: MemoryQueue;
  /** The managed engine behind the worker's router. */
  reconciler: ManagedReconciler;
  /** The forwarder (absent in doorbell mode). */
  forwarder?: Forwarder;
  /** The doorbell's HTTPS server (doorbell mode). */
  doorbell?: DoorbellServer;
  /** The Prometheus metrics, when a metrics port was given. */
  metrics?: PrometheusMetrics;
  /** The port /metrics, /healthz and /readyz are served on, when a metrics port was given. */
  metricsPort?: number;
  /** The /readyz checks: every kind watched and listed, and the queue making progress. */
  readiness(): HealthCheck[];
  /** The binding agents of the app clusters, in the order given. */
  agents: RunningAgent[];
  /** Runs one sweep now (also what the timer does). */
  sweepNow(): Promise<void>;
  /** Stops taking work, finishes in-flight reconciles, closes watches. */
  stop(): Promise<void>;
}

export async function startRun(o: RunOptions): Promise<Running> {
  // Started first, so a failing one (an app cluster not bound) leaves nothing else running.
  const agents = await startAgents(o);
  const kube = new Kube(o.kubeConfig, { fieldManager: FIELD_MANAGER });
  // Filled in below, once the queue and the forwarder exist (the gauges read them at scrape time).
  let queueRef: MemoryQueue | undefined;
  let forwarderRef: Forwarder | undefined;
  const prometheus =
    o.metricsPort !== undefined
      ? new PrometheusMetrics({
          gauges: runGauges(
            () => queueRef,
            () => forwarderRef,
          ),
        })
      : undefined;
  const metrics = combine([prometheus, o.metrics]);
  // Listen first: a port in use fails the start before any watch or worker runs.
  let readiness = (): HealthCheck[] => [{ name: "start", ok: false, detail: "starting" }];
  const server =
    prometheus && o.metricsPort !== undefined
      ? await startMetricsServer({
          metrics: prometheus,
          port: o.metricsPort,
          ...(o.metricsHost ? { host: o.metricsHost } : {}),
          readiness: () => readiness(),
        }).catch((err: unknown) => {
          throw new Error(
            `cannot serve /metrics on port ${o.metricsPort}: ${(err as Error).message}; set DRIFTLESS_METRICS_PORT (0: any free port) or use --no-metrics`,
            { cause: err },
          );
        })
      : undefined;
  const events = o.events ?? new KubeEventRecorder(kube);
  // The forwarder's lists and watches keep it (no doorbell, no label selector: it sees every object), and the
  // ProviderConfig reconciler counts users from it instead of listing every kind per reconcile.
  const knownUsers =
    o.doorbell || o.labelSelector ? undefined : new ProviderConfigUsers(o.kinds.map((k) => k.definition));
  // The same wiring as the serverless functions', with claims.
  const worker = createWorker({
    kube,
    kinds: o.kinds,
    providerConfigKinds: o.providerConfigKinds,
    logger: o.logger,
    pollIntervalMs: o.pollIntervalMs,
    minPollIntervalMs: o.minPollIntervalMs,
    skipDefaultTags: o.skipDefaultTags,
    secretRefNamespaces: o.secretRefNamespaces,
    ambientIdentityNamespaces: o.ambientIdentityNamespaces,
    knownUsers,
    ...(o.rateLimit ? { rateLimit: o.rateLimit } : {}),
    claims: true,
    metrics,
    events,
  });
  // Filled in below, once every served type is known.
  let noteDeadLetter: ((d: DeadLetter) => void) | undefined;
  const queue = new MemoryQueue({
    workers: o.workers ?? 8,
    onEvent: logQueueEvents(o.logger),
    onDeadLetter: (d: DeadLetter) => {
      o.logger.error({ key: d.key, receiveCount: d.receiveCount, error: d.error.message }, "dead-lettered");
      noteDeadLetter?.(d);
    },
  });
  queueRef = queue;
  queue.start(
    reconcileHandler({
      reconcile: worker.reconcile,
      checkBatch: worker.checkBatch(queue),
      storedVersion: worker.storedVersion,
      metrics,
    }),
  );

  const types = worker.types;
  const note = deadLetterNote({ kube, types, events, logger: o.logger });
  noteDeadLetter = (d) => void note(keyOfMessage(d.message), d.receiveCount, d.error);
  let forwarder: Forwarder | undefined;
  let doorbell: DoorbellServer | undefined;
  let webhookName: string | undefined;
  if (o.doorbell) {
    const d = o.doorbell;
    const problem = secretProblem(d.secret);
    if (problem) throw new Error(`cannot start the doorbell: ${problem}`);
    doorbell = await startDoorbellServer({
      cert: d.cert,
      key: d.key,
      ...(d.port !== undefined ? { port: d.port } : {}),
      ...(d.host ? { host: d.host } : {}),
      // Event Grid deliveries too (/<secret>/events/azure): Azure kinds are served by this process.
      handle: createDoorbell({
        secret: d.secret,
        producer: queue,
        types,
        logger: o.logger,
        resolver: worker.cloudEvents,
        kube,
      }),
    });
    if (d.webhook) {
      const url = d.webhook.url ?? `${doorbell.baseUrl}${doorbellPath(d.secret, "admit")}`;
      const config = doorbellWebhookConfiguration({
        url,
        // The in-use guard beside the admit route: the same server, the same secret.
        inUseUrl: url.endsWith("/admit") ? `${url.slice(0, -"admit".length)}in-use` : undefined,
        types,
        caBundlePem: d.webhook.caBundlePem,
        name: d.webhook.name,
        timeoutSeconds: d.webhook.timeoutSeconds,
        labelSelector: o.labelSelector,
      });
      try {
        await applyWebhookConfiguration(kube, config);
      } catch (err) {
        await doorbell.close();
        throw new Error(`cannot apply the doorbell's webhook configuration: ${(err as Error).message}`, {
          cause: err,
        });
      }
      webhookName = d.webhook.name ?? DEFAULT_WEBHOOK_NAME;
    }
    o.logger.info({ port: doorbell.port, webhook: webhookName ?? "(not applied)" }, "doorbell serving");
  } else {
    forwarder = new Forwarder({
      kube,
      types,
      sink: queue,
      logger: o.logger,
      ...(o.labelSelector ? { labelSelector: o.labelSelector } : {}),
      ...(o.whenServed ? { whenServed: o.whenServed } : {}),
      // A connection Secret edited or deleted by hand brings its owner's reconcile at once.
      connectionSecrets: true,
      // A resource turning Ready brings the reconciles of those waiting for it by reference at once.
      referrers: new ReferrerIndex(o.kinds.map((k) => k.definition)),
      ...(knownUsers ? { providerConfigUsers: knownUsers } : {}),
    });
    forwarderRef = forwarder;
    await forwarder.start();
  }

  const pollIntervalMs = o.pollIntervalMs ?? 5 * 60_000;
  const sweepIntervalMs = o.sweepIntervalMs ?? 60_000;
  let sweeping: Promise<void> | undefined;
  const index = o.sweepIndex
    ? new SweepIndex({
        scheduleMs: sweepIntervalMs,
        defaultPollMs: pollIntervalMs,
        maxPollMs: o.maxPollIntervalMs,
        minPollMs: o.minPollIntervalMs,
      })
    : undefined;
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
        maxPollMs: o.maxPollIntervalMs,
        minPollMs: o.minPollIntervalMs,
        batch: o.sweepBatch ?? false,
        logger: o.logger,
        ...(o.labelSelector ? { labelSelector: o.labelSelector } : {}),
        index,
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

  const stuckAfterMs = o.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS;
  const triggerCheck = (): HealthCheck => {
    if (!forwarder) return { name: "doorbell", ok: true, detail: `serving on port ${doorbell?.port}` };
    const f = forwarder.stats();
    // The connection-Secret watch is a shortcut (the poll repairs Secrets too), and may lack RBAC: not readiness.
    const notWatching = f.kinds.filter(
      (k) =>
        !(k.apiVersion === "v1" && k.kind === "Secret") &&
        (!k.synced || k.state === "missing" || k.state === "retrying"),
    );
    return {
      name: "forwarder",
      ok: notWatching.length === 0,
      detail:
        notWatching.length === 0
          ? `watching ${f.kinds.length} kinds`
          : `not watching: ${notWatching.map((k) => `${k.kind}.${k.apiVersion.split("/")[0]} (${k.state})`).join(", ")}`,
    };
  };
  readiness = (): HealthCheck[] => {
    const q = queue.stats();
    const due = q.pending - q.delayed;
    const idleMs = Date.now() - q.lastSettledAt;
    const stuck = due > 0 && idleMs > stuckAfterMs;
    return [
      triggerCheck(),
      {
        name: "queue",
        ok: !stuck,
        detail: stuck
          ? `${due} due messages and no reconcile finished for ${Math.round(idleMs / 1000)} s`
          : `${q.pending} pending (${q.delayed} delayed), ${q.inFlight} in flight, ${q.deadLettered} dead-lettered`,
      },
    ];
  };
  if (server) o.logger.info({ port: server.port }, "serving /metrics, /healthz and /readyz");

  return {
    kube,
    queue,
    reconciler: worker.engine,
    ...(forwarder ? { forwarder } : {}),
    ...(doorbell ? { doorbell } : {}),
    ...(prometheus ? { metrics: prometheus } : {}),
    ...(server ? { metricsPort: server.port } : {}),
    readiness: () => readiness(),
    agents,
    sweepNow,
    async stop() {
      clearInterval(timer);
      await Promise.all(agents.map((a) => a.stop()));
      if (webhookName) {
        // First, so the API server stops calling an endpoint that is about to go.
        await deleteWebhookConfiguration(kube, webhookName).catch((err: unknown) =>
          o.logger.warn(
            { error: (err as Error).message },
            "cannot delete the doorbell's webhook configuration",
          ),
        );
      }
      await forwarder?.stop();
      await doorbell?.close();
      await sweeping;
      await queue.stop();
      await server?.close();
    },
  };
}

/** One binding agent per app cluster; each acts on the control plane as its app cluster's ServiceAccount. */
async function startAgents(o: RunOptions): Promise<RunningAgent[]> {
  const started = await Promise.allSettled(
    (o.appClusters ?? []).map((app) =>
      startExportAgentFor(
        o.kubeConfig,
        app,
        o.logger,
        o.pollIntervalMs ? { pollIntervalMs: o.pollIntervalMs } : {},
      ),
    ),
  );
  const agents = started.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const failed = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) {
    await Promise.all(agents.map((a) => a.stop()));
    throw new Error(`cannot start export agent: ${(failed.reason as Error).message}`, {
      cause: failed.reason,
    });
  }
  return agents;
}

/** Several sinks as one (undefined when there is none). */
function combine(sinks: Array<MetricsSink | undefined>): MetricsSink | undefined {
  const list = sinks.filter((s): s is MetricsSink => s !== undefined);
  if (list.length <= 1) return list[0];
  return {
    reconciled: (...a) => {
      for (const s of list) s.reconciled(...a);
    },
    externalCall: (...a) => {
      for (const s of list) s.externalCall(...a);
    },
    queueAge: (...a) => {
      for (const s of list) s.queueAge(...a);
    },
    admissionWait: (...a) => {
      for (const s of list) s.admissionWait?.(...a);
    },
  };
}

/** Gauges of the memory queue and the forwarder, read at scrape time (infra/gen-dashboards.ts charts them). */
export function runGauges(queue: () => MemoryQueue | undefined, forwarder: () => Forwarder | undefined) {
  const q = (pick: (s: ReturnType<MemoryQueue["stats"]>) => number) => () => {
    const stats = queue()?.stats();
    return stats ? [{ value: pick(stats) }] : [];
  };
  return [
    { name: "driftless_queue_pending", help: "Keys waiting in the queue.", read: q((s) => s.pending) },
    { name: "driftless_queue_delayed", help: "Waiting keys not yet due.", read: q((s) => s.delayed) },
    { name: "driftless_queue_in_flight", help: "Reconciles running now.", read: q((s) => s.inFlight) },
    {
      name: "driftless_queue_dead_lettered",
      help: "Messages dead-lettered since start.",
      read: q((s) => s.deadLettered),
    },
    {
      name: "driftless_forwarder_kinds",
      help: "Watched kinds by state (watching, listing, retrying, missing…).",
      labelNames: ["state"],
      read: () => {
        const counts = new Map<string, number>();
        for (const k of forwarder()?.stats().kinds ?? []) counts.set(k.state, (counts.get(k.state) ?? 0) + 1);
        return [...counts].map(([state, value]) => ({ labels: { state }, value }));
      },
    },
    {
      name: "driftless_forwarder_forwarded",
      help: "Keys the forwarder handed to the queue since start.",
      read: () => {
        const s = forwarder()?.stats();
        return s ? [{ value: s.forwarded }] : [];
      },
    },
  ];
}
