// A rejected doorbell request (a wrong path secret) must cost nothing but the secret check: no Secrets
// Manager read, no API-server call, no SQS call — counted at a server that stands for every AWS and
// Kubernetes endpoint, over the Lambda module's whole cold start (import, init, the request).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

const SECRET = "d".repeat(48);
let server: Server;
const requests: string[] = [];
let base = "";

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(`${req.method} ${req.headers["x-amz-target"] ?? req.url}`);
    res.writeHead(500, { "content-type": "application/json" }).end("{}");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

describe("the AWS doorbell's cold path", () => {
  it("attack: a request with a wrong path secret makes no call at all, from the module's first import", async () => {
    vi.resetModules();
    const saved = { ...process.env };
    Object.assign(process.env, {
      LOG_LEVEL: "error",
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
      AWS_SECRET_ACCESS_KEY: "example",
      AWS_ENDPOINT_URL: base,
      DRIFTLESS_QUEUE: "sqs",
      DRIFTLESS_SQS_QUEUE_URL: `${base}/123456789012/work`,
      DRIFTLESS_KUBECONFIG_SECRET_ARN: "arn:aws:secretsmanager:us-east-1:123456789012:secret:kubeconfig",
      DRIFTLESS_EKS_ENDPOINT: "",
      DRIFTLESS_DOORBELL_SECRET: SECRET,
    });
    try {
      const { handler } = await import("../../../functions/aws/doorbell.ts");
      const wrong = await handler({
        version: "2.0",
        rawPath: `/${"x".repeat(48)}/admit`,
        body: JSON.stringify({ big: "x".repeat(1000) }),
        requestContext: { http: { method: "POST" } },
      });
      expect(wrong.statusCode).toBe(404);
      await new Promise((r) => setTimeout(r, 200));
      expect(requests).toEqual([]);
    } finally {
      process.env = saved;
    }
  });
});
