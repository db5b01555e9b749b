// `driftless import` on moto and the real kube-apiserver: the VPCs and Subnets EC2 lists in the account are
// written as Observe-only managed resources, except what a managed resource already holds; the written
// files apply as they are and become Ready in Observe (read only: nothing changes in the cloud).
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateSubnetCommand, CreateVpcCommand, DescribeVpcsCommand, EC2Client } from "@aws-sdk/client-ec2";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { Subnet, VPC } from "../../../shared/api/aws/ec2.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import { createAwsProviderConfig, ensureCrds, motoOptions } from "../../support/aws.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { cli } from "./helpers.ts";

const ec2 = new EC2Client(motoOptions());
const kube = newKube();
const PC = uniqueName("pc-import");

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
});

describe("driftless import", () => {
  it("writes what EC2 lists as Observe-only VPCs and Subnets, skips the managed one; the files apply and become Ready", async () => {
    // One VPC made by hand (with a subnet), one managed by driftless.
    const manual = (await ec2.send(new CreateVpcCommand({ CidrBlock: "10.81.0.0/16" }))).Vpc?.VpcId ?? "";
    const manualSubnet =
      (await ec2.send(new CreateSubnetCommand({ VpcId: manual, CidrBlock: "10.81.1.0/24" }))).Subnet
        ?.SubnetId ?? "";
    const managedName = uniqueName("vpc-managed");
    await kube.create(VPC, {
      apiVersion: VPC.apiVersion,
      kind: "VPC",
      metadata: { name: managedName },
      spec: { providerConfigRef: { name: PC }, forProvider: { cidrBlock: "10.82.0.0/16" } },
    } as unknown as KubeObject);
    const r = newReconciler(kube);
    await settle(r, keyOf(VPC, managedName));
    const managedId =
      (await getMr(kube, VPC, managedName))?.metadata.annotations?.[Annotations.externalName] ?? "";
    expect(managedId).toMatch(/^vpc-/);

    const out = mkdtempSync(join(tmpdir(), "driftless-import-"));
    const res = await cli(["import", "--provider-config", PC, "--kinds", "ec2.vpc,ec2.subnet", "-o", out]);
    expect(res.code, res.stderr).toBe(0);
    const allVpcs = (await ec2.send(new DescribeVpcsCommand({}))).Vpcs ?? [];
    // Other suites' VPCs share this moto account: every VPC is either written or already managed.
    const line = /ec2\.vpc: (\d+) found, (\d+) written, (\d+) already managed/.exec(res.stdout);
    expect(line, res.stdout).not.toBeNull();
    const [found, writtenCount, managedCount] = (line ?? []).slice(1).map(Number);
    expect(found).toBe(allVpcs.length);
    expect((writtenCount ?? 0) + (managedCount ?? 0)).toBe(found);
    expect(managedCount).toBeGreaterThanOrEqual(1);
    const files = readdirSync(out);
    const written = files.map(
      (f) => parse(readFileSync(join(out, f), "utf8")) as ManagedResource & KubeObject,
    );
    const byExt = (id: string) =>
      written.find((o) => o.metadata.annotations?.[Annotations.externalName] === id);
    expect(byExt(managedId)).toBeUndefined();
    const vpc = byExt(manual);
    expect(vpc).toEqual({
      apiVersion: VPC.apiVersion,
      kind: "VPC",
      metadata: { name: manual, annotations: { [Annotations.externalName]: manual } },
      spec: {
        managementPolicies: ["Observe"],
        providerConfigRef: { name: PC },
        forProvider: { region: "us-east-1" },
      },
    });
    expect(files).toContain(`vpc-${manual}.yaml`);
    const subnet = byExt(manualSubnet);
    expect(subnet?.kind).toBe("Subnet");

    // Applied as written, they become Ready in Observe; nothing is written to the cloud.
    await kube.delete(VPC, manual);
    await kube.delete(Subnet, manualSubnet);
    await kube.create(VPC, vpc as KubeObject);
    await kube.create(Subnet, subnet as KubeObject);
    for (const [def, name] of [
      [VPC, manual],
      [Subnet, manualSubnet],
    ] as const) {
      await settle(r, keyOf(def, name));
      const mr = await getMr(kube, def, name);
      expect(conditionOf(mr, "Ready")?.status, JSON.stringify(mr?.status)).toBe("True");
      expect(conditionOf(mr, "Synced")?.status).toBe("True");
    }
    expect((await getMr<{ cidrBlock?: string }>(kube, VPC, manual))?.status?.atProvider).toMatchObject({
      vpcId: manual,
    });
    expect(r.externalCalls).toMatchObject({ create: 1, update: 0, delete: 0 });
  });
});
