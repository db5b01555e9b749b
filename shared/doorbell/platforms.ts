// The doorbell's Lambda edge, SDK-free: a Function URL event (payload format 2.0) in, the platform's
// response out; it ends in handleDoorbellHttp (http.ts). Cloud Run's doorbell is server.ts itself.
import type { DoorbellRequest, DoorbellResponse } from "./http.ts";

/** The fields of a Lambda Function URL event (payload format version 2.0) the doorbell reads. */
export interface LambdaUrlEvent {
  version?: string;
  rawPath: string;
  body?: string;
  headers?: Record<string, string | undefined>;
  isBase64Encoded?: boolean;
  requestContext: { http: { method: string; path?: string } };
}

export interface LambdaUrlResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** Whether a Lambda event is a Function URL request (the reconcile function also takes SQS batches). */
export function isLambdaUrlEvent(event: unknown): event is LambdaUrlEvent {
  const e = event as Partial<LambdaUrlEvent> | undefined;
  return (
    typeof e === "object" &&
    e !== null &&
    typeof e.rawPath === "string" &&
    typeof e.requestContext?.http?.method === "string"
  );
}

export function fromLambdaUrl(event: LambdaUrlEvent): DoorbellRequest {
  const raw = event.body ?? "";
  return {
    method: event.requestContext.http.method,
    path: event.rawPath,
    headers: { "webhook-request-origin": event.headers?.["webhook-request-origin"] },
    body: event.isBase64Encoded ? Buffer.from(raw, "base64").toString("utf8") : raw,
  };
}

export const toLambdaUrl = (r: DoorbellResponse): LambdaUrlResult => ({
  statusCode: r.status,
  headers: r.headers,
  body: r.body,
});
