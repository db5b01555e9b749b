// The AWS error classes a kind's SDK calls throw when its client classifies in its own middleware
// (config.ts classifyingErrors): what the engine's backoff and conditions branch on, with no aws() wrapper.
import { GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { CredentialsError, ThrottledError } from "../../../shared/api/external.ts";
import { awsErrorCode, classifyingErrors } from "../../../shared/providers/aws/config.ts";

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
});
