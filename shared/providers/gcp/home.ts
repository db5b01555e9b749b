// Where a Google Cloud resource lives (api/external.ts Home): the ProviderConfig's project, the
// location, region or zone the kind has (global resources have none), and a generated kind's explicit
// parent (`projects/p/locations/l/memberships/m`, `folders/1`): its full name is built under that parent, so
// a changed parent would read and create somewhere else.
import type { ConnectContext, Home } from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { GcpProviderConfigSpec } from "../../api/provider-config.ts";
import { homeFields } from "../home.ts";

const FIELDS = { location: "location", region: "region", zone: "zone", parent: "parent" } as const;

/**
 * A Google Cloud resource's home: project, location / region / zone / parent as the kind has them, and the
 * parents its kind names (a Cloud SQL database's or user's `instance`, a service networking Connection's
 * `network`: a URL and `projects/P/global/networks/N` are one home), so another parent is refused, never a
 * second resource made there.
 */
export async function gcpHome(
  ctx: ConnectContext<GcpProviderConfigSpec>,
  mr: ManagedResource<Record<string, unknown>, unknown>,
  parents: Readonly<Record<string, string>> = {},
): Promise<Home> {
  // Google's multi-region names are case-insensitive (US, us): one home. A parent's name is not.
  return {
    project: ctx.providerConfig.spec.projectID,
    ...homeFields(mr.spec.forProvider, FIELDS, (k, v) => (k === "parent" ? v : v.toLowerCase())),
    ...homeFields(mr.spec.forProvider, parents, (_k, v) => v.replace(/^.*?(?=projects\/)/, "")),
  };
}
