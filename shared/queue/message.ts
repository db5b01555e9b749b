// The message contract, version 1: what travels on every queue (SQS, Pub/Sub, memory).
//
// A message carries a *key* (which managed resource) and why it was sent, never the object itself:
// the reconciler reads the object fresh from the API server, so a stale or duplicate message is harmless.
//
// Decoding is tolerant of unknown *fields* (they are dropped, so a newer v1 producer that adds an
// optional field does not send every message to the dead-letter queue of an older consumer) and strict
// on everything else: `v` must be exactly 1, known fields must have the right type and shape, names must
// be valid Kubernetes names, and bodies larger than MAX_MESSAGE_BYTES are refused before parsing.
import { createHash } from "node:crypto";
import { z } from "zod";
import { InvalidMessageError } from "./errors.ts";

/** The only contract version this code reads and writes. */
export const MESSAGE_VERSION = 1;
/**
 * Largest body `decodeMessage` accepts (UTF-8 bytes): one SQS billing unit (64 KiB). A single-key message
 * is well under 1 KiB; a batch message of the sweep fills up to BATCH_MESSAGE_BYTES.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024;
/** What the sweep fills a batch message to: under MAX_MESSAGE_BYTES with room for SQS attributes. */
export const BATCH_MESSAGE_BYTES = 60 * 1024;
/** Longest key `messageKey` returns: the SQS MessageGroupId limit (Pub/Sub ordering keys allow 1 KiB). */
export const MAX_KEY_LENGTH = 128;

export const REASONS = ["watch", "drift", "requeue", "manual"] as const;
/** Why a message was sent: a watch event, the drift sweep, a handler's requeue, or a person. */
export type ReconcileReason = (typeof REASONS)[number];

/** One reconcile request for one managed resource. */
export interface ReconcileMessage {
  v: 1;
  /** `group/version` of the managed resource, e.g. `sqs.aws.driftless.dev/v1alpha1`. */
  apiVersion: string;
  kind: string;
  /** Absent for cluster-scoped resources. */
  namespace?: string;
  name: string;
  /** When set, the reconciler can ignore a message about an earlier object that had the same name. */
  uid?: string;
  reason: ReconcileReason;
  /** RFC 3339 time the message was produced. */
  at: string;
  /** Correlation id carried across requeues so one chain of reconciles can be followed in the logs. */
  id?: string;
  /**
   * A drift check of many objects of this kind and one ProviderConfig, from one LIST page the sweep
   * read (`name`/`namespace` repeat the first item). A consumer that predates it reconciles `name` alone.
   */
  batch?: DriftBatch;
  /**
   * Set by the admission doorbell (shared/doorbell/admission.ts), which runs *before* the write it
   * reports is stored: the object's resourceVersion before that write ("" when it did not exist yet).
   * The worker does not act on the message while the stored object still has it (see worker/admission.ts), for
   * at most a while after `at`, when the API server admitted the write (a requeue keeps it; the
   * message's own `at` is reset by some queues' requeues).
   */
  admitted?: { before: string; at: string };
}

/** Where a batch's objects were read: the LIST page, so the worker can read the same page again. */
export interface BatchPage {
  /** The page size (`limit`). */
  limit: number;
  /** The continue token the page was read with; absent for the first page. */
  continue?: string;
  /** The list's resourceVersion, for the first page (read again with resourceVersionMatch=Exact). */
  resourceVersion?: string;
  /**
   * "NotOlderThan": not a page but a label selection (a warm sweep's batch, sweep-index.ts): read without
   * `limit`, at `resourceVersion` ("0": any) or newer, which the API server answers from its watch cache.
   */
  resourceVersionMatch?: "NotOlderThan";
  labelSelector?: string;
}

/** One object of a batch: its name and the resourceVersion the sweep saw. */
export interface BatchItem {
  name: string;
  namespace?: string;
  rv: string;
}

export interface DriftBatch {
  page: BatchPage;
  /** The ProviderConfig every item names (spec.providerConfigRef.name). */
  providerConfig: string;
  items: BatchItem[];
}

/**
 * Longest label selector a batch carries: a warm sweep's selection of external keys and its own. The whole
 * message (selector and items, BATCH_MESSAGE_BYTES) binds first: ≈ 700 keys for short names.
 */
export const MAX_BATCH_SELECTOR = 48 * 1024;

/** Most items one batch message carries (the byte limit usually binds first). */
export const MAX_BATCH_ITEMS = 1_000;

/** The object a message is about: the parts of a managed resource that identify it. */
export type ObjectRef = Pick<ReconcileMessage, "apiVersion" | "kind" | "namespace" | "name" | "uid">;

export type DecodeResult = { ok: true; message: ReconcileMessage } | { ok: false; error: string };

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
// Kubernetes validates a CRD kind as a DNS-1035 label once lower-cased.
const KIND = /^[A-Za-z]([-A-Za-z0-9]*[A-Za-z0-9])?$/;
const UID = /^[A-Za-z0-9-]+$/;
const CORRELATION_ID = /^[A-Za-z0-9._:-]+$/;
// Opaque to clients, but the API server's are decimal; anything printable and short is accepted.
const RESOURCE_VERSION = /^[A-Za-z0-9._:-]+$/;

function isApiVersion(value: string): boolean {
  const slash = value.indexOf("/");
  const group = slash === -1 ? undefined : value.slice(0, slash);
  const version = slash === -1 ? value : value.slice(slash + 1);
  const groupOk = group === undefined || (group.length <= 253 && DNS1123_SUBDOMAIN.test(group));
  return groupOk && version.length <= 63 && DNS1035_LABEL.test(version);
}

const messageSchema = z.object({
  v: z.literal(MESSAGE_VERSION),
  apiVersion: z.string().refine(isApiVersion, "must be <group>/<version> or <version>"),
  kind: z.string().max(63).regex(KIND, "must be a Kubernetes kind (letters, digits, '-')"),
  namespace: z.string().max(63).regex(DNS1123_LABEL, "must be a DNS-1123 label").optional(),
  name: z.string().max(253).regex(DNS1123_SUBDOMAIN, "must be a DNS-1123 subdomain"),
  uid: z.string().max(64).regex(UID, "must be a Kubernetes uid").optional(),
  reason: z.enum(REASONS),
  at: z.iso.datetime({ offset: true }),
  id: z.string().max(64).regex(CORRELATION_ID, "must be [A-Za-z0-9._:-]").optional(),
  batch: z
    .object({
      page: z.object({
        limit: z.number().int().min(1).max(10_000),
        continue: z.string().max(4096).optional(),
        resourceVersion: z.string().max(64).regex(RESOURCE_VERSION, "must be a resourceVersion").optional(),
        resourceVersionMatch: z.literal("NotOlderThan").optional(),
        // A warm sweep's batch selects its objects by their external keys (41 characters each).
        labelSelector: z.string().max(MAX_BATCH_SELECTOR).optional(),
      }),
      providerConfig: z.string().max(253).regex(DNS1123_SUBDOMAIN, "must be a DNS-1123 subdomain"),
      items: z
        .array(
          z.object({
            name: z.string().max(253).regex(DNS1123_SUBDOMAIN, "must be a DNS-1123 subdomain"),
            namespace: z.string().max(63).regex(DNS1123_LABEL, "must be a DNS-1123 label").optional(),
            rv: z.string().max(64).regex(RESOURCE_VERSION, "must be a resourceVersion"),
          }),
        )
        .min(1)
        .max(MAX_BATCH_ITEMS),
    })
    .optional(),
  admitted: z
    .object({
      before: z.union([
        z.literal(""),
        z.string().max(64).regex(RESOURCE_VERSION, "must be a resourceVersion"),
      ]),
      at: z.iso.datetime({ offset: true }),
    })
    .optional(),
});

// Compile-time proof that the schema and the hand-written interface describe the same shape.
type SchemaOutput = z.output<typeof messageSchema>;
const _schemaMatchesInterface: [SchemaOutput] extends [ReconcileMessage]
  ? [ReconcileMessage] extends [SchemaOutput]
    ? true
    : false
  : false = true;
void _schemaMatchesInterface;

function describeIssues(error: z.ZodError): string {
  // Issue messages name the rule that failed, never the offending value (bodies stay out of logs).
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(message)"}: ${issue.message}`)
    .join("; ");
}

function canonical(m: SchemaOutput): ReconcileMessage {
  // Fixed field order and no undefined-valued keys, so equal messages encode to equal bytes.
  const out = { v: 1, apiVersion: m.apiVersion, kind: m.kind } as ReconcileMessage;
  if (m.namespace !== undefined) out.namespace = m.namespace;
  out.name = m.name;
  if (m.uid !== undefined) out.uid = m.uid;
  out.reason = m.reason;
  out.at = m.at;
  if (m.id !== undefined) out.id = m.id;
  if (m.batch !== undefined) {
    const p = m.batch.page;
    out.batch = {
      page: {
        limit: p.limit,
        ...(p.continue !== undefined ? { continue: p.continue } : {}),
        ...(p.resourceVersion !== undefined ? { resourceVersion: p.resourceVersion } : {}),
        ...(p.resourceVersionMatch !== undefined ? { resourceVersionMatch: p.resourceVersionMatch } : {}),
        ...(p.labelSelector !== undefined ? { labelSelector: p.labelSelector } : {}),
      },
      providerConfig: m.batch.providerConfig,
      items: m.batch.items.map((i) => ({
        name: i.name,
        ...(i.namespace !== undefined ? { namespace: i.namespace } : {}),
        rv: i.rv,
      })),
    };
  }
  if (m.admitted !== undefined) out.admitted = { before: m.admitted.before, at: m.admitted.at };
  return out;
}

/** Validates and serialises a message. Throws InvalidMessageError: producing a bad message is a bug. */
export function encodeMessage(m: ReconcileMessage): string {
  const parsed = messageSchema.safeParse(m);
  if (!parsed.success)
    throw new InvalidMessageError(`invalid reconcile message: ${describeIssues(parsed.error)}`);
  return JSON.stringify(canonical(parsed.data));
}

/** Parses and validates a body from any queue. Never throws. */
export function decodeMessage(body: string): DecodeResult {
  if (typeof body !== "string") return { ok: false, error: "body is not a string" };
  // A UTF-8 encoding is never shorter than the UTF-16 length, so the cheap check comes first.
  if (body.length > MAX_MESSAGE_BYTES || Buffer.byteLength(body, "utf8") > MAX_MESSAGE_BYTES) {
    return { ok: false, error: `body is larger than ${MAX_MESSAGE_BYTES} bytes` };
  }
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { ok: false, error: "body is not JSON" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, error: "body is not a JSON object" };
  }
  const version: unknown = (value as { v?: unknown }).v;
  if (version !== MESSAGE_VERSION) {
    const shown = typeof version === "number" ? String(version) : typeof version;
    return {
      ok: false,
      error: `unsupported message version (${shown}); this reader understands v${MESSAGE_VERSION}`,
    };
  }
  const parsed = messageSchema.safeParse(value);
  if (!parsed.success) return { ok: false, error: describeIssues(parsed.error) };
  return { ok: true, message: canonical(parsed.data) };
}

/** Checks a message without encoding it; returns the problem or undefined. */
export function validateMessage(m: ReconcileMessage): string | undefined {
  const parsed = messageSchema.safeParse(m);
  return parsed.success ? undefined : describeIssues(parsed.error);
}

/** Bytes of a message once encoded (what the queue's size limit counts). */
export const encodedBytes = (m: ReconcileMessage): number => Buffer.byteLength(JSON.stringify(m), "utf8");

/** Builds a v1 message for an object. `at` defaults to now. */
export function makeMessage(
  ref: ObjectRef,
  reason: ReconcileReason,
  opts: { at?: Date; id?: string; admitted?: { before: string; at: string } } = {},
): ReconcileMessage {
  const m: ReconcileMessage = {
    v: 1,
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    name: ref.name,
    reason,
    at: (opts.at ?? new Date()).toISOString(),
  };
  if (ref.namespace !== undefined && ref.namespace !== "") m.namespace = ref.namespace;
  if (ref.uid !== undefined) m.uid = ref.uid;
  if (opts.id !== undefined) m.id = opts.id;
  if (opts.admitted !== undefined) m.admitted = { before: opts.admitted.before, at: opts.admitted.at };
  return m;
}

/**
 * A stable per-object key: `<Kind>.<group>/<namespace>/<name>` (`_` for cluster-scoped, which no
 * namespace can be). The version is left out: every version of a kind addresses the same object.
 * Used as SQS FIFO MessageGroupId, Pub/Sub ordering key and the memory queue's coalescing key.
 * Keys longer than 128 characters keep a readable prefix and end in `~` + 40 hex digits of SHA-256.
 */
export function messageKey(
  m: Pick<ReconcileMessage, "apiVersion" | "kind" | "namespace" | "name" | "batch">,
): string {
  const slash = m.apiVersion.indexOf("/");
  const kindGroup = slash === -1 ? m.kind : `${m.kind}.${m.apiVersion.slice(0, slash)}`;
  if (m.batch) {
    // A batch never coalesces with a single key's messages: `~` is in no namespace or name.
    const items = m.batch.items.map((i) => `${i.namespace ?? ""}/${i.name}@${i.rv}`).join(",");
    const digest = createHash("sha256").update(items).digest("hex").slice(0, 40);
    return `${kindGroup.slice(0, MAX_KEY_LENGTH - 48)}/~batch/${digest}`;
  }
  const key = `${kindGroup}/${m.namespace ?? "_"}/${m.name}`;
  if (key.length <= MAX_KEY_LENGTH) return key;
  const digest = createHash("sha256").update(key).digest("hex").slice(0, 40);
  return `${key.slice(0, MAX_KEY_LENGTH - 41)}~${digest}`;
}
