// The AWS error classes a kind's SDK calls throw when its client classifies in its own middleware
// (config.ts classifyingErrors): what the engine's backoff and conditions branch on, with no aws() wrapper.
import { GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { CredentialsError, InvalidSpecError, ThrottledError } from "../../../shared/api/external.ts";
import {
  awsClientConfig,
  awsErrorCode,
  ClientCache,
  classifyingErrors,
} from "../../../shared/providers/aws/config.ts";

/** An SQS client whose every request fails, before the wire, with an error shaped as the SDK's. */
function failingClient(name: string, status: number) {
  const client = new SQSClient({
    region: "eu-west-1",
    endpoint: "http://127.0.0.1:1",
    credentials: { accessKeyId: "a", secretAccessKey: "b" },
    maxAttempts: 1,
  });
  client.middlewareStack.add(
    () => async () => {
      throw Object.assign(new Error(`${name} happened`), { name, $metadata: { httpStatusCode: status } });
    },
    { step: "build", name: "failEveryRequest" },
  );
  return client;
}

const call = (client: SQSClient) =>
  client.send(new GetQueueAttributesCommand({ QueueUrl: "http://127.0.0.1:1/q", AttributeNames: ["All"] }));

describe("classifyingErrors", () => {
  it("turns throttling and refused credentials into the engine's error classes, keeping the cause", async () => {
    const throttled = await call(classifyingErrors(failingClient("ThrottlingException", 400))).catch(
      (e) => e,
    );
    expect(throttled).toBeInstanceOf(ThrottledError);
    expect(awsErrorCode((throttled as Error).cause)).toBe("ThrottlingException");
    await expect(call(classifyingErrors(failingClient("InvalidClientTokenId", 403)))).rejects.toBeInstanceOf(
      CredentialsError,
    );
  });

  it("leaves other errors as the SDK threw them, so a kind still reads their code (not found)", async () => {
    const missing = await call(classifyingErrors(failingClient("QueueDoesNotExist", 400))).catch((e) => e);
    expect(missing).not.toBeInstanceOf(ThrottledError);
    expect(awsErrorCode(missing)).toBe("QueueDoesNotExist");
  });

  it("a client without it throws the SDK's error unclassified", async () => {
    await expect(call(failingClient("ThrottlingException", 400))).rejects.not.toBeInstanceOf(ThrottledError);
  });

  it("adds a service's own can-never-succeed codes to the AWS-wide ones", async () => {
    const invalid = await call(
      classifyingErrors(failingClient("InvalidVpc.Range", 400), { invalid: new Set(["InvalidVpc.Range"]) }),
    ).catch((e) => e);
    expect(invalid).toBeInstanceOf(InvalidSpecError);
    expect(awsErrorCode((invalid as Error).cause)).toBe("InvalidVpc.Range");
    await expect(call(classifyingErrors(failingClient("InvalidVpc.Range", 400)))).rejects.not.toBeInstanceOf(
      InvalidSpecError,
    );
  });
});

describe("ClientCache", () => {
  it("classifies the errors of every client it makes, with the service's own codes", async () => {
    const cfg = await awsClientConfig(
      {
        providerConfig: {
          apiVersion: "aws.driftless.dev/v1alpha1",
          kind: "ProviderConfig",
          metadata: { name: "default", uid: "u" },
          spec: { credentials: { source: "InjectedIdentity" }, region: "eu-west-1" },
        },
        readSecretKey: async () => "",
      } as never,
      undefined,
    );
    const cache = new ClientCache(() => failingClient("StorageTypeNotSupported", 400), {
      invalid: new Set(["StorageTypeNotSupported"]),
    });
    await expect(call(cache.get(cfg))).rejects.toBeInstanceOf(InvalidSpecError);
    const sqs = new ClientCache(() => failingClient("RequestThrottled", 400));
    await expect(call(sqs.get(cfg))).rejects.toBeInstanceOf(ThrottledError);
  });
});
