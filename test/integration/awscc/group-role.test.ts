// A generated kind under an InjectedIdentity ProviderConfig acts as its service group's role (docs/adr/0014):
// the function's own (ambient) identity asks STS — moto — for the group role's credentials once, and every
// Cloud Control call of the kind is signed with them; moto's GetCallerIdentity with those credentials names
// the assumed role. A ProviderConfig with credentials of its own keeps using them, and nothing is assumed.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { GetCallerIdentityCommand, STSClient } from "@aws-sdk/client-sts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import type { AwsProviderConfigSpec } from "../../../shared/api/provider-config.ts";
import {
  assumedRoleCredentials,
  REFRESH_BEFORE_MS,
  SESSION_NAME,
} from "../../../shared/providers/aws/assumed-role.ts";
import { cloudControlProvider } from "../../../shared/providers/awscc/cloudcontrol.ts";
import { ROLE_ARN_PREFIX_ENV } from "../../../shared/providers/awscc/group-roles.ts";
import { awsccSpec, startFake } from "../../support/awscc.ts";
import { env, uniqueName } from "../../support/env.ts";

type Json = Record<string, unknown>;
interface Seen {
  accessKey: string;
  action: string;
  answer: string;
}

const HOP = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive"]);

/** TEST WRAPPER: forwards every request to `target` as it is, recording its signing key, action and answer. */
async function recordingProxy(target: string) {
  const seen: Seen[] = [];
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const headers: Record<string, string> = {};
    // Hop-by-hop headers stay here (neither moto nor the fake checks the signature over host).
    for (const [k, v] of Object.entries(req.headers))
      if (typeof v === "string" && !HOP.has(k)) headers[k] = v;
    try {
      const out = await fetch(`${target.replace(/\/+$/, "")}${req.url}`, {
        method: req.method ?? "POST",
        headers,
        ...(body.length > 0 ? { body } : {}),
      });
      const answer = await out.text();
      seen.push({
        accessKey: /Credential=([^/,\s]+)\//.exec(headers.authorization ?? "")?.[1] ?? "",
        action:
          headers["x-amz-target"]?.split(".").at(-1) ??
          new URLSearchParams(body.toString()).get("Action") ??
          "",
        answer,
      });
      res.writeHead(out.status, { "content-type": out.headers.get("content-type") ?? "text/plain" });
      res.end(answer);
    } catch (err) {
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(String(err));
    }
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((ok) => server.close(() => ok())) };
}

const AMBIENT = { AWS_ACCESS_KEY_ID: "AKIAAMBIENTIDENTITY1", AWS_SECRET_ACCESS_KEY: "ambient-secret" };
const ROLE_PREFIX = `arn:aws:iam::123456789012:role/${uniqueName("dl-reconcile-awscc")}`;
const QUEUE = "AWS::SQS::Queue";

let fake: Awaited<ReturnType<typeof startFake>>;
let sts: Awaited<ReturnType<typeof recordingProxy>>;
let cloudControl: Awaited<ReturnType<typeof recordingProxy>>;
const saved: Record<string, string | undefined> = {};
const setEnv = (vars: Record<string, string>) => {
  for (const [k, v] of Object.entries(vars)) {
    if (!(k in saved)) saved[k] = process.env[k];
    process.env[k] = v;
  }
};

beforeAll(async () => {
  fake = await startFake({ moto: env("AWS_ENDPOINT_URL") });
  sts = await recordingProxy(env("AWS_ENDPOINT_URL"));
  cloudControl = await recordingProxy(fake.url);
  // The function's ambient identity, and the SDK's own endpoint settings (no ProviderConfig endpoint: an
  // InjectedIdentity ProviderConfig may not name one) pointing STS at moto and Cloud Control at the fake.
  setEnv({
    ...AMBIENT,
    AWS_ENDPOINT_URL_STS: sts.url,
    AWS_ENDPOINT_URL_CLOUDCONTROL: cloudControl.url,
    [ROLE_ARN_PREFIX_ENV]: ROLE_PREFIX,
  });
}, 60_000);

afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await sts?.close();
  await cloudControl?.close();
  await fake?.close();
});

const providerConfig = (name: string, spec: AwsProviderConfigSpec) => ({
  apiVersion: "aws.driftless.dev/v1alpha1",
  kind: "ProviderConfig",
  metadata: { name, uid: uniqueName("uid"), generation: 1 },
  spec,
});

const queue = (name: string): ManagedResource<Json, Json> =>
  ({
    apiVersion: "sqs.awscc.driftless.dev/v1alpha1",
    kind: "Queue",
    metadata: { name, uid: uniqueName("uid"), generation: 1, annotations: {} },
    spec: { forProvider: { region: "us-east-1", queueName: name } },
  }) as unknown as ManagedResource<Json, Json>;

describe("a generated kind under the ambient identity", () => {
  it("makes every Cloud Control call as its service group's role, assumed once", async () => {
    const provider = cloudControlProvider(awsccSpec(QUEUE), {
      pollDelaysMs: [50, 100, 200, 400],
      roleGroups: [["sns"], ["sqs", "ssm"]],
    });
    const ctx = {
      providerConfig: providerConfig("injected", {
        credentials: { source: "InjectedIdentity" },
        region: "us-east-1",
      }),
      readSecretKey: async () => {
        throw new Error("no Secret under InjectedIdentity");
      },
    };
    const client = await provider.connect(ctx as never);
    const name = uniqueName("grp-queue");
    const mr = queue(name);
    expect((await client.observe(mr, undefined)).resourceExists).toBe(false);
    const created = await client.create(mr, undefined);
    const external = created.externalName ?? "";
    mr.metadata.annotations = { ...created.annotations, "crossplane.io/external-name": external };
    const seenAfterCreate = await client.observe(mr, external);
    expect(seenAfterCreate.resourceExists).toBe(true);
    await client.delete(mr, external);

    // One AssumeRole, by the ambient identity, of the sqs group's role (the second).
    const assumes = sts.seen.filter((s) => s.action === "AssumeRole");
    expect(assumes).toHaveLength(1);
    expect(assumes[0]?.accessKey).toBe(AMBIENT.AWS_ACCESS_KEY_ID);
    const issued = {
      accessKeyId: /<AccessKeyId>([^<]+)</.exec(assumes[0]?.answer ?? "")?.[1] ?? "",
      secretAccessKey: /<SecretAccessKey>([^<]+)</.exec(assumes[0]?.answer ?? "")?.[1] ?? "",
      sessionToken: /<SessionToken>([^<]+)</.exec(assumes[0]?.answer ?? "")?.[1] ?? "",
    };
    // Every Cloud Control call signed with the role's credentials, none with the ambient identity's.
    expect(cloudControl.seen.length).toBeGreaterThanOrEqual(3);
    expect(new Set(cloudControl.seen.map((s) => s.accessKey))).toEqual(new Set([issued.accessKeyId]));
    // moto says who those credentials are: the group role, in driftless's session.
    const who = await new STSClient({
      region: "us-east-1",
      endpoint: env("AWS_ENDPOINT_URL"),
      credentials: issued,
    }).send(new GetCallerIdentityCommand({}));
    expect(who.Arn).toBe(
      `arn:aws:sts::123456789012:assumed-role/${ROLE_PREFIX.split("/").at(-1)}2/${SESSION_NAME}`,
    );
  }, 120_000);

  it("keeps a ProviderConfig's own credentials as they are: nothing assumed", async () => {
    const before = sts.seen.filter((s) => s.action === "AssumeRole").length;
    const provider = cloudControlProvider(awsccSpec(QUEUE), { roleGroups: [["sqs"]] });
    const own = "AKIAOWNCREDENTIALS01";
    const ctx = {
      providerConfig: providerConfig("secret", {
        credentials: {
          source: "Secret",
          secretRef: { name: "aws", namespace: "default", key: "credentials" },
        },
        region: "us-east-1",
      }),
      readSecretKey: async () =>
        JSON.stringify({ aws_access_key_id: own, aws_secret_access_key: "own-secret" }),
    };
    const client = await provider.connect(ctx as never);
    const calls = cloudControl.seen.length;
    const missing = `https://sqs.us-east-1.amazonaws.com/123456789012/${uniqueName("grp-own")}`;
    expect((await client.observe(queue(uniqueName("grp-own")), missing)).resourceExists).toBe(false);
    expect(sts.seen.filter((s) => s.action === "AssumeRole").length).toBe(before);
    expect(cloudControl.seen.slice(calls).map((s) => s.accessKey)).toEqual([own]);
  }, 60_000);

  it("holds a role's credentials while they last and asks again before they expire, once for concurrent callers", async () => {
    let skew = 0;
    const role = `${ROLE_PREFIX}-clock`;
    const provider = assumedRoleCredentials(role, { region: "us-east-1", now: () => Date.now() + skew });
    const assumes = () => sts.seen.filter((s) => s.action === "AssumeRole").length;
    const before = assumes();
    const [a, b] = await Promise.all([provider(), provider()]);
    expect(b).toBe(a);
    expect(assumes()).toBe(before + 1);
    expect((await provider()).accessKeyId).toBe(a.accessKeyId);
    expect(assumes()).toBe(before + 1);
    // Within REFRESH_BEFORE_MS of the expiry: a new AssumeRole, new credentials.
    skew = (a.expiration?.getTime() ?? 0) - Date.now() - REFRESH_BEFORE_MS + 1_000;
    const renewed = await provider();
    expect(assumes()).toBe(before + 2);
    expect(renewed.accessKeyId).not.toBe(a.accessKeyId);
  }, 60_000);
});
