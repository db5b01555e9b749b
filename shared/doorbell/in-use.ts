// The in-use guard: the API server asks before deleting a managed resource labelled `crossplane.io/in-use`
// (its own webhook in the doorbell's configuration, webhook.ts), and a DELETE of one a Usage or ClusterUsage
// holds is refused with a message naming the Usage — what Crossplane's usage webhook does
// (internal/webhook/protection/usage). The refused attempt is recorded on the object
// (`usage.crossplane.io/deletion-attempt-with-policy`, the propagation policy), so a Usage with
// `replayDeletion` makes it again when it goes (usages/reconciler.ts). Only the doorbell that reaches the
// cluster (`driftless run`) serves it; the managed engine's finalizer path (reconciler/usages.ts) stays the
// safety net wherever the webhook is not registered or a delete got past it.
import type { ResourceType } from "../api/meta.ts";
import { DELETION_ATTEMPT_ANNOTATION, type UsageObject } from "../api/protection/usage.ts";
import type { Kube } from "../kube/client.ts";
import type { Logger } from "../pipeline/common.ts";
import { holds, usagesOf } from "../reconciler/usages.ts";
import { ADMISSION_API_VERSION, allow, readReview } from "./admission.ts";

export interface InUseDeps {
  kube: Kube;
  /** The kinds this deployment serves: a Usage's `by` of one of them is read to know it still holds. */
  types: readonly ResourceType[];
  logger: Logger;
}

/** What the guard did with one review (a log field, tests). */
export type InUseVerdict = "allowed" | "refused" | "unknown";

/** Crossplane's words (inUseMessage), so scripts matching them keep working, plus what to do about it. */
export function inUseMessage(usages: readonly UsageObject[]): string {
  const [first] = usages;
  if (!first) return "";
  const ns = first.metadata.namespace;
  const id = `"${first.metadata.name}"${ns ? ` (in namespace "${ns}")` : ""}`;
  const by = first.spec.by;
  const what = by?.resourceRef?.name
    ? ` by resource ${by.kind}/${by.resourceRef.name}`
    : first.spec.reason
      ? ` with reason: "${first.spec.reason}"`
      : "";
  const replay = usages.every((u) => u.spec.replayDeletion)
    ? "; the deletion is made again when the last of them goes (replayDeletion)"
    : "";
  return (
    `This resource is in-use by ${usages.length} usage(s), including the ${first.kind} ${id}${what}.` +
    ` Delete the usage(s) first${replay}.`
  );
}

export async function handleInUseReview(
  deps: InUseDeps,
  body: unknown,
): Promise<{ status: number; body: unknown; verdict?: InUseVerdict }> {
  const review = readReview(body, deps.logger, "in-use guard");
  if ("rejected" in review) return review.rejected;
  const req = review.request;
  const old = req.oldObject;
  // Only a DELETE is asked about (the webhook's rule); anything else is not this guard's to judge.
  if (req.operation !== "DELETE" || !old?.metadata?.name)
    return { status: 200, body: allow(req.uid), verdict: "allowed" };
  const obj = {
    apiVersion: String((old as { apiVersion?: unknown }).apiVersion ?? apiVersionOfKind(req.kind)),
    kind: req.kind.kind,
    metadata: {
      name: old.metadata.name,
      ...(old.metadata.namespace ? { namespace: old.metadata.namespace } : {}),
      ...(old.metadata.labels ? { labels: old.metadata.labels } : {}),
    },
  };
  const key = `${obj.kind}/${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ""}${obj.metadata.name}`;
  const deny = (code: number, message: string, verdict: InUseVerdict) => ({
    status: 200,
    body: {
      apiVersion: ADMISSION_API_VERSION,
      kind: "AdmissionReview",
      response: {
        uid: req.uid,
        allowed: false,
        status: { code, reason: code === 409 ? "Conflict" : "InternalError", message },
      },
    },
    verdict,
  });
  const typeOf = (apiVersion: string, kind: string) =>
    deps.types.find((t) => `${t.group}/${t.version}` === apiVersion && t.kind === kind);
  let holding: UsageObject[];
  try {
    holding = [];
    for (const u of await usagesOf(deps.kube, obj)) if (await holds(deps.kube, typeOf, u)) holding.push(u);
  } catch (err) {
    // As Crossplane: when it cannot tell, the delete is refused (try again), never let through blind.
    deps.logger.warn({ key, error: (err as Error).message }, "in-use guard: cannot read Usages");
    return deny(500, `cannot tell whether this resource is in use: ${(err as Error).message}`, "unknown");
  }
  if (holding.length === 0) return { status: 200, body: allow(req.uid), verdict: "allowed" };

  const policy = req.options?.propagationPolicy ?? "Background";
  if (!req.dryRun && old.metadata.annotations?.[DELETION_ATTEMPT_ANNOTATION] !== policy) {
    const type = typeOf(obj.apiVersion, obj.kind);
    try {
      if (!type) throw new Error("not a kind this deployment serves");
      await deps.kube.patch(
        type,
        obj.metadata.name,
        { metadata: { annotations: { [DELETION_ATTEMPT_ANNOTATION]: policy } } },
        obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {},
      );
    } catch (err) {
      // Refused all the same; only a replayDeletion Usage would miss the record.
      deps.logger.warn(
        { key, error: (err as Error).message },
        "in-use guard: cannot record the deletion attempt",
      );
    }
  }
  const message = inUseMessage(holding);
  deps.logger.info({ key, usages: holding.length }, "in-use guard: deletion refused");
  return deny(409, message, "refused");
}

const apiVersionOfKind = (k: { group: string; version: string }) =>
  k.group ? `${k.group}/${k.version}` : k.version;
