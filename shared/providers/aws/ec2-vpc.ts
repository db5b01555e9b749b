import {
  CreateVpcCommand,
  DeleteVpcCommand,
  DescribeVpcAttributeCommand,
  DescribeVpcsCommand,
  type EC2Client,
  ModifyVpcAttributeCommand,
  type Vpc,
} from "@aws-sdk/client-ec2";
import type { z } from "zod";
import { VPC, type VPCAtProvider, type VPCForProvider } from "../../api/aws/ec2.ts";
import type { ExternalClient, ExternalObservation, ObserveManyItem } from "../../api/external.ts";
import { InvalidSpecError } from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import {
  codeIs,
  defined,
  dependencyViolation,
  ec2Arn,
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

type F = z.infer<typeof VPCForProvider>;
type A = z.infer<typeof VPCAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

const VPC_ID = ec2IdPattern("vpc");
const isVpcId = (name: string) => VPC_ID.test(name);
const isMissing = (err: unknown) => codeIs(err, "InvalidVpcID.NotFound");

class VpcClient implements ExternalClient<F, A> {
  readonly #ec2: EC2Client;
  readonly #region: string;
  constructor(ec2: EC2Client, region: string) {
    this.#ec2 = ec2;
    this.#region = region;
  }

  /** By id once it is known; before that, by the ownership tag (a create whose id was never recorded). */
  async #find(mr: MR, id: string | undefined): Promise<Vpc | undefined> {
    if (id) {
      try {
        return (await this.#ec2.send(new DescribeVpcsCommand({ VpcIds: [id] }))).Vpcs?.[0];
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw err;
      }
    }
    if (!mr.metadata.uid) return undefined;
    const found = (await this.#ec2.send(new DescribeVpcsCommand({ Filters: ownedBy(mr) }))).Vpcs ?? [];
    return singleOwned(found, "VPC", (v) => v.VpcId);
  }

  async #attribute(id: string, attribute: "enableDnsSupport" | "enableDnsHostnames") {
    const out = await this.#ec2.send(new DescribeVpcAttributeCommand({ VpcId: id, Attribute: attribute }));
    return attribute === "enableDnsSupport" ? out.EnableDnsSupport?.Value : out.EnableDnsHostnames?.Value;
  }

  /**
   * What observe reports of a VPC as DescribeVpcs returned it. DescribeVpcs does not return the DNS
   * attributes: each one the spec manages costs a DescribeVpcAttribute of this VPC.
   */
  async #observationOf(fp: F, vpcId: string, vpc: Vpc): Promise<Observation> {
    const enableDnsSupport =
      fp.enableDnsSupport !== undefined ? await this.#attribute(vpcId, "enableDnsSupport") : undefined;
    const enableDnsHostnames =
      fp.enableDnsHostnames !== undefined ? await this.#attribute(vpcId, "enableDnsHostnames") : undefined;
    const arn = ec2Arn(this.#region, vpc.OwnerId, "vpc", vpcId);
    return {
      resourceExists: true,
      externalName: vpcId,
      observed: defined({
        region: this.#region,
        cidrBlock: vpc.CidrBlock,
        instanceTenancy: vpc.InstanceTenancy as F["instanceTenancy"],
        enableDnsSupport,
        enableDnsHostnames,
        tags: observedTags(fp.tags, tagsOf(vpc.Tags)),
      }),
      atProvider: defined({ vpcId, arn, state: vpc.State, ownerId: vpc.OwnerId }),
      availability: vpc.State === "available" ? "Available" : "Creating",
      connectionDetails: defined({ id: vpcId, arn, cidrBlock: vpc.CidrBlock }) as Record<string, string>,
    };
  }

  async observe(mr: MR, id: string | undefined): Promise<Observation> {
    const vpc = await this.#find(mr, id);
    const vpcId = vpc?.VpcId;
    if (!vpc || !vpcId) return { resourceExists: false };
    return this.#observationOf(mr.spec.forProvider, vpcId, vpc);
  }

  /**
   * DescribeVpcs with a vpc-id filter, then DescribeVpcAttribute per DNS attribute a spec manages. A name
   * that is no VPC id is observed alone, so DescribeVpcs says what is wrong with it.
   */
  async observeMany(items: ReadonlyArray<ObserveManyItem<F, A>>): Promise<Array<Observation | Error>> {
    return observeManyByIds(items, {
      isId: isVpcId,
      filter: "vpc-id",
      describe: async (input) => {
        const out = await this.#ec2.send(new DescribeVpcsCommand(input));
        return { items: out.Vpcs, nextToken: out.NextToken };
      },
      idOf: (v) => v.VpcId,
      // The DNS attributes the spec manages are read per VPC, as observe does.
      observation: (mr, id, vpc) => this.#observationOf(mr.spec.forProvider, id, vpc),
      observeOne: (mr, name) => this.observe(mr, name),
    });
  }

  async create(mr: MR) {
    const fp = mr.spec.forProvider;
    if (!fp.cidrBlock) throw new InvalidSpecError("spec.forProvider.cidrBlock is required to create a VPC");
    const cidrBlock = fp.cidrBlock;
    // Tagged in the same call: if the id is lost (crash before it is recorded), observe finds it by tag.
    const out = await this.#ec2.send(
      new CreateVpcCommand({
        CidrBlock: cidrBlock,
        ...(fp.instanceTenancy ? { InstanceTenancy: fp.instanceTenancy } : {}),
        TagSpecifications: tagSpecifications("vpc", mr),
      }),
    );
    const vpcId = out.Vpc?.VpcId;
    if (!vpcId) throw new Error("CreateVpc returned no VpcId");
    // DNS attributes are set by update on the next reconcile, like any other drift.
    return { externalName: vpcId };
  }

  async update(mr: MR, id: string, obs: ExternalObservation<F, A>) {
    const fp = mr.spec.forProvider;
    const observed = obs.observed ?? {};
    const modify = async (attr: "enableDnsSupport" | "enableDnsHostnames") => {
      const want = fp[attr];
      // An attribute EC2 did not report is set too: absent is drift, like any other difference.
      if (want === undefined || observed[attr] === want) return;
      const value = { Value: want };
      await this.#ec2.send(
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
    if (fp.tags !== undefined) await updateTags(this.#ec2, id, fp.tags, observed.tags ?? {});
    return {};
  }

  async delete(_mr: MR, id: string) {
    try {
      await this.#ec2.send(new DeleteVpcCommand({ VpcId: id }));
    } catch (err) {
      if (isMissing(err)) return;
      if (codeIs(err, "DependencyViolation")) throw dependencyViolation(`VPC ${id}`, err);
      throw err;
    }
  }
}

export const vpcProvider = ec2Provider<F, A>(
  VPC,
  (ec2, region) => new VpcClient(ec2, region),
  {
    type: "vpc",
    create: "CreateVpc",
    describe: ["DescribeVpcs", "DescribeVpcAttribute"],
    manage: ["DeleteVpc", "ModifyVpcAttribute"],
  },
  "DescribeVpcs (vpc-id filter), plus DescribeVpcAttribute per VPC and DNS attribute its spec sets",
  { idField: "vpcId", idPrefix: "vpc-" },
);
