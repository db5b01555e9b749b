// One change-log record per external create, update and delete (issue 35, item 5): written by the engine as a
// JSON log line and as a `ChangeLog` Event on the object; read back by `driftless describe`. Events live as
// long as the API server keeps them (kube-apiserver --event-ttl, 1 h by default): the log lines, shipped to
// CloudWatch / Cloud Logging, are the lasting record.

/** The Event reason of a change-log record. */
export const CHANGE_LOG_REASON = "ChangeLog";
/** An Event message's limit (shared/kube/events.ts cuts there): a longer record keeps field names only. */
export const CHANGE_LOG_MESSAGE_MAX = 1024;

export interface ChangeRecord {
  /** When the cloud answered (RFC 3339 with milliseconds: Events' own timestamps have seconds only). */
  at: string;
  verb: "create" | "update" | "delete";
  /** What started it: `not found in the cloud`, `spec change`, `cloud drift`, `managed resource deleted`. */
  trigger: string;
  externalName?: string;
  generation?: number;
  /** The cloud's request ids of the operation's answers (AWS $metadata.requestId, Azure x-ms-request-id). */
  requestIds?: string[];
  /** An update's fields, the cloud's value before → the spec's after; secret values as "(redacted)". */
  changes?: Array<{ field: string; before: unknown; after: unknown }>;
  /** The values did not fit in an Event: `fields` names what changed (the log line has them all). */
  fields?: string[];
}

/** The record as an Event message: JSON, without the values when they do not fit. */
export function changeRecordMessage(r: ChangeRecord): string {
  const whole = JSON.stringify(r);
  if (whole.length <= CHANGE_LOG_MESSAGE_MAX || !r.changes) return whole;
  const { changes, ...rest } = r;
  const fields = changes.map((c) => c.field);
  for (let n = fields.length; n > 0; n--) {
    const text = JSON.stringify({ ...rest, fields: fields.slice(0, n) });
    if (text.length <= CHANGE_LOG_MESSAGE_MAX) return text;
  }
  return JSON.stringify(rest);
}

/** A ChangeLog Event's message as a record; undefined when it is not one. */
export function parseChangeRecord(message: string | undefined): ChangeRecord | undefined {
  try {
    const r = JSON.parse(message ?? "") as Partial<ChangeRecord> | null;
    return r && typeof r.at === "string" && typeof r.verb === "string" && typeof r.trigger === "string"
      ? (r as ChangeRecord)
      : undefined;
  } catch {
    return undefined;
  }
}
