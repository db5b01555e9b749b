// `driftless sweep`: one drift sweep now, into the configured queue.
import type { Command } from "commander";
import { createLogger } from "../../../shared/log.ts";
import type { SweepError, SweepResult } from "../../../shared/pipeline/sweep.ts";
import {
  type CliContext,
  claimTypes,
  logQueueEvents,
  managedTypes,
  openProducer,
  outputOption,
  providerConfigTypes,
  queueSettings,
} from "../common.ts";
import { type Output, Progress, printObject, stdout } from "../output.ts";

export function registerSweep(program: Command, cli: CliContext): void {
  program
    .command("sweep")
    .description(
      "run one drift sweep now: list every managed resource and enqueue the due ones into the configured queue",
    )
    .option("--all", "enqueue every resource, not only those whose poll interval is due")
    .option("-l, --selector <labels>", "only objects matching this label selector")
    .addOption(outputOption(["table", "json"]))
    .addHelpText(
      "after",
      "\nNeeds a shared queue (DRIFTLESS_QUEUE=sqs or pubsub): the memory queue lives inside `driftless run`.\nShows progress on a terminal; prints how many objects were listed and enqueued.",
    )
    .action(async (opts: { all?: boolean; selector?: string; output: Output }) => {
      const { cfg, kc } = cli.kubeConfig();
      const logger = createLogger({
        level: cfg.LOG_LEVEL === "info" ? "warn" : cfg.LOG_LEVEL,
        name: "driftless-sweep",
      });
      const sink = await openProducer(queueSettings(cfg), logQueueEvents(logger));
      const [{ sweepNow }, { SweepError }] = await Promise.all([
        import("../../../shared/ops/sweep.ts"),
        import("../../../shared/pipeline/sweep.ts"),
      ]);
      const progress = new Progress();
      let result: SweepResult;
      let failed: SweepError | undefined;
      try {
        result = await sweepNow({
          kubeConfig: kc,
          types: [...(await managedTypes()), ...(await providerConfigTypes()), ...(await claimTypes(cfg))],
          sink: sink.producer,
          scheduleMs: cfg.DRIFTLESS_SWEEP_INTERVAL,
          defaultPollMs: cfg.DRIFTLESS_POLL_INTERVAL,
          maxPollMs: cfg.DRIFTLESS_MAX_POLL_INTERVAL,
          minPollMs: cfg.DRIFTLESS_MIN_POLL_INTERVAL,
          batch: cfg.DRIFTLESS_SWEEP_BATCH,
          ...(opts.all ? { all: true } : {}),
          ...(opts.selector ? { labelSelector: opts.selector } : {}),
          logger,
          onProgress: (p) =>
            progress.update(
              `sweeping ${p.kindsStarted}/${p.kinds} kinds: ${p.listed.toLocaleString("en")} listed, ${p.enqueued.toLocaleString("en")} enqueued`,
            ),
        });
      } catch (err) {
        if (!(err instanceof SweepError)) throw err;
        failed = err;
        result = err.result;
      } finally {
        progress.done();
        await sink.close();
      }
      if (opts.output === "json") printObject(stdout, "json", { target: sink.target, ...result });
      else {
        stdout.write(
          `listed ${result.listed}, enqueued ${result.enqueued} into ${sink.target} in ${result.durationMs} ms` +
            ` (${result.attention} need attention, ${result.paused} paused${result.sendFailures ? `, ${result.sendFailures} refused by the queue` : ""})\n`,
        );
        if (result.missingKinds.length)
          stdout.write(`CRDs not installed (skipped): ${result.missingKinds.join(", ")}\n`);
      }
      if (failed) throw failed;
      if (result.sendFailures > 0)
        throw new Error(`${result.sendFailures} messages were refused by the queue`);
    });
}
