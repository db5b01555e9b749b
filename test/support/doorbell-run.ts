// `driftless run` in doorbell mode for an integration test: the AWS kinds, only this test's labelled objects,
// no periodic sweep, the local stack's CA signing the doorbell's certificate, the webhook configuration
// applied; and a wait until the API server (which picks configurations up asynchronously) rings it.
import { readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { awsKinds, awsProviderConfigKinds } from "../../functions/aws/kinds.ts";
import { ensureTls } from "../../infra/local/tls.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import type { Kube } from "../../shared/kube/client.ts";
import { createLogger } from "../../shared/log.ts";
import { type Running, startRun } from "../../shared/pipeline/run.ts";
import { TEST_LABEL } from "../integration/pipeline/helpers.ts";
import { env, eventually } from "./env.ts";

export interface DoorbellRunOptions {
  /** This test's label value: the run serves, and the webhook selects, only objects carrying it. */
  label: string;
  secret: string;
  webhookName: string;
  /** The logger's name (DOORBELL_TEST_LOG sets its level; default warn). */
  name: string;
}

export async function startDoorbellRun(
  kube: Kube,
  o: DoorbellRunOptions,
): Promise<{ run: Running; caPem: string }> {
  const tls = await ensureTls(dirname(env("DRIFTLESS_CA_FILE")), { name: "doorbell" });
  const caPem = await readFile(tls.caCert, "utf8");
  const run = await startRun({
    kubeConfig: kube.kubeConfig(o.name),
    logger: createLogger({ level: (process.env.DOORBELL_TEST_LOG as "info") ?? "warn", name: o.name }),
    kinds: awsKinds,
    providerConfigKinds: awsProviderConfigKinds,
    labelSelector: `${TEST_LABEL}=${o.label}`,
    // No periodic sweep during the test: only the doorbell brings changes (the sweep runs once at start,
    // before any object of the test exists).
    sweepIntervalMs: 3_600_000,
    workers: 4,
    doorbell: {
      secret: o.secret,
      cert: await readFile(tls.serverCert),
      key: await readFile(tls.serverKey),
      webhook: { caBundlePem: caPem, name: o.webhookName },
    },
  });
  return { run, caPem };
}

/** Touches a paused, labelled probe Queue (of `providerConfig`) until the API server calls the doorbell. */
export async function untilRinging(
  kube: Kube,
  run: Running,
  probe: { name: string; label: string; providerConfig: string },
): Promise<void> {
  await kube.create(Queue, {
    apiVersion: Queue.apiVersion,
    kind: Queue.kind,
    metadata: {
      name: probe.name,
      labels: { [TEST_LABEL]: probe.label },
      annotations: { "crossplane.io/paused": "true" },
    },
    spec: { forProvider: {}, providerConfigRef: { name: probe.providerConfig } },
  });
  await untilProbeRings(kube, run, probe.name, true);
}

/**
 * After a change to the webhook configuration: touches the (paused) probe until a touch does (`rings`) or
 * does not (`!rings`) reach this run's doorbell. The API server picks a changed configuration up
 * asynchronously, so a write made right after the change may still ring the old endpoint.
 */
export async function untilProbeRings(
  kube: Kube,
  run: Running,
  probe: string,
  rings: boolean,
): Promise<void> {
  const answered = () => Object.values(run.doorbell?.stats() ?? {}).reduce((a, b) => a + b, 0);
  await eventually(
    async () => {
      const before = answered();
      await kube.patch(Queue, probe, { metadata: { annotations: { "test/touch": String(Date.now()) } } });
      // A validating webhook is called before the write returns: the count is settled here.
      return answered() > before === rings;
    },
    {
      timeoutMs: 30_000,
      intervalMs: 300,
      what: rings ? "the API server calling the doorbell" : "the API server no longer calling the doorbell",
    },
  );
}
