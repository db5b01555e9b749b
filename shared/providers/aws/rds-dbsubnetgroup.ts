import {
  type DBSubnetGroup as CloudGroup,
  CreateDBSubnetGroupCommand,
  DeleteDBSubnetGroupCommand,
  DescribeDBSubnetGroupsCommand,
  type DescribeDBSubnetGroupsCommandOutput,
  ModifyDBSubnetGroupCommand,
  paginateDescribeDBSubnetGroups,
} from "@aws-sdk/client-rds";
import type { z } from "zod";
import {
  DBSubnetGroup,
  type DBSubnetGroupAtProvider,
  type DBSubnetGroupForProvider,
} from "../../api/aws/rds.ts";
import type {
  ExternalClient,
  ExternalListing,
  ExternalObservation,
  ObserveManyItem,
} from "../../api/external.ts";
import { InvalidSpecError } from "../../api/external.ts";
import { defined } from "../../api/json.ts";
import type { ManagedResource } from "../../api/managed.ts";
import { awsErrorCode, regionOfArn } from "./config.ts";
import { DependencyViolationError, observeEach, sameSet } from "./ec2-common.ts";
import { RdsKindClient, type RdsNamed, rdsProvider, readTags } from "./rds-common.ts";

type F = z.infer<typeof DBSubnetGroupForProvider>;
type A = z.infer<typeof DBSubnetGroupAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

export const DEFAULT_SUBNET_GROUP_DESCRIPTION = "Managed by driftless";

/** The subnet groups as the RDS template (rds-common.ts) describes them. */
const GROUPS: RdsNamed<CloudGroup, DescribeDBSubnetGroupsCommandOutput> = {
  describe: (name) => new DescribeDBSubnetGroupsCommand({ DBSubnetGroupName: name }),
  first: (out) => out.DBSubnetGroups?.[0],
  notFound: ["DBSubnetGroupNotFoundFault", "DBSubnetGroupNotFound"],
};
/** DescribeDBSubnetGroups' largest page (MaxRecords is 20–100). */
const MAX_RECORDS = 100;
/**
 * Groups one batched observe covers. DescribeDBSubnetGroups takes no filters, so every batch lists all
 * of the region's groups (50 by default quota, one page) whatever its size: large batches cost no more.
 */
const MAX_ITEMS = 1000;

/** Subnets are a set: the spec's own order is reported when the cloud has the same ones. */
const subnetIdsAsSpecified = (spec: string[] | undefined, cloud: string[]): string[] =>
  spec && sameSet(spec, cloud) ? spec : [...cloud].sort();

class DBSubnetGroupClient
  extends RdsKindClient<F, A, CloudGroup, DescribeDBSubnetGroupsCommandOutput>
  implements ExternalClient<F, A>
{
  /** Every subnet group of the region, page by page, by lower-case name (RDS keeps names in lower case). */
  async #listAll(): Promise<Map<string, CloudGroup>> {
    const found = new Map<string, CloudGroup>();
    for await (const out of paginateDescribeDBSubnetGroups({ client: this.rds, pageSize: MAX_RECORDS }, {}))
      for (const g of out.DBSubnetGroups ?? [])
        if (g.DBSubnetGroupName) found.set(g.DBSubnetGroupName.toLowerCase(), g);
    return found;
  }

  /** Every subnet group of the region (`driftless import`). */
  async list(): Promise<ExternalListing[]> {
    return [...(await this.#listAll()).values()].flatMap((g) =>
      g.DBSubnetGroupName
        ? [{ externalName: g.DBSubnetGroupName, forProvider: { region: this.region } }]
        : [],
    );
  }

  /**
   * What observe reports of a group as DescribeDBSubnetGroups returned it (or of none). Its tags are not in
   * that answer: they cost a ListTagsForResource, read only when the spec manages them.
   */
  protected async observed(mr: MR, group: CloudGroup | undefined): Promise<Observation> {
    if (!group) return { resourceExists: false };
    const fp = mr.spec.forProvider;
    const arn = group.DBSubnetGroupArn;
    const tags = fp.tags !== undefined && arn ? await readTags(this.rds, arn) : undefined;
    const subnetIds = (group.Subnets ?? []).flatMap((s) => (s.SubnetIdentifier ? [s.SubnetIdentifier] : []));
    return {
      resourceExists: true,
      observed: defined({
        region: regionOfArn(arn) ?? this.region,
        description: group.DBSubnetGroupDescription,
        subnetIds: subnetIdsAsSpecified(fp.subnetIds, subnetIds),
        tags,
      }),
      atProvider: defined({ arn, vpcId: group.VpcId, status: group.SubnetGroupStatus }),
      availability: "Available",
      connectionDetails: defined({ name: group.DBSubnetGroupName, arn }) as Record<string, string>,
    };
  }

  /** DescribeDBSubnetGroups of the whole region, then ListTagsForResource per group whose spec sets tags. */
  async observeMany(items: ReadonlyArray<ObserveManyItem<F, A>>): Promise<Array<Observation | Error>> {
    const groups = await this.#listAll();
    return observeEach(items, async ({ mr, externalName }) => {
      return this.observed(mr, groups.get(externalName.toLowerCase()));
    });
  }

  async create(mr: MR, name: string | undefined) {
    if (!name) throw new Error("a DB subnet group needs a name (crossplane.io/external-name)");
    const fp = mr.spec.forProvider;
    if (!fp.subnetIds || fp.subnetIds.length === 0) {
      throw new InvalidSpecError(
        "spec.forProvider.subnetIds (or subnetIdRefs, subnetIdSelector) is required to create a DB subnet group",
      );
    }
    const subnetIds = fp.subnetIds;
    await this.rds.send(
      new CreateDBSubnetGroupCommand({
        DBSubnetGroupName: name,
        DBSubnetGroupDescription: fp.description ?? DEFAULT_SUBNET_GROUP_DESCRIPTION,
        SubnetIds: subnetIds,
        ...this.tagsOnCreate(mr),
      }),
    );
    return {};
  }

  protected async updateFields(mr: MR, name: string, obs: Observation) {
    const fp = mr.spec.forProvider;
    const observed = obs.observed ?? {};
    const descriptionDrifted = fp.description !== undefined && fp.description !== observed.description;
    const subnetsDrifted =
      fp.subnetIds !== undefined && JSON.stringify(fp.subnetIds) !== JSON.stringify(observed.subnetIds);
    if (descriptionDrifted || subnetsDrifted) {
      // ModifyDBSubnetGroup always takes the full subnet list.
      await this.rds.send(
        new ModifyDBSubnetGroupCommand({
          DBSubnetGroupName: name,
          SubnetIds: fp.subnetIds ?? observed.subnetIds ?? [],
          ...(fp.description !== undefined ? { DBSubnetGroupDescription: fp.description } : {}),
        }),
      );
    }
    return {};
  }

  async delete(_mr: MR, name: string) {
    try {
      await this.rds.send(new DeleteDBSubnetGroupCommand({ DBSubnetGroupName: name }));
    } catch (err) {
      if (this.isMissing(err)) return;
      // RDS refuses while a DB instance still uses the group: it goes once the instance is deleted.
      if (awsErrorCode(err) === "InvalidDBSubnetGroupStateFault") {
        throw new DependencyViolationError(
          `DB subnet group ${name} is still in use, retrying until its DB instances are deleted (${awsErrorCode(err)}: ${(err as Error).message})`,
          { cause: err },
        );
      }
      throw err;
    }
  }
}

export const dbSubnetGroupProvider = rdsProvider(
  DBSubnetGroup,
  {
    events: ["CreateDBSubnetGroup", "DeleteDBSubnetGroup", "ModifyDBSubnetGroup"],
    nameParameter: "dBSubnetGroupName",
    arnType: "subgrp",
    actions: [
      "rds:CreateDBSubnetGroup",
      "rds:DeleteDBSubnetGroup",
      "rds:DescribeDBSubnetGroups",
      "rds:ModifyDBSubnetGroup",
    ],
    // Listing names no group: see the statement's comment with the DB instances'.
    listAction: "rds:DescribeDBSubnetGroups",
    observeMany: {
      calls: `DescribeDBSubnetGroups of the whole region (no filters; MaxRecords ${MAX_RECORDS}), plus ListTagsForResource per group whose spec sets tags`,
      maxItems: MAX_ITEMS,
    },
  },
  (rds, region) => new DBSubnetGroupClient(rds, region, GROUPS),
);
