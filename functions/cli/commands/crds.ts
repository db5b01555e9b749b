// `driftless crds print|apply`: the CRDs driftless serves, or only the activated managed kinds'.
import type { Command } from "commander";
import { stringify } from "yaml";
import { isGeneratedGroup } from "../../../shared/api/generated-catalog.ts";
import type { ManagedKindDef } from "../../../shared/api/managed.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { type CrdLike, planActivation, pruneInactive } from "../../../shared/ops/activation.ts";
import { UsageError } from "../../../shared/ops/errors.ts";
import { allCrds, applyCrds, type CliContext, collect, config, registry } from "../common.ts";
import { Progress, stderr, stdout } from "../output.ts";

/** A generated kind's CRD, with the rule of which activation patterns select it. */
type GeneratedCrd = CrdLike & { selectedBy: (pattern: string) => boolean };
/**
 * `azure:<rp>.<kind>` names generated Azure kinds only: for the hand-written CRDs' globs it becomes a glob no
 * hand-written CRD name can match (they never say `azure.gen`), so it neither fails nor selects one.
 */
const handWrittenGlob = (p: string) =>
  p.trim().toLowerCase().startsWith("azure:") ? `${p.trim().slice(6)}.azure.gen` : p;

interface ActivationOpts {
  activate?: string[];
  /** The cluster's activation policies' patterns: they add generated kinds (shared/ops/activation-policy.ts). */
  policyPatterns?: readonly string[];
}

/**
 * The generated CRDs split by the activation list (--activate, else DRIFTLESS_ACTIVATE; none: all), the
 * generated AWS kinds by that list and the activation policies' patterns together.
 */
export async function activationPlan(opts: ActivationOpts) {
  const patterns = opts.activate ?? config().DRIFTLESS_ACTIVATE;
  const { managedKinds } = await registry();
  const managed = new Set(managedKinds.map((k) => `${k.definition.plural}.${k.definition.group}`));
  // Generated kinds (Cloud Control, Google's protos, ARM) are never in allCrds() nor in "everything": only
  // those the patterns name are built, the list's and the cluster's activation policies' together
  // (shared/ops/activation-policy.ts).
  const named = [...(patterns ?? []), ...(opts.policyPatterns ?? [])];
  const generated = [
    ...(await awsccCrds(named)),
    ...(await googleCrds(named)),
    ...(await azureGenCrds(named)),
  ];
  const crds = ((await allCrds()) as unknown as CrdLike[]).filter((c) => !isGeneratedGroup(c.spec.group));
  try {
    const globs = patterns?.map(handWrittenGlob);
    const plan = planActivation(crds, globs, (c) => managed.has(c.metadata.name));
    const original = new Map(globs?.map((g, i) => [g, patterns?.[i] ?? g]));
    plan.unmatched = plan.unmatched
      .map((g) => original.get(g) ?? g)
      .filter((p) => !generated.some((c) => c.selectedBy(p)));
    // The selection rule rode along only to match patterns: not printed or applied.
    for (const c of generated) {
      const { selectedBy: _, ...crd } = c;
      plan.install.push(crd as CrdLike);
    }
    for (const p of plan.unmatched)
      stderr.write(`warning: activation pattern "${p}" matches no managed kind\n`);
    return plan;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/**
 * Both shapes' CRDs of the generated kinds the patterns select, each with its selection rule (one rule per
 * generated cloud: `selects(pattern, crdName, entry)`).
 */
async function selectedCrds<E>(
  patterns: readonly string[],
  entries: readonly E[],
  defOf: (e: E) => ManagedKindDef,
  selects: (pattern: string, crdName: string, e: E) => boolean,
): Promise<GeneratedCrd[]> {
  const [{ managedCrd }, { namespacedVariantOf }] = await Promise.all([
    import("../../../shared/api/crd.ts"),
    import("../../../shared/api/managed.ts"),
  ]);
  return entries.flatMap((e) => {
    const def = defOf(e);
    return [def, namespacedVariantOf(def)]
      .map((d) => managedCrd(d))
      .filter((c) => patterns.some((p) => selects(p, c.metadata.name, e)))
      .map((c) =>
        Object.assign(c as unknown as CrdLike, {
          selectedBy: (p: string) => selects(p, c.metadata.name, e),
        }),
      );
  });
}

/** The catalog, or the UsageError that says how to generate it. */
function loaded<T>(load: () => T): T {
  try {
    return load();
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** The CRDs of the generated AWS kinds (either shape) the patterns select; none without patterns. */
async function awsccCrds(patterns: readonly string[] | undefined): Promise<GeneratedCrd[]> {
  if (!patterns || patterns.length === 0) return [];
  const [catalogs, { awsccKindOf }] = await Promise.all([
    import("../../../shared/api/awscc/catalog.ts"),
    import("../../../shared/api/awscc/kind.ts"),
  ]);
  let catalog: ReturnType<typeof catalogs.loadAwsccCatalog>;
  try {
    catalog = catalogs.loadAwsccCatalog();
  } catch (err) {
    // Asked for by name and not generated: say how to generate; otherwise only hand-written kinds exist.
    if (patterns.some((p) => p.toLowerCase().includes("awscc"))) throw new UsageError((err as Error).message);
    return [];
  }
  return selectedCrds(
    patterns,
    catalogs.activatedAwsccEntries(patterns, catalog),
    (e) => awsccKindOf(catalogs.loadAwsccSpec(e)),
    catalogs.awsccPatternSelects,
  );
}

/** The CRDs of the generated Google kinds (either shape) the patterns select; none without patterns. */
async function googleCrds(patterns: readonly string[]): Promise<GeneratedCrd[]> {
  if (!patterns.some((p) => p.toLowerCase().includes("googleapis"))) return [];
  const [catalogs, { googleKindOf }] = await Promise.all([
    import("../../../shared/api/googleapis/catalog.ts"),
    import("../../../shared/api/googleapis/kind.ts"),
  ]);
  const catalog = loaded(() => catalogs.loadGoogleCatalog());
  return selectedCrds(
    patterns,
    catalogs.activatedGoogleEntries(patterns, catalog),
    (e) => googleKindOf(catalogs.loadGoogleSpec(e)),
    catalogs.googlePatternSelects,
  );
}

/** The CRDs of the generated Azure kinds (either shape) the patterns select; none without patterns. */
async function azureGenCrds(patterns: readonly string[]): Promise<GeneratedCrd[]> {
  const named = (p: string) => p.toLowerCase().startsWith("azure:") || p.toLowerCase().includes("azure.gen");
  if (!patterns.some(named)) return [];
  const [catalogs, { azureGenKindOf }] = await Promise.all([
    import("../../../shared/api/azure-gen/catalog.ts"),
    import("../../../shared/api/azure-gen/kind.ts"),
  ]);
  const catalog = loaded(() => catalogs.loadAzureCatalog());
  return selectedCrds(
    patterns,
    catalogs.activatedAzureEntries(patterns, catalog),
    (e) => azureGenKindOf(catalogs.loadAzureSpec(e)),
    catalogs.azureGenPatternSelects,
  );
}

const activateOption = (c: Command) =>
  c.option(
    "--activate <glob>",
    "install only the managed kinds whose CRD name matches (e.g. 'queues.sqs.aws.driftless.dev', '*.gcp.driftless.dev', generated AWS kinds by service: 'dynamodb.*', 'dynamodb.table' — see docs/awscc.md; generated Google kinds: 'run.googleapis.service', 'compute.googleapis.*' — see docs/gcp-generated.md; generated Azure kinds: 'azure:storage.storageaccount', 'azure:network.*' — see docs/azure-generated.md); repeatable; default DRIFTLESS_ACTIVATE, else all. ProviderConfigs, claims and classes are always installed",
    collect,
  );

export function registerCrds(program: Command, cli: CliContext): void {
  const crds = program.command("crds").description("print or apply the CRDs driftless serves");
  activateOption(crds.command("print"))
    .description("print the generated CRDs as YAML (for kubectl apply -f - or GitOps)")
    .action(async (opts: ActivationOpts) => {
      const { install } = await activationPlan(opts);
      stdout.write(install.map((c) => stringify(c)).join("---\n"));
    });
  activateOption(crds.command("apply"))
    .description("create or update the CRDs in the cluster and wait until they are served")
    .option(
      "--prune",
      "also delete the CRDs of managed kinds that are not activated — only those with no objects left",
    )
    .action(async (opts: ActivationOpts & { prune?: boolean }) => {
      const { kc } = cli.kubeConfig();
      // The cluster's activation policies add the generated kinds they name (none before the first apply).
      const { readActivationPolicies } = await import("../../../shared/ops/activation-policy.ts");
      const policies = await readActivationPolicies(new Kube(kc));
      const { install, inactive } = await activationPlan({ ...opts, policyPatterns: policies.patterns });
      const progress = new Progress();
      progress.update(`applying ${install.length} CRDs …`, true);
      try {
        await applyCrds(kc, install);
      } finally {
        progress.done();
      }
      stdout.write(`applied ${install.length} CRDs\n`);
      if (!opts.prune) return;
      const pruned = await pruneInactive(new Kube(kc), inactive);
      for (const p of pruned) {
        if (p.result === "deleted") stdout.write(`deactivated ${p.name}\n`);
        if (p.result === "kept")
          stdout.write(`kept ${p.name}: objects of it still exist (delete them first to deactivate it)\n`);
      }
    });
}
