// The path of one SQS message, measured instead of drawn: the files on the call stack when a hand-written
// AWS kind sends its first SDK call (the SQS Queue kind: GetQueueAttributes), from the SQS adapter down
// (docs/architecture.md draws it). The test
// stands where the Lambda handler (functions/aws/reconcile.ts) stands: it calls handleSqsBatch over the
// worker createWorker wires, as the handler does. V8's async stack follows awaits: a function that only
// passes a promise through (no await) leaves no frame, so the drawing in the doc is read from the code
// and this test checks that every file on the way is entered once, in that order.
import { relative } from "node:path";
import {
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  DescribeVpcsCommand,
  EC2Client,
} from "@aws-sdk/client-ec2";
import { DescribeDBInstancesCommand, DescribeDBSubnetGroupsCommand, RDSClient } from "@aws-sdk/client-rds";
import { HeadBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { STSClient } from "@aws-sdk/client-sts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SecurityGroup, Subnet, VPC } from "../../../shared/api/aws/ec2.ts";
import { DBInstance, DBSubnetGroup } from "../../../shared/api/aws/rds.ts";
import { Bucket } from "../../../shared/api/aws/s3.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import type { ManagedKindProvider } from "../../../shared/api/external.ts";
import { type ManagedKindDef, providerConfigType } from "../../../shared/api/managed.ts";
import { Annotations, MANAGED_FINALIZER } from "../../../shared/api/meta.ts";
import { securityGroupProvider } from "../../../shared/providers/aws/ec2-securitygroup.ts";
import { subnetProvider } from "../../../shared/providers/aws/ec2-subnet.ts";
import { vpcProvider } from "../../../shared/providers/aws/ec2-vpc.ts";
import { awsProviderConfigKinds } from "../../../shared/providers/aws/kinds.ts";
import { dbInstanceProvider } from "../../../shared/providers/aws/rds-dbinstance.ts";
import { dbSubnetGroupProvider } from "../../../shared/providers/aws/rds-dbsubnetgroup.ts";
import { bucketProvider } from "../../../shared/providers/aws/s3-bucket.ts";
import { queueProvider } from "../../../shared/providers/aws/sqs-queue.ts";
import { makeMessage } from "../../../shared/queue/message.ts";
import { noopLogger } from "../../../shared/reconciler/contract.ts";
import { handleSqsBatch } from "../../../shared/worker/sqs.ts";
import { createWorker } from "../../../shared/worker/worker.ts";
import { MemoryApiServer } from "../../support/memory-apiserver.ts";
import { sqsRecord } from "./factories.ts";

const root = relative(process.cwd(), ".") || ".";
const URL = "https://sqs.us-east-1.amazonaws.com/123456789012/path-q";
const ARN = "arn:aws:sqs:us-east-1:123456789012:path-q";

/** The project files on a stack, outermost first, each run of frames in one file counted once. */
function filesOf(stack: string): string[] {
  const files = [...stack.matchAll(/\(?((?:file:\/\/)?\/[^\s()]+?\.ts):\d+:\d+\)?/g)]
    .map((m) => relative(root, (m[1] as string).replace(/^file:\/\//, "")))
    .filter((f) => !f.startsWith("node_modules") && !f.startsWith(".."));
  return files.reverse().filter((f, n, all) => n === 0 || all[n - 1] !== f);
}

/** The stack of the SDK call: the spy's own frame (innermost, in this file) left out. */
const callerStack = (stack: string) => stack.split("\n").slice(2).join("\n");

afterEach(() => {
  vi.restoreAllMocks();
});

/** One hand-written AWS kind: its provider, a managed resource of it and the SDK call it reaches first. */
interface KindPath {
  /** The kind's file, when the file that calls the SDK is its family's template. */
  kind?: string;
  /** The file that calls the SDK. */
  file: string;
  provider: ManagedKindProvider;
  // biome-ignore lint/suspicious/noExplicitAny: definitions are heterogeneous
  definition: ManagedKindDef<any, any>;
  externalName: string;
  forProvider: Record<string, unknown>;
  atProvider?: Record<string, unknown>;
  // biome-ignore lint/suspicious/noExplicitAny: an SDK client class (its send is answered here)
  client: { prototype: { send: (...args: any[]) => unknown } };
  command: new (...args: never[]) => unknown;
  answer: unknown;
  /** Files between the engine and the kind: the per-region routing (perResource), for kinds that do not pick their regional client themselves. */
  routing: string[];
}
const ROUTED = ["shared/providers/aws/config.ts"];

const region = "us-east-1";
const KINDS: KindPath[] = [
  {
    file: "sqs-queue.ts",
    provider: queueProvider,
    definition: Queue,
    externalName: "path-q",
    forProvider: { region },
    atProvider: { url: URL, arn: ARN },
    client: SQSClient,
    command: GetQueueAttributesCommand,
    answer: { Attributes: { QueueArn: ARN, VisibilityTimeout: "30" } },
    routing: [],
  },
  {
    file: "s3-bucket.ts",
    provider: bucketProvider,
    definition: Bucket,
    externalName: "path-bucket",
    forProvider: { region },
    client: S3Client,
    command: HeadBucketCommand,
    answer: { BucketRegion: region },
    routing: ROUTED,
  },
  {
    kind: "ec2-vpc.ts",
    file: "ec2-common.ts",
    provider: vpcProvider,
    definition: VPC,
    externalName: "vpc-0123abcd",
    forProvider: { region, cidrBlock: "10.0.0.0/16" },
    client: EC2Client,
    command: DescribeVpcsCommand,
    answer: { Vpcs: [] },
    routing: ROUTED,
  },
  {
    kind: "ec2-subnet.ts",
    file: "ec2-common.ts",
    provider: subnetProvider,
    definition: Subnet,
    externalName: "subnet-0123abcd",
    forProvider: { region, vpcId: "vpc-0123abcd", cidrBlock: "10.0.1.0/24" },
    client: EC2Client,
    command: DescribeSubnetsCommand,
    answer: { Subnets: [] },
    routing: ROUTED,
  },
  {
    kind: "ec2-securitygroup.ts",
    file: "ec2-common.ts",
    provider: securityGroupProvider,
    definition: SecurityGroup,
    externalName: "sg-0123abcd",
    forProvider: { region, vpcId: "vpc-0123abcd", groupName: "path", description: "path" },
    client: EC2Client,
    command: DescribeSecurityGroupsCommand,
    answer: { SecurityGroups: [] },
    routing: ROUTED,
  },
  {
    kind: "rds-dbinstance.ts",
    file: "rds-common.ts",
    provider: dbInstanceProvider,
    definition: DBInstance,
    externalName: "path-db",
    forProvider: { region, engine: "postgres", dbInstanceClass: "db.t3.micro", allocatedStorage: 20 },
    client: RDSClient,
    command: DescribeDBInstancesCommand,
    answer: { DBInstances: [] },
    routing: ROUTED,
  },
  {
    kind: "rds-dbsubnetgroup.ts",
    file: "rds-common.ts",
    provider: dbSubnetGroupProvider,
    definition: DBSubnetGroup,
    externalName: "path-group",
    forProvider: { region, description: "path", subnetIds: ["subnet-1", "subnet-2"] },
    client: RDSClient,
    command: DescribeDBSubnetGroupsCommand,
    answer: { DBSubnetGroups: [] },
    routing: ROUTED,
  },
];

describe("the path of one SQS message", () => {
  it.each(KINDS)(
    "reaches the SDK from $file ($kind) with each file entered once, no back-and-forth",
    async (k) => {
      const api = new MemoryApiServer();
      const pc = providerConfigType("aws");
      api.seed(pc, {
        apiVersion: `${pc.group}/${pc.version}`,
        kind: "ProviderConfig",
        metadata: { name: "default" },
        spec: { credentials: { source: "InjectedIdentity" }, region },
      });
      api.seed(k.definition, {
        apiVersion: k.definition.apiVersion,
        kind: k.definition.kind,
        metadata: {
          name: "path-mr",
          uid: "0b6c5d2e-path",
          annotations: { [Annotations.externalName]: k.externalName },
          finalizers: [MANAGED_FINALIZER],
        },
        spec: { forProvider: k.forProvider },
        ...(k.atProvider ? { status: { atProvider: k.atProvider } } : {}),
      });
      const worker = createWorker({
        kube: api.kube(),
        kinds: [k.provider],
        providerConfigKinds: awsProviderConfigKinds,
        logger: noopLogger,
        rateLimit: false,
        events: { record: async () => {} },
      });
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 200;
      const stacks: string[] = [];
      // Where the client reaches (the home check's STS GetCallerIdentity), answered here too: no wire.
      vi.spyOn(STSClient.prototype, "send").mockImplementation(async () => ({
        Account: "123456789012",
        $metadata: {},
      }));
      // The SDK call itself: the kind's client's send, answered here (no wire), its caller's stack kept.
      vi.spyOn(k.client.prototype, "send").mockImplementation(async (command: unknown) => {
        if (command instanceof k.command) stacks.push(callerStack(new Error("first call").stack ?? ""));
        return { ...(k.answer as object), $metadata: {} };
      });
      try {
        await handleSqsBatch(
          {
            sqs: new SQSClient({ region }),
            reconcile: worker.reconcile,
            logger: noopLogger,
            queueUrl: URL,
          },
          {
            Records: [
              sqsRecord(
                makeMessage(
                  { apiVersion: k.definition.apiVersion, kind: k.definition.kind, name: "path-mr" },
                  "drift",
                ),
              ),
            ],
          },
        );
      } finally {
        Error.stackTraceLimit = limit;
      }
      expect(stacks.length).toBeGreaterThanOrEqual(1);
      const path = filesOf(stacks[0] as string);
      expect(path).toEqual([
        "test/unit/worker/path.test.ts",
        "shared/worker/sqs.ts",
        "shared/worker/core.ts",
        "shared/reconciler/reconciler.ts",
        ...k.routing,
        `shared/providers/aws/${k.file}`,
      ]);
      // The handler's place → 4 files (5 with the routing) → the SDK: 5 transitions (6).
      expect(path.length).toBe(5 + k.routing.length);
    },
  );
});
