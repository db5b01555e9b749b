import { ClaimReason, type ClassSelector, DEFAULT_CLASS_ANNOTATION } from "../api/claims/meta.ts";
import { namespaceAllowed } from "./naming.ts";

/** A class as matching sees it. */
export interface Candidate {
  kind: string;
  name: string;
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string> | undefined;
  allowedNamespaces?: readonly string[] | undefined;
}

export type Selection =
  | {
      found: true;
      chosen: Candidate;
      how: "selector" | "default";
      /** Every class that qualified, chosen first; more than one is worth a warning. */
      qualified: Candidate[];
    }
  | {
      found: false;
      reason: typeof ClaimReason.ClassNotFound | typeof ClaimReason.ClassNotAllowed;
      message: string;
    };

/** Sort order that decides between several qualifying classes: kind, then name (byte order, not locale). */
export function byKindThenName(a: Candidate, b: Candidate): number {
  const ka = `${a.kind}\0${a.name}`;
  const kb = `${b.kind}\0${b.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

export const isDefaultClass = (c: Pick<Candidate, "annotations">) =>
  c.annotations?.[DEFAULT_CLASS_ANNOTATION] === "true";

const matches = (c: Candidate, s: ClassSelector) =>
  Object.entries(s.matchLabels ?? {}).every(([k, v]) => c.labels?.[k] === v);

export const describeLabels = (labels: Record<string, string> | undefined) =>
  `{${Object.entries(labels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(", ")}}`;

const names = (cs: Candidate[]) => cs.map((c) => `${c.kind}/${c.name}`).join(", ");

/**
 * Chooses a class for a claim without classRef, as users know it from Crossplane: classSelector
 * (matchLabels over every class kind serving the claim) if set, else the default class(es). Classes
 * that do not allow the claim's namespace never qualify. Several qualifying: the first by kind, then
 * name — deterministic, so every worker chooses the same.
 */
export function selectClass(o: {
  claimKind: string;
  classKinds: readonly string[];
  namespace: string;
  selector?: ClassSelector | undefined;
  candidates: readonly Candidate[];
}): Selection {
  const how = o.selector ? "selector" : "default";
  const wanted = o.candidates
    .filter((c) => (o.selector ? matches(c, o.selector) : isDefaultClass(c)))
    .sort(byKindThenName);
  const qualified = wanted.filter((c) => namespaceAllowed(c.allowedNamespaces, o.namespace));
  const first = qualified[0];
  if (first) return { found: true, chosen: first, how, qualified };

  const what = o.selector
    ? `no ${o.classKinds.join(" or ")} matches spec.classSelector ${describeLabels(o.selector.matchLabels)}`
    : `no default class for ${o.claimKind} claims (a ${o.classKinds.join(" or ")} annotated ${DEFAULT_CLASS_ANNOTATION}: "true")`;
  if (wanted.length > 0) {
    return {
      found: false,
      reason: ClaimReason.ClassNotAllowed,
      message: `${what} that allows namespace "${o.namespace}": ${names(wanted)} ${wanted.length === 1 ? "does" : "do"} not list it in spec.allowedNamespaces`,
    };
  }
  return {
    found: false,
    reason: ClaimReason.ClassNotFound,
    message: `${what}; set spec.classRef or spec.classSelector, or ask the platform team for a class. Binding is retried.`,
  };
}

/** The warning for a choice among several qualifying classes, or undefined when only one qualified. */
export function ambiguity(
  s: Extract<Selection, { found: true }>,
): { reason: string; message: string } | undefined {
  if (s.qualified.length < 2) return undefined;
  return {
    reason: s.how === "default" ? ClaimReason.SeveralDefaultClasses : ClaimReason.SeveralClassesMatched,
    message: `${s.qualified.length} ${s.how === "default" ? "default classes" : "classes matching spec.classSelector"} qualified (${names(s.qualified)}); chose ${s.chosen.kind}/${s.chosen.name}, the first by kind, then name. Set spec.classRef to choose explicitly.`,
  };
}
