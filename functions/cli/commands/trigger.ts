// `driftless trigger`: reconcile one object now.
import type { Command } from "commander";
import { Annotations } from "../../../shared/api/meta.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { NotFoundError, UsageError } from "../../../shared/ops/errors.ts";
import type { NamespaceFlags } from "../../../shared/ops/kinds.ts";
import { parseDuration } from "../../../shared/reconciler/compare.ts";
import {
  addressedObject,
  type CliContext,
  namespaceIn,
  namespaceOptions,
  openProducer,
  queueSettings,
  registry,
} from "../common.ts";
import { stdout } from "../output.ts";

/**
 * The annotation `trigger` sets: Crossplane's reconcile request. The change rings the doorbell (or the
 * forwarder's watch), the sweep also enqueues an unhandled request, and the reconcile echoes the value in
 * status.lastHandledReconcileAt. The former driftless.dev/reconcile-requested-at is still honoured.
 */
export const TRIGGER_ANNOTATION = Annotations.reconcileRequestedAt;

export function registerTrigger(program: Command, cli: CliContext): void {
  const trigger = program
    .command("trigger")
    .description("reconcile a managed resource (or ProviderConfig) now")
    .argument("<kind/name>", "e.g. queue/orders, queue.sqs.aws.m/orders -n team-a");
  namespaceOptions(trigger)
    .option("--queue", "send a manual message to the configured queue instead of annotating the object")
    .option(
      "--wait <duration>",
      "wait until the reconcile has handled the request (status.lastHandledReconcileAt), e.g. 30s; managed resources only",
    )
    .addHelpText(
      "after",
      `\nBy default sets the ${TRIGGER_ANNOTATION} annotation: the doorbell or the forwarder sees the change and\nenqueues the key, whichever queue the deployment uses; once handled, status.lastHandledReconcileAt\nequals the value printed. --queue sends { reason: "manual" } to DRIFTLESS_QUEUE directly.`,
    )
    .action(async (ref: string, opts: NamespaceFlags & { queue?: boolean; wait?: string }) => {
      const { type, name } = await addressedObject(ref, opts);
      const waitMs = opts.wait === undefined ? undefined : parseDuration(opts.wait);
      if (opts.wait !== undefined) {
        if (waitMs === undefined)
          throw new UsageError(`--wait: not a duration: "${opts.wait}" (e.g. 30s, 2m)`);
        if (opts.queue) throw new UsageError("--wait goes with the annotation, not with --queue");
        const managed = (await registry()).managedKinds.some(
          (k) => k.definition.group === type.group && k.definition.kind === type.kind,
        );
        if (!managed)
          throw new UsageError(`--wait works for managed resources; ${type.kind}.${type.group} is not one`);
      }
      const { cfg, kc } = cli.kubeConfig();
      const kube = new Kube(kc);
      const namespace = namespaceIn(type, opts, kc);
      const inNs = namespace ? ` in namespace ${namespace}` : "";
      const what = `${type.kind}/${name}${namespace ? ` (namespace ${namespace})` : ""}`;
      const obj = await kube.get(type, name, namespace);
      if (!obj) throw new NotFoundError(`${type.kind}.${type.group} "${name}" not found${inNs}`);
      if (opts.queue) {
        const sink = await openProducer(queueSettings(cfg));
        const { makeMessage } = await import("../../../shared/queue/message.ts");
        try {
          const res = await sink.producer.send([
            makeMessage(
              {
                apiVersion: `${type.group}/${type.version}`,
                kind: type.kind,
                ...(namespace ? { namespace } : {}),
                name,
                uid: obj.metadata.uid,
              },
              "manual",
            ),
          ]);
          if (res.sent !== 1)
            throw new Error(`the queue refused the message: ${res.failed[0]?.error.message}`);
        } finally {
          await sink.close();
        }
        stdout.write(`${what} sent to ${sink.target}\n`);
        return;
      }
      const token = new Date().toISOString();
      await kube.patch(
        type,
        name,
        { metadata: { annotations: { [TRIGGER_ANNOTATION]: token } } },
        namespace ? { namespace } : {},
      );
      stdout.write(`${what} queued for reconcile (${TRIGGER_ANNOTATION}: ${token})\n`);
      if (waitMs === undefined) return;
      const deadline = Date.now() + waitMs;
      for (;;) {
        const now = await kube.get<{
          metadata: { name: string };
          status?: { lastHandledReconcileAt?: string };
        }>(type, name, namespace);
        if (!now) throw new NotFoundError(`${type.kind}.${type.group} "${name}" is gone${inNs}`);
        if (now.status?.lastHandledReconcileAt === token) break;
        if (Date.now() >= deadline)
          throw new Error(
            `not handled within ${opts.wait}: nothing reconciled ${what} — is the doorbell, a forwarder or driftless run serving this cluster? (driftless doctor)`,
          );
        await new Promise((res) => setTimeout(res, 250));
      }
      stdout.write(`${what} reconciled\n`);
    });
}
