// The AWS kinds' batched drift check against moto: observeMany over existing resources, one changed
// behind driftless's back and one that does not exist returns, per resource, exactly what observe returns
// for it alone, with one describe request per batch (per region, per page of ids) plus the per-resource
// reads the kind documents. The providers reach moto through the recording proxy, which counts requests.
import { randomUUID } from "node:crypto";
import {
  AuthorizeSecurityGroupIngressCommand,
  CreateSubnetCommand,
  CreateTagsCommand,
  CreateVpcCommand,
  EC2Client,
  ModifySubnetAttributeCommand,
} from "@aws-sdk/client-ec2";
import { AddTagsToResourceCommand, RDSClient } from "@aws-sdk/client-rds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SecurityGroup, Subnet, VPC } from "../../../shared/api/aws/ec2.ts";
import { DBInstance, DBSubnetGroup } from "../../../shared/api/aws/rds.ts";
import {
  type ConnectContext,
  CredentialsError,
  type ExternalClient,
  type ExternalObservation,
  type ManagedKindProvider,
  ThrottledError,
} from "../../../shared/api/external.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import type { SecretKeySelector } from "../../../shared/api/meta.ts";
import type { AwsProviderConfigSpec, ProviderConfig } from "../../../shared/api/provider-config.ts";
import { securityGroupProvider } from "../../../shared/providers/aws/ec2-securitygroup.ts";
import { subnetProvider } from "../../../shared/providers/aws/ec2-subnet.ts";
import { vpcProvider } from "../../../shared/providers/aws/ec2-vpc.ts";
import { dbInstanceProvider } from "../../../shared/providers/aws/rds-dbinstance.ts";
import { dbSubnetGroupProvider } from "../../../shared/providers/aws/rds-dbsubnetgroup.ts";
import { MOTO_CREDENTIALS, motoOptions } from "../../support/aws.ts";
import { env, uniqueName } from "../../support/env.ts";
import { MotoProxy, type ProxyHooks, queryError } from "../../support/moto-proxy.ts";
import { expectObserveManyMatchesObserve } from "../../support/observe-many.ts";

type Client = ExternalClient<Record<string, unknown>, Record<string, unknown>>;
type Observation = ExternalObservation<Record<string, unknown>, Record<string, unknown>>;

// Arranging and changing cloud state goes to moto directly, never through the proxy that counts.
const ec2 = new EC2Client(motoOptions());
const rds = new RDSClient(motoOptions());
const CREDENTIALS_REF = { namespace: "driftless-system", name: "aws-creds", key: "credentials" };
/** Secret keys the providers may read, by namespace/name/key; anything else does not exist. */
const secrets = new Map<string, string>();
const secretKey = (ref: SecretKeySelector) => `${ref.namespace}/${ref.name}/${ref.key}`;
secrets.set(secretKey(CREDENTIALS_REF), MOTO_CREDENTIALS);
let proxy: MotoProxy;
const cleanups: Array<() => Promise<unknown>> = [];
const EC2_XMLNS = "http://ec2.amazonaws.com/doc/2016-11-15/";

/** A proxy of this test's own, with hooks; stopped after the file. */
async function proxyWith(hooks: ProxyHooks) {
  const p = await MotoProxy.start(env("AWS_ENDPOINT_URL"), hooks);
  cleanups.unshift(() => p.stop());
  return p;
}

function connect(provider: ManagedKindProvider, via: MotoProxy = proxy): Promise<Client> {
  const providerConfig: ProviderConfig<AwsProviderConfigSpec> = {
    apiVersion: "aws.driftless.dev/v1alpha1",
    kind: "ProviderConfig",
    metadata: { name: uniqueName("pc-many"), uid: randomUUID(), generation: 1 },
    spec: {
      credentials: { source: "Secret", secretRef: CREDENTIALS_REF },
      region: "us-east-1",
      endpoint: { url: via.url },
    },
  };
  const ctx: ConnectContext<AwsProviderConfigSpec> = {
    providerConfig,
    readSecretKey: async (ref) => {
      const value = secrets.get(secretKey(ref));
      if (value === undefined) throw new CredentialsError(`Secret key ${secretKey(ref)} does not exist`);
      return value;
    },
  };
  return provider.connect(ctx);
}

const mrOf = (
  def: { apiVersion: string; kind: string },
  forProvider: Record<string, unknown>,
  spec: Partial<ManagedResource["spec"]> = {},
): ManagedResource => ({
  apiVersion: def.apiVersion,
  kind: def.kind,
  metadata: { name: uniqueName(def.kind.toLowerCase()), uid: randomUUID(), generation: 1 },
  spec: { forProvider, providerConfigRef: { name: "pc-many" }, ...spec },
});

/** Creates the resource through the kind's own client; the engine's next reconcile would apply the rest. */
async function created(client: Client, mr: ManagedResource, name?: string) {
  const externalName = (await client.create(mr, name)).externalName ?? name ?? "";
  cleanups.push(() => client.delete(mr, externalName).catch(() => undefined));
  await client.update(mr, externalName, await client.observe(mr, externalName));
  return { mr, externalName };
}

/** The actions one call of observeMany sends, and its results. */
async function batch(client: Client, items: Array<{ mr: ManagedResource; externalName: string }>) {
  const since = proxy.calls.length;
  const many = (await client.observeMany?.(items)) ?? [];
  return { many, actions: proxy.since(since).sort() };
}

const observation = (o: Observation | Error | undefined) => {
  if (!o || o instanceof Error) throw new Error(`expected an observation, got ${o}`);
  return o;
};

const cloudVpc = async (cidr: string) =>
  (await ec2.send(new CreateVpcCommand({ CidrBlock: cidr }))).Vpc?.VpcId ?? "";
const cloudSubnet = async (vpcId: string, cidr: string, az: string) =>
  (await ec2.send(new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: cidr, AvailabilityZone: az }))).Subnet
    ?.SubnetId ?? "";
/** A well-formed id of a resource that does not exist. */
const absentId = (prefix: string, n = 0) => `${prefix}-${n.toString(16).padStart(17, "0")}`;

beforeAll(async () => {
  proxy = await MotoProxy.start(env("AWS_ENDPOINT_URL"));
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await proxy?.stop();
});

describe("VPC observeMany", () => {
  it("matches observe with one DescribeVpcs, plus DescribeVpcAttribute per DNS attribute a spec sets", async () => {
    const client = await connect(vpcProvider);
    const plain = await created(client, mrOf(VPC, { cidrBlock: "10.61.0.0/16", tags: { team: "a" } }));
    const dns = await created(
      client,
      mrOf(VPC, { cidrBlock: "10.62.0.0/16", enableDnsSupport: true, enableDnsHostnames: true }),
    );
    const drifted = await created(client, mrOf(VPC, { cidrBlock: "10.63.0.0/16", tags: { team: "c" } }));
    await ec2.send(
      new CreateTagsCommand({ Resources: [drifted.externalName], Tags: [{ Key: "team", Value: "other" }] }),
    );
    const missing = { mr: mrOf(VPC, { cidrBlock: "10.64.0.0/16" }), externalName: absentId("vpc") };
    const items = [plain, dns, drifted, missing];

    const { many, actions } = await batch(client, items);
    expect(actions).toEqual(["DescribeVpcAttribute", "DescribeVpcAttribute", "DescribeVpcs"]);
    expect(observation(many[1]).observed).toMatchObject({ enableDnsSupport: true, enableDnsHostnames: true });
    expect(observation(many[2]).observed?.tags).toEqual({ team: "other" });
    expect(many[3]).toEqual({ resourceExists: false });
    await expectObserveManyMatchesObserve(client, items);
  });

  it("asks for at most 200 ids per DescribeVpcs (EC2's filter value limit)", async () => {
    const client = await connect(vpcProvider);
    const vpc = await created(client, mrOf(VPC, { cidrBlock: "10.65.0.0/16" }));
    const absent = Array.from({ length: 200 }, (_, n) => ({
      mr: mrOf(VPC, { cidrBlock: "10.66.0.0/16" }),
      externalName: absentId("vpc", n + 1),
    }));
    const { many, actions } = await batch(client, [...absent, vpc]);
    expect(actions).toEqual(["DescribeVpcs", "DescribeVpcs"]);
    const values = (c: { params: URLSearchParams }) =>
      [...c.params.keys()].filter((k) => /^Filter\.1\.Value\.\d+$/.test(k)).length;
    expect(proxy.callsOf("DescribeVpcs").slice(-2).map(values)).toEqual([200, 1]);
    expect(many.slice(0, 200).every((o) => !(o instanceof Error) && !o.resourceExists)).toBe(true);
    expect(observation(many[200])).toMatchObject({ resourceExists: true, externalName: vpc.externalName });
  });

  it("sends each region's resources to that region: one DescribeVpcs per region, results in order", async () => {
    const client = await connect(vpcProvider);
    const east = await created(client, mrOf(VPC, { cidrBlock: "10.67.0.0/16" }));
    const west = await created(client, mrOf(VPC, { region: "us-west-2", cidrBlock: "10.68.0.0/16" }));
    const items = [east, west, { ...east }];

    const { many, actions } = await batch(client, items);
    expect(actions).toEqual(["DescribeVpcs", "DescribeVpcs"]);
    expect(many.map((o) => observation(o).observed?.region)).toEqual(["us-east-1", "us-west-2", "us-east-1"]);
    await expectObserveManyMatchesObserve(client, items);
  });
});

describe("VPC observeMany failures", () => {
  it("throws ThrottledError when DescribeVpcs is throttled, and fails one resource alone when its own read fails", async () => {
    let throttle = true;
    let failAttributesOf = "";
    const faulty = await proxyWith({
      answer: (action, params) => {
        if (action === "DescribeVpcs" && throttle && params.has("Filter.1.Name"))
          return queryError("RequestLimitExceeded", "Request limit exceeded.", EC2_XMLNS);
        if (action === "DescribeVpcAttribute" && params.get("VpcId") === failAttributesOf)
          return queryError("UnauthorizedOperation", "You are not authorized.", EC2_XMLNS);
        return undefined;
      },
    });
    const client = await connect(vpcProvider, faulty);
    const plain = await created(client, mrOf(VPC, { cidrBlock: "10.69.0.0/16" }));
    const dns = await created(client, mrOf(VPC, { cidrBlock: "10.69.0.0/16", enableDnsSupport: true }));
    const items = [plain, dns];

    await expect(client.observeMany?.(items)).rejects.toBeInstanceOf(ThrottledError);

    throttle = false;
    failAttributesOf = dns.externalName;
    const { many } = await expectObserveManyMatchesObserve(client, items);
    expect(observation(many[0]).resourceExists).toBe(true);
    expect(many[1]).toBeInstanceOf(Error);
    expect((many[1] as Error).name).toBe("UnauthorizedOperation");
  });
});

describe("Subnet observeMany", () => {
  it("matches observe with one DescribeSubnets", async () => {
    const client = await connect(subnetProvider);
    const vpcId = await cloudVpc("10.70.0.0/16");
    const subnet = (cidr: string, extra: Record<string, unknown> = {}) =>
      created(
        client,
        mrOf(Subnet, {
          vpcId,
          cidrBlock: cidr,
          availabilityZone: "us-east-1a",
          tags: { tier: "app" },
          ...extra,
        }),
      );
    const a = await subnet("10.70.1.0/24");
    const b = await subnet("10.70.2.0/24", { mapPublicIpOnLaunch: false });
    const drifted = await subnet("10.70.3.0/24", { mapPublicIpOnLaunch: false });
    await ec2.send(
      new ModifySubnetAttributeCommand({
        SubnetId: drifted.externalName,
        MapPublicIpOnLaunch: { Value: true },
      }),
    );
    const missing = {
      mr: mrOf(Subnet, { vpcId, cidrBlock: "10.70.4.0/24" }),
      externalName: absentId("subnet"),
    };
    const items = [a, b, drifted, missing];

    const { many, actions } = await batch(client, items);
    expect(actions).toEqual(["DescribeSubnets"]);
    expect(observation(many[2]).observed?.mapPublicIpOnLaunch).toBe(true);
    expect(many[3]).toEqual({ resourceExists: false });
    await expectObserveManyMatchesObserve(client, items);
  });
});

describe("SecurityGroup observeMany", () => {
  it("matches observe with one DescribeSecurityGroups: the rules are in its answer", async () => {
    const client = await connect(securityGroupProvider);
    const vpcId = await cloudVpc("10.71.0.0/16");
    const https = { protocol: "tcp", fromPort: 443, toPort: 443, cidrBlocks: ["10.0.0.0/8"] };
    const group = (extra: Record<string, unknown>) =>
      created(client, mrOf(SecurityGroup, { vpcId, ...extra }));
    const web = await group({ ingress: [https], tags: { app: "web" } });
    const bare = await group({});
    const drifted = await group({ ingress: [https] });
    await ec2.send(
      new AuthorizeSecurityGroupIngressCommand({
        GroupId: drifted.externalName,
        IpPermissions: [{ IpProtocol: "tcp", FromPort: 22, ToPort: 22, IpRanges: [{ CidrIp: "0.0.0.0/0" }] }],
      }),
    );
    const missing = { mr: mrOf(SecurityGroup, { vpcId }), externalName: absentId("sg") };
    const items = [web, bare, drifted, missing];

    const { many, actions } = await batch(client, items);
    expect(actions).toEqual(["DescribeSecurityGroups"]);
    expect(observation(many[0]).observed?.ingress).toEqual([https]);
    expect(observation(many[2]).observed?.ingress).toHaveLength(2);
    expect(many[3]).toEqual({ resourceExists: false });
    await expectObserveManyMatchesObserve(client, items);
  });
});

describe("DBInstance observeMany", () => {
  it("matches observe with one DescribeDBInstances (tags in its TagList), the master password checked", async () => {
    const client = await connect(dbInstanceProvider);
    const passwordRef = { namespace: "default", name: uniqueName("db-pw"), key: "password" };
    secrets.set(secretKey(passwordRef), "Initial-password-1");
    const instance = (extra: Record<string, unknown>, spec: Partial<ManagedResource["spec"]> = {}) => {
      const mr = mrOf(
        DBInstance,
        {
          engine: "postgres",
          dbInstanceClass: "db.t3.micro",
          allocatedStorage: 20,
          masterUsername: "admin",
          masterPasswordSecretRef: passwordRef,
          skipFinalSnapshot: true,
          ...extra,
        },
        spec,
      );
      return created(client, mr, mr.metadata.name);
    };
    const tagged = await instance({ tags: { team: "db" } });
    // Rotation compares the wanted password with the published one: same here, so nothing to set.
    const published = { namespace: "default", name: uniqueName("db-conn") };
    secrets.set(secretKey({ ...published, key: "password" }), "Initial-password-1");
    const withSecret = await instance({}, { writeConnectionSecretToRef: published });
    const drifted = await instance({ tags: { team: "db" } });
    const arn = observation(await client.observe(drifted.mr, drifted.externalName)).atProvider?.arn as string;
    await rds.send(
      new AddTagsToResourceCommand({ ResourceName: arn, Tags: [{ Key: "team", Value: "other" }] }),
    );
    const missingMr = mrOf(DBInstance, {
      engine: "postgres",
      dbInstanceClass: "db.t3.micro",
      masterUsername: "admin",
      masterPasswordSecretRef: passwordRef,
    });
    const missing = { mr: missingMr, externalName: uniqueName("db-absent") };
    const items = [tagged, withSecret, drifted, missing];

    const { many, actions } = await batch(client, items);
    expect(actions).toEqual(["DescribeDBInstances"]);
    expect(observation(many[0]).observed?.tags).toEqual({ team: "db" });
    expect(observation(many[1]).resourceUpToDate).toBeUndefined();
    expect(observation(many[2]).observed?.tags).toEqual({ team: "other" });
    expect(many[3]).toEqual({ resourceExists: false });
    await expectObserveManyMatchesObserve(client, items);
  });
});

describe("DBSubnetGroup observeMany", () => {
  it("matches observe with one DescribeDBSubnetGroups of the region, plus ListTagsForResource per group whose spec sets tags", async () => {
    const client = await connect(dbSubnetGroupProvider);
    const vpcId = await cloudVpc("10.72.0.0/16");
    const subnetIds = [
      await cloudSubnet(vpcId, "10.72.1.0/24", "us-east-1a"),
      await cloudSubnet(vpcId, "10.72.2.0/24", "us-east-1b"),
    ];
    const group = (extra: Record<string, unknown>) => {
      const mr = mrOf(DBSubnetGroup, { subnetIds, description: "observe many", ...extra });
      return created(client, mr, mr.metadata.name);
    };
    const tagged = await group({ tags: { team: "db" } });
    const untagged = await group({});
    const drifted = await group({ tags: { team: "db" } });
    const arn = observation(await client.observe(drifted.mr, drifted.externalName)).atProvider?.arn as string;
    await rds.send(
      new AddTagsToResourceCommand({ ResourceName: arn, Tags: [{ Key: "team", Value: "other" }] }),
    );
    const missing = { mr: mrOf(DBSubnetGroup, { subnetIds }), externalName: uniqueName("subnets-absent") };
    const items = [tagged, untagged, drifted, missing];

    const { many, actions } = await batch(client, items);
    expect(actions).toEqual(["DescribeDBSubnetGroups", "ListTagsForResource", "ListTagsForResource"]);
    expect(observation(many[0]).observed?.tags).toEqual({ team: "db" });
    expect(observation(many[1]).observed?.tags).toBeUndefined();
    expect(observation(many[2]).observed?.tags).toEqual({ team: "other" });
    expect(many[3]).toEqual({ resourceExists: false });
    await expectObserveManyMatchesObserve(client, items);
  });
});
