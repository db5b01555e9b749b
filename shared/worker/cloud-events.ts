// Cloud audit events that arrive on the work queue next to driftless's own messages (CloudTrail via
// EventBridge on SQS; Cloud Audit Logs via a log sink on Pub/Sub): recognised, resolved to keys
// (cloud-events/resolve.ts) and handed to the worker core as work items with reason "drift", in the
// same invocation. The queue adapters (sqs.ts, pubsub.ts) settle them.
import { type AuditLogEntry, parseAuditLogData } from "../cloud-events/audit-log.ts";
import { type CloudTrailEvent, parseEventBridgeBody } from "../cloud-events/cloudtrail.ts";
import type { CloudEventResolver } from "../cloud-events/resolve.ts";
import { makeMessage, messageKey } from "../queue/message.ts";
import type { ResourceKey } from "../reconciler/contract.ts";
import type { BatchItem, MessageOutcome } from "./core.ts";

/** What a queue body is, when it is not a driftless message. */
export type CloudBody =
  | { kind: "none" }
  | { kind: "malformed"; error: string }
  | { kind: "cloudtrail"; event: CloudTrailEvent }
  | { kind: "audit-log"; entry: AuditLogEntry };

/** Reads an SQS body that is not a driftless message as an EventBridge CloudTrail event. */
export function cloudBodyOfSqs(body: string): CloudBody {
  const parsed = parseEventBridgeBody(body);
  if (parsed.kind === "event") return { kind: "cloudtrail", event: parsed.event };
  if (parsed.kind === "malformed") return { kind: "malformed", error: `EventBridge event: ${parsed.error}` };
  return { kind: "none" };
}

/** Reads Pub/Sub data that is not a driftless message as a Cloud Audit Logs entry. */
export function cloudBodyOfPubSub(data: Buffer): CloudBody {
  const parsed = parseAuditLogData(data);
  if (parsed.kind === "entry") return { kind: "audit-log", entry: parsed.entry };
  if (parsed.kind === "malformed") return { kind: "malformed", error: `audit log entry: ${parsed.error}` };
  return { kind: "none" };
}

/** Resolves a recognised body to keys; throws when a LIST failed (the queue must redeliver it). */
export function resolveCloudBody(
  resolver: Pick<CloudEventResolver, "cloudTrail" | "auditLog">,
  body: Extract<CloudBody, { kind: "cloudtrail" | "audit-log" }>,
): Promise<{ keys: ResourceKey[] }> {
  return body.kind === "cloudtrail" ? resolver.cloudTrail(body.event) : resolver.auditLog(body.entry);
}

/** The work items of one cloud event's keys; `itemId` makes each item's id (unique in the batch). */
export function cloudEventItems(
  keys: readonly ResourceKey[],
  opts: { correlationId: string; receiveCount: number; itemId: (n: number) => string; at?: Date },
): BatchItem[] {
  const at = (opts.at ?? new Date()).toISOString();
  return keys.map((key, n) => ({
    id: opts.itemId(n),
    key,
    context: { reason: "drift", correlationId: opts.correlationId, receiveCount: opts.receiveCount },
    at,
  }));
}

/** The per-object key a driftless message for `key` would have (duplicates across messages and events). */
export const keyOfResource = (key: ResourceKey) => messageKey(makeMessage(key, "drift"));

/**
 * How a cloud event is settled from its keys' outcomes: `retry` when any failed (the event comes back and
 * is resolved again), else the keys that asked to be looked at again later (sent as fresh messages).
 */
export function cloudEventOutcome(
  outcomes: ReadonlyArray<{ key: ResourceKey; outcome: MessageOutcome }>,
):
  | { kind: "retry"; afterMs: number; error: Error }
  | { kind: "done"; requeue: Array<{ key: ResourceKey; afterMs: number }> } {
  const failed = outcomes.find((o) => o.outcome.kind === "retry");
  if (failed && failed.outcome.kind === "retry") return failed.outcome;
  return {
    kind: "done",
    requeue: outcomes.flatMap((o) =>
      o.outcome.kind === "requeue" ? [{ key: o.key, afterMs: o.outcome.afterMs }] : [],
    ),
  };
}
