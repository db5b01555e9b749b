// The two metrics adapters behind one interface: Prometheus text for `driftless run`, CloudWatch EMF
// lines (Powertools) for Lambda.
import { Metrics } from "@aws-lambda-powertools/metrics";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type MetricsSink, PrometheusMetrics, startMetricsServer } from "../../../shared/metrics.ts";
import { EmfMetrics } from "../../../shared/metrics-emf.ts";

/** The same events, whatever the adapter. */
function record(sink: MetricsSink) {
  sink.reconciled("Queue", "created", 120);
  sink.reconciled("Queue", "in-sync", 15);
  sink.reconciled("Bucket", "error", 40);
  sink.externalCall("Queue", "observe", undefined);
  sink.externalCall("Queue", "create", undefined);
  sink.externalCall("Bucket", "observe", "ThrottledError");
  sink.externalCall("Bucket", "observe", "CredentialsError");
  sink.queueAge(2_500);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("PrometheusMetrics", () => {
  it("counts reconciles by kind and outcome, durations, cloud calls by verb, errors, throttles and queue age", async () => {
    const m = new PrometheusMetrics({ processMetrics: false });
    record(m);
    const text = await m.text();
    expect(text).toContain('driftless_reconciles_total{kind="Queue",outcome="created"} 1');
    expect(text).toContain('driftless_reconciles_total{kind="Bucket",outcome="error"} 1');
    expect(text).toContain('driftless_reconcile_duration_seconds_count{kind="Queue"} 2');
    expect(text).toContain('driftless_reconcile_duration_seconds_bucket{le="0.25",kind="Queue"} 2');
    expect(text).toContain('driftless_cloud_api_calls_total{kind="Bucket",verb="observe"} 2');
    expect(text).toContain(
      'driftless_cloud_api_errors_total{kind="Bucket",verb="observe",error="ThrottledError"} 1',
    );
    expect(text).toContain('driftless_cloud_api_throttles_total{kind="Bucket",verb="observe"} 1');
    expect(text).toContain("driftless_queue_age_seconds_sum 2.5");
  });

  it("reads gauges at scrape time, and serves /metrics, /healthz and /readyz", async () => {
    let pending = 3;
    const m = new PrometheusMetrics({
      processMetrics: false,
      gauges: [{ name: "driftless_queue_pending", help: "Keys waiting.", read: () => [{ value: pending }] }],
    });
    let ready = true;
    const server = await startMetricsServer({
      metrics: m,
      port: 0,
      host: "127.0.0.1",
      readiness: () => [{ name: "queue", ok: ready, detail: ready ? "moving" : "stuck" }],
    });
    try {
      const get = async (path: string) => {
        const res = await fetch(`http://127.0.0.1:${server.port}${path}`);
        return { status: res.status, body: await res.text(), type: res.headers.get("content-type") };
      };
      expect((await get("/metrics")).body).toContain("driftless_queue_pending 3");
      pending = 7;
      const metrics = await get("/metrics");
      expect(metrics.body).toContain("driftless_queue_pending 7");
      expect(metrics.type).toContain("text/plain");
      expect(await get("/healthz")).toMatchObject({ status: 200, body: "ok\n" });
      expect(await get("/readyz")).toMatchObject({ status: 200, body: "ok queue: moving\n" });
      ready = false;
      expect(await get("/readyz")).toMatchObject({ status: 503, body: "fail queue: stuck\n" });
      expect((await get("/nope")).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});

describe("EmfMetrics", () => {
  interface EmfLine {
    [key: string]: unknown;
    _aws: {
      CloudWatchMetrics: Array<{
        Namespace: string;
        Dimensions: string[][];
        Metrics: Array<{ Name: string }>;
      }>;
    };
  }
  const emfLines = (spy: { mock: { calls: unknown[][] } }): EmfLine[] =>
    spy.mock.calls
      .map((c) => String(c[0]))
      .filter((l) => l.includes('"_aws"'))
      .map((l) => JSON.parse(l) as EmfLine);

  it("writes one EMF line per dimension set on publish, and nothing before", () => {
    const out = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const m = new EmfMetrics({
      metrics: new Metrics({ namespace: "driftless-test", serviceName: "reconcile" }),
    });
    record(m);
    expect(emfLines(out)).toEqual([]);
    expect(m.pending).toBe(true);

    m.publish();

    const lines = emfLines(out);
    out.mockRestore();
    expect(m.pending).toBe(false);
    const find = (dims: Record<string, string>) =>
      lines.find(
        (l) =>
          Object.entries(dims).every(([k, v]) => l[k] === v) &&
          l._aws.CloudWatchMetrics[0]?.Dimensions[0]?.length === Object.keys(dims).length + 1,
      );
    expect(find({ kind: "Queue", outcome: "created" })).toMatchObject({
      Reconciles: 1,
      service: "reconcile",
    });
    expect(find({ kind: "Queue" })).toMatchObject({ ReconcileDuration: [120, 15] });
    expect(find({ kind: "Bucket", verb: "observe" })).toMatchObject({
      CloudApiCalls: 2,
      CloudApiErrors: 2,
      CloudApiThrottles: 1,
    });
    expect(find({})).toMatchObject({ QueueAge: 2500 });
    for (const l of lines) expect(l._aws.CloudWatchMetrics[0]?.Namespace).toBe("driftless-test");
  });

  it("splits more than 99 values of one metric across lines without losing the dimensions", () => {
    const out = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const m = new EmfMetrics({
      metrics: new Metrics({ namespace: "driftless-test", serviceName: "reconcile" }),
    });
    for (let i = 0; i < 150; i++) m.reconciled("Queue", "in-sync", i);
    m.publish();
    const lines = emfLines(out);
    out.mockRestore();
    const durations = lines.filter((l) => "ReconcileDuration" in l);
    expect(durations.map((l) => (l.ReconcileDuration as number[]).length)).toEqual([99, 51]);
    for (const l of durations) expect(l.kind).toBe("Queue");
    expect(lines.find((l) => "Reconciles" in l)).toMatchObject({
      Reconciles: 150,
      kind: "Queue",
      outcome: "in-sync",
    });
  });
});
