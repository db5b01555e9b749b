// Cloud Audit Logs (Admin Activity) entries as a log sink publishes them to the work topic: the data of a
// Pub/Sub message is one LogEntry whose protoPayload is an AuditLog.
import { z } from "zod";
import type { AuditLogCall } from "../api/cloud-events.ts";
import { parseEnvelope } from "./envelope.ts";

export const AUDIT_LOG_TYPE = "type.googleapis.com/google.cloud.audit.AuditLog";
/** A LogEntry is at most 256 KiB (Cloud Logging's limit); anything larger is not one. */
export const MAX_LOG_ENTRY_BYTES = 256 * 1024;

const auditLog = z.object({
  "@type": z.literal(AUDIT_LOG_TYPE),
  serviceName: z.string().min(1),
  methodName: z.string().min(1),
  resourceName: z.string().min(1),
  // google.rpc.Status: absent or code 0 on success.
  status: z
    .object({ code: z.number().int().optional(), message: z.string().optional() })
    .partial()
    .optional(),
  authenticationInfo: z.object({ principalEmail: z.string().optional() }).partial().optional(),
  requestMetadata: z.object({ callerSuppliedUserAgent: z.string().optional() }).partial().optional(),
});

const logEntry = z.object({
  logName: z.string().min(1),
  insertId: z.string().optional(),
  timestamp: z.string().optional(),
  protoPayload: auditLog,
});

export type AuditLogEntry = z.infer<typeof logEntry>;

export type AuditLogParse =
  | { kind: "not-audit-log" }
  | { kind: "malformed"; id: string | undefined; error: string }
  | { kind: "entry"; entry: AuditLogEntry };

/**
 * Reads a Pub/Sub message's data as a LogEntry. `not-audit-log` when it has no `protoPayload` (a driftless
 * message, or anything else); `malformed` when it has one but is no valid audit entry. Never throws.
 */
export function parseAuditLogData(data: Buffer): AuditLogParse {
  const r = parseEnvelope(data, {
    maxBytes: MAX_LOG_ENTRY_BYTES,
    marker: "protoPayload",
    idField: "insertId",
    schema: logEntry,
    what: "entry",
  });
  if (r.kind === "other") return { kind: "not-audit-log" };
  return r.kind === "ok" ? { kind: "entry", entry: r.value } : r;
}

export const auditLogCall = (e: AuditLogEntry): AuditLogCall => ({
  serviceName: e.protoPayload.serviceName,
  methodName: e.protoPayload.methodName,
  resourceName: e.protoPayload.resourceName,
});
