// The SQS Queue's access policy and redrive-allow policy (Upjet's QueuePolicy and QueueRedriveAllowPolicy
// kinds, which `driftless migrate` folds into the Queue) against moto: set on create, compared as JSON, put
// back when changed out of band; a redrive-allow policy SQS would refuse is refused before any call. (moto
// 5.2.1 stores RedriveAllowPolicy but never returns it from GetQueueAttributes, so its read-back is not
// provable here.)
import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  SetQueueAttributesCommand,
} from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { motoSqs } from "../../support/aws.ts";
import { managedObject, useProviderConfig } from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

const sqs = motoSqs();
const kube = newKube();
const PC = useProviderConfig("aws", "pc-queue-policies");

const queue = (name: string, forProvider: Record<string, unknown>) =>
  managedObject(Queue, name, PC, { forProvider, connectionSecret: false });

const attributesOf = async (name: string) => {
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
  const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["All"] }));
  return { url: QueueUrl ?? "", attributes: out.Attributes ?? {} };
};

const policyFor = (name: string, principal: string) => ({
  Version: "2012-10-17",
  Statement: [
    {
      Sid: "AllowSend",
      Effect: "Allow",
      Principal: { AWS: principal },
      Action: "sqs:SendMessage",
      Resource: `arn:aws:sqs:us-east-1:123456789012:${name}`,
    },
  ],
});

describe("SQS Queue: policy and redriveAllowPolicy", () => {
  it("creates the queue with its access policy, and puts the policy back when it is changed out of band", async () => {
    const name = uniqueName("q-policy");
    const policy = policyFor(name, "arn:aws:iam::123456789012:root");
    const r = newReconciler(kube);
    await kube.create(Queue, queue(name, { policy, visibilityTimeoutSeconds: 40 }));

    await settle(r, keyOf(Queue, name));

    const created = await attributesOf(name);
    expect(JSON.parse(created.attributes.Policy ?? "{}")).toEqual(policy);
    expect((await r.reconcile(keyOf(Queue, name))).outcome).toBe("in-sync");

    // Someone widens the policy in the console.
    const widened = policyFor(name, "*");
    await sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: created.url,
        Attributes: { Policy: JSON.stringify(widened) },
      }),
    );
    const results = await settle(r, keyOf(Queue, name));

    expect(results.map((x) => x.outcome)).toContain("updated");
    expect(JSON.parse((await attributesOf(name)).attributes.Policy ?? "{}")).toEqual(policy);
    const mr = await getMr(kube, Queue, name);
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
    expect(r.externalCalls).toMatchObject({ create: 1, update: 1 });
    expect((await r.reconcile(keyOf(Queue, name))).outcome).toBe("in-sync");

    await kube.delete(Queue, name);
    await settle(r, keyOf(Queue, name));
  });

  it("refuses a redrive-allow policy SQS would refuse (byQueue without source queues), creating nothing", async () => {
    const name = uniqueName("q-allow-bad");
    const r = newReconciler(kube);
    await kube.create(Queue, queue(name, { redriveAllowPolicy: { redrivePermission: "byQueue" } }));

    await settle(r, keyOf(Queue, name));

    const mr = await getMr(kube, Queue, name);
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "False" });
    expect(conditionOf(mr, "Synced")?.message).toMatch(
      /sourceQueueArns is required with redrivePermission byQueue/,
    );
    await expect(sqs.send(new GetQueueUrlCommand({ QueueName: name }))).rejects.toThrow();

    await kube.delete(Queue, name);
    await settle(r, keyOf(Queue, name));
  });
});
