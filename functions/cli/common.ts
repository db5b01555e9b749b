// What the `driftless` commands share: exit codes, lazily loaded heavy modules, option parsers, the
// typed config and the queue settings. One file per command lives in commands/.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Command, InvalidArgumentError, Option } from "commander";
import type { ResourceType } from "../../shared/api/meta.ts";
import type { loadKubeConfig } from "../../shared/kube/config.ts";
import type { Logger } from "../../shared/log.ts";
import { NotFoundError, UsageError } from "../../shared/ops/errors.ts";
import {
  type Addressable,
  findKind,
  type NamespaceFlags,
  namespaceOf,
  parseKindName,
  wantsNamespaced,
} from "../../shared/ops/kinds.ts";
import type { QueueSettings } from "../../shared/ops/queue.ts";
import type { QueueEventSink } from "../../shared/queue/port.ts";
import { type Config, readConfig } from "../config.ts";

export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

export const EXIT_CODES_HELP = `
Exit codes:
  0  success
  1  failure: an operation or check failed, an object was not found, something was not migrated
  2  usage: bad arguments or options, unknown kind, invalid configuration (environment)`;

// The kind registry loads every cloud SDK (over a second): commands load it, and other heavy modules,
// only when they need them, so `--help`, `migrate` and typos answer at once.
export const registry = () => import("../../shared/providers/index.ts");
export const managedTypes = async () => (await registry()).managedKinds.map((k) => k.definition);
export const providerConfigTypes = async () => (await registry()).providerConfigKinds.map((k) => k.type);
/**
 * Everything the commands address by KIND: managed kinds in both shapes, and per cloud the ProviderConfig,
 * the namespaced ProviderConfig and the ClusterProviderConfig.
 */
export const addressable = async (): Promise<Addressable[]> => [
  ...(await managedTypes()),
  ...(await providerConfigTypes()),
];
/** Claim and class kinds, forwarded and swept for the serverless functions unless DRIFTLESS_CLAIMS=false. */
export const claimTypes = async (cfg: Config): Promise<ResourceType[]> =>
  cfg.DRIFTLESS_CLAIMS ? (await import("../../shared/claims/kinds.ts")).claimTypes() : [];
export const allCrds = async () => (await import("../../shared/crds.ts")).allCrds();
export const applyCrds = async (...a: Parameters<typeof import("../../shared/kube/crds.ts").applyCrds>) =>
  (await import("../../shared/kube/crds.ts")).applyCrds(...a);
export const waitForCrds = async (...a: Parameters<typeof import("../../shared/kube/crds.ts").waitForCrds>) =>
  (await import("../../shared/kube/crds.ts")).waitForCrds(...a);
export const openProducer = async (s: QueueSettings, onEvent?: QueueEventSink) =>
  (await import("../../shared/ops/queue.ts")).openProducer(s, onEvent);
export const logQueueEvents =
  (logger: Logger): QueueEventSink =>
  ({ level, msg, ...fields }) =>
    logger[level](fields, msg);

/** -n/--namespace (and, for lists, -A/--all-namespaces): which namespace namespaced kinds are read in. */
export function namespaceOptions(cmd: Command, opts: { all?: boolean } = {}): Command {
  cmd.option(
    "-n, --namespace <namespace>",
    "namespace of a namespaced kind (default: the kubeconfig context's, else default); a bare kind then means its namespaced (.m.) shape",
  );
  if (opts.all)
    cmd.option("-A, --all-namespaces", "list namespaced kinds in every namespace (implies the .m. shape)");
  return cmd;
}

/** `KIND/NAME` as `describe` and `trigger` take it: with -n, a bare kind means its namespaced shape. */
export async function addressedObject(ref: string, flags: NamespaceFlags) {
  const { kind, name } = parseKindName(ref);
  return { type: findKind(kind, await addressable(), { namespaced: wantsNamespaced(flags) }), name };
}

/** The namespace to read `type` in: -n, else the kubeconfig context's (kubectl's default), else default. */
export const namespaceIn = (type: ResourceType, flags: NamespaceFlags, kc: LoadedKubeConfig) =>
  namespaceOf(type, flags, kc.getContextObject(kc.getCurrentContext())?.namespace || undefined);

export const outputOption = (choices = ["table", "json", "yaml"], def = "table") =>
  new Option("-o, --output <format>", "output format").choices(choices).default(def);

/** The typed config, read once at the edge; a bad value is a usage error naming the variable. */
export function config(): Config {
  try {
    return readConfig();
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function queueSettings(cfg: Config): QueueSettings {
  return {
    queue: cfg.DRIFTLESS_QUEUE,
    sqsQueueUrl: cfg.DRIFTLESS_SQS_QUEUE_URL,
    sqsDlqUrl: cfg.DRIFTLESS_SQS_DLQ_URL,
    pubsubTopic: cfg.DRIFTLESS_PUBSUB_TOPIC,
    pubsubSubscription: cfg.DRIFTLESS_PUBSUB_SUBSCRIPTION,
    gcpProjectId: cfg.GCP_PROJECT_ID,
  };
}

export const parseInteger = (name: string, min: number, max: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new InvalidArgumentError(`${name} must be an integer ${min}–${max}`);
  return n;
};

/**
 * App clusters' kubeconfigs (`NAME=KUBECONFIG`), read with the loader that runs no plugin and reads no
 * local file unless NAME is in `localFiles`; any refusal is a usage error naming the file and field.
 */
export async function loadAppClusters(values: readonly string[], localFiles: readonly string[]) {
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
export const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/** Waits for SIGTERM or SIGINT; resolves with the signal's name. */
export const untilSignal = () =>
  new Promise<string>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });

/** A kubeconfig as the shared loader returns it. */
export type LoadedKubeConfig = ReturnType<typeof loadKubeConfig>;

/** What main.ts gives every command: the one way to reach the cluster (the global --kubeconfig). */
export interface CliContext {
  /** The config and the kubeconfig every command uses. */
  kubeConfig(): { cfg: Config; kc: LoadedKubeConfig };
  /** Loads the kubeconfig for an already-read config (doctor loads it inside a check). */
  loadKubeConfig(cfg: Config): LoadedKubeConfig;
}

/** One command's registration on the program. */
export type RegisterCommand = (program: Command, cli: CliContext) => void;

/** Files named on the command line; a directory stands for its *.yaml / *.yml files (sorted). */
export function expandPaths(paths: readonly string[]): string[] {
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
