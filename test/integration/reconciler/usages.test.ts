// Usages on the real kube-apiserver and moto: a VPC used by a Subnet (a ClusterUsage), both deleted at once
// and reconciled in the worst order (the VPC first). The VPC keeps its external resource and says why until
// the Subnet is gone: DeleteSubnet reaches the cloud before DeleteVpc, and AWS never has to refuse a
// DeleteVpc (no DependencyViolation). The Kubernetes v1.20 API server here runs no admission webhook of
// driftless's: this is the finalizer path, which holds wherever driftless reconciles.
import { DescribeSubnetsCommand, DescribeVpcsCommand, EC2Client } from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Subnet, VPC } from "../../../shared/api/aws/ec2.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import { Annotations, apiVersionOf } from "../../../shared/api/meta.ts";
import {
  ClusterUsageType,
  IN_USE_LABEL,
  USAGE_FINALIZER,
  type UsageObject,
} from "../../../shared/api/protection/usage.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import { managedKinds } from "../../../shared/providers/index.ts";
import { UsageReconciler } from "../../../shared/usages/reconciler.ts";
import { createAwsProviderConfig, ensureCrds, motoOptions } from "../../support/aws.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { MotoProxy } from "../../support/moto-proxy.ts";
import { conditionOf, getMr, keyOf, newReconciler } from "../../support/reconcile.ts";

const ec2 = new EC2Client(motoOptions());
const kube = newKube();
const PC = uniqueName("pc-usage");
let proxy: MotoProxy;

const typeOf = (apiVersion: string, kind: string) =>
  managedKinds.map((k) => k.definition).find((d) => apiVersionOf(d) === apiVersion && d.kind === kind);

/** A VPC and a Subnet in it, created and reconciled until both are Ready. */
async function readyPair(vpcName: string, subnetName: string, octet: number) {
  const mr = (
    def: { apiVersion: string; kind: string },
    name: string,
    forProvider: Record<string, unknown>,
  ) =>
    ({
      apiVersion: def.apiVersion,
      kind: def.kind,
      metadata: { name },
      spec: { providerConfigRef: { name: PC }, forProvider },
    }) as unknown as KubeObject;
  await kube.create(VPC, mr(VPC, vpcName, { cidrBlock: `10.${octet}.0.0/16` }));
  await kube.create(
    Subnet,
    mr(Subnet, subnetName, {
      vpcIdRef: { name: vpcName },
      cidrBlock: `10.${octet}.1.0/24`,
      availabilityZone: "us-east-1a",
    }),
  );
  const r = newReconciler(kube);
  for (let i = 0; i < 10; i++) {
    await r.reconcile(keyOf(VPC, vpcName));
    await r.reconcile(keyOf(Subnet, subnetName));
    if (conditionOf(await getMr(kube, Subnet, subnetName), "Ready")?.status === "True") break;
  }
  expect(conditionOf(await getMr(kube, VPC, vpcName), "Ready")?.status).toBe("True");
  return r;
}

beforeAll(async () => {
  await ensureCrds();
  proxy = await MotoProxy.start(env("AWS_ENDPOINT_URL"));
  await createAwsProviderConfig(kube, PC);
  await kube.patch(providerConfigs.aws.type, PC, { spec: { endpoint: { url: proxy.url } } });
});

afterAll(async () => {
  await proxy?.stop();
});

describe("Usages: a resource in use is deleted after its user", () => {
  it("a VPC used by a Subnet: deleting both deletes the Subnet's external resource first, the VPC waits saying why", async () => {
    const vpcName = uniqueName("vpc-used");
    const subnetName = uniqueName("subnet-using");
    const usageName = uniqueName("subnet-uses-vpc");
    const r = await readyPair(vpcName, subnetName, 71);
    await kube.create(ClusterUsageType, {
      apiVersion: "protection.crossplane.io/v1beta1",
      kind: "ClusterUsage",
      metadata: { name: usageName },
      spec: {
        of: { apiVersion: VPC.apiVersion, kind: "VPC", resourceRef: { name: vpcName } },
        by: { apiVersion: Subnet.apiVersion, kind: "Subnet", resourceRef: { name: subnetName } },
      },
    } as unknown as KubeObject);

    const usages = new UsageReconciler(kube, typeOf);
    const usageKey = {
      apiVersion: "protection.crossplane.io/v1beta1",
      kind: "ClusterUsage",
      name: usageName,
    };
    expect((await usages.reconcile(usageKey)).outcome).toBe("ready");
    const usage = await kube.get<UsageObject & KubeObject>(ClusterUsageType, usageName);
    expect(usage?.metadata.finalizers).toContain(USAGE_FINALIZER);
    expect(usage?.metadata.ownerReferences?.[0]).toMatchObject({ kind: "Subnet", name: subnetName });
    expect(usage?.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
    expect((await getMr(kube, VPC, vpcName))?.metadata.labels?.[IN_USE_LABEL]).toBe("true");
    const ext = async (def: typeof VPC | typeof Subnet, name: string) =>
      (await getMr(kube, def, name))?.metadata.annotations?.[Annotations.externalName] ?? "";
    const vpcId = await ext(VPC, vpcName);
    const subnetId = await ext(Subnet, subnetName);
    expect(vpcId).toMatch(/^vpc-/);
    expect(subnetId).toMatch(/^subnet-/);

    // Both deleted at once; the VPC reconciles first, every round.
    const mark = proxy.calls.length;
    await kube.delete(VPC, vpcName);
    await kube.delete(Subnet, subnetName);
    const vpcFirst = await r.reconcile(keyOf(VPC, vpcName));
    expect(vpcFirst.outcome).toBe("deleting");
    const waiting = conditionOf(await getMr(kube, VPC, vpcName), "Ready");
    expect(waiting).toMatchObject({ status: "False", reason: "Deleting" });
    expect(waiting?.message).toContain(`waiting: in use by Subnet/${subnetName}`);
    expect(conditionOf(await getMr(kube, VPC, vpcName), "Synced")?.status).toBe("True");
    expect(proxy.since(mark)).not.toContain("DeleteVpc");

    const messages = new Set<string>();
    for (let i = 0; i < 20; i++) {
      await r.reconcile(keyOf(VPC, vpcName));
      const msg = conditionOf(await getMr(kube, VPC, vpcName), "Ready")?.message;
      if (msg) messages.add(msg);
      await r.reconcile(keyOf(Subnet, subnetName));
      await usages.reconcile(usageKey);
      const left = await Promise.all([getMr(kube, VPC, vpcName), getMr(kube, Subnet, subnetName)]);
      if (left.every((x) => x === undefined)) break;
    }
    expect(await getMr(kube, VPC, vpcName)).toBeUndefined();
    expect(await getMr(kube, Subnet, subnetName)).toBeUndefined();
    const deletes = proxy.since(mark).filter((a) => a === "DeleteVpc" || a === "DeleteSubnet");
    // The Subnet went first; the VPC's delete was asked once, after it, and never refused.
    expect(deletes).toEqual(["DeleteSubnet", "DeleteVpc"]);
    expect(proxy.callsOf("DeleteVpc").filter((c) => c.status >= 400)).toEqual([]);
    expect([...messages].some((m) => m.includes("DependencyViolation"))).toBe(false);
    // The Usage followed its user (what the garbage collector does through its ownerReference).
    expect(await kube.get(ClusterUsageType, usageName)).toBeUndefined();
    expect(
      (await ec2.send(new DescribeVpcsCommand({ Filters: [{ Name: "vpc-id", Values: [vpcId] }] }))).Vpcs,
    ).toEqual([]);
    expect(
      (await ec2.send(new DescribeSubnetsCommand({ Filters: [{ Name: "subnet-id", Values: [subnetId] }] })))
        .Subnets,
    ).toEqual([]);
  });

  it("without a Usage the same order makes AWS refuse the VPC's delete first (what the Usage spares)", async () => {
    const vpcName = uniqueName("vpc-free");
    const subnetName = uniqueName("subnet-free");
    const r = await readyPair(vpcName, subnetName, 72);
    const mark = proxy.calls.length;
    await kube.delete(VPC, vpcName);
    await kube.delete(Subnet, subnetName);
    await r.reconcile(keyOf(VPC, vpcName));
    expect(proxy.since(mark)).toContain("DeleteVpc");
    expect(conditionOf(await getMr(kube, VPC, vpcName), "Ready")?.message).toContain("DependencyViolation");
    for (let i = 0; i < 10; i++) {
      await r.reconcile(keyOf(Subnet, subnetName));
      await r.reconcile(keyOf(VPC, vpcName));
      if ((await getMr(kube, VPC, vpcName)) === undefined) break;
    }
    expect(await getMr<ManagedResource>(kube, VPC, vpcName)).toBeUndefined();
  });
});
