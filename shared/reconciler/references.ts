import { DependencyNotReadyError, InvalidSpecError } from "../api/external.ts";
import type { ManagedKindDef, ManagedResource, ReferenceDef } from "../api/managed.ts";
import { Annotations, type Reference, type Selector } from "../api/meta.ts";
import { holdersOf } from "../api/reference.ts";
import type { Kube } from "../kube/client.ts";
import { namedError } from "../named-error.ts";

/** A reference cannot be resolved yet (target missing, not Ready, or empty): wait, never create without it. */
export class ReferenceNotReadyError extends namedError("ReferenceNotReadyError", DependencyNotReadyError) {}

type Spec = Record<string, unknown>;
/** A reference or selector that may name its target's kind (ReferenceDef.anyKind). */
type KindNamed = { apiVersion?: string; kind?: string };

/** The kind a reference or selector names, or the reference's own `to` when it names none. */
function targetOf(ref: ReferenceDef, named: KindNamed | undefined): ReferenceDef["to"] {
  if (!ref.anyKind || (!named?.apiVersion && !named?.kind)) return ref.to;
  const { apiVersion = "", kind = "" } = named;
  const t = apiVersion && kind ? ref.anyKind(apiVersion, kind) : undefined;
  if (!t)
    throw new InvalidSpecError(
      `${ref.refField}/${ref.selectorField} names ${kind || "no kind"} of ${apiVersion || "no apiVersion"}: not a kind ${ref.field} may be filled from (name both apiVersion and kind of a served kind, or neither for ${ref.to.kind})`,
    );
  return t;
}

const isEmpty = (v: unknown) =>
  v === undefined || v === null || v === "" || (Array.isArray(v) && v.length === 0);
const readyOf = (mr: ManagedResource) =>
  mr.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
const defaultExtract = (t: ManagedResource) => t.metadata.annotations?.[Annotations.externalName];

/**
 * Whether resolveReferences would find nothing to do without reading anything: every reference's
 * field is set and none asks to be resolved again each time (policy Always).
 */
export function referencesResolved(def: ManagedKindDef, mr: ManagedResource): boolean {
  const top = (mr.spec.forProvider ?? {}) as Spec;
  return def.references.every((ref) => holdersOf(top, ref.at).every(({ holder }) => resolvedIn(ref, holder)));
}

function resolvedIn(ref: ReferenceDef, fp: Spec): boolean {
  {
    const refValue = fp[ref.refField] as Reference | Reference[] | undefined;
    const selector = fp[ref.selectorField] as Selector | undefined;
    const policies = [
      selector?.policy,
      ...(Array.isArray(refValue) ? refValue.map((r) => r.policy) : [refValue?.policy]),
    ];
    if (policies.some((p) => p?.resolve === "Always")) return false;
    return !isEmpty(fp[ref.field]) || (isEmpty(refValue) && !selector);
  }
}

/**
 * Resolves every reference of a kind into forProvider. Returns the new forProvider when anything
 * changed (the caller writes it back, guarded by resourceVersion), undefined when nothing did.
 */
export async function resolveReferences(
  kube: Kube,
  def: ManagedKindDef,
  mr: ManagedResource,
): Promise<Spec | undefined> {
  if (def.references.length === 0) return undefined;
  const top: Spec = structuredClone((mr.spec.forProvider ?? {}) as Spec);
  let changed = false;
  for (const ref of def.references)
    for (const { holder, where } of holdersOf(top, ref.at))
      if (await resolveIn(kube, ref, holder, where, mr)) changed = true;
  return changed ? top : undefined;
}

/** Resolves one reference in the object holding its fields (`where` names that object in messages). */
async function resolveIn(
  kube: Kube,
  ref: ReferenceDef,
  fp: Spec,
  where: string,
  mr: ManagedResource,
): Promise<boolean> {
  let changed = false;
  {
    const refValue = fp[ref.refField] as Reference | Reference[] | undefined;
    const selector = fp[ref.selectorField] as Selector | undefined;
    // A selector whose policy is Always chooses again every time (the recorded choice is not reused).
    const reselect = selector?.policy?.resolve === "Always";
    const policy = reselect
      ? selector?.policy
      : ((Array.isArray(refValue) ? refValue[0]?.policy : refValue?.policy) ?? selector?.policy);
    const always = policy?.resolve === "Always";
    const optional = policy?.resolution === "Optional";
    if (!isEmpty(fp[ref.field]) && !always) return false;
    if (isEmpty(refValue) && !selector) return false;

    let names: string[];
    let to: ReferenceDef["to"];
    if (!isEmpty(refValue) && !reselect) {
      const refs = Array.isArray(refValue) ? refValue : [refValue as Reference];
      names = refs.map((r) => r.name);
      to = targetOf(ref, refs[0] as KindNamed);
    } else {
      to = targetOf(ref, selector as KindNamed);
      names = await select(kube, ref, to, selector as Selector, mr);
      if (names.length === 0) {
        if (optional) return changed;
        throw new ReferenceNotReadyError(
          `no ${to.kind} matches ${where}${ref.selectorField}${describeSelector(selector as Selector)}: referenced resource may not yet exist`,
        );
      }
      names = ref.list ? names : names.slice(0, 1);
      // Record the choice, as Crossplane does, so the selection is stable and visible (with its kind).
      const kindOf = to === ref.to ? {} : { apiVersion: to.apiVersion, kind: to.kind };
      const chosen = ref.list ? names.map((name) => ({ ...kindOf, name })) : { ...kindOf, name: names[0] };
      if (JSON.stringify(fp[ref.refField]) !== JSON.stringify(chosen)) {
        fp[ref.refField] = chosen;
        changed = true;
      }
    }

    const values: string[] = [];
    for (const name of names) {
      // A namespaced resource references only resources in its own namespace.
      const target = await kube.get<ManagedResource & { [k: string]: unknown }>(
        to,
        name,
        to.namespaced ? mr.metadata.namespace : undefined,
      );
      const value = target ? (ref.extract ?? defaultExtract)(target) : undefined;
      if (!target || !readyOf(target) || isEmpty(value)) {
        // Optional: go on with what did resolve; Required: wait for every target.
        if (optional) continue;
        const why = !target ? "does not exist" : !readyOf(target) ? "is not Ready" : "has no value yet";
        throw new ReferenceNotReadyError(
          `referenced ${to.kind} "${name}" ${why} (${where}${ref.refField}): referenced resource may not yet be ready; creation waits for it`,
        );
      }
      values.push(value as string);
    }
    if (values.length === 0) return changed;
    const resolved = ref.list ? values : values[0];
    if (JSON.stringify(fp[ref.field]) !== JSON.stringify(resolved)) {
      fp[ref.field] = resolved;
      changed = true;
    }
  }
  return changed;
}

async function select(
  kube: Kube,
  ref: ReferenceDef,
  to: ReferenceDef["to"],
  selector: Selector,
  mr: ManagedResource,
): Promise<string[]> {
  const labelSelector = Object.entries(selector.matchLabels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const controller = mr.metadata.ownerReferences?.find((o) => o.controller)?.uid;
  // Two objects without a controller do not share one: matchControllerRef then matches nothing.
  if (selector.matchControllerRef && !controller) return [];
  // Never a cluster-wide selection for a namespaced reference: it may choose only in its own namespace.
  if (to.namespaced && !mr.metadata.namespace)
    throw new Error(`${ref.selectorField}: a namespaced reference needs the resource's namespace`);
  const names: string[] = [];
  let cont: string | undefined;
  do {
    const page = await kube.list<ManagedResource & { [k: string]: unknown }>(to, {
      limit: 500,
      ...(to.namespaced && mr.metadata.namespace ? { namespace: mr.metadata.namespace } : {}),
      ...(labelSelector ? { labelSelector } : {}),
      ...(cont ? { continue: cont } : {}),
    });
    for (const item of page.items) {
      if (
        selector.matchControllerRef &&
        item.metadata.ownerReferences?.find((o) => o.controller)?.uid !== controller
      )
        continue;
      names.push(item.metadata.name);
    }
    cont = page.continue;
  } while (cont);
  // Deterministic: the same objects always give the same choice.
  return names.sort();
}

function describeSelector(s: Selector): string {
  const labels = Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  const parts = [...labels, ...(s.matchControllerRef ? ["same controller"] : [])];
  return parts.length > 0 ? ` (${parts.join(", ")})` : "";
}
