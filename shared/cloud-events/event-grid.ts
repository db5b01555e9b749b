// Azure Event Grid resource events (a system topic on the subscription) delivered over HTTPS: the body of
// a POST to the doorbell's `/<secret>/events/azure` route. Event Grid schema (an array) or CloudEvents 1.0
// (one structured event or a batch array). Answers the SubscriptionValidationEvent handshake; every other
// event is resolved to keys (resolve.ts) and enqueued as driftless messages, reason "drift".
//
// Status codes, as Event Grid reads them: 200 — delivered (dropped events included); 400 — nothing in
// the body is an event, 413 — over 1 MiB or MAX_EVENTS_PER_DELIVERY (Event Grid dead-letters both at
// once, no retries); 429 — the source is over its LIST rate, 500 — a LIST or the enqueue failed: Event
// Grid retries the whole delivery later (resolving again is harmless: keys only).
import { z } from "zod";
import { makeMessage } from "../queue/message.ts";
import type { QueueProducer } from "../queue/port.ts";
import { noopLogger, type ReconcileLogger, type ResourceKey } from "../reconciler/contract.ts";
import { type CloudEventResolver, CloudEventsRateLimitedError } from "./resolve.ts";

export const RESOURCE_WRITE_SUCCESS = "Microsoft.Resources.ResourceWriteSuccess";
export const RESOURCE_DELETE_SUCCESS = "Microsoft.Resources.ResourceDeleteSuccess";
export const SUBSCRIPTION_VALIDATION = "Microsoft.EventGrid.SubscriptionValidationEvent";
/** Event Grid delivers at most 1 MiB per request. */
export const MAX_EVENT_GRID_BYTES = 1024 * 1024;
/**
 * Events one delivery may hold (Event Grid batches 1 by default; `--max-events-per-batch` up to this):
 * within one source's LIST burst, so a full delivery never trips its own rate limit. More is a 413.
 */
export const MAX_EVENTS_PER_DELIVERY = 100;

const resourceData = z.object({
  resourceUri: z.string().min(1),
  operationName: z.string().min(1),
  status: z.string().optional(),
  claims: z.record(z.string(), z.unknown()).optional(),
  authorization: z
    .object({ evidence: z.object({ principalId: z.string().optional() }).partial().optional() })
    .partial()
    .optional(),
});

/** One event of either schema, normalised: what it is, its id, and its data. */
const eventGridEvent = z
  .object({ id: z.string().min(1), eventType: z.string().min(1), data: z.unknown() })
  .transform((e) => ({ id: e.id, type: e.eventType, data: e.data }));
const cloudEvent = z
  .object({
    specversion: z.literal("1.0"),
    id: z.string().min(1),
    type: z.string().min(1),
    data: z.unknown(),
  })
  .transform((e) => ({ id: e.id, type: e.type, data: e.data }));
const anyEvent = z.union([eventGridEvent, cloudEvent]);

const validationData = z.object({ validationCode: z.string().min(1) });

export interface EventGridDeps {
  resolver: Pick<CloudEventResolver, "armResource">;
  producer: Pick<QueueProducer, "send">;
  logger?: ReconcileLogger | undefined;
}

export interface EventGridResponse {
  status: number;
  body: unknown;
}

/** Counts of one delivery (the answer's body and a log line; never event contents). */
export interface EventGridSummary {
  events: number;
  enqueued: number;
  dropped: number;
  malformed: number;
}

/**
 * Handles one Event Grid delivery. `body` is the parsed JSON (or its text). Never throws: a failure is a
 * 500 for Event Grid to retry.
 */
export async function handleEventGridRequest(deps: EventGridDeps, body: unknown): Promise<EventGridResponse> {
  const logger = deps.logger ?? noopLogger;
  let json: unknown = body;
  if (typeof body === "string" || body instanceof Uint8Array) {
    const text = typeof body === "string" ? body : Buffer.from(body).toString("utf8");
    if (Buffer.byteLength(text, "utf8") > MAX_EVENT_GRID_BYTES) return badRequest(logger, "body too large");
    try {
      json = JSON.parse(text);
    } catch {
      return badRequest(logger, "body is not JSON");
    }
  }
  const raw = Array.isArray(json) ? json : [json];
  if (raw.length > MAX_EVENTS_PER_DELIVERY) {
    logger.warn({ events: raw.length }, "Event Grid delivery with too many events refused");
    return { status: 413, body: { error: `more than ${MAX_EVENTS_PER_DELIVERY} events in one delivery` } };
  }
  const summary: EventGridSummary = { events: raw.length, enqueued: 0, dropped: 0, malformed: 0 };
  const events = raw.flatMap((r) => {
    const parsed = anyEvent.safeParse(r);
    if (parsed.success) return [parsed.data];
    summary.malformed++;
    return [];
  });
  if (events.length === 0) return badRequest(logger, "no Event Grid or CloudEvents event in the body");

  const validation = events.find((e) => e.type === SUBSCRIPTION_VALIDATION);
  if (validation) {
    const data = validationData.safeParse(validation.data);
    if (!data.success) return badRequest(logger, "validation event without a validationCode");
    logger.info({ eventId: validation.id }, "Event Grid subscription validated");
    return { status: 200, body: { validationResponse: data.data.validationCode } };
  }

  const keys = new Map<string, ResourceKey>();
  try {
    for (const e of events) {
      if (e.type !== RESOURCE_WRITE_SUCCESS && e.type !== RESOURCE_DELETE_SUCCESS) {
        summary.dropped++;
        logger.debug({ eventId: e.id, type: e.type }, "Event Grid event of another type dropped");
        continue;
      }
      const data = resourceData.safeParse(e.data);
      if (!data.success) {
        summary.malformed++;
        logger.warn(
          { eventId: e.id, type: e.type, error: data.error.issues[0]?.message },
          "malformed Event Grid event dropped",
        );
        continue;
      }
      const d = data.data;
      const resolved = await deps.resolver.armResource(
        { operationName: d.operationName, resourceUri: d.resourceUri },
        { claims: d.claims, principalId: d.authorization?.evidence?.principalId, id: e.id },
      );
      if (resolved.keys.length === 0) summary.dropped++;
      for (const k of resolved.keys) keys.set(`${k.apiVersion}/${k.kind}/${k.namespace ?? ""}/${k.name}`, k);
    }
  } catch (err) {
    logger.warn(
      { ...summary, error: (err as Error).message },
      "cannot resolve Event Grid events; Event Grid retries",
    );
    // 429: Event Grid retries later with its backoff, as for a 500.
    if (err instanceof CloudEventsRateLimitedError)
      return { status: 429, body: { error: "too many events from this source; retry later" } };
    return { status: 500, body: { error: "cannot resolve the events; retry" } };
  }

  if (keys.size > 0) {
    const messages = [...keys.values()].map((k) => makeMessage(k, "drift"));
    try {
      const sent = await deps.producer.send(messages);
      if (sent.failed.length > 0) throw new Error(sent.failed[0]?.error.message ?? "send failed");
      summary.enqueued = sent.sent;
    } catch (err) {
      logger.warn({ ...summary, error: (err as Error).message }, "cannot enqueue; Event Grid retries");
      return { status: 500, body: { error: "cannot enqueue; retry" } };
    }
  }
  logger.info({ ...summary }, "Event Grid delivery handled");
  return { status: 200, body: summary };
}

function badRequest(logger: ReconcileLogger, error: string): EventGridResponse {
  logger.warn({ error }, "malformed Event Grid delivery refused");
  return { status: 400, body: { error } };
}

/**
 * The CloudEvents 1.0 webhook handshake (an HTTP OPTIONS before the first delivery): the headers to
 * answer with. Event Grid sends `WebHook-Request-Origin: eventgrid.azure.net`.
 */
export function cloudEventsHandshakeHeaders(requestOrigin: string | undefined): Record<string, string> {
  return {
    "WebHook-Allowed-Origin":
      requestOrigin && /^[\w.-]+$/.test(requestOrigin) ? requestOrigin : "eventgrid.azure.net",
    "WebHook-Allowed-Rate": "*",
  };
}
