// Google's errors as the engine's classes, Google's own message kept: HTTP answers of the JSON APIs and
// the `error` of a finished operation (google.rpc.Status, or Compute's errors list). The class decides
// what the engine does (back off, wait for dependents, stop retrying fast); the text names the cause.
import {
  CredentialsError,
  DependentsExistError,
  ExternalError,
  InvalidSpecError,
  ThrottledError,
} from "../../../api/external.ts";
import { GoogleHttpError, type GoogleRpcCode } from "../google-rest.ts";

const QUOTA_REASONS = new Set([
  "quotaExceeded",
  "rateLimitExceeded",
  "userRateLimitExceeded",
  "RATE_LIMIT_EXCEEDED",
]);

type ErrorClass = new (message: string, opts?: ErrorOptions) => Error;

/**
 * Each canonical status as the engine's class and in words (google.rpc.Code; Google's HTTP mapping in
 * cloud.google.com/apis/design/errors): FAILED_PRECONDITION and ABORTED are the cloud's state, not a bad
 * spec, though Google answers the first with HTTP 400 and the second with 409 as it does ALREADY_EXISTS.
 */
const BY_STATUS: Record<GoogleRpcCode, [ErrorClass, string]> = {
  INVALID_ARGUMENT: [InvalidSpecError, "invalid argument"],
  OUT_OF_RANGE: [InvalidSpecError, "out of range"],
  FAILED_PRECONDITION: [ExternalError, "precondition failed"],
  ALREADY_EXISTS: [ExternalError, "conflict"],
  ABORTED: [ExternalError, "conflict"],
  NOT_FOUND: [ExternalError, "not found"],
  PERMISSION_DENIED: [CredentialsError, "permission denied"],
  UNAUTHENTICATED: [CredentialsError, "unauthenticated"],
  RESOURCE_EXHAUSTED: [ThrottledError, "quota or rate limit"],
  UNAVAILABLE: [ThrottledError, "unavailable"],
  DEADLINE_EXCEEDED: [ExternalError, "deadline exceeded"],
  CANCELLED: [ExternalError, "cancelled"],
  UNIMPLEMENTED: [ExternalError, "not implemented"],
  INTERNAL: [ExternalError, "internal error"],
  UNKNOWN: [ExternalError, "unknown error"],
  DATA_LOSS: [ExternalError, "data loss"],
};

/** The status an HTTP code stands for when the body names none (two where Google uses the code for both). */
const BY_HTTP: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ALREADY_EXISTS or ABORTED",
  412: "FAILED_PRECONDITION",
  429: "RESOURCE_EXHAUSTED",
  503: "UNAVAILABLE",
};

/**
 * An HTTP error of a Google API call (GoogleHttpError) as the engine's error class: Google's canonical
 * status decides (else the HTTP code's), and the message leads with it and the reason code, then Google's
 * words (from Google's hosts only: google-rest.ts).
 */
export function classifyGoogle(err: unknown, doing: string): Error {
  if (!(err instanceof GoogleHttpError)) return err instanceof Error ? err : new Error(String(err));
  const opts = { cause: err };
  const reason = err.reason && !err.message.includes(err.reason) ? `, ${err.reason}` : "";
  const status = err.status ?? BY_HTTP[err.code];
  const msg = (words: string, s = status) =>
    `${words} (${s ?? `HTTP ${err.code}`}${reason}): cannot ${doing}: ${err.message}`;
  if (err.reason === "resourceInUseByAnotherResource")
    return new DependentsExistError(msg("in use by another resource"), opts);
  if (err.code === 403 && QUOTA_REASONS.has(err.reason ?? ""))
    return new ThrottledError(msg("quota or rate limit", "RESOURCE_EXHAUSTED"), opts);
  const known = err.status ?? (status as GoogleRpcCode | undefined);
  const [cls, words] = (known && BY_STATUS[known]) ??
    (err.code === 409 ? BY_STATUS.ALREADY_EXISTS : undefined) ?? [ExternalError, "error"];
  return new cls(msg(words), opts);
}

// google.rpc.Code numbers an operation's error carries.
const RPC: Record<number, GoogleRpcCode> = {
  1: "CANCELLED",
  2: "UNKNOWN",
  3: "INVALID_ARGUMENT",
  4: "DEADLINE_EXCEEDED",
  5: "NOT_FOUND",
  6: "ALREADY_EXISTS",
  7: "PERMISSION_DENIED",
  8: "RESOURCE_EXHAUSTED",
  9: "FAILED_PRECONDITION",
  10: "ABORTED",
  11: "OUT_OF_RANGE",
  12: "UNIMPLEMENTED",
  13: "INTERNAL",
  14: "UNAVAILABLE",
  15: "DATA_LOSS",
  16: "UNAUTHENTICATED",
};

/** A finished operation's error (google.rpc.Status `{code, message}` or Compute's `{errors: [{code, message}]}`). */
export function operationError(
  error: { code?: unknown; message?: unknown; errors?: Array<{ code?: unknown; message?: unknown }> },
  doing: string,
): Error {
  const first = error.errors?.[0];
  const raw = first ? first.code : error.code;
  const status = typeof raw === "number" ? (RPC[raw] ?? `code ${raw}`) : String(raw ?? "UNKNOWN");
  const message = String((first ? first.message : error.message) ?? "");
  const text = `${doing} failed: ${status}: ${message}`;
  const cls = BY_STATUS[status as GoogleRpcCode]?.[0];
  if (cls) return new cls(text);
  // Compute's own codes (QUOTA_EXCEEDED, RESOURCE_ALREADY_EXISTS, …).
  if (/RESOURCE_EXHAUSTED|QUOTA/.test(status)) return new ThrottledError(text);
  if (/PERMISSION_DENIED|UNAUTHENTICATED/.test(status)) return new CredentialsError(text);
  if (/INVALID|OUT_OF_RANGE/.test(status)) return new InvalidSpecError(text);
  return new ExternalError(text);
}
