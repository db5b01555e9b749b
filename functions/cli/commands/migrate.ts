// `driftless migrate`: Crossplane managed-resource YAML → driftless YAML that adopts the same resources.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { parseAllDocuments, stringify } from "yaml";
import { NotFoundError } from "../../../shared/ops/errors.ts";
import { type MigrateIssue, migrate, supportedSources } from "../../../shared/ops/migrate.ts";
import { EXIT, outputOption } from "../common.ts";
import { Progress, stderr, stdout } from "../output.ts";

export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .description(
      "convert Crossplane (Upbound provider) managed-resource YAML into driftless YAML that adopts the same cloud resources",
    )
    .argument("<paths...>", "YAML files or directories of them; - reads standard input")
    .option("--out <file>", "write the driftless YAML here instead of standard output")
    .option(
      "--allow-dropped",
      "exit 0 even when fields driftless does not manage were left out (they are still listed)",
    )
    .addOption(outputOption(["yaml", "json"], "yaml"))
    .addHelpText(
      "after",
      `\nEvery resource gets managementPolicies: ["Observe"]: driftless first only imports what exists (nothing is\ncreated, changed or deleted). Widen the policies once it reports Synced. The report (stderr) lists every\nfield or object that was not carried over; exit 1 if any.\n\nSupported:\n${supportedSources()
        .map((s) => `  ${s.from} → ${s.to}`)
        .join("\n")}\n\nSee docs/migrating-from-crossplane.md.`,
    )
    .action(
      async (paths: string[], opts: { out?: string; allowDropped?: boolean; output: "yaml" | "json" }) => {
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
        const result = migrate(docs);
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

        for (const i of issues) {
          const mark = i.severity === "note" ? "note" : i.severity === "dropped" ? "DROPPED" : "ERROR";
          stderr.write(`${mark.padEnd(8)}${i.source}: ${i.message}\n`);
        }
        const errors = issues.filter((i) => i.severity === "error").length;
        const dropped = issues.filter((i) => i.severity === "dropped").length;
        stderr.write(
          `\nmigrated ${result.objects.length} object(s)${opts.out ? ` to ${opts.out}` : ""}; ${errors} not migrated, ${dropped} field(s) left out, ${issues.length - errors - dropped} note(s)\n`,
        );
        if (errors > 0 || (dropped > 0 && !opts.allowDropped)) process.exitCode = EXIT.failure;
      },
    );
}

/** Files named on the command line; a directory stands for its *.yaml / *.yml files (sorted). */
function expandPaths(paths: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    if (p === "-") {
      out.push(p);
      continue;
    }
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(p);
    } catch {
      throw new NotFoundError(`${p}: no such file or directory`);
    }
    if (st.isDirectory()) {
      out.push(
        ...readdirSync(p)
          .filter((f) => /\.ya?ml$/.test(f))
          .sort()
          .map((f) => join(p, f)),
      );
    } else out.push(p);
  }
  return out;
}
