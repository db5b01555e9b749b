// Proves every server of the local stack answers the real client library driftless uses for it.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from "@aws-sdk/client-sqs";
import { ResourceManagementClient } from "@azure/arm-resources";
import { BlobServiceClient, StorageSharedKeyCredential } from "@azure/storage-blob";
import { type Message, PubSub } from "@google-cloud/pubsub";
import { Storage } from "@google-cloud/storage";
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type V1CustomResourceDefinition,
  Watch,
} from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { motoS3, motoSqs } from "./../support/aws.ts";
import { env, eventually, kubeConfig, uniqueName } from "./../support/env.ts";

const suffix = () => randomBytes(4).toString("hex");

describe("local stack smoke test", () => {
  it("kube-apiserver: CRD, custom resource, /status, watch, Secret and a finalizer-blocked delete", async () => {
    const kc = kubeConfig();
    const crds = kc.makeApiClient(ApiextensionsV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const core = kc.makeApiClient(CoreV1Api);
    const group = `s${suffix()}.smoke.driftless.dev`;
    const gvp = { group, version: "v1", plural: "gadgets" };
    const namespace = "default";
    const crd: V1CustomResourceDefinition = {
      metadata: { name: `gadgets.${group}` },
      spec: {
        group,
        scope: "Namespaced",
        names: { kind: "Gadget", plural: "gadgets", singular: "gadget", listKind: "GadgetList" },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: {
                  spec: { type: "object", properties: { size: { type: "integer" } } },
                  status: { type: "object", properties: { phase: { type: "string" } } },
                },
              },
            },
          },
        ],
      },
    };
    await crds.createCustomResourceDefinition({ body: crd });
    try {
      await eventually(
        async () =>
          (await crds.readCustomResourceDefinition({ name: `gadgets.${group}` })).status?.conditions?.some(
            (c) => c.type === "Established" && c.status === "True",
          ),
        { what: "the CRD to be established" },
      );
      // The served API may lag Established by a moment: wait until a list answers.
      const list = await eventually(() => custom.listNamespacedCustomObject({ ...gvp, namespace }), {
        what: "the API to serve",
      });

      const events: Array<[string, string, string | undefined]> = [];
      const watchDone: unknown[] = [];
      const watch = await new Watch(kc).watch(
        `/apis/${group}/v1/namespaces/${namespace}/gadgets`,
        { resourceVersion: (list as { metadata: { resourceVersion: string } }).metadata.resourceVersion },
        (phase, obj) => events.push([phase, obj.metadata?.name, obj.status?.phase]),
        (err) => watchDone.push(err),
      );
      try {
        const name = `g-${suffix()}`;
        await custom.createNamespacedCustomObject({
          ...gvp,
          namespace,
          body: {
            apiVersion: `${group}/v1`,
            kind: "Gadget",
            metadata: { name, finalizers: ["smoke.driftless.dev/hold"] },
            spec: { size: 3 },
          },
        });
        // The status subresource takes the status; a write to the main resource would ignore it.
        const patched = (await custom.patchNamespacedCustomObjectStatus(
          { ...gvp, namespace, name, body: { status: { phase: "Ready" } } },
          setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
        )) as { status: { phase: string }; spec: { size: number } };
        expect(patched.status.phase).toBe("Ready");
        expect(patched.spec.size).toBe(3);

        await core.createNamespacedSecret({
          namespace,
          body: { metadata: { name: `${name}-secret` }, stringData: { token: "smoke" } },
        });
        const secret = await core.readNamespacedSecret({ namespace, name: `${name}-secret` });
        expect(Buffer.from(secret.data?.token ?? "", "base64").toString()).toBe("smoke");
        await core.deleteNamespacedSecret({ namespace, name: `${name}-secret` });

        // The finalizer holds the object after delete until it is removed.
        await custom.deleteNamespacedCustomObject({ ...gvp, namespace, name });
        const held = (await custom.getNamespacedCustomObject({ ...gvp, namespace, name })) as {
          metadata: { deletionTimestamp?: string };
        };
        expect(held.metadata.deletionTimestamp).toBeDefined();
        await custom.patchNamespacedCustomObject(
          { ...gvp, namespace, name, body: { metadata: { finalizers: null } } },
          setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
        );
        await expect(custom.getNamespacedCustomObject({ ...gvp, namespace, name })).rejects.toMatchObject({
          code: 404,
        });

        await eventually(async () => events.some(([phase]) => phase === "DELETED"), {
          what: "the DELETED event",
        });
        expect(events[0]).toEqual(["ADDED", name, undefined]);
        expect(events).toContainEqual(["MODIFIED", name, "Ready"]);
        expect(events.at(-1)).toEqual(["DELETED", name, "Ready"]);
      } finally {
        watch.abort();
      }
    } finally {
      await crds.deleteCustomResourceDefinition({ name: `gadgets.${group}` });
    }
  });

  it("moto: an SQS queue and an S3 bucket", async () => {
    const sqs = motoSqs();
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName("smoke-q") }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: "hello" }));
    const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
    expect(Messages?.map((m) => m.Body)).toEqual(["hello"]);
    await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: Messages?.[0]?.ReceiptHandle }));
    await sqs.send(new DeleteQueueCommand({ QueueUrl }));

    const s3 = motoS3();
    const Bucket = uniqueName("smoke-bucket");
    await s3.send(new CreateBucketCommand({ Bucket }));
    await s3.send(new PutObjectCommand({ Bucket, Key: "a.txt", Body: "contents" }));
    const got = await s3.send(new GetObjectCommand({ Bucket, Key: "a.txt" }));
    expect(await got.Body?.transformToString()).toBe("contents");
    await s3.send(new DeleteObjectCommand({ Bucket, Key: "a.txt" }));
    await s3.send(new DeleteBucketCommand({ Bucket }));
  });

  it("Pub/Sub emulator: publish and pull", async () => {
    env("PUBSUB_EMULATOR_HOST"); // the client finds the emulator through it
    const pubsub = new PubSub({ projectId: env("GCP_PROJECT_ID") });
    const [topic] = await pubsub.createTopic(uniqueName("smoke-topic"));
    const [subscription] = await topic.createSubscription(uniqueName("smoke-sub"));
    try {
      const received = new Promise<Message>((resolve, reject) => {
        subscription.once("message", resolve);
        subscription.once("error", reject);
      });
      const id = await topic.publishMessage({ data: Buffer.from("ping"), attributes: { kind: "smoke" } });

      const msg = await received;
      msg.ack();

      expect(msg.id).toBe(id);
      expect(msg.data.toString()).toBe("ping");
      expect(msg.attributes).toEqual({ kind: "smoke" });
    } finally {
      await subscription.close();
      await subscription.delete();
      await topic.delete();
      await pubsub.close();
    }
  });

  it("ARM fake: a resource group through @azure/arm-resources", async () => {
    const ca = readFileSync(env("DRIFTLESS_CA_FILE"), "utf8");
    // The stack's fake accepts any bearer token: a static credential stands in for Entra ID.
    const credential = {
      getToken: async () => ({ token: "smoke-token", expiresOnTimestamp: Date.now() + 3_600_000 }),
    };
    const arm = new ResourceManagementClient(credential, env("AZURE_SUBSCRIPTION_ID"), {
      endpoint: env("AZURE_ARM_ENDPOINT"),
      tlsOptions: { ca },
    });
    const name = uniqueName("rg-smoke");

    const created = await arm.resourceGroups.createOrUpdate(name, {
      location: "westeurope",
      tags: { smoke: "yes" },
    });
    expect(created).toMatchObject({ name, location: "westeurope", tags: { smoke: "yes" } });
    expect((await arm.resourceGroups.get(name)).properties?.provisioningState).toBe("Succeeded");

    await arm.resourceGroups.delete(name, { updateIntervalInMs: 10 });
    await expect(arm.resourceGroups.get(name)).rejects.toMatchObject({ statusCode: 404 });
  });

  it("Azurite: a blob container through @azure/storage-blob", async () => {
    const credential = new StorageSharedKeyCredential(
      env("AZURITE_ACCOUNT_NAME"),
      env("AZURITE_ACCOUNT_KEY"),
    );
    const blobs = new BlobServiceClient(env("AZURITE_BLOB_ENDPOINT"), credential);
    const container = blobs.getContainerClient(uniqueName("smoke-container"));

    await container.create({ metadata: { smoke: "yes" } });
    await container.getBlockBlobClient("a.txt").upload("contents", 8);
    const names: string[] = [];
    for await (const b of container.listBlobsFlat()) names.push(b.name);
    const props = await container.getProperties();
    await container.delete();

    expect(names).toEqual(["a.txt"]);
    expect(props.metadata).toEqual({ smoke: "yes" });
    expect(await container.exists()).toBe(false);
  });

  it("GCS fake: a bucket through @google-cloud/storage", async () => {
    const storage = new Storage({ apiEndpoint: env("GCS_ENDPOINT"), projectId: env("GCP_PROJECT_ID") });
    const name = uniqueName("smoke-gcs");

    const [bucket] = await storage.createBucket(name, { location: "us-east1", labels: { smoke: "yes" } });
    const [meta] = await bucket.getMetadata();
    expect(meta).toMatchObject({ name, location: "US-EAST1", labels: { smoke: "yes" } });
    const [all] = await storage.getBuckets();
    expect(all.map((b) => b.name)).toContain(name);
    await bucket.delete();
    expect(await bucket.exists()).toEqual([false]);
  });
});
