import { ClaimLabels } from "../api/claims/meta.ts";
import type { ObjectMeta } from "../api/meta.ts";

/** Every cloud name a bound resource gets fits here: RDS identifiers, S3/GCS buckets, Azure containers. */
export const MAX_RESOURCE_NAME = 63;
const UID_CHARS = 8;
const MAX_LABEL_VALUE = 63;

type Named = Pick<ObjectMeta, "name" | "namespace" | "uid">;

/**
 * The managed resource(s) a claim binds to: `<claim-name>-<first 8 of uid>`, made safe for every cloud
 * (lower case, letters, digits and single hyphens, starting with a letter). Derived from the uid, so
 * every worker reconciling the claim arrives at the same name: concurrent creates collide, never duplicate.
 */
export function resourceName(claim: Named): string {
  const uid = (claim.uid ?? "").replaceAll("-", "").slice(0, UID_CHARS);
  if (uid.length < UID_CHARS) throw new Error(`claim ${claim.name} has no uid yet`);
  let base = claim.name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^-+/, "");
  // RDS and Pub/Sub names start with a letter; Pub/Sub reserves the "goog" prefix.
  if (!/^[a-z]/.test(base) || base.startsWith("goog")) base = `c-${base}`;
  base = base.slice(0, MAX_RESOURCE_NAME - UID_CHARS - 1).replace(/-+$/, "");
  return `${base}-${uid}`;
}

/** The Secret (in the system namespace) the bound resource publishes to, before it is copied to the claim. */
export const systemSecretName = (claimUid: string) => `claim-${claimUid}`;

/** A label value (≤ 63 characters, alphanumeric at both ends) carrying as much of `s` as fits. */
export function labelValue(s: string): string {
  return s.slice(0, MAX_LABEL_VALUE).replace(/[^A-Za-z0-9]+$/, "");
}

/** The labels linking a managed resource to its claim. */
export function claimLabels(claim: Named): Record<string, string> {
  return {
    [ClaimLabels.namespace]: claim.namespace ?? "",
    [ClaimLabels.name]: labelValue(claim.name),
    [ClaimLabels.uid]: claim.uid ?? "",
  };
}

/** Whether a class's allowedNamespaces admits `namespace`: "*", an exact name, or a "prefix-*" pattern. */
export function namespaceAllowed(patterns: readonly string[] | undefined, namespace: string): boolean {
  return (patterns ?? ["*"]).some((p) =>
    p === "*" ? true : p.endsWith("*") ? namespace.startsWith(p.slice(0, -1)) : p === namespace,
  );
}
