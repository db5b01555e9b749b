#!/usr/bin/env node
// The `driftless` command line: an adapter over shared/ — parsing, printing and exit codes only. This
// file wires commander; each command is one file in commands/.
import { Command } from "commander";
import packageJson from "../../package.json" with { type: "json" };
import { loadKubeConfig } from "../../shared/kube/config.ts";
import { CommandFailedError, UsageError } from "../../shared/ops/errors.ts";
import { Config } from "../config.ts";
import { registerBind } from "./commands/bind.ts";
import { registerCrds } from "./commands/crds.ts";
import { registerDescribe } from "./commands/describe.ts";
import { registerDoctor } from "./commands/doctor.ts";
import { registerDoorbell } from "./commands/doorbell.ts";
import { registerExplain } from "./commands/explain.ts";
import { registerForward } from "./commands/forward.ts";
import { registerGet } from "./commands/get.ts";
import { registerImport } from "./commands/import.ts";
import { registerMigrate } from "./commands/migrate.ts";
import { registerOrphans } from "./commands/orphans.ts";
import { registerPlan } from "./commands/plan.ts";
import { registerRun } from "./commands/run.ts";
import { registerSweep } from "./commands/sweep.ts";
import { registerTrace } from "./commands/trace.ts";
import { registerTrigger } from "./commands/trigger.ts";
import { type CliContext, config, EXIT, EXIT_CODES_HELP, type RegisterCommand } from "./common.ts";
import { stderr } from "./output.ts";

export { TRIGGER_ANNOTATION } from "./commands/trigger.ts";
export { EXIT, EXIT_CODES_HELP } from "./common.ts";

/** The commands, in the order `driftless --help` lists them. */
const COMMANDS: RegisterCommand[] = [
  registerRun,
  registerForward,
  registerSweep,
  registerGet,
  registerDescribe,
  registerPlan,
  registerTrace,
  registerExplain,
  registerTrigger,
  registerBind,
  registerCrds,
  registerDoorbell,
  registerDoctor,
  registerMigrate,
  registerImport,
  registerOrphans,
];

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
  DRIFTLESS_POLL_INTERVAL:
    "Default drift-check interval per resource (default 5m; 1h with doorbell and cloud events).",
  DRIFTLESS_SWEEP_INTERVAL: "How often the drift sweep runs (default 1m).",
  DRIFTLESS_MAX_POLL_INTERVAL:
    "Adaptive polling: longest interval for a resource that stays unchanged (default 20m; equal to the poll interval: off).",
  DRIFTLESS_SWEEP_BATCH:
    "Batched drift checks of in-sync resources (default true; false: one message per key).",
  DRIFTLESS_SWEEP_INDEX:
    "Warm sweep index: a sweep watches for changes and reads due slots, not every object (default true).",
  DRIFTLESS_METRICS_PORT: "Port of /metrics, /healthz and /readyz of `driftless run` (default 9464).",
  DRIFTLESS_SECRET_REF_NAMESPACES:
    "Namespaces (comma list, * for any) a managed resource may read Secrets from besides its connection Secret's (default none).",
};

function environmentHelp(): string {
  const shape = Config.shape as Record<string, { description?: string }>;
  const lines = Object.entries(shape).map(([k, s]) =>
    `  ${k.padEnd(Math.max(31, k.length + 1))}${s.description ?? ENV_HELP[k] ?? ""}`.trimEnd(),
  );
  return `\nEnvironment (read once at start):\n${lines.join("\n")}`;
}

/**
 * The one place the CLI loads a kubeconfig: --kubeconfig, else KUBECONFIG, else DRIFTLESS_KUBECONFIG_YAML,
 * else the loader's defaults (in-cluster, ~/.kube/config).
 */
function kubeAccess(program: Command): CliContext {
  const load = (cfg: Config) => {
    const path = (program.opts() as { kubeconfig?: string }).kubeconfig ?? cfg.KUBECONFIG;
    return loadKubeConfig({ path, yaml: path ? undefined : cfg.DRIFTLESS_KUBECONFIG_YAML });
  };
  return {
    loadKubeConfig: load,
    kubeConfig: () => {
      const cfg = config();
      return { cfg, kc: load(cfg) };
    },
  };
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

  const cli = kubeAccess(program);
  for (const register of COMMANDS) register(program, cli);

  // Every command documents the exit codes; the top level also lists the environment.
  const withExitCodes = (cmd: Command) => {
    cmd.addHelpText("after", EXIT_CODES_HELP);
    for (const sub of cmd.commands) withExitCodes(sub);
  };
  withExitCodes(program);
  program.addHelpText("after", environmentHelp());
  return program;
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
    if (e instanceof CommandFailedError) return e.exitCode;
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
