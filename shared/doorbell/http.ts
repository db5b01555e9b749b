// The doorbell's HTTP surface, platform-neutral: the Lambda Function URL adapter, the Cloud Functions
// HTTP function and the local HTTPS server (server.ts) all turn their request into a DoorbellRequest
// and send back the DoorbellResponse.
//
// Routes, each behind a secret path segment (webhook URLs may carry a path but no query string):
//   POST /<secret>/admit          AdmissionReview from the API server (admission.ts)
//   POST /<secret>/in-use         AdmissionReview of a DELETE of an in-use resource (in-use.ts), when served
//   POST /<secret>/events/azure   Event Grid deliveries (cloud events, when configured)
// Anything else — a wrong or missing secret included — is a bare 404, the same for every path, so the
// endpoint tells a prober nothing. The secret is compared in constant time.
import { createHash, timingSafeEqual } from "node:crypto";
import { MAX_EVENT_GRID_BYTES } from "../cloud-events/event-grid.ts";
import type { Logger } from "../pipeline/common.ts";

export interface DoorbellRequest {
  method: string;
  /** The path without query string, e.g. `/<secret>/admit`. */
  path: string;
  /** The raw body (UTF-8). */
  body: string;
  /** Request headers, lower-case names (only the CloudEvents handshake reads one). */
  headers?: Record<string, string | undefined>;
}

export interface DoorbellResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type JsonHandler = (body: unknown) => Promise<{ status: number; body: unknown }>;

export interface DoorbellRoutes {
  /** The path secret; without one (or one too short) every request is refused. */
  secret: string | undefined;
  admit: JsonHandler;
  /** The in-use guard (in-use.ts), where the doorbell reaches the cluster. */
  inUse?: JsonHandler | undefined;
  /** Event Grid deliveries (shared/cloud-events/event-grid.ts), when cloud events are on. */
  eventsAzure?: JsonHandler | undefined;
  /** The CloudEvents 1.0 webhook handshake (HTTP OPTIONS): response headers for a request origin. */
  eventsAzureHandshake?: ((origin: string | undefined) => Record<string, string>) | undefined;
  logger: Logger;
}

/** Shortest path secret accepted: 32 characters (`openssl rand -hex 32` gives 64). */
export const MIN_SECRET_LENGTH = 32;
/** Largest body read: an AdmissionReview carries the object and the old object (≤ 1.5 MiB each). */
export const MAX_BODY_BYTES = 3.5 * 1024 * 1024;
/** Characters a secret may have: it is a URL path segment. */
const SECRET_CHARS = /^[A-Za-z0-9._~-]+$/;

const json = (status: number, body: unknown): DoorbellResponse => ({
  status,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});
const notFound = (): DoorbellResponse => json(404, { error: "not found" });

/** Why a configured secret cannot be used, or undefined when it can. */
export function secretProblem(secret: string | undefined): string | undefined {
  if (!secret) return "no doorbell secret is configured (DRIFTLESS_DOORBELL_SECRET)";
  if (secret.length < MIN_SECRET_LENGTH)
    return `the doorbell secret must be at least ${MIN_SECRET_LENGTH} characters`;
  if (!SECRET_CHARS.test(secret)) return "the doorbell secret may only contain A-Z a-z 0-9 . _ ~ -";
  return undefined;
}

// Equal-length digests, so the comparison takes the same time whatever the guess's length.
const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * The route a path names behind the right secret (compared in constant time), with its body limit; or
 * undefined, for which the answer is a bare 404. A server calls it before reading any body.
 */
export function routeOf(
  routes: DoorbellRoutes,
  path: string,
): { route: string; handler: JsonHandler; limit: number } | undefined {
  const [, given = "", ...rest] = path.split("/");
  const route = rest.join("/");
  const secretOk = secretProblem(routes.secret) === undefined && routes.secret !== undefined;
  if (!secretOk || !timingSafeEqual(digest(given), digest(routes.secret as string))) return undefined;
  const handler =
    route === "admit"
      ? routes.admit
      : route === "in-use"
        ? routes.inUse
        : route === "events/azure"
          ? routes.eventsAzure
          : undefined;
  if (!handler) return undefined;
  // Each route's own limit, before the body is parsed: Event Grid never sends more than 1 MiB.
  return { route, handler, limit: handler === routes.eventsAzure ? MAX_EVENT_GRID_BYTES : MAX_BODY_BYTES };
}

export async function handleDoorbellHttp(
  routes: DoorbellRoutes,
  req: DoorbellRequest,
): Promise<DoorbellResponse> {
  const found = routeOf(routes, req.path);
  if (!found) return notFound();
  const { route, handler, limit } = found;
  if (req.method === "OPTIONS" && handler === routes.eventsAzure && routes.eventsAzureHandshake)
    return {
      status: 200,
      headers: routes.eventsAzureHandshake(req.headers?.["webhook-request-origin"]),
      body: "",
    };
  if (req.method !== "POST") return { ...json(405, { error: "POST only" }), headers: { allow: "POST" } };
  if (Buffer.byteLength(req.body, "utf8") > limit) return json(413, { error: "body too large" });
  let body: unknown;
  try {
    body = JSON.parse(req.body);
  } catch {
    routes.logger.warn({ route }, "doorbell: body is not JSON");
    return json(400, { error: "body is not JSON" });
  }
  try {
    const out = await handler(body);
    return json(out.status, out.body);
  } catch (err) {
    routes.logger.error({ route, error: (err as Error).message }, "doorbell: handler failed");
    return json(500, { error: "internal error" });
  }
}

/** The URL path of a route for a secret: what the webhook configuration and Event Grid are given. */
export const doorbellPath = (secret: string, route: "admit" | "in-use" | "events/azure") =>
  `/${secret}/${route}`;
