import type { DeletionPolicy, ManagementAction } from "../api/meta.ts";

export interface Policies {
  observe: boolean;
  create: boolean;
  update: boolean;
  delete: boolean;
  lateInitialize: boolean;
  /** Observe-only: an imported resource driftless reads but never changes. */
  observeOnly: boolean;
  /** Empty policies: nothing may be done, which Crossplane treats as paused. */
  none: boolean;
}

/**
 * Resolves management policies and the deletion policy into allowed actions. `deletionPolicy: Orphan`
 * removes Delete whatever the management policies say, so "Orphan" is always honoured.
 */
export function resolvePolicies(
  management: ManagementAction[] | undefined,
  deletion: DeletionPolicy | undefined,
): Policies {
  const set = new Set(management ?? ["*"]);
  const all = set.has("*");
  const has = (a: ManagementAction) => all || set.has(a);
  const observeOnly = !all && set.size === 1 && set.has("Observe");
  return {
    observe: has("Observe"),
    create: has("Create"),
    update: has("Update"),
    delete: has("Delete") && deletion !== "Orphan",
    // Import fills the spec from the cloud, so switching an imported resource to full management changes nothing.
    lateInitialize: has("LateInitialize") || observeOnly,
    observeOnly,
    none: set.size === 0,
  };
}
