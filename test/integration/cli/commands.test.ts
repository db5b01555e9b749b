// The CLI surface against the real stack: help and exit codes of every command, `crds`, `get` (table,
// JSON, YAML), `trigger` (annotation or queue) and `describe` of unresolved references.
import { CreateQueueCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import packageJson from "../../../package.json" with { type: "json" };
import { Subnet } from "../../../shared/api/aws/ec2.ts";
import { DBSubnetGroup } from "../../../shared/api/aws/rds.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import {
  clusterProviderConfigType,
  type ManagedResource,
  namespacedProviderConfigType,
  namespacedVariantOf,
} from "../../../shared/api/managed.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { allCrds } from "../../../shared/crds.ts";
import { KubeEventRecorder } from "../../../shared/kube/events.ts";
import { decodeMessage } from "../../../shared/queue/message.ts";
import {
  createAwsProviderConfig,
  ensureCrds,
  ensureNamespace,
  MOTO_CREDENTIALS,
  motoSqs,
} from "../../support/aws.ts";
import { env, eventually, newKube, uniqueName } from "../../support/env.ts";
import { getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { cli, label, TEST_LABEL } from "./helpers.ts";

const kube = newKube();

const queueMr = (name: string, group: string, pc = "default") => ({
  apiVersion: Queue.apiVersion,
  kind: Queue.kind,
  metadata: { name, labels: { [TEST_LABEL]: group } },
  spec: { forProvider: {}, providerConfigRef: { name: pc } },
});

/** The first message on an SQS queue, decoded (false when it does not decode). */
async function receivedMessage(sqs: ReturnType<typeof motoSqs>, url: string) {
  const body = await eventually(async () => {
    const res = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 1 }));
    return res.Messages?.[0]?.Body;
  });
  const decoded = decodeMessage(body);
  return decoded.ok && decoded.message;
}

beforeAll(async () => {
  await ensureCrds();
});

describe("help and exit codes", { timeout: 180_000 }, () => {
  const commands = [
    [],
    ["run"],
    ["forward"],
    ["sweep"],
    ["get"],
    ["describe"],
    ["plan"],
    ["trigger"],
    ["crds"],
    ["crds", "print"],
    ["crds", "apply"],
    ["doctor"],
    ["migrate"],
  ];

  it("every command has --help (exit 0) that documents the exit codes", async () => {
    const results = await Promise.all(commands.map((c) => cli([...c, "--help"])));
    results.forEach((res, i) => {
      const what = `driftless ${commands[i]?.join(" ")} --help`;
      expect(res.code, what).toBe(0);
      expect(res.stdout, what).toMatch(/^Usage: driftless/m);
      expect(res.stdout, what).toContain("Exit codes:\n  0  success\n  1  failure");
      expect(res.stdout, what).toContain("  2  usage: bad arguments or options");
    });
    expect(results[0]?.stdout).toContain("DRIFTLESS_METRICS_PORT");
  });

  it("exits 2 on usage errors and prints the version", async () => {
    const [none, unknownCmd, badOutput, noName, ambiguous, unknownKind, badPort, version] = await Promise.all(
      [
        cli([]),
        cli(["frobnicate"]),
        cli(["get", "queue", "-o", "xml"]),
        cli(["describe", "queue"]),
        cli(["describe", "subnet/x"]),
        cli(["trigger", "gizmo/x"]),
        cli(["run", "--metrics-port", "70000"]),
        cli(["--version"]),
      ],
    );
    for (const res of [none, unknownCmd, badOutput, noName, ambiguous, unknownKind, badPort]) {
      expect(res.code, res.stderr).toBe(2);
    }
    expect(noName.stderr).toContain('expected KIND/NAME, got "queue"');
    expect(ambiguous.stderr).toMatch(/"subnet" is ambiguous: Subnet\.ec2\.aws\.driftless\.dev, /);
    expect(unknownKind.stderr).toContain('unknown kind "gizmo"');
    expect(badPort.stderr).toContain("--metrics-port must be an integer 0–65535");
    expect(version).toMatchObject({ code: 0, stdout: `${packageJson.version}\n` });
  });
});

describe("crds", { timeout: 180_000 }, () => {
  it("print writes every generated CRD with its printer columns; apply installs them", async () => {
    const printed = await cli(["crds", "print"]);
    expect(printed.code).toBe(0);
    const docs = parseAllDocuments(printed.stdout).map((d) => d.toJS() as ReturnType<typeof allCrds>[number]);
    expect(docs.map((d) => d.metadata.name)).toEqual(allCrds().map((c) => c.metadata.name));
    for (const d of docs) expect(d.spec.versions[0]?.additionalPrinterColumns?.length).toBeGreaterThan(0);

    const applied = await cli(["crds", "apply"]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toBe(`applied ${allCrds().length} CRDs\n`);
  });
});

describe("get", { timeout: 180_000 }, () => {
  it("lists READY, SYNCED, EXTERNAL-NAME, last change and the message, as a table, JSON or YAML", async () => {
    // Prepare
    const group = uniqueName("cli-get");
    const [a, b] = [uniqueName("cli-get-a"), uniqueName("cli-get-b")];
    await kube.create(Queue, {
      ...queueMr(a, group),
      metadata: { ...queueMr(a, group).metadata, annotations: { "crossplane.io/external-name": `${a}-ext` } },
    });
    await kube.create(Queue, queueMr(b, group));
    const at = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    await kube.patchStatus(Queue, a, {
      conditions: [
        { type: "Ready", status: "True", reason: "Available", lastTransitionTime: at },
        {
          type: "Synced",
          status: "False",
          reason: "ReconcileError",
          message: "cannot observe external resource: boom",
          lastTransitionTime: at,
        },
      ],
    });
    const selector = `${TEST_LABEL}=${group}`;

    // Act
    const [table, json, yaml, one, missing] = await Promise.all([
      cli(["get", "queue", "-l", selector]),
      cli(["get", "queues.sqs.aws", "-l", selector, "-o", "json"]),
      cli(["get", "-l", selector, "-o", "yaml"]),
      cli(["get", "Queue", a, "-o", "json"]),
      cli(["get", "queue", uniqueName("cli-get-none")]),
    ]);

    // Assess
    expect(table.code).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split("\n");
    expect(header?.split(/\s{2,}/)).toEqual([
      "KIND",
      "NAME",
      "READY",
      "SYNCED",
      "EXTERNAL-NAME",
      "LAST-CHANGE",
      "AGE",
      "MESSAGE",
    ]);
    const rowA = rows.find((r) => r.includes(a)) ?? "";
    expect(rowA).toMatch(
      new RegExp(
        `^Queue\\.sqs\\.aws\\.driftless\\.dev\\s+${a}\\s+True\\s+False\\s+${a}-ext\\s+\\d+s\\s+\\d+s\\s+cannot observe external resource: boom$`,
      ),
    );
    expect(rows.find((r) => r.includes(b))).toBeTruthy();
    expect((JSON.parse(json.stdout) as unknown[]).length).toBe(2);
    expect(
      (parse(yaml.stdout) as Array<{ metadata: { name: string } }>).map((o) => o.metadata.name).sort(),
    ).toEqual([a, b].sort());
    expect(JSON.parse(one.stdout)).toMatchObject({ kind: "Queue", metadata: { name: a } });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("not found");
  });

  it("lists ProviderConfigs with their users and credentials source", async () => {
    const group = uniqueName("cli-get-pc");
    const pc = uniqueName("pc-cli-get");
    await createAwsProviderConfig(kube, pc);
    await label(kube, providerConfigs.aws.type, pc, group);
    const res = await cli(["get", "providerconfig.aws", "-l", `${TEST_LABEL}=${group}`]);
    expect(res.code).toBe(0);
    expect(res.stdout.split("\n")[0]?.split(/\s{2,}/)).toEqual([
      "KIND",
      "NAME",
      "READY",
      "USERS",
      "SOURCE",
      "LAST-CHANGE",
      "AGE",
      "MESSAGE",
    ]);
    expect(res.stdout).toMatch(new RegExp(`${pc}\\s+users=0\\s+Secret`));
  });
});

describe("trigger", { timeout: 180_000 }, () => {
  it("annotates the resource (the forwarder enqueues it), or sends a manual message with --queue", async () => {
    // Prepare
    const group = uniqueName("cli-trig");
    const name = uniqueName("cli-trig-q");
    await kube.create(Queue, queueMr(name, group));
    const sqs = motoSqs();
    const url =
      (await sqs.send(new CreateQueueCommand({ QueueName: uniqueName("cli-trig") }))).QueueUrl ?? "";

    // Act
    const annotated = await cli(["trigger", `queue/${name}`]);
    const queued = await cli(["trigger", "--queue", `queue/${name}`], {
      env: { DRIFTLESS_QUEUE: "sqs", DRIFTLESS_SQS_QUEUE_URL: url },
    });
    const missing = await cli(["trigger", `queue/${uniqueName("cli-trig-none")}`]);

    // Assess
    expect(annotated.code).toBe(0);
    expect(annotated.stdout).toMatch(
      new RegExp(
        `^Queue/${name} queued for reconcile \\(crossplane\\.io/reconcile-requested-at: \\S+\\)\\n$`,
      ),
    );
    const mr = await getMr(kube, Queue, name);
    const token = mr?.metadata.annotations?.["crossplane.io/reconcile-requested-at"] ?? "";
    expect(Date.parse(token)).toBeGreaterThan(Date.now() - 60_000);
    expect(annotated.stdout).toContain(token);
    expect(queued.code, queued.stderr).toBe(0);
    expect(await receivedMessage(sqs, url)).toMatchObject({
      name,
      kind: "Queue",
      reason: "manual",
      uid: mr?.metadata.uid,
    });
    expect(missing.code).toBe(1);
  });
});

describe("describe", { timeout: 180_000 }, () => {
  it("shows an unresolved reference, the target that is missing, and the waiting condition", async () => {
    // Prepare: a DB subnet group whose subnets do not exist yet
    const name = uniqueName("cli-desc-sg");
    const subnet = uniqueName("cli-desc-missing-subnet");
    await kube.create(DBSubnetGroup, {
      apiVersion: DBSubnetGroup.apiVersion,
      kind: DBSubnetGroup.kind,
      metadata: { name },
      spec: { forProvider: { subnetIdRefs: [{ name: subnet }] }, providerConfigRef: { name: "unused" } },
    });
    await newReconciler(kube).reconcile(keyOf(DBSubnetGroup, name));

    // Act
    const res = await cli(["describe", `dbsubnetgroup/${name}`]);

    // Assess
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`subnetIds: UNRESOLVED via ref → Subnet/${subnet} (does not exist)`);
    expect(res.stdout).toMatch(
      /Synced\s+False\s+ReconcileError\s+.*referenced resource may not yet be ready/,
    );
    expect(res.stdout).toContain("ProviderConfig:       unused");
  });

  it("exits 1 for an object that does not exist", async () => {
    const res = await cli(["describe", `queue/${uniqueName("cli-desc-none")}`]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: Queue\.sqs\.aws\.driftless\.dev ".*" not found$/m);
  });
});

describe("namespaced kinds (-n, -A)", { timeout: 180_000 }, () => {
  const NQueue = namespacedVariantOf(Queue);
  const NSubnet = namespacedVariantOf(Subnet);
  const NDBSubnetGroup = namespacedVariantOf(DBSubnetGroup);
  const pcType = namespacedProviderConfigType("aws");
  const cpcType = clusterProviderConfigType("aws");
  const ns = uniqueName("cli-ns");
  const group = uniqueName("cli-ns");
  const selector = `${TEST_LABEL}=${group}`;
  const pc = uniqueName("cli-ns-pc");
  const cpc = uniqueName("cli-ns-cpc");
  // The same name twice: a cluster-scoped Queue and a namespaced one.
  const name = uniqueName("cli-ns-q");
  const reconcile = () =>
    settle(newReconciler(kube, { events: new KubeEventRecorder(kube) }), {
      apiVersion: NQueue.apiVersion,
      kind: "Queue",
      name,
      namespace: ns,
    });
  type Obj = ManagedResource & { [k: string]: unknown };

  beforeAll(async () => {
    // Prepare: a team namespace with its own ProviderConfig (moto), a ClusterProviderConfig, and a
    // namespaced Queue that writes its connection Secret, reconciled once.
    await ensureNamespace(kube, ns);
    await kube.createSecret({
      metadata: { name: `${pc}-creds`, namespace: ns },
      stringData: { credentials: MOTO_CREDENTIALS },
    });
    const pcSpec = { region: "us-east-1", endpoint: { url: env("AWS_ENDPOINT_URL") } };
    await kube.create(pcType, {
      apiVersion: `${pcType.group}/${pcType.version}`,
      kind: "ProviderConfig",
      metadata: { name: pc, namespace: ns, labels: { [TEST_LABEL]: group } },
      spec: {
        credentials: { source: "Secret", secretRef: { name: `${pc}-creds`, key: "credentials" } },
        ...pcSpec,
      },
    } as unknown as Obj);
    await kube.create(cpcType, {
      apiVersion: `${cpcType.group}/${cpcType.version}`,
      kind: "ClusterProviderConfig",
      metadata: { name: cpc, labels: { [TEST_LABEL]: group } },
      spec: {
        credentials: {
          source: "Secret",
          secretRef: { namespace: ns, name: `${pc}-creds`, key: "credentials" },
        },
        allowedNamespaces: [ns],
        ...pcSpec,
      },
    } as unknown as Obj);
    await kube.create(Queue, queueMr(name, group));
    await kube.create(NQueue, {
      apiVersion: NQueue.apiVersion,
      kind: "Queue",
      metadata: { name, namespace: ns, labels: { [TEST_LABEL]: group } },
      spec: {
        forProvider: {},
        providerConfigRef: { kind: "ProviderConfig", name: pc },
        writeConnectionSecretToRef: { name: `${name}-conn` },
      },
    } as unknown as Obj);
    await reconcile();
  });

  it("get: -n and -A select the namespaced shape and show NAMESPACE; a bare kind stays cluster-scoped", async () => {
    // Act
    const [inNs, all, bare, one, pcs, cpcs, refused, both, byNameAll] = await Promise.all([
      cli(["get", "queue", "-n", ns, "-l", selector]),
      cli(["get", "queue.sqs.aws.m", "-A", "-l", selector, "-o", "json"]),
      cli(["get", "queue", "-l", selector]),
      cli(["get", "queue", name, "-n", ns, "-o", "json"]),
      cli(["get", "providerconfig.aws.m", "-A", "-l", selector]),
      cli(["get", "clusterproviderconfig.aws", "-l", selector]),
      cli(["get", "clusterproviderconfig.aws", "-n", ns]),
      cli(["get", "queue", "-n", ns, "-A"]),
      cli(["get", "queue", name, "-A"]),
    ]);

    // Assess
    expect(inNs.code, inNs.stderr).toBe(0);
    const [header, ...rows] = inNs.stdout.trimEnd().split("\n");
    expect(header?.split(/\s{2,}/).slice(0, 4)).toEqual(["NAMESPACE", "KIND", "NAME", "READY"]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(
      new RegExp(`^${ns}\\s+Queue\\.sqs\\.aws\\.m\\.driftless\\.dev\\s+${name}\\s+True\\s+True`),
    );
    expect((JSON.parse(all.stdout) as Obj[]).map((o) => [o.metadata.namespace, o.apiVersion])).toEqual([
      [ns, NQueue.apiVersion],
    ]);
    expect(bare.code).toBe(0);
    expect(bare.stdout.split("\n")[0]).toMatch(/^KIND\s/);
    expect(bare.stdout).toMatch(new RegExp(`^Queue\\.sqs\\.aws\\.driftless\\.dev\\s+${name}\\s`, "m"));
    expect(bare.stdout).not.toContain(".m.driftless.dev");
    expect(JSON.parse(one.stdout)).toMatchObject({
      apiVersion: NQueue.apiVersion,
      metadata: { name, namespace: ns },
    });
    expect(pcs.stdout).toMatch(
      new RegExp(`^${ns}\\s+ProviderConfig\\.aws\\.m\\.driftless\\.dev\\s+${pc}\\s`, "m"),
    );
    expect(cpcs.stdout).toMatch(
      new RegExp(`^ClusterProviderConfig\\.aws\\.m\\.driftless\\.dev\\s+${cpc}\\s`, "m"),
    );
    for (const res of [refused, both, byNameAll]) expect(res.code, res.stdout).toBe(2);
    expect(refused.stderr).toContain(
      "ClusterProviderConfig.aws.m.driftless.dev is cluster-scoped: -n/--namespace does not apply",
    );
  });

  it("describe -n: the typed providerConfigRef, the Secret, references and Events of its own namespace", async () => {
    // Prepare: a namespaced DB subnet group referencing a Ready subnet in its namespace and one that
    // exists only cluster-scoped (so, for it, does not exist).
    const sgName = uniqueName("cli-ns-sg");
    const [here, elsewhere] = [uniqueName("cli-ns-sub"), uniqueName("cli-ns-sub-cluster")];
    const subnet = { forProvider: { region: "us-east-1", vpcId: "vpc-1", cidrBlock: "10.0.1.0/24" } };
    await kube.create(NSubnet, {
      apiVersion: NSubnet.apiVersion,
      kind: "Subnet",
      metadata: { name: here, namespace: ns, annotations: { "crossplane.io/external-name": "subnet-1" } },
      spec: subnet,
    } as unknown as Obj);
    const at = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    await kube.patchStatus(
      NSubnet,
      here,
      { conditions: [{ type: "Ready", status: "True", reason: "Available", lastTransitionTime: at }] },
      { namespace: ns },
    );
    await kube.create(Subnet, {
      apiVersion: Subnet.apiVersion,
      kind: "Subnet",
      metadata: { name: elsewhere },
      spec: { ...subnet, providerConfigRef: { name: "unused" } },
    } as unknown as Obj);
    await kube.create(NDBSubnetGroup, {
      apiVersion: NDBSubnetGroup.apiVersion,
      kind: "DBSubnetGroup",
      metadata: { name: sgName, namespace: ns },
      spec: { forProvider: { subnetIdRefs: [{ name: here }, { name: elsewhere }] } },
    } as unknown as Obj);

    // Act
    const [queue, json, sg, missing, pcOut, cpcOut] = await Promise.all([
      cli(["describe", `queue/${name}`, "-n", ns]),
      cli(["describe", `queue.sqs.aws.m/${name}`, "--namespace", ns, "-o", "json"]),
      cli(["describe", `dbsubnetgroup/${sgName}`, "-n", ns]),
      cli(["describe", `queue/${name}`, "-n", uniqueName("cli-ns-none")]),
      cli(["describe", `providerconfig.aws/${pc}`, "-n", ns]),
      cli(["describe", `clusterproviderconfig.aws/${cpc}`]),
    ]);

    // Assess
    expect(queue.code, queue.stderr).toBe(0);
    expect(queue.stdout).toContain(`Namespace:            ${ns}\n`);
    expect(queue.stdout).toContain(`Kind:                 Queue (${NQueue.apiVersion})`);
    expect(queue.stdout).toContain(`ProviderConfig:       ProviderConfig/${pc}\n`);
    expect(queue.stdout).not.toContain("Deletion policy");
    expect(queue.stdout).toContain(
      `Connection Secret:\n  Name: ${ns}/${name}-conn\n  Keys: arn, url (values are never shown)`,
    );
    expect(queue.stdout).not.toContain("not owned by this resource");
    // Its Events are in its namespace (the recorder writes them there).
    expect(queue.stdout).toMatch(/^Events:\n\s+TYPE\s+REASON.*\n\s+Normal\s+CreatedExternalResource\s/m);
    expect(JSON.parse(json.stdout)).toMatchObject({
      namespace: ns,
      providerConfig: pc,
      providerConfigKind: "ProviderConfig",
      connectionSecret: { namespace: ns, exists: true, ownedByResource: true },
    });
    expect(sg.code, sg.stderr).toBe(0);
    expect(sg.stdout).toContain(
      `subnetIds: UNRESOLVED via ref → Subnet/${here} (Ready), Subnet/${elsewhere} (does not exist)`,
    );
    expect(sg.stdout).toContain("ProviderConfig:       ClusterProviderConfig/default");
    expect(pcOut.stdout).toContain(
      `Kind:                 ProviderConfig (${pcType.group}/${pcType.version})`,
    );
    expect(pcOut.stdout).toContain(`Credentials Secret:   ${ns}/${pc}-creds key credentials\n`);
    expect(cpcOut.stdout).toContain(`Allowed namespaces:   ${ns}\n`);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /Queue\.sqs\.aws\.m\.driftless\.dev ".*" not found in namespace cli-ns-none-/,
    );
  });

  it("trigger -n: annotates the namespaced object, --wait returns once it is reconciled, --queue keys the namespace", async () => {
    // Prepare
    const sqs = motoSqs();
    const url =
      (await sqs.send(new CreateQueueCommand({ QueueName: uniqueName("cli-ns-trig") }))).QueueUrl ?? "";
    const before = (await kube.get<Obj>(Queue, name))?.metadata.annotations ?? {};

    // Act: trigger and wait, while this test plays the reconciler once the request is there.
    const waiting = cli(["trigger", `queue/${name}`, "-n", ns, "--wait", "60s"]);
    const token = await eventually(
      async () =>
        (await kube.get<Obj>(NQueue, name, ns))?.metadata.annotations?.[
          "crossplane.io/reconcile-requested-at"
        ],
      { what: "the reconcile request on the namespaced Queue" },
    );
    await reconcile();
    const waited = await waiting;
    const queued = await cli(["trigger", "--queue", `queue.sqs.aws.m/${name}`, "-n", ns], {
      env: { DRIFTLESS_QUEUE: "sqs", DRIFTLESS_SQS_QUEUE_URL: url },
    });
    const refused = await cli(["trigger", `clusterproviderconfig.aws/${cpc}`, "-n", ns]);

    // Assess
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stdout).toBe(
      `Queue/${name} (namespace ${ns}) queued for reconcile (crossplane.io/reconcile-requested-at: ${token})\nQueue/${name} (namespace ${ns}) reconciled\n`,
    );
    expect((await kube.get<Obj>(NQueue, name, ns))?.status?.lastHandledReconcileAt).toBe(token);
    // The cluster-scoped Queue of the same name was not touched.
    expect((await kube.get<Obj>(Queue, name))?.metadata.annotations ?? {}).toEqual(before);
    expect(queued.code, queued.stderr).toBe(0);
    expect(await receivedMessage(sqs, url)).toMatchObject({
      apiVersion: NQueue.apiVersion,
      kind: "Queue",
      namespace: ns,
      name,
      reason: "manual",
    });
    expect(refused.code).toBe(2);
  });
});

describe("plan", { timeout: 180_000 }, () => {
  it("shows what a reconcile would do — nothing when in sync, the update when the spec drifted — and writes nothing", async () => {
    // Prepare: a queue Ready in moto
    const name = uniqueName("cli-plan-q");
    const pc = uniqueName("cli-plan-pc");
    await createAwsProviderConfig(kube, pc);
    await kube.create(Queue, queueMr(name, uniqueName("cli-plan"), pc));
    const r = newReconciler(kube);
    await settle(r, keyOf(Queue, name));
    const inSync = await cli(["plan", `queue/${name}`]);
    await kube.patch(Queue, name, { spec: { forProvider: { delaySeconds: 7 } } });
    const before = await getMr(kube, Queue, name);

    // Act
    const drifted = await cli(["plan", `queue/${name}`]);
    const json = await cli(["plan", `queue/${name}`, "-o", "json"]);
    const notManaged = await cli(["plan", "providerconfig.aws/default"]);

    // Assess
    expect(inSync.code, inSync.stderr).toBe(0);
    expect(inSync.stdout).toContain("in sync: nothing to do");
    expect(inSync.stdout).toContain("outcome: in-sync");
    // Changes pending: exit 2, the field current → desired, then the steps.
    expect(drifted.code, drifted.stderr).toBe(2);
    expect(drifted.stdout).toMatch(/^ {4}~ delaySeconds: 0 → 7$/m);
    expect(drifted.stdout).toMatch(/^ {4}1\. UPDATE the external resource: delaySeconds$/m);
    expect(JSON.parse(json.stdout)).toMatchObject([
      {
        action: "update",
        changes: [{ field: "delaySeconds", current: 0, desired: 7 }],
        verdict: { outcome: "updated" },
      },
    ]);
    expect(notManaged.code).toBe(2);
    // Nothing was written: the object and the queue are as they were.
    const after = await getMr(kube, Queue, name);
    expect(after?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
    const url = (after?.status?.atProvider as { url?: string } | undefined)?.url ?? "";
    const { GetQueueAttributesCommand } = await import("@aws-sdk/client-sqs");
    const attrs = await motoSqs().send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["DelaySeconds"] }),
    );
    expect(attrs.Attributes?.DelaySeconds).toBe("0");
  });
});
