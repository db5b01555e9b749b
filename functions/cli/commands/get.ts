// `driftless get`: list managed resources with their conditions.
import type { Command } from "commander";
import type { ResourceType } from "../../../shared/api/meta.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { NotFoundError, UsageError } from "../../../shared/ops/errors.ts";
import { listAll, summaryRow } from "../../../shared/ops/inspect.ts";
import { findKind, type NamespaceFlags, wantsNamespaced } from "../../../shared/ops/kinds.ts";
import {
  addressable,
  type CliContext,
  managedTypes,
  namespaceIn,
  namespaceOptions,
  outputOption,
} from "../common.ts";
import { type Output, printList, stdout } from "../output.ts";

const COLUMNS = ["KIND", "NAME", "READY", "SYNCED", "EXTERNAL-NAME", "LAST-CHANGE", "AGE", "MESSAGE"];
const PC_COLUMNS = ["KIND", "NAME", "READY", "USERS", "SOURCE", "LAST-CHANGE", "AGE", "MESSAGE"];
const isProviderConfig = (t: ResourceType) =>
  t.kind === "ProviderConfig" || t.kind === "ClusterProviderConfig";

/** One object as `listAll` returns it (apiVersion and kind set), or NotFoundError. */
async function getOne(kube: Kube, type: ResourceType | undefined, name: string, namespace?: string) {
  if (!type) throw new UsageError("name a kind to get an object by name");
  const o = await kube.get<Awaited<ReturnType<typeof listAll>>[number]>(type, name, namespace);
  if (!o)
    throw new NotFoundError(
      `${type.kind}.${type.group} "${name}" not found${namespace ? ` in namespace ${namespace}` : ""}`,
    );
  return [{ ...o, apiVersion: `${type.group}/${type.version}`, kind: type.kind }];
}

export function registerGet(program: Command, cli: CliContext): void {
  const get = program
    .command("get")
    .description(
      "list managed resources: READY, SYNCED, EXTERNAL-NAME, last change, AGE and the message to read",
    )
    .argument(
      "[kind]",
      "a kind: queue, queues, queue.sqs.aws, queue.sqs.aws.m, providerconfig.aws, clusterproviderconfig.aws … (default: every managed kind)",
    )
    .argument("[name]", "only this object")
    .addOption(outputOption())
    .option("-l, --selector <labels>", "only objects matching this label selector");
  namespaceOptions(get, { all: true })
    .addHelpText(
      "after",
      "\nA kind in both shapes (queue, providerconfig.aws) means the cluster-scoped one; with -n or -A, or\nnamed with its .m group (queue.sqs.aws.m), the namespaced one. Without a kind: every cluster-scoped\nkind and the namespaced kinds of the context's namespace (else default); -n: the namespaced kinds of\nthat namespace only; -A: everything, in every namespace.",
    )
    .action(
      async (
        kindRef: string | undefined,
        name: string | undefined,
        opts: NamespaceFlags & { output: Output; selector?: string },
      ) => {
        if (name && opts.allNamespaces)
          throw new UsageError("-A/--all-namespaces lists; to get one object by name give -n NAMESPACE");
        const types = kindRef
          ? [findKind(kindRef, await addressable(), { namespaced: wantsNamespaced(opts) })]
          : (await managedTypes()).filter((t) => t.namespaced || !opts.namespace);
        const { kc } = cli.kubeConfig();
        const kube = new Kube(kc);
        // With no kind, -n only narrows the namespaced kinds; checking the first namespaced one is enough.
        const namespace = namespaceIn(
          types.find((t) => t.namespaced) ?? (types[0] as ResourceType),
          opts,
          kc,
        );
        const items = name
          ? await getOne(kube, types[0], name, namespace)
          : await listAll(kube, types, {
              ...(opts.selector ? { labelSelector: opts.selector } : {}),
              ...(namespace ? { namespace } : {}),
            });
        const now = Date.now();
        const isPc = types.every(isProviderConfig);
        const rows = items.map((i) => summaryRow(i, now));
        const columns = isPc ? PC_COLUMNS : COLUMNS;
        const namespaced = types.every((t) => t.namespaced) || rows.some((r) => r.NAMESPACE);
        printList(
          stdout,
          opts.output,
          isPc ? rows.map((r) => ({ ...r, USERS: r.SYNCED ?? "", SOURCE: r["EXTERNAL-NAME"] ?? "" })) : rows,
          name ? items[0] : items,
          namespaced ? ["NAMESPACE", ...columns] : columns,
        );
      },
    );
}
