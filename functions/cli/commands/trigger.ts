// `driftless trigger`: reconcile one object now.
import type { Command } from "commander";
import { Annotations } from "../../../shared/api/meta.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { NotFoundError } from "../../../shared/ops/errors.ts";
import { findKind, parseKindName } from "../../../shared/ops/kinds.ts";
import { addressable, type CliContext, openProducer, queueSettings } from "../common.ts";
import { stdout } from "../output.ts";

/**
 * The annotation `trigger` sets: Crossplane's reconcile request. The change rings the doorbell (or the
 * forwarder's watch), the sweep also enqueues an unhandled request, and the reconcile echoes the value in
 * status.lastHandledReconcileAt. The former driftless.dev/reconcile-requested-at is still honoured.
 */
export const TRIGGER_ANNOTATION = Annotations.reconcileRequestedAt;

export function registerTrigger(program: Command, cli: CliContext): void {
  program
    .command("trigger")
    .description("reconcile a managed resource (or ProviderConfig) now")
    .argument("<kind/name>", "e.g. queue/orders")
    .option("--queue", "send a manual message to the configured queue instead of annotating the object")
    .addHelpText(
      "after",
      `\nBy default sets the ${TRIGGER_ANNOTATION} annotation: the doorbell or the forwarder sees the change and\nenqueues the key, whichever queue the deployment uses; once handled, status.lastHandledReconcileAt\nequals the value printed. --queue sends { reason: "manual" } to DRIFTLESS_QUEUE directly.`,
    )
    .action(async (ref: string, opts: { queue?: boolean }) => {
      const { kind, name } = parseKindName(ref);
      const type = findKind(kind, await addressable());
      const { cfg, kc } = cli.kubeConfig();
      const kube = new Kube(kc);
      const obj = await kube.get(type, name);
      if (!obj) throw new NotFoundError(`${type.kind}.${type.group} "${name}" not found`);
      if (opts.queue) {
        const sink = await openProducer(queueSettings(cfg));
        const { makeMessage } = await import("../../../shared/queue/message.ts");
        try {
          const res = await sink.producer.send([
            makeMessage(
              { apiVersion: `${type.group}/${type.version}`, kind: type.kind, name, uid: obj.metadata.uid },
              "manual",
            ),
          ]);
          if (res.sent !== 1)
            throw new Error(`the queue refused the message: ${res.failed[0]?.error.message}`);
        } finally {
          await sink.close();
        }
        stdout.write(`${type.kind}/${name} sent to ${sink.target}\n`);
        return;
      }
      const token = new Date().toISOString();
      await kube.patch(type, name, { metadata: { annotations: { [TRIGGER_ANNOTATION]: token } } });
      stdout.write(`${type.kind}/${name} queued for reconcile (${TRIGGER_ANNOTATION}: ${token})\n`);
    });
}
