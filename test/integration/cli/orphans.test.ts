// `driftless orphans` on moto and the real kube-apiserver: queues and a VPC created through driftless carry
// Crossplane's default tags; their managed resources deleted with deletionPolicy Orphan leave them in the
// cloud, and the Resource Groups Tagging API finds them by crossplane-providerconfig. Listed (exit code 1):
// the orphans; not listed: what is still managed. Nothing is deleted.
import { DeleteVpcCommand, EC2Client } from "@aws-sdk/client-ec2";
import { DeleteQueueCommand, GetQueueAttributesCommand, GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { VPC } from "../../../shared/api/aws/ec2.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import type { OrphanReport } from "../../../shared/ops/orphans.ts";
import { createAwsProviderConfig, ensureCrds, motoOptions, motoSqs } from "../../support/aws.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { cli } from "./helpers.ts";

const kube = newKube();
const sqs = motoSqs();
const ec2 = new EC2Client(motoOptions());
const PC = uniqueName("pc-orphans");

const mr = (def: typeof Queue | typeof VPC, name: string, forProvider: Record<string, unknown>) =>
  ({
    apiVersion: def.apiVersion,
    kind: def.kind,
    metadata: { name },
    spec: { providerConfigRef: { name: PC }, deletionPolicy: "Orphan", forProvider },
  }) as unknown as KubeObject;

const arnOf = async (queue: string) => {
  const url = (await sqs.send(new GetQueueUrlCommand({ QueueName: queue }))).QueueUrl;
  const a = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["QueueArn"] }));
  return a.Attributes?.QueueArn ?? "";
};

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
});

describe("driftless orphans", () => {
  it("lists the cloud resources whose managed resource is gone (orphan policy), not those still managed; exit 1", async () => {
    const gone = uniqueName("q-orphaned");
    const kept = uniqueName("q-managed");
    const vpcName = uniqueName("vpc-orphaned");
    const r = newReconciler(kube);
    await kube.create(Queue, mr(Queue, gone, {}));
    await kube.create(Queue, mr(Queue, kept, {}));
    await kube.create(VPC, mr(VPC, vpcName, { cidrBlock: "10.93.0.0/16" }));
    await settle(r, keyOf(Queue, gone));
    await settle(r, keyOf(Queue, kept));
    await settle(r, keyOf(VPC, vpcName));
    const vpcId = (await getMr(kube, VPC, vpcName))?.metadata.annotations?.[Annotations.externalName] ?? "";
    expect(vpcId).toMatch(/^vpc-/);
    const goneArn = await arnOf(gone);
    const keptArn = await arnOf(kept);

    // Before: everything tagged for the ProviderConfig is managed.
    const before = await cli(["orphans", "--provider-config", PC, "-o", "json"]);
    // (Resources tagged only with the ownership tag are found account-wide: other suites' may show.)
    const clean = JSON.parse(before.stdout) as OrphanReport;
    expect(before.code, before.stderr).toBe(clean.orphans.length > 0 ? 1 : 0);
    expect(clean.searched).toBeGreaterThanOrEqual(3);
    expect(clean.orphans.filter((o) => o.tags["crossplane-providerconfig"] === PC)).toEqual([]);

    // The managed resources go with deletionPolicy Orphan: the queue and the VPC stay in the cloud.
    await kube.delete(Queue, gone);
    await kube.delete(VPC, vpcName);
    await settle(r, keyOf(Queue, gone));
    await settle(r, keyOf(VPC, vpcName));
    expect(await getMr(kube, Queue, gone)).toBeUndefined();
    expect(await arnOf(gone)).toBe(goneArn);

    const res = await cli(["orphans", "--provider-config", PC, "-o", "yaml"]);
    expect(res.code, res.stderr).toBe(1);
    const report = parse(res.stdout) as OrphanReport;
    expect(report).toMatchObject({ cloud: "aws", providerConfig: PC });
    const mine = report.orphans.filter((o) => o.tags["crossplane-providerconfig"] === PC);
    const ids = report.orphans.map((o) => o.id);
    expect(mine.map((o) => o.id).sort()).toEqual([goneArn, expect.stringContaining(`:vpc/${vpcId}`)].sort());
    expect(ids).not.toContain(keptArn);
    const q = report.orphans.find((o) => o.id === goneArn);
    expect(q).toMatchObject({
      type: "sqs",
      managedResource: `Queue ${gone}`,
      adopt: `driftless import --provider-config ${PC} --kinds sqs.queue -o <dir>`,
      tags: { "crossplane-kind": "queue.sqs.aws.driftless.dev", "crossplane-name": gone },
    });
    expect(mine.find((o) => o.id !== goneArn)).toMatchObject({
      type: "ec2:vpc",
      managedResource: `VPC ${vpcName}`,
    });

    const text = await cli(["orphans", "--provider-config", PC]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(goneArn);
    expect(text.stdout).toMatch(
      new RegExp(`\\d+ orphan\\(s\\) among \\d+ resource\\(s\\) tagged for aws ProviderConfig "${PC}"`),
    );

    // Never deletes anything: both are still there.
    expect(await arnOf(gone)).toBe(goneArn);
    await sqs.send(
      new DeleteQueueCommand({
        QueueUrl: (await sqs.send(new GetQueueUrlCommand({ QueueName: gone }))).QueueUrl,
      }),
    );
    await ec2.send(new DeleteVpcCommand({ VpcId: vpcId }));
    const after = await cli(["orphans", "--provider-config", PC, "-o", "json"]);
    const left = JSON.parse(after.stdout) as OrphanReport;
    expect(left.orphans.filter((o) => o.tags["crossplane-providerconfig"] === PC)).toEqual([]);
    expect(after.code, after.stderr).toBe(left.orphans.length > 0 ? 1 : 0);
  }, 600_000);

  it("a ProviderConfig that does not exist is a usage error naming it", async () => {
    const res = await cli(["orphans", "--provider-config", "no-such-pc-orphans"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('ProviderConfig "no-such-pc-orphans" not found');
  }, 120_000);
});
