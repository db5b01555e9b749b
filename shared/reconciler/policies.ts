import type { CloudLacks } from "../api/managed.ts";
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
  /** One of the combinations Crossplane supports (SUPPORTED_POLICIES); anything else is reported. */
  supported: boolean;
}

/**
 * The management-policy combinations that have a meaning, as crossplane-runtime accepts them: all
 * actions, observe-only (import), paused (none), and full management without Delete, Update or
 * LateInitialize in their combinations. Letters: Observe, Create, Update, Delete, LateInitialize.
 */
export const SUPPORTED_POLICIES: readonly string[] = [
  "*",
  "OCUDL",
  "O",
  "",
  "OCUD",
  "OCUL",
  "OCU",
  "OCDL",
  "OCL",
  "OCD",
  "OC",
  "OD",
  "OU",
  "OL",
  "OUL",
];

const LETTER: Record<Exclude<ManagementAction, "*">, string> = {
  Observe: "O",
  Create: "C",
  Update: "U",
  Delete: "D",
  LateInitialize: "L",
};

/** A policy set in canonical form ("*" alone, else its letters in OCUDL order). */
function canonical(set: ReadonlySet<ManagementAction>): string {
  if (set.has("*")) return set.size === 1 ? "*" : "*+";
  return "OCUDL"
    .split("")
    .filter((l) => [...set].some((a) => LETTER[a as Exclude<ManagementAction, "*">] === l))
    .join("");
}

/** The supported combinations in words, for the message of an unsupported one. */
export const supportedPoliciesText = () =>
  SUPPORTED_POLICIES.map((c) =>
    c === "*"
      ? '["*"]'
      : `[${c
          .split("")
          .map((l) => Object.entries(LETTER).find(([, v]) => v === l)?.[0])
          .join(", ")}]`,
  ).join(", ");

/**
 * Resolves management policies and the deletion policy into allowed actions. `deletionPolicy: Orphan`
 * removes Delete whatever the management policies say, so "Orphan" is always honoured. Late
 * initialization happens only with LateInitialize (or *): an imported [Observe] resource never has its
 * spec written, so GitOps tools show no diff. An action the kind's cloud publishes no call for (`lacks`: a
 * Google KeyRing's delete, a singleton's create) is never allowed, whatever the object asks: the one place
 * that decides it, so no step of the engine can call what does not exist.
 */
export function resolvePolicies(
  management: ManagementAction[] | undefined,
  deletion: DeletionPolicy | undefined,
  lacks?: CloudLacks,
): Policies {
  // A plan resolves them several times per object; the spellings in use are few (the default above all).
  const missing = lacks
    ? `${lacks.Create ? "C" : ""}${lacks.Update ? "U" : ""}${lacks.Delete ? "D" : ""}`
    : "";
  const key = `${management?.join(",") ?? "-"}|${deletion ?? ""}|${missing}`;
  let resolved = resolvedPolicies.get(key);
  if (!resolved) {
    resolved = Object.freeze(resolve(management, deletion, lacks));
    if (resolvedPolicies.size < MAX_RESOLVED_POLICIES) resolvedPolicies.set(key, resolved);
  }
  return resolved;
}

const resolvedPolicies = new Map<string, Readonly<Policies>>();
const MAX_RESOLVED_POLICIES = 64;

function resolve(
  management: ManagementAction[] | undefined,
  deletion: DeletionPolicy | undefined,
  lacks: CloudLacks | undefined,
): Policies {
  const set = new Set<ManagementAction>(management ?? ["*"]);
  const all = set.has("*");
  const has = (a: ManagementAction) => all || set.has(a);
  const observeOnly = !all && set.size === 1 && set.has("Observe");
  const form = canonical(set);
  return {
    observe: has("Observe"),
    create: has("Create") && !lacks?.Create,
    update: has("Update") && !lacks?.Update,
    delete: has("Delete") && deletion !== "Orphan" && !lacks?.Delete,
    lateInitialize: has("LateInitialize"),
    observeOnly,
    none: set.size === 0,
    // "*" with explicit actions besides is redundant, not contradictory.
    supported: form === "*+" || SUPPORTED_POLICIES.includes(form),
  };
}
