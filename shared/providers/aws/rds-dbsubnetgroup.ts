import {
  type DBSubnetGroup as CloudGroup,
  CreateDBSubnetGroupCommand,
  DeleteDBSubnetGroupCommand,
  DescribeDBSubnetGroupsCommand,
  ModifyDBSubnetGroupCommand,
  paginateDescribeDBSubnetGroups,
  type RDSClient,
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
import type { ManagedResource } from "../../api/managed.ts";
import { awsErrorCode, regionOfArn } from "./config.ts";
import { DependencyViolationError, defined, observeEach, sameSet } from "./ec2-common.ts";
import { rdsProvider, readTags, tagsOnCreate, updateTags } from "./rds-common.ts";

type F = z.infer<typeof DBSubnetGroupForProvider>;
type A = z.infer<typeof DBSubnetGroupAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

export const DEFAULT_SUBNET_GROUP_DESCRIPTION = "Managed by driftless";

const isMissing = (err: unknown) =>
  ["DBSubnetGroupNotFoundFault", "DBSubnetGroupNotFound"].includes(awsErrorCode(err));
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

class DBSubnetGroupClient implements ExternalClient<F, A> {
  readonly #rds: RDSClient;
  readonly #region: string;
  constructor(client: RDSClient, region: string) {
    this.#rds = client;
    this.#region = region;
  }

  async #describe(name: string): Promise<CloudGroup | undefined> {
    try {
      const out = await this.#rds.send(new DescribeDBSubnetGroupsCommand({ DBSubnetGroupName: name }));
      return out.DBSubnetGroups?.[0];
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  /** Every subnet group of the region, page by page, by lower-case name (RDS keeps names in lower case). */
  async #listAll(): Promise<Map<string, CloudGroup>> {
    const found = new Map<string, CloudGroup>();
    for await (const out of paginateDescribeDBSubnetGroups({ client: this.#rds, pageSize: MAX_RECORDS }, {}))
      for (const g of out.DBSubnetGroups ?? [])
        if (g.DBSubnetGroupName) found.set(g.DBSubnetGroupName.toLowerCase(), g);
    return found;
  }

  /** Every subnet group of the region (`driftless import`). */
  async list(): Promise<ExternalListing[]> {
    return [...(await this.#listAll()).values()].flatMap((g) =>
      g.DBSubnetGroupName
        ? [{ externalName: g.DBSubnetGroupName, forProvider: { region: this.#region } }]
        : [],
    );
  }

  /**
   * What observe reports of a group as DescribeDBSubnetGroups returned it. Its tags are not in that
   * answer: they cost a ListTagsForResource, read only when the spec manages them.
   */
  async #observationOf(fp: F, group: CloudGroup): Promise<Observation> {
    const arn = group.DBSubnetGroupArn;
    const tags = fp.tags !== undefined && arn ? await readTags(this.#rds, arn) : undefined;
    const subnetIds = (group.Subnets ?? []).flatMap((s) => (s.SubnetIdentifier ? [s.SubnetIdentifier] : []));
    return {
      resourceExists: true,
      observed: defined({
        region: regionOfArn(arn) ?? this.#region,
        description: group.DBSubnetGroupDescription,
        subnetIds: subnetIdsAsSpecified(fp.subnetIds, subnetIds),
        tags,
      }),
      atProvider: defined({ arn, vpcId: group.VpcId, status: group.SubnetGroupStatus }),
      availability: "Available",
      connectionDetails: defined({ name: group.DBSubnetGroupName, arn }) as Record<string, string>,
    };
  }

  async observe(mr: MR, name: string | undefined): Promise<Observation> {
    if (!name) return { resourceExists: false };
    const group = await this.#describe(name);
    return group ? this.#observationOf(mr.spec.forProvider, group) : { resourceExists: false };
  }

  /** DescribeDBSubnetGroups of the whole region, then ListTagsForResource per group whose spec sets tags. */
  async observeMany(items: ReadonlyArray<ObserveManyItem<F, A>>): Promise<Array<Observation | Error>> {
    const groups = await this.#listAll();
    return observeEach(items, async ({ mr, externalName }) => {
      const group = groups.get(externalName.toLowerCase());
      return group ? this.#observationOf(mr.spec.forProvider, group) : { resourceExists: false };
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
    await this.#rds.send(
      new CreateDBSubnetGroupCommand({
        DBSubnetGroupName: name,
        DBSubnetGroupDescription: fp.description ?? DEFAULT_SUBNET_GROUP_DESCRIPTION,
        SubnetIds: subnetIds,
        ...tagsOnCreate(fp.tags),
      }),
    );
    return {};
  }

  async update(mr: MR, name: string, obs: ExternalObservation<F, A>) {
    const fp = mr.spec.forProvider;
    const observed = obs.observed ?? {};
    const descriptionDrifted = fp.description !== undefined && fp.description !== observed.description;
    const subnetsDrifted =
      fp.subnetIds !== undefined && JSON.stringify(fp.subnetIds) !== JSON.stringify(observed.subnetIds);
    if (descriptionDrifted || subnetsDrifted) {
      // ModifyDBSubnetGroup always takes the full subnet list.
      await this.#rds.send(
        new ModifyDBSubnetGroupCommand({
          DBSubnetGroupName: name,
          SubnetIds: fp.subnetIds ?? observed.subnetIds ?? [],
          ...(fp.description !== undefined ? { DBSubnetGroupDescription: fp.description } : {}),
        }),
      );
    }
    const arn = obs.atProvider?.arn;
    if (fp.tags !== undefined && arn) await updateTags(this.#rds, arn, fp.tags, observed.tags ?? {});
    return {};
  }

  async delete(_mr: MR, name: string) {
    try {
      await this.#rds.send(new DeleteDBSubnetGroupCommand({ DBSubnetGroupName: name }));
    } catch (err) {
      if (isMissing(err)) return;
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
  (rds, region) => new DBSubnetGroupClient(rds, region),
);
