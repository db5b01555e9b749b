// Activation at run time in the Lambda bundle: the reconcile bundle is built (esbuild, as `npm run package`
// does) with no generated kind activated, the generated kinds' data copied beside it; only then is a
// ManagedResourceActivationPolicy created. The built handler, run in a fresh Node process as Lambda would,
// reads the policy at cold start and reconciles an object of the kind it names to Ready through Cloud
// Control; an object of a kind no policy names gets the KindNotActivated Warning event and is not created.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUNDLES, buildBundle, copyAwsccData } from "../../../infra/build/build.ts";
import { apiVersionOf } from "../../../shared/api/meta.ts";
import { ActivationPolicy, type ActivationPolicyObject } from "../../../shared/api/pkg/activation-policy.ts";
import { NOT_ACTIVATED } from "../../../shared/ops/activation-policy.ts";
import { encodeMessage } from "../../../shared/queue/message.ts";
import type { SqsEvent } from "../../../shared/worker/sqs.ts";
import { awsccTestbed } from "../../support/awscc.ts";
import { managedObject } from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { getMr } from "../../support/reconcile.ts";

const kube = newKube();
const ACTIVE = "AWS::ResourceGroups::Group";
const INACTIVE = "AWS::SNS::Topic";
const PC = uniqueName("pc-fn-activation");
const POLICY = uniqueName("fn-activate-groups");
let bed: Awaited<ReturnType<typeof awsccTestbed>>;
let dist: string;
let bundle: string;

beforeAll(async () => {
  // Built first, with no activation list: whatever the bundle serves later, it did not know at build time.
  dist = mkdtempSync(path.join(tmpdir(), "driftless-fn-activation-"));
  bundle = path.join(dist, "aws-reconcile.mjs");
  const spec = BUNDLES.find((b) => b.name === "aws-reconcile");
  if (!spec) throw new Error("no aws-reconcile bundle");
  const saved = process.env.DRIFTLESS_ACTIVATE;
  delete process.env.DRIFTLESS_ACTIVATE;
  try {
    await buildBundle(spec, bundle);
  } finally {
    if (saved !== undefined) process.env.DRIFTLESS_ACTIVATE = saved;
  }
  copyAwsccData(dist);
  bed = await awsccTestbed(kube, PC, [ACTIVE, INACTIVE]);
}, 240_000);

afterAll(async () => {
  await kube.delete(ActivationPolicy, POLICY).catch(() => undefined);
  await bed?.close();
  if (dist) rmSync(dist, { recursive: true, force: true });
});

/** An SQS event of one `manual` message for the object (the receipt handle is not the queue's: no requeue reaches it). */
function eventFor(def: { group: string; version: string; kind: string }, name: string): SqsEvent {
  const body = encodeMessage({
    v: 1,
    apiVersion: apiVersionOf(def),
    kind: def.kind,
    name,
    reason: "manual",
    at: new Date().toISOString(),
  });
  return {
    Records: [
      {
        messageId: uniqueName("msg"),
        receiptHandle: "not-a-receipt",
        body,
        attributes: {
          ApproximateReceiveCount: "1",
          SentTimestamp: String(Date.now()),
          SenderId: "AIDAEXAMPLE",
          ApproximateFirstReceiveTimestamp: String(Date.now()),
        },
        messageAttributes: {},
        md5OfBody: "",
        eventSource: "aws:sqs",
        eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:driftless-fn-activation",
        awsRegion: "us-east-1",
      },
    ],
  };
}

/**
 * One cold start of the built bundle (a fresh Node process), then the event handed to its handler up to
 * `times` times, 300 ms apart — Lambda redelivering a requeued message; the responses.
 */
async function invokeColdStart(
  event: SqsEvent,
  times: number,
): Promise<{ responses: unknown[]; logs: string }> {
  const script = [
    `const m = await import(${JSON.stringify(`file://${bundle}`)});`,
    `const event = ${JSON.stringify(event)};`,
    "const out = [];",
    `for (let i = 0; i < ${times}; i++) {`,
    "  out.push(await m.handler(event, { getRemainingTimeInMillis: () => 60000 }));",
    "  await new Promise((r) => setTimeout(r, 300));",
    "}",
    'process.stdout.write("\\nRESPONSES=" + JSON.stringify(out) + "\\n");',
    "process.exit(0);",
  ].join("\n");
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: "info", AWS_REGION: "us-east-1" };
  delete env.DRIFTLESS_ACTIVATE;
  delete env.NODE_OPTIONS; // vitest's loader hooks are not Lambda's
  // Asynchronous: the Cloud Control fake answers from this process's event loop.
  const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ["--input-type=module", "-e", script],
      { env, encoding: "utf8", timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
  const line = /RESPONSES=(.*)/.exec(run.stdout)?.[1];
  if (run.code !== 0 || !line)
    throw new Error(`the bundle failed (${run.code}):\n${run.stdout}\n${run.stderr}`);
  return { responses: JSON.parse(line) as unknown[], logs: `${run.stdout}\n${run.stderr}` };
}

describe("the Lambda reconcile bundle reads activation at cold start", { timeout: 240_000 }, () => {
  it("carries the generated kinds as data, not code", () => {
    const code = readFileSync(bundle, "utf8");
    expect(code).not.toContain(ACTIVE);
    expect(code).not.toContain(INACTIVE);
    expect(JSON.parse(readFileSync(path.join(dist, "awscc/catalog.json"), "utf8")).kinds.length).toBe(1401);
  });

  it("reconciles an object of a kind activated after the build to Ready", async () => {
    // Prepare: the policy, made after the bundle was built; an object of the kind it names.
    await kube.create<ActivationPolicyObject>(ActivationPolicy, {
      apiVersion: ActivationPolicy.apiVersion,
      kind: ActivationPolicy.kind,
      metadata: { name: POLICY },
      spec: { activate: ["resourcegroups.group"] },
    });
    const def = bed.defs.get(ACTIVE)!;
    const name = uniqueName("fn-group");
    await kube.create(def, managedObject(def, name, PC, { connectionSecret: false }));

    // Act: cold starts of the built handler, each with the object's message, until it is Ready.
    let ready = false;
    let logs = "";
    for (let attempt = 0; attempt < 4 && !ready; attempt++) {
      logs = (await invokeColdStart(eventFor(def, name), 5)).logs;
      const mr = await getMr(kube, def, name);
      ready = mr?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
    }

    // Assess: served from the policy (the log names the kind), Ready, and the Group exists in Cloud Control.
    expect(logs).toContain("groups.resourcegroups.awscc.driftless.dev");
    expect(ready).toBe(true);
    expect((await bed.fake.resources(ACTIVE)).map((r) => r.identifier)).toEqual([name]);

    // Cleanup: the same bundle deletes it (finalizer released, Group gone).
    await kube.delete(def, name);
    for (let attempt = 0; attempt < 4 && (await getMr(kube, def, name)); attempt++)
      await invokeColdStart(eventFor(def, name), 3);
    expect(await getMr(kube, def, name)).toBeUndefined();
    expect(await bed.fake.resources(ACTIVE)).toEqual([]);
  });

  it("tells an object of a kind no policy names that it is not activated, and creates nothing", async () => {
    // Prepare
    const def = bed.defs.get(INACTIVE)!;
    const name = uniqueName("fn-topic");
    await kube.create(def, managedObject(def, name, PC, { connectionSecret: false }));

    // Act
    const { responses } = await invokeColdStart(eventFor(def, name), 1);

    // Assess: the message is settled (no retry can help), the Warning says how to activate the kind.
    expect(responses).toEqual([{ batchItemFailures: [] }]);
    const warning = (
      await kube.listEvents<{ reason?: string; type?: string; message?: string }>(
        "default",
        `involvedObject.name=${name}`,
      )
    ).find((e) => e.reason === NOT_ACTIVATED);
    expect(warning?.type).toBe("Warning");
    expect(warning?.message).toContain("topics.sns.awscc.driftless.dev");
    expect(warning?.message).toContain('spec.activate: ["sns.topic"]');
    expect((await getMr(kube, def, name))?.status?.conditions ?? []).toEqual([]);
    expect(await bed.fake.resources(INACTIVE)).toEqual([]);
  });
});
