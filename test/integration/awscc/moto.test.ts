// Generated AWS kinds against moto's own state: moto has no Cloud Control API, so the Cloud Control fake
// makes the types moto's CloudFormation implements through a one-resource moto stack each
// (infra/local/fakes/moto-stacks.ts). A resource made through driftless is then seen — and its update and
// its deletion — by the service's own API on moto, read with the service's own SDK. GetResource still
// answers from the fake's record: a change made in moto behind driftless's back is not seen (docs/awscc.md).
import { DescribeInternetGatewaysCommand, DescribeVpcsCommand, EC2Client } from "@aws-sdk/client-ec2";
import { GetObjectCommand, HeadBucketCommand } from "@aws-sdk/client-s3";
import { GetQueueAttributesCommand, GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import { GetParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ManagedKindDef } from "../../../shared/api/managed.ts";
import { motoOptions, motoS3, motoSqs } from "../../support/aws.ts";
import { awsccTestbed } from "../../support/awscc.ts";
import { expectAvailable, managedObject } from "../../support/conformance.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { getMr, keyOf, settle } from "../../support/reconcile.ts";
import type { Reconciler } from "../../support/routed.ts";

const QUEUE = "AWS::SQS::Queue";
const PARAMETER = "AWS::SSM::Parameter";
const BUCKET = "AWS::S3::Bucket";
const VPC = "AWS::EC2::VPC";
const GATEWAY = "AWS::EC2::InternetGateway";

const kube = newKube();
const PC = uniqueName("pc-awscc-moto");
let bed: Awaited<ReturnType<typeof awsccTestbed>>;
let r: Reconciler;
let defs: Map<string, ManagedKindDef>;

beforeAll(async () => {
  bed = await awsccTestbed(kube, PC, [QUEUE, PARAMETER, BUCKET, VPC, GATEWAY], {
    moto: env("AWS_ENDPOINT_URL"),
  });
  r = bed.reconciler;
  defs = bed.defs;
}, 120_000);

afterAll(async () => {
  await bed?.close();
});

const defOf = (t: string) => defs.get(t) as ManagedKindDef;
const create = async (t: string, name: string, forProvider: Record<string, unknown>) => {
  await kube.create(defOf(t), managedObject(defOf(t), name, PC, { forProvider, connectionSecret: false }));
  await settle(r, keyOf(defOf(t), name));
  expectAvailable(await getMr(kube, defOf(t), name));
};
const remove = async (t: string, name: string) => {
  await kube.delete(defOf(t), name);
  await settle(r, keyOf(defOf(t), name));
  expect(await getMr(kube, defOf(t), name)).toBeUndefined();
};
const externalNameOf = async (t: string, name: string) =>
  (await getMr(kube, defOf(t), name))?.metadata.annotations?.["crossplane.io/external-name"] ?? "";
const status = (err: unknown) =>
  (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;

describe("generated kinds made in moto's own state (the service's API sees them)", () => {
  it("SQS Queue: created, updated and deleted as SQS's own API reports", async () => {
    const sqs = motoSqs();
    const name = uniqueName("cc-queue");
    await create(QUEUE, name, { queueName: name, visibilityTimeout: 45 });
    const url = (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
    const attrs = async () =>
      (
        await sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["VisibilityTimeout"] }),
        )
      ).Attributes;
    expect((await attrs())?.VisibilityTimeout).toBe("45");

    await kube.patch(defOf(QUEUE), name, { spec: { forProvider: { visibilityTimeout: 90 } } });
    await settle(r, keyOf(defOf(QUEUE), name));
    expect((await attrs())?.VisibilityTimeout).toBe("90");

    await remove(QUEUE, name);
    await expect(sqs.send(new GetQueueUrlCommand({ QueueName: name }))).rejects.toMatchObject({
      name: expect.stringMatching(/QueueDoesNotExist|NonExistentQueue/),
    });
  });

  it("SSM Parameter: created, its value updated and deleted as SSM's own API reports", async () => {
    const ssm = new SSMClient(motoOptions());
    const name = uniqueName("cc-param");
    await create(PARAMETER, name, { type: "String", value: "one" });
    const value = async () => (await ssm.send(new GetParameterCommand({ Name: name }))).Parameter?.Value;
    expect(await value()).toBe("one");

    await kube.patch(defOf(PARAMETER), name, { spec: { forProvider: { value: "two" } } });
    await settle(r, keyOf(defOf(PARAMETER), name));
    expect(await value()).toBe("two");

    await remove(PARAMETER, name);
    await expect(value()).rejects.toMatchObject({ name: "ParameterNotFound" });
  });

  it("S3 Bucket: created and deleted as S3's own API reports", async () => {
    const s3 = motoS3();
    const name = uniqueName("cc-bucket");
    await create(BUCKET, name, {});
    await expect(s3.send(new HeadBucketCommand({ Bucket: name }))).resolves.toBeDefined();
    await remove(BUCKET, name);
    const gone = await s3.send(new GetObjectCommand({ Bucket: name, Key: "x" })).catch((e: unknown) => e);
    expect(status(gone)).toBe(404);
    expect((gone as Error).name).toBe("NoSuchBucket");
  });

  it("EC2 VPC and InternetGateway: the ids driftless records are EC2's own, gone when deleted", async () => {
    const ec2 = new EC2Client(motoOptions());
    const vpc = uniqueName("cc-vpc");
    await create(VPC, vpc, { cidrBlock: "10.42.0.0/16" });
    const vpcId = await externalNameOf(VPC, vpc);
    expect(vpcId).toMatch(/^vpc-/);
    const vpcs = await ec2.send(new DescribeVpcsCommand({ VpcIds: [vpcId] }));
    expect(vpcs.Vpcs?.[0]?.CidrBlock).toBe("10.42.0.0/16");
    const igw = uniqueName("cc-igw");
    await create(GATEWAY, igw, {});
    const igwId = await externalNameOf(GATEWAY, igw);
    expect(igwId).toMatch(/^igw-/);
    const found = await ec2.send(new DescribeInternetGatewaysCommand({ InternetGatewayIds: [igwId] }));
    expect(found.InternetGateways?.[0]?.InternetGatewayId).toBe(igwId);

    await remove(GATEWAY, igw);
    await remove(VPC, vpc);
    await expect(ec2.send(new DescribeVpcsCommand({ VpcIds: [vpcId] }))).rejects.toMatchObject({
      name: "InvalidVpcID.NotFound",
    });
  });
});
