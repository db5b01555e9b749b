import { FlexibleServerFirewallRule } from "../../api/azure/dbforpostgresql.ts";
import { InvalidSpecError } from "../../api/external.ts";
import type { ArmResource } from "./arm-rest.ts";
import { serverChildProvider } from "./postgresql-client.ts";

/** A firewall rule as ARM's REST API answers it. */
type FirewallRule = ArmResource<{ startIpAddress?: string; endIpAddress?: string }>;

function bodyOf({
  startIpAddress,
  endIpAddress,
}: {
  startIpAddress?: string;
  endIpAddress?: string;
}): FirewallRule {
  if (!startIpAddress || !endIpAddress)
    throw new InvalidSpecError("spec.forProvider.startIpAddress and endIpAddress are required");
  return { properties: { startIpAddress, endIpAddress } };
}

export const flexibleServerFirewallRuleProvider = serverChildProvider({
  definition: FlexibleServerFirewallRule,
  collection: "firewallRules",
  listCall: "Firewall Rules - List By Server",
  mapping: {
    what: "firewall rule",
    observed: (rule: FirewallRule) => ({
      startIpAddress: rule.properties?.startIpAddress,
      endIpAddress: rule.properties?.endIpAddress,
    }),
    createBody: bodyOf,
    // A PUT of the same rule replaces its range.
    updateBody: bodyOf,
  },
});
