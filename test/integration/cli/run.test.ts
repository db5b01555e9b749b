// `driftless run` as an operator starts it: a Queue becomes Ready, every reconcile writes one log line
// with key, reason, outcome, duration and correlation id, /metrics counts it, /healthz and /readyz
// answer, and SIGTERM ends the process with exit 0 once in-flight work is done.
import { GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { createAwsProviderConfig, ensureCrds, motoSqs } from "../../support/aws.ts";
import { eventually, newKube, uniqueName } from "../../support/env.ts";
import { CliProcess, cli, label, TEST_LABEL } from "./helpers.ts";

const kube = newKube();
const sqs = motoSqs();
const LABEL = uniqueName("cli-run");
const PC = uniqueName("pc-cli-run");
let run: CliProcess;
let port = 0;

const http = async (path: string) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
};

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
  await label(kube, providerConfigs.aws.type, PC, LABEL);
  run = new CliProcess(
    ["run", "--no-crds", "--metrics-port", "0", "--workers", "2", "-l", `${TEST_LABEL}=${LABEL}`],
    // No sweep during the test: a sweep listing the new Queue before its watch event arrives would
    // reconcile the create with reason `drift`, and the test asserts the watch brought it.
    { LOG_LEVEL: "info", DRIFTLESS_SWEEP_INTERVAL: "1h" },
  );
  const serving = await run.waitForLog(
    (l) => l.msg === "serving /metrics, /healthz and /readyz",
    "metrics port",
  );
  port = serving.port as number;
});

afterAll(async () => {
  if (run.child.exitCode === null) await run.stop();
});

describe("driftless run", { timeout: 180_000 }, () => {
  it("reconciles a Queue to Ready, logs each reconcile with its correlation id, and counts it in /metrics", async () => {
    // Prepare
    await eventually(async () => (await http("/readyz")).status === 200, {
      what: "/readyz 200",
      timeoutMs: 60_000,
    });
    const name = uniqueName("cli-run-q");

    // Act
    await kube.create(Queue, {
      apiVersion: Queue.apiVersion,
      kind: Queue.kind,
      metadata: { name, labels: { [TEST_LABEL]: LABEL } },
      spec: {
        forProvider: { visibilityTimeoutSeconds: 40 },
        providerConfigRef: { name: PC },
        writeConnectionSecretToRef: { namespace: "default", name: `${name}-conn` },
      },
    });

    // Assess: Ready and Synced as `driftless get -o json` reports them
    const mr = await eventually(
      async () => {
        const res = await cli(["get", "queue", name, "-o", "json"]);
        if (res.code !== 0) return undefined;
        const obj = JSON.parse(res.stdout) as {
          status?: { conditions?: Array<{ type: string; status: string }> };
        };
        const ok = (t: string) => obj.status?.conditions?.some((c) => c.type === t && c.status === "True");
        return ok("Ready") && ok("Synced") ? obj : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500, what: `${name} Ready via driftless get` },
    );
    expect(mr).toBeTruthy();
    expect((await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl).toContain(name);

    const created = run
      .logs()
      .find((l) => l.msg === "reconciled" && l.key === `Queue/${name}` && l.outcome === "created");
    expect(created).toMatchObject({ reason: "watch", outcome: "created" });
    expect(typeof created?.durationMs).toBe("number");
    expect(created?.correlationId).toMatch(/^[A-Za-z0-9._:-]+$/);

    const metrics = await http("/metrics");
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/^driftless_reconciles_total\{kind="Queue",outcome="created"\} [1-9]/m);
    expect(metrics.body).toMatch(/^driftless_reconcile_duration_seconds_count\{kind="Queue"\} [1-9]/m);
    expect(metrics.body).toMatch(/^driftless_cloud_api_calls_total\{kind="Queue",verb="create"\} 1$/m);
    expect(metrics.body).toMatch(/^driftless_cloud_api_calls_total\{kind="Queue",verb="observe"\} [1-9]/m);
    expect(metrics.body).toMatch(/^driftless_queue_age_seconds_count [1-9]/m);
    expect(metrics.body).toMatch(/^driftless_queue_pending \d+/m);
    expect(metrics.body).toMatch(/^driftless_forwarder_kinds\{state="watching"\} [1-9]/m);

    expect(await http("/healthz")).toMatchObject({ status: 200, body: "ok\n" });
    const ready = await http("/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body).toMatch(/^ok forwarder: watching \d+ kinds$/m);
    expect(ready.body).toMatch(/^ok queue: /m);
  });

  it("exits 0 on SIGTERM after finishing the reconciles in flight", async () => {
    // Prepare: work in flight (a manual trigger of every object of this test)
    await eventually(async () => (await http("/readyz")).status === 200, {
      what: "/readyz 200",
      timeoutMs: 60_000,
    });
    const q = (await kube.list(Queue, { labelSelector: `${TEST_LABEL}=${LABEL}` })).items[0];
    if (q) expect((await cli(["trigger", `queue/${q.metadata.name}`])).code).toBe(0);

    // Act
    const code = await run.stop();

    // Assess
    expect(code).toBe(0);
    const logs = run.logs();
    const shutdown = logs.findIndex((l) => l.msg === "shutting down: finishing in-flight reconciles");
    expect(shutdown).toBeGreaterThan(-1);
    expect(logs.at(-1)?.msg).toBe("stopped");
    expect(logs.filter((l) => l.level === "error")).toEqual([]);
  });
});
