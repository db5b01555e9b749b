import {
  type Subnet as CloudSubnet,
  CreateSubnetCommand,
  type CreateSubnetCommandOutput,
  DeleteSubnetCommand,
  DescribeSubnetsCommand,
  type DescribeSubnetsCommandOutput,
  ModifySubnetAttributeCommand,
  type TagSpecification,
} from "@aws-sdk/client-ec2";
import type { z } from "zod";
import { Subnet, type SubnetAtProvider, type SubnetForProvider } from "../../api/aws/ec2.ts";
import type { ExternalObservation } from "../../api/external.ts";
import { InvalidSpecError } from "../../api/external.ts";
import { defined } from "../../api/json.ts";
import type { ManagedResource } from "../../api/managed.ts";
import { type Ec2Kind, Ec2KindClient, ec2Provider } from "./ec2-common.ts";

type F = z.infer<typeof SubnetForProvider>;
type A = z.infer<typeof SubnetAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

/** The subnets as the EC2 template (ec2-common.ts) reads them. */
const SUBNETS: Ec2Kind<CloudSubnet, DescribeSubnetsCommandOutput, CreateSubnetCommandOutput> = {
  noun: "subnet",
  type: "subnet",
  idPrefix: "subnet",
  idFilter: "subnet-id",
  notFound: ["InvalidSubnetID.NotFound"],
  describe: ({ ids, ...input }) =>
    new DescribeSubnetsCommand({ ...input, ...(ids ? { SubnetIds: ids } : {}) }),
  page: (out) => ({ items: out.Subnets, nextToken: out.NextToken }),
  idOf: (s) => s.SubnetId,
  create: { call: "CreateSubnet", idField: "SubnetId", idOf: (out) => out.Subnet?.SubnetId },
  remove: (id) => new DeleteSubnetCommand({ SubnetId: id }),
  iam: { describe: ["DescribeSubnets"], manage: ["DeleteSubnet", "ModifySubnetAttribute"], inVpc: true },
  eventIdField: "subnetId",
  calls: "DescribeSubnets (subnet-id filter)",
};

class SubnetClient extends Ec2KindClient<
  F,
  A,
  CloudSubnet,
  DescribeSubnetsCommandOutput,
  CreateSubnetCommandOutput
> {
  /** What observe reports of a subnet as DescribeSubnets returned it. */
  protected observationOf(_fp: F, subnetId: string, subnet: CloudSubnet): Observation {
    return {
      resourceExists: true,
      externalName: subnetId,
      observed: defined({
        region: this.region,
        vpcId: subnet.VpcId,
        cidrBlock: subnet.CidrBlock,
        availabilityZone: subnet.AvailabilityZone,
        mapPublicIpOnLaunch: subnet.MapPublicIpOnLaunch,
      }),
      atProvider: defined({
        subnetId,
        arn: subnet.SubnetArn,
        state: subnet.State,
        availabilityZoneId: subnet.AvailabilityZoneId,
      }),
      availability: subnet.State === "available" ? "Available" : "Creating",
      connectionDetails: defined({
        id: subnetId,
        arn: subnet.SubnetArn,
        cidrBlock: subnet.CidrBlock,
        availabilityZone: subnet.AvailabilityZone,
      }) as Record<string, string>,
    };
  }

  protected createCommand(mr: MR, TagSpecifications: TagSpecification[]) {
    const fp = mr.spec.forProvider;
    const { vpcId, cidrBlock } = fp;
    if (!vpcId)
      throw new InvalidSpecError(
        "spec.forProvider.vpcId (or vpcIdRef, vpcIdSelector) is required to create a subnet",
      );
    if (!cidrBlock) throw new InvalidSpecError("spec.forProvider.cidrBlock is required to create a subnet");
    // mapPublicIpOnLaunch is set by update on the next reconcile, like any other drift.
    return new CreateSubnetCommand({
      VpcId: vpcId,
      CidrBlock: cidrBlock,
      ...(fp.availabilityZone ? { AvailabilityZone: fp.availabilityZone } : {}),
      TagSpecifications,
    });
  }

  protected async updateFields(mr: MR, id: string, obs: Observation) {
    const fp = mr.spec.forProvider;
    const observed = obs.observed ?? {};
    if (fp.mapPublicIpOnLaunch !== undefined && observed.mapPublicIpOnLaunch !== fp.mapPublicIpOnLaunch) {
      const value = fp.mapPublicIpOnLaunch;
      await this.ec2.send(
        new ModifySubnetAttributeCommand({ SubnetId: id, MapPublicIpOnLaunch: { Value: value } }),
      );
    }
  }
}

export const subnetProvider = ec2Provider(Subnet, SUBNETS, SubnetClient);
