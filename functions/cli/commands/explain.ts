// `driftless explain`: a kind's reference page — fields, immutability, references, connection-Secret keys,
// both shapes and an example — printed from the schemas, with no cluster. The generated AWS kinds
// (docs/awscc.md) have no checked-in page: this is where their documentation is read before activating one.
import type { Command } from "commander";
import type { ManagedKindDef } from "../../../shared/api/managed.ts";
import { UsageError } from "../../../shared/ops/errors.ts";
import { findKind } from "../../../shared/ops/kinds.ts";
import { type CliContext, registry } from "../common.ts";
import { stdout } from "../output.ts";

export function registerExplain(program: Command, _cli: CliContext): void {
  program
    .command("explain")
    .description(
      "print a managed kind's reference (fields, immutability, references, Secret keys, both shapes, an example); no cluster needed",
    )
    .argument(
      "<kind>",
      "a kind as get takes it (queue, queue.sqs.aws, dbinstance.rds), or a generated AWS kind (dynamodb.table, tables.dynamodb.awscc.driftless.dev), or a generated Google kind (run.googleapis.service, services.run.googleapis.driftless.dev)",
    )
    .action(async (ref: string) => {
      stdout.write(await explainKind(ref));
    });
}

/** The Markdown reference page of the kind `ref` names (hand-written first, then the generated AWS kinds). */
export async function explainKind(ref: string): Promise<string> {
  const [{ managedKinds }, { managedKindPage }] = await Promise.all([
    registry(),
    import("../../../shared/ops/kind-docs.ts"),
  ]);
  const defs = managedKinds.map((k) => k.definition);
  let def: ManagedKindDef | undefined;
  let notFound: unknown;
  try {
    def = findKind(ref, defs);
  } catch (err) {
    notFound = err;
  }
  const generated = def ? undefined : await generatedKind(ref);
  def ??= generated?.def;
  const azure = def ? undefined : await generatedAzureKind(ref);
  def ??= azure?.def;
  if (!def) {
    if (notFound instanceof UsageError)
      throw new UsageError(
        `${notFound.message}; or a generated AWS kind as <service>.<kind>, e.g. dynamodb.table${generated?.missing ? ` (${generated.missing})` : ""}`,
      );
    throw notFound;
  }
  // One page shows both shapes: a namespaced kind is explained on its cluster-scoped kind's page.
  const page = def.scope === "Namespaced" ? clusterScopedOf(def, defs) : def;
  // The page without its "generated, do not edit" marker (that is for the files in docs/kinds/).
  const text = managedKindPage(page).replace(/^<!--.*-->\n/, "");
  // A generated Azure kind also says which Azure role actions its reconciles call (docs/azure-generated.md).
  const roles = azure?.actions
    ? `\n## Azure role actions\n\n${azure.actions.map((a) => `- \`${a}\``).join("\n")}\n\nAssigned at \`${azure.scope}\`.\n`
    : "";
  return `${text}${roles}\n`;
}

function clusterScopedOf(def: ManagedKindDef, defs: readonly ManagedKindDef[]): ManagedKindDef {
  const group = def.group.replace(".m.", ".");
  return defs.find((d) => d.scope === "Cluster" && d.kind === def.kind && d.group === group) ?? def;
}

/** A generated Google kind by its alias (`run.googleapis.service`) or CRD name, if `ref` names exactly one. */
async function generatedGoogleKind(ref: string): Promise<{ def?: ManagedKindDef; missing?: string }> {
  const [catalogs, { googleKindOf }] = await Promise.all([
    import("../../../shared/api/googleapis/catalog.ts"),
    import("../../../shared/api/googleapis/kind.ts"),
  ]);
  let catalog: ReturnType<typeof catalogs.loadGoogleCatalog>;
  try {
    catalog = catalogs.loadGoogleCatalog();
  } catch (err) {
    if (err instanceof catalogs.GoogleNotGeneratedError) return { missing: err.message };
    throw err;
  }
  if (ref.includes("*")) throw new UsageError(`explain takes one kind, not a pattern: "${ref}"`);
  const hits = catalog.kinds.filter((e) => catalogs.googlePatternMatches(ref, e));
  if (hits.length > 1)
    throw new UsageError(
      `"${ref}" names ${hits.length} generated kinds: ${hits
        .slice(0, 8)
        .map((e) => `${e.group}/${e.kind}`)
        .join(", ")}`,
    );
  const [only] = hits;
  return only ? { def: googleKindOf(catalogs.loadGoogleSpec(only)) } : {};
}

/** A generated Azure kind by its alias (`azure:storage.storageaccount`) or CRD name (docs/azure-generated.md). */
async function generatedAzureKind(
  ref: string,
): Promise<{ def: ManagedKindDef; actions: string[]; scope: string } | undefined> {
  if (!/^azure:|azure\.gen/i.test(ref)) return undefined;
  const [
    { loadAzureCatalog, loadAzureSpec, azureGenPatternMatches },
    { azureGenKindOf },
    { azureRoleActions, azureRoleScopeOf },
  ] = await Promise.all([
    import("../../../shared/api/azure-gen/catalog.ts"),
    import("../../../shared/api/azure-gen/kind.ts"),
    import("../../../shared/api/azure-gen/role.ts"),
  ]);
  const hits = loadAzureCatalog().kinds.filter((e) => azureGenPatternMatches(ref, e));
  if (hits.length > 1) throw new UsageError(`"${ref}" names ${hits.length} generated Azure kinds`);
  const spec = hits[0] ? loadAzureSpec(hits[0]) : undefined;
  return spec
    ? { def: azureGenKindOf(spec), actions: azureRoleActions(spec), scope: azureRoleScopeOf(spec) }
    : undefined;
}

/** A generated AWS kind by its alias (`dynamodb.table`) or CRD name, if `ref` names exactly one. */
async function generatedKind(ref: string): Promise<{ def?: ManagedKindDef; missing?: string }> {
  if (ref.toLowerCase().includes("googleapis")) return generatedGoogleKind(ref);
  const [{ loadAwsccCatalog, loadAwsccSpec, awsccPatternMatches, AwsccNotGeneratedError }, { awsccKindOf }] =
    await Promise.all([
      import("../../../shared/api/awscc/catalog.ts"),
      import("../../../shared/api/awscc/kind.ts"),
    ]);
  let catalog: ReturnType<typeof loadAwsccCatalog>;
  try {
    catalog = loadAwsccCatalog();
  } catch (err) {
    if (err instanceof AwsccNotGeneratedError) return { missing: err.message };
    throw err;
  }
  if (ref.includes("*")) throw new UsageError(`explain takes one kind, not a pattern: "${ref}"`);
  const hits = catalog.kinds.filter((e) => awsccPatternMatches(ref, e));
  if (hits.length > 1)
    throw new UsageError(
      `"${ref}" names ${hits.length} generated kinds: ${hits
        .slice(0, 8)
        .map((e) => `${e.group}/${e.kind}`)
        .join(", ")}${hits.length > 8 ? ", …" : ""}`,
    );
  const [only] = hits;
  return only ? { def: awsccKindOf(loadAwsccSpec(only)) } : {};
}
