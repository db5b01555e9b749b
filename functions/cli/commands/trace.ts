// `driftless trace`: a claim or managed resource and everything below it, as `crossplane beta trace`.
import type { Command } from "commander";
import { Kube } from "../../../shared/kube/client.ts";
import { UsageError } from "../../../shared/ops/errors.ts";
import { findKind, type NamespaceFlags, parseKindName, wantsNamespaced } from "../../../shared/ops/kinds.ts";
import { notReady, traceObject } from "../../../shared/ops/trace.ts";
import {
  addressable,
  type CliContext,
  EXIT,
  namespaceIn,
  namespaceOptions,
  outputOption,
  registry,
} from "../common.ts";
import { printObject, stdout, traceText } from "../output.ts";

type TraceOutput = "default" | "wide" | "json" | "yaml";

export function registerTrace(program: Command, cli: CliContext): void {
  const trace = program
    .command("trace")
    .description(
      "show a claim or managed resource as a tree: the managed resources it binds or references, their ProviderConfigs and connection Secrets, READY / SYNCED / status per line; exit 1 if any is not Ready",
    )
    .argument(
      "<kind/name>",
      "e.g. dbinstance/app-db, queue.sqs.aws.m/orders -n team-a, queue.claims/orders -n shop (a claim: its .claims group)",
    )
    .addOption(outputOption(["default", "wide", "json", "yaml"], "default"));
  namespaceOptions(trace)
    .addHelpText(
      "after",
      "\nChildren of a managed resource: the resources its *Ref/*Refs fields name (recursively), its\nProviderConfig and its connection Secret; of a claim: the managed resources it is bound to and its\nSecret. Secrets are shown by name and keys only. -o wide prints whole messages and EXTERNAL-NAME.\nExit 0 when every line is Ready, 1 when one is not (or the object does not exist): usable in CI.",
    )
    .action(async (ref: string, opts: NamespaceFlags & { output: TraceOutput }) => {
      const { kind, name } = parseKindName(ref);
      const { managedKinds } = await registry();
      const { claimKinds } = await import("../../../shared/api/claims/claims.ts");
      const managed = managedKinds.map((k) => k.definition);
      // Claim kinds share names with managed kinds (Queue, Bucket): a claim is named by its .claims group.
      const byGroup = kind.toLowerCase().includes(".claims");
      const type = byGroup
        ? findKind(kind, claimKinds, { namespaced: true })
        : findKind(kind, await addressable(), { namespaced: wantsNamespaced(opts) });
      if (type.kind.endsWith("ProviderConfig"))
        throw new UsageError(
          "trace starts at a claim or a managed resource; see `driftless describe` for a ProviderConfig",
        );
      const { kc } = cli.kubeConfig();
      const namespace = namespaceIn(type, opts, kc);
      const tree = await traceObject(new Kube(kc), { managed, claims: claimKinds }, type, name, namespace);
      if (opts.output === "json" || opts.output === "yaml") printObject(stdout, opts.output, tree);
      else stdout.write(traceText(tree, { wide: opts.output === "wide" }));
      if (notReady(tree).length > 0) process.exitCode = EXIT.failure;
    });
}
