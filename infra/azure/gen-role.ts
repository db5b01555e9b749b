// Prints the Azure custom role for the generated Azure kinds DRIFTLESS_ACTIVATE selects: exactly the
// actions their reconciles call (shared/api/azure-gen/role.ts), as JSON for
// `az role definition create --role-definition @role.json`. Assign it to the ProviderConfig's identity
// (service principal or managed identity) at the subscription or resource group it manages.
//
//   DRIFTLESS_ACTIVATE=azure:storage.storageaccount,azure:network.* node infra/azure/gen-role.ts \
//     --scope /subscriptions/<id> [--scope /subscriptions/<id>/resourceGroups/<rg>] [--name "…"]
import { parseArgs } from "node:util";
import { azureCustomRole } from "../../shared/api/azure-gen/role.ts";
import { activatedAzureGenSpecs } from "../../shared/providers/azure/arm-generic/activated.ts";

if (import.meta.main) {
  const { values } = parseArgs({
    options: { scope: { type: "string", multiple: true }, name: { type: "string" } },
  });
  const specs = activatedAzureGenSpecs();
  if (specs.length === 0) {
    process.stderr.write(
      "no generated Azure kind is activated: set DRIFTLESS_ACTIVATE (docs/azure-generated.md)\n",
    );
    process.exit(1);
  }
  const scopes = values.scope?.length ? values.scope : ["/subscriptions/<subscription-id>"];
  const role = azureCustomRole(specs, scopes, values.name);
  process.stdout.write(`${JSON.stringify(role, null, 2)}\n`);
}
