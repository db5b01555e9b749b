import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  SetQueueAttributesCommand,
} from "@aws-sdk/client-sqs";
import { beforeAll, describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { Annotations, MANAGED_FINALIZER } from "../../../shared/api/meta.ts";
import { Kube, KubeError } from "../../../shared/kube/client.ts";
import { createAwsProviderConfig, ensureCrds, motoSqs } from "../../support/aws.ts";
import { kubeConfig, newKube, uniqueName } from "../../support/env.ts";
import { captureLogger, conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

const sqs = motoSqs();
const kube = newKube();
const PC = uniqueName("pc-sqs");

function queueObject(
  name: string,
  forProvider: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  return {
    apiVersion: Queue.apiVersion,
    kind: Queue.kind,
    metadata: { name, ...((extra.metadata as object) ?? {}) },
    spec: {
      forProvider,
      providerConfigRef: { name: PC },
      writeConnectionSecretToRef: { namespace: "default", name: `${name}-conn` },
      ...((extra.spec as object) ?? {}),
    },
  };
}

const attributesOf = async (name: string) => {
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
  return (
    (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["All"] }))).Attributes ?? {}
  );
};
const queueExists = async (name: string) =>
  ((await sqs.send(new ListQueuesCommand({ QueueNamePrefix: name }))).QueueUrls ?? []).some((u) =>
    u.endsWith(`/${name}`),
  );

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
});

describe("SQS Queue against the real API server and moto", () => {
  it("creates the queue, reports Ready and Synced, and writes the connection Secret", async () => {
    const name = uniqueName("q-create");
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    await kube.create(Queue, queueObject(name, { visibilityTimeoutSeconds: 45 }));

    await settle(r, keyOf(Queue, name));

    const mr = await getMr(kube, Queue, name);
    expect(conditionOf(mr, "Ready")).toMatchObject({ status: "True", reason: "Available" });
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
    expect(mr?.metadata.annotations?.[Annotations.externalName]).toBe(name);
    expect(mr?.metadata.finalizers).toContain(MANAGED_FINALIZER);
    expect((await attributesOf(name)).VisibilityTimeout).toBe("45");
    const secret = await kube.getSecret("default", `${name}-conn`);
    const data = Object.fromEntries(
      Object.entries(secret?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]),
    );
    expect(data.url).toMatch(new RegExp(`/${name}$`));
    expect(data.arn).toBe(`arn:aws:sqs:us-east-1:123456789012:${name}`);
    expect(secret?.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: "Queue",
      name,
      uid: mr?.metadata.uid,
    });
    // Credentials never reach logs or status; connection values never reach logs.
    expect(lines.join("\n") + JSON.stringify(mr?.status)).not.toContain("testing-secret-value");
    expect(lines.join("\n")).not.toContain(data.url);
  });

  it("makes zero API-server writes and one cloud read when the resource is in sync", async () => {
    const name = uniqueName("q-insync");
    const r = newReconciler(kube);
    await kube.create(Queue, queueObject(name, {}));
    await settle(r, keyOf(Queue, name));

    const counted = new Kube(kubeConfig());
    const r2 = newReconciler(counted);
    await r2.reconcile(keyOf(Queue, name)); // warms the ProviderConfig/credentials cache
    counted.resetStats();
    const res = await r2.reconcile(keyOf(Queue, name));

    expect(res.outcome).toBe("in-sync");
    expect(counted.stats.writes).toBe(0);
    // The object, and its connection Secret: read every time, so one deleted by hand is repaired.
    expect(counted.stats.gets).toBe(2);
    expect(r2.externalCalls).toMatchObject({ create: 0, update: 0, delete: 0 });
  });

  it("applies a spec change to the cloud", async () => {
    const name = uniqueName("q-update");
    const r = newReconciler(kube);
    await kube.create(Queue, queueObject(name, { visibilityTimeoutSeconds: 30, tags: { team: "a" } }));
    await settle(r, keyOf(Queue, name));

    await kube.patch(Queue, name, {
      spec: { forProvider: { visibilityTimeoutSeconds: 120, tags: { team: "b", env: "dev" } } },
    });
    const results = await settle(r, keyOf(Queue, name));

    expect(results.map((x) => x.outcome)).toContain("updated");
    expect((await attributesOf(name)).VisibilityTimeout).toBe("120");
    expect(r.externalCalls.update).toBe(1);
  });

  it("corrects an out-of-band change in the cloud on the next reconcile", async () => {
    const name = uniqueName("q-drift");
    const r = newReconciler(kube);
    await kube.create(Queue, queueObject(name, { delaySeconds: 5 }));
    await settle(r, keyOf(Queue, name));
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));

    await sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { DelaySeconds: "60" } }));
    await settle(r, keyOf(Queue, name));

    expect((await attributesOf(name)).DelaySeconds).toBe("5");
  });

  it("late-initializes cloud defaults into the spec and never overwrites a user value", async () => {
    const name = uniqueName("q-lateinit");
    const r = newReconciler(kube);
    await kube.create(Queue, queueObject(name, { visibilityTimeoutSeconds: 77 }));
    await settle(r, keyOf(Queue, name));

    const mr = await getMr<Record<string, unknown>>(kube, Queue, name);
    expect(mr?.spec.forProvider).toMatchObject({
      visibilityTimeoutSeconds: 77,
      messageRetentionSeconds: 345600,
      maximumMessageSize: expect.any(Number),
      delaySeconds: 0,
      fifoQueue: false,
    });
  });

  it("reports an immutable field change in Synced and leaves the cloud untouched", async () => {
    const name = uniqueName("q-immutable");
    const r = newReconciler(kube);
    await kube.create(Queue, queueObject(name, {}));
    await settle(r, keyOf(Queue, name));

    await kube.patch(Queue, name, {
      spec: { forProvider: { fifoQueue: true, visibilityTimeoutSeconds: 99 } },
    });
    const [res] = await settle(r, keyOf(Queue, name), 1);

    expect(res?.outcome).toBe("error");
    const synced = conditionOf(await getMr(kube, Queue, name), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain("cannot update immutable field(s) fifoQueue");
    expect(synced?.message).toContain("left unchanged");
    const attrs = await attributesOf(name);
    expect(attrs.FifoQueue).toBeUndefined();
    expect(attrs.VisibilityTimeout).toBe("30");
    expect(r.externalCalls.update).toBe(0);
  });

  it("makes no cloud calls at all while paused", async () => {
    const name = uniqueName("q-paused");
    const r = newReconciler(kube);
    await kube.create(
      Queue,
      queueObject(name, {}, { metadata: { annotations: { [Annotations.paused]: "true" } } }),
    );

    const res = await r.reconcile(keyOf(Queue, name));

    expect(res.outcome).toBe("paused");
    expect(r.externalCalls).toEqual({ observe: 0, create: 0, update: 0, delete: 0 });
    expect(conditionOf(await getMr(kube, Queue, name), "Synced")).toMatchObject({
      status: "False",
      reason: "ReconcilePaused",
    });
    expect(await queueExists(name)).toBe(false);
  });

  it("imports an existing queue observe-only: fills the spec ([Observe, LateInitialize]), never modifies or deletes it", async () => {
    const cloudName = uniqueName("q-import-cloud");
    await sqs.send(
      new CreateQueueCommand({ QueueName: cloudName, Attributes: { VisibilityTimeout: "200" } }),
    );
    const name = uniqueName("q-import");
    const r = newReconciler(kube);
    await kube.create(
      Queue,
      queueObject(
        name,
        {},
        {
          metadata: { annotations: { [Annotations.externalName]: cloudName } },
          spec: { managementPolicies: ["Observe", "LateInitialize"] },
        },
      ),
    );

    await settle(r, keyOf(Queue, name));
    const mr = await getMr<Record<string, unknown>>(kube, Queue, name);
    expect(mr?.spec.forProvider).toMatchObject({ visibilityTimeoutSeconds: 200 });
    expect(conditionOf(mr, "Ready")?.status).toBe("True");

    await kube.patch(Queue, name, { spec: { forProvider: { visibilityTimeoutSeconds: 5 } } });
    await settle(r, keyOf(Queue, name));
    expect((await attributesOf(cloudName)).VisibilityTimeout).toBe("200");

    await kube.delete(Queue, name);
    await settle(r, keyOf(Queue, name));
    expect(await getMr(kube, Queue, name)).toBeUndefined();
    expect(await queueExists(cloudName)).toBe(true);
    expect(r.externalCalls).toMatchObject({ create: 0, update: 0, delete: 0 });
  });

  it("reports observe-only import of a queue that does not exist", async () => {
    const name = uniqueName("q-import-missing");
    const r = newReconciler(kube);
    await kube.create(Queue, queueObject(name, {}, { spec: { managementPolicies: ["Observe"] } }));
    const [res] = await settle(r, keyOf(Queue, name), 1);
    expect(res?.outcome).toBe("blocked"); // looked at again at the poll interval, not a failing message
    expect(conditionOf(await getMr(kube, Queue, name), "Synced")?.message).toContain(
      "external resource does not exist",
    );
    expect(await queueExists(name)).toBe(false);
  });

  it("names the cloud resource after the external-name annotation", async () => {
    const name = uniqueName("q-extname");
    const cloudName = uniqueName("q-cloud-name");
    const r = newReconciler(kube);
    await kube.create(
      Queue,
      queueObject(name, {}, { metadata: { annotations: { [Annotations.externalName]: cloudName } } }),
    );
    await settle(r, keyOf(Queue, name));
    expect(await queueExists(cloudName)).toBe(true);
    expect(await queueExists(name)).toBe(false);
  });

  it("deletes the cloud resource, then removes the finalizer (deletionPolicy Delete)", async () => {
    const name = uniqueName("q-delete");
    const r = newReconciler(kube);
    await kube.create(Queue, queueObject(name, {}));
    await settle(r, keyOf(Queue, name));
    expect(await kube.getSecret("default", `${name}-conn`)).toBeDefined();

    await kube.delete(Queue, name);
    const mid = await getMr(kube, Queue, name);
    expect(mid?.metadata.deletionTimestamp).toBeDefined(); // held by the finalizer until the cloud is clean
    const results = await settle(r, keyOf(Queue, name));

    expect(results.map((x) => x.outcome)).toEqual(expect.arrayContaining(["deleting", "deleted"]));
    expect(await queueExists(name)).toBe(false);
    expect(await getMr(kube, Queue, name)).toBeUndefined();
    expect(await kube.getSecret("default", `${name}-conn`)).toBeUndefined();
  });

  it("keeps the cloud resource with deletionPolicy Orphan", async () => {
    const name = uniqueName("q-orphan");
    const r = newReconciler(kube);
    await kube.create(Queue, queueObject(name, {}, { spec: { deletionPolicy: "Orphan" } }));
    await settle(r, keyOf(Queue, name));

    await kube.delete(Queue, name);
    const results = await settle(r, keyOf(Queue, name));

    expect(results.at(-1)?.outcome).toBe("orphaned");
    expect(await getMr(kube, Queue, name)).toBeUndefined();
    expect(await queueExists(name)).toBe(true);
  });

  it("calls Create exactly once for 20 concurrent reconciles of one new object", async () => {
    const name = uniqueName("q-concurrent");
    await kube.create(Queue, queueObject(name, {}));
    // 20 independent workers (own reconciler and API client each), as 20 Lambda containers would be.
    const workers = Array.from({ length: 20 }, () => newReconciler(new Kube(kubeConfig())));

    await Promise.all(workers.map((w) => w.reconcile(keyOf(Queue, name))));
    await Promise.all(workers.map((w) => settle(w, keyOf(Queue, name))));

    const creates = workers.reduce((n, w) => n + w.externalCalls.create, 0);
    expect(creates).toBe(1);
    expect(conditionOf(await getMr(kube, Queue, name), "Ready")?.status).toBe("True");
  });

  it("recovers from a crash after Create and before the succeeded annotation without a second queue", async () => {
    const name = uniqueName("q-crash");
    await kube.create(Queue, queueObject(name, {}));
    // The API server refuses the write that records success: the state a crash at that point leaves.
    class CrashBeforeSucceeded extends Kube {
      override async patch<T extends import("../../../shared/kube/client.ts").KubeObject>(
        ...args: Parameters<Kube["patch"]>
      ): Promise<T> {
        const annotations = (args[2].metadata as { annotations?: Record<string, string> } | undefined)
          ?.annotations;
        if (annotations?.[Annotations.createSucceeded]) throw new KubeError("injected crash", 503);
        return super.patch<T>(...args);
      }
    }
    const crashing = newReconciler(new CrashBeforeSucceeded(kubeConfig()));
    const first = await crashing.reconcile(keyOf(Queue, name));
    expect(first.outcome).toBe("error");
    expect(crashing.externalCalls.create).toBe(1);
    const stuck = await getMr(kube, Queue, name);
    expect(stuck?.metadata.annotations?.[Annotations.createPending]).toBeDefined();
    expect(stuck?.metadata.annotations?.[Annotations.createSucceeded]).toBeUndefined();

    const { lines, logger } = captureLogger();
    const restarted = newReconciler(kube, { logger });
    await settle(restarted, keyOf(Queue, name));

    expect(restarted.externalCalls.create).toBe(0);
    expect(lines.join("\n")).toContain("recovered an interrupted create");
    const mr = await getMr(kube, Queue, name);
    expect(mr?.metadata.annotations?.[Annotations.createSucceeded]).toBeDefined();
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    const all = (await sqs.send(new ListQueuesCommand({ QueueNamePrefix: name }))).QueueUrls ?? [];
    expect(all).toHaveLength(1);
  });

  it("rejects a spec of the wrong type at the API server", async () => {
    const name = uniqueName("q-invalid");
    const err = await kube
      .create(Queue, queueObject(name, { visibilityTimeoutSeconds: "soon" }))
      .catch((e) => e);
    expect(err).toBeInstanceOf(KubeError);
    expect((err as KubeError).status).toBe(422);
    expect((err as Error).message).toContain("spec.forProvider.visibilityTimeoutSeconds");
  });

  it("reports a spec the cloud refuses in Synced without crashing", async () => {
    const name = uniqueName("q-badfifo"); // FIFO queues need a .fifo suffix
    const r = newReconciler(kube);
    await kube.create(Queue, queueObject(name, { fifoQueue: true }));
    const [res] = await settle(r, keyOf(Queue, name), 1);
    expect(res?.outcome).toBe("error");
    const synced = conditionOf(await getMr(kube, Queue, name), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain("cannot create external resource");
    expect((await getMr(kube, Queue, name))?.metadata.annotations?.[Annotations.createFailed]).toBeDefined();
  });

  it("names the ProviderConfig when it is missing or its credentials are bad", async () => {
    const missing = uniqueName("q-nopc");
    const r = newReconciler(kube);
    await kube.create(Queue, {
      ...queueObject(missing, {}),
      spec: { forProvider: {}, providerConfigRef: { name: "does-not-exist" } },
    });
    await settle(r, keyOf(Queue, missing), 1);
    const m1 = conditionOf(await getMr(kube, Queue, missing), "Synced")?.message;
    expect(m1).toContain('ProviderConfig "does-not-exist"');
    expect(m1).toContain("not found");

    const badPc = uniqueName("pc-bad");
    await createAwsProviderConfig(kube, badPc, { credentials: "[default]\naws_access_key_id = only-half\n" });
    const bad = uniqueName("q-badcreds");
    await kube.create(Queue, {
      ...queueObject(bad, {}),
      spec: { forProvider: {}, providerConfigRef: { name: badPc } },
    });
    await settle(r, keyOf(Queue, bad), 1);
    const m2 = conditionOf(await getMr(kube, Queue, bad), "Synced")?.message;
    expect(m2).toContain(`ProviderConfig "${badPc}"`);
    expect(m2).toContain("aws_secret_access_key");
    expect(m2).not.toContain("only-half");
    expect(await queueExists(bad)).toBe(false);
  });
});
