import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  SetQueueAttributesCommand,
} from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { createAwsProviderConfig, motoSqs } from "../../support/aws.ts";
import {
  connectionData,
  describeManagedKind,
  expectAvailable,
  expectSecretOwnedBy,
  type MrOptions,
  managedObject,
  useProviderConfig,
} from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { captureLogger, conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

const sqs = motoSqs();
const kube = newKube();
const PC = useProviderConfig("aws", "pc-sqs");

const queueObject = (name: string, forProvider: Record<string, unknown> = {}, o: MrOptions = {}) =>
  managedObject(Queue, name, PC, { forProvider, ...o });

const attributesOf = async (name: string) => {
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
  return (
    (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["All"] }))).Attributes ?? {}
  );
};
const queuesNamed = async (prefix: string) =>
  (await sqs.send(new ListQueuesCommand({ QueueNamePrefix: prefix }))).QueueUrls ?? [];
const queueExists = async (name: string) => (await queuesNamed(name)).some((u) => u.endsWith(`/${name}`));

describeManagedKind({
  type: Queue,
  cloud: "moto",
  prefix: "q",
  providerConfig: PC,
  connectionSecret: true,
  invalidSpec: {
    forProvider: { visibilityTimeoutSeconds: "soon" },
    field: "spec.forProvider.visibilityTimeoutSeconds",
  },
  exists: queueExists,
  count: async (name) => (await queuesNamed(name)).length,
  import: {
    arrange: async (cloudName) => {
      await sqs.send(
        new CreateQueueCommand({ QueueName: cloudName, Attributes: { VisibilityTimeout: "200" } }),
      );
    },
    expectSpec: (forProvider) => expect(forProvider).toMatchObject({ visibilityTimeoutSeconds: 200 }),
    change: { visibilityTimeoutSeconds: 5 },
    expectUnchanged: async (cloudName) =>
      expect((await attributesOf(cloudName)).VisibilityTimeout).toBe("200"),
  },
});

describe("SQS Queue field mapping and quirks against the real API server and moto", () => {
  it("creates the queue, reports Ready and Synced, and writes the connection Secret", async () => {
    const name = uniqueName("q-create");
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    await kube.create(Queue, queueObject(name, { visibilityTimeoutSeconds: 45 }));

    await settle(r, keyOf(Queue, name));

    const mr = await getMr(kube, Queue, name);
    expectAvailable(mr, name);
    expect((await attributesOf(name)).VisibilityTimeout).toBe("45");
    const data = await connectionData(kube, name);
    expect(data.url).toMatch(new RegExp(`/${name}$`));
    expect(data.arn).toBe(`arn:aws:sqs:us-east-1:123456789012:${name}`);
    await expectSecretOwnedBy(kube, mr);
    // Credentials never reach logs or status; connection values never reach logs.
    expect(lines.join("\n") + JSON.stringify(mr?.status)).not.toContain("testing-secret-value");
    expect(lines.join("\n")).not.toContain(data.url);
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

  it("names the ProviderConfig when its credentials are bad", async () => {
    const r = newReconciler(kube);
    const badPc = uniqueName("pc-bad");
    await createAwsProviderConfig(kube, badPc, { credentials: "[default]\naws_access_key_id = only-half\n" });
    const bad = uniqueName("q-badcreds");
    await kube.create(Queue, queueObject(bad, {}, { providerConfig: badPc, connectionSecret: false }));
    await settle(r, keyOf(Queue, bad), 1);
    const m2 = conditionOf(await getMr(kube, Queue, bad), "Synced")?.message;
    expect(m2).toContain(`ProviderConfig "${badPc}"`);
    expect(m2).toContain("aws_secret_access_key");
    expect(m2).not.toContain("only-half");
    expect(await queueExists(bad)).toBe(false);
  });
});
