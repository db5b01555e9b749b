// `driftless migrate` on Crossplane YAML (test/fixtures/crossplane/): the YAML it writes, applied and
// reconciled, imports a queue that was created directly in moto — without changing it — and, once the
// management policies are widened, finds it in sync (the field mapping is exact). Exit codes: 0 when
// everything was carried over, 1 when an object or a field was not. Crossplane v2 examples
// (test/fixtures/crossplane/v2/) convert into namespaced objects the API server accepts, and a driftless
// cluster-scoped queue moves to its namespaced variant in the plan's order without the cloud noticing.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueueTagsCommand,
} from "@aws-sdk/client-sqs";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import { REPO_ROOT } from "../../../infra/local/stack.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { type ManagedKindDef, namespacedVariantOf } from "../../../shared/api/managed.ts";
import type { ResourceType } from "../../../shared/api/meta.ts";
import { providerConfigs, v2ProviderConfigs } from "../../../shared/api/provider-config.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import { migrate } from "../../../shared/ops/migrate.ts";
import { generatedKinds } from "../../../shared/ops/migrate-generated.ts";
import { loadUpjetFacts, UPJET_FACTS_FILE } from "../../../shared/ops/migrate-upjet-facts.ts";
import { managedKinds } from "../../../shared/providers/index.ts";
import { createAwsProviderConfig, ensureCrds, ensureNamespace, motoSqs } from "../../support/aws.ts";
import { installCrds } from "../../support/crd-holds.ts";
import { eventually, newKube, uniqueName } from "../../support/env.ts";
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
    // An Upjet kind with no hand-written twin goes to its generated kind; what it cannot carry is reported.
    expect(res.stderr).toMatch(
      /^note +Role\.iam\.aws\.upbound\.io\/app-role: Role → generated kind Role\.iam\.awscc\.driftless\.dev/m,
    );
    expect(res.stderr).toMatch(
      /^DROPPED +Role\.iam\.aws\.upbound\.io\/app-role: forProvider\.assumeRolePolicy /m,
    );
    expect(res.stderr).toMatch(/^ERROR +XPostgreSQLInstance\.example\.org\/composite-db: /m);
    expect(res.stderr).toMatch(
      /^DROPPED +Queue\.sqs\.aws\.upbound\.io\/with-policy: forProvider\.fifoThroughputLimit /m,
    );
    expect(res.stderr).toContain("migrated 2 object(s); 1 not migrated, 2 field(s) left out");
    const written = parseAllDocuments(res.stdout).map((d) => d.toJS() as KubeObject);
    expect(written.map((o) => `${o.kind}.${String(o.apiVersion)}`).sort()).toEqual([
      "Queue.sqs.aws.driftless.dev/v1alpha1",
      "Role.iam.awscc.driftless.dev/v1alpha1",
    ]);
    const queue = written.find((o) => o.kind === "Queue");
    expect(queue).toMatchObject({
      kind: "Queue",
      metadata: { name: "with-policy" },
      spec: {
        forProvider: {
          policy: { Version: "2012-10-17", Statement: [] },
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
    expect((await cli(["migrate", "-"], { input: gcp })).code).toBe(1); // the subscription's filter
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

/** The type of a converted object, by apiVersion and kind: a managed kind or a ProviderConfig kind. */
function typeOf(o: KubeObject, generated: readonly ManagedKindDef[] = []): ResourceType {
  const types: Array<ResourceType & { apiVersion?: string }> = [
    ...managedKinds.map((k) => k.definition),
    ...generated.flatMap((d) => [d, namespacedVariantOf(d)]),
    ...Object.values(v2ProviderConfigs).flatMap((pc) => [pc.namespaced.type, pc.cluster.type]),
    ...Object.values(providerConfigs).map((pc) => pc.type),
  ];
  const t = types.find((t) => `${t.group}/${t.version}` === o.apiVersion && t.kind === o.kind);
  if (!t) throw new Error(`no type for ${String(o.apiVersion)} ${o.kind}`);
  return t;
}

describe("driftless migrate: the namespaced shape", { timeout: 180_000 }, () => {
  it("writes Crossplane v2 examples as namespaced objects the API server accepts", async () => {
    // Prepare: the providers' examples, with uptest's placeholder and the namespace made unique
    const ns = uniqueName("xp-v2");
    const suffix = uniqueName("r");
    await ensureNamespace(kube, ns);
    const input = join(dir, `${ns}.yaml`);
    const files = [
      "aws/sqs-queue.yaml",
      "aws/s3-bucketversioning.yaml",
      "aws/rds-instance.yaml",
      "aws/rds-subnetgroup.yaml",
      "aws/providerconfig.yaml",
      "gcp/pubsub-subscription.yaml",
      "gcp/storage-bucket.yaml",
      "gcp/clusterproviderconfig.yaml",
      "azure/network-subnet.yaml",
      "azure/storage-container.yaml",
    ];
    writeFileSync(
      input,
      files
        .map((f) => readFileSync(join(FIXTURES, "v2", f), "utf8"))
        .join("\n---\n")
        // biome-ignore lint/suspicious/noTemplateCurlyInString: uptest's placeholder, as the examples spell it
        .replaceAll("${Rand.RFC1123Subdomain}", suffix)
        .replaceAll("namespace: upbound-system", `namespace: ${ns}`)
        .replaceAll("name: default\n", `name: ${suffix}\n`),
    );

    // Act: convert (some kinds have no driftless equivalent: exit 1, the rest is written), then apply
    const res = await cli(["migrate", input, "-o", "json", "--allow-dropped"]);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toMatch(/^ERROR +Key\.kms\.aws\.m\.upbound\.io\//m);
    // The examples' VPC and Subnet carry no external name: reported not migrated, and not written.
    expect(res.stderr).toMatch(/^ERROR +VPC\.ec2\.aws\.m\.upbound\.io\/.*not migrated$/m);
    expect(res.stderr).toMatch(/^ERROR +Subnet\.ec2\.aws\.m\.upbound\.io\/.*not migrated$/m);
    const objects = JSON.parse(res.stdout) as KubeObject[];
    // An Upjet kind with no hand-written twin (the storage Account) goes to its generated kind: its CRDs,
    // as `driftless crds apply --activate` would install them.
    const docs = parseAllDocuments(readFileSync(input, "utf8")).map((d) => d.toJS() as KubeObject);
    const { generated } = migrate(docs, {
      defaultNamespace: ns,
      generated: generatedKinds(loadUpjetFacts(UPJET_FACTS_FILE)),
    });
    // The KMS Key maps too, but is not written: it has no external name (ERROR above).
    expect(generated.map((d) => `${d.kind}.${d.group}`).sort()).toEqual([
      "Key.kms.awscc.driftless.dev",
      "StorageAccount.storage.azure.gen.driftless.dev",
    ]);
    // Held (crd-holds.ts) until this file's process ends: other files running at once use these kinds too.
    await installCrds(
      kube,
      generated.flatMap((d) => [d, namespacedVariantOf(d)]),
    );
    const created = [];
    for (const o of objects) created.push(await kube.create(typeOf(o, generated), o));

    // Assess: every object stored with all it was written with (nothing pruned), in the namespace
    expect(created.map((o) => `${o.kind}.${String(o.apiVersion).split("/")[0]}`).sort()).toEqual(
      expect.arrayContaining([
        "Queue.sqs.aws.m.driftless.dev",
        "Bucket.s3.aws.m.driftless.dev",
        "DBInstance.rds.aws.m.driftless.dev",
        "DBSubnetGroup.rds.aws.m.driftless.dev",
        "ProviderConfig.aws.m.driftless.dev",
        "Subscription.pubsub.gcp.m.driftless.dev",
        "Topic.pubsub.gcp.m.driftless.dev",
        "Bucket.storage.gcp.m.driftless.dev",
        "ClusterProviderConfig.gcp.m.driftless.dev",
        "VirtualNetwork.network.azure.m.driftless.dev",
        "Subnet.network.azure.m.driftless.dev",
        "Container.storage.azure.m.driftless.dev",
        "StorageAccount.storage.azure.gen.m.driftless.dev",
      ]),
    );
    expect(objects.filter((o) => o.kind === "VPC" || String(o.apiVersion).startsWith("ec2."))).toEqual([]);
    for (const [i, o] of objects.entries()) {
      expect(created[i]?.spec).toMatchObject(o.spec as object); // server defaults may add, never prune
      if (o.kind !== "ClusterProviderConfig") expect(created[i]?.metadata.namespace).toBe(ns);
    }
    await kube.delete(v2ProviderConfigs.gcp.cluster.type, suffix);
  });

  it("moves a driftless cluster-scoped queue to its namespaced variant without touching the cloud", async () => {
    // Prepare: a cluster-scoped queue driftless created in moto, and its ProviderConfig, as exported
    const name = uniqueName("mv-orders");
    const pc = uniqueName("pc-mv");
    const ns = uniqueName("team");
    await createAwsProviderConfig(kube, pc);
    await ensureNamespace(kube, ns);
    await kube.create(Queue, {
      apiVersion: Queue.apiVersion,
      kind: Queue.kind,
      metadata: { name },
      spec: {
        forProvider: { region: "us-east-1", visibilityTimeoutSeconds: 45 },
        providerConfigRef: { name: pc },
        writeConnectionSecretToRef: { name: `${name}-conn`, namespace: ns },
      },
    });
    const r = newReconciler(kube);
    await settle(r, keyOf(Queue, name));
    const old = await getMr(kube, Queue, name);
    expect(conditionOf(old, "Ready")?.status).toBe("True");
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    const exported = join(dir, `${name}.old.yaml`);
    const pcObject = await kube.get<KubeObject>(providerConfigs.aws.type, pc);
    writeFileSync(exported, [old, pcObject].map((o) => stringify(o)).join("---\n"));
    const output = join(dir, `${name}.namespaced.yaml`);

    // Act: convert, then follow the plan: orphan, create the namespaced objects, delete the old one
    const res = await cli(["migrate", exported, "--namespaced", "--namespace", ns, "--out", output]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`kubectl patch queues.sqs.aws.driftless.dev ${name} --type merge`);
    const objects = parseAllDocuments(readFileSync(output, "utf8")).map((d) => d.toJS() as KubeObject);
    const nsQueue = namespacedVariantOf(Queue);
    expect(objects).toEqual([
      expect.objectContaining({
        apiVersion: nsQueue.apiVersion,
        metadata: expect.objectContaining({
          name,
          namespace: ns,
          annotations: expect.objectContaining({ "crossplane.io/external-name": name }),
        }),
        spec: {
          forProvider: expect.objectContaining({ region: "us-east-1", visibilityTimeoutSeconds: 45 }),
          managementPolicies: ["*"],
          providerConfigRef: { kind: "ClusterProviderConfig", name: pc },
          writeConnectionSecretToRef: { name: `${name}-conn` },
        },
      }),
      expect.objectContaining({ apiVersion: "aws.m.driftless.dev/v1alpha1", kind: "ClusterProviderConfig" }),
    ]);
    await kube.patch(Queue, name, { spec: { deletionPolicy: "Orphan" } });
    expect((await getMr(kube, Queue, name))?.spec.deletionPolicy).toBe("Orphan");
    for (const o of objects.reverse()) await kube.create(typeOf(o), o);
    const nsKey = { ...keyOf(nsQueue, name), namespace: ns };
    await settle(r, nsKey);
    await kube.delete(Queue, name);
    await settle(r, keyOf(Queue, name));

    // Assess: the old object is gone, the new one adopted the same queue, nothing was created or deleted
    await eventually(async () => (await getMr(kube, Queue, name)) === undefined, { what: "old queue gone" });
    expect(r.externalCalls).toMatchObject({ delete: 0 });
    expect((await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl).toBe(QueueUrl);
    const after = await settle(r, nsKey);
    expect(after.at(-1)?.outcome).toBe("in-sync");
    const adopted = await kube.get<Record<string, unknown> & KubeObject>(nsQueue, name, ns);
    expect(conditionOf(adopted as never, "Ready")?.status).toBe("True");
    expect(r.externalCalls.create).toBe(1); // the original create only
    expect(Object.keys((await kube.getSecret(ns, `${name}-conn`))?.data ?? {}).sort()).toEqual([
      "arn",
      "url",
    ]);
    await kube.delete(v2ProviderConfigs.aws.cluster.type, pc);
  });
});
