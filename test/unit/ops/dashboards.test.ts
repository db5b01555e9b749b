// The dashboards (infra/gen-dashboards.ts): checked in up to date, every panel's query naming only metrics
// and labels the code emits (read from the real Prometheus exposition and the real EMF lines), and both
// documents in the shape Grafana's import and CloudWatch's PutDashboard take.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  dashboardFiles,
  EMF_NAMESPACE,
  emfCatalog,
  GRAFANA_FILE,
  SQS_METRICS,
} from "../../../infra/gen-dashboards.ts";
import { THROTTLED_ERROR_CLASS } from "../../../shared/api/external.ts";
import { type MetricsSink, PrometheusMetrics } from "../../../shared/metrics.ts";
import { runGauges } from "../../../shared/pipeline/run.ts";

const ROOT = join(import.meta.dirname, "../../..");
const read = (f: string) => readFileSync(join(ROOT, f), "utf8");

/** Every call a MetricsSink takes, once. */
function drive(m: MetricsSink) {
  m.reconciled("Queue", "updated", 12);
  m.reconciled("Bucket", "in-sync", 3);
  m.externalCall("Queue", "observe", undefined);
  m.externalCall("Queue", "update", THROTTLED_ERROR_CLASS);
  m.queueAge(40);
  m.admissionWait?.("waited");
}

interface Panel {
  id: number;
  type: string;
  title: string;
  datasource: { type: string; uid: string };
  gridPos: { x: number; y: number; w: number; h: number };
  targets: Array<{ refId: string; expr: string; datasource?: { type: string; uid: string } }>;
}
interface GrafanaDashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  id: null;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query: string }> };
  time: { from: string; to: string };
  __requires: Array<{ type: string; id: string }>;
}

interface CwWidget {
  type: string;
  x: number;
  y: number;
  width: number;
  height: number;
  properties: {
    title: string;
    region: string;
    stat: string;
    period: number;
    metrics: Array<Array<string | { expression?: string; id?: string; label?: string }>>;
  };
}

const serverless = () =>
  parse(read("serverless.yml"), { logLevel: "silent" }) as {
    resources: { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };
  };
const cloudWatch = () => {
  const r = serverless().resources.Resources.Dashboard;
  expect(r?.Type).toBe("AWS::CloudWatch::Dashboard");
  return JSON.parse(r?.Properties.DashboardBody as string) as { widgets: CwWidget[] };
};

describe("dashboards", () => {
  it("are generated and checked in up to date", async () => {
    for (const [f, text] of await dashboardFiles()) expect(read(f), f).toBe(text);
  });

  it("Grafana: every query names metrics and labels driftless run serves", async () => {
    const prom = new PrometheusMetrics({
      processMetrics: false,
      gauges: runGauges(
        () => undefined,
        () => undefined,
      ),
    });
    drive(prom);
    const text = await prom.text();
    // Series as served (histograms as _bucket/_sum/_count), and each metric's label names.
    const series = new Set<string>();
    const labels = new Map<string, Set<string>>();
    for (const line of text.split("\n")) {
      const typed = /^# TYPE (\S+) (\S+)/.exec(line);
      if (typed?.[1] && typed[2] !== "histogram") series.add(typed[1]);
      const sample = /^([a-z_]+)(?:\{([^}]*)\})? /.exec(line);
      if (!sample?.[1]) continue;
      series.add(sample[1]);
      const set = labels.get(sample[1]) ?? new Set<string>();
      for (const pair of (sample[2] ?? "").split(",").filter(Boolean)) set.add(pair.split("=")[0] as string);
      labels.set(sample[1], set);
    }
    // Gauges with labels and no sample yet (the forwarder is not running here): their declared labels.
    for (const m of prom.registry.getMetricsAsArray()) {
      const declared = (m as unknown as { name: string; labelNames?: string[] }).labelNames ?? [];
      const set = labels.get((m as unknown as { name: string }).name) ?? new Set<string>();
      for (const l of declared) set.add(l);
      labels.set((m as unknown as { name: string }).name, set);
    }

    const dash = JSON.parse(read(GRAFANA_FILE)) as GrafanaDashboard;
    const named = new Set<string>();
    for (const p of dash.panels)
      for (const t of p.targets) {
        const metrics = t.expr.match(/\bdriftless_[a-z_]+\b/g) ?? [];
        expect(metrics.length, `${p.title}: ${t.expr}`).toBeGreaterThan(0);
        for (const m of metrics) {
          expect(series.has(m), `${p.title} names ${m}`).toBe(true);
          named.add(m.replace(/_(bucket|sum|count)$/, ""));
          const used = [
            ...[...t.expr.matchAll(/\bby \(([^)]*)\)/g)].flatMap((x) =>
              (x[1] ?? "").split(",").map((s) => s.trim()),
            ),
            ...[...t.expr.matchAll(/\{([^}]*)\}/g)].flatMap((x) =>
              (x[1] ?? "").split(",").map((s) => s.split("=")[0]?.trim() ?? ""),
            ),
          ].filter((l) => l && l !== "le");
          const own = labels.get(m) ?? new Set();
          for (const l of used)
            if (metrics.length === 1) expect(own.has(l), `${p.title}: ${m} has no label ${l}`).toBe(true);
        }
      }
    // The list: reconciles by outcome and kind, queue age and depth, dead letters, doorbell waits,
    // cloud calls and throttles (drift corrected is reconciles with outcome "updated").
    for (const m of [
      "driftless_reconciles_total",
      "driftless_queue_age_seconds",
      "driftless_queue_pending",
      "driftless_queue_dead_lettered",
      "driftless_doorbell_admission_waits_total",
      "driftless_cloud_api_calls_total",
      "driftless_cloud_api_throttles_total",
    ])
      expect(named.has(m), m).toBe(true);
    expect(dash.panels.some((p) => p.targets.some((t) => t.expr.includes('outcome="updated"')))).toBe(true);
  });

  it("Grafana: the JSON is a dashboard model Grafana imports", () => {
    const dash = JSON.parse(read(GRAFANA_FILE)) as GrafanaDashboard;
    expect(dash.id).toBeNull(); // a new dashboard on import, never an overwrite by id
    expect(dash.uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/);
    expect(dash.title).toBeTruthy();
    expect(dash.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dash.time).toEqual({ from: expect.any(String), to: expect.any(String) });
    const vars = dash.templating.list;
    const dsVar = vars.find((v) => v.type === "datasource");
    expect(dsVar).toMatchObject({ query: "prometheus" });
    const panelTypes = new Set(dash.__requires.filter((r) => r.type === "panel").map((r) => r.id));
    const ids = dash.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Set<string>();
    for (const p of dash.panels) {
      expect(Number.isInteger(p.id) && p.id > 0).toBe(true);
      expect(panelTypes.has(p.type), `${p.type} listed in __requires`).toBe(true);
      expect(p.title).toBeTruthy();
      const g = p.gridPos;
      for (const n of [g.x, g.y, g.w, g.h]) expect(Number.isInteger(n) && n >= 0).toBe(true);
      expect(g.w).toBeGreaterThan(0);
      expect(g.x + g.w).toBeLessThanOrEqual(24);
      // Panels never overlap on the 24-column grid.
      for (let x = g.x; x < g.x + g.w; x++)
        for (let y = g.y; y < g.y + g.h; y++) {
          expect(cells.has(`${x},${y}`), `${p.title} overlaps`).toBe(false);
          cells.add(`${x},${y}`);
        }
      expect(p.datasource).toEqual({ type: "prometheus", uid: `\${${dsVar?.name}}` });
      expect(p.targets.length).toBeGreaterThan(0);
      const refIds = p.targets.map((t) => t.refId);
      expect(new Set(refIds).size).toBe(refIds.length);
      for (const t of p.targets) {
        expect(t.refId).toMatch(/^[A-Z]$/);
        expect(t.expr.trim()).not.toBe("");
        // Balanced brackets: a typo'd query fails here, not in the operator's browser.
        for (const [open, close] of [
          ["(", ")"],
          ["{", "}"],
          ["[", "]"],
        ] as const)
          expect(t.expr.split(open).length, t.expr).toBe(t.expr.split(close).length);
      }
    }
  });

  it("CloudWatch: every widget names an EMF metric the functions emit, or an SQS metric of a queue in serverless.yml", () => {
    // What EmfMetrics writes through Powertools when driven through each of its calls.
    const emitted = new Set(emfCatalog().map((m) => `${EMF_NAMESPACE}|${m.name}|${m.dimensions.join(",")}`));
    const resources = serverless().resources.Resources;
    const queueNames = Object.values(resources)
      .filter((r) => r.Type === "AWS::SQS::Queue")
      .map((r) => r.Properties.QueueName);
    const body = cloudWatch();
    const named = new Set<string>();
    for (const w of body.widgets)
      for (const row of w.properties.metrics) {
        const first = row[0];
        if (typeof first === "object") {
          const search =
            /^SEARCH\('\{([^}]*)\} MetricName="([^"]+)"((?: [a-z]+="[^"]*")*)', '([A-Za-z0-9.]+)', (\d+)\)$/.exec(
              first.expression ?? "",
            );
          expect(search, `${w.properties.title}: ${first.expression}`).not.toBeNull();
          const [ns, ...dims] = (search?.[1] ?? "").split(",");
          const key = `${ns}|${search?.[2]}|${[...dims].sort().join(",")}`;
          expect(emitted.has(key), `${w.properties.title}: ${key} is emitted`).toBe(true);
          for (const f of (search?.[3] ?? "").matchAll(/ ([a-z]+)=/g)) expect(dims).toContain(f[1]);
          named.add(search?.[2] as string);
        } else {
          expect(row[0]).toBe("AWS/SQS");
          expect(SQS_METRICS).toContain(row[1]);
          expect(row[2]).toBe("QueueName");
          expect(queueNames).toContain(row[3]);
          named.add(row[1] as string);
        }
      }
    for (const m of [
      "Reconciles",
      "QueueAge",
      "ApproximateNumberOfMessagesVisible",
      "DoorbellAdmissionWaits",
      "CloudApiCalls",
      "CloudApiThrottles",
    ])
      expect(named.has(m), m).toBe(true);
    expect(
      body.widgets.some((w) =>
        w.properties.metrics.some(
          (r) => typeof r[0] === "object" && r[0].expression?.includes('outcome="updated"'),
        ),
      ),
    ).toBe(true);
  });

  it("CloudWatch: the body is one PutDashboard takes (metric widgets on the 24-column grid)", () => {
    const body = cloudWatch();
    expect(body.widgets.length).toBeGreaterThan(0);
    for (const w of body.widgets) {
      expect(w.type).toBe("metric");
      expect(w.x + w.width).toBeLessThanOrEqual(24);
      expect(w.width).toBeGreaterThan(0);
      expect(w.height).toBeGreaterThan(0);
      expect(w.properties.region).toBe(`\${self:custom.stage.region}`);
      expect(w.properties.period % 60).toBe(0);
      const ids = w.properties.metrics.flatMap((r) => (typeof r[0] === "object" && r[0].id ? [r[0].id] : []));
      expect(new Set(ids).size).toBe(ids.length);
      for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z0-9_]*$/);
    }
  });
});
