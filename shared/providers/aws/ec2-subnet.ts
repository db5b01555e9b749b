import {
  type Subnet as CloudSubnet,
  CreateSubnetCommand,
  DeleteSubnetCommand,
  DescribeSubnetsCommand,
  type EC2Client,
  ModifySubnetAttributeCommand,
} from "@aws-sdk/client-ec2";
import type { z } from "zod";
import { Subnet, type SubnetAtProvider, type SubnetForProvider } from "../../api/aws/ec2.ts";
import type { ExternalClient, ExternalObservation, ObserveManyItem } from "../../api/external.ts";
import { InvalidSpecError } from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import {
  codeIs,
  defined,
  dependencyViolation,
  ec2IdPattern,
  ec2Provider,
  observedTags,
  observeManyByIds,
  ownedBy,
  singleOwned,
  tagSpecifications,
  tagsOf,
  updateTags,
} from "./ec2-common.ts";

type F = z.infer<typeof SubnetForProvider>;
type A = z.infer<typeof SubnetAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

const SUBNET_ID = ec2IdPattern("subnet");
const isSubnetId = (name: string) => SUBNET_ID.test(name);
const isMissing = (err: unknown) => codeIs(err, "InvalidSubnetID.NotFound");

class SubnetClient implements ExternalClient<F, A> {
  readonly #ec2: EC2Client;
  readonly #region: string;
  constructor(ec2: EC2Client, region: string) {
    this.#ec2 = ec2;
    this.#region = region;
  }

  /** By id once it is known; before that, by the ownership tag (a create whose id was never recorded). */
  async #find(mr: MR, id: string | undefined): Promise<CloudSubnet | undefined> {
    if (id) {
      try {
        return (await this.#ec2.send(new DescribeSubnetsCommand({ SubnetIds: [id] }))).Subnets?.[0];
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw err;
      }
    }
    if (!mr.metadata.uid) return undefined;
    const found = (await this.#ec2.send(new DescribeSubnetsCommand({ Filters: ownedBy(mr) }))).Subnets ?? [];
    return singleOwned(found, "subnet", (s) => s.SubnetId);
  }

  /** What observe reports of a subnet as DescribeSubnets returned it. */
  #observationOf(fp: F, subnetId: string, subnet: CloudSubnet): Observation {
    return {
      resourceExists: true,
      externalName: subnetId,
      observed: defined({
        region: this.#region,
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

  async observe(mr: MR, id: string | undefined): Promise<Observation> {
    const subnet = await this.#find(mr, id);
    const subnetId = subnet?.SubnetId;
    if (!subnet || !subnetId) return { resourceExists: false };
    return this.#observationOf(mr.spec.forProvider, subnetId, subnet);
  }

  /** DescribeSubnets with a subnet-id filter; a name that is no subnet id is observed alone. */
  async observeMany(items: ReadonlyArray<ObserveManyItem<F, A>>): Promise<Array<Observation | Error>> {
    return observeManyByIds(items, {
      isId: isSubnetId,
      filter: "subnet-id",
      describe: async (input) => {
        const out = await this.#ec2.send(new DescribeSubnetsCommand(input));
        return { items: out.Subnets, nextToken: out.NextToken };
      },
      idOf: (s) => s.SubnetId,
      observation: async (mr, id, subnet) => this.#observationOf(mr.spec.forProvider, id, subnet),
      observeOne: (mr, name) => this.observe(mr, name),
    });
  }

  async create(mr: MR) {
    const fp = mr.spec.forProvider;
    const { vpcId, cidrBlock } = fp;
    if (!vpcId)
      throw new InvalidSpecError(
        "spec.forProvider.vpcId (or vpcIdRef, vpcIdSelector) is required to create a subnet",
      );
    if (!cidrBlock) throw new InvalidSpecError("spec.forProvider.cidrBlock is required to create a subnet");
    // Tagged in the same call: if the id is lost (crash before it is recorded), observe finds it by tag.
    const out = await this.#ec2.send(
      new CreateSubnetCommand({
        VpcId: vpcId,
        CidrBlock: cidrBlock,
        ...(fp.availabilityZone ? { AvailabilityZone: fp.availabilityZone } : {}),
        TagSpecifications: tagSpecifications("subnet", mr),
      }),
    );
    const subnetId = out.Subnet?.SubnetId;
    if (!subnetId) throw new Error("CreateSubnet returned no SubnetId");
    // mapPublicIpOnLaunch is set by update on the next reconcile, like any other drift.
    return { externalName: subnetId };
  }

  async update(mr: MR, id: string, obs: ExternalObservation<F, A>) {
    const fp = mr.spec.forProvider;
    const observed = obs.observed ?? {};
    if (fp.mapPublicIpOnLaunch !== undefined && observed.mapPublicIpOnLaunch !== fp.mapPublicIpOnLaunch) {
      const value = fp.mapPublicIpOnLaunch;
      await this.#ec2.send(
        new ModifySubnetAttributeCommand({ SubnetId: id, MapPublicIpOnLaunch: { Value: value } }),
      );
    }
    if (fp.tags !== undefined) await updateTags(this.#ec2, id, fp.tags, observed.tags ?? {});
    return {};
  }

  async delete(_mr: MR, id: string) {
    try {
      await this.#ec2.send(new DeleteSubnetCommand({ SubnetId: id }));
    } catch (err) {
      if (isMissing(err)) return;
      if (codeIs(err, "DependencyViolation")) throw dependencyViolation(`subnet ${id}`, err);
      throw err;
    }
  }
}

export const subnetProvider = ec2Provider<F, A>(
  Subnet,
  (ec2, region) => new SubnetClient(ec2, region),
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
