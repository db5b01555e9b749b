// `driftless migrate` on Crossplane YAML (test/fixtures/crossplane/): the YAML it writes, applied and
// reconciled, imports a queue that was created directly in moto — without changing it — and, once the
// management policies are widened, finds it in sync (the field mapping is exact). Exit codes: 0 when
// everything was carried over, 1 when an object or a field was not.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateQueueCommand, GetQueueAttributesCommand, ListQueueTagsCommand } from "@aws-sdk/client-sqs";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { REPO_ROOT } from "../../../infra/local/stack.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import { createAwsProviderConfig, ensureCrds, ensureNamespace, motoSqs } from "../../support/aws.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { cli } from "./helpers.ts";

const FIXTURES = join(REPO_ROOT, "test/fixtures/crossplane");
const kube = newKube();
const sqs = motoSqs();
const dir = mkdtempSync(join(tmpdir(), "driftless-migrate-"));

beforeAll(async () => {
  await ensureCrds();
  await ensureNamespace(kube, "crossplane-system");
});

describe("driftless migrate", { timeout: 180_000 }, () => {
  it("adopts a queue created directly in moto without modifying it", async () => {
    // Prepare: the cloud queue as Crossplane left it, and its Crossplane YAML (names made unique)
    const name = uniqueName("xp-orders");
    const pc = uniqueName("pc-xp");
    await createAwsProviderConfig(kube, pc);
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: {
          DelaySeconds: "0",
          MaximumMessageSize: "262144",
          MessageRetentionPeriod: "345600",
          ReceiveMessageWaitTimeSeconds: "0",
          VisibilityTimeout: "45",
        },
        tags: {
          team: "payments",
          "crossplane-kind": "queue.sqs.aws.upbound.io",
          "crossplane-name": name,
          "crossplane-providerconfig": pc,
        },
      }),
    );
    const cloudState = async () => ({
      attributes: (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["All"] })))
        .Attributes,
      tags: (await sqs.send(new ListQueueTagsCommand({ QueueUrl }))).Tags,
    });
    const before = await cloudState();
    const input = join(dir, `${name}.yaml`);
    writeFileSync(
      input,
      readFileSync(join(FIXTURES, "sqs-queue.yaml"), "utf8")
        .replaceAll("orders-queue", name)
        .replaceAll("aws-moto", pc),
    );
    const output = join(dir, `${name}.driftless.yaml`);

    // Act: migrate, apply, reconcile
    const res = await cli(["migrate", input, "--out", output]);
    expect(res.code, res.stderr).toBe(0);
    const objects = parseAllDocuments(readFileSync(output, "utf8")).map((d) => d.toJS() as KubeObject);
    expect(objects).toHaveLength(1);
    expect(objects[0]).toMatchObject({
      apiVersion: Queue.apiVersion,
      kind: "Queue",
      metadata: { name, labels: { team: "payments" }, annotations: { "crossplane.io/external-name": name } },
      spec: {
        managementPolicies: ["Observe"],
        deletionPolicy: "Delete",
        providerConfigRef: { name: pc },
        writeConnectionSecretToRef: { name: `${name}-conn`, namespace: "crossplane-system" },
        forProvider: { maximumMessageSize: 262144, visibilityTimeoutSeconds: 45, region: "us-east-1" },
      },
    });
    expect(Object.keys(objects[0]?.metadata.annotations ?? {})).not.toContain(
      "crossplane.io/external-create-pending",
    );
    for (const o of objects) await kube.create(Queue, o);
    const r = newReconciler(kube);
    await settle(r, keyOf(Queue, name));

    // Assess: imported, Ready and Synced, with no create, update or delete, and the cloud unchanged
    const mr = await getMr<Record<string, unknown>>(kube, Queue, name);
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
    expect(mr?.status?.atProvider).toMatchObject({ url: QueueUrl });
    expect(r.externalCalls).toMatchObject({ create: 0, update: 0, delete: 0 });
    expect(await cloudState()).toEqual(before);
    expect(
      Object.keys((await kube.getSecret("crossplane-system", `${name}-conn`))?.data ?? {}).sort(),
    ).toEqual(["arn", "url"]);

    // Act: step two of a migration, widen the policies
    await kube.patch(Queue, name, { spec: { managementPolicies: ["*"] } });
    const after = await settle(r, keyOf(Queue, name));

    // Assess: the mapped spec equals the cloud: nothing to update
    expect(after.at(-1)?.outcome).toBe("in-sync");
    expect(r.externalCalls).toMatchObject({ create: 0, update: 0, delete: 0 });
    expect(await cloudState()).toEqual(before);
  });

  it("reports unknown kinds and fields it cannot carry over, still writes the rest, and exits 1", async () => {
    const res = await cli(["migrate", join(FIXTURES, "unsupported.yaml")]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /^ERROR +Role\.iam\.aws\.upbound\.io\/app-role: driftless has no equivalent of Role/m,
    );
    expect(res.stderr).toMatch(/^ERROR +XPostgreSQLInstance\.example\.org\/composite-db: /m);
    expect(res.stderr).toMatch(
      /^DROPPED +Queue\.sqs\.aws\.upbound\.io\/with-policy: forProvider\.policy left out/m,
    );
    expect(res.stderr).toMatch(
      /^DROPPED +Queue\.sqs\.aws\.upbound\.io\/with-policy: forProvider\.fifoThroughputLimit /m,
    );
    expect(res.stderr).toContain("migrated 1 object(s); 2 not migrated, 2 field(s) left out");
    const [queue] = parseAllDocuments(res.stdout).map((d) => d.toJS() as KubeObject);
    expect(queue).toMatchObject({
      kind: "Queue",
      metadata: { name: "with-policy" },
      spec: {
        forProvider: {
          redrivePolicy: {
            deadLetterTargetArn: "arn:aws:sqs:us-east-1:123456789012:with-policy-dlq",
            maxReceiveCount: 4,
          },
        },
      },
    });
  });

  it("reads directories and standard input; --allow-dropped accepts left-out fields; a missing file is exit 1", async () => {
    const all = await cli(["migrate", FIXTURES, "-o", "json", "--allow-dropped"]);
    expect(all.code).toBe(1); // unsupported.yaml has kinds that cannot be migrated at all
    const kinds = (JSON.parse(all.stdout) as KubeObject[]).map((o) => `${o.kind}.${String(o.apiVersion)}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        "Bucket.s3.aws.driftless.dev/v1alpha1",
        "DBInstance.rds.aws.driftless.dev/v1alpha1",
        "Topic.pubsub.gcp.driftless.dev/v1alpha1",
        "Subscription.pubsub.gcp.driftless.dev/v1alpha1",
        "Bucket.storage.gcp.driftless.dev/v1alpha1",
        "ResourceGroup.resources.azure.driftless.dev/v1alpha1",
        "Container.storage.azure.driftless.dev/v1alpha1",
        "ProviderConfig.aws.driftless.dev/v1alpha1",
      ]),
    );

    const gcp = readFileSync(join(FIXTURES, "gcp.yaml"), "utf8");
    expect((await cli(["migrate", "-"], { input: gcp })).code).toBe(1); // filter, uniformBucketLevelAccess
    const allowed = await cli(["migrate", "-", "--allow-dropped"], { input: gcp });
    expect(allowed.code).toBe(0);
    expect(allowed.stderr).toMatch(
      /^DROPPED +Subscription\.pubsub\.gcp\.upbound\.io\/events-worker: forProvider\.filter/m,
    );

    const missing = await cli(["migrate", join(dir, "no-such-file.yaml")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no such file or directory");
  });
});
