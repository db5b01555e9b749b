// `driftless migrate`: Crossplane managed-resource YAML (v1 cluster-scoped, v2 namespaced) → driftless YAML
// that adopts the same resources; driftless cluster-scoped YAML → its namespaced variants, with the plan.
import { readFileSync, writeFileSync } from "node:fs";
import { type Command, Option } from "commander";
import { parseAllDocuments, stringify } from "yaml";
import { UsageError } from "../../../shared/ops/errors.ts";
import {
  type MigrateIssue,
  type MigrateOptions,
  migrate,
  supportedSources,
} from "../../../shared/ops/migrate.ts";
import { generatedKinds } from "../../../shared/ops/migrate-generated.ts";
import { type ProviderConfigKindName, planSteps } from "../../../shared/ops/migrate-namespaced.ts";
import { loadUpjetFacts, upjetFactsFile } from "../../../shared/ops/migrate-upjet-facts.ts";
import { EXIT, expandPaths, managedTypes, outputOption } from "../common.ts";
import { Progress, stderr, stdout } from "../output.ts";

export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .description(
      "convert Crossplane (Upbound provider; v1 cluster-scoped or v2 namespaced) managed-resource YAML into driftless YAML that adopts the same cloud resources, or driftless cluster-scoped YAML into the namespaced shape",
    )
    .argument("<paths...>", "YAML files or directories of them; - reads standard input")
    .option("--out <file>", "write the driftless YAML here instead of standard output")
    .option(
      "--allow-dropped",
      "exit 0 even when fields driftless does not manage were left out (they are still listed)",
    )
    .option(
      "--namespaced",
      "write cluster-scoped input (Crossplane v1, driftless's own kinds) as namespaced .m. objects in --namespace",
    )
    .option(
      "--namespace <ns>",
      "the namespace of --namespaced output; also of Crossplane v2 objects that carry none",
    )
    .addOption(
      new Option(
        "--provider-config-kind <kind>",
        "with --namespaced: what the converted resources' providerConfigRef names (and ProviderConfigs become)",
      )
        .choices(["ClusterProviderConfig", "ProviderConfig"])
        .default("ClusterProviderConfig"),
    )
    .addOption(outputOption(["yaml", "json"], "yaml"))
    .addHelpText(
      "after",
      `\nEvery Crossplane resource gets managementPolicies: ["Observe"]: driftless first only imports what exists\n(nothing is created, changed or deleted). Widen the policies once it reports Synced. Crossplane v2 objects\n(.m. groups) become driftless's namespaced kinds in their own namespace. driftless cluster-scoped objects\n(with --namespaced) keep their policies, minus Delete when they orphaned; the plan printed after the report\nsays in which order to replace them. The report (stderr) lists every field or object that was not carried\nover (exit 1 if any; an object reported ERROR is not written) and what to do before applying (WARNING).\n\nSupported:\n${supportedSources()
        .map((s) => `  ${s.from} → ${s.to}`)
        .join("\n")}\n\nSee docs/migrating-from-crossplane.md.`,
    )
    .action(
      async (
        paths: string[],
        opts: {
          out?: string;
          allowDropped?: boolean;
          output: "yaml" | "json";
          namespaced?: boolean;
          namespace?: string;
          providerConfigKind: ProviderConfigKindName;
        },
      ) => {
        if (opts.namespaced && !opts.namespace) throw new UsageError("--namespaced needs --namespace <ns>");
        const migrateOpts: MigrateOptions = opts.namespaced
          ? {
              namespaced: { namespace: opts.namespace ?? "", providerConfigKind: opts.providerConfigKind },
              ...(opts.namespace ? { defaultNamespace: opts.namespace } : {}),
              // driftless's own objects may be of any registered kind (loaded only for --namespaced).
              kinds: (await managedTypes()).filter((d) => d.scope === "Cluster"),
            }
          : opts.namespace
            ? { defaultNamespace: opts.namespace }
            : {};
        // Upjet kinds without a hand-written twin → the generated kinds, where the facts say which.
        const factsFile = upjetFactsFile();
        if (factsFile) migrateOpts.generated = generatedKinds(loadUpjetFacts(factsFile));
        const files = expandPaths(paths);
        const progress = new Progress();
        const docs: unknown[] = [];
        const issues: MigrateIssue[] = [];
        files.forEach((file, i) => {
          progress.update(`reading ${i + 1}/${files.length}: ${file}`);
          const text = file === "-" ? readFileSync(0, "utf8") : readFileSync(file, "utf8");
          for (const doc of parseAllDocuments(text)) {
            if (doc.errors.length > 0) {
              issues.push({
                severity: "error",
                source: file,
                message: `invalid YAML: ${doc.errors[0]?.message}`,
              });
              continue;
            }
            docs.push(doc.toJS());
          }
        });
        progress.done();
        const result = migrate(docs, migrateOpts);
        issues.push(...result.issues);
        const text =
          opts.output === "json"
            ? `${JSON.stringify(
                result.objects.map((o) => o.object),
                null,
                2,
              )}\n`
            : result.objects.map((o) => `# migrated from ${o.source}\n${stringify(o.object)}`).join("---\n");
        if (opts.out) writeFileSync(opts.out, text);
        else stdout.write(text);

        const marks = { note: "note", warning: "WARNING", dropped: "DROPPED", error: "ERROR" } as const;
        for (const i of issues) stderr.write(`${marks[i.severity].padEnd(8)}${i.source}: ${i.message}\n`);
        const count = (s: MigrateIssue["severity"]) => issues.filter((i) => i.severity === s).length;
        // Objects, not lines: an object may have several errors, and an unreadable file is one more.
        const notMigrated = new Set(issues.filter((i) => i.severity === "error").map((i) => i.source)).size;
        const dropped = count("dropped");
        stderr.write(
          `\nmigrated ${result.objects.length} object(s)${opts.out ? ` to ${opts.out}` : ""}; ${notMigrated} not migrated, ${dropped} field(s) left out, ${count("warning")} warning(s), ${count("note")} note(s)\n`,
        );
        const plan = planSteps(result.moved, opts.namespace ?? "", opts.out ?? "<the YAML written above>");
        if (plan.length > 0) {
          stderr.write(
            "\nReplace the cluster-scoped objects in this order (the cloud resources are not touched):\n",
          );
          plan.forEach((step, n) => {
            stderr.write(`\n${n + 1}. ${step.title}\n`);
            for (const c of step.commands) stderr.write(`     ${c}\n`);
          });
        }
        if (notMigrated > 0 || (dropped > 0 && !opts.allowDropped)) process.exitCode = EXIT.failure;
      },
    );
}
