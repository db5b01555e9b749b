// `driftless doorbell print|apply|delete` and `driftless run --doorbell`, as a user runs them.
import { randomBytes } from "node:crypto";
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ensureTls } from "../../../infra/local/tls.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { WEBHOOK_CONFIGURATION_TYPE } from "../../../shared/doorbell/webhook.ts";
import { createAwsProviderConfig, ensureCrds } from "../../support/aws.ts";
import { env, eventually, newKube, uniqueName } from "../../support/env.ts";
import { conditionOf, getMr } from "../../support/reconcile.ts";
import { CliProcess, cli, TEST_LABEL } from "./helpers.ts";

const kube = newKube();
const SECRET = randomBytes(20).toString("hex");
const LABEL = uniqueName("cli-bell");
const PC = uniqueName("pc-cli-bell");
let caFile: string;
let run: CliProcess | undefined;

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
  caFile = (await ensureTls(dirname(env("DRIFTLESS_CA_FILE")), { name: "doorbell" })).caCert;
});

afterAll(async () => {
  if (run && run.child.exitCode === null) await run.stop();
});

describe("driftless doorbell", () => {
  it("print: needs the secret, refuses http and query strings, writes the configuration with the secret in the path", async () => {
    const noSecret = await cli(["doorbell", "print", "--url", "https://bell.example.test"], {
      env: { DRIFTLESS_DOORBELL_SECRET: "" },
    });
    expect(noSecret.code).toBe(2);
    expect(noSecret.stderr).toMatch(/openssl rand -hex 32/);
    const http = await cli(["doorbell", "print", "--url", "http://bell.example.test"], {
      env: { DRIFTLESS_DOORBELL_SECRET: SECRET },
    });
    expect(http.code).toBe(2);
    expect(http.stderr).toMatch(/https/);
    const query = await cli(["doorbell", "print", "--url", "https://bell.example.test/?k=v"], {
      env: { DRIFTLESS_DOORBELL_SECRET: SECRET },
    });
    expect(query.code).toBe(2);
    expect(query.stderr).toMatch(/query string/);

    const out = await cli(
      ["doorbell", "print", "--url", "https://bell.example.test/base/", "--ca-file", caFile],
      {
        env: { DRIFTLESS_DOORBELL_SECRET: SECRET },
      },
    );
    expect(out.code).toBe(0);
    expect(out.stderr).toMatch(/store this output like a Secret/);
    const config = parse(out.stdout) as { webhooks: Array<Record<string, unknown>> };
    expect(config.webhooks.map((w) => w.name)).toEqual([
      "doorbell.driftless.dev",
      "connection-secrets.doorbell.driftless.dev",
    ]);
    expect(config.webhooks[0]).toMatchObject({
      clientConfig: { url: `https://bell.example.test/base/${SECRET}/admit` },
      failurePolicy: "Ignore",
      timeoutSeconds: 2,
    });
    const rules = (config.webhooks[0]?.rules ?? []) as Array<{ apiGroups: string[] }>;
    const groups = rules.flatMap((r) => r.apiGroups);
    expect(groups).toEqual(
      expect.arrayContaining(["sqs.aws.driftless.dev", "claims.driftless.dev", "gcp.driftless.dev"]),
    );
  });

  it("apply creates, apply again updates, delete removes — the URL's secret never printed", async () => {
    const name = uniqueName("cli-bell-cfg");
    const args = [
      "--url",
      "https://127.0.0.1:9",
      "--name",
      name,
      "--selector",
      `${TEST_LABEL}=${LABEL}-none`,
    ];
    const first = await cli(["doorbell", "apply", ...args], { env: { DRIFTLESS_DOORBELL_SECRET: SECRET } });
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/created/);
    const again = await cli(["doorbell", "apply", ...args, "--timeout", "5"], {
      env: { DRIFTLESS_DOORBELL_SECRET: SECRET },
    });
    expect(again.stdout).toMatch(/updated/);
    expect(first.stdout + again.stdout).not.toContain(SECRET);
    const stored = (await kube.get(WEBHOOK_CONFIGURATION_TYPE, name)) as unknown as {
      webhooks: Array<{ timeoutSeconds: number }>;
    };
    expect(stored.webhooks[0]?.timeoutSeconds).toBe(5);
    expect((await cli(["doorbell", "delete", "--name", name])).code).toBe(0);
    expect(await kube.get(WEBHOOK_CONFIGURATION_TYPE, name)).toBeUndefined();
  });

  it("run --doorbell: no forwarder; a create becomes Ready from the doorbell; the webhook is removed on stop", async () => {
    const tls = await ensureTls(dirname(env("DRIFTLESS_CA_FILE")), { name: "doorbell" });
    run = new CliProcess(
      [
        "run",
        "--no-crds",
        "--no-metrics",
        "--workers",
        "2",
        "-l",
        `${TEST_LABEL}=${LABEL}`,
        "--doorbell",
        "--doorbell-listen",
        "127.0.0.1:0",
        "--doorbell-cert",
        tls.serverCert,
        "--doorbell-key",
        tls.serverKey,
        "--doorbell-ca",
        tls.caCert,
      ],
      { LOG_LEVEL: "info", DRIFTLESS_DOORBELL_SECRET: SECRET, DRIFTLESS_SWEEP_INTERVAL: "1h" },
    );
    const serving = await run.waitForLog((l) => l.msg === "doorbell serving", "the doorbell serving");
    const webhook = serving.webhook as string;
    expect(webhook).toBe("driftless-doorbell");
    expect(run.logs().some((l) => l.msg === "forwarder started")).toBe(false);
    // Created only after the API server has picked the configuration up (it rings for a probe).
    const name = uniqueName("cli-bell-q");
    await eventually(
      async () => {
        const probe = uniqueName("cli-bell-probe");
        await kube.create(Queue, {
          apiVersion: Queue.apiVersion,
          kind: Queue.kind,
          metadata: {
            name: probe,
            labels: { [TEST_LABEL]: LABEL },
            annotations: { "crossplane.io/paused": "true" },
          },
          spec: { forProvider: {}, providerConfigRef: { name: PC } },
        });
        await kube.delete(Queue, probe);
        return run?.stdout.includes(probe);
      },
      { timeoutMs: 30_000, intervalMs: 500, what: "the API server ringing the doorbell" },
    );
    await kube.create(Queue, {
      apiVersion: Queue.apiVersion,
      kind: Queue.kind,
      metadata: { name, labels: { [TEST_LABEL]: LABEL } },
      spec: { forProvider: {}, providerConfigRef: { name: PC } },
    });
    await eventually(async () => conditionOf(await getMr(kube, Queue, name), "Ready")?.status === "True", {
      timeoutMs: 30_000,
      what: "Ready from the doorbell",
    });
    // `trigger --wait`: the annotation rings the doorbell and the reconcile echoes it.
    const triggered = await cli(["trigger", "--wait", "30s", `queue/${name}`]);
    expect(triggered.code, triggered.stderr).toBe(0);
    expect(triggered.stdout).toMatch(/reconciled\n$/);
    const mr = await getMr(kube, Queue, name);
    expect(mr?.status?.lastHandledReconcileAt).toBe(
      mr?.metadata.annotations?.["crossplane.io/reconcile-requested-at"],
    );
    expect(await run.stop()).toBe(0);
    expect(await kube.get(WEBHOOK_CONFIGURATION_TYPE, webhook)).toBeUndefined();
    // Nothing serves the cluster any more: the wait ends in a clear failure, and bad flags are usage errors.
    const unhandled = await cli(["trigger", "--wait", "2s", `queue/${name}`]);
    expect(unhandled.code).toBe(1);
    expect(unhandled.stderr).toMatch(/not handled within 2s/);
    expect((await cli(["trigger", "--wait", "soon", `queue/${name}`])).code).toBe(2);
    expect((await cli(["trigger", "--wait", "5s", "--queue", `queue/${name}`])).code).toBe(2);
    await kube.patch(Queue, name, { metadata: { finalizers: null } }).catch(() => undefined);
    await kube.delete(Queue, name);
  });
});
