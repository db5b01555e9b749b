// Metrics: one small interface the engine and the workers report to, two adapters behind it.
//
// - PrometheusMetrics: prom-client counters and histograms, served as Prometheus text by `driftless run`
//   (startMetricsServer: /metrics, /healthz, /readyz).
// - EmfMetrics (metrics-emf.ts, kept apart so Lambda bundles carry no prom-client): aggregates per batch and writes CloudWatch Embedded Metric Format lines through
//   @aws-lambda-powertools/metrics; the Lambda handler calls publish() after each batch.
//
// Metric names and labels (Prometheus / EMF):
//   driftless_reconciles_total{kind,outcome}                   / Reconciles            [kind, outcome]
//   driftless_reconcile_duration_seconds{kind}   (histogram)   / ReconcileDuration ms  [kind]
//   driftless_cloud_api_calls_total{kind,verb}                 / CloudApiCalls         [kind, verb]
//   driftless_cloud_api_errors_total{kind,verb,error}          / CloudApiErrors        [kind, verb]
//   driftless_cloud_api_throttles_total{kind,verb}             / CloudApiThrottles     [kind, verb]
//   driftless_queue_age_seconds                  (histogram)   / QueueAge ms           []
// Labels carry kinds, verbs, outcomes and error class names only: never names of resources or values.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { THROTTLED_ERROR_CLASS } from "./api/external.ts";
import type { Outcome, ReconcileMetrics } from "./reconciler/contract.ts";

export type ExternalVerb = "observe" | "observeMany" | "create" | "update" | "delete";

/** What the engine (ReconcileMetrics) and the queue workers report. */
export interface MetricsSink extends ReconcileMetrics {
  reconciled(kind: string, outcome: Outcome, durationMs: number): void;
  externalCall(kind: string, verb: ExternalVerb, errorClass: string | undefined): void;
  /** Time a message waited in the queue: now − message.at. */
  queueAge(ageMs: number): void;
  /** A doorbell message's write: already stored, stored after the in-worker wait, or requeued. */
  admissionWait?(result: AdmissionWaitResult): void;
}

/** What the worker found of the write a doorbell message reports (worker/admission.ts admittedWritePending). */
export type AdmissionWaitResult = "stored" | "waited" | "requeued";

export { THROTTLED_ERROR_CLASS } from "./api/external.ts";

/** Reconcile duration buckets, seconds: an in-sync reconcile is tens of ms, a create can take seconds. */
const DURATION_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Queue age buckets, seconds: from "at once" to "the drift interval has passed". */
const QUEUE_AGE_BUCKETS = [0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600];

/** A gauge read at scrape time (queue depth, forwarder state…). */
export interface GaugeSource {
  name: string;
  help: string;
  labelNames?: readonly string[];
  read(): Array<{ labels?: Record<string, string>; value: number }>;
}

export interface PrometheusMetricsOptions {
  /** Also export Node's process metrics (CPU, memory, event loop lag). Default true. */
  processMetrics?: boolean;
  gauges?: readonly GaugeSource[];
}

/** The Prometheus adapter; its own registry, so tests and several instances never collide. */
export class PrometheusMetrics implements MetricsSink {
  readonly registry = new Registry();
  readonly #reconciles: Counter<"kind" | "outcome">;
  readonly #duration: Histogram<"kind">;
  readonly #calls: Counter<"kind" | "verb">;
  readonly #errors: Counter<"kind" | "verb" | "error">;
  readonly #throttles: Counter<"kind" | "verb">;
  readonly #queueAge: Histogram;
  readonly #admissionWaits: Counter<"result">;

  constructor(opts: PrometheusMetricsOptions = {}) {
    const registers = [this.registry];
    this.#reconciles = new Counter({
      name: "driftless_reconciles_total",
      help: "Reconciles by managed kind and outcome (in-sync, created, updated, error, …).",
      labelNames: ["kind", "outcome"],
      registers,
    });
    this.#duration = new Histogram({
      name: "driftless_reconcile_duration_seconds",
      help: "Duration of one reconcile, seconds.",
      labelNames: ["kind"],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#calls = new Counter({
      name: "driftless_cloud_api_calls_total",
      help: "External (cloud API) calls by managed kind and verb: observe, create, update, delete.",
      labelNames: ["kind", "verb"],
      registers,
    });
    this.#errors = new Counter({
      name: "driftless_cloud_api_errors_total",
      help: "Failed external calls by managed kind, verb and error class.",
      labelNames: ["kind", "verb", "error"],
      registers,
    });
    this.#throttles = new Counter({
      name: "driftless_cloud_api_throttles_total",
      help: "External calls the cloud throttled, by managed kind and verb.",
      labelNames: ["kind", "verb"],
      registers,
    });
    this.#queueAge = new Histogram({
      name: "driftless_queue_age_seconds",
      help: "Time a reconcile message waited in the queue (now − message.at), seconds.",
      buckets: QUEUE_AGE_BUCKETS,
      registers,
    });
    this.#admissionWaits = new Counter({
      name: "driftless_doorbell_admission_waits_total",
      help: "Doorbell messages by what the worker found of their write: stored, waited (stored within the in-worker wait) or requeued.",
      labelNames: ["result"],
      registers,
    });
    for (const g of opts.gauges ?? []) {
      new Gauge({
        name: g.name,
        help: g.help,
        labelNames: [...(g.labelNames ?? [])],
        registers,
        collect() {
          this.reset();
          for (const v of g.read()) {
            if (v.labels) this.set(v.labels, v.value);
            else this.set(v.value);
          }
        },
      });
    }
    if (opts.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: "driftless_" });
  }

  reconciled(kind: string, outcome: Outcome, durationMs: number): void {
    this.#reconciles.inc({ kind, outcome });
    this.#duration.observe({ kind }, durationMs / 1000);
  }

  externalCall(kind: string, verb: ExternalVerb, errorClass: string | undefined): void {
    this.#calls.inc({ kind, verb });
    if (errorClass === undefined) return;
    this.#errors.inc({ kind, verb, error: errorClass });
    if (errorClass === THROTTLED_ERROR_CLASS) this.#throttles.inc({ kind, verb });
  }

  queueAge(ageMs: number): void {
    this.#queueAge.observe(Math.max(0, ageMs) / 1000);
  }

  admissionWait(result: AdmissionWaitResult): void {
    this.#admissionWaits.inc({ result });
  }

  /** The Prometheus text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

export interface HealthCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export interface MetricsServerOptions {
  metrics: PrometheusMetrics;
  /** Port to listen on; 0 picks a free one (see `port` of the result). */
  port: number;
  host?: string;
  /** /readyz: every check must pass. */
  readiness: () => HealthCheck[];
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * Serves /metrics (Prometheus text), /healthz (the process is up and its event loop answers) and
 * /readyz (200 when every readiness check passes, else 503; one `ok|fail name: detail` line per check).
 */
export async function startMetricsServer(o: MetricsServerOptions): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    if (path === "/metrics") {
      o.metrics.text().then(
        (body) => res.writeHead(200, { "content-type": o.metrics.contentType }).end(body),
        (err: unknown) =>
          res
            .writeHead(500, { "content-type": "text/plain" })
            .end(`cannot collect metrics: ${String(err)}\n`),
      );
      return;
    }
    if (path === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
      return;
    }
    if (path === "/readyz") {
      let checks: HealthCheck[];
      try {
        checks = o.readiness();
      } catch (err) {
        checks = [{ name: "readiness", ok: false, detail: String(err) }];
      }
      const ok = checks.every((c) => c.ok);
      const body = checks.map((c) => `${c.ok ? "ok" : "fail"} ${c.name}: ${c.detail}`).join("\n");
      res.writeHead(ok ? 200 : 503, { "content-type": "text/plain" }).end(`${body}\n`);
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("not found: try /metrics, /healthz, /readyz\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host ?? "0.0.0.0", () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.unref();
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
