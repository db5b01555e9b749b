// Helpers for the queue integration suites: clients for the local stack, unique names, polling waits.
import { randomBytes } from "node:crypto";
import { SQSClient } from "@aws-sdk/client-sqs";
import { PubSub } from "@google-cloud/pubsub";
import type { QueueEvent } from "../../../shared/queue/port.ts";

function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") {
    throw new Error(`${name} is not set: run with the integration project (test/support/global-stack.ts)`);
  }
  return value;
}

export function sqsClient(): SQSClient {
  return new SQSClient({
    endpoint: requireEnv("AWS_ENDPOINT_URL"),
    region: process.env["AWS_REGION"] ?? "us-east-1",
    credentials: {
      accessKeyId: process.env["AWS_ACCESS_KEY_ID"] ?? "testing",
      secretAccessKey: process.env["AWS_SECRET_ACCESS_KEY"] ?? "testing",
    },
  });
}

export function pubSubClient(): PubSub {
  requireEnv("PUBSUB_EMULATOR_HOST");
  return new PubSub({ projectId: process.env["GCP_PROJECT_ID"] ?? "driftless-local" });
}

/** A name no other suite or run uses, so suites can run in parallel against one stack. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
}

export async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export function eventLog(): {
  events: QueueEvent[];
  sink: (e: QueueEvent) => void;
  messages: () => string[];
} {
  const events: QueueEvent[] = [];
  return { events, sink: (e) => events.push(e), messages: () => events.map((e) => e.msg) };
}
