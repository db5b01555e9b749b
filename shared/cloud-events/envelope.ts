// How a cloud's audit record arrives on our queue (an EventBridge event in an SQS body, a LogEntry in a
// Pub/Sub message): read once, never throwing, and never quoting the text in an error.
import type { z } from "zod";

export type EnvelopeParse<T> =
  | { kind: "other" }
  | { kind: "malformed"; id: string | undefined; error: string }
  | { kind: "ok"; value: T };

/**
 * Reads `input` (text, or UTF-8 bytes) as a record of `schema`. `other` when it is too large, not JSON, or has no `marker` key
 * (a driftless message, or anything else: the caller's own decoding decides); `malformed` when it has the
 * marker but does not match, with its `idField` when that is a string and the first issue's path (`what`
 * when the issue is at the top).
 */
export function parseEnvelope<S extends z.ZodType>(
  input: string | Buffer,
  o: { maxBytes: number; marker: string; idField: string; schema: S; what: string },
): EnvelopeParse<z.infer<S>> {
  const size = typeof input === "string" ? Buffer.byteLength(input, "utf8") : input.byteLength;
  if (size > o.maxBytes) return { kind: "other" };
  let json: unknown;
  try {
    json = JSON.parse(typeof input === "string" ? input : input.toString("utf8"));
  } catch {
    return { kind: "other" };
  }
  if (json === null || typeof json !== "object" || !(o.marker in json)) return { kind: "other" };
  const rawId = (json as Record<string, unknown>)[o.idField];
  const id = typeof rawId === "string" ? rawId : undefined;
  const parsed = o.schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      kind: "malformed",
      id,
      error: `${issue?.path.join(".") || o.what}: ${issue?.message ?? "invalid"}`,
    };
  }
  return { kind: "ok", value: parsed.data };
}
