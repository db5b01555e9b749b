// `driftless import` of a Cloud Control child type: its list handler needs a ResourceModel naming its
// parents (`listNeeds`), so it is listed level by level — the top type on its own, each level under every
// resource of the one above, its needed fields filled from that resource and the ones above it (a
// HostedConfigurationVersion's applicationId from its Application, its configurationProfileId from its
// ConfigurationProfile, itself listed per Application). Which type each needed field names comes from the
// schema's references; a field no reference names, or needs no one chain of parents holds, is not listable.
import type { AwsccKindSpec } from "../../api/awscc/spec.ts";
import { NotListableError } from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import { Annotations } from "../../api/meta.ts";

type Json = Record<string, unknown>;

/** Parents above parents, at most: deeper chains are named as not listable. */
const MAX_LEVELS = 4;

/** One needed field of a level: filled from the resource listed `level` levels up the chain. */
interface Need {
  /** camelCase, as forProvider has it. */
  field: string;
  /** As the ResourceModel sends it. */
  wire: string;
  /** Index in the chain of the level whose resource holds the value. */
  level: number;
  /** That resource's property (as listed) holding it; absent: its identifier (the external name). */
  property?: string;
}

/** One level of a list plan: a type, and how its ResourceModel is filled (none for the top). */
export interface ListLevel {
  spec: AwsccKindSpec;
  needs: Need[];
}

/** One resource listed at some level: its identifier and the model ListResources showed. */
interface Listed {
  identifier: string;
  model: Json;
}

/**
 * The levels to list a type through, from the top type (listed on its own) down to the type itself; throws
 * NotListableError saying why a type cannot be listed so.
 */
export function listPlanOf(
  spec: AwsccKindSpec,
  specOf: (typeName: string) => AwsccKindSpec | undefined,
  depth = 0,
): ListLevel[] {
  if (spec.primaryIdentifier.length === 0)
    throw new NotListableError(`${spec.typeName}'s schema has no primary identifier to name what it lists`);
  if (!spec.handlers?.includes("list"))
    throw new NotListableError(`${spec.typeName} has no list handler in the registry`);
  const needs = spec.listNeeds ?? [];
  if (needs.length === 0) return [{ spec, needs: [] }];
  if (depth + 1 >= MAX_LEVELS)
    throw new NotListableError(`its parents are more than ${MAX_LEVELS - 1} levels deep`);
  const refs = needs.map((field) => {
    const ref = spec.references.find((r) => r.field === field && "type" in r.to);
    if (!ref || !("type" in ref.to))
      throw new NotListableError(
        `its list handler needs ${field} of a parent in the request, and its schema names no parent type for it`,
      );
    return { field, type: ref.to.type, from: ref.from };
  });
  let why = "";
  // The parent to list under: the named type whose own chain holds every other named type.
  for (const type of new Set(refs.map((r) => r.type))) {
    const parent = specOf(type);
    if (!parent) {
      why = `${type} is not a generated type`;
      continue;
    }
    let chain: ListLevel[];
    try {
      chain = listPlanOf(parent, specOf, depth + 1);
    } catch (err) {
      if (!(err instanceof NotListableError)) throw err;
      why = `${type} cannot be listed: ${err.message}`;
      continue;
    }
    const levelOf = (t: string) => chain.findIndex((l) => l.spec.typeName === t);
    if (!refs.every((r) => levelOf(r.type) >= 0)) {
      why = `no one parent type's listing holds ${refs.map((r) => r.type).join(" and ")} together`;
      continue;
    }
    const mine: Need[] = [];
    for (const r of refs) {
      const level = levelOf(r.type);
      const holder = (chain[level] as ListLevel).spec;
      const wire = spec.properties[r.field]?.n ?? r.field;
      if (r.from === "externalName") {
        // An identifier of several parts (`a|b`) is no value of one field.
        if (holder.primaryIdentifier.length !== 1) {
          why = `${r.field} takes a ${r.type}'s identifier, which has ${holder.primaryIdentifier.length} parts`;
          break;
        }
        mine.push({ field: r.field, wire, level });
      } else {
        const p = holder.attributes[r.from.atProvider] ?? holder.properties[r.from.atProvider];
        mine.push({ field: r.field, wire, level, property: p?.n ?? r.from.atProvider });
      }
    }
    if (mine.length === refs.length) return [...chain, { spec, needs: mine }];
  }
  throw new NotListableError(
    `its list handler needs ${needs.join(", ")} of its parents in the request: ${why}`,
  );
}

/** A need's value from the chain of resources listed above: a property, or (from the identifier) its part. */
function neededValue(need: Need, plan: readonly ListLevel[], chain: readonly Listed[]): unknown {
  const at = chain[need.level] as Listed;
  if (need.property === undefined) return at.identifier;
  if (at.model[need.property] !== undefined) return at.model[need.property];
  // A list handler that shows only the identifier: its parts are the primary identifier's properties.
  const i = (plan[need.level] as ListLevel).spec.primaryIdentifier.indexOf(need.property);
  return i >= 0 ? at.identifier.split("|")[i] : undefined;
}

/**
 * Every resource of the plan's last type, listed level by level through `pages` (ListResources of a type,
 * with a ResourceModel), with the needed fields it was listed under (camelCase → value).
 */
export async function* listByLevels(
  plan: readonly ListLevel[],
  pages: (typeName: string, model: Json | undefined) => AsyncIterable<Map<string, Json>>,
  level = 0,
  chain: readonly Listed[] = [],
): AsyncGenerator<{ identifier: string; needs: Json }> {
  const here = plan[level] as ListLevel;
  const values = here.needs.map((n) => [n, neededValue(n, plan, chain)] as const);
  // A parent listed without the property its children need: nothing can be listed under it.
  if (values.some(([, v]) => v === undefined)) return;
  const model = here.needs.length > 0 ? Object.fromEntries(values.map(([n, v]) => [n.wire, v])) : undefined;
  for await (const page of pages(here.spec.typeName, model))
    for (const [identifier, listed] of page) {
      if (level === plan.length - 1)
        yield { identifier, needs: Object.fromEntries(values.map(([n, v]) => [n.field, v])) };
      else yield* listByLevels(plan, pages, level + 1, [...chain, { identifier, model: listed }]);
    }
}

/**
 * A parent level read from the cluster (`driftless import --parents managed`): the managed resources of
 * the type in `region` that match the ResourceModel, each as ListResources would show it — its external
 * name as identifier, its forProvider and atProvider under their CloudFormation names.
 */
export function managedLevel(
  spec: AwsccKindSpec,
  managed: readonly ManagedResource[],
  model: Json | undefined,
  region: string,
): Map<string, Json> {
  const out = new Map<string, Json>();
  for (const mr of managed) {
    const id = mr.metadata.annotations?.[Annotations.externalName];
    const fp = (mr.spec.forProvider ?? {}) as Json;
    if (!id || ((fp.region as string | undefined) ?? region) !== region) continue;
    const ap = ((mr.status as { atProvider?: Json } | undefined)?.atProvider ?? {}) as Json;
    const shown: Json = {};
    for (const [k, v] of Object.entries(ap)) shown[spec.attributes[k]?.n ?? k] = v;
    for (const [k, v] of Object.entries(fp)) if (spec.properties[k]) shown[spec.properties[k].n] = v;
    if (Object.entries(model ?? {}).every(([k, v]) => JSON.stringify(shown[k]) === JSON.stringify(v)))
      out.set(id, shown);
  }
  return out;
}
