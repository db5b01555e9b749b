import {
  type Subnet as CloudSubnet,
  CreateSubnetCommand,
  type CreateSubnetCommandOutput,
  DeleteSubnetCommand,
  DescribeSubnetsCommand,
  type DescribeSubnetsCommandOutput,
  ModifySubnetAttributeCommand,
} from "@aws-sdk/client-ec2";
import type { z } from "zod";
import { Subnet, type SubnetAtProvider, type SubnetForProvider } from "../../api/aws/ec2.ts";
import type { ExternalClient, ExternalObservation } from "../../api/external.ts";
import { InvalidSpecError } from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import {
  defined,
  type Ec2Kind,
  Ec2KindClient,
  ec2Provider,
  observedTags,
  tagSpecifications,
  tagsOf,
  updateTags,
} from "./ec2-common.ts";

type F = z.infer<typeof SubnetForProvider>;
type A = z.infer<typeof SubnetAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

/** The subnets as the EC2 template (ec2-common.ts) reads them. */
const SUBNETS: Ec2Kind<CloudSubnet, DescribeSubnetsCommandOutput, CreateSubnetCommandOutput> = {
  noun: "subnet",
  idPrefix: "subnet",
  idFilter: "subnet-id",
  notFound: ["InvalidSubnetID.NotFound"],
  describe: ({ ids, ...input }) =>
    new DescribeSubnetsCommand({ ...input, ...(ids ? { SubnetIds: ids } : {}) }),
  page: (out) => ({ items: out.Subnets, nextToken: out.NextToken }),
  idOf: (s) => s.SubnetId,
  create: { call: "CreateSubnet", idField: "SubnetId", idOf: (out) => out.Subnet?.SubnetId },
  remove: (id) => new DeleteSubnetCommand({ SubnetId: id }),
};

class SubnetClient
  extends Ec2KindClient<F, A, CloudSubnet, DescribeSubnetsCommandOutput, CreateSubnetCommandOutput>
  implements ExternalClient<F, A>
{
  /** What observe reports of a subnet as DescribeSubnets returned it. */
  protected observationOf(fp: F, subnetId: string, subnet: CloudSubnet): Observation {
    return {
      resourceExists: true,
      externalName: subnetId,
      observed: defined({
        region: this.region,
        vpcId: subnet.VpcId,
        cidrBlock: subnet.CidrBlock,
        availabilityZone: subnet.AvailabilityZone,
        mapPublicIpOnLaunch: subnet.MapPublicIpOnLaunch,
        tags: observedTags(fp.tags, tagsOf(subnet.Tags)),
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

  async create(mr: MR) {
    const fp = mr.spec.forProvider;
    const { vpcId, cidrBlock } = fp;
    if (!vpcId)
      throw new InvalidSpecError(
        "spec.forProvider.vpcId (or vpcIdRef, vpcIdSelector) is required to create a subnet",
      );
    if (!cidrBlock) throw new InvalidSpecError("spec.forProvider.cidrBlock is required to create a subnet");
    // mapPublicIpOnLaunch is set by update on the next reconcile, like any other drift.
    return this.createTagged(
      new CreateSubnetCommand({
        VpcId: vpcId,
        CidrBlock: cidrBlock,
        ...(fp.availabilityZone ? { AvailabilityZone: fp.availabilityZone } : {}),
        TagSpecifications: tagSpecifications("subnet", mr),
      }),
    );
  }

  async update(mr: MR, id: string, obs: ExternalObservation<F, A>) {
    const fp = mr.spec.forProvider;
    const observed = obs.observed ?? {};
    if (fp.mapPublicIpOnLaunch !== undefined && observed.mapPublicIpOnLaunch !== fp.mapPublicIpOnLaunch) {
      const value = fp.mapPublicIpOnLaunch;
      await this.ec2.send(
        new ModifySubnetAttributeCommand({ SubnetId: id, MapPublicIpOnLaunch: { Value: value } }),
      );
    }
    if (fp.tags !== undefined) await updateTags(this.ec2, id, fp.tags, observed.tags ?? {});
    return {};
  }
}

export const subnetProvider = ec2Provider<F, A>(
  Subnet,
  (ec2, region) => new SubnetClient(ec2, region, SUBNETS),
  {
    type: "subnet",
    create: "CreateSubnet",
    describe: ["DescribeSubnets"],
    manage: ["DeleteSubnet", "ModifySubnetAttribute"],
    inVpc: true,
  },
  "DescribeSubnets (subnet-id filter)",
  { idField: "subnetId", idPrefix: "subnet-" },
);
