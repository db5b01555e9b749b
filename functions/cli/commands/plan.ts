// `driftless plan`: what a reconcile of one managed resource would do now, without doing it.
import type { Command } from "commander";
import { Kube } from "../../../shared/kube/client.ts";
import { NotFoundError, UsageError } from "../../../shared/ops/errors.ts";
import type { NamespaceFlags } from "../../../shared/ops/kinds.ts";
import { ManagedReconciler, type Step, type Verdict } from "../../../shared/reconciler/reconciler.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import {
  addressedObject,
  type CliContext,
  namespaceIn,
  namespaceOptions,
  outputOption,
  registry,
} from "../common.ts";
import { type Output, printObject, stdout } from "../output.ts";

export function registerPlan(program: Command, cli: CliContext): void {
  const cmd = program
    .command("plan")
    .description(
      "show what a reconcile of a managed resource would do now — the same plan the reconcile and the batched drift check follow — writing nothing",
    )
    .argument("<kind/name>", "e.g. queue/orders, table.dynamodb.awscc/t1, queue.sqs.aws.m/orders -n team-a")
    .addOption(outputOption());
  namespaceOptions(cmd)
    .addHelpText(
      "after",
      "\nReads the object, its references' targets and the cloud (one observe) with the resource's ProviderConfig;\ncreates, updates, deletes and writes nothing. An empty plan means in sync. Connection details are shown by\nkey only.",
    )
    .action(async (ref: string, opts: NamespaceFlags & { output: Output }) => {
      const { type, name } = await addressedObject(ref, opts);
      const { managedKinds } = await registry();
      if (!managedKinds.some((k) => k.definition.group === type.group && k.definition.kind === type.kind))
        throw new UsageError(`plan works for managed resources; ${type.kind}.${type.group} is not one`);
      const { cfg, kc } = cli.kubeConfig();
      const namespace = namespaceIn(type, opts, kc);
      const engine = new ManagedReconciler(new Kube(kc), new KindRegistry(managedKinds), {
        secretRefNamespaces: cfg.DRIFTLESS_SECRET_REF_NAMESPACES,
        tenancy: { ambientIdentityNamespaces: cfg.DRIFTLESS_AMBIENT_IDENTITY_NAMESPACES },
      });
      const apiVersion = `${type.group}/${type.version}`;
      const simulated = await engine.simulate({
        apiVersion,
        kind: type.kind,
        name,
        ...(namespace ? { namespace } : {}),
      });
      if (simulated.verdict?.outcome === "gone")
        throw new NotFoundError(
          `${type.kind}.${type.group} "${name}" not found${namespace ? ` in namespace ${namespace}` : ""}`,
        );
      const lines = simulated.steps.map(stepText);
      if (opts.output === "table") stdout.write(planText(lines, simulated.verdict));
      else printObject(stdout, opts.output, { steps: lines, verdict: simulated.verdict });
    });
}

function planText(lines: string[], verdict: Verdict | undefined): string {
  const body = lines.length === 0 ? ["in sync: nothing to do"] : lines.map((l, i) => `${i + 1}. ${l}`);
  const after = verdict
    ? [
        `outcome: ${verdict.outcome}`,
        ...(verdict.requeueAfterMs !== undefined
          ? [`look again in ${Math.round(verdict.requeueAfterMs / 1000)}s`]
          : []),
        ...(verdict.pollAfterMs !== undefined
          ? [`next drift check in ${Math.round(verdict.pollAfterMs / 1000)}s`]
          : []),
      ]
    : [];
  return `${[...body, ...after].join("\n")}\n`;
}

/** One step in words; values of connection details and spec fields are never shown. */
export function stepText(step: Step): string {
  switch (step.do) {
    case "initialize":
      return `set ${Object.keys(step.patch.annotations ?? {}).join(", ")} (default external name)`;
    case "resolveReferences":
      return "resolve references";
    case "recordCreate":
      return `record ${Object.keys(step.annotations).join(", ")}`;
    case "meta": {
      const what = [
        ...(step.patch.finalizers ? ["add the finalizer"] : []),
        ...Object.keys(step.patch.labels ?? {}).map((k) => `label ${k}`),
        ...Object.keys(step.patch.annotations ?? {}).map((k) => `annotation ${k}`),
      ];
      return `write ${what.join(", ")}`;
    }
    case "publish":
      return `publish connection details (keys: ${Object.keys(step.details).sort().join(", ")})`;
    case "unpublish":
      return "delete the connection Secret";
    case "removeFinalizer":
      return "remove the finalizer";
    case "lateInitialize":
      return `late-initialize ${step.filled.join(", ")}`;
    case "create":
      return `CREATE the external resource${step.externalName ? ` ${step.externalName}` : ""}`;
    case "update":
      return `UPDATE the external resource: ${step.drift.join(", ") || "(the provider reports it out of date)"}`;
    case "delete":
      return `DELETE the external resource ${step.externalName}`;
    case "event":
      return `event ${step.type} ${step.reason}`;
    case "status":
      return `status: ${step.conditions.map((c) => `${c.type}=${c.status} ${c.reason}`).join(", ")} (${step.why})`;
    case "fail":
      return `refuse (${step.failure.reason}): ${step.failure.message}`;
  }
}
