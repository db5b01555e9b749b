// The kinds the claim reconciler touches, derived from the class bindings (one source): what the
// forwarder and sweep watch, what RBAC grants (infra/k8s/gen-rbac.ts) and what `driftless doctor` checks.
// API definitions only: importing this loads no cloud SDK.
import type { ClaimKindDef } from "../api/claims/claims.ts";
import type { ClassKindDef } from "../api/claims/classes.ts";
import type { ManagedKindDef } from "../api/managed.ts";
import type { ClassBinding } from "./binding.ts";
import { classBindings } from "./bindings/index.ts";

export interface ClaimKinds {
  /** Claim kinds (claims.driftless.dev, namespaced). */
  claims: ClaimKindDef[];
  /** Class kinds (classes.driftless.dev, cluster-scoped). */
  classes: ClassKindDef[];
  /** The managed kinds classes make for claims: the only ones the claim reconciler creates and deletes. */
  made: ManagedKindDef[];
}

const keyOf = (t: { group: string; kind: string }) => `${t.kind}.${t.group}`;

/** The claim, class and made managed kinds of these bindings, each once, in binding order. */
export function claimKindsOf(bindings: readonly ClassBinding[] = classBindings): ClaimKinds {
  const claims = new Map<string, ClaimKindDef>();
  const classes = new Map<string, ClassKindDef>();
  const made = new Map<string, ManagedKindDef>();
  for (const b of bindings) {
    claims.set(keyOf(b.class.claim), b.class.claim);
    classes.set(keyOf(b.class), b.class);
    for (const p of b.parts) made.set(keyOf(p.type), p.type);
  }
  return { claims: [...claims.values()], classes: [...classes.values()], made: [...made.values()] };
}

/** The claim and class kinds: what a forwarder or sweep watches so their keys reach the claim reconciler. */
export function claimTypes(
  bindings: readonly ClassBinding[] = classBindings,
): Array<ClaimKindDef | ClassKindDef> {
  const k = claimKindsOf(bindings);
  return [...k.claims, ...k.classes];
}
