// CloudWatch EMF metrics for Lambda, in a file of its own so Lambda bundles do not carry prom-client.
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { THROTTLED_ERROR_CLASS } from "./api/external.ts";
import type { AdmissionWaitResult, ExternalVerb, MetricsSink } from "./metrics.ts";
import type { Outcome } from "./reconciler/contract.ts";

/** Values per metric per EMF line: Powertools flushes at 100 (and drops the dimensions when it does). */
const EMF_MAX_VALUES = 99;

interface EmfGroup {
  dimensions: Record<string, string>;
  counts: Map<string, number>;
  values: Map<string, number[]>;
}

export interface EmfMetricsOptions {
  /** CloudWatch namespace. Default "driftless". */
  namespace?: string;
  /** The `service` dimension. Default "driftless". */
  serviceName?: string;
  /** A Powertools Metrics instance to write through (tests, shared default dimensions). */
  metrics?: Metrics;
}

/**
 * The CloudWatch EMF adapter: accumulates a batch's metrics in memory and writes them as EMF lines to
 * stdout on publish(), one line per dimension set (Lambda ships stdout to CloudWatch Logs, which turns
 * EMF lines into metrics: no API call, no extra latency).
 */
export class EmfMetrics implements MetricsSink {
  readonly #metrics: Metrics;
  readonly #groups = new Map<string, EmfGroup>();

  constructor(opts: EmfMetricsOptions = {}) {
    this.#metrics =
      opts.metrics ??
      new Metrics({ namespace: opts.namespace ?? "driftless", serviceName: opts.serviceName ?? "driftless" });
  }

  #group(dimensions: Record<string, string>): EmfGroup {
    const key = JSON.stringify(dimensions);
    let g = this.#groups.get(key);
    if (!g) {
      g = { dimensions, counts: new Map(), values: new Map() };
      this.#groups.set(key, g);
    }
    return g;
  }

  #count(dimensions: Record<string, string>, name: string, n = 1) {
    const g = this.#group(dimensions);
    g.counts.set(name, (g.counts.get(name) ?? 0) + n);
  }

  #value(dimensions: Record<string, string>, name: string, value: number) {
    const g = this.#group(dimensions);
    const list = g.values.get(name) ?? [];
    list.push(value);
    g.values.set(name, list);
  }

  reconciled(kind: string, outcome: Outcome, durationMs: number): void {
    this.#count({ kind, outcome }, "Reconciles");
    this.#value({ kind }, "ReconcileDuration", durationMs);
  }

  externalCall(kind: string, verb: ExternalVerb, errorClass: string | undefined): void {
    this.#count({ kind, verb }, "CloudApiCalls");
    if (errorClass === undefined) return;
    this.#count({ kind, verb }, "CloudApiErrors");
    if (errorClass === THROTTLED_ERROR_CLASS) this.#count({ kind, verb }, "CloudApiThrottles");
  }

  queueAge(ageMs: number): void {
    this.#value({}, "QueueAge", Math.max(0, ageMs));
  }

  admissionWait(result: AdmissionWaitResult): void {
    this.#count({ result }, "DoorbellAdmissionWaits");
  }

  /** Whether anything was recorded since the last publish. */
  get pending(): boolean {
    return this.#groups.size > 0;
  }

  /** Writes what was recorded since the last publish as EMF lines and forgets it. Call after each batch. */
  publish(): void {
    const groups = [...this.#groups.values()];
    this.#groups.clear();
    for (const g of groups) {
      const chunks = Math.max(1, ...[...g.values.values()].map((v) => Math.ceil(v.length / EMF_MAX_VALUES)));
      for (let chunk = 0; chunk < chunks; chunk++) {
        let added = 0;
        if (Object.keys(g.dimensions).length > 0) this.#metrics.addDimensions(g.dimensions);
        if (chunk === 0) {
          for (const [name, n] of g.counts) {
            this.#metrics.addMetric(name, MetricUnit.Count, n);
            added++;
          }
        }
        for (const [name, list] of g.values) {
          for (const v of list.slice(chunk * EMF_MAX_VALUES, (chunk + 1) * EMF_MAX_VALUES)) {
            this.#metrics.addMetric(name, MetricUnit.Milliseconds, v);
            added++;
          }
        }
        if (added > 0) this.#metrics.publishStoredMetrics();
        else this.#metrics.clearDimensions();
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// The HTTP endpoints of `driftless run`
