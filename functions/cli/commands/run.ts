// `driftless run`: forwarder, in-memory queue, workers and drift sweep in one process.
import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { isGeneratedGroup } from "../../../shared/api/generated-catalog.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { createLogger } from "../../../shared/log.ts";
import { UsageError } from "../../../shared/ops/errors.ts";
import { rateLimitOf } from "../../config.ts";
import {
  applyCrds,
  type CliContext,
  collect,
  loadAppClusters,
  parseInteger,
  registry,
  untilSignal,
  waitForCrds,
} from "../common.ts";
import { activationPlan } from "./crds.ts";

/**
 * With --no-crds someone else installs the CRDs (a chart, GitOps, `npm start` alongside): each kind is watched
 * once its CRD is served; after this long the ones still missing are retried with backoff (named in /readyz).
 */
const CRD_WAIT_MS = 120_000;

export function registerRun(program: Command, cli: CliContext): void {
  program
    .command("run")
    .description(
      "run forwarder (or the doorbell), in-memory queue, workers and drift sweep in one process against the kubeconfig's cluster",
    )
    .option(
      "--workers <n>",
      "reconciles running at once (default DRIFTLESS_WORKERS)",
      parseInteger("--workers", 1, 256),
    )
    .option(
      "--no-crds",
      "do not install or update the CRDs at start; watch each kind as soon as someone else has installed its CRD (after 2 min, retry the missing ones with backoff)",
    )
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
    .option(
      "--doorbell",
      "no forwarder: serve the admission doorbell over HTTPS and apply its webhook configuration (deleted again on stop); needs DRIFTLESS_DOORBELL_SECRET and the --doorbell-cert/-key/-ca files",
    )
    .option("--doorbell-listen <host:port>", "where the doorbell listens", "127.0.0.1:9443")
    .option(
      "--doorbell-cert <pem>",
      "the doorbell's serving certificate (valid for the host the API server calls)",
    )
    .option("--doorbell-key <pem>", "its private key")
    .option("--doorbell-ca <pem>", "the CA that signs it: the webhook configuration's caBundle")
    .option(
      "--doorbell-url <base>",
      "the URL the API server calls, when not https://<listen> (a proxy, a tunnel)",
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
        doorbell?: boolean;
        doorbellListen: string;
        doorbellCert?: string;
        doorbellKey?: string;
        doorbellCa?: string;
        doorbellUrl?: string;
      }) => {
        // App teams' kubeconfigs are checked before anything starts: a refused one is a usage error.
        const appClusters = await loadAppClusters(opts.appCluster ?? [], opts.appClusterLocalFiles ?? []);
        const { cfg, kc } = cli.kubeConfig();
        const doorbell = opts.doorbell
          ? await doorbellOptions(opts, cfg.DRIFTLESS_DOORBELL_SECRET)
          : undefined;
        const logger = createLogger({ level: cfg.LOG_LEVEL });
        // Listen before starting: a SIGTERM during start-up still stops cleanly.
        const signalled = untilSignal();
        const [
          { managedKinds, providerConfigKinds },
          { startRun },
          { startRunProviders },
          policiesOps,
          generated,
          { KubeEventRecorder },
        ] = await Promise.all([
          registry(),
          import("../../../shared/pipeline/run.ts"),
          import("../../../shared/ops/provider-health.ts"),
          import("../../../shared/ops/activation-policy.ts"),
          import("../../../shared/providers/generated.ts"),
          import("../../../shared/kube/events.ts"),
        ]);
        const kube = new Kube(kc);
        const handWritten = managedKinds.filter((k) => !isGeneratedGroup(k.definition.group));
        /**
         * What this process serves: the activated hand-written kinds (DRIFTLESS_ACTIVATE; default all) and
         * the generated kinds (AWS, Azure, Google) DRIFTLESS_ACTIVATE or an activation policy in the
         * cluster names. Read again every sweep interval: a kind activated later is served without a restart.
         */
        const served = async () => {
          const policies = await policiesOps.readActivationPolicies(kube);
          const plan = await activationPlan({ policyPatterns: policies.patterns });
          const active = new Set(plan.install.map((c) => c.metadata.name));
          const patterns = [...(cfg.DRIFTLESS_ACTIVATE ?? []), ...policies.patterns];
          const all = [...handWritten, ...generated.generatedProvidersFor(patterns)];
          const kinds = all.filter((k) => active.has(`${k.definition.plural}.${k.definition.group}`));
          const names = kinds.map((k) => `${k.definition.plural}.${k.definition.group}`);
          return {
            plan,
            kinds,
            policies,
            generated: kinds
              .filter((k) => isGeneratedGroup(k.definition.group))
              .map((k) => `${k.definition.plural}.${k.definition.group}`)
              .sort(),
            names: new Set(names),
          };
        };
        let current = await served();
        let whenServed: ((type: { plural: string; group: string }) => Promise<void> | undefined) | undefined;
        let crdsServed: Promise<void> | undefined;
        if (opts.crds) await applyCrds(kc, current.plan.install);
        else {
          // Someone installs the CRDs beside us (`npm start`): start now, and watch each kind as soon as its
          // own CRD is served rather than after all of them.
          const pending = new Map(
            current.plan.install.map((c) => {
              let release = () => {};
              const served = new Promise<void>((r) => {
                release = r;
              });
              return [c.metadata.name, { served, release }] as const;
            }),
          );
          whenServed = (type) => pending.get(`${type.plural}.${type.group}`)?.served;
          crdsServed = waitForCrds(kc, [...pending.keys()], CRD_WAIT_MS, (name) => {
            pending.get(name)?.release();
            pending.delete(name);
          }).then((missing) => {
            if (missing.length > 0)
              logger.warn(
                { missing: missing.slice(0, 20), count: missing.length },
                `CRDs not established after ${CRD_WAIT_MS / 1000} s; watching them anyway (/readyz names the kinds not watched)`,
              );
            // Not served in time: their watches start and retry with backoff, as for any missing CRD.
            for (const p of pending.values()) p.release();
            pending.clear();
          });
        }
        const workers = opts.workers ?? cfg.DRIFTLESS_WORKERS;
        const selector = opts.selector ?? cfg.DRIFTLESS_LABEL_SELECTOR;
        const start = async (kinds: typeof current.kinds) => {
          const running = await startRun({
            kubeConfig: kc,
            logger,
            kinds,
            providerConfigKinds,
            workers,
            pollIntervalMs: cfg.DRIFTLESS_POLL_INTERVAL,
            sweepIntervalMs: cfg.DRIFTLESS_SWEEP_INTERVAL,
            maxPollIntervalMs: cfg.DRIFTLESS_MAX_POLL_INTERVAL,
            minPollIntervalMs: cfg.DRIFTLESS_MIN_POLL_INTERVAL,
            skipDefaultTags: cfg.DRIFTLESS_SKIP_DEFAULT_TAGS,
            sweepBatch: cfg.DRIFTLESS_SWEEP_BATCH,
            sweepIndex: cfg.DRIFTLESS_SWEEP_INDEX,
            // One process: the whole limit, whatever DRIFTLESS_MAX_INSTANCES says.
            rateLimit: rateLimitOf(cfg).rateLimit,
            secretRefNamespaces: cfg.DRIFTLESS_SECRET_REF_NAMESPACES,
            ambientIdentityNamespaces: cfg.DRIFTLESS_AMBIENT_IDENTITY_NAMESPACES,
            ...(opts.metrics ? { metricsPort: opts.metricsPort ?? cfg.DRIFTLESS_METRICS_PORT } : {}),
            ...(selector ? { labelSelector: selector } : {}),
            ...(whenServed ? { whenServed } : {}),
            ...(appClusters.length > 0 ? { appClusters } : {}),
            ...(doorbell ? { doorbell } : {}),
          });
          logger.info(
            { kinds: kinds.length, workers, metricsPort: running.metricsPort },
            "driftless run started",
          );
          // The Provider objects and their health checks need their own CRDs: once every CRD is served.
          const started = (crdsServed ?? Promise.resolve())
            .then(() =>
              startRunProviders({
                kube: running.kube,
                kinds,
                providerConfigKinds,
                labelSelector: selector,
                logger,
                deadLettered: () => running.queue.stats().deadLettered,
              }),
            )
            .catch((err: unknown) => {
              logger.error({ error: (err as Error).message }, "cannot start the provider health checks");
              return { stop: async () => {} };
            });
          return { running, providers: { stop: async () => (await started).stop() } };
        };
        let serving = await start(current.kinds);
        const events = new KubeEventRecorder(kube);
        // Each sweep interval: the activation policies again; a changed set of generated kinds restarts
        // the pipeline in this process (in-flight reconciles finish first), so it is served within a sweep.
        const activation = async () => {
          const next = await served();
          await policiesOps.recordActivated(kube, next.policies.own, generated.generatedCatalogs());
          if (next.generated.join() !== current.generated.join()) {
            if (opts.crds) await applyCrds(kc, next.plan.install);
            logger.info(
              {
                activated: next.generated.filter((n) => !current.names.has(n)),
                deactivated: current.generated.filter((n) => !next.names.has(n)),
              },
              "activation changed: serving the generated kinds now activated",
            );
            await serving.providers.stop();
            await serving.running.stop();
            serving = await start(next.kinds);
          }
          current = next;
          await policiesOps.warnUnserved(
            kube,
            current.names,
            events,
            selector ? { labelSelector: selector } : {},
          );
        };
        let checking: Promise<void> | undefined;
        const tick = () => {
          checking ??= activation()
            .catch((err: unknown) =>
              logger.error({ error: (err as Error).message }, "activation check failed"),
            )
            .finally(() => {
              checking = undefined;
            });
        };
        const timer = setInterval(tick, cfg.DRIFTLESS_SWEEP_INTERVAL);
        timer.unref();
        tick();
        // The activation policies' own CRDs may come with the others: read them again once all are served.
        void crdsServed?.then(tick);
        const signal = await signalled;
        logger.info({ signal }, "shutting down: finishing in-flight reconciles");
        clearInterval(timer);
        await checking;
        await serving.providers.stop();
        await serving.running.stop();
        logger.info({}, "stopped");
      },
    );
}

/** The doorbell's files and address, checked before anything starts (a missing file is a usage error). */
async function doorbellOptions(
  opts: {
    doorbellListen: string;
    doorbellCert?: string;
    doorbellKey?: string;
    doorbellCa?: string;
    doorbellUrl?: string;
  },
  secret: string | undefined,
) {
  if (!secret) throw new UsageError("--doorbell needs DRIFTLESS_DOORBELL_SECRET (openssl rand -hex 32)");
  const m = /^(.+):(\d{1,5})$/.exec(opts.doorbellListen);
  if (!m?.[1] || !m[2] || Number(m[2]) > 65535)
    throw new UsageError(`--doorbell-listen: expected host:port, got "${opts.doorbellListen}"`);
  const read = async (flag: string, path: string | undefined) => {
    if (!path) throw new UsageError(`--doorbell needs ${flag}`);
    try {
      return await readFile(path, "utf8");
    } catch (err) {
      throw new UsageError(`${flag}: cannot read ${path}: ${(err as Error).message}`);
    }
  };
  const [cert, key, ca] = await Promise.all([
    read("--doorbell-cert", opts.doorbellCert),
    read("--doorbell-key", opts.doorbellKey),
    read("--doorbell-ca", opts.doorbellCa),
  ]);
  const base = opts.doorbellUrl?.replace(/\/+$/, "");
  return {
    secret,
    cert,
    key,
    host: m[1],
    port: Number(m[2]),
    webhook: {
      caBundlePem: ca,
      ...(base ? { url: `${base}/${secret}/admit` } : {}),
    },
  };
}
