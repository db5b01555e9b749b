// `driftless describe`: one managed resource with its conditions, Events, references and Secret keys.
import type { Command } from "commander";
import { Kube } from "../../../shared/kube/client.ts";
import { describeObject } from "../../../shared/ops/inspect.ts";
import type { NamespaceFlags } from "../../../shared/ops/kinds.ts";
import { addressedObject, type CliContext, namespaceIn, namespaceOptions, outputOption } from "../common.ts";
import { describeText, type Output, printObject, stdout } from "../output.ts";

export function registerDescribe(program: Command, cli: CliContext): void {
  const describe = program
    .command("describe")
    .description(
      "show one managed resource: conditions, recent change log, Events, annotations, references (resolved or not), connection Secret keys",
    )
    .argument(
      "<kind/name>",
      "e.g. queue/orders, bucket.s3/logs, queue.sqs.aws.m/orders -n team-a, providerconfig.aws/default",
    )
    .addOption(outputOption());
  namespaceOptions(describe)
    .addHelpText(
      "after",
      "\nConnection Secrets are shown by name and keys only: values are never read out. A namespaced resource's\nSecret, references and Events are read from its own namespace. The change log is the object's ChangeLog\nEvents (each external create / update / delete with the cloud's request ids): as long as the API server\nkeeps Events (--event-ttl, 1 h by default); the functions' log lines keep every record.",
    )
    .action(async (ref: string, opts: NamespaceFlags & { output: Output }) => {
      const { type, name } = await addressedObject(ref, opts);
      const { kc } = cli.kubeConfig();
      const namespace = namespaceIn(type, opts, kc);
      const d = await describeObject(new Kube(kc), type, name, namespace);
      if (opts.output === "table") stdout.write(describeText(d));
      else printObject(stdout, opts.output, d);
    });
}
