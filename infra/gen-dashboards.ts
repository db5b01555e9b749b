// Generates the dashboards from the metric definitions, so a panel cannot name a metric the code does not
// emit: the names and labels come from the Prometheus registry of `driftless run` (shared/metrics.ts and
// the run gauges of shared/pipeline/run.ts) and from what EmfMetrics (shared/metrics-emf.ts) serialises.
// - infra/dashboards/driftless-grafana.json: a Grafana dashboard (Prometheus data source, chosen on import).
// - serverless.yml, between marker comments: a CloudWatch dashboard of the functions' EMF metrics and of
//   the queues' AWS/SQS metrics.
// `npm run gen:dashboards` writes them; `--check` fails when either is stale.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { THROTTLED_ERROR_CLASS } from "../shared/api/external.ts";
import { PrometheusMetrics } from "../shared/metrics.ts";
import { EmfMetrics } from "../shared/metrics-emf.ts";
import { runGauges } from "../shared/pipeline/run.ts";
import type { Outcome } from "../shared/reconciler/contract.ts";
import { between } from "./gen-kinds.ts";

const ROOT = join(import.meta.dirname, "..");
export const GRAFANA_FILE = "infra/dashboards/driftless-grafana.json";
export const SERVERLESS = "serverless.yml";
/** The CloudWatch namespace functions/aws/reconcile.ts writes its EMF metrics to. */
export const EMF_NAMESPACE = "driftless";

/** Reconciles that corrected drift: the cloud differed from the spec and driftless updated it. */
const DRIFT_CORRECTED: Outcome = "updated";
/** `${name}` as it stands in the output: an osls variable (serverless.yml) or a Grafana variable. */
const variable = (name: string) => `\${${name}}`;

// --- what the code emits ----------------------------------------------------------------------------------

export interface PromMetric {
  name: string;
  type: string;
  labels: string[];
}

/** Every metric `driftless run` serves on /metrics (process metrics aside): its registry, read. */
export async function prometheusCatalog(): Promise<Map<string, PromMetric>> {
  const m = new PrometheusMetrics({
    processMetrics: false,
    gauges: runGauges(
      () => undefined,
      () => undefined,
    ),
  });
  const out = new Map<string, PromMetric>();
  for (const metric of m.registry.getMetricsAsArray()) {
    // prom-client's metric objects: get() and labelNames, which its MetricObject type leaves out.
    const full = metric as unknown as {
      get(): Promise<{ name: string; type: string }>;
      labelNames?: string[];
    };
    const { name, type } = await full.get();
    const labels = [...(full.labelNames ?? [])];
    out.set(name, { name, type: String(type), labels });
  }
  return out;
}

export interface EmfMetric {
  name: string;
  /** The dimension set CloudWatch keys the metric by (Powertools adds `service`). */
  dimensions: string[];
}

/** Keeps what EmfMetrics publishes instead of printing it: the EMF objects Lambda would log. */
class RecordingMetrics extends Metrics {
  readonly published: Array<ReturnType<Metrics["serializeMetrics"]>> = [];
  override publishStoredMetrics(): this {
    if (this.hasStoredMetrics()) this.published.push(this.serializeMetrics());
    this.clearMetrics();
    this.clearDimensions();
    this.clearMetadata();
    return this;
  }
}

/** Every EMF metric and dimension set the functions emit: EmfMetrics driven through each of its calls. */
export function emfCatalog(): EmfMetric[] {
  const recording = new RecordingMetrics({ namespace: EMF_NAMESPACE, serviceName: "driftless-reconcile" });
  const m = new EmfMetrics({ metrics: recording });
  m.reconciled("Queue", DRIFT_CORRECTED, 12);
  m.externalCall("Queue", "observe", THROTTLED_ERROR_CLASS);
  m.queueAge(40);
  m.admissionWait("waited");
  m.publish();
  const out = new Map<string, EmfMetric>();
  for (const line of recording.published)
    for (const d of line._aws.CloudWatchMetrics)
      for (const metric of d.Metrics)
        for (const dims of d.Dimensions) {
          const dimensions = [...dims].sort();
          out.set(`${metric.Name}|${dimensions.join(",")}`, { name: metric.Name, dimensions });
        }
  return [...out.values()];
}

/**
 * The AWS/SQS metrics SQS publishes per queue (dimension QueueName), from AWS's "Available CloudWatch
 * metrics for Amazon SQS" (docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/
 * sqs-available-cloudwatch-metrics.html, read 2026-11-27): data, not code driftless emits.
 */
export const SQS_METRICS = [
  "ApproximateAgeOfOldestMessage",
  "ApproximateNumberOfMessagesDelayed",
  "ApproximateNumberOfMessagesNotVisible",
  "ApproximateNumberOfMessagesVisible",
  "NumberOfEmptyReceives",
  "NumberOfMessagesDeleted",
  "NumberOfMessagesReceived",
  "NumberOfMessagesSent",
  "SentMessageSize",
] as const;

// --- Grafana ----------------------------------------------------------------------------------------------

interface PromPanel {
  title: string;
  description: string;
  unit: string;
  targets: Array<{ expr: string; legend: string }>;
  /** Bar-ish totals rather than rates over time. */
  stat?: boolean;
}

/** PromQL naming a metric through the catalog: an unknown metric or label stops the generator. */
function promQuery(catalog: Map<string, PromMetric>) {
  return (name: string, labels: string[] = []) => {
    const base = name.replace(/_(bucket|sum|count)$/, "");
    const m = catalog.get(name) ?? (base !== name ? catalog.get(base) : undefined);
    if (!m || (base !== name && m.type !== "histogram"))
      throw new Error(`dashboard names ${name}, which driftless does not emit`);
    for (const l of labels)
      if (!m.labels.includes(l)) throw new Error(`dashboard uses label ${l} of ${m.name}, which has none`);
    return name;
  };
}

export function grafanaPanels(catalog: Map<string, PromMetric>): PromPanel[] {
  const q = promQuery(catalog);
  const reconciles = q("driftless_reconciles_total", ["kind", "outcome"]);
  const calls = q("driftless_cloud_api_calls_total", ["kind", "verb"]);
  const throttles = q("driftless_cloud_api_throttles_total", ["kind", "verb"]);
  const errors = q("driftless_cloud_api_errors_total", ["kind", "error"]);
  const duration = q("driftless_reconcile_duration_seconds_bucket", ["kind"]);
  const age = q("driftless_queue_age_seconds_bucket");
  return [
    {
      title: "Reconciles by outcome",
      description: "Reconciles per second, by outcome (in-sync, created, updated, error, …).",
      unit: "ops",
      targets: [{ expr: `sum by (outcome) (rate(${reconciles}[$__rate_interval]))`, legend: "{{outcome}}" }],
    },
    {
      title: "Reconciles by kind",
      description: "Reconciles per second, by managed kind.",
      unit: "ops",
      targets: [{ expr: `sum by (kind) (rate(${reconciles}[$__rate_interval]))`, legend: "{{kind}}" }],
    },
    {
      title: "Drift corrected per hour",
      description: `Reconciles that found the cloud different from the spec and updated it (outcome "${DRIFT_CORRECTED}"), per hour, by kind.`,
      unit: "short",
      targets: [
        {
          expr: `sum by (kind) (increase(${reconciles}{outcome="${DRIFT_CORRECTED}"}[1h]))`,
          legend: "{{kind}}",
        },
      ],
    },
    {
      title: "Reconcile duration p95 by kind",
      description: "95th percentile of one reconcile's duration.",
      unit: "s",
      targets: [
        {
          expr: `histogram_quantile(0.95, sum by (kind, le) (rate(${duration}[$__rate_interval])))`,
          legend: "{{kind}}",
        },
      ],
    },
    {
      title: "Queue age",
      description: "How long a reconcile message waited in the queue (now − message.at): p50 and p95.",
      unit: "s",
      targets: [
        { expr: `histogram_quantile(0.5, sum by (le) (rate(${age}[$__rate_interval])))`, legend: "p50" },
        { expr: `histogram_quantile(0.95, sum by (le) (rate(${age}[$__rate_interval])))`, legend: "p95" },
      ],
    },
    {
      title: "Queue depth",
      description: "Keys waiting (due or delayed), delayed, and reconciles running now.",
      unit: "short",
      targets: [
        { expr: q("driftless_queue_pending"), legend: "pending" },
        { expr: q("driftless_queue_delayed"), legend: "delayed" },
        { expr: q("driftless_queue_in_flight"), legend: "in flight" },
      ],
    },
    {
      title: "Dead-lettered",
      description: "Messages dead-lettered since `driftless run` started (driftless dlq lists them).",
      unit: "short",
      stat: true,
      targets: [{ expr: q("driftless_queue_dead_lettered"), legend: "dead-lettered" }],
    },
    {
      title: "Doorbell waits",
      description:
        "Doorbell messages by what the worker found of their write: stored, waited (stored within the in-worker wait) or requeued.",
      unit: "ops",
      targets: [
        {
          expr: `sum by (result) (rate(${q("driftless_doorbell_admission_waits_total", ["result"])}[$__rate_interval]))`,
          legend: "{{result}}",
        },
      ],
    },
    {
      title: "Cloud API calls by verb",
      description: "External calls per second: observe, observeMany, create, update, delete.",
      unit: "ops",
      targets: [{ expr: `sum by (verb) (rate(${calls}[$__rate_interval]))`, legend: "{{verb}}" }],
    },
    {
      title: "Cloud API throttles and errors",
      description: "Throttled calls by kind, and failed calls by error class.",
      unit: "ops",
      targets: [
        { expr: `sum by (kind) (rate(${throttles}[$__rate_interval]))`, legend: "throttled {{kind}}" },
        { expr: `sum by (error) (rate(${errors}[$__rate_interval]))`, legend: "{{error}}" },
      ],
    },
    {
      title: "Forwarder: watched kinds by state",
      description: "Kinds the forwarder watches, by state (watching, listing, retrying, missing…).",
      unit: "short",
      targets: [
        { expr: `sum by (state) (${q("driftless_forwarder_kinds", ["state"])})`, legend: "{{state}}" },
      ],
    },
    {
      title: "Forwarder: keys forwarded",
      description: "Keys the forwarder handed to the queue, per second.",
      unit: "ops",
      targets: [
        { expr: `rate(${q("driftless_forwarder_forwarded")}[$__rate_interval])`, legend: "forwarded" },
      ],
    },
  ];
}

/** Panels query the data source the `datasource` variable picks (any Prometheus; switchable in the UI). */
const DS = { type: "prometheus", uid: variable("datasource") };

/** The dashboard JSON model, importable as is (Dashboards → Import): its `datasource` variable picks a Prometheus. */
export function grafanaDashboard(catalog: Map<string, PromMetric>): object {
  const panels = grafanaPanels(catalog).map((p, i) => ({
    id: i + 1,
    type: p.stat ? "stat" : "timeseries",
    title: p.title,
    description: p.description,
    datasource: DS,
    gridPos: { h: 8, w: 12, x: (i % 2) * 12, y: Math.floor(i / 2) * 8 },
    fieldConfig: { defaults: { unit: p.unit }, overrides: [] },
    options: p.stat
      ? { reduceOptions: { calcs: ["lastNotNull"], fields: "", values: false }, colorMode: "value" }
      : {
          legend: { displayMode: "list", placement: "bottom", showLegend: true },
          tooltip: { mode: "multi" },
        },
    targets: p.targets.map((t, j) => ({
      refId: String.fromCharCode(65 + j),
      datasource: DS,
      expr: t.expr,
      legendFormat: t.legend,
    })),
  }));
  return {
    __requires: [
      { type: "grafana", id: "grafana", name: "Grafana", version: "10.0.0" },
      { type: "datasource", id: "prometheus", name: "Prometheus", version: "1.0.0" },
      { type: "panel", id: "timeseries", name: "Time series", version: "" },
      { type: "panel", id: "stat", name: "Stat", version: "" },
    ],
    id: null,
    uid: "driftless-run",
    title: "driftless run",
    description:
      "driftless run and its forwarder: reconciles, queue, cloud calls, drift. Generated by infra/gen-dashboards.ts.",
    tags: ["driftless"],
    timezone: "browser",
    editable: true,
    graphTooltip: 1,
    time: { from: "now-6h", to: "now" },
    timepicker: {},
    refresh: "30s",
    schemaVersion: 39,
    version: 1,
    links: [],
    annotations: { list: [] },
    templating: {
      list: [
        {
          name: "datasource",
          label: "Prometheus",
          type: "datasource",
          query: "prometheus",
          hide: 0,
          current: {},
          options: [],
          refresh: 1,
          regex: "",
        },
      ],
    },
    panels,
  };
}

// --- CloudWatch -------------------------------------------------------------------------------------------

type CwMetricRow = Array<string | Record<string, string>>;

interface CwWidget {
  title: string;
  stat: string;
  period: number;
  metrics: CwMetricRow[];
}

/** SEARCH over an EMF metric with its exact dimension set: kinds and outcomes appear as they are emitted. */
function emfSearch(catalog: EmfMetric[]) {
  return (
    name: string,
    dimensions: string[],
    stat: string,
    period: number,
    id: string,
    label?: string,
    where: Record<string, string> = {},
  ) => {
    const dims = [...dimensions, "service"].sort();
    if (!catalog.some((m) => m.name === name && m.dimensions.join(",") === dims.join(",")))
      throw new Error(
        `dashboard names EMF metric ${name} [${dims.join(", ")}], which driftless does not emit`,
      );
    for (const d of Object.keys(where))
      if (!dims.includes(d)) throw new Error(`dashboard filters ${name} by ${d}, which it is not keyed by`);
    const filter = Object.entries(where).map(([k, v]) => ` ${k}="${v}"`);
    return {
      expression: `SEARCH('{${EMF_NAMESPACE},${dims.join(",")}} MetricName="${name}"${filter.join("")}', '${stat}', ${period})`,
      id,
      ...(label ? { label } : {}),
    };
  };
}

function sqs(name: (typeof SQS_METRICS)[number], queue: string, label: string): CwMetricRow {
  return ["AWS/SQS", name, "QueueName", queue, { label }];
}

export function cloudWatchWidgets(catalog: EmfMetric[]): CwWidget[] {
  const s = emfSearch(catalog);
  const queue = variable("self:custom.queueName");
  const dlq = variable("self:custom.deadLetterQueueName");
  return [
    {
      title: "Reconciles by outcome and kind",
      stat: "Sum",
      period: 300,
      metrics: [[s("Reconciles", ["kind", "outcome"], "Sum", 300, "r")]],
    },
    {
      title: "Drift corrected per hour",
      stat: "Sum",
      period: 3600,
      metrics: [
        [s("Reconciles", ["kind", "outcome"], "Sum", 3600, "d", undefined, { outcome: DRIFT_CORRECTED })],
      ],
    },
    {
      title: "Queue age",
      stat: "p95",
      period: 300,
      metrics: [
        [s("QueueAge", [], "p95", 300, "a", "message wait p95 (ms)")],
        sqs("ApproximateAgeOfOldestMessage", queue, "oldest message (s)"),
      ],
    },
    {
      title: "Queue depth",
      stat: "Maximum",
      period: 60,
      metrics: [
        sqs("ApproximateNumberOfMessagesVisible", queue, "visible"),
        sqs("ApproximateNumberOfMessagesNotVisible", queue, "in flight"),
        sqs("ApproximateNumberOfMessagesDelayed", queue, "delayed"),
      ],
    },
    {
      title: "Dead-letter queue depth",
      stat: "Maximum",
      period: 60,
      metrics: [sqs("ApproximateNumberOfMessagesVisible", dlq, "dead-lettered")],
    },
    {
      title: "Doorbell waits",
      stat: "Sum",
      period: 300,
      metrics: [[s("DoorbellAdmissionWaits", ["result"], "Sum", 300, "w")]],
    },
    {
      title: "Cloud API calls",
      stat: "Sum",
      period: 300,
      metrics: [[s("CloudApiCalls", ["kind", "verb"], "Sum", 300, "c")]],
    },
    {
      title: "Cloud API throttles and errors",
      stat: "Sum",
      period: 300,
      metrics: [
        [s("CloudApiThrottles", ["kind", "verb"], "Sum", 300, "t")],
        [s("CloudApiErrors", ["kind", "verb"], "Sum", 300, "e")],
      ],
    },
    {
      title: "Reconcile duration p95 by kind",
      stat: "p95",
      period: 300,
      metrics: [[s("ReconcileDuration", ["kind"], "p95", 300, "p")]],
    },
  ];
}

/** The CloudWatch dashboard body (the JSON CloudWatch's PutDashboard takes). */
export function cloudWatchBody(catalog: EmfMetric[]): object {
  return {
    widgets: cloudWatchWidgets(catalog).map((w, i) => ({
      type: "metric",
      x: (i % 2) * 12,
      y: Math.floor(i / 2) * 6,
      width: 12,
      height: 6,
      properties: {
        title: w.title,
        view: "timeSeries",
        stacked: false,
        region: variable("self:custom.stage.region"),
        stat: w.stat,
        period: w.period,
        metrics: w.metrics,
      },
    })),
  };
}

const CW_INDENT = "    ";
export const CW_BEGIN = `${CW_INDENT}# BEGIN dashboard (generated by npm run gen:dashboards from shared/metrics-emf.ts; do not edit)`;
export const CW_END = `${CW_INDENT}# END dashboard`;

/** The serverless.yml resource: a JSON body in one YAML string (osls resolves the ${…} inside). */
export function cloudWatchSection(catalog: EmfMetric[]): string {
  return [
    `${CW_INDENT}# The functions' EMF metrics (namespace ${EMF_NAMESPACE}) and the queues' AWS/SQS metrics (docs/operations.md).`,
    `${CW_INDENT}Dashboard:`,
    `${CW_INDENT}  Type: AWS::CloudWatch::Dashboard`,
    `${CW_INDENT}  Properties:`,
    `${CW_INDENT}    DashboardName: \${self:service}-\${sls:stage}`,
    `${CW_INDENT}    DashboardBody: '${JSON.stringify(cloudWatchBody(catalog)).replaceAll("'", "''")}'`,
  ].join("\n");
}

/** Every generated file as it should be: repository path → content. */
export async function dashboardFiles(root = ROOT): Promise<Map<string, string>> {
  const grafana = `${JSON.stringify(grafanaDashboard(await prometheusCatalog()), null, 2)}\n`;
  const serverless = between(
    readFileSync(join(root, SERVERLESS), "utf8"),
    CW_BEGIN,
    CW_END,
    cloudWatchSection(emfCatalog()),
    SERVERLESS,
  );
  return new Map([
    [GRAFANA_FILE, grafana],
    [SERVERLESS, serverless],
  ]);
}

if (import.meta.main) {
  const files = await dashboardFiles();
  if (process.argv.includes("--check")) {
    const stale = [...files].filter(([f, text]) => {
      try {
        return readFileSync(join(ROOT, f), "utf8") !== text;
      } catch {
        return true;
      }
    });
    if (stale.length > 0) {
      console.error(`stale: ${stale.map(([f]) => f).join(", ")}. Run npm run gen:dashboards.`);
      process.exit(1);
    }
  } else {
    for (const [f, text] of files) writeFileSync(join(ROOT, f), text);
    console.log(`wrote ${[...files.keys()].join(", ")}`);
  }
}
