// `npm run package` (build the Lambda bundles + `osls package`) works offline with no AWS credentials, and
// the CloudFormation it generates wires what the functions rely on: the event source mapping with
// ReportBatchItemFailures, the DLQ and its redrive policy, the sweep schedule, least-privilege IAM; the
// bundles it builds stay within their budget and carry only the SDKs they need (built once, for every check).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { AWS_RECONCILE_BUDGET_BYTES } from "../../infra/build/build.ts";
import { CLOUD_SDK, packagesInBundle } from "../support/bundles.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const TEMPLATE = path.join(ROOT, ".serverless/cloudformation-template-update-stack.json");

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
}
interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

let resources: Record<string, Resource>;
let packageOutput = "";

/** `npm run package` with AWS credentials removed from the environment, Node 22 first on PATH. */
function runPackage() {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${path.join(ROOT, "node_modules/.bin")}:${path.dirname(process.execPath)}:${process.env.PATH ?? ""}`,
    AWS_CONFIG_FILE: "/dev/null",
    AWS_SHARED_CREDENTIALS_FILE: "/dev/null",
  };
  for (const k of ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"])
    delete env[k];
  return spawnSync("npm", ["run", "package"], { cwd: ROOT, env, encoding: "utf8", timeout: 540_000 });
}

const actions = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);
const resourcesOf = (s: Statement) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]);
const getAtt = (logicalId: string) => ({ "Fn::GetAtt": [logicalId, "Arn"] });

function props(logicalId: string): Record<string, unknown> {
  const r = resources[logicalId];
  if (!r) throw new Error(`no resource ${logicalId} in the template`);
  return r.Properties;
}
const envOf = (fn: string) => (props(fn).Environment as { Variables: Record<string, string> }).Variables;

function statements(roleId: string): Statement[] {
  const role = resources[roleId];
  const policies = role?.Properties.Policies as Array<{ PolicyDocument: { Statement: unknown[] } }>;
  return policies.flatMap((p) =>
    p.PolicyDocument.Statement.flatMap((s) => {
      const cond = (s as { "Fn::If"?: [string, Statement, unknown] })["Fn::If"];
      return cond ? [cond[1]] : [s as Statement];
    }),
  );
}

beforeAll(() => {
  const run = runPackage();
  packageOutput = `${run.stdout}\n${run.stderr}`;
  if (run.status !== 0) throw new Error(`npm run package failed (${run.status}):\n${packageOutput}`);
  resources = (JSON.parse(readFileSync(TEMPLATE, "utf8")) as { Resources: Record<string, Resource> })
    .Resources;
}, 600_000);

describe("serverless.yml → CloudFormation (osls package, offline)", () => {
  it("packages each function as its own prebuilt bundle on nodejs22.x", () => {
    const functions = Object.entries(resources).filter(([, r]) => r.Type === "AWS::Lambda::Function");
    expect(functions.map(([id]) => id).sort()).toEqual([
      "DoorbellLambdaFunction",
      "ReconcileLambdaFunction",
      "SweepLambdaFunction",
    ]);
    for (const [, fn] of functions) expect(fn.Properties.Runtime).toBe("nodejs22.x");
    expect(resources.ReconcileLambdaFunction?.Properties.Handler).toBe("dist/aws-reconcile.handler");
    expect(resources.SweepLambdaFunction?.Properties.Handler).toBe("dist/aws-sweep.handler");
    expect(resources.DoorbellLambdaFunction?.Properties.Handler).toBe("dist/aws-doorbell.handler");
    for (const name of ["reconcile", "sweep", "doorbell"]) {
      const zip = path.join(ROOT, ".serverless", `${name}.zip`);
      expect(existsSync(zip)).toBe(true);
      const listing = spawnSync("unzip", ["-Z1", zip], { encoding: "utf8" }).stdout.trim().split("\n").sort();
      const own = listing.filter((f) => !f.startsWith("dist/awscc/"));
      expect(own).toEqual([`dist/aws-${name}.mjs`, `dist/aws-${name}.mjs.map`]);
      // The reconcile and sweep functions carry the generated kinds' data (chosen at run time); the doorbell does not.
      const data = listing.filter((f) => f.startsWith("dist/awscc/"));
      if (name === "doorbell") expect(data).toEqual([]);
      else expect(data).toContain("dist/awscc/catalog.json");
      if (name !== "doorbell") expect(data.length).toBeGreaterThan(1401);
    }
    // Environment values are plain strings (no Ref/GetAtt), so `osls invoke local` works offline.
    for (const [, fn] of functions) {
      const vars = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      for (const v of Object.values(vars)) expect(typeof v).toBe("string");
    }
  });

  it("maps the queue to the reconcile function with ReportBatchItemFailures", () => {
    const mappings = Object.values(resources).filter((r) => r.Type === "AWS::Lambda::EventSourceMapping");
    expect(mappings).toHaveLength(1);
    expect(mappings[0]?.Properties).toMatchObject({
      EventSourceArn: getAtt("ReconcileQueue"),
      FunctionName: getAtt("ReconcileLambdaFunction"),
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      BatchSize: 10,
    });
    expect(mappings[0]?.Properties.MaximumBatchingWindowInSeconds).toBeGreaterThan(0);
  });

  it("gives the doorbell its own function behind the Function URL, reserved concurrency and the secret", () => {
    const urls = Object.values(resources).filter((r) => r.Type === "AWS::Lambda::Url");
    expect(urls).toHaveLength(1);
    // No IAM auth: the API server cannot sign its webhook calls; the path secret is the gate.
    expect(urls[0]?.Properties).toMatchObject({
      AuthType: "NONE",
      TargetFunctionArn: getAtt("DoorbellLambdaFunction"),
    });
    expect(props("DoorbellLambdaFunction").ReservedConcurrentExecutions).toBe(5);
    expect(Object.keys(envOf("DoorbellLambdaFunction"))).toContain("DRIFTLESS_DOORBELL_SECRET");
    // Only the doorbell knows the secret; it may only send to the work queue.
    expect(Object.keys(envOf("ReconcileLambdaFunction"))).not.toContain("DRIFTLESS_DOORBELL_SECRET");
    expect(statements("DoorbellRole").flatMap(actions).sort()).toEqual([
      "logs:CreateLogStream",
      "logs:PutLogEvents",
      "sqs:SendMessage",
    ]);
    const vars = envOf("ReconcileLambdaFunction");
    expect(vars.DRIFTLESS_CLOUD_EVENTS).toBe("true");
    // Own writes are recognised by the reconcile role's ARN, known at deploy time (no User-Agent filter).
    const roleName = props("ReconcileRole").RoleName as string;
    expect(vars.DRIFTLESS_OWN_PRINCIPALS).toBe(`arn:aws:iam::123456789012:role/${roleName}`);
    const permissions = Object.values(resources).filter(
      (r) => r.Type === "AWS::Lambda::Permission" && r.Properties.FunctionUrlAuthType === "NONE",
    );
    expect(permissions).toHaveLength(1);
  });

  it("gives the queue a DLQ with a redrive policy and a visibility timeout of at least 6x the function timeout", () => {
    const queue = resources.ReconcileQueue?.Properties ?? {};
    const dlq = resources.ReconcileDeadLetterQueue;
    expect(dlq?.Type).toBe("AWS::SQS::Queue");
    expect(dlq?.Properties.MessageRetentionPeriod).toBe(1_209_600);
    expect(queue.RedrivePolicy).toEqual({
      deadLetterTargetArn: getAtt("ReconcileDeadLetterQueue"),
      maxReceiveCount: 5,
    });
    const timeout = Number(resources.ReconcileLambdaFunction?.Properties.Timeout);
    expect(Number(queue.VisibilityTimeout)).toBeGreaterThanOrEqual(6 * timeout);
    const env = envOf("ReconcileLambdaFunction");
    expect(env.DRIFTLESS_SQS_MAX_RECEIVE_COUNT).toBe("5");
    expect(env.DRIFTLESS_SQS_QUEUE_URL).toMatch(/\/driftless-dev-reconcile$/);
    expect(env.DRIFTLESS_SQS_DLQ_URL).toMatch(/\/driftless-dev-reconcile-dlq$/);
  });

  it("deploys the CloudWatch dashboard with its variables resolved: the stage's region and the stack's queues", () => {
    const dashboard = resources.Dashboard;
    expect(dashboard?.Type).toBe("AWS::CloudWatch::Dashboard");
    expect(dashboard?.Properties.DashboardName).toBe("driftless-dev");
    const body = JSON.parse(dashboard?.Properties.DashboardBody as string) as {
      widgets: Array<{ properties: { region: string; metrics: unknown[][] } }>;
    };
    const queues = [resources.ReconcileQueue, resources.ReconcileDeadLetterQueue].map(
      (q) => q?.Properties.QueueName,
    );
    for (const w of body.widgets) {
      expect(w.properties.region).toBe("us-east-1");
      for (const row of w.properties.metrics) if (row[0] === "AWS/SQS") expect(queues).toContain(row[3]);
    }
    expect(JSON.stringify(body)).not.toContain("${");
  });

  it("runs the sweep on a schedule that matches the interval the function is told", () => {
    const rules = Object.values(resources).filter(
      (r) => r.Type === "AWS::Events::Rule" && r.Properties.ScheduleExpression !== undefined,
    );
    expect(rules).toHaveLength(1);
    expect(rules[0]?.Properties.ScheduleExpression).toBe("rate(1 minute)");
    expect(rules[0]?.Properties.State).toBe("ENABLED");
    const targets = rules[0]?.Properties.Targets as Array<{ Arn: unknown }>;
    expect(targets[0]?.Arn).toEqual(getAtt("SweepLambdaFunction"));
    const env = envOf("SweepLambdaFunction");
    expect(env.DRIFTLESS_SWEEP_INTERVAL).toBe("1m");
  });

  it("sends CloudTrail events of the kinds' calls to the reconcile queue, allowed from that rule only", () => {
    const rule = props("CloudEventsRule");
    const pattern = rule.EventPattern as {
      "detail-type": string[];
      source: string[];
      detail: { eventName: string[] };
    };
    expect(pattern["detail-type"]).toEqual(["AWS API Call via CloudTrail"]);
    expect(pattern.source).toEqual(["aws.ec2", "aws.rds", "aws.s3", "aws.sqs"]);
    expect(pattern.detail.eventName).toContain("SetQueueAttributes");
    expect(pattern.detail.eventName.every((n) => !/^(Describe|Get|List)/.test(n))).toBe(true);
    expect((rule.Targets as Array<{ Arn: unknown }>)[0]?.Arn).toEqual(getAtt("ReconcileQueue"));
    const policy = props("ReconcileQueueCloudEventsPolicy");
    expect(policy.Queues).toEqual([{ Ref: "ReconcileQueue" }]);
    const [statement] = (policy.PolicyDocument as { Statement: Array<Record<string, unknown>> }).Statement;
    expect(statement).toMatchObject({
      Effect: "Allow",
      Principal: { Service: "events.amazonaws.com" },
      Action: "sqs:SendMessage",
      Resource: getAtt("ReconcileQueue"),
      Condition: { ArnEquals: { "aws:SourceArn": getAtt("CloudEventsRule") } },
    });
  });

  it("scopes IAM: queue actions to the queue ARNs, one role per function, wildcards only where AWS has no resource ARNs", () => {
    expect(resources.ReconcileLambdaFunction?.Properties.Role).toEqual(getAtt("ReconcileRole"));
    expect(resources.SweepLambdaFunction?.Properties.Role).toEqual(getAtt("SweepRole"));
    expect(resources.DoorbellLambdaFunction?.Properties.Role).toEqual(getAtt("DoorbellRole"));
    expect(
      Object.keys(resources)
        .filter((id) => resources[id]?.Type === "AWS::IAM::Role")
        .sort(),
    ).toEqual(["DoorbellRole", "ReconcileRole", "SweepRole"]);

    const reconcile = statements("ReconcileRole");
    const consume = reconcile.find((s) => actions(s).includes("sqs:ReceiveMessage"));
    expect(actions(consume!).sort()).toEqual(
      [
        "sqs:ChangeMessageVisibility",
        "sqs:DeleteMessage",
        "sqs:GetQueueAttributes",
        "sqs:GetQueueUrl",
        "sqs:ReceiveMessage",
        "sqs:SendMessage",
      ].sort(),
    );
    expect(resourcesOf(consume!)).toEqual([getAtt("ReconcileQueue")]);
    const dlq = reconcile.find((s) => s.Sid === "DeadLetterMalformed");
    expect(actions(dlq!)).toEqual(["sqs:SendMessage"]);
    expect(resourcesOf(dlq!)).toEqual([getAtt("ReconcileDeadLetterQueue")]);

    for (const s of [...reconcile, ...statements("SweepRole")]) {
      for (const a of actions(s)) expect(a).not.toMatch(/\*/);
      if (resourcesOf(s).includes("*")) {
        // Only calls AWS defines without resource-level permissions.
        for (const a of actions(s)) expect(a).toMatch(/^(sts:GetCallerIdentity|ec2:Describe\w+)$/);
      }
    }

    const sweep = statements("SweepRole");
    expect(sweep.flatMap(actions).sort()).toEqual(
      [
        "logs:CreateLogStream",
        "logs:PutLogEvents",
        "sqs:SendMessage",
        "sqs:GetQueueAttributes",
        "secretsmanager:GetSecretValue",
        "ssm:GetParameter",
      ].sort(),
    );
    expect(resourcesOf(sweep.find((s) => actions(s).includes("sqs:SendMessage"))!)).toEqual([
      getAtt("ReconcileQueue"),
    ]);
    // The Provider's health counts dead letters: read-only, on the dead-letter queue alone.
    expect(resourcesOf(sweep.find((s) => actions(s).includes("sqs:GetQueueAttributes"))!)).toEqual([
      getAtt("ReconcileDeadLetterQueue"),
    ]);
    // The kubeconfig secret statement exists only when a secret is configured for the stage.
    const conditional = (
      props("SweepRole").Policies as Array<{ PolicyDocument: { Statement: unknown[] } }>
    )[0]?.PolicyDocument.Statement.find((s) => (s as Record<string, unknown>)["Fn::If"]);
    expect((conditional as { "Fn::If": unknown[] })["Fn::If"][0]).toBe("HasKubeconfigSecret");
  });

  it("denies the reconcile role any change to the stack's own queues and deployment bucket", () => {
    const denies = statements("ReconcileRole").filter((s) => s.Effect === "Deny");
    const deniedOn = (target: string, action: string) =>
      denies.some((s) => actions(s).includes(action) && JSON.stringify(s.Resource).includes(`"${target}"`));
    for (const queue of ["ReconcileQueue", "ReconcileDeadLetterQueue"])
      for (const a of ["sqs:DeleteQueue", "sqs:SetQueueAttributes", "sqs:TagQueue", "sqs:PurgeQueue"])
        expect(deniedOn(queue, a), `${a} on ${queue}`).toBe(true);
    expect(resources.ServerlessDeploymentBucket?.Type).toBe("AWS::S3::Bucket");
    for (const a of ["s3:DeleteBucket", "s3:PutBucketPolicy", "s3:PutObject", "s3:DeleteObject"])
      expect(deniedOn("ServerlessDeploymentBucket", a), `${a} on the deployment bucket`).toBe(true);
  });

  it("gives no stage a managed-name prefix that matches the stack's own resources or another stage's", () => {
    const doc = parse(readFileSync(path.join(ROOT, "serverless.yml"), "utf8"), { logLevel: "silent" }) as {
      service: string;
      custom: { stages: Record<string, { managedNamePrefix: string }> };
    };
    const stages = Object.keys(doc.custom.stages);
    // Every name osls and this file give the stack's own resources starts with <service>-<stage>-.
    const own = stages.flatMap((st) =>
      ["reconcile", "reconcile-dlq", "serverlessdeploymentbucket-x", "sweep"].map(
        (n) => `${doc.service}-${st}-${n}`,
      ),
    );
    for (const [stage, { managedNamePrefix }] of Object.entries(doc.custom.stages)) {
      expect(managedNamePrefix, stage).toMatch(/^[a-z0-9-]+-$/);
      for (const name of own) expect(name.startsWith(managedNamePrefix), `${stage}: ${name}`).toBe(false);
      for (const [other, o] of Object.entries(doc.custom.stages))
        if (other !== stage)
          expect(o.managedNamePrefix.startsWith(managedNamePrefix), `${stage} covers ${other}`).toBe(false);
    }
  });

  // The bundles this package ships, built once (here) for every check of their contents.
  it("the reconcile bundle stays within its size budget and carries no Kubernetes client library, Pub/Sub or Azure", () => {
    expect(statSync(path.join(ROOT, "dist/aws-reconcile.mjs")).size).toBeLessThanOrEqual(
      AWS_RECONCILE_BUDGET_BYTES,
    );
    const packages = packagesInBundle(path.join(ROOT, "dist/aws-reconcile.mjs"));
    expect(packages).toContain("@aws-sdk/client-sqs");
    expect(packages.filter((p) => /client-node|undici|google|azure/.test(p))).toEqual([]);
  });

  it("the doorbell bundle carries no cloud SDK but SQS, its queue's", () => {
    const packages = packagesInBundle(path.join(ROOT, "dist/aws-doorbell.mjs"));
    expect(packages.filter((p) => CLOUD_SDK.test(p))).toEqual(["@aws-sdk/client-sqs"]);
  });

  it("builds AWS bundles without Pub/Sub and imports the reconcile bundle cleanly", () => {
    expect(packageOutput).not.toContain("must not be in a AWS bundle");
    const bundle = path.join(ROOT, "dist/aws-reconcile.mjs");
    const kubeconfig = JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:1" } }],
      users: [{ name: "u", user: { token: "t" } }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      "current-context": "x",
    });
    const script = `const m = await import(${JSON.stringify(`file://${bundle}`)}); process.stdout.write("\\nRESULT=" + JSON.stringify(await m.handler({ Records: [] }, { getRemainingTimeInMillis: () => 60000 })) + "\\n"); process.exit(0);`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      env: {
        PATH: process.env.PATH ?? "",
        AWS_REGION: "us-east-1",
        LOG_LEVEL: "error",
        DRIFTLESS_KUBECONFIG_YAML: kubeconfig,
      },
      timeout: 60_000,
    });
    expect(run.stderr).toBe("");
    // The cold start reads the activation policies from the cluster (here unreachable): it says so, once.
    const lines = run.stdout.split("\n").filter(Boolean);
    const result = lines.find((l) => l.startsWith("RESULT="));
    expect(JSON.parse(result?.slice("RESULT=".length) ?? "")).toEqual({ batchItemFailures: [] });
    for (const l of lines.filter((x) => x !== result))
      expect(JSON.parse(l)).toMatchObject({ msg: "cannot reach the cluster yet; retrying on invocation" });
  });
});
