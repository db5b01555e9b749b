#!/usr/bin/env node
// The forwarder as a long-running process (an in-cluster Deployment): watches the managed kinds of the
// clouds this deployment serves and forwards keys to SQS or Pub/Sub (DRIFTLESS_QUEUE). SIGTERM/SIGINT:
// stop watching, send what is still pending, close the queue client, exit.
//
// The kind list is generated data (functions/forwarder-kinds.ts, no provider code): the forwarder never
// talks to a cloud API, so it must not load the clouds' SDKs (its pod runs in 128 MiB). The queue adapter
// is loaded on demand, so an SQS forwarder never loads Pub/Sub (and the other way round).

import type { KubeConfig } from "@kubernetes/client-node";
import { z } from "zod";
import { generatedCloudOf } from "../shared/api/generated-catalog.ts";
import { apiVersionOf, type ResourceType } from "../shared/api/meta.ts";
import { Kube, type KubeObject } from "../shared/kube/client.ts";
import {
  defaultEndpoint,
  endpointFromKubeconfig,
  KubeconfigUnsupportedError,
  parseKubeconfig,
  readKubeconfigFiles,
} from "../shared/kube/kubeconfig.ts";
import { createLogger } from "../shared/log.ts";
import { CRD_TYPE, type CrdLike, typeOfCrd } from "../shared/ops/activation.ts";
import type { Logger, MessageSink } from "../shared/pipeline/common.ts";
import { Forwarder } from "../shared/pipeline/forwarder.ts";
import { ReferrerIndex } from "../shared/pipeline/referrers.ts";
import { type Config, readConfig } from "./config.ts";
import { type Cloud, managedTypes } from "./forwarder-kinds.ts";
import { servedTypes } from "./served-types.ts";

const CLOUDS = ["aws", "gcp", "azure"] as const satisfies readonly Cloud[];

/** Every managed kind's type, generated from the kind registries (npm run gen:kinds). */
export const definitions = managedTypes;

const ForwarderEnv = z.object({
  DRIFTLESS_CLOUDS: z
    .preprocess((v) => (v === "" ? undefined : v), z.string().optional())
    .transform((v) => (v === undefined ? undefined : v.split(",").map((c) => c.trim())))
    .pipe(z.array(z.enum(CLOUDS)).min(1).optional())
    .describe("Clouds whose kinds are forwarded (comma list); default: aws for sqs, gcp for pubsub."),
  DRIFTLESS_LABEL_SELECTOR: z
    .preprocess((v) => (v === "" ? undefined : v), z.string().optional())
    .describe("Only forward objects matching this label selector (sharding)."),
  DRIFTLESS_WATCH_CONNECTION_SECRETS: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true")
    .describe(
      "Also watch connection Secrets and forward their owner when one is edited or deleted (needs list/watch on Secrets); otherwise the owner's next poll repairs it.",
    ),
});

export type ForwarderConfig = Config & z.infer<typeof ForwarderEnv>;

export function readForwarderConfig(env: NodeJS.ProcessEnv = process.env): ForwarderConfig {
  const base = readConfig(env);
  const parsed = ForwarderEnv.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`invalid configuration: ${problems}`);
  }
  return { ...base, ...parsed.data };
}

/**
 * The generated kinds of these clouds whose CRDs are installed (driftless's CRDs, labelled part-of): one
 * LIST. `crds apply --activate` and activation policies install exactly the activated ones; an installed
 * kind no policy names any more is watched too, and the function tells its objects so (KindNotActivated).
 */
export async function generatedTypesIn(kube: Kube, clouds: readonly Cloud[]): Promise<ResourceType[]> {
  const crds = await kube.list<CrdLike & KubeObject>(CRD_TYPE, {
    labelSelector: "app.kubernetes.io/part-of=driftless",
  });
  return crds.items
    .filter((c) => {
      const cloud = generatedCloudOf(c.spec.group);
      return cloud !== undefined && clouds.includes(cloud);
    })
    .map(typeOfCrd);
}

/**
 * The cluster to watch: DRIFTLESS_KUBECONFIG_YAML, else KUBECONFIG, else ~/.kube/config, else the Pod's
 * ServiceAccount. Read with the functions' own loader, so the pod never loads client-node and undici
 * (about 10 MB of its RSS, docs/performance.md); a kubeconfig that needs what only client-node provides
 * (exec plugins, auth providers, socks proxies) is handed to client-node, imported only then.
 */
export async function forwarderCluster(
  cfg: Pick<ForwarderConfig, "KUBECONFIG" | "DRIFTLESS_KUBECONFIG_YAML">,
  opts: { env?: NodeJS.ProcessEnv } = {},
): Promise<Kube | KubeConfig> {
  const yaml = cfg.DRIFTLESS_KUBECONFIG_YAML;
  try {
    const { endpoint } = yaml
      ? endpointFromKubeconfig(parseKubeconfig(yaml, { source: "DRIFTLESS_KUBECONFIG_YAML" }))
      : cfg.KUBECONFIG
        ? endpointFromKubeconfig(readKubeconfigFiles(cfg.KUBECONFIG))
        : defaultEndpoint(opts.env ? { env: opts.env } : {});
    return new Kube(endpoint);
  } catch (err) {
    if (!(err instanceof KubeconfigUnsupportedError)) throw err;
    const { loadKubeConfig } = await import("../shared/kube/config.ts");
    return loadKubeConfig({ path: cfg.KUBECONFIG, yaml, ...(opts.env ? { env: opts.env } : {}) });
  }
}

interface Sink {
  producer: MessageSink;
  close(): Promise<void>;
}

// The queue adapter is imported on demand: the other cloud's SDK is never loaded (a chunk of its own in
// the bundle). Our own modules are imported, not the SDK packages: a bundled CommonJS package loaded
// with import() exposes only a default export.
async function openSink(cfg: ForwarderConfig, logger: Logger): Promise<Sink> {
  if (cfg.DRIFTLESS_QUEUE === "sqs") {
    if (!cfg.DRIFTLESS_SQS_QUEUE_URL) throw new Error("DRIFTLESS_SQS_QUEUE_URL is not set");
    const { openSqsSink } = await import("./aws/queue.ts");
    return openSqsSink(cfg.DRIFTLESS_SQS_QUEUE_URL, logger);
  }
  if (cfg.DRIFTLESS_QUEUE === "pubsub") {
    if (!cfg.DRIFTLESS_PUBSUB_TOPIC) throw new Error("DRIFTLESS_PUBSUB_TOPIC is not set");
    const { openPubSubSink } = await import("./gcp/queue.ts");
    return openPubSubSink(cfg.DRIFTLESS_PUBSUB_TOPIC, cfg.GCP_PROJECT_ID, logger);
  }
  throw new Error("the forwarder sends to a shared queue: set DRIFTLESS_QUEUE to sqs or pubsub");
}

export interface RunningForwarder {
  forwarder: Forwarder;
  /** Stops watching, sends what is pending, closes the queue client. */
  stop(): Promise<void>;
}

export async function startForwarder(cfg: ForwarderConfig, logger: Logger): Promise<RunningForwarder> {
  const clouds = cfg.DRIFTLESS_CLOUDS ?? [cfg.DRIFTLESS_QUEUE === "pubsub" ? "gcp" : "aws"];
  const types = servedTypes(clouds, { claims: cfg.DRIFTLESS_CLAIMS });
  const kube = await forwarderCluster(cfg);
  const sink = await openSink(cfg, logger);
  const forwarder = new Forwarder({
    kube,
    types,
    sink: sink.producer,
    logger,
    ...(cfg.DRIFTLESS_LABEL_SELECTOR ? { labelSelector: cfg.DRIFTLESS_LABEL_SELECTOR } : {}),
    connectionSecrets: cfg.DRIFTLESS_WATCH_CONNECTION_SECRETS,
    // As in `driftless run`: a resource turning Ready forwards those waiting for it by reference at once.
    referrers: new ReferrerIndex(
      managedTypes
        .filter((t) => clouds.includes(t.cloud))
        .map((t) => ({ apiVersion: apiVersionOf(t), kind: t.kind, references: t.references })),
    ),
  });
  await forwarder.start();
  logger.info(
    { queue: cfg.DRIFTLESS_QUEUE, clouds, kinds: types.map((t) => `${t.kind}.${apiVersionOf(t)}`) },
    "forwarding",
  );
  // Generated kinds are activated at run time: their CRDs are read now and every sweep interval after.
  const crds = kube instanceof Kube ? kube : new Kube(kube);
  const refresh = async () => {
    try {
      await forwarder.watch(await generatedTypesIn(crds, clouds));
    } catch (err) {
      logger.warn(
        { err: (err as Error).message },
        "cannot read the generated kinds' CRDs; trying again later",
      );
    }
  };
  await refresh();
  const timer = setInterval(() => void refresh(), cfg.DRIFTLESS_SWEEP_INTERVAL);
  timer.unref();
  return {
    forwarder,
    async stop() {
      clearInterval(timer);
      await forwarder.stop();
      await sink.close();
    },
  };
}

async function main(): Promise<void> {
  const cfg = readForwarderConfig();
  const logger = createLogger({ level: cfg.LOG_LEVEL, name: "driftless-forwarder" });
  const running = await startForwarder(cfg, logger);
  const signal = await new Promise<string>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  logger.info({ signal }, "shutting down: sending pending keys");
  await running.stop();
}

if (import.meta.main) {
  main().catch((err: unknown) => {
    process.stderr.write(`driftless forwarder: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
