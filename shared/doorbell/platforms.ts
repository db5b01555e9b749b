// The doorbell's platform edges, SDK-free: a Lambda Function URL event (payload format 2.0) and a Cloud
// Functions HTTP request in, the platform's response out. Both end in handleDoorbellHttp (http.ts).
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

/** The parts of a Functions Framework (Express) request the doorbell reads. */
export interface HttpFunctionRequest {
  method: string;
  path: string;
  get?(name: string): string | undefined;
  /** The body's bytes (the Functions Framework keeps them beside the parsed body). */
  rawBody?: Buffer;
  body?: unknown;
}

export function fromHttpFunction(req: HttpFunctionRequest): DoorbellRequest {
  const body =
    req.rawBody !== undefined
      ? req.rawBody.toString("utf8")
      : typeof req.body === "string"
        ? req.body
        : req.body === undefined
          ? ""
          : JSON.stringify(req.body);
  return {
    method: req.method,
    path: req.path,
    body,
    headers: { "webhook-request-origin": req.get?.("webhook-request-origin") },
  };
}
