// `driftless trace` against the real API server and moto: the tree from a managed resource through its
// references to ProviderConfigs and connection Secrets, its three output shapes, and its exit code.
import { beforeAll, describe, expect, it } from "vitest";
import { Subnet } from "../../../shared/api/aws/ec2.ts";
import { DBSubnetGroup } from "../../../shared/api/aws/rds.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import type { TraceNode } from "../../../shared/ops/trace.ts";
import { createAwsProviderConfig, ensureCrds } from "../../support/aws.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { cli } from "./helpers.ts";

const kube = newKube();
const pc = uniqueName("trace-pc");
const queue = uniqueName("trace-q");
const group = uniqueName("trace-sg");
const subnet = uniqueName("trace-subnet");
const missing = uniqueName("trace-missing");

beforeAll(async () => {
  // Prepare: a Queue reconciled to Ready with its connection Secret; a DB subnet group whose one subnet
  // exists but was never reconciled and whose other subnet does not exist.
  await ensureCrds();
  await createAwsProviderConfig(kube, pc);
  await kube.create(Queue, {
    apiVersion: Queue.apiVersion,
    kind: Queue.kind,
    metadata: { name: queue },
    spec: {
      forProvider: { region: "us-east-1" },
      providerConfigRef: { name: pc },
      writeConnectionSecretToRef: { namespace: "default", name: `${queue}-conn` },
    },
  });
  await settle(newReconciler(kube), keyOf(Queue, queue));
  await kube.create(Subnet, {
    apiVersion: Subnet.apiVersion,
    kind: Subnet.kind,
    metadata: { name: subnet },
    spec: {
      forProvider: { region: "us-east-1", cidrBlock: "10.0.1.0/24", vpcId: "vpc-1" },
      providerConfigRef: { name: pc },
    },
  });
  await kube.create(DBSubnetGroup, {
    apiVersion: DBSubnetGroup.apiVersion,
    kind: DBSubnetGroup.kind,
    metadata: { name: group },
    spec: {
      forProvider: { region: "us-east-1", subnetIdRefs: [{ name: subnet }, { name: missing }] },
      providerConfigRef: { name: pc },
    },
  });
}, 180_000);

describe("driftless trace", { timeout: 180_000 }, () => {
  it("prints a Ready resource's tree (ProviderConfig, Secret with its key count) and exits 0", async () => {
    // Act
    const res = await cli(["trace", `queue/${queue}`]);

    // Assess
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+SYNCED\s+READY\s+STATUS$/);
    expect(lines[1]).toMatch(new RegExp(`^Queue\\.sqs/${queue}\\s+True\\s+True\\s+Available$`));
    expect(lines[2]).toMatch(new RegExp(`^├─ ProviderConfig\\.aws/${pc}\\s+-\\s+`));
    expect(lines[3]).toMatch(new RegExp(`^└─ Secret/default/${queue}-conn\\s+-\\s+True\\s+2 keys$`));
    expect(lines).toHaveLength(4);
  });

  it("shows what blocks a resource (never reconciled, not found) and exits 1; -o json is the same tree", async () => {
    // Act
    const res = await cli(["trace", `dbsubnetgroup/${group}`]);
    const json = await cli(["trace", `dbsubnetgroup/${group}`, "-o", "json"]);

    // Assess
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(new RegExp(`├─ Subnet\\.ec2/${subnet}\\s+-\\s+-\\s+never reconciled`));
    expect(res.stdout).toMatch(new RegExp(`│  └─ ProviderConfig\\.aws/${pc}`));
    expect(res.stdout).toMatch(new RegExp(`├─ Subnet\\.ec2/${missing}\\s+-\\s+-\\s+not found`));
    expect(json.code).toBe(1);
    const tree = JSON.parse(json.stdout) as TraceNode;
    expect(tree.children.map((c) => [c.role, c.kind, c.name, c.exists])).toEqual([
      ["Managed", "Subnet", subnet, true],
      ["Managed", "Subnet", missing, false],
      ["ProviderConfig", "ProviderConfig", pc, true],
    ]);
  });

  it("-o wide adds EXTERNAL-NAME and the Secret's key names (never values)", async () => {
    const res = await cli(["trace", `queue/${queue}`, "-o", "wide"]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^NAME\s+SYNCED\s+READY\s+EXTERNAL-NAME\s+STATUS$/m);
    expect(res.stdout).toMatch(
      new RegExp(`^Queue\\.sqs/${queue}\\s+True\\s+True\\s+${queue}\\s+Available$`, "m"),
    );
    expect(res.stdout).toMatch(/2 keys \(arn,url\)$/m);
  });

  it("exits 1 with a clear error for an object that does not exist", async () => {
    const res = await cli(["trace", `queue/${uniqueName("trace-none")}`]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: Queue\.sqs\.aws\.driftless\.dev ".*" not found$/m);
  });
});
