#!/usr/bin/env node
// The `driftless` command line: an adapter over shared/ — parsing, printing and exit codes only.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Command, InvalidArgumentError, Option } from "commander";
import { parseAllDocuments, stringify } from "yaml";
import packageJson from "../../package.json" with { type: "json" };
import type { ResourceType } from "../../shared/api/meta.ts";
import { Kube } from "../../shared/kube/client.ts";
import { loadKubeConfig } from "../../shared/kube/config.ts";
import { createLogger, type Logger } from "../../shared/log.ts";
import type { DoctorCheck, GeneratedCrd } from "../../shared/ops/doctor.ts";
import { NotFoundError, UsageError } from "../../shared/ops/errors.ts";
import { describeObject, listAll, summaryRow } from "../../shared/ops/inspect.ts";
import { type Addressable, findKind, parseKindName } from "../../shared/ops/kinds.ts";
import { type MigrateIssue, migrate, supportedSources } from "../../shared/ops/migrate.ts";
import type { QueueSettings } from "../../shared/ops/queue.ts";
import type { SweepError, SweepResult } from "../../shared/pipeline/sweep.ts";
import type { QueueEventSink } from "../../shared/queue/port.ts";
import { Config, readConfig } from "../config.ts";
import {
  describeText,
  doctorLine,
  type Output,
  Progress,
  printList,
  printObject,
  stderr,
  stdout,
} from "./output.ts";

export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

export const EXIT_CODES_HELP = `
Exit codes:
  0  success
  1  failure: an operation or check failed, an object was not found, something was not migrated
  2  usage: bad arguments or options, unknown kind, invalid configuration (environment)`;

/** The annotation `trigger` sets; any annotation change makes the forwarder enqueue the key. */
export const TRIGGER_ANNOTATION = "driftless.dev/reconcile-requested-at";

// The kind registry loads every cloud SDK (over a second): commands load it, and other heavy modules,
// only when they need them, so `--help`, `migrate` and typos answer at once.
const registry = () => import("../../shared/providers/index.ts");
const managedTypes = async () => (await registry()).managedKinds.map((k) => k.definition);
const providerConfigTypes = async () => (await registry()).providerConfigKinds.map((k) => k.type);
/** Everything the commands address by KIND: managed kinds and the ProviderConfigs. */
const addressable = async (): Promise<Addressable[]> => [
  ...(await managedTypes()),
  ...(await providerConfigTypes()),
];
/** Claim and class kinds, forwarded and swept for the serverless functions unless DRIFTLESS_CLAIMS=false. */
const claimTypes = async (cfg: Config): Promise<ResourceType[]> =>
  cfg.DRIFTLESS_CLAIMS ? (await import("../../shared/claims/kinds.ts")).claimTypes() : [];
const allCrds = async () => (await import("../../shared/crds.ts")).allCrds();
const applyCrds = async (...a: Parameters<typeof import("../../shared/kube/crds.ts").applyCrds>) =>
  (await import("../../shared/kube/crds.ts")).applyCrds(...a);
const openProducer = async (s: QueueSettings, onEvent?: QueueEventSink) =>
  (await import("../../shared/ops/queue.ts")).openProducer(s, onEvent);
const logQueueEvents =
  (logger: Logger): QueueEventSink =>
  ({ level, msg, ...fields }) =>
    logger[level](fields, msg);

const outputOption = (choices = ["table", "json", "yaml"], def = "table") =>
  new Option("-o, --output <format>", "output format").choices(choices).default(def);

/** The typed config, read once at the edge; a bad value is a usage error naming the variable. */
function config(): Config {
  try {
    return readConfig();
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function queueSettings(cfg: Config): QueueSettings {
  return {
    queue: cfg.DRIFTLESS_QUEUE,
    sqsQueueUrl: cfg.DRIFTLESS_SQS_QUEUE_URL,
    sqsDlqUrl: cfg.DRIFTLESS_SQS_DLQ_URL,
    pubsubTopic: cfg.DRIFTLESS_PUBSUB_TOPIC,
    pubsubSubscription: cfg.DRIFTLESS_PUBSUB_SUBSCRIPTION,
    gcpProjectId: cfg.GCP_PROJECT_ID,
  };
}

const parseInteger = (name: string, min: number, max: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new InvalidArgumentError(`${name} must be an integer ${min}–${max}`);
  return n;
};

/**
 * App clusters' kubeconfigs (`NAME=KUBECONFIG`), read with the loader that runs no plugin and reads no
 * local file unless NAME is in `localFiles`; any refusal is a usage error naming the file and field.
 */
async function loadAppClusters(values: readonly string[], localFiles: readonly string[]) {
  const { loadAppClusterKubeConfig, parseAppClusterFlag } = await import(
    "../../shared/export/app-kubeconfig.ts"
  );
  try {
    const parsed = values.map(parseAppClusterFlag);
    const names = new Set(parsed.map((p) => p.name));
    if (names.size !== parsed.length) throw new Error("--app-cluster: each app cluster name once");
    const unknown = localFiles.filter((n) => !names.has(n));
    if (unknown.length > 0)
      throw new Error(`--app-cluster-local-files ${unknown.join(", ")}: no --app-cluster of that name`);
    return parsed.map((p) =>
      loadAppClusterKubeConfig(p.path, p.name, { allowLocalFiles: localFiles.includes(p.name) }),
    );
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** Repeatable options collect their values. */
const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/** Waits for SIGTERM or SIGINT; resolves with the signal's name. */
const untilSignal = () =>
  new Promise<string>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });

/** Help for variables whose schema in functions/config.ts has no description. */
const ENV_HELP: Record<string, string> = {
  LOG_LEVEL: "trace, debug, info (default), warn or error.",
  DRIFTLESS_QUEUE: "memory (default; `driftless run`), sqs or pubsub.",
  DRIFTLESS_SQS_QUEUE_URL: "The SQS queue (DRIFTLESS_QUEUE=sqs).",
  DRIFTLESS_SQS_DLQ_URL: "Its dead-letter queue (checked by doctor).",
  DRIFTLESS_PUBSUB_TOPIC: "The Pub/Sub topic (DRIFTLESS_QUEUE=pubsub).",
  DRIFTLESS_PUBSUB_SUBSCRIPTION: "Its subscription (checked by doctor).",
  GCP_PROJECT_ID: "Project of the Pub/Sub topic.",
  DRIFTLESS_WORKERS: "Reconciles at once in `driftless run` (default 8).",
  DRIFTLESS_POLL_INTERVAL: "Default drift-check interval per resource (default 5m).",
  DRIFTLESS_SWEEP_INTERVAL: "How often the drift sweep runs (default 1m).",
  DRIFTLESS_METRICS_PORT: "Port of /metrics, /healthz and /readyz of `driftless run` (default 9464).",
  DRIFTLESS_SECRET_REF_NAMESPACES:
    "Namespaces (comma list, * for any) a managed resource may read Secrets from besides its connection Secret's (default none).",
};

function environmentHelp(): string {
  const shape = Config.shape as Record<string, { description?: string }>;
  const lines = Object.entries(shape).map(([k, s]) =>
    `  ${k.padEnd(31)}${s.description ?? ENV_HELP[k] ?? ""}`.trimEnd(),
  );
  return `\nEnvironment (read once at start):\n${lines.join("\n")}`;
}

export function buildCli(): Command {
  const program = new Command("driftless")
    .description(
      "Serverless reconciler for Crossplane-style managed resources: keeps cloud resources (AWS, GCP, Azure) equal to the Kubernetes objects that describe them.",
    )
    .version(packageJson.version)
    .option("--kubeconfig <path>", "kubeconfig file (default: KUBECONFIG, in-cluster, ~/.kube/config)")
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ outputError: (str, write) => write(str) });

  const kubeConfig = () => {
    const cfg = config();
    const path = (program.opts() as { kubeconfig?: string }).kubeconfig ?? cfg.KUBECONFIG;
    return { cfg, kc: loadKubeConfig({ path, yaml: path ? undefined : cfg.DRIFTLESS_KUBECONFIG_YAML }) };
  };

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
        const { cfg, kc } = kubeConfig();
        const logger = createLogger({ level: cfg.LOG_LEVEL });
        // Listen before starting: a SIGTERM during start-up still stops cleanly.
        const signalled = untilSignal();
        const [{ managedKinds, providerConfigKinds }, { startRun }] = await Promise.all([
          registry(),
          import("../../shared/pipeline/run.ts"),
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
      const { cfg, kc } = kubeConfig();
      const logger = createLogger({ level: cfg.LOG_LEVEL, name: "driftless-forwarder" });
      const signalled = untilSignal();
      const [{ managedKinds, providerConfigKinds }, { Forwarder }] = await Promise.all([
        registry(),
        import("../../shared/pipeline/forwarder.ts"),
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
      const { cfg, kc } = kubeConfig();
      const logger = createLogger({
        level: cfg.LOG_LEVEL === "info" ? "warn" : cfg.LOG_LEVEL,
        name: "driftless-sweep",
      });
      const sink = await openProducer(queueSettings(cfg), logQueueEvents(logger));
      const [{ sweepNow }, { SweepError }] = await Promise.all([
        import("../../shared/ops/sweep.ts"),
        import("../../shared/pipeline/sweep.ts"),
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
        const { kc } = kubeConfig();
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

  program
    .command("describe")
    .description(
      "show one managed resource: conditions, Events, annotations, references (resolved or not), connection Secret keys",
    )
    .argument("<kind/name>", "e.g. queue/orders, bucket.s3/logs, providerconfig.aws/default")
    .addOption(outputOption())
    .addHelpText("after", "\nConnection Secrets are shown by name and keys only: values are never read out.")
    .action(async (ref: string, opts: { output: Output }) => {
      const { kind, name } = parseKindName(ref);
      const type = findKind(kind, await addressable());
      const { kc } = kubeConfig();
      const d = await describeObject(new Kube(kc), type, name);
      if (opts.output === "table") stdout.write(describeText(d));
      else printObject(stdout, opts.output, d);
    });

  program
    .command("trigger")
    .description("reconcile a managed resource (or ProviderConfig) now")
    .argument("<kind/name>", "e.g. queue/orders")
    .option("--queue", "send a manual message to the configured queue instead of annotating the object")
    .addHelpText(
      "after",
      `\nBy default sets the ${TRIGGER_ANNOTATION} annotation: the forwarder sees the change and enqueues the key,\nwhichever queue the deployment uses. --queue sends { reason: "manual" } to DRIFTLESS_QUEUE directly.`,
    )
    .action(async (ref: string, opts: { queue?: boolean }) => {
      const { kind, name } = parseKindName(ref);
      const type = findKind(kind, await addressable());
      const { cfg, kc } = kubeConfig();
      const kube = new Kube(kc);
      const obj = await kube.get(type, name);
      if (!obj) throw new NotFoundError(`${type.kind}.${type.group} "${name}" not found`);
      if (opts.queue) {
        const sink = await openProducer(queueSettings(cfg));
        const { makeMessage } = await import("../../shared/queue/message.ts");
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
      await kube.patch(type, name, {
        metadata: { annotations: { [TRIGGER_ANNOTATION]: new Date().toISOString() } },
      });
      stdout.write(`${type.kind}/${name} queued for reconcile\n`);
    });

  program
    .command("bind")
    .description(
      "connect an app cluster to this control plane: its namespace, agent identity and RBAC here, the exported claim CRDs there",
    )
    .requiredOption("--app-cluster <kubeconfig>", "kubeconfig of the app cluster (as its administrator)")
    .requiredOption("--name <name>", "the app cluster's name; its claims live in namespace app-<name> here")
    .option(
      "--allow-local-files",
      "let the app cluster's kubeconfig name local files (tokenFile, client-certificate, client-key, certificate-authority paths)",
    )
    .option(
      "--export <template>",
      "an APIServiceExportTemplate to bind; repeatable (default: every template)",
      collect,
    )
    .addHelpText(
      "after",
      "\nRe-running it is harmless (and needed after adding templates). Then serve the app cluster with driftless run --app-cluster <name>=<kubeconfig>. The kubeconfig may not run commands (exec plugins, auth providers) nor name local files without --allow-local-files.",
    )
    .action(
      async (opts: { appCluster: string; name: string; export?: string[]; allowLocalFiles?: boolean }) => {
        // Read (and refused, if it must be) before either cluster is touched.
        const [app] = await loadAppClusters(
          [`${opts.name}=${opts.appCluster}`],
          opts.allowLocalFiles ? [opts.name] : [],
        );
        if (!app) throw new UsageError("--app-cluster: no kubeconfig");
        const { kc } = kubeConfig();
        const { bindAppCluster } = await import("../../shared/export/bind.ts");
        const res = await bindAppCluster({
          controlPlane: kc,
          app,
          name: opts.name,
          templates: opts.export ?? [],
        });
        stdout.write(
          `app cluster ${res.appCluster} bound: namespace ${res.namespace}, templates ${res.templates.join(", ")}, kinds ${res.kinds.join(", ")}\n`,
        );
      },
    );

  const crds = program.command("crds").description("print or apply the CRDs driftless serves");
  crds
    .command("print")
    .description("print the generated CRDs as YAML (for kubectl apply -f - or GitOps)")
    .action(async () => {
      stdout.write((await allCrds()).map((c) => stringify(c)).join("---\n"));
    });
  crds
    .command("apply")
    .description("create or update the CRDs in the cluster and wait until they are served")
    .action(async () => {
      const { kc } = kubeConfig();
      const list = await allCrds();
      const progress = new Progress();
      progress.update(`applying ${list.length} CRDs …`, true);
      try {
        await applyCrds(kc, list);
      } finally {
        progress.done();
      }
      stdout.write(`applied ${list.length} CRDs\n`);
    });

  program
    .command("doctor")
    .description(
      "check kubeconfig, API server, CRDs, RBAC, queue and every ProviderConfig's credentials; say how to fix what is wrong",
    )
    .addOption(outputOption(["table", "json"]))
    .option("--timeout <seconds>", "per check", parseInteger("--timeout", 1, 600), 15)
    .option("-l, --selector <labels>", "check only the ProviderConfigs matching this label selector")
    .addHelpText("after", "\n✓ ok   ✗ failed (exit 1)   ! warning   - skipped")
    .action(async (opts: { output: Output; timeout: number; selector?: string }) => {
      const cfg = config();
      const path = (program.opts() as { kubeconfig?: string }).kubeconfig ?? cfg.KUBECONFIG;
      const results: DoctorCheck[] = [];
      const progress = new Progress();
      progress.update("checking …", true);
      const [{ doctor }, { managedKinds, providerConfigKinds }] = await Promise.all([
        import("../../shared/ops/doctor.ts"),
        registry(),
      ]);
      for await (const check of doctor({
        loadKubeConfig: () =>
          loadKubeConfig({ path, yaml: path ? undefined : cfg.DRIFTLESS_KUBECONFIG_YAML }),
        queue: queueSettings(cfg),
        managed: managedKinds.map((k) => k.definition),
        providerConfigKinds,
        crds: (await allCrds()) as unknown as GeneratedCrd[],
        timeoutMs: opts.timeout * 1000,
        ...(opts.selector ? { providerConfigSelector: opts.selector } : {}),
      })) {
        results.push(check);
        if (opts.output === "table") {
          progress.done();
          stdout.write(doctorLine(check));
          progress.update("checking …", true);
        }
      }
      progress.done();
      const failed = results.filter((r) => r.status === "fail");
      if (opts.output === "json") printObject(stdout, "json", { ok: failed.length === 0, checks: results });
      else
        stdout.write(
          failed.length === 0
            ? `\nall ${results.length} checks passed\n`
            : `\n${failed.length} of ${results.length} checks failed\n`,
        );
      if (failed.length > 0) process.exitCode = EXIT.failure;
    });

  program
    .command("migrate")
    .description(
      "convert Crossplane (Upbound provider) managed-resource YAML into driftless YAML that adopts the same cloud resources",
    )
    .argument("<paths...>", "YAML files or directories of them; - reads standard input")
    .option("--out <file>", "write the driftless YAML here instead of standard output")
    .option(
      "--allow-dropped",
      "exit 0 even when fields driftless does not manage were left out (they are still listed)",
    )
    .addOption(outputOption(["yaml", "json"], "yaml"))
    .addHelpText(
      "after",
      `\nEvery resource gets managementPolicies: ["Observe"]: driftless first only imports what exists (nothing is\ncreated, changed or deleted). Widen the policies once it reports Synced. The report (stderr) lists every\nfield or object that was not carried over; exit 1 if any.\n\nSupported:\n${supportedSources()
        .map((s) => `  ${s.from} → ${s.to}`)
        .join("\n")}\n\nSee docs/migrating-from-crossplane.md.`,
    )
    .action(
      async (paths: string[], opts: { out?: string; allowDropped?: boolean; output: "yaml" | "json" }) => {
        const files = expandPaths(paths);
        const progress = new Progress();
        const docs: unknown[] = [];
        const issues: MigrateIssue[] = [];
        files.forEach((file, i) => {
          progress.update(`reading ${i + 1}/${files.length}: ${file}`);
          const text = file === "-" ? readFileSync(0, "utf8") : readFileSync(file, "utf8");
          for (const doc of parseAllDocuments(text)) {
            if (doc.errors.length > 0) {
              issues.push({
                severity: "error",
                source: file,
                message: `invalid YAML: ${doc.errors[0]?.message}`,
              });
              continue;
            }
            docs.push(doc.toJS());
          }
        });
        progress.done();
        const result = migrate(docs);
        issues.push(...result.issues);
        const text =
          opts.output === "json"
            ? `${JSON.stringify(
                result.objects.map((o) => o.object),
                null,
                2,
              )}\n`
            : result.objects.map((o) => `# migrated from ${o.source}\n${stringify(o.object)}`).join("---\n");
        if (opts.out) writeFileSync(opts.out, text);
        else stdout.write(text);

        for (const i of issues) {
          const mark = i.severity === "note" ? "note" : i.severity === "dropped" ? "DROPPED" : "ERROR";
          stderr.write(`${mark.padEnd(8)}${i.source}: ${i.message}\n`);
        }
        const errors = issues.filter((i) => i.severity === "error").length;
        const dropped = issues.filter((i) => i.severity === "dropped").length;
        stderr.write(
          `\nmigrated ${result.objects.length} object(s)${opts.out ? ` to ${opts.out}` : ""}; ${errors} not migrated, ${dropped} field(s) left out, ${issues.length - errors - dropped} note(s)\n`,
        );
        if (errors > 0 || (dropped > 0 && !opts.allowDropped)) process.exitCode = EXIT.failure;
      },
    );

  // Every command documents the exit codes; the top level also lists the environment.
  const withExitCodes = (cmd: Command) => {
    cmd.addHelpText("after", EXIT_CODES_HELP);
    for (const sub of cmd.commands) withExitCodes(sub);
  };
  withExitCodes(program);
  program.addHelpText("after", environmentHelp());
  return program;
}

/** One object as `listAll` returns it (apiVersion and kind set), or NotFoundError. */
async function getOne(kube: Kube, type: ResourceType | undefined, name: string) {
  if (!type) throw new UsageError("name a kind to get an object by name");
  const o = await kube.get<Awaited<ReturnType<typeof listAll>>[number]>(type, name);
  if (!o) throw new NotFoundError(`${type.kind}.${type.group} "${name}" not found`);
  return [{ ...o, apiVersion: `${type.group}/${type.version}`, kind: type.kind }];
}

/** Files named on the command line; a directory stands for its *.yaml / *.yml files (sorted). */
function expandPaths(paths: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    if (p === "-") {
      out.push(p);
      continue;
    }
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(p);
    } catch {
      throw new NotFoundError(`${p}: no such file or directory`);
    }
    if (st.isDirectory()) {
      out.push(
        ...readdirSync(p)
          .filter((f) => /\.ya?ml$/.test(f))
          .sort()
          .map((f) => join(p, f)),
      );
    } else out.push(p);
  }
  return out;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildCli();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : EXIT.ok;
  } catch (err) {
    const e = err as Error & { code?: string; exitCode?: number };
    if (e.code?.startsWith("commander.")) {
      return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    stderr.write(`error: ${e.message}\n`);
    return e instanceof UsageError ? EXIT.usage : EXIT.failure;
  }
}

if (import.meta.main) {
  // A closed pipe (`driftless get | head`) is not an error.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(process.exitCode ?? EXIT.ok);
    throw err;
  });
  process.exitCode = await main(process.argv);
}
