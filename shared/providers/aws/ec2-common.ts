// What the EC2 kinds (VPC, Subnet, SecurityGroup) share: the SDK client cache, the ownership tag that
// finds a resource whose provider-chosen id was never recorded, tag updates and error classes.
import {
  CreateTagsCommand,
  DeleteTagsCommand,
  EC2Client,
  type Filter,
  type ResourceType,
  type Tag,
  type TagSpecification,
} from "@aws-sdk/client-ec2";
import type {
  ConnectContext,
  ExternalClient,
  IamStatement,
  ManagedKindProvider,
} from "../../api/external.ts";
import { DependentsExistError, defineProvider, InvalidSpecError } from "../../api/external.ts";
import type { ManagedKindDef, ManagedResource } from "../../api/managed.ts";
import type { AwsProviderConfigSpec } from "../../api/provider-config.ts";
import {
  aws,
  awsClientConfig,
  awsErrorCode,
  ClientCache,
  perResource,
  regionOfArn,
  sdkOptions,
} from "./config.ts";

/** The tag every resource driftless creates carries: the managed resource's uid. */
export const OWNER_TAG = "driftless.dev/managed-resource-uid";

const clients = new ClientCache((c) => new EC2Client(sdkOptions(c)));

// EC2's "can never succeed as specified" codes, beyond the AWS-wide ones in config.ts.
const EC2_INVALID = new Set([
  "InvalidVpc.Range",
  "InvalidSubnet.Range",
  "InvalidParameter",
  "InvalidGroup.Reserved",
  "InvalidPermission.Malformed",
  "InvalidAvailabilityZone",
]);

/**
 * The cloud refused to delete a resource something still depends on (subnets in a VPC, network
 * interfaces in a subnet, a group still referenced): deleting the dependents first resolves it.
 */
export class DependencyViolationError extends DependentsExistError {
  override name = "DependencyViolationError";
}

/** Runs an EC2 call: AWS-wide error classes from config.ts plus EC2's own. */
export function ec2Call<T>(call: () => Promise<T>): Promise<T> {
  return aws(async () => {
    try {
      return await call();
    } catch (err) {
      if (EC2_INVALID.has(awsErrorCode(err))) {
        throw new InvalidSpecError(`${awsErrorCode(err)}: ${(err as Error).message}`, { cause: err });
      }
      throw err;
    }
  });
}

export const codeIs = (err: unknown, ...codes: string[]) => codes.includes(awsErrorCode(err));

/** Deleting `what` waits for its dependents; the message says so instead of looking like a failure. */
export function dependencyViolation(what: string, err: unknown): DependencyViolationError {
  return new DependencyViolationError(
    `${what} still has dependent resources, retrying until they are deleted (${awsErrorCode(err)}: ${(err as Error).message})`,
    { cause: err },
  );
}

/** User tags as a map, without driftless's ownership tag. */
export function tagsOf(tags: Tag[] | undefined): Record<string, string> {
  return Object.fromEntries(
    (tags ?? []).filter((t) => t.Key && t.Key !== OWNER_TAG).map((t) => [t.Key ?? "", t.Value ?? ""]),
  );
}

/** Tags the resource at creation with the user's tags and the ownership tag, in the same call. */
export function tagSpecifications(resourceType: ResourceType, mr: ManagedResource): TagSpecification[] {
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
export async function updateTags(
  ec2: EC2Client,
  id: string,
  wanted: Record<string, string>,
  current: Record<string, string>,
) {
  const removed = Object.keys(current).filter((k) => !(k in wanted) && k !== OWNER_TAG);
  if (removed.length > 0) {
    await ec2Call(() =>
      ec2.send(new DeleteTagsCommand({ Resources: [id], Tags: removed.map((Key) => ({ Key })) })),
    );
  }
  const changed = Object.entries(wanted).filter(([k, v]) => k !== OWNER_TAG && current[k] !== v);
  if (changed.length > 0) {
    await ec2Call(() =>
      ec2.send(
        new CreateTagsCommand({ Resources: [id], Tags: changed.map(([Key, Value]) => ({ Key, Value })) }),
      ),
    );
  }
}

/** The tags to report as observed: only when the spec manages them or the cloud has some. */
export const observedTags = (specTags: Record<string, string> | undefined, cloud: Record<string, string>) =>
  specTags !== undefined || Object.keys(cloud).length > 0 ? cloud : undefined;

/** Two lists hold the same items, in any order (ids: no duplicates that matter). */
export const sameSet = (a: readonly string[], b: readonly string[]) =>
  new Set(a).size === new Set(b).size && a.every((x) => b.includes(x));

export const defined = <T extends Record<string, unknown>>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

/** The ARN EC2 does not return for a VPC: arn:aws:ec2:region:account:vpc/id. */
export const ec2Arn = (region: string, owner: string | undefined, type: string, id: string | undefined) =>
  owner && id ? `arn:aws:ec2:${region}:${owner}:${type}/${id}` : undefined;

type RegionSpec = { region?: string };

/** What one EC2 kind does, for its IAM statements. */
export interface Ec2Permissions {
  /** The resource type in ARNs: vpc, subnet, security-group. */
  type: string;
  /** Its create call: CreateVpc… (the ec2:CreateAction of the tags written with it). */
  create: string;
  describe: string[];
  /** Changes and delete, allowed only on resources carrying the ownership tag. */
  manage: string[];
  /** Created inside a VPC: that VPC must carry the ownership tag too. */
  inVpc?: boolean;
}

const ec2ArnPattern = (type: string) => `arn:{partition}:ec2:*:{account}:${type}/*`;
const owned = { Null: { [`aws:ResourceTag/${OWNER_TAG}`]: "false" } };

/**
 * IAM for an EC2 kind. Its ids are provider-chosen, so there is no name prefix to scope by: the scope is
 * the ownership tag written in the very call that creates the resource. Creates must carry it, every
 * later change or delete needs it on the resource, and the tag itself can be neither added nor removed.
 */
export function ec2Iam(p: Ec2Permissions): IamStatement[] {
  const arn = ec2ArnPattern(p.type);
  return [
    {
      sid: "DescribeNetworks",
      actions: p.describe.map((a) => `ec2:${a}`),
      resources: ["*"],
      comment: "EC2 Describe* calls have no resource-level permissions.",
    },
    {
      sid: "CreateOwnedNetworks",
      actions: [`ec2:${p.create}`],
      resources: [arn],
      condition: { Null: { [`aws:RequestTag/${OWNER_TAG}`]: "false" } },
      comment:
        "EC2 ids are provider-chosen, so there is no name prefix to scope by: the scope is the ownership tag " +
        "driftless writes in the very call that creates a VPC, subnet or security group " +
        "(driftless.dev/managed-resource-uid, shared/providers/aws/ec2-common.ts). Creates must carry it, " +
        "every later change or delete needs it on the resource, and the tag itself can be neither added to " +
        "nor removed from an existing resource.",
    },
    ...(p.inVpc
      ? [
          {
            sid: "CreateInOwnedVpcs",
            actions: [`ec2:${p.create}`],
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
      condition: { StringEquals: { "ec2:CreateAction": [p.create] } },
    },
    { sid: "ManagedNetworks", actions: p.manage.map((a) => `ec2:${a}`), resources: [arn], condition: owned },
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
 * A provider for an EC2 kind. An existing resource is looked for where it lives (its ARN's region), so a
 * changed spec.region is reported as drift on an immutable field instead of creating a second one.
 */
export function ec2Provider<F extends RegionSpec, A extends { arn?: string }>(
  // biome-ignore lint/suspicious/noExplicitAny: definitions are heterogeneous; F and A type the client
  definition: ManagedKindDef<any, any>,
  make: (ec2: EC2Client, region: string) => ExternalClient<F, A>,
  permissions: Ec2Permissions,
): ManagedKindProvider {
  const provider: ManagedKindProvider<F, A> = {
    definition,
    limitsEachRequest: true,
    iam: ec2Iam(permissions),
    async connect(ctx: ConnectContext<AwsProviderConfigSpec>) {
      const clientFor = async (mr: ManagedResource<F, A>) => {
        const cfg = await awsClientConfig(
          ctx,
          regionOfArn(mr.status?.atProvider?.arn) ?? mr.spec.forProvider.region,
        );
        return make(clients.get(cfg), cfg.region);
      };
      return perResource(clientFor);
    },
  };
  return defineProvider(provider);
}
