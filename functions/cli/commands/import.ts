// `driftless import`: what exists in the account, subscription or project a ProviderConfig reaches, written
// as Observe-only managed resources (shared/ops/import.ts), skipping what driftless already manages.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Command, Option } from "commander";
import { stringify } from "yaml";
import { Kube } from "../../../shared/kube/client.ts";
import { UsageError } from "../../../shared/ops/errors.ts";
import { MAX_IMPORT_DEPTH, MAX_IMPORT_PARENTS } from "../../../shared/ops/import-limits.ts";
import { type CliContext, registry } from "../common.ts";
import { stdout } from "../output.ts";

export function registerImport(program: Command, cli: CliContext): void {
  program
    .command("import")
    .description(
      "list what exists in the cloud a ProviderConfig reaches and write it as Observe-only managed resources, skipping what driftless already manages",
    )
    .requiredOption(
      "--provider-config <name>",
      "the (cluster-scoped) ProviderConfig whose account, subscription or project is listed",
    )
    .requiredOption(
      "--kinds <patterns>",
      "comma-separated <service>.<kind> globs, e.g. 'ec2.*', 'sqs.queue,s3.bucket', 'resources.resourcegroup', 'pubsub.topic', 'logs.loggroup'",
    )
    .requiredOption("-o, --out <dir>", "directory to write one YAML file per resource into")
    .addOption(
      new Option(
        "--parents <source>",
        "a child type's parents: listed in the cloud, or the ones this ProviderConfig's managed resources hold",
      )
        .choices(["cloud", "managed"])
        .default("cloud"),
    )
    .option(
      "--parent <name>",
      "the parent a kind whose parent is a spec field is listed under: a generated Google Resource Manager kind's organizations/N, folders/N or projects/P, another generated Google kind's parent's full name",
    )
    .option(
      "--depth <n>",
      `walk down n levels (0 to ${MAX_IMPORT_DEPTH}): list the selected kinds whose parent is a spec field again under every resource found whose name fits their parent, level by level`,
      "0",
    )
    .addHelpText(
      "after",
      `
Each selected kind is listed with the cloud's own list calls: EC2 Describe* (VPC, Subnet, SecurityGroup),
SQS ListQueues, S3 ListBuckets, RDS DescribeDBInstances / DescribeDBSubnetGroups, Cloud Control
ListResources (generated AWS kinds, as DRIFTLESS_ACTIVATE selects them; a child type per parent), Azure Resource Manager lists
(ResourceGroup, VirtualNetwork, FlexibleServer, generated Azure kinds, resource group by resource group;
Subnet, FlexibleServerFirewallRule, FlexibleServerDatabase and generated child types per parent), List Containers of the
ProviderConfig's storage account, Pub/Sub ListTopics, Cloud SQL instances.list (and each running
instance's databases.list / users.list), Compute networks.list / globalAddresses.list, Service Networking
connections.list per network, Cloud Storage buckets.list and the generated Google kinds' list methods. A
child's name is unique only within its parent (a Cloud SQL database or user in its instance, a subnet in
its network), and an Azure resource's within its resource group: it is skipped only when a managed
resource names the same parent (and group), and written as <kind>-<group>-<parent>-<name>.yaml. A resource whose external name a managed resource of that kind already
holds (either shape, any namespace) is skipped. The rest is written to <dir>/<kind>-<name>.yaml
with managementPolicies: ["Observe"], the crossplane.io/external-name annotation and the fields that say
where it lives (region, location, resource group): applied, driftless only reads it (Ready, atProvider);
widen the policies to manage it. A selected kind that cannot be listed (a child type whose list needs its
parent, a kind without a list yet) is named on standard error with why. Nothing is created in the cluster or the cloud.
A generated AWS child type (Cloud Control) is listed level by level under its parents: with --parents cloud
(the default) every parent type is listed in the cloud first; with --parents managed the parents are the
managed resources of this ProviderConfig in the cluster (their external names and fields; no list of the
parent types, so children of a parent driftless does not manage are not found). A generated Google kind
whose parent is a spec field (Resource Manager's Folder, Project, TagKey, TagValue; a Data Catalog Entry, a
Dialogflow CX Flow and the like) is listed under --parent (without it, and unless --depth finds parents
for it, it is named as not listable):
what lies directly under that parent (a folder's folders and projects, an organization's or project's tag
keys, an entry group's entries), with the parent in forProvider as Google answers it. --depth n walks down:
after the first lists, each selected kind whose parent is a spec field is listed again under every resource
found (the --parent's children, and without --parent what the account-wide lists found) whose full name
fits its parent, then under what that found, n levels in all (at most ${MAX_IMPORT_DEPTH}; at most ${MAX_IMPORT_PARENTS}
parents listed under in one run). What a managed resource already holds is never written, and the walk goes
on below it. Standard output then says "walked <l> levels below <parent>: <k> lists under <p> parents" and,
where a bound stopped it, "not walked (--depth <n> reached): <count> parent(s): <names>" (or "(${MAX_IMPORT_PARENTS} parents reached)").`,
    )
    .action(
      async (opts: {
        providerConfig: string;
        kinds: string;
        out: string;
        parents: "cloud" | "managed";
        parent?: string;
        depth: string;
      }) => {
        const depth = Number(opts.depth);
        if (!/^\d+$/.test(opts.depth) || depth > MAX_IMPORT_DEPTH)
          throw new UsageError(`--depth ${opts.depth}: a whole number from 0 to ${MAX_IMPORT_DEPTH}`);
        const kinds = opts.kinds
          .split(",")
          .map((k) => k.trim())
          .filter(Boolean);
        if (kinds.length === 0) throw new UsageError("--kinds: at least one <service>.<kind> pattern");
        const [{ managedKinds }, { discover }] = await Promise.all([
          registry(),
          import("../../../shared/ops/import.ts"),
        ]);
        const { cfg, kc } = cli.kubeConfig();
        const result = await discover(new Kube(kc), managedKinds, {
          providerConfig: opts.providerConfig,
          kinds,
          parents: opts.parents,
          ...(opts.parent ? { parent: opts.parent } : {}),
          depth,
          secretRefNamespaces: cfg.DRIFTLESS_SECRET_REF_NAMESPACES,
          tenancy: { ambientIdentityNamespaces: cfg.DRIFTLESS_AMBIENT_IDENTITY_NAMESPACES },
        });
        if (result.kinds.length === 0 && result.unsupported.length === 0)
          throw new UsageError(`--kinds ${opts.kinds}: no cluster-scoped managed kind matches`);
        mkdirSync(opts.out, { recursive: true });
        for (const o of result.objects) {
          const file = join(opts.out, `${o.kind.toLowerCase()}-${o.metadata.name}.yaml`);
          writeFileSync(file, stringify(o));
        }
        for (const k of result.kinds)
          stdout.write(`${k.kind}: ${k.found} found, ${k.imported} written, ${k.managed} already managed\n`);
        const walk = result.walk;
        if (walk) {
          stdout.write(
            `walked ${plural(walk.levels, "level")} below ${opts.parent ?? "what was listed"}: ${plural(walk.lists, "list")} under ${plural(walk.parents, "parent")}\n`,
          );
          if (walk.bound)
            stdout.write(
              `not walked (${walk.bound === "depth" ? `--depth ${depth}` : `${MAX_IMPORT_PARENTS} parents`} reached): ${plural(walk.notWalked.length, "parent")}: ${walk.notWalked.join(", ")}\n`,
            );
        }
        for (const k of result.unsupported) process.stderr.write(`${k.kind}: not imported: ${k.reason}\n`);
      },
    );
}

/** `1 level`, `3 levels`. */
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
