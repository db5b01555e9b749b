import {
  AuthorizeSecurityGroupIngressCommand,
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateTagsCommand,
  CreateVpcCommand,
  DeleteSecurityGroupCommand,
  DeleteSubnetCommand,
  DeleteVpcCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  DescribeVpcAttributeCommand,
  DescribeVpcsCommand,
  EC2Client,
  type IpPermission,
  ModifySubnetAttributeCommand,
  ModifyVpcAttributeCommand,
  RevokeSecurityGroupIngressCommand,
} from "@aws-sdk/client-ec2";
import {
  AddTagsToResourceCommand,
  CreateDBSubnetGroupCommand,
  DescribeDBInstancesCommand,
  DescribeDBSubnetGroupsCommand,
  ListTagsForResourceCommand,
  RDSClient,
} from "@aws-sdk/client-rds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SecurityGroup, Subnet, VPC } from "../../../shared/api/aws/ec2.ts";
import { DBInstance, DBSubnetGroup } from "../../../shared/api/aws/rds.ts";
import { Annotations, MANAGED_FINALIZER } from "../../../shared/api/meta.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { OWNER_TAG } from "../../../shared/providers/aws/ec2-common.ts";
import { createAwsProviderConfig, ensureCrds, motoOptions } from "../../support/aws.ts";
import {
  type Behaviour,
  CrashBeforeSucceeded,
  connectionData,
  describeManagedKind,
  expectAvailable,
  type ManagedType,
  type MrOptions,
  managedObject,
} from "../../support/conformance.ts";
import { defaultTags } from "../../support/default-tags.ts";
import { env, kubeConfig, newKube, uniqueName } from "../../support/env.ts";
import { MotoProxy } from "../../support/moto-proxy.ts";
import { captureLogger, conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

const moto = motoOptions();
// Arranging and checking cloud state goes to moto directly, never through the proxy that counts our calls.
const ec2 = new EC2Client(moto);
const rds = new RDSClient(moto);
const kube = newKube();
const PC = uniqueName("pc-net");
let proxy: MotoProxy;

const mrObject = (def: ManagedType, name: string, forProvider: Record<string, unknown>, o: MrOptions = {}) =>
  managedObject(def, name, PC, { forProvider, ...o });

const externalNameOf = async (def: ManagedType, name: string) =>
  (await getMr(kube, def, name))?.metadata.annotations?.[Annotations.externalName];
const uidOf = async (def: ManagedType, name: string) => (await getMr(kube, def, name))?.metadata.uid ?? "";
const secretData = (mrName: string) => connectionData(kube, mrName);
const owned = (uid: string) => [{ Name: `tag:${OWNER_TAG}`, Values: [uid] }];
const vpcOf = async (id: string) =>
  (await ec2.send(new DescribeVpcsCommand({ Filters: [{ Name: "vpc-id", Values: [id] }] }))).Vpcs?.[0];
const subnetOf = async (id: string) =>
  (await ec2.send(new DescribeSubnetsCommand({ Filters: [{ Name: "subnet-id", Values: [id] }] })))
    .Subnets?.[0];
const groupOf = async (id: string) =>
  (await ec2.send(new DescribeSecurityGroupsCommand({ Filters: [{ Name: "group-id", Values: [id] }] })))
    .SecurityGroups?.[0];
const subnetGroupOf = async (name: string) =>
  (await rds.send(new DescribeDBSubnetGroupsCommand({ DBSubnetGroupName: name })).catch(() => undefined))
    ?.DBSubnetGroups?.[0];
const tagMap = (tags: Array<{ Key?: string; Value?: string }> | undefined) =>
  Object.fromEntries((tags ?? []).map((t) => [t.Key, t.Value]));
const cloudVpc = async (cidr: string) => {
  const id = (await ec2.send(new CreateVpcCommand({ CidrBlock: cidr }))).Vpc?.VpcId ?? "";
  return id;
};
const cloudSubnet = async (vpcId: string, cidr: string, az = "us-east-1a") =>
  (await ec2.send(new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: cidr, AvailabilityZone: az }))).Subnet
    ?.SubnetId ?? "";

/** A permission in one canonical line, so rule sets compare as sorted string lists. */
const flatten = (perms: IpPermission[] | undefined) =>
  (perms ?? [])
    .flatMap((p) => [
      ...(p.IpRanges ?? []).map((r) => `${p.IpProtocol} ${p.FromPort ?? ""}-${p.ToPort ?? ""} ${r.CidrIp}`),
      ...(p.Ipv6Ranges ?? []).map(
        (r) => `${p.IpProtocol} ${p.FromPort ?? ""}-${p.ToPort ?? ""} ${r.CidrIpv6}`,
      ),
      ...(p.UserIdGroupPairs ?? []).map(
        (r) => `${p.IpProtocol} ${p.FromPort ?? ""}-${p.ToPort ?? ""} ${r.GroupId}`,
      ),
    ])
    .sort();

beforeAll(async () => {
  await ensureCrds();
  proxy = await MotoProxy.start(env("AWS_ENDPOINT_URL"));
  await createAwsProviderConfig(kube, PC);
  // The providers reach moto through the counting proxy: only the ProviderConfig's endpoint differs.
  await kube.patch(providerConfigs.aws.type, PC, { spec: { endpoint: { url: proxy.url } } });
});

afterAll(async () => {
  await proxy?.stop();
});

describe("VPC field mapping and quirks against the real API server and moto", () => {
  it("creates the VPC, records its vpc-… id as external name, tags it with the uid and writes the connection Secret", async () => {
    const name = uniqueName("vpc-create");
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    await kube.create(
      VPC,
      mrObject(VPC, name, { cidrBlock: "10.10.0.0/16", enableDnsHostnames: true, tags: { team: "net" } }),
    );

    await settle(r, keyOf(VPC, name));

    const mr = await getMr<Record<string, unknown>>(kube, VPC, name);
    expectAvailable(mr);
    const id = mr?.metadata.annotations?.[Annotations.externalName] ?? "";
    expect(id).toMatch(/^vpc-[0-9a-f]+$/);
    const vpc = await vpcOf(id);
    expect(vpc).toMatchObject({ CidrBlock: "10.10.0.0/16", InstanceTenancy: "default" });
    expect(tagMap(vpc?.Tags)).toEqual({
      ...defaultTags(VPC, name, PC),
      team: "net",
      [OWNER_TAG]: mr?.metadata.uid,
    });
    const hostnames = await ec2.send(
      new DescribeVpcAttributeCommand({ VpcId: id, Attribute: "enableDnsHostnames" }),
    );
    expect(hostnames.EnableDnsHostnames?.Value).toBe(true);
    // Late-initialized from the cloud; the user's values stay; the ownership tag never shows in the spec.
    expect(mr?.spec.forProvider).toEqual({
      cidrBlock: "10.10.0.0/16",
      enableDnsHostnames: true,
      instanceTenancy: "default",
      region: "us-east-1",
      tags: { team: "net" },
    });
    expect(mr?.status?.atProvider).toMatchObject({
      vpcId: id,
      arn: `arn:aws:ec2:us-east-1:123456789012:vpc/${id}`,
      state: "available",
    });
    expect(await secretData(name)).toEqual({
      id,
      arn: `arn:aws:ec2:us-east-1:123456789012:vpc/${id}`,
      cidrBlock: "10.10.0.0/16",
    });
    expect(proxy.callsOf("CreateVpc", { CidrBlock: "10.10.0.0/16" })).toHaveLength(1);
    expect(lines.join("\n") + JSON.stringify(mr)).not.toContain("testing-secret-value");
  });

  it("applies spec changes and corrects out-of-band changes to tags and DNS attributes", async () => {
    const name = uniqueName("vpc-update");
    const r = newReconciler(kube);
    await kube.create(
      VPC,
      mrObject(VPC, name, { cidrBlock: "10.12.0.0/16", enableDnsSupport: true, tags: { a: "1" } }),
    );
    await settle(r, keyOf(VPC, name));
    const id = (await externalNameOf(VPC, name)) ?? "";

    await kube.patch(VPC, name, {
      spec: { forProvider: { enableDnsHostnames: true, tags: { a: "2", b: "3" } } },
    });
    await settle(r, keyOf(VPC, name));
    expect(tagMap((await vpcOf(id))?.Tags)).toMatchObject({ a: "2", b: "3" });
    const attr = (a: "enableDnsHostnames" | "enableDnsSupport") =>
      ec2.send(new DescribeVpcAttributeCommand({ VpcId: id, Attribute: a }));
    expect((await attr("enableDnsHostnames")).EnableDnsHostnames?.Value).toBe(true);

    // Someone changes the VPC directly.
    await ec2.send(new ModifyVpcAttributeCommand({ VpcId: id, EnableDnsHostnames: { Value: false } }));
    await ec2.send(new CreateTagsCommand({ Resources: [id], Tags: [{ Key: "a", Value: "hacked" }] }));
    await settle(r, keyOf(VPC, name));

    expect((await attr("enableDnsHostnames")).EnableDnsHostnames?.Value).toBe(true);
    const tags = tagMap((await vpcOf(id))?.Tags);
    expect(tags).toEqual({
      ...defaultTags(VPC, name, PC),
      a: "2",
      b: "3",
      [OWNER_TAG]: await uidOf(VPC, name),
    });
  });

  it("reports an immutable field change in Synced and leaves the cloud untouched", async () => {
    const name = uniqueName("vpc-immutable");
    const r = newReconciler(kube);
    await kube.create(VPC, mrObject(VPC, name, { cidrBlock: "10.13.0.0/16" }));
    await settle(r, keyOf(VPC, name));
    const id = (await externalNameOf(VPC, name)) ?? "";
    const creates = proxy.callsOf("CreateVpc").length;

    await kube.patch(VPC, name, { spec: { forProvider: { cidrBlock: "10.99.0.0/16" } } });
    const [res] = await settle(r, keyOf(VPC, name), 1);

    expect(res?.outcome).toBe("error");
    const synced = conditionOf(await getMr(kube, VPC, name), "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain(
      'cannot update immutable field(s) cidrBlock (spec: "10.99.0.0/16", cloud: "10.13.0.0/16")',
    );
    expect((await vpcOf(id))?.CidrBlock).toBe("10.13.0.0/16");
    expect(proxy.callsOf("CreateVpc")).toHaveLength(creates); // never recreated
  });

  it("waits while AWS refuses to delete a VPC that still has a subnet (DependencyViolation), then deletes it", async () => {
    const name = uniqueName("vpc-depviol");
    const r = newReconciler(kube);
    await kube.create(VPC, mrObject(VPC, name, { cidrBlock: "10.17.0.0/16" }));
    await settle(r, keyOf(VPC, name));
    const id = (await externalNameOf(VPC, name)) ?? "";
    const subnetId = await cloudSubnet(id, "10.17.1.0/24"); // not managed by driftless
    expect(await kube.getSecret("default", `${name}-conn`)).toBeDefined();

    await kube.delete(VPC, name);
    const first = await r.reconcile(keyOf(VPC, name));
    const second = await r.reconcile(keyOf(VPC, name));

    // Retried, not given up: Ready=False Deleting with the reason, Synced stays True, the finalizer held.
    expect([first.outcome, second.outcome]).toEqual(["deleting", "deleting"]);
    expect(second.requeueAfterMs).toBeGreaterThan(0);
    const mid = await getMr(kube, VPC, name);
    expect(conditionOf(mid, "Ready")).toMatchObject({ status: "False", reason: "Deleting" });
    expect(conditionOf(mid, "Ready")?.message).toContain(
      `VPC ${id} still has dependent resources, retrying until they are deleted (DependencyViolation:`,
    );
    expect(conditionOf(mid, "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
    expect(mid?.metadata.finalizers).toContain(MANAGED_FINALIZER);
    expect(await vpcOf(id)).toBeDefined();

    await ec2.send(new DeleteSubnetCommand({ SubnetId: subnetId }));
    const results = await settle(r, keyOf(VPC, name));

    expect(results.at(-1)?.outcome).toBe("deleted");
    expect(await vpcOf(id)).toBeUndefined();
    expect(await getMr(kube, VPC, name)).toBeUndefined();
    expect(await kube.getSecret("default", `${name}-conn`)).toBeUndefined();
  });

  it("names the ProviderConfig when its credentials are bad, and creates nothing", async () => {
    const badPc = uniqueName("pc-net-bad");
    await createAwsProviderConfig(kube, badPc, { credentials: "[default]\naws_access_key_id = only-half\n" });
    const name = uniqueName("vpc-badcreds");
    const r = newReconciler(kube);
    await kube.create(VPC, mrObject(VPC, name, { cidrBlock: "10.19.0.0/16" }, { providerConfig: badPc }));

    await settle(r, keyOf(VPC, name), 1);

    const mr = await getMr(kube, VPC, name);
    const message = conditionOf(mr, "Synced")?.message;
    expect(message).toContain(`ProviderConfig "${badPc}"`);
    expect(message).toContain("aws_secret_access_key");
    expect(message).not.toContain("only-half");
    const vpcs = await ec2.send(new DescribeVpcsCommand({ Filters: owned(mr?.metadata.uid ?? "") }));
    expect(vpcs.Vpcs).toEqual([]);
  });
});

/** The proxy's calls (action → count) while `fn` runs; tests in a file run one at a time. */
async function callsDuring(fn: () => Promise<unknown>) {
  const mark = proxy.calls.length;
  await fn();
  const counts: Record<string, number> = {};
  for (const action of proxy.since(mark)) counts[action] = (counts[action] ?? 0) + 1;
  return counts;
}
const vpcCidrs: Partial<Record<Behaviour, string>> = {
  inSync: "10.11.0.0/16",
  paused: "10.14.0.0/16",
  orphan: "10.18.0.0/16",
  concurrentCreate: "10.23.0.0/16",
  emptyPolicies: "10.24.0.0/16",
  importMissing: "10.25.0.0/16",
};
const deleteVpc = async (id: string) => {
  await ec2.send(new DeleteVpcCommand({ VpcId: id }));
};

describeManagedKind({
  type: VPC,
  cloud: "moto",
  prefix: "vpc",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: (b) => ({
    cidrBlock: vpcCidrs[b] ?? "10.26.0.0/16",
    ...(b === "inSync" ? { tags: { a: "1" } } : {}),
  }),
  exists: async (id) => (await vpcOf(id)) !== undefined,
  owned: async (uid) =>
    (await ec2.send(new DescribeVpcsCommand({ Filters: owned(uid) }))).Vpcs?.map((v) => v.VpcId ?? "") ?? [],
  // Observing a VPC is one DescribeVpcs call, and nothing else.
  requests: { during: callsDuring, isRead: (action) => action === "DescribeVpcs" },
  inSyncRequests: { DescribeVpcs: 1 },
  cleanup: deleteVpc,
  adopt: {
    arrange: () => cloudVpc("10.16.0.0/16"),
    forProvider: { cidrBlock: "10.16.0.0/16", tags: { adopted: "yes" } },
    // Adopted without them, it gets Crossplane's default tags with the first write of its tags.
    check: async ({ name, cloudName }) =>
      expect(tagMap((await vpcOf(cloudName))?.Tags)).toEqual({
        ...defaultTags(VPC, name, PC),
        adopted: "yes",
      }),
  },
  import: {
    arrange: async () => {
      const id = await cloudVpc("10.15.0.0/16");
      await ec2.send(new CreateTagsCommand({ Resources: [id], Tags: [{ Key: "owner", Value: "legacy" }] }));
      return id;
    },
    expectSpec: (forProvider) =>
      expect(forProvider).toMatchObject({
        cidrBlock: "10.15.0.0/16",
        instanceTenancy: "default",
        tags: { owner: "legacy" },
      }),
    change: { tags: { owner: "me" } },
    expectUnchanged: async (id) => expect(tagMap((await vpcOf(id))?.Tags)).toEqual({ owner: "legacy" }),
    after: ({ cloudName }) => deleteVpc(cloudName),
  },
  ownTests: {
    delete: "AWS refuses to delete a VPC with dependents: proved above with DependencyViolation",
    crashRecovery: "provider-chosen ids: proved below for VPC, Subnet and SecurityGroup",
  },
});

const BEHAVIOURS: Behaviour[] = [
  "paused",
  "emptyPolicies",
  "inSync",
  "externalName",
  "delete",
  "orphan",
  "concurrentCreate",
  "crashRecovery",
  "import",
  "importMissing",
  "missingProviderConfig",
];
/** A /24 of its own per behaviour inside `vpc`'s /16 (10.x.0.0/16), so no two rows' subnets overlap. */
const cidrFor = (b: Behaviour, second: number) => `10.${second}.${BEHAVIOURS.indexOf(b) + 1}.0/24`;
/** One VPC per kind's rows, made on first use. */
const vpcFor = (cidr: string) => {
  let id: Promise<string> | undefined;
  return () => {
    id ??= cloudVpc(cidr);
    return id;
  };
};
const subnetRowsVpc = vpcFor("10.40.0.0/16");
const groupRowsVpc = vpcFor("10.41.0.0/16");
const subnetGroupRowsVpc = vpcFor("10.42.0.0/16");

describeManagedKind({
  type: Subnet,
  cloud: "moto",
  prefix: "subnet",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: async (b) => ({
    vpcId: await subnetRowsVpc(),
    cidrBlock: cidrFor(b, 40),
    ...(b === "inSync" ? { tags: { a: "1" } } : {}),
  }),
  exists: async (id) => (await subnetOf(id)) !== undefined,
  owned: async (uid) =>
    (await ec2.send(new DescribeSubnetsCommand({ Filters: owned(uid) }))).Subnets?.map(
      (s) => s.SubnetId ?? "",
    ) ?? [],
  requests: { during: callsDuring, isRead: (action) => action === "DescribeSubnets" },
  inSyncRequests: { DescribeSubnets: 1 },
  cleanup: async (id) => {
    await ec2.send(new DeleteSubnetCommand({ SubnetId: id }));
  },
  adopt: {
    arrange: async () => cloudSubnet(await subnetRowsVpc(), "10.40.100.0/24"),
    forProvider: { cidrBlock: "10.40.100.0/24", tags: { adopted: "yes" } },
    // Adopted without them, it gets Crossplane's default tags with the first write of its tags.
    check: async ({ name, cloudName }) =>
      expect(tagMap((await subnetOf(cloudName))?.Tags)).toEqual({
        ...defaultTags(Subnet, name, PC),
        adopted: "yes",
      }),
  },
  import: {
    arrange: async () => cloudSubnet(await subnetRowsVpc(), "10.40.101.0/24"),
    expectSpec: async (forProvider) =>
      expect(forProvider).toMatchObject({ vpcId: await subnetRowsVpc(), cidrBlock: "10.40.101.0/24" }),
    change: { tags: { owner: "me" } },
    expectUnchanged: async (id) => expect(tagMap((await subnetOf(id))?.Tags)).toEqual({}),
    after: async ({ cloudName }) => {
      await ec2.send(new DeleteSubnetCommand({ SubnetId: cloudName }));
    },
  },
  ownTests: { crashRecovery: "provider-chosen ids: proved below for VPC, Subnet and SecurityGroup" },
});

describeManagedKind({
  type: SecurityGroup,
  cloud: "moto",
  prefix: "sg",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: async (b, name) => ({
    vpcId: await groupRowsVpc(),
    groupName: name,
    description: "conformance",
    ...(b === "inSync" ? { tags: { a: "1" } } : {}),
  }),
  exists: async (id) => (await groupOf(id)) !== undefined,
  owned: async (uid) =>
    (await ec2.send(new DescribeSecurityGroupsCommand({ Filters: owned(uid) }))).SecurityGroups?.map(
      (g) => g.GroupId ?? "",
    ) ?? [],
  requests: { during: callsDuring, isRead: (action) => action === "DescribeSecurityGroups" },
  cleanup: async (id) => {
    await ec2.send(new DeleteSecurityGroupCommand({ GroupId: id }));
  },
  adopt: {
    arrange: async () =>
      (
        await ec2.send(
          new CreateSecurityGroupCommand({
            VpcId: await groupRowsVpc(),
            GroupName: uniqueName("sg-adopted"),
            Description: "adopted",
          }),
        )
      ).GroupId ?? "",
    forProvider: { description: "adopted", tags: { adopted: "yes" } },
    // Adopted without them, it gets Crossplane's default tags with the first write of its tags.
    check: async ({ name, cloudName }) =>
      expect(tagMap((await groupOf(cloudName))?.Tags)).toEqual({
        ...defaultTags(SecurityGroup, name, PC),
        adopted: "yes",
      }),
  },
  ownTests: {
    crashRecovery: "provider-chosen ids: proved below for VPC, Subnet and SecurityGroup",
  },
});

describeManagedKind({
  type: DBSubnetGroup,
  cloud: "moto",
  prefix: "dbsg",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: async (b) => {
    const vpc = await subnetGroupRowsVpc();
    const n = BEHAVIOURS.indexOf(b) + 1;
    return {
      description: "conformance",
      subnetIds: [
        await cloudSubnet(vpc, `10.42.${n * 2}.0/24`, "us-east-1a"),
        await cloudSubnet(vpc, `10.42.${n * 2 + 1}.0/24`, "us-east-1b"),
      ],
    };
  },
  exists: async (name) => (await subnetGroupOf(name)) !== undefined,
  count: async (name) => ((await subnetGroupOf(name)) ? 1 : 0),
  requests: {
    during: callsDuring,
    isRead: (action) => action === "DescribeDBSubnetGroups" || action === "ListTagsForResource",
  },
});

describe("provider-chosen ids survive a crash between Create and recording the id", () => {
  const cases = [
    {
      kind: "VPC",
      def: VPC,
      forProvider: async () => ({ cidrBlock: "10.20.0.0/16" }),
      count: async (uid: string) =>
        (await ec2.send(new DescribeVpcsCommand({ Filters: owned(uid) }))).Vpcs?.map((v) => v.VpcId) ?? [],
    },
    {
      kind: "Subnet",
      def: Subnet,
      forProvider: async () => ({ vpcId: await cloudVpc("10.21.0.0/16"), cidrBlock: "10.21.1.0/24" }),
      count: async (uid: string) =>
        (await ec2.send(new DescribeSubnetsCommand({ Filters: owned(uid) }))).Subnets?.map(
          (s) => s.SubnetId,
        ) ?? [],
    },
    {
      kind: "SecurityGroup",
      def: SecurityGroup,
      forProvider: async () => ({ vpcId: await cloudVpc("10.22.0.0/16") }),
      count: async (uid: string) =>
        (await ec2.send(new DescribeSecurityGroupsCommand({ Filters: owned(uid) }))).SecurityGroups?.map(
          (g) => g.GroupId,
        ) ?? [],
    },
  ];

  for (const c of cases) {
    it(`${c.kind}: finds it by its ownership tag and records it, with exactly one in the cloud`, async () => {
      const name = uniqueName(`crash-${c.kind.toLowerCase()}`);
      await kube.create(c.def, mrObject(c.def, name, await c.forProvider()));
      const uid = await uidOf(c.def, name);

      const crashing = newReconciler(new CrashBeforeSucceeded(kubeConfig()), { retryBaseMs: 1 });
      const first = await crashing.reconcile(keyOf(c.def, name));
      expect(first.outcome).toBe("error");
      expect(crashing.externalCalls.create).toBe(1);
      const stuck = await getMr(kube, c.def, name);
      expect(stuck?.metadata.annotations?.[Annotations.createPending]).toBeDefined();
      expect(stuck?.metadata.annotations?.[Annotations.externalName]).toBeUndefined();
      const [cloudId] = await c.count(uid);
      expect(cloudId).toBeDefined();

      const { lines, logger } = captureLogger();
      const restarted = newReconciler(kube, { logger });
      await settle(restarted, keyOf(c.def, name));

      expect(restarted.externalCalls.create).toBe(0);
      expect(lines.join("\n")).toContain("recovered an interrupted create");
      const mr = await getMr(kube, c.def, name);
      expect(mr?.metadata.annotations?.[Annotations.externalName]).toBe(cloudId);
      expect(conditionOf(mr, "Ready")?.status).toBe("True");
      expect(await c.count(uid)).toEqual([cloudId]);
    });
  }
});

describe("Subnet against the real API server and moto", () => {
  it("waits for its VPC to be Ready, then creates itself in it (vpcIdRef)", async () => {
    const vpcName = uniqueName("sn-vpc");
    const name = uniqueName("sn-create");
    const r = newReconciler(kube);
    await kube.create(VPC, mrObject(VPC, vpcName, { cidrBlock: "10.30.0.0/16" }));
    await kube.create(
      Subnet,
      mrObject(Subnet, name, {
        vpcIdRef: { name: vpcName },
        cidrBlock: "10.30.1.0/24",
        tags: { tier: "private" },
      }),
    );

    const [blocked] = await settle(r, keyOf(Subnet, name), 1);
    expect(blocked?.outcome).toBe("waiting");
    expect(conditionOf(await getMr(kube, Subnet, name), "Synced")?.message).toContain(
      "referenced resource may not yet be ready",
    );
    expect(r.externalCalls.create).toBe(0);

    await settle(r, keyOf(VPC, vpcName));
    await settle(r, keyOf(Subnet, name));

    const vpcId = await externalNameOf(VPC, vpcName);
    const mr = await getMr<Record<string, unknown>>(kube, Subnet, name);
    const id = mr?.metadata.annotations?.[Annotations.externalName] ?? "";
    expect(id).toMatch(/^subnet-[0-9a-f]+$/);
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    expect(mr?.spec.forProvider).toMatchObject({
      vpcId,
      cidrBlock: "10.30.1.0/24",
      availabilityZone: expect.stringMatching(/^us-east-1[a-f]$/), // AWS picked it: late-initialized
      mapPublicIpOnLaunch: false,
    });
    const subnet = await subnetOf(id);
    expect(subnet).toMatchObject({ VpcId: vpcId, CidrBlock: "10.30.1.0/24" });
    expect(tagMap(subnet?.Tags)).toEqual({
      ...defaultTags(Subnet, name, PC),
      tier: "private",
      [OWNER_TAG]: mr?.metadata.uid,
    });
    expect(Object.keys(await secretData(name)).sort()).toEqual([
      "arn",
      "availabilityZone",
      "cidrBlock",
      "id",
    ]);
  });

  it("applies spec changes, corrects drift, refuses immutable changes and deletes the subnet", async () => {
    const vpcId = await cloudVpc("10.31.0.0/16");
    const name = uniqueName("sn-update");
    const r = newReconciler(kube);
    await kube.create(
      Subnet,
      mrObject(Subnet, name, { vpcId, cidrBlock: "10.31.1.0/24", availabilityZone: "us-east-1b" }),
    );
    await settle(r, keyOf(Subnet, name));
    const id = (await externalNameOf(Subnet, name)) ?? "";

    await kube.patch(Subnet, name, {
      spec: { forProvider: { mapPublicIpOnLaunch: true, tags: { a: "1" } } },
    });
    await settle(r, keyOf(Subnet, name));
    expect(await subnetOf(id)).toMatchObject({ MapPublicIpOnLaunch: true, AvailabilityZone: "us-east-1b" });
    expect(tagMap((await subnetOf(id))?.Tags)).toMatchObject({ a: "1" });

    await ec2.send(new ModifySubnetAttributeCommand({ SubnetId: id, MapPublicIpOnLaunch: { Value: false } }));
    await settle(r, keyOf(Subnet, name));
    expect((await subnetOf(id))?.MapPublicIpOnLaunch).toBe(true);

    await kube.patch(Subnet, name, { spec: { forProvider: { cidrBlock: "10.31.2.0/24" } } });
    const [res] = await settle(r, keyOf(Subnet, name), 1);
    expect(res?.outcome).toBe("error");
    expect(conditionOf(await getMr(kube, Subnet, name), "Synced")?.message).toContain(
      "cannot update immutable field(s) cidrBlock",
    );
    expect((await subnetOf(id))?.CidrBlock).toBe("10.31.1.0/24");

    await kube.delete(Subnet, name);
    await settle(r, keyOf(Subnet, name));
    expect(await getMr(kube, Subnet, name)).toBeUndefined();
    expect(await subnetOf(id)).toBeUndefined();
    await ec2.send(new DeleteVpcCommand({ VpcId: vpcId }));
  });
});

describe("SecurityGroup against the real API server and moto", () => {
  const dbRule = {
    protocol: "tcp",
    fromPort: 5432,
    toPort: 5432,
    cidrBlocks: ["10.40.0.0/16", "10.41.0.0/16"],
  };

  it("creates the group, applies its inbound rules as a set and leaves unmanaged egress alone", async () => {
    const vpcId = await cloudVpc("10.40.0.0/16");
    const name = uniqueName("sg-create");
    const r = newReconciler(kube);
    await kube.create(
      SecurityGroup,
      mrObject(SecurityGroup, name, {
        vpcId,
        // Spelled the way people write them: a protocol number, upper-case IPv6, a group of CIDRs.
        ingress: [
          dbRule,
          {
            protocol: "6",
            fromPort: 443,
            toPort: 443,
            ipv6CidrBlocks: ["2001:DB8::/32"],
            description: "https",
          },
          { protocol: "icmp", cidrBlocks: ["10.40.0.0/16"] },
        ],
        tags: { app: "db" },
      }),
    );

    await settle(r, keyOf(SecurityGroup, name));

    const mr = await getMr<Record<string, unknown>>(kube, SecurityGroup, name);
    const id = mr?.metadata.annotations?.[Annotations.externalName] ?? "";
    expect(id).toMatch(/^sg-[0-9a-f]+$/);
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    expect(conditionOf(mr, "Synced")?.status).toBe("True");
    const group = await groupOf(id);
    expect(group).toMatchObject({ GroupName: name, Description: "Managed by driftless", VpcId: vpcId });
    expect(flatten(group?.IpPermissions)).toEqual([
      "icmp -1--1 10.40.0.0/16",
      "tcp 443-443 2001:DB8::/32",
      "tcp 5432-5432 10.40.0.0/16",
      "tcp 5432-5432 10.41.0.0/16",
    ]);
    // egress is unset: AWS's allow-all stays, and it is neither late-initialized nor drift.
    expect(flatten(group?.IpPermissionsEgress)).toEqual(["-1 - 0.0.0.0/0"]);
    expect(mr?.spec.forProvider).not.toHaveProperty("egress");
    expect(mr?.spec.forProvider).toMatchObject({ groupName: name, description: "Managed by driftless" });
    expect(proxy.callsOf(/^RevokeSecurityGroup/, { GroupId: id })).toHaveLength(0);

    // In sync: the rule set in another order and spelling is no drift — no writes, no rule calls.
    const counted = new Kube(kubeConfig());
    const r2 = newReconciler(counted);
    await r2.reconcile(keyOf(SecurityGroup, name));
    counted.resetStats();
    const mark = proxy.calls.length;
    expect((await r2.reconcile(keyOf(SecurityGroup, name))).outcome).toBe("in-sync");
    expect(counted.stats.writes).toBe(0);
    expect(proxy.since(mark)).toEqual(["DescribeSecurityGroups"]);
  });

  it("revokes a rule added out of band, restores one removed out of band, and then stays still", async () => {
    const vpcId = await cloudVpc("10.42.0.0/16");
    const name = uniqueName("sg-drift");
    const r = newReconciler(kube);
    await kube.create(SecurityGroup, mrObject(SecurityGroup, name, { vpcId, ingress: [dbRule] }));
    await settle(r, keyOf(SecurityGroup, name));
    const id = (await externalNameOf(SecurityGroup, name)) ?? "";

    await ec2.send(
      new AuthorizeSecurityGroupIngressCommand({
        GroupId: id,
        IpPermissions: [{ IpProtocol: "tcp", FromPort: 22, ToPort: 22, IpRanges: [{ CidrIp: "0.0.0.0/0" }] }],
      }),
    );
    await ec2.send(
      new RevokeSecurityGroupIngressCommand({
        GroupId: id,
        IpPermissions: [
          { IpProtocol: "tcp", FromPort: 5432, ToPort: 5432, IpRanges: [{ CidrIp: "10.41.0.0/16" }] },
        ],
      }),
    );
    const results = await settle(r, keyOf(SecurityGroup, name));

    expect(results.map((x) => x.outcome)).toContain("updated");
    expect(flatten((await groupOf(id))?.IpPermissions)).toEqual([
      "tcp 5432-5432 10.40.0.0/16",
      "tcp 5432-5432 10.41.0.0/16",
    ]);
    const mark = proxy.calls.length;
    expect((await r.reconcile(keyOf(SecurityGroup, name))).outcome).toBe("in-sync");
    expect(proxy.since(mark)).toEqual(["DescribeSecurityGroups"]);
  });

  it("manages egress once it is set: [] removes AWS's allow-all, a list makes exactly those rules", async () => {
    const vpcId = await cloudVpc("10.43.0.0/16");
    const name = uniqueName("sg-egress");
    const r = newReconciler(kube);
    await kube.create(SecurityGroup, mrObject(SecurityGroup, name, { vpcId, egress: [] }));
    await settle(r, keyOf(SecurityGroup, name));
    const id = (await externalNameOf(SecurityGroup, name)) ?? "";
    expect(flatten((await groupOf(id))?.IpPermissionsEgress)).toEqual([]);

    await kube.patch(SecurityGroup, name, {
      spec: {
        forProvider: { egress: [{ protocol: "tcp", fromPort: 443, toPort: 443, cidrBlocks: ["0.0.0.0/0"] }] },
      },
    });
    await settle(r, keyOf(SecurityGroup, name));
    expect(flatten((await groupOf(id))?.IpPermissionsEgress)).toEqual(["tcp 443-443 0.0.0.0/0"]);
  });

  it("refuses an immutable change and deletes the group", async () => {
    const vpcId = await cloudVpc("10.44.0.0/16");
    const name = uniqueName("sg-immutable");
    const r = newReconciler(kube);
    await kube.create(SecurityGroup, mrObject(SecurityGroup, name, { vpcId, description: "first" }));
    await settle(r, keyOf(SecurityGroup, name));
    const id = (await externalNameOf(SecurityGroup, name)) ?? "";

    await kube.patch(SecurityGroup, name, { spec: { forProvider: { description: "second" } } });
    const [res] = await settle(r, keyOf(SecurityGroup, name), 1);
    expect(res?.outcome).toBe("error");
    expect(conditionOf(await getMr(kube, SecurityGroup, name), "Synced")?.message).toContain(
      'cannot update immutable field(s) description (spec: "second", cloud: "first")',
    );
    expect((await groupOf(id))?.Description).toBe("first");

    await kube.delete(SecurityGroup, name);
    await settle(r, keyOf(SecurityGroup, name));
    expect(await getMr(kube, SecurityGroup, name)).toBeUndefined();
    expect(await groupOf(id)).toBeUndefined();
  });
});

describe("DBSubnetGroup against the real API server and moto", () => {
  it("resolves its subnets from Subnet references (a list), creates, updates, corrects drift and deletes", async () => {
    const vpcId = await cloudVpc("10.50.0.0/16");
    const [a, b] = [uniqueName("dbsng-sn-a"), uniqueName("dbsng-sn-b")];
    const name = uniqueName("dbsng");
    const r = newReconciler(kube);
    await kube.create(
      Subnet,
      mrObject(Subnet, a, { vpcId, cidrBlock: "10.50.1.0/24", availabilityZone: "us-east-1a" }),
    );
    await kube.create(
      Subnet,
      mrObject(Subnet, b, { vpcId, cidrBlock: "10.50.2.0/24", availabilityZone: "us-east-1b" }),
    );
    await kube.create(
      DBSubnetGroup,
      mrObject(DBSubnetGroup, name, { subnetIdRefs: [{ name: a }, { name: b }], tags: { team: "data" } }),
    );

    const [blocked] = await settle(r, keyOf(DBSubnetGroup, name), 1);
    expect(blocked?.outcome).toBe("waiting");
    expect(r.externalCalls.create).toBe(0);
    await settle(r, keyOf(Subnet, a));
    await settle(r, keyOf(Subnet, b));
    await settle(r, keyOf(DBSubnetGroup, name));

    const [idA, idB] = [await externalNameOf(Subnet, a), await externalNameOf(Subnet, b)];
    const mr = await getMr<Record<string, unknown>>(kube, DBSubnetGroup, name);
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    expect(mr?.metadata.annotations?.[Annotations.externalName]).toBe(name);
    expect(mr?.spec.forProvider).toMatchObject({
      subnetIds: [idA, idB],
      description: "Managed by driftless",
    });
    const group = await subnetGroupOf(name);
    expect(group?.Subnets?.map((s) => s.SubnetIdentifier).sort()).toEqual([idA, idB].sort());
    expect(group?.VpcId).toBe(vpcId);
    const arn = group?.DBSubnetGroupArn ?? "";
    expect(await secretData(name)).toEqual({ name, arn });

    // Update: another subnet and a new description (ModifyDBSubnetGroup takes both at once).
    const idC = await cloudSubnet(vpcId, "10.50.3.0/24", "us-east-1c");
    await kube.patch(DBSubnetGroup, name, {
      spec: { forProvider: { subnetIdRefs: null, subnetIds: [idC, idA], description: "db subnets" } },
    });
    await settle(r, keyOf(DBSubnetGroup, name));
    const updated = await subnetGroupOf(name);
    expect(updated?.Subnets?.map((s) => s.SubnetIdentifier).sort()).toEqual([idA, idC].sort());
    expect(updated?.DBSubnetGroupDescription).toBe("db subnets");
    expect(proxy.callsOf("ModifyDBSubnetGroup", { DBSubnetGroupName: name })).toHaveLength(1);

    // Drift: a tag changed directly is set back; the group, as a set, does not flap.
    await rds.send(new AddTagsToResourceCommand({ ResourceName: arn, Tags: [{ Key: "team", Value: "x" }] }));
    await settle(r, keyOf(DBSubnetGroup, name));
    const tags = (await rds.send(new ListTagsForResourceCommand({ ResourceName: arn }))).TagList;
    expect(tagMap(tags)).toEqual({ ...defaultTags(DBSubnetGroup, name, PC), team: "data" });
    expect(proxy.callsOf("ModifyDBSubnetGroup", { DBSubnetGroupName: name })).toHaveLength(1);

    // Immutable: the region.
    await kube.patch(DBSubnetGroup, name, { spec: { forProvider: { region: "eu-west-1" } } });
    const [res] = await settle(r, keyOf(DBSubnetGroup, name), 1);
    expect(res?.outcome).toBe("error");
    expect(conditionOf(await getMr(kube, DBSubnetGroup, name), "Synced")?.message).toContain(
      // A changed region is a changed home: refused before any read there (issue 36).
      'lives in region "us-east-1", but its spec and ProviderConfig now reach region "eu-west-1"',
    );
    await kube.patch(DBSubnetGroup, name, { spec: { forProvider: { region: "us-east-1" } } });

    await kube.delete(DBSubnetGroup, name);
    await settle(r, keyOf(DBSubnetGroup, name));
    expect(await getMr(kube, DBSubnetGroup, name)).toBeUndefined();
    expect(await subnetGroupOf(name)).toBeUndefined();
  });
});

describe("DBInstance on a private network", () => {
  it("is placed in a DB subnet group with VPC security groups, compared as a set and changed in place", async () => {
    const vpcId = await cloudVpc("10.55.0.0/16");
    const subnets = [
      await cloudSubnet(vpcId, "10.55.1.0/24", "us-east-1a"),
      await cloudSubnet(vpcId, "10.55.2.0/24", "us-east-1b"),
    ];
    const sngName = uniqueName("db-sng");
    await rds.send(
      new CreateDBSubnetGroupCommand({
        DBSubnetGroupName: sngName,
        DBSubnetGroupDescription: "d",
        SubnetIds: subnets,
      }),
    );
    const sg = async (n: string) =>
      (
        await ec2.send(
          new CreateSecurityGroupCommand({ GroupName: uniqueName(n), Description: n, VpcId: vpcId }),
        )
      ).GroupId ?? "";
    const [sg1, sg2] = [await sg("db-sg1"), await sg("db-sg2")];
    const name = uniqueName("db-private");
    const r = newReconciler(kube);
    await kube.create(
      DBInstance,
      mrObject(DBInstance, name, {
        engine: "postgres",
        dbInstanceClass: "db.t3.micro",
        allocatedStorage: 20,
        masterUsername: "dbadmin",
        skipFinalSnapshot: true,
        applyImmediately: true,
        dbSubnetGroupName: sngName.toUpperCase(), // RDS keeps it in lower case: no drift
        vpcSecurityGroupIds: [sg2, sg1],
      }),
    );

    await settle(r, keyOf(DBInstance, name));
    const db = async () =>
      (await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: name }))).DBInstances?.[0];
    expect(conditionOf(await getMr(kube, DBInstance, name), "Synced")?.status).toBe("True");
    expect((await db())?.DBSubnetGroup?.DBSubnetGroupName).toBe(sngName);
    expect((await db())?.VpcSecurityGroups?.map((g) => g.VpcSecurityGroupId).sort()).toEqual(
      [sg1, sg2].sort(),
    );
    expect(proxy.callsOf("ModifyDBInstance", { DBInstanceIdentifier: name })).toHaveLength(0);

    await kube.patch(DBInstance, name, { spec: { forProvider: { vpcSecurityGroupIds: [sg1] } } });
    await settle(r, keyOf(DBInstance, name));

    expect((await db())?.VpcSecurityGroups?.map((g) => g.VpcSecurityGroupId)).toEqual([sg1]);
    expect(proxy.callsOf("ModifyDBInstance", { DBInstanceIdentifier: name })).toHaveLength(1);
    await kube.delete(DBInstance, name);
    await settle(r, keyOf(DBInstance, name));
    expect(await getMr(kube, DBInstance, name)).toBeUndefined();
  });
});
