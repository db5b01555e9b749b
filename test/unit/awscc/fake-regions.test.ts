// The Cloud Control fake keeps resources per account and region, as AWS does: a read in another region or
// with another account's credentials finds nothing, so a test cannot pass by reading the wrong place.
import {
  CloudControlClient,
  CreateResourceCommand,
  GetResourceCommand,
  GetResourceRequestStatusCommand,
} from "@aws-sdk/client-cloudcontrol";
import { GetCallerIdentityCommand, STSClient } from "@aws-sdk/client-sts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFake } from "../../support/awscc.ts";

let fake: Awaited<ReturnType<typeof startFake>>;
beforeAll(async () => {
  fake = await startFake();
});
afterAll(() => fake.close());

const TYPE = "AWS::Logs::LogGroup";
const cc = (region: string, accessKeyId = "testing") =>
  new CloudControlClient({
    region,
    endpoint: fake.url,
    credentials: { accessKeyId, secretAccessKey: "testing" },
    maxAttempts: 1,
  });

async function create(client: CloudControlClient, name: string) {
  const out = await client.send(
    new CreateResourceCommand({ TypeName: TYPE, DesiredState: JSON.stringify({ LogGroupName: name }) }),
  );
  const ev = await client.send(
    new GetResourceRequestStatusCommand({ RequestToken: out.ProgressEvent?.RequestToken as string }),
  );
  expect(ev.ProgressEvent?.OperationStatus).toBe("SUCCESS");
}

const get = (client: CloudControlClient, name: string) =>
  client.send(new GetResourceCommand({ TypeName: TYPE, Identifier: name })).then(
    (out) => JSON.parse(out.ResourceDescription?.Properties ?? "{}") as Record<string, unknown>,
    (err: Error) => err.name,
  );

describe("Cloud Control fake: regions and accounts", () => {
  it("finds a resource only in the region it was created in, with that region in its ARN", async () => {
    await create(cc("us-east-1"), "g-regional");
    expect(await get(cc("us-east-1"), "g-regional")).toMatchObject({
      Arn: expect.stringContaining(":logs:us-east-1:123456789012:"),
    });
    expect(await get(cc("us-west-2"), "g-regional")).toBe("ResourceNotFoundException");
    // The same name in another region is another resource.
    await create(cc("us-west-2"), "g-regional");
    const all = await fake.resources(TYPE);
    expect(all.filter((r) => r.identifier === "g-regional")).toHaveLength(2);
  });

  it("keeps each account's resources apart, and answers STS with the access key's account", async () => {
    const other = "AKIA210987654321";
    await create(cc("us-east-1", other), "g-account");
    expect(await get(cc("us-east-1"), "g-account")).toBe("ResourceNotFoundException");
    expect(await get(cc("us-east-1", other), "g-account")).toMatchObject({
      Arn: expect.stringContaining(":210987654321:"),
    });
    const sts = (accessKeyId: string) =>
      new STSClient({
        region: "us-east-1",
        endpoint: fake.url,
        credentials: { accessKeyId, secretAccessKey: "s" },
      });
    expect((await sts(other).send(new GetCallerIdentityCommand({}))).Account).toBe("210987654321");
    expect((await sts("testing").send(new GetCallerIdentityCommand({}))).Account).toBe("123456789012");
  });
});
