import { z } from "zod";
import { optionalString } from "../fields.ts";
import { defineTaggedKind } from "../managed.ts";
import { referenceTo } from "../reference.ts";
import { AwsArn, AwsRegion, AwsTags } from "./fields.ts";

const Tags = AwsTags.describe(
  "Tags on the cloud resource. driftless also tags what it creates with driftless.dev/managed-resource-uid (its ownership tag, never shown here and never removed).",
);

const Cidrs = (what: string) => z.array(z.string().min(1)).optional().describe(what);

export const VPCForProvider = z.object({
  region: AwsRegion,
  cidrBlock: z
    .string()
    .min(1)
    .optional()
    .describe("The VPC's primary IPv4 CIDR block, e.g. 10.0.0.0/16. Required to create. Immutable."),
  instanceTenancy: z
    .enum(["default", "dedicated", "host"])
    .optional()
    .describe("Tenancy of instances launched into the VPC (AWS default: default). Immutable."),
  enableDnsSupport: z
    .boolean()
    .optional()
    .describe(
      "Whether the Amazon-provided DNS server resolves names in the VPC (AWS default: true). Managed only when set (one more read per reconcile).",
    ),
  enableDnsHostnames: z
    .boolean()
    .optional()
    .describe(
      "Whether instances with public IPs get public DNS hostnames (AWS default: false); needs enableDnsSupport. Managed only when set (one more read per reconcile).",
    ),
  tags: Tags.optional(),
});

export const VPCAtProvider = z.object({
  vpcId: optionalString("The VPC id (vpc-…), also its external name."),
  arn: AwsArn("VPC"),
  state: optionalString("The VPC state as EC2 reports it: pending or available."),
  ownerId: optionalString("The AWS account that owns the VPC."),
});

export const VPC = defineTaggedKind("tags", {
  group: "ec2.aws",
  kind: "VPC",
  plural: "vpcs",
  description:
    "An Amazon VPC. AWS chooses its id: the external name is set to the vpc-… id on create. The connection Secret holds id, arn and cidrBlock.",
  forProvider: VPCForProvider,
  atProvider: VPCAtProvider,
  immutable: ["region", "cidrBlock", "instanceTenancy"],
  connectionKeys: ["id", "arn", "cidrBlock"],
  externalName: "providerChosen",
  ownershipLookup: true,
});

const vpcReference = referenceTo("vpcId", VPC, { fills: "id" });

export const SubnetForProvider = z.object({
  region: AwsRegion,
  vpcId: z.string().min(1).optional().describe("The VPC the subnet is in. Required to create. Immutable."),
  ...vpcReference.fields,
  cidrBlock: z
    .string()
    .min(1)
    .optional()
    .describe("IPv4 CIDR block inside the VPC's, e.g. 10.0.1.0/24. Required to create. Immutable."),
  availabilityZone: z
    .string()
    .min(1)
    .optional()
    .describe("Availability zone, e.g. us-east-1a; AWS picks one when unset. Immutable."),
  mapPublicIpOnLaunch: z
    .boolean()
    .optional()
    .describe("Whether instances launched in the subnet get a public IPv4 address (AWS default: false)."),
  tags: Tags.optional(),
});

export const SubnetAtProvider = z.object({
  subnetId: optionalString("The subnet id (subnet-…), also its external name."),
  arn: AwsArn("subnet"),
  state: optionalString("The subnet state as EC2 reports it: pending or available."),
  availabilityZoneId: optionalString("The availability zone id, e.g. use1-az1."),
});

export const Subnet = defineTaggedKind("tags", {
  group: "ec2.aws",
  kind: "Subnet",
  description:
    "An Amazon VPC subnet. AWS chooses its id: the external name is set to the subnet-… id on create. The connection Secret holds id, arn, cidrBlock and availabilityZone.",
  forProvider: SubnetForProvider,
  atProvider: SubnetAtProvider,
  immutable: ["region", "vpcId", "cidrBlock", "availabilityZone"],
  connectionKeys: ["id", "arn", "cidrBlock", "availabilityZone"],
  externalName: "providerChosen",
  ownershipLookup: true,
  references: [vpcReference.def],
});

const ruleFields = {
  protocol: z
    .string()
    .min(1)
    .describe(
      'IP protocol: tcp, udp, icmp, icmpv6, a protocol number, or "-1" (all protocols; ports do not apply).',
    ),
  fromPort: z
    .number()
    .int()
    .min(-1)
    .max(65535)
    .optional()
    .describe("First port of the range (tcp, udp), or the ICMP type (-1: all). Required for tcp and udp."),
  toPort: z
    .number()
    .int()
    .min(-1)
    .max(65535)
    .optional()
    .describe("Last port of the range (tcp, udp), or the ICMP code (-1: all). Required for tcp and udp."),
  cidrBlocks: Cidrs("IPv4 CIDR blocks the rule allows."),
  ipv6CidrBlocks: Cidrs("IPv6 CIDR blocks the rule allows."),
  prefixListIds: Cidrs("Managed prefix list ids (pl-…) the rule allows."),
  description: z
    .string()
    .max(255)
    .optional()
    .describe("Description of every permission this rule makes; unset: whatever the cloud has is kept."),
};

export const IngressRule = z
  .object({
    ...ruleFields,
    sourceSecurityGroupIds: Cidrs("Security groups (sg-…) whose members may connect."),
  })
  .describe("Inbound traffic a security group allows.");

export const EgressRule = z
  .object({
    ...ruleFields,
    destinationSecurityGroupIds: Cidrs("Security groups (sg-…) members may connect to."),
  })
  .describe("Outbound traffic a security group allows.");

export const SecurityGroupForProvider = z.object({
  region: AwsRegion,
  groupName: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe("Name of the group, unique in its VPC; default the managed resource's name. Immutable."),
  description: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe('Description of the group; default "Managed by driftless". Immutable.'),
  vpcId: z.string().min(1).optional().describe("The VPC the group is in. Required to create. Immutable."),
  ...vpcReference.fields,
  ingress: z
    .array(IngressRule)
    .optional()
    .describe(
      "Inbound rules, compared as a set: any other inbound permission is revoked. Unset: inbound rules are not managed.",
    ),
  egress: z
    .array(EgressRule)
    .optional()
    .describe(
      "Outbound rules, compared as a set: any other outbound permission is revoked, including the allow-all rule AWS adds to a new group ([] removes it). Unset: outbound rules are not managed and AWS's default allow-all stays.",
    ),
  tags: Tags.optional(),
});

export const SecurityGroupAtProvider = z.object({
  groupId: optionalString("The security group id (sg-…), also its external name."),
  arn: AwsArn("security group"),
  ownerId: optionalString("The AWS account that owns the group."),
});

export const SecurityGroup = defineTaggedKind("tags", {
  group: "ec2.aws",
  kind: "SecurityGroup",
  description:
    "An Amazon VPC security group and its rules. AWS chooses its id: the external name is set to the sg-… id on create. The connection Secret holds id and arn.",
  forProvider: SecurityGroupForProvider,
  atProvider: SecurityGroupAtProvider,
  immutable: ["region", "groupName", "description", "vpcId"],
  connectionKeys: ["id", "arn"],
  externalName: "providerChosen",
  ownershipLookup: true,
  references: [vpcReference.def],
});
