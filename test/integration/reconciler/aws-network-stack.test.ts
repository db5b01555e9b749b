import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  AuthorizeSecurityGroupIngressCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  DescribeVpcsCommand,
  EC2Client,
} from "@aws-sdk/client-ec2";
import { DescribeDBInstancesCommand, DescribeDBSubnetGroupsCommand, RDSClient } from "@aws-sdk/client-rds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { SecurityGroup, Subnet, VPC } from "../../../shared/api/aws/ec2.ts";
import { DBInstance, DBSubnetGroup } from "../../../shared/api/aws/rds.ts";
import type { ManagedKindDef, ManagedResource } from "../../../shared/api/managed.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import { OWNER_TAG } from "../../../shared/providers/aws/ec2-common.ts";
import type { ReconcileResult } from "../../../shared/reconciler/reconciler.ts";
import { createAwsProviderConfig, ensureCrds, motoOptions } from "../../support/aws.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { MotoProxy } from "../../support/moto-proxy.ts";
import { conditionOf, getMr, keyOf, newReconciler } from "../../support/reconcile.ts";

const moto = motoOptions();
const ec2 = new EC2Client(moto);
const rds = new RDSClient(moto);
const kube = newKube();
const PC = uniqueName("pc-netstack");
const KINDS: ManagedKindDef[] = [VPC, Subnet, SecurityGroup, DBSubnetGroup, DBInstance];
let proxy: MotoProxy;

type Manifest = ManagedResource & { [k: string]: unknown };

/**
 * examples/network.yaml as a user would apply it, with every name made unique (this stack runs next to
 * other suites) and references renamed to match: the example itself is what is tested.
 */
function loadExample(): Manifest[] {
  const suffix = randomBytes(3).toString("hex");
  const rename = (n: string) => `${n}-${suffix}`;
  const docs = parseAllDocuments(
    readFileSync(join(import.meta.dirname, "../../../examples/network.yaml"), "utf8"),
  )
    .map((d) => d.toJS() as Manifest)
    .filter(Boolean);
  for (const doc of docs) {
    doc.metadata.name = rename(doc.metadata.name);
    // Not an example any more: `npm start`'s label-selected `driftless run` (start.test.ts) leaves it alone.
    delete doc.metadata.labels?.["driftless.dev/example"];
    doc.spec.providerConfigRef = { name: PC };
    const fp = doc.spec.forProvider as Record<string, unknown>;
    for (const [k, v] of Object.entries(fp)) {
      if (k.endsWith("Ref")) (v as { name: string }).name = rename((v as { name: string }).name);
      if (k.endsWith("Refs")) for (const r of v as Array<{ name: string }>) r.name = rename(r.name);
    }
    if (doc.spec.writeConnectionSecretToRef)
      doc.spec.writeConnectionSecretToRef.name = rename(doc.spec.writeConnectionSecretToRef.name);
  }
  return docs;
}

const defOf = (m: { kind: string; apiVersion: string }) =>
  KINDS.find((k) => k.kind === m.kind && k.apiVersion === m.apiVersion) as ManagedKindDef;
const byKind = (ms: Manifest[], kind: string) => ms.filter((m) => m.kind === kind);
const one = (ms: Manifest[], kind: string) => byKind(ms, kind)[0] as Manifest;

interface Round {
  results: ReconcileResult[];
  /** Cloud create calls made during this round. */
  created: string[];
  ready: Record<string, boolean>;
}

/** Reconciles every key once per round, in the given order, the way queue workers would, until `done`. */
async function reconcileAll(
  ms: Manifest[],
  order: Manifest[],
  done: (round: Round) => Promise<boolean>,
  maxRounds = 20,
): Promise<Round[]> {
  const r = newReconciler(kube);
  const rounds: Round[] = [];
  for (let i = 0; i < maxRounds; i++) {
    const mark = proxy.calls.length;
    const results: ReconcileResult[] = [];
    for (const m of order) results.push(await r.reconcile(keyOf(defOf(m), m.metadata.name)));
    const ready: Record<string, boolean> = {};
    for (const m of ms) {
      const mr = await getMr(kube, defOf(m), m.metadata.name);
      ready[`${m.kind}/${m.metadata.name}`] = conditionOf(mr, "Ready")?.status === "True";
    }
    const round = {
      results,
      created: proxy.since(mark).filter((a) => /^Create(Vpc|Subnet|SecurityGroup|DB)/.test(a)),
      ready,
    };
    rounds.push(round);
    if (await done(round)) return rounds;
  }
  throw new Error(
    `not settled after ${maxRounds} rounds: ${JSON.stringify(rounds.map((x) => x.results.map((y) => y.outcome)))}`,
  );
}

const roundOf = (rounds: Round[], action: string) => rounds.findIndex((x) => x.created.includes(action));

beforeAll(async () => {
  await ensureCrds();
  proxy = await MotoProxy.start(env("AWS_ENDPOINT_URL"));
  await createAwsProviderConfig(kube, PC);
  // The providers reach moto through the recording proxy: only the ProviderConfig's endpoint differs.
  await kube.patch(providerConfigs.aws.type, PC, { spec: { endpoint: { url: proxy.url } } });
});

afterAll(async () => {
  await proxy?.stop();
});

describe("a private network and a database from one manifest, ordered by references only", () => {
  it("creates everything in dependency order, corrects a security group rule, and deletes it all at once", async () => {
    const ms = loadExample();
    expect(ms.map((m) => m.kind)).toEqual([
      "VPC",
      "Subnet",
      "Subnet",
      "SecurityGroup",
      "DBSubnetGroup",
      "DBInstance",
    ]);
    const vpc = one(ms, "VPC");
    const subnets = byKind(ms, "Subnet");
    const sg = one(ms, "SecurityGroup");
    const sng = one(ms, "DBSubnetGroup");
    const db = one(ms, "DBInstance");

    // Applied in one go.
    await Promise.all(ms.map((m) => kube.create(defOf(m), m as unknown as KubeObject)));

    // Worst order for creation: dependents first. Each must wait for what it refers to.
    const allReadyAndSynced = async () => {
      for (const m of ms) {
        const mr = await getMr(kube, defOf(m), m.metadata.name);
        if (conditionOf(mr, "Ready")?.status !== "True" || conditionOf(mr, "Synced")?.status !== "True")
          return false;
      }
      return true;
    };
    const rounds = await reconcileAll(ms, [...ms].reverse(), allReadyAndSynced);

    // After the first round only the VPC exists in the cloud; the rest wait, saying why.
    expect(rounds[0]?.created).toEqual(["CreateVpc"]);
    const [dbFirst, sngFirst, sgFirst, ...subnetsFirst] = rounds[0]?.results ?? [];
    for (const res of [dbFirst, sngFirst, sgFirst, ...subnetsFirst.slice(0, 2)]) {
      expect(res?.outcome).toBe("waiting");
      expect(res?.error?.message).toContain("referenced resource may not yet be ready");
    }

    // Nothing was created before what it refers to was Ready (checked on the round before its creation).
    const createdIn = {
      vpc: roundOf(rounds, "CreateVpc"),
      subnet: roundOf(rounds, "CreateSubnet"),
      sg: roundOf(rounds, "CreateSecurityGroup"),
      sng: roundOf(rounds, "CreateDBSubnetGroup"),
      db: roundOf(rounds, "CreateDBInstance"),
    };
    expect(createdIn.vpc).toBe(0);
    expect(createdIn.subnet).toBeGreaterThan(createdIn.vpc);
    expect(createdIn.sg).toBeGreaterThan(createdIn.vpc);
    expect(createdIn.sng).toBeGreaterThan(createdIn.subnet);
    expect(createdIn.db).toBeGreaterThan(Math.max(createdIn.sng, createdIn.sg));
    const readyBefore = (round: number, m: Manifest) =>
      rounds[round - 1]?.ready[`${m.kind}/${m.metadata.name}`];
    expect(readyBefore(createdIn.subnet, vpc)).toBe(true);
    expect(readyBefore(createdIn.sg, vpc)).toBe(true);
    for (const s of subnets) expect(readyBefore(createdIn.sng, s)).toBe(true);
    expect(readyBefore(createdIn.db, sng)).toBe(true);
    expect(readyBefore(createdIn.db, sg)).toBe(true);
    expect(
      proxy
        .callsOf(/^Create(Vpc|Subnet|SecurityGroup|DBSubnetGroup|DBInstance)$/)
        .map((c) => c.action)
        .sort(),
    ).toEqual([
      "CreateDBInstance",
      "CreateDBSubnetGroup",
      "CreateSecurityGroup",
      "CreateSubnet",
      "CreateSubnet",
      "CreateVpc",
    ]);

    // External names are the cloud's ids; the database sits in the subnet group with the security group.
    const ext = async (m: Manifest) =>
      (await getMr(kube, defOf(m), m.metadata.name))?.metadata.annotations?.[Annotations.externalName] ?? "";
    const vpcId = await ext(vpc);
    const subnetIds = await Promise.all(subnets.map(ext));
    const sgId = await ext(sg);
    expect(vpcId).toMatch(/^vpc-/);
    for (const id of subnetIds) expect(id).toMatch(/^subnet-/);
    expect(sgId).toMatch(/^sg-/);
    const cloudSng = (
      await rds.send(new DescribeDBSubnetGroupsCommand({ DBSubnetGroupName: sng.metadata.name }))
    ).DBSubnetGroups?.[0];
    expect(cloudSng?.VpcId).toBe(vpcId);
    expect(cloudSng?.Subnets?.map((s) => s.SubnetIdentifier).sort()).toEqual([...subnetIds].sort());
    const cloudDb = (
      await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: db.metadata.name }))
    ).DBInstances?.[0];
    expect(cloudDb?.DBSubnetGroup?.DBSubnetGroupName).toBe(sng.metadata.name);
    expect(cloudDb?.VpcSecurityGroups?.map((g) => g.VpcSecurityGroupId)).toEqual([sgId]);
    expect(cloudDb?.PubliclyAccessible).toBe(false);
    const secret = await kube.getSecret("default", db.spec.writeConnectionSecretToRef?.name ?? "");
    expect(Object.keys(secret?.data ?? {}).sort()).toEqual(["endpoint", "password", "port", "username"]);

    // A rule added by hand is revoked on the next reconcile.
    await ec2.send(
      new AuthorizeSecurityGroupIngressCommand({
        GroupId: sgId,
        IpPermissions: [
          { IpProtocol: "tcp", FromPort: 5432, ToPort: 5432, IpRanges: [{ CidrIp: "0.0.0.0/0" }] },
        ],
      }),
    );
    const r = newReconciler(kube);
    expect((await r.reconcile(keyOf(SecurityGroup, sg.metadata.name))).outcome).toBe("updated");
    const group = (await ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [sgId] })))
      .SecurityGroups?.[0];
    expect(group?.IpPermissions?.flatMap((p) => (p.IpRanges ?? []).map((x) => x.CidrIp))).toEqual([
      "10.60.0.0/16",
    ]);
    expect(
      group?.IpPermissionsEgress?.flatMap((p) => (p.IpRanges ?? []).map((x) => `${p.FromPort} ${x.CidrIp}`)),
    ).toEqual(["443 0.0.0.0/0"]);

    // Deleted all at once, reconciled in the worst order (the VPC first): it converges.
    const uids = Object.fromEntries(
      await Promise.all(
        ms.map(async (m) => [
          m.metadata.name,
          (await getMr(kube, defOf(m), m.metadata.name))?.metadata.uid ?? "",
        ]),
      ),
    ) as Record<string, string>;
    await Promise.all(ms.map((m) => kube.delete(defOf(m), m.metadata.name)));
    let sawDependencyViolation = false;
    await reconcileAll(ms, ms, async (round) => {
      const vpcMr = await getMr(kube, VPC, vpc.metadata.name);
      if (conditionOf(vpcMr, "Ready")?.message?.includes("DependencyViolation")) {
        sawDependencyViolation = true;
        expect(conditionOf(vpcMr, "Ready")).toMatchObject({ status: "False", reason: "Deleting" });
      }
      const left = await Promise.all(ms.map((m) => getMr(kube, defOf(m), m.metadata.name)));
      return round.results.length > 0 && left.every((x) => x === undefined);
    });
    // moto refuses to delete a VPC with subnets, as AWS does: the VPC waited for them.
    expect(sawDependencyViolation).toBe(true);

    const owned = (uid: string) => [{ Name: `tag:${OWNER_TAG}`, Values: [uid] }];
    expect(
      (await ec2.send(new DescribeVpcsCommand({ Filters: owned(uids[vpc.metadata.name] ?? "") }))).Vpcs,
    ).toEqual([]);
    for (const s of subnets) {
      expect(
        (await ec2.send(new DescribeSubnetsCommand({ Filters: owned(uids[s.metadata.name] ?? "") }))).Subnets,
      ).toEqual([]);
    }
    expect(
      (await ec2.send(new DescribeSecurityGroupsCommand({ Filters: owned(uids[sg.metadata.name] ?? "") })))
        .SecurityGroups,
    ).toEqual([]);
    await expect(
      rds.send(new DescribeDBSubnetGroupsCommand({ DBSubnetGroupName: sng.metadata.name })),
    ).rejects.toMatchObject({
      name: "DBSubnetGroupNotFoundFault",
    });
    await expect(
      rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: db.metadata.name })),
    ).rejects.toMatchObject({
      name: "DBInstanceNotFoundFault",
    });
  });
});
