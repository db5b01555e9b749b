// `driftless crds print|apply`: the CRDs driftless serves.
import type { Command } from "commander";
import { stringify } from "yaml";
import { allCrds, applyCrds, type CliContext } from "../common.ts";
import { Progress, stdout } from "../output.ts";

export function registerCrds(program: Command, cli: CliContext): void {
  const crds = program.command("crds").description("print or apply the CRDs driftless serves");
  crds
    .command("print")
    .description("print the generated CRDs as YAML (for kubectl apply -f - or GitOps)")
    .action(async () => {
      stdout.write((await allCrds()).map((c) => stringify(c)).join("---\n"));
    });
  crds
    .command("apply")
    .description("create or update the CRDs in the cluster and wait until they are served")
    .action(async () => {
      const { kc } = cli.kubeConfig();
      const list = await allCrds();
      const progress = new Progress();
      progress.update(`applying ${list.length} CRDs …`, true);
      try {
        await applyCrds(kc, list);
      } finally {
        progress.done();
      }
      stdout.write(`applied ${list.length} CRDs\n`);
    });
}
