import type { FirewallRule } from "@azure/arm-postgresql-flexible";
import { FlexibleServerFirewallRule } from "../../api/azure/dbforpostgresql.ts";
import { InvalidSpecError } from "../../api/external.ts";
import { serverChildProvider } from "./postgresql-client.ts";

function bodyOf({
  startIpAddress,
  endIpAddress,
}: {
  startIpAddress?: string;
  endIpAddress?: string;
}): FirewallRule {
  if (!startIpAddress || !endIpAddress)
    throw new InvalidSpecError("spec.forProvider.startIpAddress and endIpAddress are required");
  return { startIpAddress, endIpAddress };
}

export const flexibleServerFirewallRuleProvider = serverChildProvider({
  definition: FlexibleServerFirewallRule,
  collection: "firewallRules",
  listCall: "Firewall Rules - List By Server",
  calls: (pg) => ({
    get: (p, name) => pg.firewallRules.get(p.rg, p.server, name),
    list: (p) => pg.firewallRules.listByServer(p.rg, p.server).byPage(),
    put: (p, name, body: FirewallRule) => pg.firewallRules.beginCreateOrUpdate(p.rg, p.server, name, body),
    remove: (p, name) => pg.firewallRules.beginDelete(p.rg, p.server, name),
  }),
  mapping: {
    what: "firewall rule",
    observationOf: (_fp, parent, rule) => ({
      resourceExists: true,
      observed: {
        resourceGroupName: parent.rg,
        serverName: parent.server,
        startIpAddress: rule.startIpAddress,
        endIpAddress: rule.endIpAddress,
      },
      atProvider: rule.id ? { id: rule.id } : {},
      availability: "Available",
    }),
    createBody: bodyOf,
    // A PUT of the same rule replaces its range.
    updateBody: bodyOf,
  },
});
