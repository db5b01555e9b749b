// Generated AWS kinds against moto's own state: moto has no Cloud Control API, so the Cloud Control fake
// makes the types moto's CloudFormation implements through a one-resource moto stack each
// (infra/local/fakes/moto-stacks.ts). A resource made through driftless is then seen — and its update and
// its deletion — by the service's own API on moto, read with the service's own SDK or, for services the
// project has no SDK client for, their own wire protocol (test/support/moto-api.ts). Types another test file
// reconciles (cloudcontrol.test.ts installs and removes their CRDs) are proven here at Cloud Control's wire:
// CreateResource, UpdateResource, DeleteResource against the fake, checked in the service's API. GetResource
// answers from the fake's record, except for SQS Queue and SSM Parameter, read through SQS and SSM
// (MOTO_READERS): a change made there behind driftless's back is drift, and is put back.
import {
  CreateResourceCommand,
  DeleteResourceCommand,
  UpdateResourceCommand,
} from "@aws-sdk/client-cloudcontrol";
import {
  CreateVpcCommand,
  DescribeInternetGatewaysCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  DescribeVpcsCommand,
  EC2Client,
} from "@aws-sdk/client-ec2";
import { GetObjectCommand, HeadBucketCommand } from "@aws-sdk/client-s3";
import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  SetQueueAttributesCommand,
} from "@aws-sdk/client-sqs";
import {
  DeleteParameterCommand,
  GetParameterCommand,
  PutParameterCommand,
  SSMClient,
} from "@aws-sdk/client-ssm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ManagedKindDef } from "../../../shared/api/managed.ts";
import { motoOptions, motoS3, motoSqs } from "../../support/aws.ts";
import { awsccTestbed, requestDone } from "../../support/awscc.ts";
import { expectAvailable, managedObject } from "../../support/conformance.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { gone, MotoApiError, motoGet, motoJson, motoQuery, xmlValue } from "../../support/moto-api.ts";
import { getMr, keyOf, settle } from "../../support/reconcile.ts";
import type { Reconciler } from "../../support/routed.ts";

type Json = Record<string, unknown>;
const QUEUE = "AWS::SQS::Queue";
const PARAMETER = "AWS::SSM::Parameter";
const BUCKET = "AWS::S3::Bucket";
const VPC = "AWS::EC2::VPC";
const GATEWAY = "AWS::EC2::InternetGateway";
const MACHINE = "AWS::StepFunctions::StateMachine";
const GROUP = "AWS::EC2::SecurityGroup";

const kube = newKube();
const PC = uniqueName("pc-awscc-moto");
let bed: Awaited<ReturnType<typeof awsccTestbed>>;
let r: Reconciler;
let defs: Map<string, ManagedKindDef>;

beforeAll(async () => {
  bed = await awsccTestbed(kube, PC, [QUEUE, PARAMETER, BUCKET, VPC, GATEWAY, MACHINE, GROUP], {
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
  it("SQS Queue: created, updated, drift in SQS put back, a create-only change refused, deleted — as SQS's own API reports", async () => {
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

    // Drift made in SQS itself (not through Cloud Control) is read back through SQS and put right.
    await sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: "5" } }));
    await settle(r, keyOf(defOf(QUEUE), name));
    expect((await attrs())?.VisibilityTimeout).toBe("90");

    // A create-only change is refused, naming the field; SQS keeps the queue as it was.
    await kube.patch(defOf(QUEUE), name, { spec: { forProvider: { fifoQueue: true } } });
    await settle(r, keyOf(defOf(QUEUE), name));
    const synced = (await getMr(kube, defOf(QUEUE), name))?.status?.conditions?.find(
      (c) => c.type === "Synced",
    );
    expect(synced).toMatchObject({ status: "False" });
    expect(synced?.message).toContain("fifoQueue");
    const fifo = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }));
    expect(fifo.Attributes?.FifoQueue).toBeUndefined();
    await kube.patch(defOf(QUEUE), name, { spec: { forProvider: { fifoQueue: null } } });

    await remove(QUEUE, name);
    await expect(sqs.send(new GetQueueUrlCommand({ QueueName: name }))).rejects.toMatchObject({
      name: expect.stringMatching(/QueueDoesNotExist|NonExistentQueue/),
    });
  });

  it("SSM Parameter: created, its value updated, overwritten or deleted in SSM put back, deleted — as SSM's own API reports", async () => {
    const ssm = new SSMClient(motoOptions());
    const name = uniqueName("cc-param");
    await create(PARAMETER, name, { type: "String", value: "one" });
    const value = async () => (await ssm.send(new GetParameterCommand({ Name: name }))).Parameter?.Value;
    expect(await value()).toBe("one");

    await kube.patch(defOf(PARAMETER), name, { spec: { forProvider: { value: "two" } } });
    await settle(r, keyOf(defOf(PARAMETER), name));
    expect(await value()).toBe("two");

    // Overwritten in SSM itself: read back through SSM as drift, and put back.
    await ssm.send(
      new PutParameterCommand({ Name: name, Value: "changed", Type: "String", Overwrite: true }),
    );
    await settle(r, keyOf(defOf(PARAMETER), name));
    expect(await value()).toBe("two");

    // Deleted in SSM behind driftless's back: seen as gone, made again from the spec.
    await ssm.send(new DeleteParameterCommand({ Name: name }));
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

  it("Step Functions StateMachine and EC2 SecurityGroup: the ids are the services' own, gone when deleted", async () => {
    const machine = uniqueName("cc-machine");
    const definition = JSON.stringify({ StartAt: "A", States: { A: { Type: "Pass", End: true } } });
    await create(MACHINE, machine, {
      stateMachineName: machine,
      roleArn: "arn:aws:iam::123456789012:role/sfn",
      definitionString: definition,
    });
    const machineArn = await externalNameOf(MACHINE, machine);
    const describe = () =>
      motoJson("states", "AWSStepFunctions.DescribeStateMachine", { stateMachineArn: machineArn }, "1.0");
    expect((await describe()).name).toBe(machine);

    const ec2 = new EC2Client(motoOptions());
    const group = uniqueName("cc-sg");
    await create(GROUP, group, { groupName: group, groupDescription: "driftless" });
    const groupId = await externalNameOf(GROUP, group);
    expect(groupId).toMatch(/^sg-/);
    const groups = await ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [groupId] }));
    expect(groups.SecurityGroups?.[0]?.GroupName).toBe(group);

    await remove(MACHINE, machine);
    await remove(GROUP, group);
    expect(await gone(describe)).toBe(true);
    await expect(ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [groupId] }))).rejects.toMatchObject({
      name: "InvalidGroup.NotFound",
    });
  });
});

/**
 * A type made through Cloud Control's wire, how the service's own API shows it (throws once it is gone),
 * and — where moto's CloudFormation applies an UpdateStack of that property — a change and its value after.
 * moto 5.2.1 accepts but does not apply the updates of DynamoDB Table, Logs LogGroup, EFS FileSystem and ECS
 * Cluster properties tried: those types are proven for create and delete only. Its DeleteStack leaves an
 * ECS Cluster ACTIVE, a Route53 HostedZone and an API Gateway RestApi in place: those are not moto-backed.
 */
interface WireCase {
  type: string;
  model: (n: string) => Record<string, unknown>;
  read: (n: string, id: string) => Promise<unknown>;
  before: (n: string) => unknown;
  update?: { patch: Array<{ op: string; path: string; value: unknown }>; after: unknown };
}

/** The VPC the Subnet case makes its subnets in (made with EC2's own API before the cases run). */
let subnetVpc = "";
let subnetOctet = 1;

const snsAttribute = (xml: string, key: string) =>
  new RegExp(`<key>${key}</key>\\s*<value>([^<]*)</value>`).exec(xml)?.[1];

const WIRE: WireCase[] = [
  {
    type: "AWS::DynamoDB::Table",
    model: (n) => ({
      TableName: n,
      BillingMode: "PAY_PER_REQUEST",
      KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
      AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" }],
    }),
    read: async (n) =>
      ((await motoJson("dynamodb", "DynamoDB_20120810.DescribeTable", { TableName: n }, "1.0")).Table as Json)
        .TableName,
    before: (n) => n,
  },
  {
    type: "AWS::Logs::LogGroup",
    model: (n) => ({ LogGroupName: n, RetentionInDays: 7 }),
    read: async (n) => {
      const out = await motoJson("logs", "Logs_20140328.DescribeLogGroups", { logGroupNamePrefix: n });
      const g = (out.logGroups as Array<{ logGroupName: string; retentionInDays?: number }>).find(
        (x) => x.logGroupName === n,
      );
      if (!g) throw new MotoApiError(404, "no such log group");
      return g.retentionInDays;
    },
    before: () => 7,
  },
  {
    type: "AWS::SNS::Topic",
    model: (n) => ({ TopicName: n, DisplayName: "one" }),
    read: async (_n, id) =>
      snsAttribute(
        await motoQuery("sns", "2010-03-31", { Action: "GetTopicAttributes", TopicArn: id }),
        "DisplayName",
      ),
    before: () => "one",
    update: { patch: [{ op: "replace", path: "/DisplayName", value: "two" }], after: "two" },
  },
  {
    type: "AWS::IAM::Role",
    model: (n) => ({
      RoleName: n,
      AssumeRolePolicyDocument: JSON.stringify({ Version: "2012-10-17", Statement: [] }),
      Description: "one",
    }),
    read: async (n) =>
      xmlValue(await motoQuery("iam", "2010-05-08", { Action: "GetRole", RoleName: n }), "Description"),
    before: () => "one",
    update: { patch: [{ op: "replace", path: "/Description", value: "two" }], after: "two" },
  },
  {
    type: "AWS::IAM::User",
    model: (n) => ({ UserName: n, Path: "/one/" }),
    read: async (n) =>
      xmlValue(await motoQuery("iam", "2010-05-08", { Action: "GetUser", UserName: n }), "UserName"),
    before: (n) => n,
  },
  {
    type: "AWS::ECR::Repository",
    model: (n) => ({ RepositoryName: n, ImageTagMutability: "MUTABLE" }),
    read: async (n) =>
      (
        (
          await motoJson("ecr", "AmazonEC2ContainerRegistry_V20150921.DescribeRepositories", {
            repositoryNames: [n],
          })
        ).repositories as Array<{ imageTagMutability: string }>
      )[0]?.imageTagMutability,
    before: () => "MUTABLE",
    update: {
      patch: [{ op: "replace", path: "/ImageTagMutability", value: "IMMUTABLE" }],
      after: "IMMUTABLE",
    },
  },
  {
    type: "AWS::Kinesis::Stream",
    model: (n) => ({ Name: n, ShardCount: 1, RetentionPeriodHours: 24 }),
    read: async (n) =>
      (
        (await motoJson("kinesis", "Kinesis_20131202.DescribeStreamSummary", { StreamName: n }))
          .StreamDescriptionSummary as { RetentionPeriodHours: number }
      ).RetentionPeriodHours,
    before: () => 24,
    update: { patch: [{ op: "replace", path: "/RetentionPeriodHours", value: 48 }], after: 48 },
  },
  {
    type: "AWS::EFS::FileSystem",
    model: () => ({ PerformanceMode: "generalPurpose", ThroughputMode: "bursting" }),
    read: async (_n, id) =>
      (
        JSON.parse(await motoGet("elasticfilesystem", `/2015-02-01/file-systems?FileSystemId=${id}`))
          .FileSystems as Array<{ ThroughputMode: string }>
      )[0]?.ThroughputMode,
    before: () => "bursting",
  },
  {
    type: "AWS::Events::EventBus",
    model: (n) => ({ Name: n }),
    read: async (n) => (await motoJson("events", "AWSEvents.DescribeEventBus", { Name: n }, "1.1")).Name,
    before: (n) => n,
  },
  {
    type: "AWS::CloudWatch::Dashboard",
    model: (n) => ({ DashboardName: n, DashboardBody: JSON.stringify({ widgets: [] }) }),
    read: async (n) =>
      xmlValue(
        await motoQuery("monitoring", "2010-08-01", { Action: "GetDashboard", DashboardName: n }),
        "DashboardName",
      ),
    before: (n) => n,
  },
  {
    type: "AWS::IAM::InstanceProfile",
    model: (n) => ({ InstanceProfileName: n, Roles: [], Path: "/" }),
    read: async (n) =>
      xmlValue(
        await motoQuery("iam", "2010-05-08", { Action: "GetInstanceProfile", InstanceProfileName: n }),
        "InstanceProfileName",
      ),
    before: (n) => n,
  },
  {
    type: "AWS::EC2::Subnet",
    model: () => ({ VpcId: subnetVpc, CidrBlock: `10.42.${subnetOctet++}.0/24` }),
    // EC2's own NotFound, as the other cases' readers report one.
    read: async (_n, id) => {
      const ec2 = new EC2Client(motoOptions());
      const out = await ec2.send(new DescribeSubnetsCommand({ SubnetIds: [id] })).catch((err: Error) => {
        if (err.name === "InvalidSubnetID.NotFound") throw new MotoApiError(404, err.message);
        throw err;
      });
      return out.Subnets?.[0]?.CidrBlock;
    },
    before: () => `10.42.${subnetOctet - 1}.0/24`,
  },
  {
    type: "AWS::SSM::Document",
    model: (n) => ({
      Name: n,
      DocumentType: "Command",
      DocumentFormat: "JSON",
      Content: JSON.stringify({ schemaVersion: "2.2", description: "one", mainSteps: [] }),
    }),
    read: async (n) =>
      ((await motoJson("ssm", "AmazonSSM.DescribeDocument", { Name: n })).Document as Json).Name,
    before: (n) => n,
  },
];

describe("Cloud Control's wire into moto's own state (types another file reconciles)", () => {
  beforeAll(async () => {
    const vpc = await new EC2Client(motoOptions()).send(new CreateVpcCommand({ CidrBlock: "10.42.0.0/16" }));
    subnetVpc = vpc.Vpc?.VpcId ?? "";
  });
  it.each(WIRE)(
    "$type: created (and updated where moto applies it) and deleted as the service's own API reports",
    async (c) => {
      const cc = bed.fake.client();
      const name = uniqueName("cc-wire");
      const desired = JSON.stringify(c.model(name));
      const created = await requestDone(
        cc,
        (await cc.send(new CreateResourceCommand({ TypeName: c.type, DesiredState: desired }))).ProgressEvent,
      );
      expect(created.StatusMessage ?? "").toBe("");
      expect(created).toMatchObject({ OperationStatus: "SUCCESS" });
      const id = created.Identifier ?? "";
      expect(await c.read(name, id)).toEqual(c.before(name));

      if (c.update) {
        const patch = JSON.stringify(c.update.patch);
        const updated = await requestDone(
          cc,
          (
            await cc.send(
              new UpdateResourceCommand({ TypeName: c.type, Identifier: id, PatchDocument: patch }),
            )
          ).ProgressEvent,
        );
        expect(updated).toMatchObject({ OperationStatus: "SUCCESS" });
        expect(await c.read(name, id)).toEqual(c.update.after);
      }

      const deleted = await requestDone(
        cc,
        (await cc.send(new DeleteResourceCommand({ TypeName: c.type, Identifier: id }))).ProgressEvent,
      );
      expect(deleted).toMatchObject({ OperationStatus: "SUCCESS" });
      expect(await gone(() => c.read(name, id))).toBe(true);
    },
  );
});
