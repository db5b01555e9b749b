// `driftless describe`: one managed resource with its conditions, Events, references and Secret keys.
import type { Command } from "commander";
import { Kube } from "../../../shared/kube/client.ts";
import { describeObject } from "../../../shared/ops/inspect.ts";
import { findKind, parseKindName } from "../../../shared/ops/kinds.ts";
import { addressable, type CliContext, outputOption } from "../common.ts";
import { describeText, type Output, printObject, stdout } from "../output.ts";

export function registerDescribe(program: Command, cli: CliContext): void {
  program
    .command("describe")
    .description(
      "show one managed resource: conditions, Events, annotations, references (resolved or not), connection Secret keys",
    )
    .argument("<kind/name>", "e.g. queue/orders, bucket.s3/logs, providerconfig.aws/default")
    .addOption(outputOption())
    .addHelpText("after", "\nConnection Secrets are shown by name and keys only: values are never read out.")
    .action(async (ref: string, opts: { output: Output }) => {
      const { kind, name } = parseKindName(ref);
      const type = findKind(kind, await addressable());
      const { kc } = cli.kubeConfig();
      const d = await describeObject(new Kube(kc), type, name);
      if (opts.output === "table") stdout.write(describeText(d));
      else printObject(stdout, opts.output, d);
    });
}
