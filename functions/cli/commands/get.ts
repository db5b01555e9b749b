// `driftless get`: list managed resources with their conditions.
import type { Command } from "commander";
import type { ResourceType } from "../../../shared/api/meta.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { NotFoundError, UsageError } from "../../../shared/ops/errors.ts";
import { listAll, summaryRow } from "../../../shared/ops/inspect.ts";
import { findKind } from "../../../shared/ops/kinds.ts";
import { addressable, type CliContext, managedTypes, outputOption } from "../common.ts";
import { type Output, printList, stdout } from "../output.ts";

/** One object as `listAll` returns it (apiVersion and kind set), or NotFoundError. */
async function getOne(kube: Kube, type: ResourceType | undefined, name: string) {
  if (!type) throw new UsageError("name a kind to get an object by name");
  const o = await kube.get<Awaited<ReturnType<typeof listAll>>[number]>(type, name);
  if (!o) throw new NotFoundError(`${type.kind}.${type.group} "${name}" not found`);
  return [{ ...o, apiVersion: `${type.group}/${type.version}`, kind: type.kind }];
}

export function registerGet(program: Command, cli: CliContext): void {
  program
    .command("get")
    .description(
      "list managed resources: READY, SYNCED, EXTERNAL-NAME, last change, AGE and the message to read",
    )
    .argument(
      "[kind]",
      "a kind: queue, queues, queue.sqs.aws, providerconfig.aws … (default: every managed kind)",
    )
    .argument("[name]", "only this object")
    .addOption(outputOption())
    .option("-l, --selector <labels>", "only objects matching this label selector")
    .action(
      async (
        kindRef: string | undefined,
        name: string | undefined,
        opts: { output: Output; selector?: string },
      ) => {
        const types = kindRef ? [findKind(kindRef, await addressable())] : await managedTypes();
        const { kc } = cli.kubeConfig();
        const kube = new Kube(kc);
        const items = name
          ? await getOne(kube, types[0], name)
          : await listAll(kube, types, opts.selector ? { labelSelector: opts.selector } : {});
        const now = Date.now();
        const columns = ["KIND", "NAME", "READY", "SYNCED", "EXTERNAL-NAME", "LAST-CHANGE", "AGE", "MESSAGE"];
        const isPc = types.every((t) => t.kind === "ProviderConfig");
        const rows = items.map((i) => summaryRow(i, now));
        printList(
          stdout,
          opts.output,
          isPc ? rows.map((r) => ({ ...r, USERS: r.SYNCED ?? "", SOURCE: r["EXTERNAL-NAME"] ?? "" })) : rows,
          name ? items[0] : items,
          isPc ? ["KIND", "NAME", "READY", "USERS", "SOURCE", "LAST-CHANGE", "AGE", "MESSAGE"] : columns,
        );
      },
    );
}
