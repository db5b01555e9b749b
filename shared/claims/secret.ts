import type { V1Secret } from "@kubernetes/client-node";
import type { Claim } from "../api/claims/claims.ts";
import { ClaimLabels } from "../api/claims/meta.ts";
import type { Kube } from "../kube/client.ts";
import { connectionSecret } from "../kube/connection-secret.ts";
import { namedError } from "../named-error.ts";

/** The claim's Secret name is taken by a Secret this claim does not own: never overwrite it. */
export class SecretConflictError extends namedError("SecretConflictError", Error) {}

export type Propagation = "written" | "unchanged" | "waiting";

const ownedBy = (s: V1Secret | undefined, uid: string) =>
  s?.metadata?.ownerReferences?.some((o) => o.uid === uid) ?? false;

/**
 * Copies the bound resource's connection Secret (system namespace) into the claim's namespace under the
 * claim's Secret name, plus the class's portable keys. Keys are additive; the copy is owned by the claim
 * (garbage-collected with it) and rewritten only when a value changed.
 */
export async function propagateSecret(
  kube: Kube,
  claim: Claim,
  source: { namespace: string; name: string },
  portable: (details: Readonly<Record<string, string>>) => Record<string, string>,
): Promise<Propagation> {
  const ref = claim.spec.writeConnectionSecretToRef;
  const namespace = claim.metadata.namespace ?? "default";
  const uid = claim.metadata.uid ?? "";
  if (!ref) return "unchanged";
  const from = await kube.getSecret(source.namespace, source.name);
  if (!from?.data || Object.keys(from.data).length === 0) return "waiting";

  const decoded = Object.fromEntries(
    Object.entries(from.data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
  );
  const desired: Record<string, string> = { ...from.data };
  for (const [k, v] of Object.entries(portable(decoded)))
    desired[k] = Buffer.from(v, "utf8").toString("base64");

  const current = await kube.getSecret(namespace, ref.name);
  if (current && !ownedBy(current, uid)) {
    throw new SecretConflictError(
      `Secret ${namespace}/${ref.name} already exists and does not belong to this claim: choose another spec.writeConnectionSecretToRef.name`,
    );
  }
  const secret = connectionSecret({
    name: ref.name,
    namespace,
    current,
    data: desired,
    labels: { [ClaimLabels.secretOf]: uid },
    ownerReferences: [
      {
        apiVersion: claim.apiVersion,
        kind: claim.kind,
        name: claim.metadata.name,
        uid,
        controller: true,
        blockOwnerDeletion: false,
      },
    ],
  });
  if (!secret) return "unchanged";
  // A racing writer makes this 409: the caller re-reads and tries again on the next reconcile.
  if (current) await kube.replaceSecret(secret);
  else await kube.createSecret(secret);
  return "written";
}

/** Deletes the claim's Secret if the claim owns it; a same-named Secret of someone else stays. */
export async function removeSecret(kube: Kube, claim: Claim): Promise<void> {
  const ref = claim.spec.writeConnectionSecretToRef;
  if (!ref) return;
  const namespace = claim.metadata.namespace ?? "default";
  const current = await kube.getSecret(namespace, ref.name);
  if (ownedBy(current, claim.metadata.uid ?? "")) await kube.deleteSecret(namespace, ref.name);
}
