// Prints the Azure custom role for the generated Azure kinds DRIFTLESS_ACTIVATE selects: exactly the
// actions their reconciles call (shared/api/azure-gen/role.ts), as JSON for
// `az role definition create --role-definition @role.json`. Assign it to the ProviderConfig's identity
// (service principal or managed identity) at the subscription or resource group it manages, or at the
// management group of a management-group kind (the default --scope follows the kinds).
//
//   DRIFTLESS_ACTIVATE=azure:storage.storageaccount,azure:network.* node infra/azure/gen-role.ts \
//     --scope /subscriptions/<id> [--scope /subscriptions/<id>/resourceGroups/<rg>] [--name "…"]
import { parseArgs } from "node:util";
import { azureCustomRole, azureRoleScopeOf } from "../../shared/api/azure-gen/role.ts";
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
  // A custom role is assignable at management groups, subscriptions and groups, never at the root `/`.
  const defaults = [...new Set(specs.map(azureRoleScopeOf))].filter((s) => s !== "/");
  const tenant = specs.filter((s) => azureRoleScopeOf(s) === "/");
  if (tenant.length > 0)
    process.stderr.write(
      `${tenant.length} activated kind(s) live at the tenant (${tenant.map((s) => s.type).join(", ")}): ARM checks them at the root scope /, where no custom role can be assigned — their actions are in this role, but grant them with a built-in role assigned at / (docs/azure-generated.md)\n`,
    );
  const scopes = values.scope?.length
    ? values.scope
    : defaults.length > 0
      ? defaults
      : ["/subscriptions/<subscription-id>"];
  const role = azureCustomRole(specs, scopes, values.name);
  process.stdout.write(`${JSON.stringify(role, null, 2)}\n`);
}
