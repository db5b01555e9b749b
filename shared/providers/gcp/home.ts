// Where a Google Cloud resource lives (api/external.ts Home): the ProviderConfig's project, the
// location, region or zone the kind has (global resources have none), and a generated kind's explicit
// parent (`projects/p/locations/l/memberships/m`, `folders/1`): its full name is built under that parent, so
// a changed parent would read and create somewhere else. A parent under a project (`projects/<id>/…` or
// `projects/<number>/…`, at any depth) names one project in two forms: where the kind's client can resolve
// them, both are one.
import { type ConnectContext, type Home, recordedHome } from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { GcpProviderConfigSpec } from "../../api/provider-config.ts";
import { homeFields } from "../home.ts";

const FIELDS = { location: "location", region: "region", zone: "zone", parent: "parent" } as const;

/**
 * A project's number from its id or number (`123` as it is; an id through Resource Manager's projects.get),
 * or undefined where Google knows no such project.
 */
export type ProjectNumberOf = (idOrNumber: string) => Promise<string | undefined>;

/** The `<x>` of a project parent `projects/<x>` (an id or a number), else undefined. */
export const projectOf = (parent: string) => /^projects\/([^/]+)$/.exec(parent)?.[1];

/**
 * A name under a project split into the project's `<x>` and what follows (`projects/p/locations/l` →
 * `["p", "/locations/l"]`, `projects/p` → `["p", ""]`), else undefined.
 */
export function underProject(name: string): [string, string] | undefined {
  const m = /^projects\/([^/]+)(\/.*)?$/.exec(name);
  return m ? [m[1] as string, m[2] ?? ""] : undefined;
}

/**
 * A Google Cloud resource's home: project, location / region / zone / parent as the kind has them, and the
 * parents its kind names (a Cloud SQL database's or user's `instance`, a service networking Connection's
 * `network`: a URL and `projects/P/global/networks/N` are one home), so another parent is refused, never a
 * second resource made there. With `projectNumber` (the kinds whose parent is a spec field: a TagKey's
 * `projects/<x>`, an Entry's `projects/<x>/locations/<l>/entryGroups/<g>`), a parent that is the recorded one
 * with its project in the other form (id or number) and the rest the same text is answered as recorded: the
 * same home, nothing refused or sent; another project (or one Google does not know), location or parent below
 * stays as the spec writes it, a changed home.
 */
export async function gcpHome(
  ctx: ConnectContext<GcpProviderConfigSpec>,
  mr: ManagedResource<Record<string, unknown>, unknown>,
  parents: Readonly<Record<string, string>> = {},
  projectNumber?: ProjectNumberOf,
): Promise<Home> {
  // Google's multi-region names are case-insensitive (US, us): one home. A parent's name is not.
  const home: Home = {
    project: ctx.providerConfig.spec.projectID,
    ...homeFields(mr.spec.forProvider, FIELDS, (k, v) => (k === "parent" ? v : v.toLowerCase())),
    ...homeFields(mr.spec.forProvider, parents, (_k, v) => v.replace(/^.*?(?=projects\/)/, "")),
  };
  const [wanted, recorded] = [home.parent, recordedHome(mr)?.parent];
  if (!projectNumber || !wanted || !recorded || wanted === recorded) return home;
  const [w, r] = [underProject(wanted), underProject(recorded)];
  if (!w || !r || w[1] !== r[1]) return home;
  const [nw, nr] = await Promise.all([projectNumber(w[0]), projectNumber(r[0])]);
  return nw !== undefined && nw === nr ? { ...home, parent: recorded } : home;
}
