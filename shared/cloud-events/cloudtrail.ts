// CloudTrail management events as EventBridge delivers them ("AWS API Call via CloudTrail") to the
// reconcile queue: the body of an SQS message next to driftless's own messages (queue/message.ts).
import { z } from "zod";
import type { CloudTrailCall } from "../api/cloud-events.ts";
import { parseEnvelope } from "./envelope.ts";

export const CLOUDTRAIL_DETAIL_TYPE = "AWS API Call via CloudTrail";
/** EventBridge events are at most 256 KiB; anything larger is not one. */
export const MAX_EVENTBRIDGE_BYTES = 256 * 1024;

const record = z.record(z.string(), z.unknown());

const cloudTrailDetail = z.object({
  eventSource: z.string().min(1),
  eventName: z.string().min(1),
  awsRegion: z.string().optional(),
  userAgent: z.string().optional(),
  userIdentity: z
    .object({
      type: z.string().optional(),
      arn: z.string().optional(),
      sessionContext: z
        .object({ sessionIssuer: z.object({ arn: z.string().optional() }).partial().optional() })
        .partial()
        .optional(),
    })
    .partial()
    .optional(),
  // null in CloudTrail when the call had none.
  requestParameters: record.nullish(),
  responseElements: record.nullish(),
  errorCode: z.string().optional(),
  readOnly: z.boolean().optional(),
  eventID: z.string().optional(),
});

const eventBridgeEvent = z.object({
  version: z.string(),
  id: z.string().min(1),
  "detail-type": z.literal(CLOUDTRAIL_DETAIL_TYPE),
  source: z.string().regex(/^aws\.[a-z0-9-]+$/, "must be aws.<service>"),
  account: z.string().optional(),
  time: z.string().optional(),
  region: z.string().optional(),
  detail: cloudTrailDetail,
});

export type CloudTrailEvent = z.infer<typeof eventBridgeEvent>;

export type EventBridgeParse =
  | { kind: "not-eventbridge" }
  | { kind: "malformed"; id: string | undefined; error: string }
  | { kind: "event"; event: CloudTrailEvent };

/**
 * Reads an SQS body as an EventBridge event. `not-eventbridge` when it has no `detail-type` (a driftless
 * message, or anything else: the caller's own decoding decides); `malformed` when it is an EventBridge
 * event but not a valid CloudTrail one. Never throws; the error never quotes the body.
 */
export function parseEventBridgeBody(body: string): EventBridgeParse {
  const r = parseEnvelope(body, {
    maxBytes: MAX_EVENTBRIDGE_BYTES,
    marker: "detail-type",
    idField: "id",
    schema: eventBridgeEvent,
    what: "event",
  });
  if (r.kind === "other") return { kind: "not-eventbridge" };
  return r.kind === "ok" ? { kind: "event", event: r.value } : r;
}

/** The call a kind's declaration reads. */
export function cloudTrailCall(e: CloudTrailEvent): CloudTrailCall {
  return {
    eventSource: e.detail.eventSource,
    eventName: e.detail.eventName,
    awsRegion: e.detail.awsRegion ?? e.region,
    requestParameters: e.detail.requestParameters ?? {},
    responseElements: e.detail.responseElements ?? {},
  };
}

/** Who made the call: the role behind an assumed-role session, else the identity's own ARN. */
export function cloudTrailPrincipals(e: CloudTrailEvent): string[] {
  const id = e.detail.userIdentity;
  return [id?.sessionContext?.sessionIssuer?.arn, id?.arn].filter((v): v is string => Boolean(v));
}
