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
import { GoogleHttpError } from "../google-rest.ts";

const QUOTA_REASONS = new Set([
  "quotaExceeded",
  "rateLimitExceeded",
  "userRateLimitExceeded",
  "RATE_LIMIT_EXCEEDED",
]);

/** An HTTP error of a Google API call (GoogleHttpError) as the engine's error class. */
export function classifyGoogle(err: unknown, doing: string): Error {
  if (!(err instanceof GoogleHttpError)) return err instanceof Error ? err : new Error(String(err));
  const msg = `cannot ${doing}: ${err.message}`;
  const opts = { cause: err };
  if (err.code === 429 || (err.code === 403 && QUOTA_REASONS.has(err.reason ?? "")))
    return new ThrottledError(`RESOURCE_EXHAUSTED (quota or rate limit): ${msg}`, opts);
  if (err.code === 401 || err.code === 403) return new CredentialsError(`PERMISSION_DENIED: ${msg}`, opts);
  if (err.reason === "resourceInUseByAnotherResource")
    return new DependentsExistError(`in use by another resource: ${msg}`, opts);
  if (err.code === 409) return new ExternalError(`conflict (ALREADY_EXISTS or ABORTED): ${msg}`, opts);
  if (err.code === 412) return new ExternalError(`precondition failed (FAILED_PRECONDITION): ${msg}`, opts);
  if (err.code === 400) return new InvalidSpecError(`invalid argument (INVALID_ARGUMENT): ${msg}`, opts);
  if (err.code === 404) return new ExternalError(`not found (NOT_FOUND): ${msg}`, opts);
  if (err.code === 503) return new ThrottledError(`UNAVAILABLE: ${msg}`, opts);
  return new ExternalError(msg, opts);
}

// google.rpc.Code numbers an operation's error carries.
const RPC: Record<number, string> = {
  3: "INVALID_ARGUMENT",
  5: "NOT_FOUND",
  6: "ALREADY_EXISTS",
  7: "PERMISSION_DENIED",
  8: "RESOURCE_EXHAUSTED",
  9: "FAILED_PRECONDITION",
  10: "ABORTED",
  11: "OUT_OF_RANGE",
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
  if (/RESOURCE_EXHAUSTED|QUOTA/.test(status)) return new ThrottledError(text);
  if (/PERMISSION_DENIED|UNAUTHENTICATED/.test(status)) return new CredentialsError(text);
  if (/INVALID|OUT_OF_RANGE|FAILED_PRECONDITION/.test(status)) return new InvalidSpecError(text);
  return new ExternalError(text);
}
