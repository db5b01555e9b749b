// The RDS family's template (DBInstance, DBSubnetGroup): one SDK client cache, the client that describes a
// resource by name and keeps the tags every RDS resource holds behind its ARN (sent on create, read with
// ListTagsForResource, changed with Add/RemoveTagsToResource), and the provider every RDS kind is: its cloud
// events, its IAM statements (one statement for all managed databases, one for the batched drift check's
// listing) and its per-region routing.
import {
  AddTagsToResourceCommand,
  ListTagsForResourceCommand,
  RDSClient,
  RemoveTagsFromResourceCommand,
  type Tag,
} from "@aws-sdk/client-rds";
import type { z } from "zod";
import { arnName, firstName, stringAt } from "../../api/cloud-events.ts";
import {
  type ConnectContext,
  defineProvider,
  type ExternalObservation,
  type ExternalUpdate,
  type IamStatement,
} from "../../api/external.ts";
import type { AnyObjectSchema, ManagedKindDef, ManagedResource } from "../../api/managed.ts";
import type { AwsProviderConfigSpec } from "../../api/provider-config.ts";
import { awsErrorCode, ClientCache, sdkOptions } from "./config.ts";
import { perRegion, type RegionalClient } from "./ec2-common.ts";

// RDS's "can never succeed as specified" codes, beyond the AWS-wide ones in config.ts.
const RDS_INVALID = new Set([
  "StorageTypeNotSupported",
  "DBSubnetGroupDoesNotCoverEnoughAZs",
  "InvalidSubnet",
]);
const clients = new ClientCache((c) => new RDSClient(sdkOptions(c)), { invalid: RDS_INVALID });

/** The Tags of a create: the spec's, when it sets any. */
const tagsOnCreate = (tags: Record<string, string> | undefined): { Tags?: Tag[] } =>
  tags && Object.keys(tags).length > 0
    ? { Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) }
    : {};

/** The tags of the resource at `arn` (not in any Describe answer: one ListTagsForResource). */
export async function readTags(rds: RDSClient, arn: string): Promise<Record<string, string>> {
  const out = await rds.send(new ListTagsForResourceCommand({ ResourceName: arn }));
  return Object.fromEntries(
    (out.TagList ?? []).filter((t) => t.Key).map((t) => [t.Key ?? "", t.Value ?? ""]),
  );
}

/** Brings the tags of the resource at `arn` from `current` to `wanted`: removed keys, then changed ones. */
async function updateTags(
  rds: RDSClient,
  arn: string,
  wanted: Record<string, string>,
  current: Record<string, string>,
) {
  const removed = Object.keys(current).filter((k) => !(k in wanted));
  if (removed.length > 0)
    await rds.send(new RemoveTagsFromResourceCommand({ ResourceName: arn, TagKeys: removed }));
  const changed = Object.entries(wanted).filter(([k, v]) => current[k] !== v);
  if (changed.length > 0) {
    await rds.send(
      new AddTagsToResourceCommand({
        ResourceName: arn,
        Tags: changed.map(([Key, Value]) => ({ Key, Value })),
      }),
    );
  }
}

/** How one RDS kind is described by name, as data: the template (RdsKindClient) reads it. */
export interface RdsNamed<T, O> {
  /** The kind's Describe* command for one name. */
  describe: (name: string) => unknown;
  /** The one resource of its answer. */
  first: (out: O) => T | undefined;
  /** The codes of a Describe* or Delete* of a name that does not exist. */
  notFound: readonly string[];
}

/**
 * The template of the RDS kinds: the client of one region that observes a resource by name and keeps its
 * tags. A kind adds what it reports of a resource, its create (with `tagsOnCreate`) and its changes.
 */
export abstract class RdsKindClient<
  F extends { tags?: Record<string, string> },
  A extends { arn?: string },
  T,
  O,
> {
  protected readonly rds: RDSClient;
  protected readonly region: string;
  readonly #named: RdsNamed<T, O>;
  constructor(rds: RDSClient, region: string, named: RdsNamed<T, O>) {
    this.rds = rds;
    this.region = region;
    this.#named = named;
  }

  protected isMissing(err: unknown): boolean {
    return this.#named.notFound.includes(awsErrorCode(err));
  }

  /** What observe reports of a resource as described, or of its absence (`undefined`). */
  protected abstract observed(
    mr: ManagedResource<F, A>,
    t: T | undefined,
  ): Promise<ExternalObservation<F, A>>;

  async observe(mr: ManagedResource<F, A>, name: string | undefined): Promise<ExternalObservation<F, A>> {
    if (!name) return { resourceExists: false };
    return this.observed(mr, await this.#describe(name));
  }

  /** The resource of this name; none when RDS says there is none. */
  async #describe(name: string): Promise<T | undefined> {
    const send = this.rds.send.bind(this.rds) as unknown as (command: unknown) => Promise<O>;
    try {
      return this.#named.first(await send(this.#named.describe(name)));
    } catch (err) {
      if (this.isMissing(err)) return undefined;
      throw err;
    }
  }

  /** The Tags of a create: the spec's, when it sets any. */
  protected tagsOnCreate(mr: ManagedResource<F, A>): { Tags?: Tag[] } {
    return tagsOnCreate(mr.spec.forProvider.tags);
  }

  /** The kind's own changes; its tags are the template's. */
  protected abstract updateFields(
    mr: ManagedResource<F, A>,
    name: string,
    obs: ExternalObservation<F, A>,
  ): Promise<ExternalUpdate>;

  /** The user's tags first (a resource RDS will not modify yet still gets them), then the kind's changes. */
  async update(
    mr: ManagedResource<F, A>,
    name: string,
    obs: ExternalObservation<F, A>,
  ): Promise<ExternalUpdate> {
    const wanted = mr.spec.forProvider.tags;
    const arn = obs.atProvider?.arn;
    if (wanted !== undefined && arn) await updateTags(this.rds, arn, wanted, obs.observed?.tags ?? {});
    return this.updateFields(mr, name, obs);
  }
}

const TAG_EVENTS = ["AddTagsToResource", "RemoveTagsFromResource"];
const TAG_ACTIONS = ["rds:AddTagsToResource", "rds:RemoveTagsFromResource", "rds:ListTagsForResource"];

/** An RDS kind's facts: the CloudTrail events and IAM actions of its own calls, and its ARN's type. */
export interface RdsKind {
  /** Its events besides the tag calls (CreateDBInstance …). */
  events: string[];
  /** The request parameter that names it (dBInstanceIdentifier …). */
  nameParameter: string;
  /** Its type in an ARN (db, subgrp). */
  arnType: string;
  /** Its IAM actions besides the tag calls, and the one the batched drift check lists with. */
  actions: string[];
  listAction: string;
  /** Why listing is granted on every ARN, said once (in the first kind's statement). */
  listComment?: string;
  /** The calls of its batched drift check (the README's kind table) and how many items one covers. */
  observeMany: { calls: string; maxItems: number };
}

function rdsIam(k: RdsKind): IamStatement[] {
  const arn = (name: string) => `arn:{partition}:rds:*:{account}:${k.arnType}:${name}`;
  return [
    { sid: "ManagedDatabases", actions: [...k.actions, ...TAG_ACTIONS], resources: [arn("{namePrefix}*")] },
    {
      sid: "ListDatabases",
      actions: [k.listAction],
      resources: [arn("*")],
      ...(k.listComment ? { comment: k.listComment } : {}),
    },
  ];
}

/** An RDS kind's provider: its definition, its facts and its regional client on the region's RDS client. */
export function rdsProvider<FS extends AnyObjectSchema, AS extends AnyObjectSchema>(
  definition: ManagedKindDef<FS, AS>,
  kind: RdsKind,
  make: (
    rds: RDSClient,
    region: string,
    ctx: ConnectContext<AwsProviderConfigSpec>,
  ) => RegionalClient<z.infer<FS> & { region?: string }, z.infer<AS> & { arn?: string }>,
) {
  return defineProvider({
    definition,
    cloudEvents: {
      aws: {
        source: "aws.rds",
        eventNames: [...kind.events, ...TAG_EVENTS],
        externalNames: (call) =>
          firstName(
            stringAt(call.requestParameters, kind.nameParameter),
            arnName(stringAt(call.requestParameters, "resourceName"), kind.arnType),
          ),
      },
    },
    iam: rdsIam(kind),
    limitsEachRequest: true,
    observeMany: kind.observeMany,
    async connect(ctx: ConnectContext<AwsProviderConfigSpec>) {
      return perRegion(ctx, (cfg) => make(clients.get(cfg), cfg.region, ctx));
    },
  });
}
