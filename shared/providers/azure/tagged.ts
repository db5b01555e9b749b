// Azure's tag search for `driftless orphans`: Resource Manager's own lists, read-after-write consistent.
// Resource groups: Resource Groups - List with `$filter=tagName eq '…' and tagValue eq '…'` (their tags come
// with them). Resources: Resources - List of the subscription with the same filter, which names them but
// leaves their tags out (the REST reference's note on $filter), so each hit's tags are read with Tags - Get
// At Scope, one api-version for every resource type. Azure Resource Graph (tags in one KQL query) is not used:
// its index lags writes by seconds to minutes, needs its own provider registration and RBAC, and would list
// a just-created resource's managed resource as gone or miss a leak just made. Why: docs/concepts.md.
import type { TaggedResource, TagSearch } from "../../api/tagged.ts";
import { type ArmRest, armRest } from "./arm-rest.ts";
import { azure, isNotFound } from "./config.ts";

/** Microsoft.Resources: Resources - List, Resource Groups - List and Tags - Get At Scope. */
export const RESOURCES_API = "2021-04-01";

interface Listed {
  id?: string;
  type?: string;
  location?: string;
  tags?: Record<string, string>;
}

/** Characters an Azure tag name cannot hold: a key with one (the ownership tag's `/`) is on no resource. */
const NOT_IN_TAG_NAMES = /[<>%&\\?/]/;

/** An OData string literal: quoted, a quote doubled. */
const literal = (v: string) => `'${v.replaceAll("'", "''")}'`;

export const searchAzureTags: TagSearch = (ctx, filters, opts) => azure(() => search(ctx, filters, opts));

async function search(...[ctx, filters]: Parameters<TagSearch>): Promise<TaggedResource[]> {
  const arm = await armRest(ctx);
  const found = new Map<string, TaggedResource>();
  const add = (r: Listed, tags: Record<string, string>) => {
    if (r.id)
      found.set(r.id.toLowerCase(), {
        id: r.id,
        type: r.type ?? "",
        tags,
        ...(r.location ? { location: r.location } : {}),
      });
  };
  for (const f of filters) {
    if (NOT_IN_TAG_NAMES.test(f.key)) continue;
    const filter = `tagName eq ${literal(f.key)}${f.value !== undefined ? ` and tagValue eq ${literal(f.value)}` : ""}`;
    const query = `?$filter=${encodeURIComponent(filter)}&api-version=${RESOURCES_API}`;
    for await (const page of arm.pages<Listed>(arm.sub(`/resourcegroups${query}`), ""))
      for (const g of page) add(g, g.tags ?? {});
    for await (const page of arm.pages<Listed>(arm.sub(`/resources${query}`), ""))
      for (const r of page) {
        if (!r.id || found.has(r.id.toLowerCase())) continue;
        const tags = await tagsOf(arm, r.id);
        if (tags) add(r, tags);
      }
  }
  return [...found.values()];
}

/** A resource's tags (Tags - Get At Scope); undefined when it went away since it was listed. */
async function tagsOf(arm: ArmRest, id: string): Promise<Record<string, string> | undefined> {
  try {
    const a = await arm.call<{ properties?: { tags?: Record<string, string> } }>(
      "GET",
      `${id}/providers/Microsoft.Resources/tags/default`,
      RESOURCES_API,
    );
    return a.properties?.tags ?? {};
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
