// The EC2 family's template (VPC, Subnet, SecurityGroup): the SDK client cache, the client that finds a
// resource by id or by the ownership tag (a provider-chosen id never recorded) and observes one or many
// (Ec2KindClient, read from each kind's Ec2Kind data), tag updates, error classes and IAM. The RDS kinds
// use the per-region routing and the batched observe's helpers too.

import {
  CreateTagsCommand,
  DeleteTagsCommand,
  EC2Client,
  type Filter,
  type ResourceType,
  type Tag,
  type TagSpecification,
} from "@aws-sdk/client-ec2";
import { type CloudEventsDeclaration, itemsAt, stringAt, withPrefix } from "../../api/cloud-events.ts";
import type {
  ConnectContext,
  ExternalClient,
  ExternalListing,
  ExternalObservation,
  IamStatement,
  ManagedKindProvider,
  ObserveManyItem,
} from "../../api/external.ts";
import {
  DependentsExistError,
  defineProvider,
  NotListableError,
  ThrottledError,
} from "../../api/external.ts";
import { OWNERSHIP_TAG } from "../../api/external-tags.ts";
import type { ManagedKindDef, ManagedResource } from "../../api/managed.ts";
import type { AwsProviderConfigSpec } from "../../api/provider-config.ts";
import { namedError } from "../../named-error.ts";
import {
  type AwsClientConfig,
  awsClientConfig,
  awsErrorCode,
  ClientCache,
  perResource,
  regionOfArn,
  sdkOptions,
} from "./config.ts";
import { awsHome } from "./home.ts";

/** The tag every resource driftless creates carries: the managed resource's uid. */
export const OWNER_TAG = OWNERSHIP_TAG;

// EC2's "can never succeed as specified" codes, beyond the AWS-wide ones in config.ts.
const EC2_INVALID = new Set([
  "InvalidVpc.Range",
  "InvalidSubnet.Range",
  "InvalidParameter",
  "InvalidGroup.Reserved",
  "InvalidPermission.Malformed",
  "InvalidAvailabilityZone",
]);

const clients = new ClientCache((c) => new EC2Client(sdkOptions(c)), { invalid: EC2_INVALID });

/**
 * The cloud refused to delete a resource something still depends on (subnets in a VPC, network
 * interfaces in a subnet, a group still referenced): deleting the dependents first resolves it.
 */
export class DependencyViolationError extends namedError("DependencyViolationError", DependentsExistError) {}

export const codeIs = (err: unknown, ...codes: string[]) => codes.includes(awsErrorCode(err));

/** Deleting `what` waits for its dependents; the message says so instead of looking like a failure. */
export function dependencyViolation(what: string, err: unknown): DependencyViolationError {
  return new DependencyViolationError(
    `${what} still has dependent resources, retrying until they are deleted (${awsErrorCode(err)}: ${(err as Error).message})`,
    { cause: err },
  );
}

/** User tags as a map, without driftless's ownership tag. */
function tagsOf(tags: Tag[] | undefined): Record<string, string> {
  return Object.fromEntries(
    (tags ?? []).filter((t) => t.Key && t.Key !== OWNER_TAG).map((t) => [t.Key ?? "", t.Value ?? ""]),
  );
}

/** Tags the resource at creation with the user's tags and the ownership tag, in the same call. */
function tagSpecifications(resourceType: ResourceType, mr: ManagedResource): TagSpecification[] {
  const uid = mr.metadata.uid;
  if (!uid) throw new Error("the managed resource has no metadata.uid to tag the cloud resource with");
  const user = (mr.spec.forProvider as { tags?: Record<string, string> }).tags ?? {};
  const tags = Object.entries(user)
    .filter(([k]) => k !== OWNER_TAG)
    .map(([Key, Value]) => ({ Key, Value }));
  return [{ ResourceType: resourceType, Tags: [...tags, { Key: OWNER_TAG, Value: uid }] }];
}

/** The filter that finds what this managed resource created. */
export const ownedBy = (mr: ManagedResource): Filter[] => [
  { Name: `tag:${OWNER_TAG}`, Values: [mr.metadata.uid ?? ""] },
];

/**
 * The one resource tagged with this managed resource's uid. More than one can only come from outside
 * driftless (or a bug): adopting either could hide the other, so a person decides.
 */
export function singleOwned<T>(found: T[], kind: string, idOf: (t: T) => string | undefined): T | undefined {
  if (found.length <= 1) return found[0];
  const ids = found.map(idOf).join(", ");
  throw new Error(
    `found ${found.length} ${kind}s tagged ${OWNER_TAG} with this resource's uid (${ids}): set crossplane.io/external-name to the one to keep and delete the others`,
  );
}

/** Sets the user's tags on a resource; never touches the ownership tag. */
async function updateTags(
  ec2: EC2Client,
  id: string,
  wanted: Record<string, string>,
  current: Record<string, string>,
) {
  const removed = Object.keys(current).filter((k) => !(k in wanted) && k !== OWNER_TAG);
  if (removed.length > 0) {
    await ec2.send(new DeleteTagsCommand({ Resources: [id], Tags: removed.map((Key) => ({ Key })) }));
  }
  const changed = Object.entries(wanted).filter(([k, v]) => k !== OWNER_TAG && current[k] !== v);
  if (changed.length > 0) {
    await ec2.send(
      new CreateTagsCommand({ Resources: [id], Tags: changed.map(([Key, Value]) => ({ Key, Value })) }),
    );
  }
}

/** Two lists hold the same items, in any order (ids: no duplicates that matter). */
export const sameSet = (a: readonly string[], b: readonly string[]) =>
  new Set(a).size === new Set(b).size && a.every((x) => b.includes(x));

/** The ARN EC2 does not return for a VPC: arn:aws:ec2:region:account:vpc/id. */
export const ec2Arn = (region: string, owner: string | undefined, type: string, id: string | undefined) =>
  owner && id ? `arn:aws:ec2:${region}:${owner}:${type}/${id}` : undefined;

const ec2ArnPattern = (type: string) => `arn:{partition}:ec2:*:{account}:${type}/*`;
const owned = { Null: { [`aws:ResourceTag/${OWNER_TAG}`]: "false" } };

/**
 * IAM for an EC2 kind. Its ids are provider-chosen, so there is no name prefix to scope by: the scope is
 * the ownership tag written in the very call that creates the resource. Creates must carry it, every
 * later change or delete needs it on the resource, and the tag itself can be neither added nor removed.
 */
function ec2Iam<T, O, C>(k: Ec2Kind<T, O, C>): IamStatement[] {
  const arn = ec2ArnPattern(k.type);
  const create = k.create.call;
  return [
    {
      sid: "DescribeNetworks",
      actions: k.iam.describe.map((a) => `ec2:${a}`),
      resources: ["*"],
      comment: "EC2 Describe* calls have no resource-level permissions.",
    },
    {
      sid: "CreateOwnedNetworks",
      actions: [`ec2:${create}`],
      resources: [arn],
      condition: { Null: { [`aws:RequestTag/${OWNER_TAG}`]: "false" } },
      comment:
        "EC2 ids are provider-chosen, so there is no name prefix to scope by: the scope is the ownership tag " +
        "driftless writes in the very call that creates a VPC, subnet or security group " +
        "(driftless.dev/managed-resource-uid, shared/providers/aws/ec2-common.ts). Creates must carry it, " +
        "every later change or delete needs it on the resource, and the tag itself can be neither added to " +
        "nor removed from an existing resource.",
    },
    ...(k.iam.inVpc
      ? [
          {
            sid: "CreateInOwnedVpcs",
            actions: [`ec2:${create}`],
            resources: [ec2ArnPattern("vpc")],
            condition: owned,
            comment:
              "Subnets and security groups go into VPCs driftless manages. For a VPC it does not manage, add " +
              "that VPC's ARN here (docs/deploy-aws.md#iam).",
          },
        ]
      : []),
    {
      sid: "TagOnCreate",
      actions: ["ec2:CreateTags"],
      resources: [arn],
      condition: { StringEquals: { "ec2:CreateAction": [create] } },
    },
    {
      sid: "ManagedNetworks",
      actions: k.iam.manage.map((a) => `ec2:${a}`),
      resources: [arn],
      condition: owned,
    },
    {
      sid: "ManagedNetworkTags",
      actions: ["ec2:CreateTags", "ec2:DeleteTags"],
      resources: [arn],
      condition: { ...owned, "ForAllValues:StringNotEquals": { "aws:TagKeys": [OWNER_TAG] } },
      comment: "The user's tags on owned resources; never the ownership tag itself.",
    },
  ];
}

/**
 * EC2's limit of filter values in one request: more fail the whole request with FilterLimitExceeded
 * ("The maximum number of filter values specified on a single call is 200"; the EC2 API's error codes
 * list FilterLimitExceeded as "too many filters or too many filter values"). One batched observe of an
 * EC2 kind covers that many ids.
 */
export const EC2_MAX_FILTER_VALUES = 200;
/** The largest page EC2's DescribeVpcs, DescribeSubnets and DescribeSecurityGroups return (MaxResults 5–1000). */
const EC2_MAX_RESULTS = 1000;

/** One page of a Describe* call: its items and the token of the next page. */
export interface DescribePage<T> {
  items: T[] | undefined;
  nextToken: string | undefined;
}

/** An EC2 id of one type (vpc-…, subnet-…, sg-…); anything else is not asked for in a filter. */
export const ec2IdPattern = (prefix: string) => new RegExp(`^${prefix}-[0-9a-f]+$`);

/**
 * Describes resources by an id filter (vpc-id, subnet-id, group-id), page by page, at most
 * EC2_MAX_FILTER_VALUES ids per request: an id that does not exist is just not listed, where the *Ids
 * parameter fails the whole request (InvalidVpcID.NotFound). Returns what was found, by id.
 */
export async function describeByIds<T>(
  ids: readonly string[],
  filter: string,
  describe: (input: {
    Filters: Filter[];
    MaxResults: number;
    NextToken?: string;
  }) => Promise<DescribePage<T>>,
  idOf: (t: T) => string | undefined,
): Promise<Map<string, T>> {
  const unique = [...new Set(ids)];
  const found = new Map<string, T>();
  for (let at = 0; at < unique.length; at += EC2_MAX_FILTER_VALUES) {
    const Filters = [{ Name: filter, Values: unique.slice(at, at + EC2_MAX_FILTER_VALUES) }];
    let token: string | undefined;
    do {
      const page = await describe({
        Filters,
        MaxResults: EC2_MAX_RESULTS,
        ...(token ? { NextToken: token } : {}),
      });
      for (const t of page.items ?? []) {
        const id = idOf(t);
        if (id) found.set(id, t);
      }
      token = page.nextToken || undefined;
    } while (token);
  }
  return found;
}

/**
 * The batched observe of an EC2 kind found by id: one describeByIds for the items whose external name is
 * an id of the kind, then each item's observation from what was found (not listed: does not exist). A
 * name that is no id of the kind is observed alone (`observeOne`), so Describe* says what is wrong with it.
 */
export async function observeManyByIds<F, A, T>(
  items: ReadonlyArray<ObserveManyItem<F, A>>,
  kind: {
    isId: (name: string) => boolean;
    filter: string;
    describe: (input: {
      Filters: Filter[];
      MaxResults: number;
      NextToken?: string;
    }) => Promise<DescribePage<T>>;
    idOf: (t: T) => string | undefined;
    observation: (mr: ObserveManyItem<F, A>["mr"], id: string, t: T) => Promise<ExternalObservation<F, A>>;
    observeOne: (mr: ObserveManyItem<F, A>["mr"], name: string) => Promise<ExternalObservation<F, A>>;
  },
): Promise<Array<ExternalObservation<F, A> | Error>> {
  const found = await describeByIds(
    items.map((i) => i.externalName).filter(kind.isId),
    kind.filter,
    kind.describe,
    kind.idOf,
  );
  return observeEach(items, async ({ mr, externalName }) => {
    if (!kind.isId(externalName)) return kind.observeOne(mr, externalName);
    const t = found.get(externalName);
    return t ? kind.observation(mr, externalName, t) : { resourceExists: false };
  });
}

/** Per-resource reads of one batched observe running at once (the engine's own per-resource batches run 16). */
const OBSERVE_EACH_CONCURRENCY = 8;

/**
 * The per-resource part of a batched observe: each item's observation or its own Error, in order, a few
 * at a time. Throttling throws for the whole batch and starts no further reads, so the engine splits the
 * batch and backs off instead of this batch pressing on.
 */
export async function observeEach<F, A>(
  items: ReadonlyArray<ObserveManyItem<F, A>>,
  observe: (item: ObserveManyItem<F, A>) => Promise<ExternalObservation<F, A>>,
): Promise<Array<ExternalObservation<F, A> | Error>> {
  const out: Array<ExternalObservation<F, A> | Error> = new Array(items.length);
  let throttled: ThrottledError | undefined;
  let next = 0;
  const lane = async () => {
    for (let n = next++; n < items.length && !throttled; n = next++) {
      try {
        out[n] = await observe(items[n] as ObserveManyItem<F, A>);
      } catch (err) {
        if (err instanceof ThrottledError) throttled ??= err;
        else out[n] = err instanceof Error ? err : new Error(String(err));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(OBSERVE_EACH_CONCURRENCY, items.length) }, lane));
  if (throttled) throw throttled;
  return out;
}

/** A Describe* request of the template: by ids (the kind's *Ids parameter) or by filters, page by page. */
export interface Ec2DescribeInput {
  ids?: string[];
  Filters?: Filter[];
  MaxResults?: number;
  NextToken?: string;
}

/**
 * One EC2 kind found by id or by the ownership tag, as data: the template (Ec2KindClient) reads, finds and
 * batch-observes every such kind with it.
 */
export interface Ec2Kind<T, O, C> {
  /** The noun in messages: VPC, subnet, security group. */
  noun: string;
  /** The resource type in ARNs, IAM and the tags written on create: vpc, subnet, security-group. */
  type: ResourceType;
  /** The id's prefix: vpc, subnet, sg. */
  idPrefix: string;
  /** The Describe* filter that names ids: vpc-id, subnet-id, group-id. */
  idFilter: string;
  /** The codes of a Describe* by id of one that does not exist (the *Ids parameter fails the request). */
  notFound: readonly string[];
  /** The kind's Describe* command for an input. */
  describe: (input: Ec2DescribeInput) => unknown;
  /** One page of its answer. */
  page: (out: O) => DescribePage<T>;
  idOf: (t: T) => string | undefined;
  /** The kind's create call, the field of its answer that holds the new id, and where it is. */
  create: { call: string; idField: string; idOf: (out: C) => string | undefined };
  /** The kind's Delete* command for an id. */
  remove: (id: string) => unknown;
  /** Codes of a delete that waits for dependents, beyond DependencyViolation. */
  inUse?: readonly string[];
  /**
   * Its calls beyond create, for IAM: Describe* (any resource), and the changes and delete allowed only on
   * resources carrying the ownership tag; `inVpc`: created inside a VPC, which must carry that tag too.
   */
  iam: { describe: readonly string[]; manage: readonly string[]; inVpc?: boolean };
  /** The field of its calls' CloudTrail records (requestParameters) that holds the id: vpcId, groupId… */
  eventIdField: string;
  /** What its batched observe calls, for the README's kind table. */
  calls: string;
}

type RegionSpec = { region?: string };

/** An AWS kind's client for one region, with its batched observe. */
export type RegionalClient<F, A> = ExternalClient<F, A> & Required<Pick<ExternalClient<F, A>, "observeMany">>;

/** The spec of an EC2 kind, as the template reads it. */
type Ec2Spec = { region?: string; tags?: Record<string, string> };

/**
 * The template of the EC2 kinds: the client of one region that finds a resource by id once it is known,
 * before that by the ownership tag (a create whose id was never recorded), observes it and batch-observes
 * many by an id filter, and manages its user tags. A kind adds its data (Ec2Kind), what it reports of a
 * resource, its create command and its own changes.
 */
export abstract class Ec2KindClient<F extends Ec2Spec, A, T extends { Tags?: Tag[] }, O, C>
  implements RegionalClient<F, A>
{
  protected readonly ec2: EC2Client;
  protected readonly region: string;
  readonly #kind: Ec2Kind<T, O, C>;
  readonly #isId: (name: string) => boolean;
  constructor(ec2: EC2Client, region: string, kind: Ec2Kind<T, O, C>) {
    this.ec2 = ec2;
    this.region = region;
    this.#kind = kind;
    const pattern = ec2IdPattern(kind.idPrefix);
    this.#isId = (name) => pattern.test(name);
  }

  /** What observe reports of a resource as Describe* returned it, but its tags (the template's). */
  protected abstract observationOf(
    fp: F,
    id: string,
    t: T,
  ): ExternalObservation<F, A> | Promise<ExternalObservation<F, A>>;

  /** The kind's create command, carrying the tags it is given (the ownership tag among them). */
  protected abstract createCommand(mr: ManagedResource<F, A>, tags: TagSpecification[]): unknown;

  /** The kind's own changes (attributes, rules); the template sets the user's tags after them. */
  protected abstract updateFields(
    mr: ManagedResource<F, A>,
    id: string,
    obs: ExternalObservation<F, A>,
  ): Promise<void>;

  /** Sends one of the kind's commands (data): the client's send types every EC2 command, so the answer is the command's own. */
  #send<Out>(command: unknown): Promise<Out> {
    return (this.ec2.send.bind(this.ec2) as unknown as (command: unknown) => Promise<Out>)(command);
  }

  async #describe(input: Ec2DescribeInput): Promise<DescribePage<T>> {
    return this.#kind.page(await this.#send<O>(this.#kind.describe(input)));
  }

  /**
   * Sends the kind's create command with the user's tags and the ownership tag: if the id is lost (crash
   * before it is recorded), observe finds the resource by that tag. The id is the external name.
   */
  async create(mr: ManagedResource<F, A>): Promise<{ externalName: string }> {
    const { call, idField, idOf } = this.#kind.create;
    const command = this.createCommand(mr, tagSpecifications(this.#kind.type, mr as ManagedResource));
    const id = idOf(await this.#send<C>(command));
    if (!id) throw new Error(`${call} returned no ${idField}`);
    return { externalName: id };
  }

  /** The kind's own changes, then the user's tags (compared with what observe reported). */
  async update(mr: ManagedResource<F, A>, id: string, obs: ExternalObservation<F, A>) {
    await this.updateFields(mr, id, obs);
    const wanted = mr.spec.forProvider.tags;
    if (wanted !== undefined) await updateTags(this.ec2, id, wanted, obs.observed?.tags ?? {});
    return {};
  }

  /** Deletes by id: already gone is done; dependents still there are waited for (DependencyViolationError). */
  async delete(_mr: ManagedResource<F, A>, id: string): Promise<void> {
    try {
      await this.#send(this.#kind.remove(id));
    } catch (err) {
      if (this.isMissing(err)) return;
      if (codeIs(err, "DependencyViolation", ...(this.#kind.inUse ?? [])))
        throw dependencyViolation(`${this.#kind.noun} ${id}`, err);
      throw err;
    }
  }

  protected isMissing(err: unknown): boolean {
    return codeIs(err, ...this.#kind.notFound);
  }

  /** By id once it is known; before that, by the ownership tag (a create whose id was never recorded). */
  protected async find(mr: ManagedResource<F, A>, id: string | undefined): Promise<T | undefined> {
    if (id) {
      try {
        return (await this.#describe({ ids: [id] })).items?.[0];
      } catch (err) {
        if (this.isMissing(err)) return undefined;
        throw err;
      }
    }
    if (!mr.metadata.uid) return undefined;
    const found = (await this.#describe({ Filters: ownedBy(mr as ManagedResource) })).items ?? [];
    return singleOwned(found, this.#kind.noun, this.#kind.idOf);
  }

  async observe(mr: ManagedResource<F, A>, id: string | undefined): Promise<ExternalObservation<F, A>> {
    const t = await this.find(mr, id);
    const found = t === undefined ? undefined : this.#kind.idOf(t);
    if (t === undefined || !found) return { resourceExists: false };
    return this.#observation(mr.spec.forProvider, found, t);
  }

  /** The kind's observation with the resource's user tags: when the spec manages them or the cloud has some. */
  async #observation(fp: F, id: string, t: T): Promise<ExternalObservation<F, A>> {
    const obs = await this.observationOf(fp, id, t);
    const tags = tagsOf(t.Tags);
    if (fp.tags !== undefined || Object.keys(tags).length > 0)
      obs.observed = { ...obs.observed, tags } as Partial<F>;
    return obs;
  }

  /** Every resource of the kind in this region, page by page (`driftless import`). */
  async list(): Promise<ExternalListing[]> {
    const out: ExternalListing[] = [];
    let NextToken: string | undefined;
    do {
      const page = await this.#describe({ MaxResults: 1000, ...(NextToken ? { NextToken } : {}) });
      for (const t of page.items ?? []) {
        const id = this.#kind.idOf(t);
        if (id) out.push({ externalName: id, forProvider: { region: this.region } });
      }
      NextToken = page.nextToken;
    } while (NextToken);
    return out;
  }

  /** Describe* with the kind's id filter; a name that is no id of the kind is observed alone. */
  async observeMany(
    items: ReadonlyArray<ObserveManyItem<F, A>>,
  ): Promise<Array<ExternalObservation<F, A> | Error>> {
    return observeManyByIds(items, {
      isId: this.#isId,
      filter: this.#kind.idFilter,
      describe: (input) => this.#describe(input),
      idOf: this.#kind.idOf,
      observation: (mr, id, t) => this.#observation(mr.spec.forProvider, id, t),
      observeOne: (mr, name) => this.observe(mr, name),
    });
  }
}

/**
 * An AWS kind's client over every region of a ProviderConfig: each operation goes to the (cached) client
 * of the region the resource lives in (its ARN's region), so a changed spec.region is reported as drift
 * on an immutable field instead of creating a second one elsewhere. A batched observe sends each
 * region's items to that region's client, one region after another, and puts the results back in order.
 */
export function perRegion<F extends RegionSpec, A extends { arn?: string }>(
  ctx: ConnectContext<AwsProviderConfigSpec>,
  make: (cfg: AwsClientConfig) => RegionalClient<F, A>,
): ExternalClient<F, A> {
  const regionOf = (mr: ManagedResource<F, A>) =>
    regionOfArn(mr.status?.atProvider?.arn) ?? mr.spec.forProvider.region;
  return {
    ...perResource(
      async (mr: ManagedResource<F, A>) => make(await awsClientConfig(ctx, regionOf(mr))),
      // The home is where the spec points, not where the resource was found: a difference is refused.
      (mr) => awsHome(ctx, mr.spec.forProvider.region),
    ),
    // `driftless import`: what exists in the ProviderConfig's region.
    async list() {
      const client = make(await awsClientConfig(ctx, undefined));
      if (!client.list) throw new NotListableError("cannot be listed yet");
      return client.list();
    },
    async observeMany(items) {
      // Resources without a region of their own are in the ProviderConfig's: grouped by resolved config.
      const configs = new Map<string | undefined, AwsClientConfig | Error>();
      const groups = new Map<string, { config: AwsClientConfig | Error; indexes: number[] }>();
      for (const [i, { mr }] of items.entries()) {
        const region = regionOf(mr);
        let config = configs.get(region);
        if (!config) {
          config = await awsClientConfig(ctx, region).catch((err: Error) => err);
          configs.set(region, config);
        }
        const key = config instanceof Error ? `!${region}` : config.cacheKey;
        const group = groups.get(key) ?? { config, indexes: [] };
        group.indexes.push(i);
        groups.set(key, group);
      }
      const out: Array<ExternalObservation<F, A> | Error> = new Array(items.length);
      for (const { config, indexes } of groups.values()) {
        let results: Array<ExternalObservation<F, A> | Error>;
        try {
          if (config instanceof Error) throw config;
          results = await make(config).observeMany(indexes.map((i) => items[i] as ObserveManyItem<F, A>));
        } catch (err) {
          // One region's failure is its resources' own, unless it is the whole call or throttling.
          if (groups.size === 1 || err instanceof ThrottledError) throw err;
          results = indexes.map(() => (err instanceof Error ? err : new Error(String(err))));
        }
        indexes.forEach((i, n) => {
          out[i] = results[n] ?? new Error("the batched observe returned no result for this resource");
        });
      }
      return out;
    },
  };
}

/**
 * An EC2 kind's cloud events: the calls it manages its resources with (a change made by anyone else
 * through them is drift) and the tag calls, whose records name resources of every type (hence the prefix).
 */
function ec2CloudEvents<T, O, C>(k: Ec2Kind<T, O, C>): CloudEventsDeclaration {
  const prefix = `${k.idPrefix}-`;
  return {
    aws: {
      source: "aws.ec2",
      eventNames: [...k.iam.manage, "CreateTags", "DeleteTags"],
      externalNames(call) {
        if (call.eventName === "CreateTags" || call.eventName === "DeleteTags")
          return withPrefix(itemsAt(call.requestParameters, "resourcesSet", "resourceId"), prefix);
        const id = stringAt(call.requestParameters, k.eventIdField);
        return id?.startsWith(prefix) ? [id] : [];
      },
    },
  };
}

/**
 * A provider for an EC2 kind, from its data and its client: its batched drift check describes up to
 * EC2_MAX_FILTER_VALUES resources by id filter per request.
 */
export function ec2Provider<F extends Ec2Spec, A extends { arn?: string }, T, O, C>(
  // biome-ignore lint/suspicious/noExplicitAny: definitions are heterogeneous; F and A type the client
  definition: ManagedKindDef<any, any>,
  kind: Ec2Kind<T, O, C>,
  Client: new (ec2: EC2Client, region: string, kind: Ec2Kind<T, O, C>) => RegionalClient<F, A>,
): ManagedKindProvider {
  const provider: ManagedKindProvider<F, A> = {
    definition,
    cloudEvents: ec2CloudEvents(kind),
    limitsEachRequest: true,
    observeMany: { calls: kind.calls, maxItems: EC2_MAX_FILTER_VALUES },
    iam: ec2Iam(kind),
    async connect(ctx: ConnectContext<AwsProviderConfigSpec>) {
      return perRegion<F, A>(ctx, (cfg) => new Client(clients.get(cfg), cfg.region, kind));
    },
  };
  return defineProvider(provider);
}
