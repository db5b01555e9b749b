// "Never lie": a field the user set that the cloud no longer has (removed out of band, or never set on
// an imported resource) is drift, and the next reconcile puts it back — the provider reports its absence
// by leaving the key out of `observed`, never by a default that happens to equal the spec.
import { CreateBucketCommand, GetBucketVersioningCommand } from "@aws-sdk/client-s3";
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  SetQueueAttributesCommand,
} from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { Bucket } from "../../../shared/api/aws/s3.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { motoS3, motoSqs } from "../../support/aws.ts";
import { type ManagedType, managedObject, useProviderConfig } from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

const sqs = motoSqs();
const s3 = motoS3();
const kube = newKube();
const PC = useProviderConfig("aws", "pc-absent");

const mrObject = (
  t: ManagedType,
  name: string,
  forProvider: Record<string, unknown>,
  annotations: Record<string, string> = {},
) => managedObject(t, name, PC, { forProvider, annotations, connectionSecret: false });

const queueAttributes = async (name: string) => {
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
  const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["All"] }));
  return { url: QueueUrl ?? "", attributes: out.Attributes ?? {} };
};

describe("a field the user set and the cloud lacks is drift, and is restored", () => {
  it("SQS: a redrive policy removed out of band is put back, and the queue ends Synced", async () => {
    const dlq = uniqueName("q-absent-dlq");
    const { QueueUrl: dlqUrl } = await sqs.send(new CreateQueueCommand({ QueueName: dlq }));
    const dlqArn = (
      await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["QueueArn"] }))
    ).Attributes?.QueueArn;
    const name = uniqueName("q-absent");
    const redrivePolicy = { deadLetterTargetArn: dlqArn, maxReceiveCount: 4 };
    const r = newReconciler(kube);
    await kube.create(Queue, mrObject(Queue, name, { redrivePolicy }));
    await settle(r, keyOf(Queue, name));
    const before = await queueAttributes(name);
    expect(JSON.parse(before.attributes.RedrivePolicy ?? "{}")).toEqual(redrivePolicy);

    // Someone removes the redrive policy in the console.
    await sqs.send(
      new SetQueueAttributesCommand({ QueueUrl: before.url, Attributes: { RedrivePolicy: "" } }),
    );
    expect((await queueAttributes(name)).attributes.RedrivePolicy).toBeUndefined();

    const results = await settle(r, keyOf(Queue, name));

    expect(results.map((x) => x.outcome)).toContain("updated");
    const after = await queueAttributes(name);
    expect(JSON.parse(after.attributes.RedrivePolicy ?? "{}")).toEqual(redrivePolicy);
    const mr = await getMr(kube, Queue, name);
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    // Restored once, then still: no update loop.
    expect(r.externalCalls.update).toBe(1);
    expect((await r.reconcile(keyOf(Queue, name))).outcome).toBe("in-sync");

    await kube.delete(Queue, name);
    await settle(r, keyOf(Queue, name));
    await sqs.send(new DeleteQueueCommand({ QueueUrl: dlqUrl }));
  });

  it("S3: a bucket that never had versioning gets the versioning its spec asks for", async () => {
    // The bucket exists before its managed resource, made out of band without versioning: S3 then has no
    // versioning Status at all (neither Enabled nor Suspended).
    const bucket = uniqueName("b-absent-cloud");
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket: bucket }))).Status).toBeUndefined();
    const name = uniqueName("b-absent");
    const r = newReconciler(kube);
    await kube.create(
      Bucket,
      mrObject(Bucket, name, { versioning: "Enabled" }, { [Annotations.externalName]: bucket }),
    );

    const results = await settle(r, keyOf(Bucket, name));

    expect(results.map((x) => x.outcome)).toContain("updated");
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket: bucket }))).Status).toBe("Enabled");
    const mr = await getMr(kube, Bucket, name);
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
    expect(r.externalCalls).toMatchObject({ create: 0, update: 1 });
    expect((await r.reconcile(keyOf(Bucket, name))).outcome).toBe("in-sync");

    await kube.delete(Bucket, name);
    await settle(r, keyOf(Bucket, name));
  });
});
