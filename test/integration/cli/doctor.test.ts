// `driftless doctor` against the real stack: healthy → every line ✓ and exit 0; a broken ProviderConfig,
// an identity without RBAC, a missing queue or an unreachable API server → ✗ naming what is wrong and
// how to fix it, exit 1.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateQueueCommand } from "@aws-sdk/client-sqs";
import { PubSub } from "@google-cloud/pubsub";
import { beforeAll, describe, expect, it } from "vitest";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { coreApi } from "../../../shared/kube/core.ts";
import { createAwsProviderConfig, ensureCrds, ensureNamespace, motoSqs } from "../../support/aws.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { cli, label, TEST_LABEL } from "./helpers.ts";

const kube = newKube();
const dir = mkdtempSync(join(tmpdir(), "driftless-doctor-"));

function kubeconfigFile(server: string, token: string): string {
  const file = join(dir, `${uniqueName("kubeconfig")}.yaml`);
  writeFileSync(
    file,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "- name: c",
      "  cluster:",
      `    server: ${server}`,
      `    certificate-authority: ${env("DRIFTLESS_CA_FILE")}`,
      "users:",
      "- name: someone",
      "  user:",
      `    token: ${token}`,
      "contexts:",
      "- name: c",
      "  context: { cluster: c, user: someone }",
      "current-context: c",
      "",
    ].join("\n"),
  );
  return file;
}

const lines = (out: string, mark: string) => out.split("\n").filter((l) => l.startsWith(mark));

beforeAll(async () => {
  await ensureCrds();
});

describe("driftless doctor", { timeout: 180_000 }, () => {
  it("passes every check for a healthy setup (exit 0)", async () => {
    // Prepare
    const group = uniqueName("doctor-ok");
    const pc = uniqueName("pc-doctor-ok");
    await createAwsProviderConfig(kube, pc);
    await label(kube, providerConfigs.aws.type, pc, group);

    // Act
    const res = await cli(["doctor", "-l", `${TEST_LABEL}=${group}`]);

    // Assess
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(lines(res.stdout, "✗")).toEqual([]);
    for (const check of ["kubeconfig", "api-server", "crds", "rbac", "queue", `providerconfig.aws/${pc}`]) {
      expect(res.stdout).toMatch(new RegExp(`^✓ ${check.replace(".", "\\.")}: `, "m"));
    }
    expect(res.stdout).toContain("credentials accepted");
    expect(res.stdout).toMatch(/all \d+ checks passed/);
  });

  it("names a ProviderConfig whose credentials are refused, says how to fix it, and exits 1", async () => {
    // Prepare
    const group = uniqueName("doctor-bad");
    const bad = uniqueName("pc-doctor-bad");
    await createAwsProviderConfig(kube, bad, { credentials: "this is not an AWS credentials file" });
    await label(kube, providerConfigs.aws.type, bad, group);

    // Act
    const res = await cli(["doctor", "-l", `${TEST_LABEL}=${group}`]);
    const json = await cli(["doctor", "-l", `${TEST_LABEL}=${group}`, "-o", "json"]);

    // Assess
    expect(res.code).toBe(1);
    const [line] = lines(res.stdout, `✗ providerconfig.aws/${bad}:`);
    expect(line).toContain(`ProviderConfig "${bad}" (aws): credentials refused`);
    expect(res.stdout).toContain(
      `fix: put valid AWS credentials in the key "credentials" of Secret driftless-system/${bad}-aws-creds`,
    );
    expect(res.stdout).not.toContain("this is not an AWS credentials file");
    expect(res.stdout).toMatch(/^1 of \d+ checks failed$/m);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as {
      ok: boolean;
      checks: Array<{ name: string; status: string }>;
    };
    expect(report.ok).toBe(false);
    expect(report.checks.filter((c) => c.status === "fail").map((c) => c.name)).toEqual([
      `providerconfig.aws/${bad}`,
    ]);
  });

  it("lists the permissions an identity without RBAC is missing (exit 1)", async () => {
    // Prepare: a ServiceAccount nobody bound a role to
    const ns = "driftless-doctor-test";
    const sa = uniqueName("nobody");
    await ensureNamespace(kube, ns);
    await coreApi(kube).createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: sa } } });
    const token = await coreApi(kube).createNamespacedServiceAccountToken({
      name: sa,
      namespace: ns,
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const file = kubeconfigFile(env("DRIFTLESS_KUBE_SERVER"), token.status?.token ?? "");

    // Act
    const res = await cli(["--kubeconfig", file, "doctor"]);

    // Assess
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(/^✓ api-server: /m);
    const [rbac] = lines(res.stdout, "✗ rbac:");
    expect(rbac).toMatch(/"someone" is missing \d+ of \d+ permissions/);
    // The first few of each group are named (sorted), the rest counted.
    expect(rbac).toContain("patch buckets.s3.aws.driftless.dev/status");
    expect(rbac).toContain("to write Ready and Synced conditions");
    expect(res.stdout).toContain("fix: apply infra/k8s/rbac.yaml and bind its ClusterRoles");
  });

  it("checks the configured SQS queue: ✓ with a warning without a DLQ, ✗ when it does not exist", async () => {
    const group = uniqueName("doctor-none");
    const url = (await motoSqs().send(new CreateQueueCommand({ QueueName: uniqueName("doctor-q") })))
      .QueueUrl;
    const ok = await cli(["doctor", "-l", `${TEST_LABEL}=${group}`], {
      env: { DRIFTLESS_QUEUE: "sqs", DRIFTLESS_SQS_QUEUE_URL: url },
    });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(new RegExp(`^✓ queue: SQS queue ${url} answers`, "m"));
    expect(ok.stdout).toMatch(/^! queue: the queue has no RedrivePolicy/m);

    const missingUrl = `${env("AWS_ENDPOINT_URL")}/123456789012/${uniqueName("doctor-missing")}`;
    const missing = await cli(["doctor", "-l", `${TEST_LABEL}=${group}`], {
      env: { DRIFTLESS_QUEUE: "sqs", DRIFTLESS_SQS_QUEUE_URL: missingUrl },
    });
    expect(missing.code).toBe(1);
    expect(missing.stdout).toMatch(new RegExp(`^✗ queue: SQS queue ${missingUrl}: `, "m"));
    expect(missing.stdout).toContain("fix: create the queue");
  });

  it("checks the configured Pub/Sub topic: ✓ when it exists, ✗ naming it when it does not", async () => {
    const group = uniqueName("doctor-none");
    const project = env("GCP_PROJECT_ID");
    const topic = uniqueName("doctor-topic");
    const pubsub = new PubSub({ projectId: project });
    await pubsub.createTopic(topic);
    await pubsub.close();
    const base = { DRIFTLESS_QUEUE: "pubsub", GCP_PROJECT_ID: project };

    const ok = await cli(["doctor", "-l", `${TEST_LABEL}=${group}`], {
      env: { ...base, DRIFTLESS_PUBSUB_TOPIC: topic },
    });
    const missingTopic = uniqueName("doctor-no-topic");
    const missing = await cli(["doctor", "-l", `${TEST_LABEL}=${group}`], {
      env: { ...base, DRIFTLESS_PUBSUB_TOPIC: missingTopic },
    });

    expect(ok.code, ok.stdout).toBe(0);
    expect(ok.stdout).toMatch(new RegExp(`^✓ queue: Pub/Sub topic ${topic} exists$`, "m"));
    expect(missing.code).toBe(1);
    expect(missing.stdout).toMatch(
      new RegExp(`^✗ queue: Pub/Sub topic ${missingTopic} does not exist in project ${project}$`, "m"),
    );
  });

  it("reports an unreachable API server and skips what needs it (exit 1)", async () => {
    const file = kubeconfigFile("https://127.0.0.1:1", "x");
    const res = await cli(["--kubeconfig", file, "doctor", "--timeout", "3"]);
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(/^✓ kubeconfig: /m);
    expect(res.stdout).toMatch(/^✗ api-server: https:\/\/127\.0\.0\.1:1 does not answer/m);
    expect(res.stdout).toMatch(/^- crds: skipped/m);
    expect(res.stdout).toMatch(/^- rbac: skipped/m);
  });

  it("treats an invalid configuration as a usage error (exit 2)", async () => {
    const res = await cli(["doctor"], { env: { DRIFTLESS_WORKERS: "many" } });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("DRIFTLESS_WORKERS");
  });
});
