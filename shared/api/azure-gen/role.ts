// The Azure RBAC actions a generated kind needs, derived from its resource type the way Azure names them:
// an operation is `{Company}.{ProviderName}/{resourceType}/{action}` — `read`, `write` (create or update),
// `delete`, and `<function>/action` for a POST such as listKeys
// (learn.microsoft.com/azure/role-based-access-control/role-definitions#actions-format;
// e.g. Microsoft.Storage/storageAccounts/listkeys/action in learn.microsoft.com/rest/api/storagerp/srp_json_list_operations).
// The generic provider makes exactly these calls: GET, PUT and DELETE on the resource id, POST on the
// `list*` functions whose answers go to the connection Secret. It never polls an operation (the next
// observe reads provisioningState), so no `…/operations/read` is needed.
import type { AzureKindSpec } from "./spec.ts";

/** The actions one kind's reconciles call, sorted. */
export function azureRoleActions(spec: Pick<AzureKindSpec, "type" | "functions">): string[] {
  return [
    `${spec.type}/read`,
    `${spec.type}/write`,
    `${spec.type}/delete`,
    ...spec.functions.map((f) => `${spec.type}/${f}/action`),
  ].sort();
}

/**
 * Where the role of a kind is assigned (its identity's role assignment scope, a placeholder to fill): a kind
 * below a subscription at the subscription (or one of its resource groups); a management-group kind at its
 * management group; a tenant kind at the root scope `/`, where ARM checks tenant resources — and where a
 * custom role cannot be made assignable (its AssignableScopes are management groups, subscriptions or
 * resource groups: learn.microsoft.com/azure/role-based-access-control/role-definitions#assignablescopes),
 * so a tenant kind's actions need a built-in role that holds them.
 */
export function azureRoleScopeOf(spec: Pick<AzureKindSpec, "scope">): string {
  if (spec.scope === "tenant") return "/";
  if (spec.scope === "managementGroup")
    return "/providers/Microsoft.Management/managementGroups/<management-group-id>";
  return "/subscriptions/<subscription-id>";
}

/** An Azure custom role definition (`az role definition create --role-definition role.json`). */
export interface AzureRoleDefinition {
  Name: string;
  IsCustom: true;
  Description: string;
  Actions: string[];
  NotActions: string[];
  DataActions: string[];
  NotDataActions: string[];
  AssignableScopes: string[];
}

/**
 * The custom role for exactly these kinds: their actions, nothing else; assignable in the given scopes
 * (`/subscriptions/<id>` or a resource group's id).
 */
export function azureCustomRole(
  specs: readonly Pick<AzureKindSpec, "type" | "functions">[],
  assignableScopes: readonly string[],
  name = "driftless generated Azure kinds",
): AzureRoleDefinition {
  const actions = [...new Set(specs.flatMap(azureRoleActions))].sort();
  return {
    Name: name,
    IsCustom: true,
    Description: `What driftless's generic ARM provider calls for ${specs.length} activated generated kinds: read, write, delete and their list* functions.`,
    Actions: actions,
    NotActions: [],
    DataActions: [],
    NotDataActions: [],
    AssignableScopes: [...assignableScopes],
  };
}
