// The CLI surface against the real stack: help and exit codes of every command, `crds`, `get` (table,
// JSON, YAML), `trigger` (annotation or queue) and `describe` of unresolved references.
import { CreateQueueCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import packageJson from "../../../package.json" with { type: "json" };
import { DBSubnetGroup } from "../../../shared/api/aws/rds.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { allCrds } from "../../../shared/crds.ts";
import { decodeMessage } from "../../../shared/queue/message.ts";
import { createAwsProviderConfig, ensureCrds, motoSqs } from "../../support/aws.ts";
import { eventually, newKube, uniqueName } from "../../support/env.ts";
import { getMr, keyOf, newReconciler } from "../../support/reconcile.ts";
import { cli, label, TEST_LABEL } from "./helpers.ts";

const kube = newKube();

const queueMr = (name: string, group: string, pc = "default") => ({
  apiVersion: Queue.apiVersion,
  kind: Queue.kind,
  metadata: { name, labels: { [TEST_LABEL]: group } },
  spec: { forProvider: {}, providerConfigRef: { name: pc } },
});

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
    const body = await eventually(async () => {
      const res = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 1 }));
      return res.Messages?.[0]?.Body;
    });
    const decoded = decodeMessage(body);
    expect(decoded.ok && decoded.message).toMatchObject({
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
