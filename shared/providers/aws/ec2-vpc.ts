import {
  CreateVpcCommand,
  type CreateVpcCommandOutput,
  DeleteVpcCommand,
  DescribeVpcAttributeCommand,
  DescribeVpcsCommand,
  type DescribeVpcsCommandOutput,
  ModifyVpcAttributeCommand,
  type TagSpecification,
  type Vpc,
} from "@aws-sdk/client-ec2";
import type { z } from "zod";
import { VPC, type VPCAtProvider, type VPCForProvider } from "../../api/aws/ec2.ts";
import type { ExternalObservation } from "../../api/external.ts";
import { InvalidSpecError } from "../../api/external.ts";
import { defined } from "../../api/json.ts";
import type { ManagedResource } from "../../api/managed.ts";
import { type Ec2Kind, Ec2KindClient, ec2Arn, ec2Provider } from "./ec2-common.ts";

type F = z.infer<typeof VPCForProvider>;
type A = z.infer<typeof VPCAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

/** The VPCs as the EC2 template (ec2-common.ts) reads them. */
const VPCS: Ec2Kind<Vpc, DescribeVpcsCommandOutput, CreateVpcCommandOutput> = {
  noun: "VPC",
  type: "vpc",
  idPrefix: "vpc",
  idFilter: "vpc-id",
  notFound: ["InvalidVpcID.NotFound"],
  describe: ({ ids, ...input }) => new DescribeVpcsCommand({ ...input, ...(ids ? { VpcIds: ids } : {}) }),
  page: (out) => ({ items: out.Vpcs, nextToken: out.NextToken }),
  idOf: (v) => v.VpcId,
  create: { call: "CreateVpc", idField: "VpcId", idOf: (out) => out.Vpc?.VpcId },
  remove: (id) => new DeleteVpcCommand({ VpcId: id }),
  iam: { describe: ["DescribeVpcs", "DescribeVpcAttribute"], manage: ["DeleteVpc", "ModifyVpcAttribute"] },
  eventIdField: "vpcId",
  calls: "DescribeVpcs (vpc-id filter), plus DescribeVpcAttribute per VPC and DNS attribute its spec sets",
};

class VpcClient extends Ec2KindClient<F, A, Vpc, DescribeVpcsCommandOutput, CreateVpcCommandOutput> {
  async #attribute(id: string, attribute: "enableDnsSupport" | "enableDnsHostnames") {
    const out = await this.ec2.send(new DescribeVpcAttributeCommand({ VpcId: id, Attribute: attribute }));
    return attribute === "enableDnsSupport" ? out.EnableDnsSupport?.Value : out.EnableDnsHostnames?.Value;
  }

  /**
   * What observe reports of a VPC as DescribeVpcs returned it. DescribeVpcs does not return the DNS
   * attributes: each one the spec manages costs a DescribeVpcAttribute of this VPC.
   */
  protected async observationOf(fp: F, vpcId: string, vpc: Vpc): Promise<Observation> {
    const enableDnsSupport =
      fp.enableDnsSupport !== undefined ? await this.#attribute(vpcId, "enableDnsSupport") : undefined;
    const enableDnsHostnames =
      fp.enableDnsHostnames !== undefined ? await this.#attribute(vpcId, "enableDnsHostnames") : undefined;
    const arn = ec2Arn(this.region, vpc.OwnerId, "vpc", vpcId);
    return {
      resourceExists: true,
      externalName: vpcId,
      observed: defined({
        region: this.region,
        cidrBlock: vpc.CidrBlock,
        instanceTenancy: vpc.InstanceTenancy as F["instanceTenancy"],
        enableDnsSupport,
        enableDnsHostnames,
      }),
      atProvider: defined({ vpcId, arn, state: vpc.State, ownerId: vpc.OwnerId }),
      availability: vpc.State === "available" ? "Available" : "Creating",
      connectionDetails: defined({ id: vpcId, arn, cidrBlock: vpc.CidrBlock }) as Record<string, string>,
    };
  }

  protected createCommand(mr: MR, TagSpecifications: TagSpecification[]) {
    const fp = mr.spec.forProvider;
    if (!fp.cidrBlock) throw new InvalidSpecError("spec.forProvider.cidrBlock is required to create a VPC");
    // DNS attributes are set by update on the next reconcile, like any other drift.
    return new CreateVpcCommand({
      CidrBlock: fp.cidrBlock,
      ...(fp.instanceTenancy ? { InstanceTenancy: fp.instanceTenancy } : {}),
      TagSpecifications,
    });
  }

  protected async updateFields(mr: MR, id: string, obs: Observation) {
    const fp = mr.spec.forProvider;
    const observed = obs.observed ?? {};
    const modify = async (attr: "enableDnsSupport" | "enableDnsHostnames") => {
      const want = fp[attr];
      // An attribute EC2 did not report is set too: absent is drift, like any other difference.
      if (want === undefined || observed[attr] === want) return;
      const value = { Value: want };
      await this.ec2.send(
        new ModifyVpcAttributeCommand({
          VpcId: id,
          ...(attr === "enableDnsSupport" ? { EnableDnsSupport: value } : { EnableDnsHostnames: value }),
        }),
      );
    };
    // Hostnames need DNS support: turn support on first, hostnames off first.
    const order =
      fp.enableDnsSupport === false
        ? (["enableDnsHostnames", "enableDnsSupport"] as const)
        : (["enableDnsSupport", "enableDnsHostnames"] as const);
    for (const attr of order) await modify(attr);
  }
}

export const vpcProvider = ec2Provider(VPC, VPCS, VpcClient);
