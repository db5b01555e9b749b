// `driftless orphans`: the leak finder (shared/ops/orphans.ts) — cloud resources tagged for a ProviderConfig
// whose managed resource no longer exists. Reads only; for scripts, "orphans found" (1) and "could not
// tell" (2: the search failed, or bad arguments) are distinct exit codes.
import { type Command, Option } from "commander";
import type { TagSearch } from "../../../shared/api/tagged.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { CommandFailedError, UsageError } from "../../../shared/ops/errors.ts";
import type { Cloud } from "../../../shared/ops/orphans.ts";
import { type CliContext, EXIT, outputOption, registry } from "../common.ts";
import { type Output, printObject, stdout, table } from "../output.ts";

/** Orphans were found (the answer a script acts on). */
export const EXIT_ORPHANS = 1;
/** No answer: the search failed (the cloud, the credentials, the cluster) or the arguments were wrong. */
export const EXIT_SEARCH_FAILED = 2;

export function registerOrphans(program: Command, cli: CliContext): void {
  program
    .command("orphans")
    .description(
      "list cloud resources tagged for a ProviderConfig whose managed resource no longer exists (exit code 1 when any, 2 when the search failed)",
    )
    .requiredOption(
      "--provider-config <name>",
      "the (cluster-scoped) ProviderConfig whose account is searched",
    )
    .addOption(
      new Option("--cloud <cloud>", "the ProviderConfig's cloud, when the name exists in several").choices([
        "aws",
        "gcp",
        "azure",
      ]),
    )
    .option("--region <region>", "AWS: the region searched (default the ProviderConfig's)")
    .addOption(outputOption())
    .addHelpText(
      "after",
      `
Searches what the ProviderConfig's credentials reach for resources carrying Crossplane's default tags
(crossplane-providerconfig=<name>, with crossplane-kind, crossplane-name, crossplane-namespace) or
driftless's ownership tag (driftless.dev/managed-resource-uid), by the cloud's tag search: AWS the Resource
Groups Tagging API (GetResources, one region); Azure Resource Manager's Resource Groups - List and
Resources - List of the ProviderConfig's subscription, filtered by tag (each resource's tags read with Tags -
Get At Scope); Google Cloud Asset Inventory's searchAllResources in the ProviderConfig's project (labels;
its index follows writes within minutes; spec.endpoint.cloudAsset overrides its URL).
A resource whose managed resource (kind, name, namespace; or uid) does not exist in
this cluster is listed; tags of kinds driftless does not serve are counted, not judged. Nothing is deleted:
each row says how to adopt the resource (driftless import writes it as an Observe-only managed resource;
with managementPolicies ["*"], deleting that object deletes the cloud resource).
Exit code 0 when none is found, 1 when orphans are found, 2 when there is no answer: the search failed
(the cloud refused or failed, the credentials or the cluster could not be read) or the arguments were
wrong. A script can tell "orphans exist" (1) from "could not tell" (2).`,
    )
    .action(async (opts: { providerConfig: string; cloud?: Cloud; region?: string; output: Output }) => {
      try {
        await orphans(cli, opts);
      } catch (err) {
        if (err instanceof UsageError) throw err; // exit 2 as every usage error
        throw new CommandFailedError(`the search failed: ${(err as Error).message}`, EXIT_SEARCH_FAILED, {
          cause: err,
        });
      }
    });
}

async function orphans(
  cli: CliContext,
  opts: { providerConfig: string; cloud?: Cloud; region?: string; output: Output },
): Promise<void> {
  const { cfg, kc } = cli.kubeConfig();
  const kube = new Kube(kc);
  const { cloudOf, findOrphans } = await import("../../../shared/ops/orphans.ts");
  // The ProviderConfig first: a wrong name is told before every cloud's SDK is loaded.
  const cloud = await cloudOf(kube, opts.providerConfig, opts.cloud);
  const [{ managedKinds }, search] = await Promise.all([registry(), tagSearchOf(cloud)]);
  const report = await findOrphans(
    kube,
    managedKinds,
    { [cloud]: search },
    {
      providerConfig: opts.providerConfig,
      cloud,
      region: opts.region,
      secretRefNamespaces: cfg.DRIFTLESS_SECRET_REF_NAMESPACES,
      tenancy: { ambientIdentityNamespaces: cfg.DRIFTLESS_AMBIENT_IDENTITY_NAMESPACES },
    },
  );
  if (opts.output === "table") {
    if (report.orphans.length > 0)
      stdout.write(
        table(
          report.orphans.map((o) => ({
            TYPE: o.type,
            ID: o.id,
            "MANAGED RESOURCE (GONE)": o.managedResource,
            ADOPT: o.adopt,
          })),
        ),
      );
    stdout.write(
      `${report.orphans.length} orphan(s) among ${report.searched} resource(s) tagged for ${report.cloud} ProviderConfig "${report.providerConfig}"${report.foreign ? ` (${report.foreign} of kinds driftless does not serve, not judged)` : ""}\n`,
    );
  } else printObject(stdout, opts.output, report);
  process.exitCode = report.orphans.length > 0 ? EXIT_ORPHANS : EXIT.ok;
}

/** A cloud's tag search, loaded with the command (its SDK is heavy). */
async function tagSearchOf(cloud: Cloud): Promise<TagSearch> {
  if (cloud === "aws") return (await import("../../../shared/providers/aws/tagged.ts")).searchAwsTags;
  if (cloud === "azure") return (await import("../../../shared/providers/azure/tagged.ts")).searchAzureTags;
  return (await import("../../../shared/providers/gcp/tagged.ts")).searchGcpTags;
}
