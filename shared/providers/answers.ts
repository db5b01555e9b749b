// An endpoint that answers, but not in its API's language (an HTML page, another service, a 404 on the
// API root): reported as that, with what the ProviderConfig must point to, instead of a parser's error.

import { ExternalError } from "../api/external.ts";
import { namedError } from "../named-error.ts";

/** The endpoint a ProviderConfig sends a cloud's calls to does not speak that API. */
export class EndpointMismatchError extends namedError("EndpointMismatchError", ExternalError) {}

/** What an endpoint answered: never a request, never a header but Content-Type. */
export interface Answer {
  status?: number | undefined;
  contentType?: string | undefined;
  /** The body, or its first bytes. */
  body?: unknown;
}

const FIRST_BYTES = 80;

/** The first bytes of a body as one line of text, or undefined when it is not text we hold. */
export function firstBytes(body: unknown): string | undefined {
  let text: string | undefined;
  if (typeof body === "string") text = body;
  else if (body instanceof Uint8Array) text = Buffer.from(body.subarray(0, FIRST_BYTES * 4)).toString("utf8");
  if (text === undefined) return undefined;
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > FIRST_BYTES ? `${line.slice(0, FIRST_BYTES)}…` : line;
}

/**
 * An HTML page (a web server, a proxy's error page, another emulator's index) is never a cloud API's answer.
 * With a body, the body decides (some emulators label XML errors text/html); without one, the content type.
 */
export function isHtml(a: Answer): boolean {
  if (a.body !== undefined) return /^\s*<(!doctype html|html)/i.test(firstBytes(a.body) ?? "");
  return a.contentType?.toLowerCase().includes("html") ?? false;
}

/**
 * The error for an answer that is not the API's: which endpoint, what it answered (status and content
 * type, never the body) and what the ProviderConfig must point to.
 */
export function endpointMismatch(
  endpoint: string,
  api: string,
  answer: Answer,
  pointTo: string,
  cause?: unknown,
): EndpointMismatchError {
  const what = [
    answer.status !== undefined ? `HTTP ${answer.status}` : undefined,
    answer.contentType ? `Content-Type ${answer.contentType}` : "no Content-Type",
  ].filter(Boolean);
  // Never the body: the message ends in the resource's status, and the endpoint is the tenant's choice.
  return new EndpointMismatchError(
    `the endpoint ${endpoint} does not speak the ${api}: it answered ${what.join(", ")}; ${pointTo}`,
    cause === undefined ? undefined : { cause },
  );
}
