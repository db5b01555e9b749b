// `driftless run`: forwarder, in-memory queue, workers and drift sweep in one process.
import type { Command } from "commander";
import { createLogger } from "../../../shared/log.ts";
import {
  allCrds,
  applyCrds,
  type CliContext,
  collect,
  loadAppClusters,
  parseInteger,
  registry,
  untilSignal,
} from "../common.ts";

export function registerRun(program: Command, cli: CliContext): void {
  program
    .command("run")
    .description(
      "run forwarder, in-memory queue, workers and drift sweep in one process against the kubeconfig's cluster",
    )
    .option(
      "--workers <n>",
      "reconciles running at once (default DRIFTLESS_WORKERS)",
      parseInteger("--workers", 1, 256),
    )
    .option("--no-crds", "do not install or update the CRDs at start")
    .option(
      "--metrics-port <port>",
      "serve /metrics, /healthz and /readyz on this port; 0 picks a free one (default DRIFTLESS_METRICS_PORT)",
      parseInteger("--metrics-port", 0, 65535),
    )
    .option("--no-metrics", "do not serve /metrics, /healthz and /readyz")
    .option(
      "-l, --selector <labels>",
      "only watch and sweep objects matching this label selector (sharding; default DRIFTLESS_LABEL_SELECTOR)",
    )
    .option(
      "--app-cluster <name=kubeconfig>",
      "serve the claims of app cluster NAME (bound with driftless bind --name NAME) through this kubeconfig; repeatable",
      collect,
    )
    .option(
      "--app-cluster-local-files <name>",
      "let app cluster NAME's kubeconfig name local files (tokenFile, client-certificate, client-key, certificate-authority paths); repeatable",
      collect,
    )
    .addHelpText(
      "after",
      "\nStops on SIGTERM or SIGINT after finishing the reconciles in flight (exit 0). Logs are JSON lines on stdout.",
    )
    .action(
      async (opts: {
        workers?: number;
        crds: boolean;
        metricsPort?: number;
        metrics: boolean;
        selector?: string;
        appCluster?: string[];
        appClusterLocalFiles?: string[];
      }) => {
        // App teams' kubeconfigs are checked before anything starts: a refused one is a usage error.
        const appClusters = await loadAppClusters(opts.appCluster ?? [], opts.appClusterLocalFiles ?? []);
        const { cfg, kc } = cli.kubeConfig();
        const logger = createLogger({ level: cfg.LOG_LEVEL });
        // Listen before starting: a SIGTERM during start-up still stops cleanly.
        const signalled = untilSignal();
        const [{ managedKinds, providerConfigKinds }, { startRun }] = await Promise.all([
          registry(),
          import("../../../shared/pipeline/run.ts"),
        ]);
        if (opts.crds) await applyCrds(kc, await allCrds());
        const workers = opts.workers ?? cfg.DRIFTLESS_WORKERS;
        const selector = opts.selector ?? cfg.DRIFTLESS_LABEL_SELECTOR;
        const running = await startRun({
          kubeConfig: kc,
          logger,
          kinds: managedKinds,
          providerConfigKinds,
          workers,
          pollIntervalMs: cfg.DRIFTLESS_POLL_INTERVAL,
          sweepIntervalMs: cfg.DRIFTLESS_SWEEP_INTERVAL,
          maxPollIntervalMs: cfg.DRIFTLESS_MAX_POLL_INTERVAL,
          sweepBatch: cfg.DRIFTLESS_SWEEP_BATCH,
          secretRefNamespaces: cfg.DRIFTLESS_SECRET_REF_NAMESPACES,
          ...(opts.metrics ? { metricsPort: opts.metricsPort ?? cfg.DRIFTLESS_METRICS_PORT } : {}),
          ...(selector ? { labelSelector: selector } : {}),
          ...(appClusters.length > 0 ? { appClusters } : {}),
        });
        logger.info(
          { kinds: managedKinds.length, workers, metricsPort: running.metricsPort },
          "driftless run started",
        );
        const signal = await signalled;
        logger.info({ signal }, "shutting down: finishing in-flight reconciles");
        await running.stop();
        logger.info({}, "stopped");
      },
    );
}
