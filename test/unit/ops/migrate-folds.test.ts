// Companion kinds folded into the resource they configure, and identity fields carried, on the Upjet
// providers' own examples (test/fixtures/crossplane/v1/, sources in its README).
import { describe, expect, it } from "vitest";
import { migrate } from "../../../shared/ops/migrate.ts";
import { exported, find, fixture, issuesOf, upjet } from "./migrate-helpers.ts";

describe("migrate: companion kinds folded into their resource", () => {
  it("folds SecurityGroupIngressRule and SecurityGroupEgressRule into the group's ingress and egress", () => {
    // Prepare: the examples as exported, with the ids AWS chose
    const docs = exported(
      [
        ...fixture("v1/aws/ec2-securitygroupingressrule.yaml"),
        // The egress example holds the same VPC and group: its rule is the part that differs.
        ...fixture("v1/aws/ec2-securitygroupegressrule.yaml").filter((d) => String(d.kind).endsWith("Rule")),
      ],
      { "VPC/sample-vpc": "vpc-0a1b2c", "SecurityGroup/example": "sg-0a1b2c" },
    );

    // Act
    const r = migrate(docs);

    // Assess: one group with both rules, each Crossplane rule object reported folded and not written
    expect(r.objects.map((o) => o.object.kind)).toEqual(["VPC", "SecurityGroup"]);
    expect(find(r, "SecurityGroup", "example")?.spec.forProvider).toEqual({
      region: "us-west-1",
      vpcIdSelector: { matchLabels: { "testing.upbound.io/example-name": "example" } },
      ingress: [{ protocol: "tcp", fromPort: 80, toPort: 8080, cidrBlocks: ["10.0.0.0/8"] }],
      egress: [{ protocol: "tcp", fromPort: 80, toPort: 8080, cidrBlocks: ["10.0.0.0/8"] }],
    });
    expect(issuesOf(r, "note")).toEqual(
      expect.arrayContaining([
        "SecurityGroupIngressRule.ec2.aws.upbound.io/example: folded into SecurityGroup example; delete this Crossplane object with deletionPolicy: Orphan",
        "SecurityGroupEgressRule.ec2.aws.upbound.io/example: folded into SecurityGroup example; delete this Crossplane object with deletionPolicy: Orphan",
      ]),
    );
    // driftless compares a group's rules as a set: the report says what widening the policies would revoke
    expect(issuesOf(r, "warning")).toEqual([
      expect.stringMatching(/^SecurityGroupIngressRule.*ingress is compared as a set/),
      expect.stringMatching(/^SecurityGroupEgressRule.*egress is compared as a set/),
    ]);
    expect(issuesOf(r, "error")).toEqual([]);
  });

  it("folds a SecurityGroupRule with self: true as the group's own id", () => {
    const docs = exported(fixture("v1/aws/ec2-securitygrouprule-self-true.yaml"), {
      "VPC/sample-vpc": "vpc-0a1b2c",
      "SecurityGroup/test-vpc": "sg-0d4e5f",
    });
    const r = migrate(docs);
    expect(find(r, "SecurityGroup", "test-vpc")?.spec.forProvider).toMatchObject({
      ingress: [{ protocol: "tcp", fromPort: 22, toPort: 22, sourceSecurityGroupIds: ["sg-0d4e5f"] }],
    });
    expect(issuesOf(r, "dropped")).toEqual([]);
  });

  it("refuses a rule whose group is not migrated (no id), so neither is written", () => {
    const r = migrate(fixture("v1/aws/ec2-securitygroupingressrule.yaml"));
    expect(r.objects).toEqual([]);
    expect(r.refused).toEqual([
      "VPC.ec2.aws.upbound.io/sample-vpc",
      "SecurityGroup.ec2.aws.upbound.io/example",
      "SecurityGroupIngressRule.ec2.aws.upbound.io/example",
    ]);
  });

  it("folds a QueueRedrivePolicy into the Queue it selects, as an object", () => {
    const docs = fixture("v1/aws/sqs-queueredrivepolicy.yaml");
    // The example's value is a Terraform expression; an exported object holds the JSON the cloud has.
    const policy = docs.find((d) => d.kind === "QueueRedrivePolicy")?.spec as { forProvider: object };
    policy.forProvider = {
      ...policy.forProvider,
      redrivePolicy:
        '{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:153891904029:examplequeue-ddl","maxReceiveCount":4}',
    };
    const r = migrate(docs);
    expect(find(r, "Queue", "qrpexample")?.spec.forProvider).toEqual({
      region: "us-east-1",
      redrivePolicy: {
        deadLetterTargetArn: "arn:aws:sqs:us-east-1:153891904029:examplequeue-ddl",
        maxReceiveCount: 4,
      },
    });
    expect(r.objects.map((o) => o.object.metadata.name)).toEqual(["ddl", "qrpexample"]);
    expect(issuesOf(r, "error")).toEqual([]);
  });

  it("folds the example QueuePolicy into the Queue it selects, the policy as an object", () => {
    const r = migrate(fixture("v1/aws/sqs-queuepolicy.yaml"));
    expect(find(r, "Queue", "queue-policy")?.spec.forProvider).toEqual({
      region: "us-west-1",
      policy: {
        Version: "2012-10-17",
        Statement: [
          {
            Sid: "example",
            Effect: "Allow",
            Principal: { Service: "s3.amazonaws.com" },
            Action: "sqs:SendMessage",
            Resource: "arn:aws:sqs:us-west-1:*:queue-policy",
          },
        ],
      },
    });
    expect(r.objects.map((o) => o.object.metadata.name)).toEqual(["queue-policy"]);
    expect(issuesOf(r, "error")).toEqual([]);
    expect(issuesOf(r, "dropped")).toEqual([]);
  });

  it("folds a QueueRedriveAllowPolicy by the queue's URL, and reports one the Queue's schema refuses", () => {
    const allow = (name: string, redriveAllowPolicy: string) =>
      upjet("sqs.aws.upbound.io/v1beta1", "QueueRedriveAllowPolicy", `${name}-allow`, {
        queueUrl: `https://sqs.eu-west-1.amazonaws.com/123456789012/${name}`,
        redriveAllowPolicy,
      });
    const r = migrate([
      upjet("sqs.aws.upbound.io/v1beta1", "Queue", "dlq", { region: "eu-west-1" }, "dlq"),
      upjet("sqs.aws.upbound.io/v1beta1", "Queue", "dlq2", { region: "eu-west-1" }, "dlq2"),
      allow(
        "dlq",
        '{"redrivePermission":"byQueue","sourceQueueArns":["arn:aws:sqs:eu-west-1:123456789012:orders"]}',
      ),
      allow("dlq2", '{"redrivePermission":"sometimes"}'),
    ]);
    expect(find(r, "Queue", "dlq")?.spec.forProvider).toEqual({
      region: "eu-west-1",
      redriveAllowPolicy: {
        redrivePermission: "byQueue",
        sourceQueueArns: ["arn:aws:sqs:eu-west-1:123456789012:orders"],
      },
    });
    expect(find(r, "Queue", "dlq2")?.spec.forProvider).toEqual({ region: "eu-west-1" });
    expect(issuesOf(r, "dropped")).toEqual([
      expect.stringMatching(
        /^QueueRedriveAllowPolicy\.sqs\.aws\.upbound\.io\/dlq2-allow: forProvider\.redriveAllowPolicy\.redrivePermission: /,
      ),
    ]);
  });

  it("finds the Queue of a QueueRedrivePolicy by its URL", () => {
    const r = migrate([
      upjet("sqs.aws.upbound.io/v1beta1", "Queue", "orders", { region: "eu-west-1" }, "orders"),
      upjet("sqs.aws.upbound.io/v1beta1", "QueueRedrivePolicy", "orders-redrive", {
        region: "eu-west-1",
        queueUrl: "https://sqs.eu-west-1.amazonaws.com/123456789012/orders",
        redrivePolicy:
          '{"deadLetterTargetArn":"arn:aws:sqs:eu-west-1:123456789012:orders-dlq","maxReceiveCount":5}',
      }),
    ]);
    expect(find(r, "Queue", "orders")?.spec.forProvider).toMatchObject({
      redrivePolicy: {
        deadLetterTargetArn: "arn:aws:sqs:eu-west-1:123456789012:orders-dlq",
        maxReceiveCount: 5,
      },
    });
  });
});

/** An exported Upjet Container `logs` with this forProvider. */
const container = (forProvider: Record<string, unknown>) =>
  upjet("storage.azure.upbound.io/v1beta1", "Container", "logs", forProvider, "logs");

describe("migrate: identity fields", () => {
  it("takes a Container's storage account from the Account its storageAccountIdSelector selects", () => {
    const r = migrate(fixture("v1/azure/web-functionappflexconsumption.yaml"));
    expect(find(r, "Container", "functionappflexnamec12a")?.spec.forProvider).toEqual({
      storageAccountName: "functionappflexnamec12a",
      resourceGroupNameSelector: { matchLabels: { "testing.upbound.io/example-name": "example" } },
      publicAccess: "None",
    });
    expect(issuesOf(r, "dropped")).toEqual([]);
  });

  it("splits a Container's storageAccountId into account name and resource group", () => {
    const r = migrate([
      container({
        storageAccountId:
          "/subscriptions/0000/resourceGroups/data-rg/providers/Microsoft.Storage/storageAccounts/datalake01",
      }),
    ]);
    expect(find(r, "Container", "logs")?.spec.forProvider).toEqual({
      storageAccountName: "datalake01",
      resourceGroupName: "data-rg",
    });
    expect(issuesOf(r, "dropped")).toEqual([]);
  });

  it("reports a storage account reference it cannot resolve in the input", () => {
    const r = migrate([container({ storageAccountNameRef: { name: "elsewhere" } })]);
    expect(issuesOf(r, "dropped")).toEqual([
      expect.stringMatching(
        /^Container.*forProvider\.storageAccountNameRef names no storage Account in the input/,
      ),
    ]);
  });
});

describe("migrate: fields the core kinds keep", () => {
  it("carries an RDS instance's encryption, KMS key and parameter group", () => {
    const key = "arn:aws:kms:us-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";
    const r = migrate([
      upjet(
        "rds.aws.upbound.io/v1beta1",
        "Instance",
        "orders",
        {
          region: "us-west-1",
          engine: "postgres",
          instanceClass: "db.t3.micro",
          storageEncrypted: true,
          kmsKeyId: key,
          parameterGroupName: "orders-pg15",
        },
        "orders",
      ),
    ]);
    expect(find(r, "DBInstance", "orders")?.spec.forProvider).toEqual({
      region: "us-west-1",
      engine: "postgres",
      dbInstanceClass: "db.t3.micro",
      storageEncrypted: true,
      kmsKeyId: key,
      dbParameterGroupName: "orders-pg15",
    });
    expect(issuesOf(r, "dropped")).toEqual([]);
  });

  it("carries a VirtualNetwork's DNS servers, in order", () => {
    const r = migrate([
      upjet(
        "network.azure.upbound.io/v1beta1",
        "VirtualNetwork",
        "hub",
        {
          location: "West Europe",
          resourceGroupName: "net-rg",
          addressSpace: ["10.0.0.0/16"],
          dnsServers: ["10.0.0.5", "10.0.0.4"],
        },
        "hub",
      ),
    ]);
    expect(find(r, "VirtualNetwork", "hub")?.spec.forProvider).toMatchObject({
      dnsServers: ["10.0.0.5", "10.0.0.4"],
    });
    expect(issuesOf(r, "dropped")).toEqual([]);
  });
});
