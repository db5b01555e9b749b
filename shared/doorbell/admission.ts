// The admission doorbell: the API server calls the reconcile function's HTTPS endpoint for every write
// of a served kind (a ValidatingWebhookConfiguration, webhook.ts) and the function enqueues the key —
// no always-on forwarder. It always allows (the in-use guard, in-use.ts, is a separate route): it never refuses or holds up a user's write beyond the
// webhook's timeout (and `failurePolicy: Ignore` lets writes through when it cannot be reached).
//
// Admission runs *before* the write is stored, and the write may still fail after it. The message
// therefore carries the object's resourceVersion before the write (`admitted.before`, "" for a create),
// and the worker does not act on it while the stored object still has that version: it looks again
// after 1, 1, 2, 4… seconds, for at most ADMISSION_WAIT_MS (worker/admission.ts). A queue delay alone
// would guess how long storing takes; the resourceVersion says when it has happened, and costs one GET.
//
// Dropped cheaply (allowed, nothing enqueued): dry runs, subresource writes, the managed engine's
// writes to its own objects (field manager FIELD_MANAGER; the claim binder's CLAIMS_FIELD_MANAGER does
// ring), writes by configured usernames, updates that change nothing the reconciler reads, kinds this
// deployment does not serve. A forged call (someone who learnt the URL's secret) can only cause a
// level-triggered reconcile of a key: KeyRateLimiter keeps that to one message per key per interval.
import { z } from "zod";
import type { ResourceType } from "../api/meta.ts";
import { apiVersionOf } from "../api/meta.ts";
import { FIELD_MANAGER } from "../kube/client.ts";
import type { Logger } from "../pipeline/common.ts";
import { makeMessage, messageKey, type ReconcileMessage } from "../queue/message.ts";
import type { QueueProducer } from "../queue/port.ts";
import type { KeyRateLimiter } from "./rate-limit.ts";

export const ADMISSION_API_VERSION = "admission.k8s.io/v1";

/** What the doorbell did with one admission request (a log field, a metric label, tests). */
export type AdmissionVerdict =
  | "enqueued"
  | "delayed"
  | "dry-run"
  | "subresource"
  | "own-write"
  | "no-change"
  | "not-served"
  | "rate-limited"
  | "send-failed";

const objectMeta = z
  .object({
    name: z.string().optional(),
    namespace: z.string().optional(),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
    labels: z.record(z.string(), z.string()).nullish(),
    annotations: z.record(z.string(), z.string()).nullish(),
    finalizers: z.array(z.string()).nullish(),
    deletionTimestamp: z.string().nullish(),
    ownerReferences: z
      .array(
        z
          .object({
            apiVersion: z.string(),
            kind: z.string(),
            name: z.string(),
            uid: z.string().optional(),
            controller: z.boolean().optional(),
          })
          .loose(),
      )
      .nullish(),
  })
  .loose();
const kubeObject = z.object({ metadata: objectMeta.optional(), spec: z.unknown().optional() }).loose();

/** An admission.k8s.io/v1 AdmissionReview request, as the API server sends it. */
const reviewSchema = z.object({
  apiVersion: z.literal(ADMISSION_API_VERSION),
  kind: z.literal("AdmissionReview"),
  request: z.object({
    uid: z.string().min(1).max(128),
    kind: z.object({ group: z.string(), version: z.string(), kind: z.string() }),
    resource: z.object({ group: z.string(), version: z.string(), resource: z.string() }),
    subResource: z.string().optional(),
    name: z.string().optional(),
    namespace: z.string().optional(),
    operation: z.enum(["CREATE", "UPDATE", "DELETE", "CONNECT"]),
    userInfo: z.object({ username: z.string().optional() }).loose().optional(),
    object: kubeObject.nullish(),
    oldObject: kubeObject.nullish(),
    dryRun: z.boolean().optional(),
    options: z
      .object({ fieldManager: z.string().optional(), propagationPolicy: z.string().optional() })
      .loose()
      .nullish(),
  }),
});
type Request = z.output<typeof reviewSchema>["request"];

export interface AdmissionDeps {
  producer: Pick<QueueProducer, "send">;
  /** The kinds this deployment serves (worker.ts typesOf): writes of other kinds enqueue nothing. */
  types: readonly ResourceType[];
  logger: Logger;
  /** Usernames whose writes are driftless's own (besides its field manager), e.g. the functions' identity. */
  ignoreUsers?: readonly string[] | undefined;
  /** One message per key per interval: one limiter per container (createDoorbell makes it). */
  limiter: KeyRateLimiter;
  now?: () => number;
}

export interface AdmissionResult {
  status: number;
  body: unknown;
  /** Absent when the body was not an AdmissionReview. */
  verdict?: AdmissionVerdict;
  key?: string;
}

/** The answer that lets the write through: the only answer the doorbell ever gives a valid review. */
export const allow = (uid: string) => ({
  apiVersion: ADMISSION_API_VERSION,
  kind: "AdmissionReview",
  response: { uid, allowed: true },
});

/**
 * Handles one AdmissionReview (already JSON-parsed). A valid review is always allowed (200); a body
 * that is not one gets 400 (the API server then applies the webhook's failurePolicy, Ignore).
 */
export async function handleAdmissionReview(deps: AdmissionDeps, body: unknown): Promise<AdmissionResult> {
  const review = readReview(body, deps.logger, "doorbell");
  if ("rejected" in review) return review.rejected;
  const req = review.request;
  const answer = (verdict: AdmissionVerdict, key?: string): AdmissionResult => ({
    status: 200,
    body: allow(req.uid),
    verdict,
    ...(key ? { key } : {}),
  });

  if (req.dryRun) return answer("dry-run");
  if (req.subResource) return answer("subresource");
  if (req.operation === "CONNECT") return answer("not-served");
  if (
    req.options?.fieldManager === FIELD_MANAGER ||
    (req.userInfo?.username !== undefined && deps.ignoreUsers?.includes(req.userInfo.username))
  )
    return answer("own-write");
  const type = deps.types.find(
    (t) => t.group === req.kind.group && t.kind === req.kind.kind && t.plural === req.resource.resource,
  );
  if (req.kind.group === "" && req.kind.kind === "Secret" && req.resource.resource === "secrets")
    return connectionSecret(deps, req, answer);
  if (!type) return answer("not-served");
  if (req.operation === "UPDATE" && !changesAnythingRead(req)) return answer("no-change");

  const current = req.operation === "DELETE" ? req.oldObject : req.object;
  // Validating admission sees the object after name generation, so a create has its name here.
  const name = req.name || current?.metadata?.name;
  const namespace = type.namespaced ? req.namespace || current?.metadata?.namespace : undefined;
  if (!name) return answer("not-served");
  const before = req.operation === "CREATE" ? "" : (req.oldObject?.metadata?.resourceVersion ?? "");
  const uid = current?.metadata?.uid;
  const admittedAt = new Date((deps.now ?? Date.now)());
  const message: ReconcileMessage = makeMessage(
    {
      apiVersion: apiVersionOf(type),
      kind: type.kind,
      name,
      ...(namespace ? { namespace } : {}),
      ...(uid ? { uid } : {}),
    },
    "watch",
    { admitted: { before, at: admittedAt.toISOString() }, at: admittedAt },
  );
  return enqueue(deps, req, answer, message, 0);
}

/** Where a body fails to be an AdmissionReview, by issue paths only (its objects may hold anything). */
const reviewProblem = (error: z.ZodError) =>
  error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`)
    .join("; ");

/**
 * The request of an AdmissionReview body (in-use.ts reads it too), or the 400 a body that is not one
 * gets (the API server then applies the webhook's failurePolicy), logged as `who` saw it.
 */
export function readReview(
  body: unknown,
  logger: Logger,
  who: string,
): { request: Request } | { rejected: { status: 400; body: { error: string } } } {
  const parsed = reviewSchema.safeParse(body);
  if (parsed.success) return { request: parsed.data.request };
  // Issue paths only: a request's objects may hold anything, they are never logged.
  const why = reviewProblem(parsed.error);
  logger.warn({ error: why }, `${who}: not an admission.k8s.io/v1 AdmissionReview`);
  return { rejected: { status: 400, body: { error: `not an admission.k8s.io/v1 AdmissionReview: ${why}` } } };
}

/** Extra delay of a connection Secret's owner: its message says nothing about which write to wait for. */
export const CONNECTION_SECRET_DELAY_MS = 1_000;

/**
 * A connection Secret edited or deleted by hand (driftless's own writes were dropped above) stands for
 * the managed resource that owns it, as with the forwarder: its reconcile repairs the Secret. The
 * owner's resourceVersion does not change with the Secret's, so there is no write to wait for: the
 * message is delayed a second instead, long past the Secret's write being stored.
 */
async function connectionSecret(
  deps: AdmissionDeps,
  req: Request,
  answer: (verdict: AdmissionVerdict, key?: string) => AdmissionResult,
): Promise<AdmissionResult> {
  const secret = req.object ?? req.oldObject;
  const owner = secret?.metadata?.ownerReferences?.find((o) => o.controller);
  const type = owner && deps.types.find((t) => apiVersionOf(t) === owner.apiVersion && t.kind === owner.kind);
  if (!owner || !type) return answer("not-served");
  if (req.operation === "UPDATE" && !changesAnythingRead(req, "data")) return answer("no-change");
  const namespace = type.namespaced ? req.namespace || secret?.metadata?.namespace : undefined;
  const message = makeMessage(
    {
      apiVersion: owner.apiVersion,
      kind: owner.kind,
      name: owner.name,
      ...(namespace ? { namespace } : {}),
      ...(owner.uid ? { uid: owner.uid } : {}),
    },
    "watch",
    { at: new Date((deps.now ?? Date.now)()) },
  );
  return enqueue(deps, req, answer, message, CONNECTION_SECRET_DELAY_MS);
}

async function enqueue(
  deps: AdmissionDeps,
  req: Request,
  answer: (verdict: AdmissionVerdict, key?: string) => AdmissionResult,
  message: ReconcileMessage,
  minDelayMs: number,
): Promise<AdmissionResult> {
  const key = messageKey(message);
  const { limiter } = deps;
  const slot = limiter.take(key);
  if (slot.kind === "drop") return answer("rate-limited", key);
  const delayMs = Math.max(slot.delayMs, minDelayMs);
  try {
    const sent = await deps.producer.send([message], delayMs > 0 ? { delayMs } : {});
    if (sent.sent !== 1) throw sent.failed[0]?.error ?? new Error("the queue refused the message");
  } catch (err) {
    limiter.forget(key);
    // Allowed all the same: the write goes ahead and the drift sweep finds the change.
    deps.logger.warn(
      { key, operation: req.operation, error: (err as Error).message },
      "doorbell: cannot enqueue; the sweep will pick the change up",
    );
    return answer("send-failed", key);
  }
  deps.logger.debug({ key, operation: req.operation, delayMs }, "doorbell: enqueued");
  return answer(slot.delayMs > 0 ? "delayed" : "enqueued", key);
}

/**
 * Whether an update changes what a reconcile reads: the spec, labels, annotations, finalizers or the
 * deletion timestamp. Anything else (managedFields, a no-op apply) would only wake the worker, and as
 * the stored resourceVersion does not change for a no-op, it would wait ADMISSION_WAIT_MS for nothing.
 */
function changesAnythingRead(req: Request, content: "spec" | "data" = "spec"): boolean {
  const seen = (o: z.output<typeof kubeObject> | null | undefined) =>
    stableJson({
      [content]: (o as Record<string, unknown> | null | undefined)?.[content] ?? null,
      labels: o?.metadata?.labels ?? {},
      annotations: o?.metadata?.annotations ?? {},
      finalizers: o?.metadata?.finalizers ?? [],
      deletionTimestamp: o?.metadata?.deletionTimestamp ?? null,
    });
  return !req.object || !req.oldObject || seen(req.object) !== seen(req.oldObject);
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
