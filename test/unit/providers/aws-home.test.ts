// An AWS resource's home: the account really comes from STS GetCallerIdentity of the ProviderConfig's
// credentials (one call per ProviderConfig and credentials per TTL), the region is the spec's or the
// ProviderConfig's, the endpoint is named when overridden; an endpoint that answers HTML is named as such.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadAwsccCatalog, loadAwsccSpec } from "../../../shared/api/awscc/catalog.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import type { AwsProviderConfigSpec, ProviderConfig } from "../../../shared/api/provider-config.ts";
import { EndpointMismatchError } from "../../../shared/providers/answers.ts";
import { ACCOUNT_TTL_MS, awsAccount, awsHome } from "../../../shared/providers/aws/home.ts";
import { queueProvider } from "../../../shared/providers/aws/sqs-queue.ts";
import { cloudControlProvider } from "../../../shared/providers/awscc/cloudcontrol.ts";

// A minimal STS (Query protocol): the account is the access key's digits, as an account's own key would say.
let sts: Server;
let stsUrl = "";
const stsCalls: string[] = [];
let html: Server;
let htmlUrl = "";

const accessKeyOf = (req: IncomingMessage) =>
  /Credential=([^/]+)\//.exec(String(req.headers.authorization))?.[1] ?? "";

async function listen(s: Server): Promise<string> {
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  sts = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      if (!body.includes("Action=GetCallerIdentity")) {
        res.writeHead(400).end();
        return;
      }
      const key = accessKeyOf(req);
      stsCalls.push(key);
      const account = key.replace(/\D/g, "").padStart(12, "0").slice(-12);
      res
        .writeHead(200, { "content-type": "text/xml" })
        .end(
          `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult><Arn>arn:aws:iam::${account}:user/u</Arn><UserId>U</UserId><Account>${account}</Account></GetCallerIdentityResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></GetCallerIdentityResponse>`,
        );
    });
  });
  stsUrl = await listen(sts);
  // What moto's index page looks like to a client that expected Cloud Control's JSON.
  html = createServer((_req, res) => {
    res
      .writeHead(200, { "content-type": "text/html; charset=utf-8" })
      .end("<!doctype html>\n<html><body>Moto</body></html>");
  });
  htmlUrl = await listen(html);
});
afterAll(async () => {
  await new Promise((r) => sts.close(r));
  await new Promise((r) => html.close(r));
});

function ctxOf(accessKey: string, url: string, region = "eu-west-1", uid = `uid-${Math.random()}`) {
  const providerConfig: ProviderConfig<AwsProviderConfigSpec> = {
    apiVersion: "aws.driftless.dev/v1alpha1",
    kind: "ProviderConfig",
    metadata: { name: "pc", uid, generation: 1, resourceVersion: "1" },
    spec: {
      region,
      credentials: { source: "Secret", secretRef: { namespace: "ns", name: "s", key: "k" } },
      endpoint: { url },
    },
  };
  const secret = `[default]\naws_access_key_id = ${accessKey}\naws_secret_access_key = s\n`;
  return { providerConfig, readSecretKey: async () => secret };
}

const mr = <F>(forProvider: F): ManagedResource<F, object> => ({
  apiVersion: "x/v1",
  kind: "K",
  metadata: { name: "m", uid: "u" },
  spec: { forProvider },
});

describe("AWS home", () => {
  it("takes the account from STS for the ProviderConfig's credentials and the region from the spec, else the ProviderConfig", async () => {
    const a = ctxOf("AKIA111111111111", stsUrl);
    const b = ctxOf("AKIA222222222222", stsUrl);
    expect(await awsHome(a, "us-west-2")).toEqual({
      account: "111111111111",
      region: "us-west-2",
      endpoint: stsUrl,
    });
    expect(await awsHome(a, undefined)).toEqual({
      account: "111111111111",
      region: "eu-west-1",
      endpoint: stsUrl,
    });
    expect((await awsHome(b, undefined)).account).toBe("222222222222");
  });

  it("asks STS once per ProviderConfig and credentials per TTL", async () => {
    const ctx = ctxOf("AKIA333333333333", stsUrl);
    const before = stsCalls.length;
    let t = 1_000_000;
    const now = () => t;
    await Promise.all([awsAccount(ctx, now), awsAccount(ctx, now), awsAccount(ctx, now)]);
    t += ACCOUNT_TTL_MS - 1;
    await awsAccount(ctx, now);
    expect(stsCalls.length - before).toBe(1);
    t += 2;
    await awsAccount(ctx, now);
    expect(stsCalls.length - before).toBe(2);
    // Other credentials in the same ProviderConfig are another identity: asked anew.
    const rotated = ctxOf("AKIA444444444444", stsUrl, "eu-west-1", ctx.providerConfig.metadata.uid as string);
    expect(await awsAccount(rotated, now)).toBe("444444444444");
    expect(stsCalls.length - before).toBe(3);
  });

  it("is every hand-written and generated kind's client's home", async () => {
    const ctx = ctxOf("AKIA555555555555", stsUrl);
    const queue = await queueProvider.connect(ctx as never);
    expect(await queue.home?.(mr({ region: "ap-south-1" }) as never)).toEqual({
      account: "555555555555",
      region: "ap-south-1",
      endpoint: stsUrl,
    });
    const spec = loadAwsccSpec(
      loadAwsccCatalog().kinds.find((k) => k.typeName === "AWS::Logs::LogGroup") as never,
    );
    const logs = await cloudControlProvider(spec).connect(ctx as never);
    expect(await logs.home?.(mr({}) as never)).toEqual({
      account: "555555555555",
      region: "eu-west-1",
      endpoint: stsUrl,
    });
  });
});

describe("an AWS endpoint that does not speak the API", () => {
  it("is named with what it answered and what the ProviderConfig must point to", async () => {
    const spec = loadAwsccSpec(
      loadAwsccCatalog().kinds.find((k) => k.typeName === "AWS::Logs::LogGroup") as never,
    );
    const client = await cloudControlProvider(spec).connect(ctxOf("AKIASECRETISH", htmlUrl) as never);
    const err = await client.observe(mr({}) as never, "g").catch((e: Error) => e);
    expect(err).toBeInstanceOf(EndpointMismatchError);
    const msg = (err as Error).message;
    expect(msg).toContain(`the endpoint ${htmlUrl} does not speak the AWS CloudControl API`);
    expect(msg).toContain("HTTP 200, Content-Type text/html; charset=utf-8");
    expect(msg).not.toContain("Moto");
    expect(msg).toContain("spec.endpoint.url must point to");
    expect(msg).not.toContain("Unexpected token");
    expect(msg).not.toContain("SECRETISH");
  });
});
