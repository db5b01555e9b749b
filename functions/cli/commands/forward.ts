// `driftless forward`: watch every managed kind and forward keys to the configured queue.
import type { Command } from "commander";
import type { ResourceType } from "../../../shared/api/meta.ts";
import { createLogger } from "../../../shared/log.ts";
import { UsageError } from "../../../shared/ops/errors.ts";
import {
  type CliContext,
  claimTypes,
  logQueueEvents,
  openProducer,
  queueSettings,
  registry,
  untilSignal,
} from "../common.ts";

export function registerForward(program: Command, cli: CliContext): void {
  program
    .command("forward")
    .description(
      "watch every managed kind and forward keys to the configured queue (DRIFTLESS_QUEUE=sqs|pubsub)",
    )
    .option("--clouds <list>", "only these clouds' kinds, comma-separated: aws,gcp,azure (default: all)")
    .option("-l, --selector <labels>", "only objects matching this label selector (sharding)")
    .addHelpText(
      "after",
      "\nStops on SIGTERM or SIGINT after sending the keys still waiting (exit 0). The serverless deployment runs\nthe same forwarder as an in-cluster Deployment (functions/forwarder.ts).",
    )
    .action(async (opts: { clouds?: string; selector?: string }) => {
      const { cfg, kc } = cli.kubeConfig();
      const logger = createLogger({ level: cfg.LOG_LEVEL, name: "driftless-forwarder" });
      const signalled = untilSignal();
      const [{ managedKinds, providerConfigKinds }, { Forwarder }] = await Promise.all([
        registry(),
        import("../../../shared/pipeline/forwarder.ts"),
      ]);
      const clouds = opts.clouds?.split(",").map((c) => c.trim());
      const known = new Set(providerConfigKinds.map((k) => k.cloud));
      const unknown = clouds?.filter((c) => !known.has(c)) ?? [];
      if (unknown.length)
        throw new UsageError(`unknown cloud(s) ${unknown.join(", ")}; known: ${[...known].join(", ")}`);
      const types: ResourceType[] = [
        ...managedKinds.map((k) => k.definition).filter((d) => !clouds || clouds.includes(d.cloud)),
        ...providerConfigKinds.filter((k) => !clouds || clouds.includes(k.cloud)).map((k) => k.type),
        ...(await claimTypes(cfg)),
      ];
      const sink = await openProducer(queueSettings(cfg), logQueueEvents(logger));
      const forwarder = new Forwarder({
        kube: kc,
        types,
        sink: sink.producer,
        logger,
        ...(opts.selector ? { labelSelector: opts.selector } : {}),
      });
      await forwarder.start();
      logger.info({ target: sink.target, kinds: types.length }, "forwarding");
      const signal = await signalled;
      logger.info({ signal }, "shutting down: sending pending keys");
      await forwarder.stop();
      await sink.close();
      const s = forwarder.stats();
      logger.info({ forwarded: s.forwarded, dropped: s.dropped, events: s.events }, "stopped");
    });
}
