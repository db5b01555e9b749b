// Where a Google Cloud resource lives (api/external.ts Home): the ProviderConfig's project and the
// location, region or zone the kind has (global resources have none).
import type { ConnectContext, Home } from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { GcpProviderConfigSpec } from "../../api/provider-config.ts";
import { homeFields } from "../home.ts";

const FIELDS = { location: "location", region: "region", zone: "zone" } as const;

/** A Google Cloud resource's home: project, and location / region / zone as the kind has them. */
export async function gcpHome(
  ctx: ConnectContext<GcpProviderConfigSpec>,
  mr: ManagedResource<Record<string, unknown>, unknown>,
): Promise<Home> {
  // Google's multi-region names are case-insensitive (US, us): one home.
  return {
    project: ctx.providerConfig.spec.projectID,
    ...homeFields(mr.spec.forProvider, FIELDS, (_k, v) => v.toLowerCase()),
  };
}
