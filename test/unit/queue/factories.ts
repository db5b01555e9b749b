// Factories for queue tests: messages by name, deferred promises, and a handler that records calls.
import type { ReconcileMessage, ReconcileReason } from "../../../shared/queue/message.ts";

export function aMessage(overrides: Partial<ReconcileMessage> = {}): ReconcileMessage {
  return {
    v: 1,
    apiVersion: "sqs.aws.driftless.dev/v1alpha1",
    kind: "Queue",
    namespace: "team-a",
    name: "orders",
    reason: "watch" satisfies ReconcileReason,
    at: "2025-01-02T03:04:05.678Z",
    ...overrides,
  };
}

export function named(name: string, overrides: Partial<ReconcileMessage> = {}): ReconcileMessage {
  return aMessage({ name, ...overrides });
}

export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve: (value: T) => void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
